// Rollout windows of the jump fit.
#include "fit/jump_fit.h"

#include "fit/fit_common.h"

namespace rlfit {

int AddJumpResiduals(ceres::Problem* problem, double* params, const std::vector<Episode>& episodes,
                     const FitOptions& options, std::vector<int>* block_episodes) {
  const CoeffLayout& layout = JumpLayout();
  int blocks = 0;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const Episode& ep = episodes[e];
    const std::vector<std::pair<int, int>> jumps = JumpSegments(ep);
    for (const RolloutWindow& w : RolloutWindows(ep, ClassifyRows("jump", ep, options.data_root),
                                                 options.window_s, options.stride_s)) {
      int takeoff = -1;
      for (const auto& [first, last] : jumps)
        if (first <= w.start && w.start + w.rows <= last) takeoff = first;
      if (takeoff < 0) continue;  // not inside one jump (cannot happen: windows lie in one)
      double* p[7];
      for (int b = 0; b < 7; ++b) p[b] = params + layout.blocks[b].offset;
      problem->AddResidualBlock(
          Reduced(JumpRolloutResidual::Create(&ep, takeoff, w.start, w.rows, options.integration)),
          MakeLoss(options.solver, JumpRolloutResidual::kPerRow * w.rows), p[0], p[1], p[2], p[3],
          p[4], p[5], p[6]);
      block_episodes->push_back(static_cast<int>(e));
      ++blocks;
    }
  }
  // The aerial blocks are the aerial model's (fitted by `rlfit fit aerial` on the aerial
  // recordings): held at their starting values here. Fitted on the jump recordings (2 + 3
  // jumps, 2 recordings), they overfit: cross-validated by recording, windowed |dx| at 1 s went
  // 1.8 -> 21 uu (decision 0019).
  if (blocks > 0)
    for (int b = 0; b < 4; ++b) problem->SetParameterBlockConstant(params + layout.blocks[b].offset);
  return blocks;
}

}  // namespace rlfit
