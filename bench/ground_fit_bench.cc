// The ground fit's hot path alone: every rollout window's residuals and Jacobian (what one
// Levenberg-Marquardt iteration of `rlfit fit ground` evaluates), on one thread, with a
// checksum of the values so that a change can be shown bit-identical.
//   ground_fit_bench [--data DIR] [--evals N] [--cost-only]
// prints the windows, the median and minimum CPU time of N evaluations, and the FNV-1a hash of
// the first evaluation's residuals and Jacobian (at the seed coefficients).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <ceres/ceres.h>

#include "fit/fit.h"
#include "fit/ground_fit.h"
#include "src/io/recording.h"
#include "src/replay/predictor.h"
#include "src/replay/replay.h"

namespace {

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

std::uint64_t Fnv1a(const double* v, std::size_t n, std::uint64_t h) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(v);
  for (std::size_t i = 0; i < n * sizeof(double); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data;
  int evals = 3;
  bool cost_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
    else if (!std::strcmp(argv[i], "--evals") && i + 1 < argc) evals = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--cost-only")) cost_only = true;
    else {
      std::fprintf(stderr, "usage: ground_fit_bench [--data DIR] [--evals N] [--cost-only]\n");
      return 2;
    }
  }
  using namespace rlfit;
  FitOptions options;
  options.model = "ground";
  options.data_root = ResolveDataRoot(data);
  options = WithModelDefaults(options);
  const ModelInfo& model = FindModel("ground");
  const std::vector<Episode> all = LoadEpisodesFor(model, {}, options.data_root);
  std::vector<Episode> train, heldout;
  SplitEpisodes(all, options.holdout_every, &train, &heldout);
  std::vector<double> params = model.layout->defaults;
  ceres::Problem problem;
  std::vector<int> block_episodes;
  const int windows = AddGroundResiduals(&problem, params.data(), train, options, &block_episodes);

  std::vector<double> times;
  std::uint64_t hash = 1469598103934665603ull;
  for (int e = 0; e < evals; ++e) {
    // A new point each time (the reduced blocks answer a repeated one from their cache):
    // relative moves of 1e-9 per evaluation.
    for (std::size_t i = 0; i < params.size(); ++i)
      params[i] = model.layout->defaults[i] * (1.0 + 1e-9 * e);
    ceres::Problem::EvaluateOptions eval;
    eval.num_threads = 1;
    double cost = 0.0;
    std::vector<double> residuals;
    ceres::CRSMatrix jacobian;
    const double t0 = CpuSeconds();
    problem.Evaluate(eval, &cost, &residuals, nullptr, cost_only ? nullptr : &jacobian);
    times.push_back(CpuSeconds() - t0);
    if (e == 0) {
      hash = Fnv1a(residuals.data(), residuals.size(), hash);
      hash = Fnv1a(jacobian.values.data(), jacobian.values.size(), hash);
    }
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  std::printf("ground %s: %d windows, %d evaluations, CPU median %.3f s, min %.3f s, "
              "hash %016llx\n",
              cost_only ? "cost only" : "residuals + Jacobian", windows, evals,
              sorted[sorted.size() / 2], sorted.front(), static_cast<unsigned long long>(hash));
  return 0;
}
