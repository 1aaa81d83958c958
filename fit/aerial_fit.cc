// Rollout windows of the aerial fit.
#include "fit/aerial_fit.h"

#include "fit/fit_common.h"

namespace rlfit {

int AddAerialResiduals(ceres::Problem* problem, double* params,
                       const std::vector<Episode>& episodes, const FitOptions& options,
                       std::vector<int>* block_episodes) {
  const CoeffLayout& layout = AerialLayout();
  int blocks = 0;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const Episode& ep = episodes[e];
    for (const RolloutWindow& w :
         RolloutWindows(ep, ClassifyRows("aerial", ep, options.data_root), options.window_s,
                        options.stride_s)) {
      bool airborne = true;
      for (int k = w.start; k <= w.start + w.rows; ++k)
        airborne = airborne && !ep.rows[k].on_ground && !ep.rows[k].input.jump;
      if (!airborne) continue;
      problem->AddResidualBlock(
          Reduced(AerialRolloutResidual::Create(&ep, w.start, w.rows, options.integration)),
          MakeLoss(options.solver, AerialRolloutResidual::kPerRow * w.rows), params + layout.blocks[0].offset,
          params + layout.blocks[1].offset, params + layout.blocks[2].offset,
          params + layout.blocks[3].offset);
      block_episodes->push_back(static_cast<int>(e));
      ++blocks;
    }
  }
  return blocks;
}

}  // namespace rlfit
