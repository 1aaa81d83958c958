// Tests of the fit's standard errors against closed forms: the mean of clustered samples.
#include <cmath>
#include <numeric>

#include "fit/fit.h"
#include "fit/fit_common.h"
#include "tests/fit_test_util.h"

namespace rlfit {
namespace {

// r = (mu - y) / sigma for one sample y.
struct MeanResidual {
  MeanResidual(double y, double sigma) : y(y), sigma(sigma) {}
  template <typename T>
  bool operator()(const T* mu, T* r) const {
    r[0] = (mu[0] - T(y)) / T(sigma);
    return true;
  }
  double y, sigma;
};

TEST_CASE("standard errors of a mean: iid and cluster-robust against their closed forms") {
  // G clusters of n samples: cluster g is its offset c_g plus a small alternating wobble, so
  // the samples within a cluster are strongly correlated and the clusters are not.
  const std::vector<double> offsets = {3.0, -1.0, 4.0, 1.5, -2.5, 0.5};
  const int g = static_cast<int>(offsets.size()), n = 50;
  const double sigma = 2.0;
  std::vector<double> ys;
  std::vector<int> clusters;
  for (int c = 0; c < g; ++c)
    for (int i = 0; i < n; ++i) {
      ys.push_back(offsets[c] + (i % 2 ? 0.1 : -0.1));
      clusters.push_back(c);
    }
  const CoeffLayout layout{{"mu"}, {"1"}, {0.0}, {{"mu", 0, 1}}, {}};  // no bounds
  std::vector<double> params = {0.0};
  ceres::Problem problem;
  for (double y : ys)
    problem.AddResidualBlock(
        new ceres::AutoDiffCostFunction<MeanResidual, 1, 1>(new MeanResidual(y, sigma)), nullptr,
        params.data());
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::DENSE_QR;
  options.function_tolerance = options.gradient_tolerance = options.parameter_tolerance = 1e-15;
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);

  const int m = g * n;
  const double mean = std::accumulate(ys.begin(), ys.end(), 0.0) / m;
  REQUIRE(params[0] == doctest::Approx(mean).epsilon(1e-7));
  // iid: s / sqrt(m), s the sample standard deviation of all samples.
  double ss = 0.0;
  for (double y : ys) ss += (y - mean) * (y - mean);
  const double iid = std::sqrt(ss / (m - 1)) / std::sqrt(static_cast<double>(m));
  // Cluster-robust, equal clusters: sd of the cluster means / sqrt(G).
  double ss_means = 0.0;
  for (double c : offsets) {
    const double cluster_mean = c;  // the wobble averages out over an even n
    ss_means += (cluster_mean - mean) * (cluster_mean - mean);
  }
  const double robust = std::sqrt(ss_means / (g - 1)) / std::sqrt(static_cast<double>(g));

  const StandardErrors e =
      ComputeStandardErrors(&problem, &params, layout, summary.final_cost, clusters, 1);
  CHECK(e.clusters == g);
  CHECK(e.iid[0] == doctest::Approx(iid).epsilon(1e-6));
  CHECK(e.robust[0] == doctest::Approx(robust).epsilon(1e-6));
  CHECK(e.robust[0] > 5.0 * e.iid[0]);  // correlated samples: iid understates the error
}

// r = (x[k] + x[1] / 2 - y) / sigma: the mean y of group k (0 or 2) less half the shared x[1].
struct ShiftedMeanResidual {
  ShiftedMeanResidual(int k, double y, double sigma) : k(k), y(y), sigma(sigma) {}
  template <typename T>
  bool operator()(const T* x, T* r) const {
    r[0] = (x[k] + T(0.5) * x[1] - T(y)) / T(sigma);
    return true;
  }
  int k;
  double y, sigma;
};

// r = (z - y) / sigma for one coefficient z of a block of two.
struct MeanOfTwoResidual {
  MeanOfTwoResidual(int k, double y, double sigma) : k(k), y(y), sigma(sigma) {}
  template <typename T>
  bool operator()(const T* z, T* r) const {
    r[0] = (z[k] - T(y)) / T(sigma);
    return true;
  }
  int k;
  double y, sigma;
};

TEST_CASE("a coefficient held by a SubsetManifold: 0 for it, the others' errors as without it") {
  // Block {a, h, b} with h held (FitSelection's SubsetManifold) at 0.8: a and b are the means
  // of two clustered groups less h / 2, so their errors are those of the block {a, b} fitted
  // on the samples shifted by h / 2 (iid and cluster-robust, same chi-square: two varying).
  constexpr double kHeld = 0.8, kSigma = 1.5;
  const std::vector<double> offsets = {3.0, -1.0, 4.0, 1.5, -2.5, 0.5, 2.0};
  std::vector<double> ys;
  std::vector<int> groups, clusters;
  for (int c = 0; c < static_cast<int>(offsets.size()); ++c)
    for (int i = 0; i < 30; ++i) {
      ys.push_back(offsets[c] * (i % 3 ? 1.0 : 0.5) + 0.1 * (i % 5));
      groups.push_back(i % 2 ? 0 : 2);
      clusters.push_back(c);
    }
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::DENSE_QR;
  options.function_tolerance = options.gradient_tolerance = options.parameter_tolerance = 1e-15;
  ceres::Solver::Summary held_summary, plain_summary;

  const CoeffLayout held_layout{{"a", "h", "b"}, {"1", "1", "1"}, {0.0, 0.0, 0.0},
                                {{"block", 0, 3}}, {}};
  std::vector<double> held = {0.0, kHeld, 0.0};
  ceres::Problem held_problem;
  for (std::size_t i = 0; i < ys.size(); ++i)
    held_problem.AddResidualBlock(new ceres::AutoDiffCostFunction<ShiftedMeanResidual, 1, 3>(
                                      new ShiftedMeanResidual(groups[i], ys[i], kSigma)),
                                  nullptr, held.data());
  held_problem.SetManifold(held.data(), new ceres::SubsetManifold(3, {1}));
  ceres::Solve(options, &held_problem, &held_summary);
  REQUIRE(held[1] == kHeld);

  const CoeffLayout plain_layout{{"a", "b"}, {"1", "1"}, {0.0, 0.0}, {{"block", 0, 2}}, {}};
  std::vector<double> plain = {0.0, 0.0};
  ceres::Problem plain_problem;
  for (std::size_t i = 0; i < ys.size(); ++i)
    plain_problem.AddResidualBlock(
        new ceres::AutoDiffCostFunction<MeanOfTwoResidual, 1, 2>(
            new MeanOfTwoResidual(groups[i] == 0 ? 0 : 1, ys[i] - 0.5 * kHeld, kSigma)),
        nullptr, plain.data());
  ceres::Solve(options, &plain_problem, &plain_summary);

  const StandardErrors e = ComputeStandardErrors(&held_problem, &held, held_layout,
                                                 held_summary.final_cost, clusters, 1);
  const StandardErrors f = ComputeStandardErrors(&plain_problem, &plain, plain_layout,
                                                 plain_summary.final_cost, clusters, 1);
  CHECK(e.note == f.note);
  CHECK(e.robust[1] == 0.0);
  CHECK(e.iid[1] == 0.0);
  for (int k : {0, 1}) {
    const int at = k == 0 ? 0 : 2;
    INFO(held_layout.names[at]);
    CHECK(held[at] == doctest::Approx(plain[k]).epsilon(1e-9));
    CHECK(e.iid[at] == doctest::Approx(f.iid[k]).epsilon(1e-9));
    CHECK(e.robust[at] == doctest::Approx(f.robust[k]).epsilon(1e-9));
    CHECK(e.robust[at] > 0.0);
  }
}

// r = sqrt(mu) - 1: its derivative is infinite at mu = 0.
struct SqrtResidual {
  template <typename T>
  bool operator()(const T* mu, T* r) const {
    using std::sqrt;
    r[0] = sqrt(mu[0]) - T(1.0);
    return true;
  }
};

// r = a - 1 whatever b is: b is not determined by the residuals.
struct IgnoresSecond {
  template <typename T>
  bool operator()(const T* a, const T* b, T* r) const {
    r[0] = a[0] - T(1.0) + T(0.0) * b[0];
    return true;
  }
};

TEST_CASE("a non-finite Jacobian gives no standard errors (NaN and a note), never 0 or a crash") {
  const CoeffLayout layout{{"mu"}, {"1"}, {0.0}, {{"mu", 0, 1}}, {}};  // no bounds
  std::vector<double> params = {0.0};
  ceres::Problem problem;
  for (int i = 0; i < 3; ++i)
    problem.AddResidualBlock(new ceres::AutoDiffCostFunction<SqrtResidual, 1, 1>(new SqrtResidual),
                             nullptr, params.data());
  const StandardErrors e = ComputeStandardErrors(&problem, &params, layout, 1.5, {0, 1, 2}, 1);
  CHECK(std::isnan(e.robust[0]));
  CHECK(std::isnan(e.iid[0]));
  CHECK(e.note.find("not") != std::string::npos);
  // A non-finite final cost: no errors either.
  params = {4.0};
  const StandardErrors f =
      ComputeStandardErrors(&problem, &params, layout, std::nan(""), {0, 1, 2}, 1);
  CHECK(std::isnan(f.robust[0]));
  CHECK(!f.note.empty());
}

TEST_CASE("a coefficient the residuals do not depend on gets NaN, not the pseudo-inverse's 0") {
  const CoeffLayout layout{{"a", "b"}, {"1", "1"}, {0.0, 0.0}, {{"a", 0, 1}, {"b", 1, 1}}, {}};
  std::vector<double> params = {1.5, 2.0};
  ceres::Problem problem;
  std::vector<int> clusters;
  for (int i = 0; i < 4; ++i) {
    problem.AddResidualBlock(
        new ceres::AutoDiffCostFunction<IgnoresSecond, 1, 1, 1>(new IgnoresSecond), nullptr,
        params.data(), params.data() + 1);
    clusters.push_back(i);
  }
  const StandardErrors e = ComputeStandardErrors(&problem, &params, layout, 0.5, clusters, 1);
  CHECK(e.iid[0] > 0.0);
  CHECK(std::isfinite(e.robust[0]));
  CHECK(std::isnan(e.iid[1]));
  CHECK(std::isnan(e.robust[1]));
  CHECK(e.note.find("do not determine b") != std::string::npos);
}

// A curve y = a0 exp(a1 t) + b0 t^2 sampled at n points: n residuals over blocks a[2], b[1].
struct CurveResidual {
  static constexpr int kPoints = 40;
  explicit CurveResidual(double shift = 0.0) : shift(shift) {}
  template <typename T>
  bool operator()(const T* a, const T* b, T* r) const {
    using std::exp;
    for (int i = 0; i < kPoints; ++i) {
      const double t = 0.05 * i;
      const double y = 2.0 * std::exp(-0.7 * t) + 0.3 * t * t + (i % 3 - 1) * 0.05 + shift * t;
      r[i] = a[0] * exp(a[1] * T(t)) + b[0] * T(t * t) - T(y);
    }
    return true;
  }
  static ceres::CostFunction* Create(double shift = 0.0) {
    return new ceres::AutoDiffCostFunction<CurveResidual, kPoints, 2, 1>(
        new CurveResidual(shift));
  }
  double shift;  // a per-cluster tilt of the data
};

// Cost, gradient and Gauss-Newton matrix of a block: |r|^2, J^T r, J^T J over the blocks whose
// Jacobian is asked for (nullptr in `ask` = a constant block).
struct Normal {
  double cost;
  Eigen::MatrixXd jtj;
  Eigen::VectorXd jtr;
};
Normal NormalOf(const ceres::CostFunction& cost, const double* const* params,
                const std::vector<bool>& ask) {
  const int m = cost.num_residuals();
  const std::vector<int>& sizes = cost.parameter_block_sizes();
  std::vector<std::vector<double>> storage(sizes.size());
  std::vector<double*> jacobians(sizes.size(), nullptr);
  int q = 0;
  for (std::size_t b = 0; b < sizes.size(); ++b)
    if (ask[b]) {
      storage[b].resize(m * sizes[b]);
      jacobians[b] = storage[b].data();
      q += sizes[b];
    }
  Eigen::VectorXd r(m);
  REQUIRE(cost.Evaluate(params, r.data(), jacobians.data()));
  Eigen::MatrixXd j(m, q);
  for (std::size_t b = 0, col = 0; b < sizes.size(); ++b) {
    if (!ask[b]) continue;
    for (int i = 0; i < m; ++i)
      for (int k = 0; k < sizes[b]; ++k) j(i, col + k) = storage[b][i * sizes[b] + k];
    col += sizes[b];
  }
  return {r.squaredNorm(), j.transpose() * j, j.transpose() * r};
}

TEST_CASE("a reduced block has the cost, gradient and Gauss-Newton matrix of the full one") {
  std::unique_ptr<ceres::CostFunction> full(CurveResidual::Create());
  std::unique_ptr<ceres::CostFunction> reduced(Reduced(CurveResidual::Create()));
  REQUIRE(dynamic_cast<ReducedCost*>(reduced.get()) != nullptr);
  CHECK(reduced->num_residuals() == 4);  // 3 coefficients + 1
  const double a[2] = {1.7, -0.4}, b[1] = {0.1};
  const double* params[2] = {a, b};
  // Round-off of a 40 x 3 QR on values of order 1-100.
  constexpr double kTolerance = 1e-10;
  for (const std::vector<bool>& ask : {std::vector<bool>{true, true},
                                       std::vector<bool>{true, false},
                                       std::vector<bool>{false, true}}) {
    const Normal f = NormalOf(*full, params, ask), r = NormalOf(*reduced, params, ask);
    CHECK(r.cost == doctest::Approx(f.cost).epsilon(kTolerance));
    CHECK((r.jtj - f.jtj).cwiseAbs().maxCoeff() <= kTolerance * f.jtj.cwiseAbs().maxCoeff());
    CHECK((r.jtr - f.jtr).cwiseAbs().maxCoeff() <= kTolerance * f.jtr.cwiseAbs().maxCoeff());
  }
  // Cost only (a trial step): the same |r|^2.
  Eigen::VectorXd rf(full->num_residuals()), rr(reduced->num_residuals());
  REQUIRE(full->Evaluate(params, rf.data(), nullptr));
  REQUIRE(reduced->Evaluate(params, rr.data(), nullptr));
  CHECK(rr.squaredNorm() == doctest::Approx(rf.squaredNorm()).epsilon(kTolerance));
  // A block no larger than its coefficients + 1 is kept as it is.
  ceres::CostFunction* small =
      new ceres::AutoDiffCostFunction<MeanResidual, 1, 1>(new MeanResidual(1.0, 1.0));
  std::unique_ptr<ceres::CostFunction> kept(Reduced(small));
  CHECK(kept.get() == small);
}

// Counts the evaluations of a CurveResidual.
class CountingCurve : public ceres::CostFunction {
 public:
  explicit CountingCurve(int* calls) : inner_(CurveResidual::Create()), calls_(calls) {
    *mutable_parameter_block_sizes() = inner_->parameter_block_sizes();
    set_num_residuals(inner_->num_residuals());
  }
  bool Evaluate(double const* const* p, double* r, double** j) const override {
    ++*calls_;
    return inner_->Evaluate(p, r, j);
  }

 private:
  std::unique_ptr<ceres::CostFunction> inner_;
  int* calls_;
};

TEST_CASE("a reduced block answers a second Jacobian request at the same point from memory") {
  int calls = 0;
  std::unique_ptr<ceres::CostFunction> reduced(Reduced(new CountingCurve(&calls)));
  double a[2] = {1.7, -0.4}, b[1] = {0.1};
  const double* params[2] = {a, b};
  std::vector<double> r1(4), r2(4), ja1(8), jb1(4), ja2(8), jb2(4);
  double* j1[2] = {ja1.data(), jb1.data()};
  double* j2[2] = {ja2.data(), jb2.data()};
  REQUIRE(reduced->Evaluate(params, r1.data(), j1));
  REQUIRE(reduced->Evaluate(params, r2.data(), j2));
  CHECK(calls == 1);
  CHECK(r1 == r2);
  CHECK(ja1 == ja2);
  CHECK(jb1 == jb2);
  // Cost only, another block set, or other coefficients: evaluated again.
  REQUIRE(reduced->Evaluate(params, r2.data(), nullptr));
  CHECK(calls == 2);
  double* only_a[2] = {ja2.data(), nullptr};
  REQUIRE(reduced->Evaluate(params, r2.data(), only_a));
  CHECK(calls == 3);
  b[0] = 0.2;
  REQUIRE(reduced->Evaluate(params, r2.data(), j2));
  CHECK(calls == 4);
  CHECK(r2 != r1);
}

TEST_CASE("a fit through reduced blocks lands where the full one does, with the same errors") {
  const CoeffLayout layout{{"a0", "a1", "b0"}, {"1", "1", "1"}, {1.0, 0.0, 0.0},
                           {{"a", 0, 2}, {"b", 2, 1}}, {}};
  StandardErrors errors[2];
  std::vector<double> fitted[2];
  for (int reduce = 0; reduce < 2; ++reduce) {
    std::vector<double> params = {1.0, 0.0, 0.0};
    ceres::Problem problem;
    std::vector<int> clusters;
    for (int c = 0; c < 5; ++c) {
      ceres::CostFunction* cost = CurveResidual::Create(0.04 * (c - 2) * (c % 2 ? 1 : -0.5));
      problem.AddResidualBlock(reduce ? Reduced(cost) : cost, new ceres::CauchyLoss(0.5),
                               params.data(), params.data() + 2);
      clusters.push_back(c);
    }
    CHECK(FullResidualCount(problem) == 5 * CurveResidual::kPoints);
    ceres::Solver::Options options;
    options.linear_solver_type = ceres::DENSE_QR;
    options.function_tolerance = options.gradient_tolerance = options.parameter_tolerance = 1e-14;
    ceres::Solver::Summary summary;
    ceres::Solve(options, &problem, &summary);
    REQUIRE(summary.IsSolutionUsable());
    REQUIRE(summary.final_cost > 0.0);
    errors[reduce] =
        ComputeStandardErrors(&problem, &params, layout, summary.final_cost, clusters, 1);
    fitted[reduce] = params;
  }
  for (int i = 0; i < 3; ++i) {
    REQUIRE(errors[0].robust[i] > 0.0);
    CHECK(fitted[1][i] == doctest::Approx(fitted[0][i]).epsilon(1e-8));
    CHECK(errors[1].iid[i] == doctest::Approx(errors[0].iid[i]).epsilon(1e-6));
    CHECK(errors[1].robust[i] == doctest::Approx(errors[0].robust[i]).epsilon(1e-6));
  }
}

}  // namespace
}  // namespace rlfit
