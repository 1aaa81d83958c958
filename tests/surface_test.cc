// Tests of the surface model: on the flat floor it is the ground step; a car drives up a ramp
// onto a wall and back; gravity along a wall; coasting grip; leaving the ceiling.
#include "src/models/surface.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "tests/surface_test_util.h"

namespace rlfit {
namespace {

using testing::FloorCurveWall;
using testing::FloorRampWall;
using testing::FloorWall;
using testing::OnFloor;

constexpr double kDt = 1.0 / 120.0;

GroundCoeffs<double> Ground() {
  return GroundCoeffs<double>::FromArray(GroundLayout().defaults.data());
}
SurfaceCoeffs<double> Surface() {
  return SurfaceCoeffs<double>::FromArray(SurfaceLayout().defaults.data());
}
Controls Inputs(double throttle, double steer = 0.0) {
  Controls u;
  u.throttle = throttle;
  u.steer = steer;
  return u;
}

TEST_CASE("on the flat floor the surface step is the ground step") {
  const Arena arena = FloorWall();
  const GroundCoeffs<double> g = Ground();
  const SurfaceCoeffs<double> c = Surface();
  CarState<double> a = OnFloor(-2000.0, 100.0, 0.4, 900.0), b = a;
  a.omega.z() = b.omega.z() = 0.3;
  // The floor's normal from the mesh is +z up to the closest point's round-off (Ericson's
  // barycentric form): 1e-9 uu and uu/s after 2 s of driving on numbers up to ~2000.
  constexpr double kFloorRoundOff = 1e-9;
  for (int i = 0; i < 240; ++i) {
    const Controls u = Inputs(i < 120 ? 1.0 : 0.0, i < 60 ? 0.5 : -0.3);
    bool on = false;
    a = StepSurface(g, c, a, u, kDt, true, arena, &on);
    b = StepGround(g, b, u, kDt, true);
    REQUIRE(on);
  }
  CHECK((a.x - b.x).norm() < kFloorRoundOff);
  CHECK((a.v - b.v).norm() < kFloorRoundOff);
  CHECK((a.omega - b.omega).norm() < kFloorRoundOff);
  CHECK((a.theta - b.theta).norm() < kFloorRoundOff);
  // StepGround's plane_accel adds nothing when zero (bit for bit).
  const CarState<double> s = OnFloor(0.0, 0.0, 1.0, 1500.0);
  const CarState<double> p = StepGround(g, s, Inputs(1.0, 0.2), kDt, true);
  const CarState<double> q =
      StepGround(g, s, Inputs(1.0, 0.2), kDt, true, Eigen::Vector3d::Zero().eval());
  CHECK(p.x == q.x);
  CHECK(p.v == q.v);
  CHECK(p.theta == q.theta);
}

TEST_CASE("a car drives from the floor up a ramp onto a wall, and the wall's gravity slows it") {
  const Arena arena = FloorRampWall();
  CarState<double> s = OnFloor(-600.0, 0.0, 0.0, 1400.0);
  const GroundCoeffs<double> g = Ground();
  const SurfaceCoeffs<double> c = Surface();
  double top_z = 0.0;
  bool always_on = true;
  for (int i = 0; i < 96; ++i) {  // 0.8 s at full throttle
    bool on = false;
    s = StepSurface(g, c, s, Inputs(1.0), kDt, true, arena, &on);
    always_on = always_on && on;
    top_z = std::max(top_z, s.x.z());
  }
  CHECK(always_on);
  // On the wall: centre at rest height in front of it, up axis along the wall's normal -x,
  // nose up, velocity up the wall and gravity taking speed off (1400 uu/s at the start, the
  // drive adds at most ~160 uu/s^2 above 1400).
  CHECK(s.x.x() == doctest::Approx(testing::kRampTopUu - game::kCarRestHeight).epsilon(1e-6));
  CHECK(s.x.z() > 350.0);
  CHECK(s.theta.col(2).dot(Eigen::Vector3d(-1, 0, 0)) > 0.999);
  CHECK(s.theta.col(0).z() > 0.999);
  CHECK(s.v.z() > 500.0);
  CHECK(s.v.z() < 1400.0);
  // Coasting, it stops, slides down the wall (the coasting grip holds nothing) and comes back
  // down the ramp onto the floor.
  for (int i = 0; i < 1200; ++i) s = StepSurface(g, c, s, Inputs(0.0), kDt, true, arena);
  CHECK(s.x.z() == doctest::Approx(game::kCarRestHeight).epsilon(1e-6));
  CHECK(s.x.x() < 0.0);
}

TEST_CASE("crossing a curve costs speed with curve_friction, more on a tight one, only across") {
  const GroundCoeffs<double> g = Ground();
  SurfaceCoeffs<double> c = Surface();
  // Coasting at 1200 uu/s from the floor up a quarter circle onto the wall; the speed when the
  // car is 300 uu up the wall (gravity takes the same from both).
  auto speed_up_wall = [&](const Arena& arena, double friction) {
    c.curve_friction = friction;
    CarState<double> s = OnFloor(-200.0, 0.0, 0.0, 1200.0);
    for (int i = 0; i < 240 && s.x.z() < 300.0; ++i)
      s = StepSurface(g, c, s, Inputs(0.0), kDt, true, arena);
    REQUIRE(s.x.z() >= 300.0);
    REQUIRE(s.theta.col(2).dot(Eigen::Vector3d(-1, 0, 0)) > 0.99);  // on the wall
    return s.v.norm();
  };
  const Arena tight = FloorCurveWall(160.0f), wide = FloorCurveWall(256.0f);
  const double lost_tight = 1.0 - speed_up_wall(tight, 0.4) / speed_up_wall(tight, 0.0);
  const double lost_wide = 1.0 - speed_up_wall(wide, 0.4) / speed_up_wall(wide, 0.0);
  // At the reference radius (160) friction 0.4 per radian takes well over a third of the speed
  // across the quarter turn; at 256 uu the friction is (160 / 256)^2 of that. The old friction
  // per radian turned took the same from both.
  CHECK(lost_tight > 0.35);
  CHECK(lost_wide > 0.05);
  CHECK(lost_wide < 0.6 * lost_tight);
  // A car driving along the curve (across nothing) loses nothing to it.
  auto along = [&](double friction) {
    c.curve_friction = friction;
    // In the middle of the curve's third facet, heading along it (+y), throttle held.
    const double a = 2.5 * M_PI / 16.0;
    const Eigen::Vector3d n(-std::sin(a), 0.0, std::cos(a)), f(0.0, 1.0, 0.0);
    CarState<double> s;
    s.theta.col(0) = f;
    s.theta.col(1) = n.cross(f);
    s.theta.col(2) = n;
    s.x = Eigen::Vector3d(160.0 * std::sin(a), 0.0, 160.0 * (1.0 - std::cos(a))) +
          n * game::kCarRestHeight;
    s.v = f * 1200.0;
    s.omega.setZero();
    for (int i = 0; i < 24; ++i) s = StepSurface(g, c, s, Inputs(1.0), kDt, true, tight);
    return s.v.norm();
  };
  CHECK(along(0.4) == doctest::Approx(along(0.0)));
}

TEST_CASE("crossing a tight curve fast, the angular speed stays at the game's cap") {
  const GroundCoeffs<double> g = Ground();
  const SurfaceCoeffs<double> c = Surface();
  const Arena tight = FloorCurveWall(160.0f);
  // 1400 uu/s up the 160 uu curve, throttle held, steering: the surface turns at ~10 rad/s
  // under the car (the recordings' back walls). Each tick ends at |omega| <= 5.5; where the
  // cap bites the yaw about the normal is cut too, so it falls below its floor value.
  CarState<double> s = OnFloor(-100.0, 0.0, 0.0, 1400.0);
  double largest = 0.0, smallest_yaw = 1e9, floor_yaw = 0.0;
  for (int i = 0; i < 60 && s.x.z() < 300.0; ++i) {
    s = StepSurface(g, c, s, Inputs(1.0, 0.5), kDt, true, tight);
    largest = std::max(largest, s.omega.norm());
    const double yaw = s.omega.dot(s.theta.col(2));
    if (s.x.z() < game::kCarRestHeight + 0.5) floor_yaw = yaw;
    else if (s.x.z() < 150.0) smallest_yaw = std::min(smallest_yaw, yaw);
  }
  REQUIRE(s.x.z() >= 150.0);
  CHECK(largest <= game::kCarMaxOmega + 1e-12);
  CHECK(largest > game::kCarMaxOmega - 1e-6);  // the cap was reached
  REQUIRE(floor_yaw > 0.5);
  CHECK(smallest_yaw < 0.8 * floor_yaw);
}

TEST_CASE("CurveCurvature reads the facets' radius") {
  const Arena tight = FloorCurveWall(160.0f);
  // Between the 4th and 5th facets (45 degrees up), 17 uu inside the curve.
  const double a = M_PI / 4.0;
  const Eigen::Vector3d x(160.0 * std::sin(a) - 17.0 * std::sin(a), 0.0,
                          160.0 * (1.0 - std::cos(a)) + 17.0 * std::cos(a));
  const Eigen::Vector3d n1(-std::sin(a + M_PI / 32), 0.0, std::cos(a + M_PI / 32));
  const Eigen::Vector3d phi(0.0, -M_PI / 16, 0.0);
  // The closest triangle may be the facet before the edge, whose width across this turn is
  // cos(11.25 degrees) = 0.98 of its own.
  CHECK(1.0 / CurveCurvature(tight, x, 40.0, n1, phi) == doctest::Approx(160.0).epsilon(0.025));
  CHECK(CurveCurvature(tight, x, 40.0, n1, Eigen::Vector3d::Zero()) == 0.0);
}

TEST_CASE("on a wall, coasting lets gravity slide the car sideways; throttle grips") {
  const Arena arena = FloorWall();
  // On the wall x = 300 facing -x, heading along +y (horizontal), at z = 1000.
  CarState<double> s;
  const Eigen::Vector3d n(-1, 0, 0), f(0, 1, 0);
  s.theta.col(0) = f;
  s.theta.col(1) = n.cross(f);
  s.theta.col(2) = n;
  s.x = Eigen::Vector3d(testing::kRampTopUu - game::kCarRestHeight, 0, 1000);
  s.v = f * 1000.0 + n * game::kCarRestReportedVz;
  s.omega.setZero();
  const GroundCoeffs<double> g = Ground();
  const SurfaceCoeffs<double> c = Surface();
  CarState<double> coast = s, drive = s;
  for (int i = 0; i < 60; ++i) {
    coast = StepSurface(g, c, coast, Inputs(0.0), kDt, true, arena);
    drive = StepSurface(g, c, drive, Inputs(1.0), kDt, true, arena);
  }
  // Gravity along the wall: down the left axis; the sideways friction rate (20 1/s on the
  // floor) holds a gripping car at about g / rate = 40 uu/s down, a coasting one (0.1 x)
  // slides at hundreds.
  CHECK(drive.v.z() < 0.0);
  CHECK(drive.v.z() > -60.0);
  CHECK(coast.v.z() < -200.0);
  // Along the nose the coasting deceleration is scaled by the same grip (RocketSim's
  // longitudinal friction; wall_driving episode 32 slows by 54 uu/s^2 beyond gravity, 0.1 of
  // the floor's): in 0.5 s the car keeps more than 1000 - 0.5 x 0.5 coast_accel of its
  // horizontal speed, where the floor's coasting would leave 1000 - 0.5 coast_accel.
  CHECK(coast.v.y() > 1000.0 - 0.25 * g.coast_accel);
}

TEST_CASE("leaving a surface: the ceiling does not hold a car, a wall does") {
  const SurfaceCoeffs<double> c = Surface();
  const Eigen::Vector3d ceiling(0, 0, -1), wall(1, 0, 0), floor(0, 0, 1);
  CHECK_FALSE(StaysOnSurface(c, ceiling, 1.0, 1000.0));  // 650 away vs 0.5 x 650 held
  CHECK(StaysOnSurface(c, wall, 0.0, 0.0));
  CHECK(StaysOnSurface(c, floor, 0.0, 0.0));
  // Over a surface that falls away: on the floor, throttle held, gravity's 650 and the sticky
  // 0.5 x 650 hold the car with 975 uu/s^2; leaving at v, it lifts v^2 / 1950 uu, at most 10.
  CHECK(HoldsOverCrest(c, floor, 1.0, 1000.0, 139.0));
  CHECK_FALSE(HoldsOverCrest(c, floor, 1.0, 1000.0, 140.0));
  CHECK_FALSE(HoldsOverCrest(c, ceiling, 1.0, 1000.0, 0.0));
  CHECK(StickyAccel(c, wall, 1.0, 0.0) == doctest::Approx(1.5 * 650.0));
  CHECK(StickyAccel(c, wall, 0.0, 10.0) == doctest::Approx(0.5 * 650.0));
  // No surface within reach: not on a surface, state unchanged.
  const Arena arena = FloorWall();
  CarState<double> s = OnFloor(-1000.0, 0.0, 0.0, 500.0);
  s.x.z() = 500.0;
  bool on = true;
  const CarState<double> t =
      StepSurface(Ground(), c, s, Inputs(1.0), kDt, true, arena, &on);
  CHECK_FALSE(on);
  CHECK(t.x == s.x);
  // On the floor on its wheels: on a surface; on its roof at the same place: not.
  const CarState<double> wheels = OnFloor(-1000.0, 0.0, 0.0, 0.0);
  CHECK(IsOnSurface(c, arena, wheels.x, wheels.theta.col(2)));
  CHECK_FALSE(IsOnSurface(c, arena, wheels.x, Eigen::Vector3d(-wheels.theta.col(2))));
  CHECK_FALSE(IsOnSurface(c, arena, Eigen::Vector3d(-1000.0, 0.0, 60.0), Eigen::Vector3d::UnitZ()));
  // On the wall facing it: on a surface.
  CHECK(IsOnSurface(c, arena, Eigen::Vector3d(testing::kRampTopUu - 17.01, 0.0, 1000.0),
                    Eigen::Vector3d(-1, 0, 0)));
}

}  // namespace
}  // namespace rlfit
