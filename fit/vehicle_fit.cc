// Rollout windows of the vehicle fit: the ground fit's windows, with the handbrake acting.
#include "fit/vehicle_fit.h"

#include <memory>
#include <utility>
#include <vector>

#include "fit/fit_common.h"
#include "src/replay/episode_steps.h"

namespace rlfit {

int AddVehicleResiduals(ceres::Problem* problem, double* params,
                        const std::vector<Episode>& episodes, const FitOptions& options,
                        std::vector<int>* block_episodes) {
  const CoeffLayout& layout = VehicleLayout();
  int blocks = 0;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const Episode& ep = episodes[e];
    std::shared_ptr<const RowStepControls> controls;
    // The switch and the level at every row once for all the episode's windows, as replay's.
    const auto handbrake =
        std::make_shared<const EpisodeHandbrake>(VehicleEpisodeHandbrake(ep, options.integration));
    std::shared_ptr<const std::vector<double>> acting;
    if (!handbrake->acting.empty())
      acting = std::shared_ptr<const std::vector<double>>(handbrake, &handbrake->acting);
    for (const RolloutWindow& w :
         RolloutWindows(ep, ClassifyRows("vehicle", ep, options.data_root), options.window_s,
                        options.stride_s)) {
      bool flat = true;
      for (int k = w.start; k <= w.start + w.rows && flat; ++k) flat = IsFlatGroundRow(ep, k);
      if (!flat) continue;
      if (controls == nullptr)
        controls = std::make_shared<const RowStepControls>(ep, options.integration, 0,
                                                           ep.size() - 1);
      problem->AddResidualBlock(
          Reduced(VehicleRolloutResidual::Create(&ep, w.start, w.rows, {}, controls, acting,
                                                 handbrake->levels[w.start])),
          MakeLoss(options.solver, VehicleRolloutResidual::kPerRow * w.rows),
          LayoutBlocks(layout, params));
      block_episodes->push_back(static_cast<int>(e));
      ++blocks;
    }
  }
  return blocks;
}

}  // namespace rlfit
