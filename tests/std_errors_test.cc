// Tests of the fit's standard errors against closed forms: the mean of clustered samples.
#include <cmath>
#include <numeric>

#include "fit/fit.h"
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

}  // namespace
}  // namespace rlfit
