// Rollout windows of the wall (surface) fit.
#include "fit/wall_fit.h"

#include "fit/fit_common.h"
#include "src/io/arena_file.h"
#include "src/io/recording.h"
#include "src/replay/coeff_choice.h"

namespace rlfit {

int AddWallResiduals(ceres::Problem* problem, double* params, const std::vector<Episode>& episodes,
                     const FitOptions& options, std::vector<int>* block_episodes) {
  // The ground fit it runs on, held fixed; FitEpisodes writes the same into the file (runs_on).
  const std::vector<double> ground = CommittedRunsOn(SurfaceLayout()).front();
  const std::string root = options.data_root.empty() ? ResolveDataRoot("") : options.data_root;
  const Arena* arena = &PitchArena(root);
  int blocks = 0;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const Episode& ep = episodes[e];
    for (const RolloutWindow& w : RolloutWindows(ep, ClassifyRows("wall", ep, root),
                                                 options.window_s, options.stride_s)) {
      problem->AddResidualBlock(
          Reduced(WallRolloutResidual::Create(&ep, w.start, w.rows, options.integration, ground,
                                              arena)),
          MakeLoss(options.solver, WallRolloutResidual::kPerRow * w.rows), params);
      block_episodes->push_back(static_cast<int>(e));
      ++blocks;
    }
  }
  return blocks;
}

}  // namespace rlfit
