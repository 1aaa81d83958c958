// Rollout windows of the powerslide fit, and its fitter (the fit layer's registration of the
// model: fit/fitters.h; CMake lists it from fit/models/, cmake/model_folders.cmake).
#include "fit/models/powerslide_fit.h"

#include <algorithm>
#include <memory>

#include "fit/fit_common.h"
#include "fit/fitters.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/episode_steps.h"
#include "src/replay/predictor.h"

namespace rlfit {
namespace {

// Rows the handbrake level takes to fall from full to none (1 / fall rate = 0.5 s at 61 rows/s),
// rounded up: a window starting that long after the last handbrake step still slides.
constexpr int kHandbrakeTailRows = 31;

}  // namespace

int AddPowerslideResiduals(ceres::Problem* problem, double* params,
                           const std::vector<Episode>& episodes, const FitOptions& options,
                           std::vector<int>* block_episodes) {
  // The ground fit it runs on, held fixed; FitEpisodes writes the same into the file (runs_on).
  const std::vector<double> ground = CommittedRunsOn(PowerslideLayout()).front();
  const GroundCoeffs<double> g = GroundCoeffs<double>::FromArray(ground.data());
  const PowerslideCoeffs<double> init = PowerslideCoeffs<double>::FromArray(params);
  const CoeffLayout& layout = PowerslideLayout();
  int blocks = 0;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const Episode& ep = episodes[e];
    std::vector<double> inferred;
    if (ChooseHandbrakeSource(ep) == HandbrakeSource::kInferred)
      inferred = InferHandbrake(g, init, ep, options.integration);
    // The switch and the level at every row once for all the episode's windows, as replay's.
    const auto handbrake = std::make_shared<const EpisodeHandbrake>(
        PowerslideEpisodeHandbrake(ep, options.integration, std::move(inferred)));
    const std::vector<double>& acting = handbrake->acting;
    // The handbrake acting on each step, whatever its source.
    std::vector<double> on(ep.size(), 0.0);
    for (int k = 0; k + 1 < ep.size(); ++k)
      on[k] = acting.empty() ? ControlsOver(ep, ep.rows[k].t_s, ep.rows[k + 1].t_s,
                                            options.integration).handbrake
                             : acting[k];
    // Every window of the episode reads its steps' inputs from one table.
    std::shared_ptr<const RowStepControls> controls;
    for (const RolloutWindow& w : RolloutWindows(ep, ClassifyRows("powerslide", ep,
                                                                  options.data_root),
                                                 options.window_s, options.stride_s)) {
      const int first = std::max(0, w.start - kHandbrakeTailRows);
      if (std::none_of(on.begin() + first, on.begin() + w.start + w.rows,
                       [](double h) { return h > 0.0; }))
        continue;
      if (controls == nullptr)
        controls = std::make_shared<const RowStepControls>(ep, options.integration, 0,
                                                           ep.size() - 1);
      problem->AddResidualBlock(
          Reduced(PowerslideRolloutResidual::Create(&ep, w.start, w.rows, options.integration,
                                                    ground, handbrake, {}, controls)),
          MakeLoss(options.solver, PowerslideRolloutResidual::kPerRow * w.rows),
          LayoutBlocks(layout, params));
      block_episodes->push_back(static_cast<int>(e));
      ++blocks;
    }
  }
  return blocks;
}

FitterInfo PowerslideFitter() {
  FitterInfo f;
  f.model = "powerslide";
  f.add_residuals = AddPowerslideResiduals;
  // Huber at 3 sigmas, as the other car fits: few gross outliers.
  f.defaults.loss = "huber";
  f.defaults.loss_scale = 3.0;
  // Three solves, each re-inferring the unrecorded handbrake (AddPowerslideResiduals) with the
  // coefficients the previous one ended at: the switch and the coefficients alternate.
  f.smoothing_passes = {1.0, 1.0, 1.0};
  return f;
}

}  // namespace rlfit
