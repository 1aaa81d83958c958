// Tests of the ground model: hand-computed single steps (throttle, brake, coast, boost), the
// curvature curve at and between knots, the yaw-rate response, the rest pose, and the
// synthetic ground episodes that replay with near-zero error.
#include "src/models/ground.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "src/replay/episode_steps.h"
#include "src/replay/replay.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

// Round-off of a few double operations on numbers up to a few thousand.
constexpr double kTight = 1e-9;
// One physics tick, s.
constexpr double kDt = 1.0 / 120.0;

GroundCoeffs<double> Seed() {
  return GroundCoeffs<double>::FromArray(GroundLayout().defaults.data());
}

// A car on the ground at the rest height heading along +x with forward speed v_f (uu/s).
CarState<double> Driving(double v_f, double yaw_rate = 0.0) {
  CarState<double> s;
  s.x = Eigen::Vector3d(100.0, -200.0, game::kCarRestHeight);
  s.v = Eigen::Vector3d(v_f, 0.0, game::kCarRestReportedVz);
  s.omega = Eigen::Vector3d(0.0, 0.0, yaw_rate);
  s.theta.setIdentity();
  return s;
}

Controls Throttle(double throttle, double steer = 0.0, double boost = 0.0) {
  Controls u;
  u.throttle = throttle;
  u.steer = steer;
  u.boost = boost;
  return u;
}

TEST_CASE("layout: names, units, defaults and blocks agree with the coefficient indices") {
  const CoeffLayout& layout = GroundLayout();
  REQUIRE(layout.size() == GroundCoeffs<double>::kSize);
  CHECK(layout.units.size() == layout.names.size());
  CHECK(layout.defaults.size() == layout.names.size());
  int covered = 0;
  for (const ParamBlock& b : layout.blocks) {
    CHECK(b.offset == covered);  // blocks partition the vector in order
    covered += b.size;
  }
  CHECK(covered == layout.size());
  CHECK(layout.names[GroundCoeffs<double>::kKappa0] == "kappa_0");
  CHECK(layout.names[GroundCoeffs<double>::kYawRateResponse] == "yaw_rate_response");
  CHECK(layout.names[GroundCoeffs<double>::kTurnDragArmBackward] == "turn_drag_arm_backward");
  // FromArray reads every index where the layout says.
  std::vector<double> flat(layout.size());
  for (int i = 0; i < layout.size(); ++i) flat[i] = i + 1.0;
  const auto c = GroundCoeffs<double>::FromArray(flat.data());
  CHECK(c.throttle_accel == 1.0);
  CHECK(c.kappa[5] == GroundCoeffs<double>::kKappa0 + 6.0);
  CHECK(c.turn_drag_arm_backward == layout.size());
}

TEST_CASE("drive curve: 1600 at rest, 160 at 1400, 0 from 1410 uu/s") {
  const auto c = Seed();
  CHECK(GroundDriveAccel(c, 0.0) == doctest::Approx(1600.0));
  CHECK(GroundDriveAccel(c, 700.0) == doctest::Approx(1600.0 * (1.0 - 0.9 * 0.5)));
  CHECK(GroundDriveAccel(c, 1400.0) == doctest::Approx(160.0));
  CHECK(GroundDriveAccel(c, 1405.0) == doctest::Approx(80.0));
  CHECK(GroundDriveAccel(c, 1410.0) == 0.0);
  CHECK(GroundDriveAccel(c, 2000.0) == 0.0);
}

TEST_CASE("curvature: knot values at the knots, linear in between, constant past 2300") {
  const auto c = Seed();
  for (int i = 0; i < kCurvatureKnots; ++i)
    CHECK(GroundCurvature(c, kCurvatureKnotSpeeds[i]) == doctest::Approx(c.kappa[i]));
  CHECK(GroundCurvature(c, 250.0) == doctest::Approx((0.0069 + 0.00398) / 2));
  CHECK(GroundCurvature(c, 1625.0) == doctest::Approx((0.001375 + 0.0011) / 2));
  CHECK(GroundCurvature(c, 1100.0) == doctest::Approx(0.00235 + 0.2 * (0.001375 - 0.00235)));
  CHECK(GroundCurvature(c, 3000.0) == doctest::Approx(0.00088));
}

TEST_CASE("throttle from rest: v = 1600 dt, position moves with the old velocity") {
  const auto c = Seed();
  const CarState<double> s0 = Driving(0.0);
  const CarState<double> s1 = StepGround(c, s0, Throttle(1.0), kDt, true);
  CHECK(s1.v.x() == doctest::Approx(1600.0 * kDt));
  CHECK(std::abs(s1.v.y()) < kTight);
  CHECK(std::abs(s1.x.x() - s0.x.x()) < kTight);  // old velocity was 0
  const CarState<double> s2 = StepGround(c, s1, Throttle(1.0), kDt, true);
  const double v1 = 1600.0 * kDt;
  CHECK(s2.v.x() == doctest::Approx(v1 + GroundDriveAccel(c, v1) * kDt));
  CHECK(s2.x.x() == doctest::Approx(s0.x.x() + v1 * kDt));
  // Half throttle gives half the acceleration; backward throttle is scaled.
  CHECK(StepGround(c, s0, Throttle(0.5), kDt, true).v.x() == doctest::Approx(800.0 * kDt));
  auto back = c;
  back.backward_throttle_scale = 1.25;
  CHECK(StepGround(back, s0, Throttle(-1.0), kDt, true).v.x() ==
        doctest::Approx(-1.25 * 1600.0 * kDt));
}

TEST_CASE("braking, coasting and the stop threshold") {
  const auto c = Seed();
  // Throttle against the motion brakes at 3500 uu/s^2, whatever its size.
  CHECK(StepGround(c, Driving(1000.0), Throttle(-1.0), kDt, true).v.x() ==
        doctest::Approx(1000.0 - 3500.0 * kDt));
  CHECK(StepGround(c, Driving(1000.0), Throttle(-0.1), kDt, true).v.x() ==
        doctest::Approx(1000.0 - 3500.0 * kDt));
  CHECK(StepGround(c, Driving(-800.0), Throttle(1.0), kDt, true).v.x() ==
        doctest::Approx(-800.0 + 3500.0 * kDt));
  // Released throttle coasts at 525 uu/s^2.
  CHECK(StepGround(c, Driving(1000.0), Throttle(0.0), kDt, true).v.x() ==
        doctest::Approx(1000.0 - 525.0 * kDt));
  CHECK(StepGround(c, Driving(-1000.0), Throttle(0.0), kDt, true).v.x() ==
        doctest::Approx(-1000.0 + 525.0 * kDt));
  // Braking and coasting stop the car; they never reverse it.
  CHECK(StepGround(c, Driving(20.0), Throttle(0.0), kDt, true).v.x() == 0.0);
  CHECK(StepGround(c, Driving(28.0), Throttle(-1.0), kDt, true).v.x() == 0.0);  // 3500 dt = 29.2
  // Below the stop threshold, throttle against the motion drives instead of braking.
  CHECK(StepGround(c, Driving(10.0), Throttle(-1.0), kDt, true).v.x() ==
        doctest::Approx(10.0 - GroundDriveAccel(c, 10.0) * kDt));
}

TEST_CASE("boost: throttle 1 plus the slow boost below the cut-off, the fast one above") {
  auto c = Seed();
  c.boost_accel_slow = 900.0;
  c.boost_accel_fast = 1000.0;
  CHECK(StepGround(c, Driving(500.0), Throttle(0.0, 0.0, 1.0), kDt, true).v.x() ==
        doctest::Approx(500.0 + (GroundDriveAccel(c, 500.0) + 900.0) * kDt));
  CHECK(StepGround(c, Driving(2000.0), Throttle(0.0, 0.0, 1.0), kDt, true).v.x() ==
        doctest::Approx(2000.0 + 1000.0 * kDt));
  // Boost while rolling backward: full brake plus boost, both forward.
  CHECK(StepGround(c, Driving(-500.0), Throttle(0.0, 0.0, 1.0), kDt, true).v.x() ==
        doctest::Approx(-500.0 + (3500.0 + 900.0) * kDt));
  // Boost held for half the step: the average of the two updates.
  const double coast = 2000.0 - 525.0 * kDt, boost = 2000.0 + 1000.0 * kDt;
  CHECK(StepGround(c, Driving(2000.0), Throttle(0.0, 0.0, 0.5), kDt, true).v.x() ==
        doctest::Approx(0.5 * (coast + boost)));
  // The speed cap.
  CHECK(StepGround(c, Driving(2299.0), Throttle(0.0, 0.0, 1.0), kDt, true).v.head<2>().norm() ==
        doctest::Approx(game::kCarMaxSpeed));
}

TEST_CASE("yaw rate: first-order step toward steer * kappa * v_f, then converges") {
  auto c = Seed();
  const double v = 1000.0;
  const double target = 0.5 * GroundCurvature(c, v) * v;
  const CarState<double> s1 = StepGround(c, Driving(v, 0.2), Throttle(0.0, 0.5), kDt, true);
  CHECK(s1.omega.z() ==
        doctest::Approx(0.2 + (target - 0.2) * (1.0 - std::exp(-c.yaw_rate_response * kDt))));
  CHECK(s1.omega.x() == 0.0);
  CHECK(s1.omega.y() == 0.0);
  // The heading turned by the new yaw rate (semi-implicit) or the average (note 000).
  CHECK(std::atan2(s1.theta(1, 0), s1.theta(0, 0)) == doctest::Approx(s1.omega.z() * kDt));
  const CarState<double> a1 = StepGround(c, Driving(v, 0.2), Throttle(0.0, 0.5), kDt, false);
  CHECK(std::atan2(a1.theta(1, 0), a1.theta(0, 0)) ==
        doctest::Approx(0.5 * (0.2 + a1.omega.z()) * kDt));
  // Backward: the target flips with v_f and is scaled.
  c.backward_curvature_scale = 0.8;
  const CarState<double> b1 = StepGround(c, Driving(-v, 0.0), Throttle(0.0, 0.5), kDt, true);
  CHECK(b1.omega.z() ==
        doctest::Approx(-0.8 * target * (1.0 - std::exp(-c.yaw_rate_response * kDt))));

  // Held full steer with no forward forces and no side slip: after 2 s (32 time constants)
  // the yaw rate equals the target at the current forward speed.
  c = Seed();
  c.coast_accel = 0.0;
  c.turn_drag_arm = 0.0;
  c.lateral_lever_arm = 0.0;
  c.lateral_friction_rate = 1e3;
  CarState<double> s = Driving(v);
  for (int i = 0; i < 240; ++i) s = StepGround(c, s, Throttle(0.0, 1.0), kDt, true);
  const Eigen::Vector3d f(s.theta(0, 0), s.theta(1, 0), 0.0);
  const double v_f = s.v.dot(f.normalized());
  // The speed still bleeds off by cos(w dt) per tick (the velocity is re-aimed, not rotated),
  // about 23 uu/s^2, so the target falls by ~0.05 rad/s^2 and a first-order response trails
  // it by slope / rate ~ 0.004 rad/s. A wrong target (10% off: 0.24 rad/s) fails.
  constexpr double kYawLagRadS = 0.01;
  CHECK(std::abs(s.omega.z() - GroundCurvature(c, v_f) * v_f) < kYawLagRadS);
  CHECK(v_f < 0.99 * v);  // the bleed-off the tolerance accounts for did happen
}

TEST_CASE("lateral: sideways velocity relaxes toward lever_arm * w_z; turn drag") {
  const auto c = Seed();
  CarState<double> s = Driving(0.0);
  s.v.y() = 100.0;  // sliding sideways (left), not turning, not steering
  const CarState<double> s1 = StepGround(c, s, Throttle(0.0), kDt, true);
  CHECK(s1.v.y() == doctest::Approx(100.0 * std::exp(-c.lateral_friction_rate * kDt)));
  // Turning car at steady yaw rate w: the turn drag slows it by arm * w^2 along its nose.
  auto d = c;
  d.lateral_friction_rate = 0.0;
  d.lateral_lever_arm = 0.0;
  d.coast_accel = 0.0;
  const double v = 1000.0, w = GroundCurvature(d, v) * v;
  const CarState<double> t1 = StepGround(d, Driving(v, w), Throttle(0.0, 1.0), kDt, true);
  const Eigen::Vector3d f(t1.theta(0, 0), t1.theta(1, 0), 0.0);
  // In the new heading the old velocity projects to v cos(w dt); then the drag acts.
  CHECK(t1.v.dot(f) == doctest::Approx(v * std::cos(w * kDt) - d.turn_drag_arm * w * w * kDt));
}

TEST_CASE("the car stays on the plane in its rest pose") {
  const auto c = Seed();
  CarState<double> s = Driving(500.0);
  s.x.z() = 16.66;  // settling after a spawn (episode_00 row 0)
  s.v.z() = 13.86;
  s.omega = Eigen::Vector3d(0.01, -0.02, 0.3);
  s.theta =
      EulerToMatrix(-104 * game::kRadiansPerUnrealUnit, 0.5, -8 * game::kRadiansPerUnrealUnit);
  const CarState<double> s1 = StepGround(c, s, Throttle(1.0, 0.3), kDt, true);
  CHECK(s1.x.z() == game::kCarRestHeight);
  CHECK(s1.v.z() == game::kCarRestReportedVz);
  CHECK(s1.omega.x() == 0.0);
  CHECK(s1.omega.y() == 0.0);
  // Only the yaw changed: theta1 = Rz(w dt) theta0.
  const Eigen::Matrix3d expected =
      ExpSo3<double>(Eigen::Vector3d(0, 0, s1.omega.z() * kDt)) * s.theta;
  CHECK((s1.theta - expected).norm() < kTight);
}

TEST_CASE("synthetic ground episodes replay with near-zero error") {
  // datasets/synthetic/ground: generated by `rlsim synth ground` with the seed coefficients
  // from recorded episodes' timing, inputs and first state (datasets/synthetic/ground/README.md).
  ReplayOptions options;
  options.model = "ground";
  options.coeffs_path = "seed";  // the synthetic episodes were generated with these
  options.quiet = true;
  options.paths = {testing::RepoDatasets() + "/synthetic/ground"};
  std::ostringstream out;
  const ReplayReport report = RunReplay(options, out);
  REQUIRE(report.episodes.size() >= 1);
  // Written with 10 significant digits and integer Euler angles (1 unit = 0.0055 deg).
  constexpr double kSyntheticDxUu = 0.01;
  constexpr double kSyntheticAngleDeg = 0.02;
  const auto& q = Quantities(true);
  for (std::size_t h = 0; h < report.horizon_labels.size(); ++h) {
    CHECK(report.OpenLoop(q[0], h).max < kSyntheticDxUu);
    CHECK(report.OpenLoop(q[3], h).max < kSyntheticAngleDeg);
  }
  // The same episodes replayed with other coefficients do not match: the test can fail.
  auto coeffs = DefaultCoeffs("ground", GroundLayout());
  coeffs.values[GroundCoeffs<double>::kKappa0 + 2] *= 1.1;
  const auto episodes = LoadEpisodesFor(FindModel("ground"), options.paths, "");
  const ReplayReport off = ReplayEpisodes(episodes, *FindModel("ground").make_predictor(coeffs, ""),
                                          FindModel("ground"), options);
  CHECK(off.OpenLoop(q[0], report.horizon_labels.size() - 1).max > 1.0);
}

TEST_CASE("precomputed step inputs (RowStepControls): the same rollout, bit for bit") {
  // A synthetic episode (the inputs switch between rows, so steps see blended inputs) rolled
  // out with the inputs computed per step (ControlsOver) and read from the table.
  const auto episodes = LoadEpisodesFor(FindModel("ground"),
                                        {testing::RepoDatasets() + "/synthetic/ground"}, "");
  REQUIRE(!episodes.empty());
  const Episode& ep = episodes.front();
  REQUIRE(ep.size() > 40);
  const GroundCoeffs<double> c = Seed();
  for (const Integration& integ : {Integration{}, [] {
         Integration i;
         i.tick_aligned_inputs = false;
         i.tick_rate_hz = 240.0;
         return i;
       }()}) {
    const RowStepControls table(ep, integ, 5, ep.size() - 1);
    CHECK(table.first_row() == 5);
    CHECK(table.last_row() == ep.size() - 1);
    CarState<double> a = FromSample<CarState<double>>(ep.rows[5]), b = a;
    for (int k = 5; k < ep.size() - 1; ++k) {
      const double h = ep.step_dt_s[k] / table.count(k);
      REQUIRE(table.count(k) == SubstepsForRow(ep.step_dt_s[k], integ.tick_rate_hz));
      for (int i = 0; i < table.count(k); ++i) {
        const double t0 = ep.rows[k].t_s + i * h;  // as ForEachRowTick forms it
        const Controls u = ControlsOver(ep, t0, t0 + h, integ);
        CHECK(std::memcmp(&u, table.begin(k) + i, sizeof(Controls)) == 0);
      }
      a = AdvanceGroundRow(c, a, ep, k, integ);
      b = AdvanceGroundRow(c, b, ep, k, integ, table);
      REQUIRE(std::memcmp(a.x.data(), b.x.data(), sizeof(double) * 3) == 0);
      REQUIRE(std::memcmp(a.v.data(), b.v.data(), sizeof(double) * 3) == 0);
      REQUIRE(std::memcmp(a.omega.data(), b.omega.data(), sizeof(double) * 3) == 0);
      REQUIRE(std::memcmp(a.theta.data(), b.theta.data(), sizeof(double) * 9) == 0);
    }
    CHECK(a.x != FromSample<CarState<double>>(ep.rows[5]).x);  // it moved
  }
}

}  // namespace
}  // namespace rlfit
