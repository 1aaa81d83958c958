// Tests of the surface model: on the flat floor it is the ground step; a car drives up a ramp
// onto a wall and back; gravity along a wall; coasting grip; leaving the ceiling.
#include "src/models/surface.h"

#include <doctest/doctest.h>

#include <cmath>

#include "tests/surface_test_util.h"

namespace rlfit {
namespace {

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

TEST_CASE("crossing the ramp's creases costs speed with curve_friction, only across them") {
  const Arena arena = FloorRampWall();
  const GroundCoeffs<double> g = Ground();
  SurfaceCoeffs<double> c = Surface();
  auto run = [&](double friction, double yaw) {
    c.curve_friction = friction;
    CarState<double> s = OnFloor(-300.0, 0.0, yaw, 1200.0);
    for (int i = 0; i < 48; ++i) s = StepSurface(g, c, s, Inputs(0.0), kDt, true, arena);
    return s;
  };
  // Coasting across the floor-ramp crease (45 degrees): friction 0.5 takes about
  // 1 - exp(-0.5 pi / 4) = 32% of the speed across it, and nothing from a car driving along it.
  const CarState<double> free = run(0.0, 0.0), rough = run(0.5, 0.0);
  REQUIRE(free.x.z() > 100.0);  // both are on the ramp
  REQUIRE(rough.x.z() > 50.0);
  CHECK(rough.v.norm() < 0.8 * free.v.norm());
  CHECK(run(0.5, M_PI / 2).v.norm() == doctest::Approx(run(0.0, M_PI / 2).v.norm()));
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
