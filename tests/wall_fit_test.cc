// Tests of the wall fit: a synthetic round trip on the floor-ramp-wall test arena (simulate
// with known surface coefficients, perturb, fit the same rollout residual, recover them).
#include "fit/wall_fit.h"

#include "tests/fit_test_util.h"
#include "tests/surface_test_util.h"

namespace rlfit {
namespace {

TEST_CASE("synthetic round trip: perturbed surface coefficients are recovered") {
  const Arena arena = testing::FloorRampWall();
  const std::vector<double> ground = GroundLayout().defaults;
  const GroundCoeffs<double> g = GroundCoeffs<double>::FromArray(ground.data());
  const double truth[4] = {0.93, 0.06, 18.0, 0.1};
  const SurfaceCoeffs<double> c = SurfaceCoeffs<double>::FromArray(truth);
  // Up the ramp onto the wall at an angle (gravity along and across the car), coast across
  // the wall (the coasting grip), throttle again, then steer (the turn with the surface).
  auto input = [](int k) {
    CarInputs u;
    u.throttle = k < 50 || k >= 90 ? 1.0 : 0.0;
    u.steer = k >= 110 ? 0.5 : 0.0;
    return u;
  };
  std::vector<Episode> episodes;
  episodes.push_back(testing::SurfaceEpisode(g, c, arena, testing::OnFloor(-500, 0, 0.5, 1500),
                                             160, input));
  episodes.push_back(testing::SurfaceEpisode(g, c, arena, testing::OnFloor(-400, 0, -0.3, 1300),
                                             160, input));
  REQUIRE(episodes[0].rows.back().x.z() > 400.0);  // it reached the wall

  double params[4] = {1.0, 0.1, 30.0, 0.0};  // the seed values
  ceres::Problem problem;
  for (const Episode& ep : episodes)
    for (int start = 0; start + 30 < ep.size(); start += 15)
      problem.AddResidualBlock(
          WallRolloutResidual::Create(&ep, start, 30, Integration{}, ground, &arena), nullptr,
          params);
  const CoeffLayout& layout = SurfaceLayout();
  for (int i = 0; i < 4; ++i) {
    problem.SetParameterLowerBound(params, i, layout.bounds[i].lower);
    problem.SetParameterUpperBound(params, i, layout.bounds[i].upper);
  }
  ceres::Solver::Options options;
  options.max_num_iterations = 100;
  options.function_tolerance = 1e-12;
  options.gradient_tolerance = 1e-12;
  options.parameter_tolerance = 1e-10;
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  // Noise-free data from the same step: the truth up to the solver's tolerance and the
  // mesh-normal jumps a changed coefficient can move by a tick (1e-3 relative).
  constexpr double kRecoveryRelative = 1e-3;
  for (int i = 0; i < 4; ++i) {
    INFO(layout.names[i] << " fitted " << params[i] << " truth " << truth[i]);
    CHECK(std::abs(params[i] - truth[i]) < kRecoveryRelative * truth[i]);
  }
  CHECK(summary.final_cost < 1e-6 * summary.initial_cost);
}

}  // namespace
}  // namespace rlfit
