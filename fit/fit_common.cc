// Rollout windows and robust losses shared by the model fits.
#include "fit/fit_common.h"

#include <cmath>

#include "src/common/error.h"
#include "src/replay/metrics.h"

namespace rlfit {

std::vector<RolloutWindow> RolloutWindows(const Episode& ep, const std::vector<Regime>& regimes,
                                          double window_s, double stride_s) {
  RLFIT_CHECK(regimes.size() == ep.rows.size(), "one regime label per row of " + ep.name);
  // The episode's grid of window starts: every stride_s from row 0.
  std::vector<int> grid;
  for (int i = 0;; ++i) {
    const int row = RowAtHorizon(ep, 0, i * stride_s);
    if (row < 0 || row >= ep.size() - 1) break;
    if (grid.empty() || row != grid.back()) grid.push_back(row);
  }
  std::vector<RolloutWindow> windows;
  for (const auto& [first, last] : CoveredStretches(regimes)) {
    std::vector<int> starts = {first};
    for (int row : grid)
      if (row > first && ep.rows[row].t_s - ep.rows[first].t_s >= 0.5 * stride_s)
        starts.push_back(row);
    for (int start : starts) {
      if (start >= last) break;
      const int end = RowAtHorizon(ep, start, window_s);
      if (end < 0 || end > last) break;
      if (end > start) windows.push_back({start, end - start});
    }
  }
  return windows;
}

ceres::LossFunction* MakeLoss(const SolverOptions& solver, int residuals) {
  const double a = solver.loss_scale * std::sqrt(static_cast<double>(residuals));
  if (solver.loss == "huber") return new ceres::HuberLoss(a);
  if (solver.loss == "cauchy") return new ceres::CauchyLoss(a);
  return nullptr;
}

}  // namespace rlfit
