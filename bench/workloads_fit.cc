// The fit's workload for the performance guard (bench/workloads_fit.h): residuals and Jacobian
// of the ground fit's rollout windows over the first rows of its first training episode, as one
// Levenberg-Marquardt iteration of `rlfit fit ground` evaluates them (bench/ground_fit_bench.cc
// runs every window).
#include "bench/workloads_fit.h"

#include <memory>

#include "bench/workloads.h"
#include "fit/fit.h"
#include "fit/ground_fit.h"
#include "src/replay/replay.h"

namespace rlfit {
namespace bench {

struct GroundFitScene::Impl {
  ceres::Problem problem;
  std::vector<double> params;
  std::vector<double> defaults;
  long evaluations = 0;  // every evaluation at a new point (the reduced blocks cache a repeat)
};

GroundFitScene::GroundFitScene() : impl_(new Impl) {
  FitOptions options;
  options.model = "ground";
  options.data_root = DataRootOrThrow();
  options = WithModelDefaults(options);
  const ModelInfo& model = FindModel("ground");
  std::vector<Episode> all = LoadEpisodesFor(model, {}, options.data_root);
  std::vector<Episode> train, heldout;
  SplitEpisodes(std::move(all), options.holdout_every, &train, &heldout);
  train.resize(std::min<std::size_t>(train.size(), kGroundFitEpisodes));
  for (Episode& ep : train) {
    if (ep.rows.size() <= static_cast<std::size_t>(kGroundFitRows)) continue;
    ep.rows.resize(kGroundFitRows);
    ep.step_dt_s.resize(kGroundFitRows - 1);
    ep.step_ticks.resize(kGroundFitRows - 1);
  }
  episodes_ = train;
  impl_->defaults = model.layout->defaults;
  impl_->params = impl_->defaults;
  std::vector<int> block_episodes;
  windows_ = AddGroundResiduals(&impl_->problem, impl_->params.data(), episodes_, options,
                                &block_episodes);
}

GroundFitScene::~GroundFitScene() = default;

double GroundFitScene::Evaluate(long n) {
  double sum = 0.0;
  for (long e = 0; e < n; ++e) {
    const double move = 1.0 + 1e-9 * static_cast<double>(++impl_->evaluations);
    for (std::size_t i = 0; i < impl_->params.size(); ++i)
      impl_->params[i] = impl_->defaults[i] * move;
    ceres::Problem::EvaluateOptions eval;
    eval.num_threads = 1;
    double cost = 0.0;
    std::vector<double> residuals;
    ceres::CRSMatrix jacobian;
    impl_->problem.Evaluate(eval, &cost, &residuals, nullptr, &jacobian);
    sum += cost;
  }
  return sum;
}

}  // namespace bench
}  // namespace rlfit
