// Rollout windows and robust losses shared by the model fits.
#include "fit/fit_common.h"

#include <cmath>

#include "src/common/error.h"
#include "src/replay/metrics.h"

namespace rlfit {

std::vector<RolloutWindow> RolloutWindows(const Episode& ep, const std::vector<Regime>& regimes,
                                          double window_s, double stride_s) {
  RLFIT_CHECK(regimes.size() == ep.rows.size(), "one regime label per row of " + ep.name);
  std::vector<RolloutWindow> windows;
  for (const auto& [first, last] : CoveredStretches(regimes)) {
    int previous = -1;
    for (int i = 0;; ++i) {
      const int start = RowAtHorizon(ep, first, i * stride_s);
      if (start < 0 || start >= last) break;
      if (start == previous) continue;
      previous = start;
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
