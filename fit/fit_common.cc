// Rollout windows and robust losses shared by the model fits.
#include "fit/fit_common.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <Eigen/Dense>

#include "src/common/error.h"
#include "src/replay/metrics.h"

namespace rlfit {

std::vector<double*> LayoutBlocks(const CoeffLayout& layout, double* params) {
  std::vector<double*> blocks;
  for (const ParamBlock& b : layout.blocks) blocks.push_back(params + b.offset);
  return blocks;
}

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

// Most parameter blocks of a cost whose Jacobian ReducedCost takes column-major.
constexpr std::size_t kMaxColumnBlocks = 16;

ReducedCost::ReducedCost(ceres::CostFunction* inner)
    : inner_(inner), columns_(dynamic_cast<const ColumnMajorJacobian*>(inner)) {
  if (inner_->parameter_block_sizes().size() > kMaxColumnBlocks) columns_ = nullptr;
  *mutable_parameter_block_sizes() = inner_->parameter_block_sizes();
  for (int size : inner_->parameter_block_sizes()) num_parameters_ += size;
  set_num_residuals(num_parameters_ + 1);
}

bool ReducedCost::Evaluate(double const* const* parameters, double* residuals,
                           double** jacobians) const {
  if (jacobians == nullptr) return EvaluateInner(parameters, residuals, nullptr);
  const std::vector<int>& sizes = parameter_block_sizes();
  std::vector<double> flat;
  flat.reserve(num_parameters_);
  for (std::size_t b = 0; b < sizes.size(); ++b)
    flat.insert(flat.end(), parameters[b], parameters[b] + sizes[b]);
  const std::lock_guard<std::mutex> lock(mutex_);
  bool hit = !cached_parameters_.empty() &&
             std::memcmp(flat.data(), cached_parameters_.data(), flat.size() * sizeof(double)) == 0;
  for (std::size_t b = 0; b < sizes.size() && hit; ++b)
    hit = (jacobians[b] != nullptr) == !cached_jacobians_[b].empty();
  if (!hit) {
    cached_parameters_.clear();  // until this evaluation succeeds
    cached_residuals_.resize(num_residuals());
    cached_jacobians_.assign(sizes.size(), {});
    std::vector<double*> pointers(sizes.size(), nullptr);
    for (std::size_t b = 0; b < sizes.size(); ++b)
      if (jacobians[b] != nullptr) {
        cached_jacobians_[b].resize(static_cast<std::size_t>(num_residuals()) * sizes[b]);
        pointers[b] = cached_jacobians_[b].data();
      }
    if (!EvaluateInner(parameters, cached_residuals_.data(), pointers.data())) return false;
    cached_parameters_ = flat;
  }
  std::copy(cached_residuals_.begin(), cached_residuals_.end(), residuals);
  for (std::size_t b = 0; b < sizes.size(); ++b)
    if (jacobians[b] != nullptr)
      std::copy(cached_jacobians_[b].begin(), cached_jacobians_[b].end(), jacobians[b]);
  return true;
}

bool ReducedCost::EvaluateInner(double const* const* parameters, double* residuals,
                                double** jacobians) const {
  const int m = inner_->num_residuals();
  // Per-thread buffers, reused from block to block: the blocks of a fit have a few sizes, so
  // after the first evaluations nothing is allocated (the arithmetic is the same).
  struct Scratch {
    Eigen::VectorXd r;
    std::vector<double> inner_jacobians;
    Eigen::MatrixXd a;
    Eigen::HouseholderQR<Eigen::MatrixXd> qr;
  };
  thread_local Scratch scratch;
  Eigen::VectorXd& r = scratch.r;
  r.resize(m);
  if (jacobians == nullptr) {
    if (!inner_->Evaluate(parameters, r.data(), nullptr)) return false;
    residuals[0] = r.norm();
    std::fill(residuals + 1, residuals + num_residuals(), 0.0);
    return true;
  }
  const std::vector<int>& sizes = parameter_block_sizes();
  int q = 0;  // columns asked for
  for (std::size_t b = 0; b < sizes.size(); ++b)
    if (jacobians[b] != nullptr) q += sizes[b];
  Eigen::MatrixXd& a = scratch.a;
  a.resize(m, q);
  if (columns_ != nullptr) {
    // Straight into the QR's column-major matrix.
    bool asked[kMaxColumnBlocks];
    for (std::size_t b = 0; b < sizes.size(); ++b) asked[b] = jacobians[b] != nullptr;
    if (!columns_->EvaluateColumns(parameters, r.data(), asked, a.data())) return false;
  } else {
    // The inner Jacobian of each requested block (row-major m x size, as Ceres lays it out;
    // the inner cost function writes every entry), copied into a.
    std::vector<double*> inner_pointers(sizes.size(), nullptr);
    if (scratch.inner_jacobians.size() < static_cast<std::size_t>(m) * q)
      scratch.inner_jacobians.resize(static_cast<std::size_t>(m) * q);
    for (std::size_t b = 0, offset = 0; b < sizes.size(); ++b)
      if (jacobians[b] != nullptr) {
        inner_pointers[b] = scratch.inner_jacobians.data() + offset;
        offset += static_cast<std::size_t>(m) * sizes[b];
      }
    if (!inner_->Evaluate(parameters, r.data(), inner_pointers.data())) return false;
    for (std::size_t b = 0, col = 0; b < sizes.size(); ++b) {
      if (inner_pointers[b] == nullptr) continue;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < sizes[b]; ++j) a(i, col + j) = inner_pointers[b][i * sizes[b] + j];
      col += sizes[b];
    }
  }
  std::fill(residuals, residuals + num_residuals(), 0.0);
  Eigen::MatrixXd upper = Eigen::MatrixXd::Zero(q, q);
  if (q > 0) {
    const Eigen::HouseholderQR<Eigen::MatrixXd>& qr = scratch.qr.compute(a);
    const Eigen::VectorXd qtr = qr.householderQ().adjoint() * r;
    for (int i = 0; i < q; ++i) residuals[i] = qtr(i);
    residuals[q] = qtr.tail(m - q).norm();
    upper = qr.matrixQR().topRows(q).triangularView<Eigen::Upper>();
  } else {
    residuals[0] = r.norm();
  }
  for (std::size_t b = 0, col = 0; b < sizes.size(); ++b) {
    if (jacobians[b] == nullptr) continue;
    for (int i = 0; i < num_residuals(); ++i)
      for (int j = 0; j < sizes[b]; ++j)
        jacobians[b][i * sizes[b] + j] = i < q ? upper(i, col + j) : 0.0;
    col += sizes[b];
  }
  return true;
}

ceres::CostFunction* Reduced(ceres::CostFunction* inner) {
  int parameters = 0;
  for (int size : inner->parameter_block_sizes()) parameters += size;
  return inner->num_residuals() > parameters + 1 ? new ReducedCost(inner) : inner;
}

int FullResidualCount(const ceres::Problem& problem) {
  std::vector<ceres::ResidualBlockId> ids;
  problem.GetResidualBlocks(&ids);
  int count = 0;
  for (ceres::ResidualBlockId id : ids) {
    const ceres::CostFunction* cost = problem.GetCostFunctionForResidualBlock(id);
    const auto* reduced = dynamic_cast<const StandsForResiduals*>(cost);
    count += reduced != nullptr ? reduced->inner_residuals() : cost->num_residuals();
  }
  return count;
}

}  // namespace rlfit
