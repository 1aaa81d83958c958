// Tests of the jump model: hand-computed take-off from rest, holding vs tapping jump, the
// double jump and dodge rules, the jump state of a recorded row, and coverage.
#include <algorithm>
#include <cmath>

#include <doctest/doctest.h>

#include "src/models/jump.h"
#include "src/replay/episode_steps.h"
#include "src/replay/predictor.h"
#include "src/replay/regime.h"
#include "tests/surface_test_util.h"

namespace rlfit {
namespace {

constexpr double kTick = 1.0 / 120.0;
// Hand-computed values are sums of a few doubles: 1e-9 uu/s is round-off.
constexpr double kRoundOff = 1e-9;

JumpCoeffs<double> Defaults() { return JumpCoeffs<double>::FromArray(JumpLayout().defaults.data()); }

// A car at rest on the floor, upright, nose along +x.
JumpCarState<double> AtRest() {
  JumpCarState<double> s;
  s.car.x = Eigen::Vector3d(0, 0, 17.01);
  s.car.v = Eigen::Vector3d::Zero();
  s.car.omega = Eigen::Vector3d::Zero();
  s.car.theta = Eigen::Matrix3d::Identity();
  return s;
}

// Steps `ticks` ticks holding jump on the ticks [0, held_ticks); returns the highest z.
double Apex(const JumpCoeffs<double>& c, int held_ticks, int ticks = 240) {
  JumpCarState<double> s = AtRest();
  double apex = s.car.x.z();
  for (int k = 0; k < ticks; ++k) {
    Controls u;
    u.jump = k < held_ticks ? 1.0 : 0.0;
    s = StepJump(c, s, u, kTick, true);
    apex = std::max(apex, s.car.x.z());
  }
  return apex;
}

TEST_CASE("take-off from rest: impulse, contact ticks, 24 ticks of force, then gravity") {
  const JumpCoeffs<double> c = Defaults();
  JumpCarState<double> s = AtRest();
  Controls none, jump;
  jump.jump = 1.0;
  // Resting: nothing moves (the surface holds the car against gravity and the sticky force).
  s = StepJump(c, s, none, kTick, true);
  CHECK(s.car.v.norm() == 0.0);
  CHECK(s.car.x.z() == 17.01);
  // Tick 0 of the jump: impulse 291.667 plus one tick of (1458.33 - 650 - 325) uu/s^2.
  const double contact_accel = game::kJumpAccel + game::kGravityZ - 0.5 * 650.0;  // 483.33
  const double air_accel = game::kJumpAccel + game::kGravityZ;                      // 808.33
  s = StepJump(c, s, jump, kTick, true);
  CHECK(s.jump.has_jumped);
  CHECK(std::abs(s.car.v.z() - (game::kJumpImpulse + contact_accel * kTick)) < kRoundOff);
  // 6 ticks in contact (the impulse's included), 24 of force in all.
  for (int k = 1; k < 24; ++k) s = StepJump(c, s, jump, kTick, true);
  const double vz_after_force = game::kJumpImpulse + 6 * contact_accel * kTick +
                                18 * air_accel * kTick;  // 437.08
  CHECK(std::abs(s.car.v.z() - vz_after_force) < kRoundOff);
  CHECK_FALSE(s.jump.in_contact);
  s = StepJump(c, s, jump, kTick, true);  // held, but past 0.2 s: gravity only
  CHECK(std::abs(s.car.v.z() - (vz_after_force + game::kGravityZ * kTick)) < kRoundOff);
  CHECK_FALSE(s.jump.jumping);
  // Nothing but z moved: the car is upright with no input.
  CHECK(s.car.v.x() == 0.0);
  CHECK(s.car.omega.norm() == 0.0);
}

TEST_CASE("holding jump raises the first jump; a tap still gets the minimum force time") {
  const JumpCoeffs<double> c = Defaults();
  const double held = Apex(c, 240), tap = Apex(c, 1), half = Apex(c, 12);
  // Holding: 437.08 uu/s after 0.2 s at ~z 17 + 73: apex ~ 236 uu (magic_numbers.py
  // MaxJumpHeight 232.6 counts from a lower reference); a tap ~ 91 uu.
  CHECK(held > 230.0);
  CHECK(held < 245.0);
  CHECK(tap < half);
  CHECK(half < held);
  // The tap's force lasts jump_min_time_s = 3 ticks: its apex is that of 3 ticks of force.
  JumpCoeffs<double> no_min = c;
  no_min.timing.jump_min_time_s = 0.0;
  CHECK(Apex(no_min, 1) < tap);
  CHECK(std::abs(Apex(c, 3) - tap) < kRoundOff);
}

TEST_CASE("double jump: a second press in the air without stick adds the impulse along up") {
  const JumpCoeffs<double> c = Defaults();
  JumpCarState<double> s = AtRest();
  Controls none, jump;
  jump.jump = 1.0;
  for (int k = 0; k < 5; ++k) s = StepJump(c, s, jump, kTick, true);
  for (int k = 0; k < 30; ++k) s = StepJump(c, s, none, kTick, true);
  const double vz = s.car.v.z();
  s = StepJump(c, s, jump, kTick, true);
  CHECK(s.jump.has_double_jumped);
  CHECK(std::abs(s.car.v.z() - (vz + game::kJumpImpulse + game::kGravityZ * kTick)) < kRoundOff);
  // Only once: release and press again, nothing more.
  s = StepJump(c, s, none, kTick, true);
  const double vz2 = s.car.v.z();
  s = StepJump(c, s, jump, kTick, true);
  CHECK(std::abs(s.car.v.z() - (vz2 + game::kGravityZ * kTick)) < kRoundOff);
}

TEST_CASE("double jump window: a press 1.25 s after the first jump's force does nothing") {
  const JumpCoeffs<double> c = Defaults();
  JumpCarState<double> s = AtRest();
  Controls none, jump;
  jump.jump = 1.0;
  for (int k = 0; k < 3; ++k) s = StepJump(c, s, jump, kTick, true);
  for (int k = 0; k < 160; ++k) s = StepJump(c, s, none, kTick, true);  // 1.33 s
  const double vz = s.car.v.z();
  s = StepJump(c, s, jump, kTick, true);
  CHECK_FALSE(s.jump.has_double_jumped);
  CHECK(std::abs(s.car.v.z() - (vz + game::kGravityZ * kTick)) < kRoundOff);
}

TEST_CASE("dodge: stick forward gives a forward impulse, nose-down torque, then z damping") {
  const JumpCoeffs<double> c = Defaults();
  JumpCarState<double> s = AtRest();
  s.car.v = Eigen::Vector3d(1000, 0, 0);
  Controls none, jump, dodge;
  jump.jump = 1.0;
  dodge.jump = 1.0;
  dodge.pitch = -1.0;
  for (int k = 0; k < 3; ++k) s = StepJump(c, s, jump, kTick, true);
  for (int k = 0; k < 20; ++k) s = StepJump(c, s, none, kTick, true);
  const Eigen::Vector3d v0 = s.car.v;
  s = StepJump(c, s, dodge, kTick, true);
  CHECK(s.jump.has_flipped);
  CHECK(s.jump.flip_forward == 1.0);
  CHECK(s.jump.flip_side == 0.0);
  // Forward impulse 500 uu/s (forward speed scale 1) along the horizontal nose.
  CHECK(std::abs(s.car.v.x() - (v0.x() + game::kDodgeImpulse)) < 1e-6);
  // Nose-down: positive rotation about the left axis, 224 rad/s^2 for one tick, then the air
  // damping of that tick (pitch input goes to the dodge, so damping acts in full).
  const double w = game::kDodgeTorqueForward * kTick;
  CHECK(std::abs(s.car.omega.y() - (w + c.air.damping(1) * w * kTick)) < 1e-9);
  // No double jump after a dodge.
  s = StepJump(c, s, none, kTick, true);
  const double vz = s.car.v.z();
  s = StepJump(c, s, jump, kTick, true);
  CHECK_FALSE(s.jump.has_double_jumped);
  CHECK(std::abs(s.car.v.z() - (vz + game::kGravityZ * kTick)) < kRoundOff);
  // From 0.15 s the vertical velocity loses 0.35 of itself per tick (within the up time, or
  // while falling), before gravity.
  JumpCarState<double> t = s;
  while (t.jump.flip_time_s + 0.5 * kTick < c.timing.dodge_z_damping_delay_s)
    t = StepJump(c, t, none, kTick, true);
  const double vz_before = t.car.v.z();
  t = StepJump(c, t, none, kTick, true);
  CHECK(std::abs(t.car.v.z() - (vz_before * (1.0 - game::kDodgeZDamping) +
                                game::kGravityZ * kTick)) < kRoundOff);
  // After the dodge's 0.65 s the car falls freely again, with no damping.
  for (int k = 0; k < 90 && t.jump.flipping; ++k) t = StepJump(c, t, none, kTick, true);
  REQUIRE_FALSE(t.jump.flipping);  // 0.65 s = 78 ticks after the dodge
  const double vz_free = t.car.v.z();
  t = StepJump(c, t, none, kTick, true);
  CHECK(vz_free < 0.0);
  CHECK(std::abs(t.car.v.z() - (vz_free + game::kGravityZ * kTick)) < kRoundOff);
}

TEST_CASE("a backward dodge uses the backward impulse, scaled by the forward speed") {
  const JumpCoeffs<double> c = Defaults();
  JumpCarState<double> s = AtRest();
  s.car.v = Eigen::Vector3d(1150, 0, 0);  // half the max speed: scale lerp(1, 2.5, 0.5)
  Controls none, jump, back;
  jump.jump = 1.0;
  back.jump = 1.0;
  back.pitch = 1.0;
  for (int k = 0; k < 3; ++k) s = StepJump(c, s, jump, kTick, true);
  for (int k = 0; k < 10; ++k) s = StepJump(c, s, none, kTick, true);  // off the ground
  const Eigen::Vector3d v0 = s.car.v;
  s = StepJump(c, s, back, kTick, true);
  CHECK(s.jump.has_flipped);
  const double expected = -game::kDodgeBackwardImpulse * (1.0 + 1.5 * v0.x() / 2300.0);
  CHECK(std::abs(s.car.v.x() - v0.x() - expected) < 1e-6);
}

TEST_CASE("the jump state of a row replays the rules over the recorded inputs") {
  Episode ep;
  ep.rows.resize(40);
  ep.step_dt_s.assign(39, 2 * kTick);
  ep.step_ticks.assign(39, 2);
  for (int k = 0; k < 40; ++k) {
    ep.rows[k].t_s = k * 2 * kTick;
    ep.rows[k].input.jump = k >= 1 && k < 4;
  }
  Integration integ;
  integ.input_delay_s = 0.0;
  integ.tick_aligned_inputs = false;
  const JumpTiming timing;
  CHECK_FALSE(JumpStateAt(ep, 0, 0, integ, timing).has_jumped);
  const JumpState after = JumpStateAt(ep, 0, 10, integ, timing);
  CHECK(after.has_jumped);
  CHECK_FALSE(after.in_contact);
  CHECK_FALSE(after.jumping);
  // The press on row 1 starts the jump on its first tick: 18 ticks to row 10.
  CHECK(std::abs(after.jump_time_s - 18 * kTick) < 1e-12);
}

TEST_CASE("jump coverage: from the take-off row to the last row before landing") {
  Episode ep;
  ep.kind = EpisodeKind::kCar;
  const int n = 30;
  ep.rows.resize(n);
  ep.step_dt_s.assign(n - 1, 2 * kTick);
  ep.step_ticks.assign(n - 1, 2);
  for (int k = 0; k < n; ++k) {
    Sample& s = ep.rows[k];
    s.t_s = k * 2 * kTick;
    s.on_ground = k <= 6 || k >= 25;
    s.input.jump = k == 4 || k == 5;
    s.v = Eigen::Vector3d(0, 0, k >= 6 && k < 25 ? 300.0 : 8.3);
    // Up 15 uu a row from row 6 and down again to row 25: z 62.01 (clear of the wheels' 60 uu
    // reach) on rows 9..22, 47.01 on row 23.
    const int up = k > 6 && k < 25 ? std::min(k - 6, 25 - k) : 0;
    s.x = Eigen::Vector3d(0, 0, 17.01 + 15.0 * up);
  }
  const auto segments = JumpSegments(ep);
  REQUIRE(segments.size() == 1);
  CHECK(segments[0].first == 5);
  CHECK(segments[0].second == 24);
  // Against the floor plane: rows 5..22 are covered; from row 23 (within the wheels' reach
  // after having been clear) the car lands.
  const std::vector<Regime> r = ClassifyRows("jump", ep, testing::FlatFloor());
  const std::vector<int> counts = CountRegimes(r);
  CHECK(counts[static_cast<int>(Regime::kCovered)] == 18);
  CHECK(counts[static_cast<int>(Regime::kTouchingSurface)] == 2);
  CHECK(r[22] == Regime::kCovered);
  CHECK(r[23] == Regime::kTouchingSurface);
  CHECK(counts[static_cast<int>(Regime::kOnGround)] == 10);
  // A rising velocity without a jump press is no take-off; neither is one that never leaves.
  for (Sample& s : ep.rows) s.input.jump = false;
  CHECK(JumpSegments(ep).empty());
}

TEST_CASE("the jump model's layout extends the aerial one, and its step leaves it unchanged") {
  const CoeffLayout& j = JumpLayout();
  const CoeffLayout& a = AerialLayout();
  REQUIRE(j.size() == JumpCoeffs<double>::kSize);
  for (int i = 0; i < a.size(); ++i) CHECK(j.names[i] == a.names[i]);
  // In the air without jump input the jump step is the aerial step, bit for bit.
  const JumpCoeffs<double> c = Defaults();
  JumpCarState<double> s;
  s.car.x = Eigen::Vector3d(10, 20, 500);
  s.car.v = Eigen::Vector3d(300, -100, 50);
  s.car.omega = Eigen::Vector3d(0.5, -1, 2);
  s.car.theta = EulerToMatrix(0.3, 1.0, -0.2);
  s.jump.in_contact = false;
  s.jump.has_jumped = true;
  s.jump.has_double_jumped = true;
  Controls u;
  u.pitch = 0.5;
  u.boost = 1.0;
  const CarState<double> a_next = StepAerial(c.air, s.car, u, kTick, true);
  const JumpCarState<double> j_next = StepJump(c, s, u, kTick, true);
  CHECK(a_next.x == j_next.car.x);
  CHECK(a_next.v == j_next.car.v);
  CHECK(a_next.omega == j_next.car.omega);
  CHECK(a_next.theta == j_next.car.theta);
}

}  // namespace
}  // namespace rlfit
