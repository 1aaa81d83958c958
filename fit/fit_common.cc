// Rollout windows and robust losses shared by the model fits.
#include "fit/fit_common.h"

#include <cmath>

#include "src/replay/metrics.h"

namespace rlfit {

std::vector<RolloutWindow> RolloutWindows(const Episode& ep, double window_s, double stride_s) {
  std::vector<RolloutWindow> windows;
  int previous = -1;
  for (int i = 0;; ++i) {
    const int start = RowAtHorizon(ep, 0, i * stride_s);
    if (start < 0 || start >= ep.size() - 1) break;
    if (start == previous) continue;
    previous = start;
    const int end = RowAtHorizon(ep, start, window_s);
    if (end < 0) break;
    if (end > start) windows.push_back({start, end - start});
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
