// Pieces every model's fit shares: rollout windows over an episode and the robust loss.
#pragma once

#include <vector>

#include <ceres/ceres.h>

#include "fit/fit.h"
#include "src/io/episode.h"
#include "src/replay/regime.h"

namespace rlfit {

struct RolloutWindow {
  int start = 0;  // first row (the recorded state the rollout starts from)
  int rows = 0;   // number of steps predicted
};

// Windows of about window_s seconds, each lying entirely inside one covered stretch of
// `regimes` (ClassifyRows of `ep`, one label per row; see CoveredStretches). In every stretch
// the first window starts at its first row (the prediction restarts where coverage resumes),
// the others on the episode's grid of starts (every stride_s from row 0) at least half a
// stride after it; a window that would reach past the stretch's last row is left out. The
// grid keeps the windows away from a gap where they were whatever the gaps: an episode covered
// throughout gets the grid from row 0.
std::vector<RolloutWindow> RolloutWindows(const Episode& ep, const std::vector<Regime>& regimes,
                                          double window_s, double stride_s);

// The robust loss for one residual block of `residuals` dimensionless residuals: the threshold
// scales with sqrt(residuals) so a block whose residuals are all about loss_scale sits at the
// knee. nullptr (plain squares) for loss "none". Ceres takes ownership.
ceres::LossFunction* MakeLoss(const SolverOptions& solver, int residuals);

}  // namespace rlfit
