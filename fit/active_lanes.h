// Forward-mode Jacobians over only the coefficients a residual block depends on: a cheap
// dependency-tracking pass (DepScalar) finds them, then Jets with that many lanes compute the
// Jacobian, bit-identical to the full AutoDiffCostFunction's (tests/active_lanes_test.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include <ceres/ceres.h>
#include <Eigen/Core>

#include "fit/fit_common.h"
#include "src/common/error.h"

namespace rlfit {

// A double that carries the set of coefficients its value was computed from (bit i:
// coefficient i of the residual block's flat parameter vector). Every arithmetic operation and
// function returns the union of its operands' sets; comparisons take the value only, as a
// ceres::Jet's do. So a coefficient missing from every residual's set is one that no
// residual's value is computed from: a Jet's derivative lane for it stays exactly zero.
struct DepScalar {
  double a = 0.0;
  std::uint64_t m = 0;  // the coefficients this value depends on

  DepScalar() = default;
  explicit DepScalar(double value) : a(value) {}
  DepScalar(double value, std::uint64_t mask) : a(value), m(mask) {}

  DepScalar& operator+=(const DepScalar& o) { return *this = DepScalar(a + o.a, m | o.m); }
  DepScalar& operator-=(const DepScalar& o) { return *this = DepScalar(a - o.a, m | o.m); }
  DepScalar& operator*=(const DepScalar& o) { return *this = DepScalar(a * o.a, m | o.m); }
  DepScalar& operator/=(const DepScalar& o) { return *this = DepScalar(a / o.a, m | o.m); }
  DepScalar& operator+=(double o) { a += o; return *this; }
  DepScalar& operator-=(double o) { a -= o; return *this; }
  DepScalar& operator*=(double o) { a *= o; return *this; }
  DepScalar& operator/=(double o) { a /= o; return *this; }
};

inline DepScalar operator+(const DepScalar& x) { return x; }
inline DepScalar operator-(const DepScalar& x) { return {-x.a, x.m}; }
#define RLFIT_DEP_BINARY(op)                                                          \
  inline DepScalar operator op(const DepScalar& x, const DepScalar& y) {              \
    return {x.a op y.a, x.m | y.m};                                                   \
  }                                                                                   \
  inline DepScalar operator op(const DepScalar& x, double y) { return {x.a op y, x.m}; } \
  inline DepScalar operator op(double x, const DepScalar& y) { return {x op y.a, y.m}; }
RLFIT_DEP_BINARY(+)
RLFIT_DEP_BINARY(-)
RLFIT_DEP_BINARY(*)
RLFIT_DEP_BINARY(/)
#undef RLFIT_DEP_BINARY
#define RLFIT_DEP_COMPARE(op)                                                                \
  inline bool operator op(const DepScalar& x, const DepScalar& y) { return x.a op y.a; }    \
  inline bool operator op(const DepScalar& x, double y) { return x.a op y; }                \
  inline bool operator op(double x, const DepScalar& y) { return x op y.a; }
RLFIT_DEP_COMPARE(<)
RLFIT_DEP_COMPARE(<=)
RLFIT_DEP_COMPARE(>)
RLFIT_DEP_COMPARE(>=)
RLFIT_DEP_COMPARE(==)
RLFIT_DEP_COMPARE(!=)
#undef RLFIT_DEP_COMPARE
#define RLFIT_DEP_UNARY(f) \
  inline DepScalar f(const DepScalar& x) { return {std::f(x.a), x.m}; }
RLFIT_DEP_UNARY(abs)
RLFIT_DEP_UNARY(sqrt)
RLFIT_DEP_UNARY(exp)
RLFIT_DEP_UNARY(log)
RLFIT_DEP_UNARY(sin)
RLFIT_DEP_UNARY(cos)
RLFIT_DEP_UNARY(tan)
RLFIT_DEP_UNARY(asin)
RLFIT_DEP_UNARY(acos)
RLFIT_DEP_UNARY(atan)
RLFIT_DEP_UNARY(tanh)
RLFIT_DEP_UNARY(cbrt)
#undef RLFIT_DEP_UNARY
inline DepScalar atan2(const DepScalar& y, const DepScalar& x) {
  return {std::atan2(y.a, x.a), y.m | x.m};
}
inline DepScalar pow(const DepScalar& x, const DepScalar& y) {
  return {std::pow(x.a, y.a), x.m | y.m};
}
inline DepScalar pow(const DepScalar& x, double y) { return {std::pow(x.a, y), x.m}; }
inline DepScalar hypot(const DepScalar& x, const DepScalar& y) {
  return {std::hypot(x.a, y.a), x.m | y.m};
}
inline bool isfinite(const DepScalar& x) { return std::isfinite(x.a); }
inline bool isnan(const DepScalar& x) { return std::isnan(x.a); }

}  // namespace rlfit

namespace Eigen {
template <>
struct NumTraits<rlfit::DepScalar> : GenericNumTraits<double> {
  using Real = rlfit::DepScalar;
  using NonInteger = rlfit::DepScalar;
  using Nested = rlfit::DepScalar;
  using Literal = rlfit::DepScalar;
  static Real dummy_precision() { return Real(1e-12); }
  static Real epsilon() { return Real(std::numeric_limits<double>::epsilon()); }
  static Real highest() { return Real(std::numeric_limits<double>::max()); }
  static Real lowest() { return Real(-std::numeric_limits<double>::max()); }
  static int digits10() { return NumTraits<double>::digits10(); }
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = 1,
    AddCost = 1,
    MulCost = 1,
  };
};
}  // namespace Eigen

namespace rlfit {

// The cost function of a residual block whose functor evaluates from one flat coefficient
// vector: `functor.Flat<T>(const T* coeffs, T* residuals)` for T = double, DepScalar and
// ceres::Jet<double, K> for each K in kLanes (ascending, the last at least the number of
// coefficients). Ceres sees the parameter blocks `block_sizes` (concatenated: the flat vector).
//
// With a Jacobian asked for, it first runs the functor on DepScalars seeded with one bit per
// coefficient of a block Ceres wants a Jacobian of, takes the union of the residuals' sets,
// and runs it again on Jets with the smallest K that holds them, one lane per such coefficient
// (the others enter as constants); the other columns are zero. Why: a ground rollout window
// reads ~10 of the model's 20 coefficients (no boost held, never backward, 2-3 curvature
// knots), and the cost of forward-mode autodiff grows with the lanes carried through every
// step. Each lane's arithmetic is the one it has in a wider Jet, so values and Jacobians are
// those of AutoDiffCostFunction to the bit; which coefficients are read may change with the
// coefficients (a speed crossing a curvature knot), so the pass runs at every evaluation
// unless the coefficients are those of the last cost-only evaluation: that one runs the
// DepScalar pass itself (its values are the double pass's, bit for bit: a DepScalar computes
// its value with the same double operations) with every coefficient seeded and keeps the set,
// and the same coefficients take the same branches, so the set of a Jacobian asked for there
// (Ceres' next request after an accepted step) is that set restricted to the blocks asked for.
// As a ColumnMajorJacobian it writes the same numbers straight into ReducedCost's QR matrix.
template <typename Functor, int... kLanes>
class ActiveLaneCost : public ceres::CostFunction, public ColumnMajorJacobian {
 public:
  ActiveLaneCost(Functor* functor, const std::vector<int>& block_sizes, int num_residuals)
      : functor_(functor) {
    *mutable_parameter_block_sizes() = block_sizes;
    set_num_residuals(num_residuals);
    for (int size : block_sizes) num_parameters_ += size;
    RLFIT_CHECK(num_parameters_ <= 64, "at most 64 coefficients in an ActiveLaneCost");
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    if (jacobians == nullptr) return EvaluateImpl(parameters, residuals, nullptr, nullptr, nullptr);
    const std::vector<int>& sizes = parameter_block_sizes();
    bool asked[64];  // at most 64 coefficients, so at most 64 blocks
    for (std::size_t b = 0; b < sizes.size(); ++b) asked[b] = jacobians[b] != nullptr;
    return EvaluateImpl(parameters, residuals, asked, jacobians, nullptr);
  }

  bool EvaluateColumns(double const* const* parameters, double* residuals, const bool* asked,
                       double* columns) const override {
    return EvaluateImpl(parameters, residuals, asked, nullptr, columns);
  }

 private:
  // `asked` null: residuals only. Else the asked blocks' Jacobian goes to `jacobians` (Ceres'
  // row-major blocks) or, if that is null, to `columns` (ColumnMajorJacobian's layout).
  bool EvaluateImpl(double const* const* parameters, double* residuals, const bool* asked,
                    double** jacobians, double* columns) const {
    const std::vector<int>& sizes = parameter_block_sizes();
    std::vector<double> flat;
    flat.reserve(num_parameters_);
    for (std::size_t b = 0; b < sizes.size(); ++b)
      flat.insert(flat.end(), parameters[b], parameters[b] + sizes[b]);
    std::vector<DepScalar> dep_coeffs(num_parameters_);
    std::vector<DepScalar> dep_residuals(num_residuals());
    if (asked == nullptr) {
      for (int i = 0; i < num_parameters_; ++i)
        dep_coeffs[i] = DepScalar(flat[i], std::uint64_t{1} << i);
      const bool ok = functor_->Flat(dep_coeffs.data(), dep_residuals.data());
      std::uint64_t used = 0;
      for (int r = 0; r < num_residuals(); ++r) {
        residuals[r] = dep_residuals[r].a;
        used |= dep_residuals[r].m;
      }
      const std::lock_guard<std::mutex> lock(mutex_);
      cached_coeffs_ = ok ? flat : std::vector<double>();
      cached_used_ = used;
      return ok;
    }

    std::uint64_t requested = 0;
    for (std::size_t b = 0, i = 0; b < sizes.size(); ++b)
      for (int j = 0; j < sizes[b]; ++j, ++i)
        if (asked[b]) requested |= std::uint64_t{1} << i;
    std::uint64_t used = 0;
    bool known = false;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (cached_coeffs_.size() == flat.size() &&
          std::memcmp(cached_coeffs_.data(), flat.data(), flat.size() * sizeof(double)) == 0) {
        used = cached_used_ & requested;
        known = true;
      }
    }
    if (!known) {
      for (int i = 0; i < num_parameters_; ++i)
        dep_coeffs[i] = requested >> i & 1 ? DepScalar(flat[i], std::uint64_t{1} << i)
                                           : DepScalar(flat[i]);
      if (!functor_->Flat(dep_coeffs.data(), dep_residuals.data())) return false;
      for (const DepScalar& r : dep_residuals) used |= r.m;
    }
    std::vector<int> active;
    for (int i = 0; i < num_parameters_; ++i)
      if (used >> i & 1) active.push_back(i);
    return Dispatch<kLanes...>(flat, active, residuals, asked, jacobians, columns);
  }

  template <int K, int... kRest>
  bool Dispatch(const std::vector<double>& flat, const std::vector<int>& active,
                double* residuals, const bool* asked, double** jacobians,
                double* columns) const {
    if constexpr (sizeof...(kRest) == 0) {
      RLFIT_CHECK(static_cast<int>(active.size()) <= K, "more active coefficients than lanes");
      return Run<K>(flat, active, residuals, asked, jacobians, columns);
    } else {
      if (static_cast<int>(active.size()) <= K)
        return Run<K>(flat, active, residuals, asked, jacobians, columns);
      return Dispatch<kRest...>(flat, active, residuals, asked, jacobians, columns);
    }
  }

  template <int K>
  bool Run(const std::vector<double>& flat, const std::vector<int>& active, double* residuals,
           const bool* asked, double** jacobians, double* columns) const {
    using J = ceres::Jet<double, K>;
    std::vector<J> coeffs(flat.size());
    for (std::size_t i = 0; i < flat.size(); ++i) coeffs[i] = J(flat[i]);
    std::vector<int> lane(flat.size(), -1);
    for (std::size_t k = 0; k < active.size(); ++k) {
      coeffs[active[k]] = J(flat[active[k]], static_cast<int>(k));
      lane[active[k]] = static_cast<int>(k);
    }
    std::vector<J> out(num_residuals());
    if (!functor_->Flat(coeffs.data(), out.data())) return false;
    const std::vector<int>& sizes = parameter_block_sizes();
    for (int r = 0; r < num_residuals(); ++r) residuals[r] = out[r].a;
    if (asked == nullptr) return true;
    const std::size_t m = num_residuals();
    for (std::size_t b = 0, offset = 0, col = 0; b < sizes.size(); offset += sizes[b], ++b) {
      if (!asked[b]) continue;
      for (int j = 0; j < sizes[b]; ++j, ++col) {
        const int l = lane[offset + j];
        for (std::size_t r = 0; r < m; ++r) {
          const double v = l >= 0 ? out[r].v[l] : 0.0;
          if (jacobians != nullptr)
            jacobians[b][r * sizes[b] + j] = v;
          else
            columns[col * m + r] = v;
        }
      }
    }
    return true;
  }

  std::unique_ptr<Functor> functor_;
  int num_parameters_ = 0;
  // The last successful cost-only evaluation: its coefficients and the set of coefficients
  // its residuals depend on (all seeded).
  mutable std::mutex mutex_;
  mutable std::vector<double> cached_coeffs_;
  mutable std::uint64_t cached_used_ = 0;
};

}  // namespace rlfit
