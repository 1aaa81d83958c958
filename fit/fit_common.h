// Pieces every model's fit shares: rollout windows over an episode and the robust loss.
#pragma once

#include <memory>
#include <mutex>
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

// The parameter blocks of `layout` inside the flat `params`, in layout order: what a
// residual block over every block of the model is added with.
std::vector<double*> LayoutBlocks(const CoeffLayout& layout, double* params);

// The robust loss for one residual block of `residuals` dimensionless residuals: the threshold
// scales with sqrt(residuals) so a block whose residuals are all about loss_scale sits at the
// knee. nullptr (plain squares) for loss "none". Ceres takes ownership.
ceres::LossFunction* MakeLoss(const SolverOptions& solver, int residuals);

// A cost function that can also write its Jacobian as ReducedCost's QR reads it: column-major,
// one contiguous column of num_residuals() entries per coefficient asked for, the blocks in
// order. ReducedCost then skips its transposing copy of the row-major blocks Ceres' layout
// has (the same numbers, so the same QR bit for bit).
class ColumnMajorJacobian {
 public:
  virtual ~ColumnMajorJacobian() = default;
  // As ceres::CostFunction::Evaluate with Jacobians: `asked[b]` whether block b is wanted;
  // `columns` receives the wanted blocks' columns one after another (every entry written).
  virtual bool EvaluateColumns(double const* const* parameters, double* residuals,
                               const bool* asked, double* columns) const = 0;
};

// A cost function that stands for more residuals than it hands Ceres (ReducedCost, the
// distributed fit's per-episode blocks): FullResidualCount counts inner_residuals().
class StandsForResiduals {
 public:
  virtual ~StandsForResiduals() = default;
  virtual int inner_residuals() const = 0;
};

// A residual block of m residuals over p coefficients, handed to Ceres as p + 1 residuals
// with the same cost, gradient and Gauss-Newton matrix. With the thin QR J = Q R of the
// block's Jacobian (over the varying blocks Ceres asks for):
//   r' = (Q^T r, |r - Q Q^T r|),   J' = (R; 0),
// so |r'|^2 = |r|^2, J'^T J' = J^T J and J'^T r' = J^T r: the robust loss (a function of
// |r|^2), its correction of r and J, Jacobi scaling (the column norms of J), the
// Levenberg-Marquardt step, the covariance and the per-episode scores s_g = J^T r are all the
// ones of the full block, up to round-off. Ceres' cost-only evaluations (trial steps) get
// r' = (|r|, 0, ...): only the norm is used there. Why: a rollout window of the ball fit has
// 9 x 61 residuals for 7 coefficients; held as is, the ~17k windows made a 9.5M x 7 dense
// Jacobian that Ceres copies several times (3.5 GB peak); reduced, ~140k x 7.
// The block keeps its last evaluation with a Jacobian ((p + 1)(p + 1) numbers) and answers a
// request for the Jacobian at the same coefficients (bit for bit) from it: the standard errors
// ask twice (episode scores, ceres::Covariance) for the Jacobian at the solver's last point.
class ReducedCost : public ceres::CostFunction, public StandsForResiduals {
 public:
  explicit ReducedCost(ceres::CostFunction* inner);  // takes ownership
  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override;
  int inner_residuals() const override { return inner_->num_residuals(); }

 private:
  bool EvaluateInner(double const* const* parameters, double* residuals,
                     double** jacobians) const;
  std::unique_ptr<ceres::CostFunction> inner_;
  const ColumnMajorJacobian* columns_ = nullptr;  // inner_ as one, if it is
  int num_parameters_ = 0;
  // The last evaluation with a Jacobian: coefficients, which blocks, residuals, Jacobians.
  mutable std::mutex mutex_;
  mutable std::vector<double> cached_parameters_, cached_residuals_;
  mutable std::vector<std::vector<double>> cached_jacobians_;  // empty = not asked for
};

// `inner` reduced (ReducedCost) when it has more residuals than coefficients + 1, else itself.
ceres::CostFunction* Reduced(ceres::CostFunction* inner);

// Residuals of `problem` before reduction: a StandsForResiduals block counts its inner ones.
int FullResidualCount(const ceres::Problem& problem);

}  // namespace rlfit
