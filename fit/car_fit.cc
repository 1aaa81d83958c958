// Rollout windows of the car fit.
#include "fit/car_fit.h"

#include "fit/fit_common.h"
#include "src/io/arena_file.h"
#include "src/io/recording.h"
#include "src/replay/episode_steps.h"

namespace rlfit {

int AddCarResiduals(ceres::Problem* problem, double* params, const std::vector<Episode>& episodes,
                    const FitOptions& options, std::vector<int>* block_episodes) {
  const CoeffLayout& layout = CarLayout();
  const std::string root = options.data_root.empty() ? ResolveDataRoot("") : options.data_root;
  const Arena* arena = &PitchArena(root);
  int blocks = 0;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const Episode& ep = episodes[e];
    const std::vector<double> levels = VehicleHandbrakeLevels(ep, options.integration, nullptr);
    for (const RolloutWindow& w : RolloutWindows(ep, ClassifyRows("car", ep, root),
                                                 options.window_s, options.stride_s)) {
      const CarModelState<double> start =
          CarStartState(ep, w.start, options.integration, JumpTiming(), levels);
      problem->AddResidualBlock(
          Reduced(CarRolloutResidual::CreateActive(&ep, arena, w.start, w.rows,
                                                   options.integration, start.jump,
                                                   start.wheels.handbrake)),
          MakeLoss(options.solver, CarRolloutResidual::kPerRow * w.rows),
          LayoutBlocks(layout, params));
      block_episodes->push_back(static_cast<int>(e));
      ++blocks;
    }
  }
  // Held (see car_fit.h).
  for (const ParamBlock& b : layout.blocks) {
    double* block = params + b.offset;
    // wall.surface, jump.*, vehicle.*
    const bool held = b.offset >= CarCoeffs<double>::kWallOffset;
    if (held && blocks > 0 && problem->HasParameterBlock(block))
      problem->SetParameterBlockConstant(block);
  }
  return blocks;
}

}  // namespace rlfit
