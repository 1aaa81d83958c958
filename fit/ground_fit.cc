// Rollout windows of the ground fit.
#include "fit/ground_fit.h"

#include <cmath>

#include "fit/fit_common.h"
#include "src/replay/episode_steps.h"

namespace rlfit {
namespace {

// Largest |z - rest height| of a row still taken as flat ground, uu: the recorded ground rows
// sit at exactly 17.01; a car on a wall or ramp is far off.
constexpr double kGroundHeightToleranceUu = 2.0;
// Smallest up-axis z component of a flat-ground row (about 2.6 degrees of tilt).
constexpr double kGroundUprightMin = 0.999;

}  // namespace

bool IsFlatGroundRow(const Episode& ep, int k) {
  const Sample& s = ep.rows[k];
  return s.on_ground && std::abs(s.x(2) - game::kCarRestHeight) < kGroundHeightToleranceUu &&
         s.theta(2, 2) > kGroundUprightMin && !s.input.jump && !s.input.handbrake;
}

int AddGroundResiduals(ceres::Problem* problem, double* params,
                       const std::vector<Episode>& episodes, const FitOptions& options,
                       std::vector<int>* block_episodes) {
  const CoeffLayout& layout = GroundLayout();
  int blocks = 0;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const Episode& ep = episodes[e];
    // Every window of the episode reads its steps' inputs from one table.
    std::shared_ptr<const RowStepControls> controls;
    for (const RolloutWindow& w :
         RolloutWindows(ep, ClassifyRows("ground", ep, options.data_root), options.window_s,
                        options.stride_s)) {
      bool flat = true;
      for (int k = w.start; k <= w.start + w.rows && flat; ++k) flat = IsFlatGroundRow(ep, k);
      if (!flat) continue;
      if (controls == nullptr)
        controls = std::make_shared<const RowStepControls>(ep, options.integration, 0,
                                                           ep.size() - 1);
      problem->AddResidualBlock(
          Reduced(GroundRolloutResidual::CreateActive(&ep, w.start, w.rows, options.integration,
                                                      {}, controls)),
          MakeLoss(options.solver, GroundRolloutResidual::kPerRow * w.rows),
          LayoutBlocks(layout, params));
      block_episodes->push_back(static_cast<int>(e));
      ++blocks;
    }
  }
  return blocks;
}

}  // namespace rlfit
