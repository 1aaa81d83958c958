// Tests of the car model across regimes: landing on a floor and driving on, driving off a ledge
// of a hand-made arena and flying, the switch's determinism, and the on_ground agreement and
// row labels of a hand-made episode.
#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Geometry>
#include <doctest/doctest.h>

#include "src/models/car.h"
#include "src/replay/episode_steps.h"
#include "src/replay/regime.h"
#include "tests/surface_test_util.h"

namespace rlfit {
namespace {

constexpr double kTickS = 1.0 / 120.0;    // one physics tick, s

// Two triangles covering [x0, x1] x [-y, y] at height z.
void AddRectangle(double x0, double x1, double y, double z, std::vector<Triangle>* t) {
  Triangle a, b;
  const float fx0 = static_cast<float>(x0), fx1 = static_cast<float>(x1);
  const float fy = static_cast<float>(y), fz = static_cast<float>(z);
  a.p[0] = {fx0, -fy, fz};
  a.p[1] = {fx1, -fy, fz};
  a.p[2] = {fx1, fy, fz};
  b.p[0] = {fx0, -fy, fz};
  b.p[1] = {fx1, fy, fz};
  b.p[2] = {fx0, fy, fz};
  t->push_back(a);
  t->push_back(b);
}

// The floor z = 0, far beyond any test position.
Arena Floor() {
  std::vector<Triangle> t;
  AddRectangle(-1.0e5, 1.0e5, 1.0e5, 0.0, &t);
  return Arena(t);
}

// A floor that ends at x = 0 (a ledge: nothing beyond it).
Arena Ledge() {
  std::vector<Triangle> t;
  AddRectangle(-5000.0, 0.0, 5000.0, 0.0, &t);
  return Arena(t);
}

CarCoeffs<double> Defaults() { return CarCoeffs<double>::FromArray(CarLayout().defaults.data()); }

CarModelState<double> Car(const Eigen::Vector3d& x, const Eigen::Vector3d& v,
                          const Eigen::Matrix3d& theta = Eigen::Matrix3d::Identity()) {
  CarModelState<double> s;
  s.body.x = x;
  s.body.v = v;
  s.body.omega.setZero();
  s.body.theta = theta;
  return s;
}

TEST_CASE("the car's layout: aerial, ground, surface, the jump's own, then the vehicle") {
  const CoeffLayout& car = CarLayout();
  const int jump_own = JumpLayout().size() - AerialLayout().size();
  REQUIRE(car.size() == AerialLayout().size() + GroundLayout().size() + SurfaceLayout().size() +
                            jump_own + VehicleLayout().size());
  CHECK(car.size() == CarCoeffs<double>::kSize);
  CHECK(car.names[0] == "aerial." + AerialLayout().names[0]);
  CHECK(car.names[CarCoeffs<double>::kGroundOffset] == "ground." + GroundLayout().names[0]);
  CHECK(car.names[CarCoeffs<double>::kWallOffset] == "wall." + SurfaceLayout().names[0]);
  CHECK(car.names[CarCoeffs<double>::kJumpOffset] == "jump.jump_impulse");
  const int slide_blocks = static_cast<int>(VehicleLayout().blocks.size());
  CHECK(car.blocks.size() == AerialLayout().blocks.size() + GroundLayout().blocks.size() +
                                 SurfaceLayout().blocks.size() + 3 + slide_blocks);
  CHECK(car.blocks[car.blocks.size() - 4 - slide_blocks].name == "wall.surface");
  CHECK(car.blocks[car.blocks.size() - 3 - slide_blocks].name == "jump.jump");
  CHECK(car.blocks[car.blocks.size() - 3 - slide_blocks].offset == CarCoeffs<double>::kJumpOffset);
  CHECK(car.blocks[car.blocks.size() - 1 - slide_blocks].name == "jump.dodge");
  CHECK(car.blocks[car.blocks.size() - slide_blocks].name == "vehicle.drive");
  CHECK(car.blocks[car.blocks.size() - slide_blocks].offset == CarCoeffs<double>::kVehicleOffset);
  CHECK(car.names[CarCoeffs<double>::kVehicleOffset] == "vehicle.throttle_accel");
  // The surface set defaults to the wall model's fit (results/wall/coeffs.json), the jump
  // block to the jump model's (results/jump/coeffs.json), double jump and dodge to the game's.
  CHECK(car.defaults[CarCoeffs<double>::kWallOffset] == doctest::Approx(1.0347).epsilon(1e-4));
  CHECK(car.defaults[CarCoeffs<double>::kJumpOffset] == doctest::Approx(294.31).epsilon(1e-4));
  CHECK(car.blocks.back().offset + car.blocks.back().size == car.size());
  const CarCoeffs<double> c = Defaults();
  CHECK(c.air.torque(0) == AerialLayout().defaults[0]);
  CHECK(c.ground.throttle_accel == GroundLayout().defaults[0]);
  // The jump step runs on the car's own aerial set.
  CHECK(c.jump.air.torque(0) == c.air.torque(0));
  CHECK(c.jump.air.boost_accel == c.air.boost_accel);
  CHECK(c.jump.jump_impulse == car.defaults[CarCoeffs<double>::kJumpOffset]);
  CHECK(c.jump.double_jump_impulse == doctest::Approx(game::kJumpImpulse));
  CHECK(c.jump.dodge_z_damping == doctest::Approx(game::kDodgeZDamping));
  // The vehicle set defaults to the vehicle model's fit (results/vehicle/coeffs.json).
  CHECK(c.vehicle.throttle_accel == car.defaults[CarCoeffs<double>::kVehicleOffset]);
  CHECK(c.vehicle.yaw_gyration_sq == doctest::Approx(1984.48).epsilon(1e-4));
}

TEST_CASE("a car falling onto the floor lands, settles upright and drives on") {
  const Arena floor = Floor();
  const CarCoeffs<double> c = Defaults();
  // Tilted 8 degrees about the forward axis, falling at 400 uu/s while rolling forward.
  const Eigen::Matrix3d tilt =
      Eigen::AngleAxisd(8.0 * M_PI / 180.0, Eigen::Vector3d::UnitX()).toRotationMatrix();
  CarModelState<double> s = Car({0.0, 0.0, 120.0}, {300.0, 0.0, -400.0}, tilt);
  Controls u;
  u.throttle = 1.0;
  int landed_at = -1;
  for (int i = 0; i < 120 && landed_at < 0; ++i) {
    s = StepCar(c, floor, s, u, kTickS, true);
    CHECK(s.regime != CarRegime::kUnknown);
    if (s.regime == CarRegime::kSurface) landed_at = i;
  }
  REQUIRE(landed_at > 0);  // it was in the air first
  // Centre 120 uu up, falling from 400 uu/s: the wheel point (17.01 cos 8 = 16.84 below) meets
  // the 10 uu contact band when 120 - 400 t - 325 t^2 = 26.84, t = 0.200 s: tick 24 (0-based 23).
  CHECK(landed_at >= 22);
  CHECK(landed_at <= 25);
  CHECK(s.body.x.z() == game::kCarRestHeight);
  CHECK(s.body.theta(2, 2) == doctest::Approx(1.0).epsilon(1e-12));  // aligned with the floor
  const double speed_at_landing = s.body.v.x();
  for (int i = 0; i < 60; ++i) {
    s = StepCar(c, floor, s, u, kTickS, true);
    REQUIRE(s.regime == CarRegime::kSurface);
  }
  CHECK(s.regime_ticks == 61);
  // Half a second of full throttle from 320 uu/s: the drive curve gives 1270-1090 uu/s^2
  // between 320 and 600 uu/s, ~1000 on average up to 820: ~500 uu/s gained.
  CHECK(s.body.v.x() > speed_at_landing + 400.0);
  CHECK(s.body.x.z() == game::kCarRestHeight);
}

TEST_CASE("boost drains at the game's rate, thrusts only while left, never below 0") {
  const Arena floor = Floor();
  const CarCoeffs<double> c = Defaults();
  // In the air, nose along +x, well above the floor for 4 s of fall and thrust.
  CarModelState<double> s = Car({0.0, 0.0, 1.0e4}, {0.0, 0.0, 0.0});
  s.boost = 10.0;
  Controls u;
  u.boost = 1.0;
  // 10 boost at 100/3 per second: 0.3 s, 36 ticks. Each tick of boost held removes
  // kBoostUsedPerSecond / 120 (within rounding of the sum).
  const double per_tick = game::kBoostUsedPerSecond * kTickS;
  int thrust_ticks = 0;
  for (int i = 0; i < 60; ++i) {
    const CarModelState<double> before = s;
    s = StepCar(c, floor, s, u, kTickS, true);
    CHECK(s.boost >= 0.0);
    CHECK(s.boost <= before.boost);
    const double ax = (s.body.v.x() - before.body.v.x()) / kTickS;
    if (before.boost > 0.0) {
      ++thrust_ticks;
      CHECK(s.boost == doctest::Approx(std::max(0.0, before.boost - per_tick)).epsilon(1e-12));
      CHECK(ax > game::kBoostAccel * 0.9);  // thrust along the nose
    } else {
      CHECK(s.boost == 0.0);
      CHECK(std::abs(ax) < 1e-9);  // empty: no thrust (gravity is along z)
    }
  }
  CHECK(thrust_ticks == 36);  // 10 / (100/3 / 120) = 36 ticks
  CHECK(s.boost == 0.0);
  // Unlimited (a recording's fact): held boost thrusts and the amount stays.
  CarModelState<double> u0 = Car({0.0, 0.0, 1.0e4}, {0.0, 0.0, 0.0});
  u0.boost = 0.0;
  u0.unlimited_boost = true;
  const CarModelState<double> u1 = StepCar(c, floor, u0, u, kTickS, true);
  CHECK(u1.boost == 0.0);
  CHECK(u1.unlimited_boost);
  CHECK(u1.body.v.x() > game::kBoostAccel * 0.9 * kTickS);
  // Not held: no drain.
  CarModelState<double> idle = Car({0.0, 0.0, 1.0e4}, {0.0, 0.0, 0.0});
  idle.boost = 50.0;
  CHECK(StepCar(c, floor, idle, Controls(), kTickS, true).boost == 50.0);
}

TEST_CASE("the car on the flat floor is the vehicle step, bit for bit, handbrake included") {
  // Issue 37: StepCar's floor tick is StepVehicle with the car's vehicle set, its wheels carried
  // from tick to tick. Going back to the powerslide or ground step fails the equalities.
  const Arena floor = Floor();
  const CarCoeffs<double> c = Defaults();
  CarModelState<double> car;
  car.body = testing::OnFloor(0.0, 0.0, 0.3, 1200.0);
  car.body.x.z() = game::kCarRestHeight;
  VehicleState<double> vehicle;  // wheels unset, level 0, as the car's
  vehicle.body = car.body;
  VehicleState<double> plain = vehicle;  // the same car without the handbrake
  Controls u;
  u.throttle = 1.0;
  u.steer = 1.0;
  double max_level = 0.0;
  double max_yaw_rate_gap = 0.0;  // against the same car without the handbrake, rad/s
  // 40 ticks held (the level reaches 1 after 24), 90 released (back to 0 after 60 more).
  for (int i = 0; i < 130; ++i) {
    u.handbrake = i < 40 ? 1.0 : 0.0;
    u.steer = i < 100 ? 1.0 : -0.5;
    car = StepCar(c, floor, car, u, kTickS, true);
    vehicle = StepVehicle(c.vehicle, vehicle, u, kTickS);
    Controls no_handbrake = u;
    no_handbrake.handbrake = 0.0;
    plain = StepVehicle(c.vehicle, plain, no_handbrake, kTickS);
    REQUIRE(car.regime == CarRegime::kSurface);
    REQUIRE(car.on_floor);
    CHECK(car.wheels.set);
    CHECK(car.wheels.handbrake == vehicle.wheels.handbrake);
    CHECK(car.wheels.steer_angle == vehicle.wheels.steer_angle);
    CHECK(car.body.x == vehicle.body.x);
    CHECK(car.body.v == vehicle.body.v);
    CHECK(car.body.omega == vehicle.body.omega);
    CHECK(car.body.theta == vehicle.body.theta);
    max_level = std::max(max_level, car.wheels.handbrake);
    max_yaw_rate_gap =
        std::max(max_yaw_rate_gap, std::abs(car.body.omega.z() - plain.body.omega.z()));
  }
  CHECK(max_level == 1.0);
  CHECK(car.wheels.handbrake == 0.0);
  // The handbrake changed the motion: the slide turns the car otherwise than the same car
  // without it.
  CHECK(max_yaw_rate_gap > 0.3);
}

TEST_CASE("regime switching with the handbrake: the level ramps in the air and the car lands sliding") {
  const Arena floor = Floor();
  const CarCoeffs<double> c = Defaults();
  CarModelState<double> held = Car({0.0, 0.0, 60.0}, {800.0, 300.0, 0.0});
  CarModelState<double> free = held;
  Controls u;
  u.throttle = 1.0;
  u.steer = -1.0;
  u.handbrake = 1.0;
  Controls no_handbrake = u;
  no_handbrake.handbrake = 0.0;
  int air_ticks = 0;
  while (held.regime != CarRegime::kSurface && air_ticks < 120) {
    held = StepCar(c, floor, held, u, kTickS, true);
    free = StepCar(c, floor, free, no_handbrake, kTickS, true);
    if (held.regime == CarRegime::kAir) {
      ++air_ticks;
      // The ramp runs in the air too (the game's OutputHandbrake, 5 /s up).
      CHECK(held.wheels.handbrake == doctest::Approx(std::min(1.0, air_ticks * 5.0 * kTickS)));
      CHECK(!held.wheels.set);  // off the floor the wheels are left to the next floor tick
      // The aerial step does not read the handbrake.
      CHECK(held.body.x == free.body.x);
      CHECK(held.body.omega == free.body.omega);
    }
  }
  REQUIRE(held.regime == CarRegime::kSurface);
  REQUIRE(free.regime == CarRegime::kSurface);
  // Falling 60 - 26.84 uu under 650 uu/s^2: ~0.32 s, over 0.2 s: the level is full at landing.
  CHECK(air_ticks > 24);
  CHECK(held.wheels.handbrake == 1.0);
  CHECK(held.wheels.set);
  // The landing tick ran the vehicle step: the same landing without the handbrake grips.
  CHECK(held.body.x.z() == game::kCarRestHeight);
  CHECK(held.body.v != free.body.v);
  for (int i = 0; i < 30; ++i) {
    held = StepCar(c, floor, held, u, kTickS, true);
    free = StepCar(c, floor, free, no_handbrake, kTickS, true);
  }
  // Sliding: the rear axle slips sideways far more under the handbrake.
  auto rear_slip = [](const CarState<double>& b) {
    const Eigen::Vector3d left = b.theta.col(1);
    return std::abs(b.v.dot(left) - kCarRearAxleUu * b.omega.z());
  };
  CHECK(rear_slip(held.body) > rear_slip(free.body) + 50.0);
}

TEST_CASE("a car driving off a ledge flies and falls, from every start") {
  const Arena ledge = Ledge();
  const CarCoeffs<double> c = Defaults();
  // Where the car's last floor tick leaves it past the zero-thickness edge depends on the
  // start: from x = -400 ... -419.5 (every 0.5 uu) at 1000 uu/s it ends 0.1 ... 9.8 uu past
  // the edge, with the closest-feature normal there 0.3 ... 30 degrees from the up axis.
  // StepSurface used to follow that normal round the edge and under the floor from 39 of
  // these 40 starts (every one but -409).
  constexpr int kStarts = 40;
  for (int k = 0; k < kStarts; ++k) {
    const double x0 = -400.0 - 0.5 * k;
    CAPTURE(x0);
    CarModelState<double> s =
        Car({x0, 0.0, game::kCarRestHeight}, {1000.0, 0.0, game::kCarRestReportedVz});
    Controls u;
    u.throttle = 1.0;
    bool was_on_floor = false;
    int took_off_at = -1;
    double lowest_up_z = 1.0;
    for (int i = 0; i < 90; ++i) {
      s = StepCar(c, ledge, s, u, kTickS, true);
      if (s.body.x.x() < -kCarWheelContactUu) CHECK(s.on_floor);
      // Over the edge the wheels still touch it for a tick or two (kSurface), but the closest
      // feature is the edge, whose normal turns 26-30 degrees under the car in a tick: flown on,
      // the car would leave it at 430-550 uu/s, far more than gravity and the sticky force can
      // bring back within the wheels' 10 uu (HoldsOverCrest), so the surface step lets go and
      // the car flies from the first of them on, level (StepSurface's turn is dropped).
      if (was_on_floor && !s.on_floor) {
        took_off_at = i;
        CHECK(!s.on_surface);
        // The ground step's reported rest vz is not motion: the car leaves level, then falls.
        CHECK(s.body.v.z() == doctest::Approx(game::kGravityZ * kTickS).epsilon(1e-9));
      }
      if (took_off_at >= 0) CHECK(s.regime == CarRegime::kAir);
      lowest_up_z = std::min(lowest_up_z, s.body.theta(2, 2));
      was_on_floor = s.on_floor;
    }
    REQUIRE(took_off_at > 0);
    CHECK(s.regime == CarRegime::kAir);
    // Never turned round the edge: the car stays level (the aerial step alone, no input).
    CHECK(lowest_up_z > 0.999);
    // Past the edge by the contact band, then gravity alone for the remaining ticks.
    const double t_air = (90 - took_off_at) * kTickS;
    CHECK(s.body.x.z() < game::kCarRestHeight - 0.4 * -game::kGravityZ * t_air * t_air);
    CHECK(s.body.x.x() > 0.0);
  }
}

// Steps the car n ticks with inputs u, appending every state to *out.
void Run(const CarCoeffs<double>& c, const Arena& arena, const Controls& u, int n,
         CarModelState<double>* s, std::vector<CarModelState<double>>* out) {
  for (int i = 0; i < n; ++i) {
    *s = StepCar(c, arena, *s, u, kTickS, true);
    out->push_back(*s);
  }
}

TEST_CASE("a car on the floor jumps: take-off, the jump step, the air, landing, the ground") {
  const Arena floor = Floor();
  const CarCoeffs<double> c = Defaults();
  CarModelState<double> s =
      Car({0.0, 0.0, game::kCarRestHeight}, {0.0, 0.0, game::kCarRestReportedVz});
  std::vector<CarModelState<double>> ticks;
  Controls rest, jump;
  jump.jump = 1.0;
  Run(c, floor, rest, 10, &s, &ticks);
  for (const auto& t : ticks) REQUIRE(t.regime == CarRegime::kSurface);
  const CarModelState<double> before = s;
  // The press: the switch takes the jump step, which is StepJump from the landed jump state.
  s = StepCar(c, floor, s, jump, kTickS, true);
  REQUIRE(s.regime == CarRegime::kJump);
  JumpCarState<double> js;
  js.car = before.body;
  js.jump = Landed(before.jump);
  const JumpCarState<double> direct = StepJump(c.jump, js, jump, kTickS, true);
  CHECK(s.body.x == direct.car.x);  // bit for bit: one implementation
  CHECK(s.body.v == direct.car.v);
  // Impulse and one tick of jump force, sticky force and gravity on the reported rest vz (the
  // jump model's convention, kept across the switch).
  CHECK(s.body.v.z() == doctest::Approx(game::kCarRestReportedVz + c.jump.jump_impulse +
                                        (c.jump.jump_accel - c.jump.sticky_accel +
                                         c.air.gravity_z) * kTickS)
                            .epsilon(1e-12));
  CHECK(s.jump.has_jumped);
  CHECK(s.jump.in_contact);
  // Held: the jump step for the force's 24 ticks (jump_max_time_s 0.2 s at 120 Hz), the first
  // 6 of them (contact_time_s) with the wheels still touching, although the take-off lifts the
  // wheel point out of the contact band after ~4 of them.
  ticks.clear();
  ticks.push_back(s);
  Run(c, floor, jump, 29, &s, &ticks);
  int jump_ticks = 0;
  while (jump_ticks < static_cast<int>(ticks.size()) && ticks[jump_ticks].regime == CarRegime::kJump)
    ++jump_ticks;
  CHECK(jump_ticks == 24);
  CHECK(ticks[4].jump.in_contact);
  CHECK(!ticks[6].jump.in_contact);
  for (int i = 0; i < 24; ++i) CHECK(ticks[i].regime_ticks == i + 1);
  // Then the aerial step, handed over cleanly: exactly StepAerial from the last jump tick.
  REQUIRE(ticks[24].regime == CarRegime::kAir);
  CHECK(ticks[24].body.v == StepAerial(c.air, ticks[23].body, jump, kTickS, true).v);
  CHECK(ticks[24].body.x == StepAerial(c.air, ticks[23].body, jump, kTickS, true).x);
  CHECK(ticks[23].body.v.z() > 400.0);  // the recordings' held jumps: 426-443 uu/s at its end
  // Released: falls back and lands on the floor, upright at the rest height, jump state reset.
  double apex = 0.0;
  int landed_at = -1;
  for (int i = 0; i < 240 && landed_at < 0; ++i) {
    s = StepCar(c, floor, s, rest, kTickS, true);
    apex = std::max(apex, s.body.x.z());
    if (s.regime == CarRegime::kSurface) landed_at = i;
    else REQUIRE(s.regime == CarRegime::kAir);
  }
  REQUIRE(landed_at > 0);
  // Apex of a held jump: 234.4 uu with the game's values (NOTES "Jumps"), recorded 241.3; the
  // jump fit's smaller jump_accel and larger impulse land near it.
  CHECK(apex > 200.0);
  CHECK(apex < 260.0);
  CHECK(s.body.x.z() == game::kCarRestHeight);
  CHECK(s.body.theta(2, 2) == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(!s.jump.has_jumped);
  // A new press on the ground jumps again.
  s = StepCar(c, floor, s, rest, kTickS, true);
  s = StepCar(c, floor, s, jump, kTickS, true);
  CHECK(s.regime == CarRegime::kJump);
}

TEST_CASE("a released jump ends its force early; a second press in the air double jumps once") {
  const Arena floor = Floor();
  const CarCoeffs<double> c = Defaults();
  CarModelState<double> s =
      Car({0.0, 0.0, game::kCarRestHeight}, {0.0, 0.0, game::kCarRestReportedVz});
  std::vector<CarModelState<double>> ticks;
  Controls rest, jump;
  jump.jump = 1.0;
  Run(c, floor, rest, 2, &s, &ticks);
  ticks.clear();
  Run(c, floor, jump, 14, &s, &ticks);  // held for 14 ticks (jumps.txt's first jump)
  Run(c, floor, rest, 10, &s, &ticks);
  int jump_ticks = 0;
  for (const auto& t : ticks) jump_ticks += t.regime == CarRegime::kJump;
  CHECK(jump_ticks == 14);
  CHECK(ticks.back().regime == CarRegime::kAir);
  // A second press in the air: one tick of the jump step with the double jump's impulse.
  const CarModelState<double> before = s;
  s = StepCar(c, floor, s, jump, kTickS, true);
  REQUIRE(s.regime == CarRegime::kJump);
  CHECK(s.body.v.z() == doctest::Approx(before.body.v.z() + c.jump.double_jump_impulse +
                                        c.air.gravity_z * kTickS)
                            .epsilon(1e-9));
  CHECK(s.jump.has_double_jumped);
  Run(c, floor, rest, 2, &s, &ticks);
  CHECK(s.regime == CarRegime::kAir);
  // No third jump in the air.
  s = StepCar(c, floor, s, jump, kTickS, true);
  CHECK(s.regime == CarRegime::kAir);
}

TEST_CASE("a car touching a wall with its wheels is on a surface and the wall step holds it") {
  // The floor and a wall at x = 500 facing -x: the car runs StepSurface, not the floor step.
  std::vector<Triangle> t;
  AddRectangle(-5000.0, 500.0, 5000.0, 0.0, &t);
  Triangle a, b;
  a.p[0] = {500.0f, -5000.0f, 0.0f};
  a.p[1] = {500.0f, 5000.0f, 2000.0f};
  a.p[2] = {500.0f, 5000.0f, 0.0f};
  b.p[0] = {500.0f, -5000.0f, 0.0f};
  b.p[1] = {500.0f, -5000.0f, 2000.0f};
  b.p[2] = {500.0f, 5000.0f, 2000.0f};
  t.push_back(a);
  t.push_back(b);
  const Arena arena(t);
  // Nose up, wheels (up axis) toward the wall: forward +z, left +y, up -x; 5 uu off the wall.
  Eigen::Matrix3d theta;
  theta.col(0) = Eigen::Vector3d::UnitZ();
  theta.col(1) = Eigen::Vector3d::UnitY();
  theta.col(2) = -Eigen::Vector3d::UnitX();
  CarModelState<double> s = Car({500.0 - game::kCarRestHeight - 5.0, 0.0, 300.0}, {0, 0, 0}, theta);
  const CarCoeffs<double> c = Defaults();
  Controls u;
  u.throttle = 1.0;
  for (int i = 0; i < 6; ++i) {
    s = StepCar(c, arena, s, u, kTickS, true);
    CHECK(s.regime == CarRegime::kSurface);
    CHECK(!s.on_floor);
    CHECK(s.on_surface);
    CHECK(!s.left_surface);
    // Put at rest height in front of the wall (not at the floor's height, not falling free).
    CHECK(s.body.x.x() == doctest::Approx(500.0 - game::kCarRestHeight).epsilon(1e-9));
    CHECK(s.body.theta.col(2).dot(-Eigen::Vector3d::UnitX()) > 0.9999);
  }
  // Throttle up the wall: it climbs (free fall would have taken it below 300).
  CHECK(s.body.x.z() > 300.0);
  CHECK(s.body.v.z() > 0.0);
}

TEST_CASE("a car drives from the floor up a ramp onto a wall through the car model") {
  const Arena arena = testing::FloorRampWall();
  const CarCoeffs<double> c = Defaults();
  CarModelState<double> s;
  s.body = testing::OnFloor(-600.0, 0.0, 0.0, 1400.0);
  Controls u;
  u.throttle = 1.0;
  int floor_ticks = 0, surface_ticks = 0;
  bool always_drivable = true;
  for (int i = 0; i < 96; ++i) {  // 0.8 s at full throttle
    s = StepCar(c, arena, s, u, kTickS, true);
    REQUIRE(s.regime == CarRegime::kSurface);
    REQUIRE(!s.left_surface);
    floor_ticks += s.on_floor;
    surface_ticks += s.on_surface;
    // The surface step's states are on their wheels where it drives (IsOnSurface). (The floor
    // step's last state before the ramp is not: upright, with the ramp's face the closest.)
    if (s.on_surface)
      always_drivable =
          always_drivable && IsOnSurface(c.wall, arena, s.body.x, s.body.theta.col(2));
  }
  CHECK(always_drivable);
  CHECK(floor_ticks > 20);    // 600 uu of floor at ~1400 uu/s: ~50 ticks
  CHECK(surface_ticks > 20);  // then the ramp and the wall
  CHECK(!s.on_floor);
  // On the wall: centre at rest height in front of it, up axis along -x, nose up, climbing.
  CHECK(s.body.x.x() == doctest::Approx(testing::kRampTopUu - game::kCarRestHeight).epsilon(1e-6));
  CHECK(s.body.x.z() > 350.0);
  CHECK(s.body.theta.col(2).dot(Eigen::Vector3d(-1, 0, 0)) > 0.999);
  CHECK(s.body.theta.col(0).z() > 0.999);
  CHECK(s.body.v.z() > 500.0);
  // Coasting, it slides back down the wall and the ramp onto the floor, where StepGround runs.
  u.throttle = 0.0;
  for (int i = 0; i < 1200; ++i) s = StepCar(c, arena, s, u, kTickS, true);
  CHECK(s.on_floor);
  CHECK(s.body.x.z() == doctest::Approx(game::kCarRestHeight).epsilon(1e-6));
  CHECK(s.body.x.x() < 0.0);
}

TEST_CASE("the car's row labels cover the floor, the ramp and the wall alike") {
  const Arena arena = testing::FloorRampWall();
  const Episode ep = testing::SurfaceEpisode(
      Defaults().ground, Defaults().wall, arena, testing::OnFloor(-600.0, 0.0, 0.0, 1400.0), 50,
      [](int) {
        CarInputs u;
        u.throttle = 1.0;
        return u;
      });
  REQUIRE(ep.rows.back().theta.col(2).x() < -0.999);  // it reached the wall
  const std::vector<Regime> r = ClassifyRows("car", ep, arena);
  for (int k = 0; k < ep.size(); ++k) {
    INFO("row " << k);
    CHECK(r[k] == Regime::kCovered);
  }
}

TEST_CASE("a car the surface step lets go of (the ceiling) flies, and lands anew only after") {
  // A ceiling z = 1000 facing down; the car on it, wheels up: gravity pulls it off.
  std::vector<Triangle> t;
  AddRectangle(-5000.0, 5000.0, 5000.0, 1000.0, &t);
  const Arena arena(t);
  Eigen::Matrix3d theta;  // upside down: forward +x, left -y, up -z
  theta.col(0) = Eigen::Vector3d::UnitX();
  theta.col(1) = -Eigen::Vector3d::UnitY();
  theta.col(2) = -Eigen::Vector3d::UnitZ();
  CarModelState<double> s = Car({0.0, 0.0, 1000.0 - game::kCarRestHeight}, {500, 0, 0}, theta);
  const CarCoeffs<double> c = Defaults();
  const double z_left = s.body.x.z();
  s = StepCar(c, arena, s, Controls{}, kTickS, true);
  // The surface step lets go: the tick is flown (gravity alone, no rest speed: it starts from
  // rest on the ceiling, the first tick ran no surface step).
  CHECK(s.regime == CarRegime::kAir);
  CHECK(!s.on_surface);
  CHECK(s.left_surface);
  CHECK(s.body.v.z() == doctest::Approx(game::kGravityZ * kTickS).epsilon(1e-9));
  s = StepCar(c, arena, s, Controls{}, kTickS, true);
  CHECK(s.regime == CarRegime::kAir);  // wheels still within reach, but it left
  CHECK(s.left_surface);
  for (int i = 0; i < 60 && s.left_surface; ++i) s = StepCar(c, arena, s, Controls{}, kTickS, true);
  CHECK(!s.left_surface);  // out of the ceiling's reach: lands anew if it comes back
  for (int i = 0; i < 60; ++i) s = StepCar(c, arena, s, Controls{}, kTickS, true);
  CHECK(s.regime == CarRegime::kAir);
  CHECK(s.body.x.z() < z_left - 100.0);  // falling
}

TEST_CASE("the switch is deterministic: the same inputs give the same states and regimes") {
  const Arena ledge = Ledge();
  const CarCoeffs<double> c = Defaults();
  auto run = [&] {
    std::vector<CarModelState<double>> out;
    CarModelState<double> s = Car({-300.0, 50.0, 60.0}, {900.0, 100.0, -200.0});
    Controls u;
    u.throttle = 1.0;
    u.steer = 0.3;
    u.boost = 0.5;
    for (int i = 0; i < 120; ++i) {
      s = StepCar(c, ledge, s, u, kTickS, true);
      out.push_back(s);
    }
    return out;
  };
  const auto a = run(), b = run();
  bool surface = false, air = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].regime == b[i].regime);
    REQUIRE(a[i].regime_ticks == b[i].regime_ticks);
    REQUIRE(a[i].body.x == b[i].body.x);  // bit for bit
    REQUIRE(a[i].body.theta == b[i].body.theta);
    surface = surface || a[i].regime == CarRegime::kSurface;
    air = air || a[i].regime == CarRegime::kAir;
  }
  CHECK(surface);  // lands on the platform, then drives off its edge
  CHECK(air);
}

Sample Row(double z, bool on_ground) {
  Sample s;
  s.x = Eigen::Vector3d(100.0, -200.0, z);
  s.on_ground = on_ground;
  return s;
}

TEST_CASE("on_ground against the switch on a hand-made episode, and the car's row labels") {
  const Arena floor = Floor();
  std::vector<Sample> rows;
  for (int k = 0; k < 4; ++k) rows.push_back(Row(game::kCarRestHeight, true));  // 0-3 driving
  rows.push_back(Row(game::kCarRestHeight, false));  // 4: flag off on the floor (disagrees)
  rows.push_back(Row(game::kCarRestHeight + 9.0, true));  // 5: within the band (agrees)
  rows.push_back(Row(game::kCarRestHeight + 11.0, true));  // 6: beyond it (disagrees)
  for (int k = 0; k < 3; ++k) rows.push_back(Row(400.0, false));  // 7-9 flying
  rows.push_back(Row(60.0, false));  // 10: flying, body near the floor
  rows.push_back(Row(400.0, false));  // 11
  rows.back().input.jump = true;
  rows.push_back(Row(400.0, false));  // 12: the row after a jump input
  rows.push_back(Row(game::kCarRestHeight, true));  // 13
  rows.back().input.handbrake = true;
  // 14, 15: on the floor but tilted 5 degrees (landing rows)
  for (int k = 0; k < 2; ++k) {
    rows.push_back(Row(game::kCarRestHeight, true));
    rows.back().theta =
        Eigen::AngleAxisd(5.0 * M_PI / 180.0, Eigen::Vector3d::UnitY()).toRotationMatrix();
  }
  const Episode ep = testing::HandMadeEpisode(EpisodeKind::kCar, rows);

  const std::vector<CarStepChoice> choices = CarChoicesOnRecorded(ep, floor);
  std::vector<signed char> decision;
  for (const CarStepChoice& c : choices) decision.push_back(c.regime == CarRegime::kSurface);
  const OnGroundAgreement a = CompareOnGround(ep, decision);
  CHECK(a.rows == 16);
  CHECK(a.surface_not_flagged == 1);  // row 4
  CHECK(a.flagged_in_air == 1);       // row 6
  CHECK(a.agree == 14);
  CHECK(a.Percent() == doctest::Approx(100.0 * 14 / 16));
  // Rows without a decision are not counted.
  decision[0] = decision[6] = -1;
  const OnGroundAgreement b = CompareOnGround(ep, decision);
  CHECK(b.rows == 14);
  CHECK(b.flagged_in_air == 0);

  const std::vector<Regime> r = ClassifyRows("car", ep, floor);
  CHECK(r[0] == Regime::kCovered);
  CHECK(r[4] == Regime::kCovered);        // the switch decides, not the flag
  CHECK(r[5] == Regime::kOffFlatFloor);   // on a surface, above the floor's band
  CHECK(r[6] == Regime::kTouchingSurface);  // in the air, within reach of the floor
  CHECK(r[7] == Regime::kCovered);
  CHECK(r[10] == Regime::kTouchingSurface);
  CHECK(r[11] == Regime::kCovered);  // jump pressed in the air: the car's jump step covers it
  CHECK(r[12] == Regime::kCovered);
  CHECK(r[13] == Regime::kCovered);  // the handbrake on the flat floor: the powerslide step
  CHECK(r[14] == Regime::kHandbrake);     // the row after a handbrake input, off the floor
  CHECK(r[15] == Regime::kOffFlatFloor);  // on the floor, not lying flat on it
  // The handbrake in the air (air roll) is left out.
  std::vector<Sample> air = rows;
  air[8].input.handbrake = true;
  const std::vector<Regime> ra =
      ClassifyRows("car", testing::HandMadeEpisode(EpisodeKind::kCar, air), floor);
  CHECK(ra[8] == Regime::kHandbrake);
  CHECK(ra[9] == Regime::kHandbrake);  // the row after it
  CHECK(ra[10] == Regime::kTouchingSurface);
}

TEST_CASE("the car's row labels: a take-off with jump held is covered, and so is a landing's settling") {
  const Arena floor = Floor();
  std::vector<Sample> rows;
  rows.push_back(Row(game::kCarRestHeight, true));  // 0: resting
  rows.push_back(Row(game::kCarRestHeight, true));  // 1: jump pressed
  rows.back().input.jump = true;
  // 2-7: taking off with jump held: on the surface above the floor's band, then in the air
  // within reach of the floor, then clear of it.
  for (double z : {22.7, 27.7, 40.0, 80.0, 100.0, 140.0}) {
    rows.push_back(Row(z, z < 27.0));
    rows.back().input.jump = true;
  }
  // 8-10: falling back without jump: within reach again (a landing: left out), on the floor.
  for (double z : {140.0, 60.0, 30.0}) rows.push_back(Row(z, false));
  rows.push_back(Row(game::kCarRestHeight - 1.5, true));  // 11: settling, 1.5 uu low, tilted
  rows.back().theta =
      Eigen::AngleAxisd(1.5 * M_PI / 180.0, Eigen::Vector3d::UnitY()).toRotationMatrix();
  rows.push_back(Row(game::kCarRestHeight - 2.5, true));  // 12: 2.5 uu low: not the floor's
  rows.push_back(Row(game::kCarRestHeight + 1.5, true));  // 13: 1.5 uu high: not either
  rows.push_back(Row(game::kCarRestHeight, true));  // 14: tilted 4 degrees: not the floor's
  rows.back().theta =
      Eigen::AngleAxisd(4.0 * M_PI / 180.0, Eigen::Vector3d::UnitX()).toRotationMatrix();
  const Episode ep = testing::HandMadeEpisode(EpisodeKind::kCar, rows);
  const std::vector<Regime> r = ClassifyRows("car", ep, floor);
  for (int k = 0; k <= 8; ++k) CHECK_MESSAGE(r[k] == Regime::kCovered, "row ", k);
  CHECK(r[9] == Regime::kTouchingSurface);
  CHECK(r[10] == Regime::kTouchingSurface);
  CHECK(r[11] == Regime::kCovered);
  CHECK(r[12] == Regime::kOffFlatFloor);
  CHECK(r[13] == Regime::kOffFlatFloor);
  CHECK(r[14] == Regime::kOffFlatFloor);
  // The same rising rows without jump held are a car near the floor, not a take-off.
  std::vector<Sample> plain = rows;
  for (Sample& row : plain) row.input.jump = false;
  const std::vector<Regime> p =
      ClassifyRows("car", testing::HandMadeEpisode(EpisodeKind::kCar, plain), floor);
  CHECK(p[2] == Regime::kOffFlatFloor);
  CHECK(p[4] == Regime::kTouchingSurface);
}

}  // namespace
}  // namespace rlfit
