// The car jumping (issue 11 part 3): the first jump's impulse along the up axis, the jump
// force while jump is held, the sticky force while the wheels still touch, then double jump
// and dodge (flip). Built on the aerial step (StepAerial: gravity, boost, air control), which
// runs unchanged whenever the wheels are off the surface.
#pragma once

#include <algorithm>
#include <cmath>

#include "src/common/constants.h"
#include "src/models/aerial.h"
#include "src/models/car_state.h"
#include "src/models/model.h"

namespace rlfit {

// Jump game constants (datasets parameters/magic_numbers.py JumpComponent, DodgeComponent,
// parameters/air_dodge.md, car.md; forces divided by the car mass 180), used as defaults.
namespace game {
inline constexpr double kJumpImpulse = 52500.0 / 180.0;    // 291.667 uu/s (JumpImpulse)
inline constexpr double kJumpAccel = 262500.0 / 180.0;     // 1458.33 uu/s^2 (JumpForce)
inline constexpr double kJumpMinTime = 0.025;              // s (MinJumpTime)
inline constexpr double kJumpMaxTime = 0.2;                // s (JumpForceTime)
inline constexpr double kStickyGround = 0.5;               // x |gravity| (car.md StickyForce)
inline constexpr double kDodgeImpulse = 90000.0 / 180.0;   // 500 uu/s forward and side
inline constexpr double kDodgeBackwardImpulse = 96000.0 / 180.0;  // 533.3 uu/s
inline constexpr double kDodgeTorqueForward = 224.0;       // ForwardDodgeTorque
inline constexpr double kDodgeTorqueSide = 260.0;          // SideDodgeTorque
inline constexpr double kDodgeTorqueTime = 0.65;           // s
inline constexpr double kDodgeZDamping = 0.35;             // fraction of vz per 120 Hz tick
inline constexpr double kDodgeZDampingDelay = 0.15;        // s
inline constexpr double kDodgeZDampingUpTime = 0.06;       // s
inline constexpr double kDodgeInputThreshold = 0.5;        // |pitch| + |yaw| + |roll|
inline constexpr double kMaxTimeForDodge = 1.25;           // s (car.md MaxTimeForDodge)
}  // namespace game

// Durations and thresholds of the jump rules: not fitted (a duration moves a discrete event
// from tick to tick, where the rollout cost has no derivative). Units s unless stated.
struct JumpTiming {
  // The jump force acts from the impulse's tick on while jump is held, at least until
  // jump_min_time_s and on the ticks that start less than jump_max_time_s after the impulse:
  // 24 ticks when held (jumps.txt second jump), 14 when held for 14 ticks (first jump).
  // magic_numbers.py: MinJumpTime 0.025, JumpForceTime 0.2. RocketSim scales the force by 0.62
  // before the min time; the recordings show no such step (the contact rows change vz by
  // 8.04 uu/s each, the first included).
  double jump_min_time_s = game::kJumpMinTime;
  double jump_max_time_s = game::kJumpMaxTime;
  // The wheels keep touching the surface for this long after the impulse (sticky force, no
  // air control). Measured on jumps.txt (both jumps identical): the impulse on the second tick
  // of a row step (+8.31 -> 304.0: impulse and one tick of jump accel - gravity - sticky), two
  // steps at +8.04 uu/s (2 such ticks), then one mixed step (+10.95): 6 ticks with the
  // impulse's, and the yaw input turns the car from the 7th on.
  double contact_time_s = 6.0 / game::kTickRateHz;
  // A second jump press within this time after the first jump's force ended (or any time after
  // leaving a surface without jumping) double jumps or dodges (car.md MaxTimeForDodge).
  double double_jump_window_s = game::kMaxTimeForDodge;
  double dodge_input_threshold = game::kDodgeInputThreshold;  // |pitch| + |yaw| + |roll|
  double dodge_torque_time_s = game::kDodgeTorqueTime;
  double dodge_z_damping_delay_s = game::kDodgeZDampingDelay;
  double dodge_z_damping_up_time_s = game::kDodgeZDampingUpTime;
  double dodge_direction_deadzone = 0.1;     // a normalised direction component below is 0
  double dodge_backward_speed_uu_s = 100.0;  // below, a dodge is backward when stick is back
  // Impulse scale at full forward speed, lerp(1, scale, |forward speed| / max speed).
  double dodge_forward_speed_scale = 1.0;
  double dodge_backward_speed_scale = 2.5;
  double dodge_side_speed_scale = 1.9;
};

// The jump state the car carries between ticks (a plain value type: copy it across regime
// switches). Times in s. Defaults: a car on the ground, no jump used.
struct JumpState {
  bool in_contact = true;      // wheels touching the surface (resting, or taking off)
  bool jump_held = false;      // jump input held on the previous tick (a press is an edge)
  bool jumping = false;        // the first jump's force acts
  bool has_jumped = false;     // the first jump happened since the last landing
  double jump_time_s = 0.0;    // since the first jump's impulse
  double since_jump_s = 0.0;   // since the first jump's force ended (double jump window)
  bool has_double_jumped = false;
  bool has_flipped = false;    // a dodge was used
  bool flipping = false;       // the dodge torque may act
  double flip_time_s = 0.0;    // since the dodge started
  double flip_forward = 0.0;   // dodge direction: forward (+, stick forward) component
  double flip_side = 0.0;      // ... and sideways component (yaw + roll), normalised
};

// Resets the jump state when the wheels touch a surface again (the regime switch calls it).
inline JumpState Landed(const JumpState& s) {
  JumpState out;
  out.jump_held = s.jump_held;
  return out;
}

// What acts during one tick, decided from the jump state and the tick's inputs alone.
struct JumpTick {
  bool rest = false;           // in contact without a jump: the surface holds the car
  bool contact = false;        // wheels touching: sticky force, no air control
  bool jump_impulse = false;   // the first jump starts
  bool jump_force = false;     // the first jump's force acts
  bool double_jump = false;    // double jump impulse along up
  bool dodge_impulse = false;  // dodge starts
  bool dodge_torque = false;   // dodge torque acts (flip_forward / flip_side of the state)
  bool z_damping_window = false;  // dodge z damping acts when falling...
  bool z_damping_always = false;  // ... or whatever vz during its up time
  double flip_forward = 0.0, flip_side = 0.0;
};

// Decides the tick from the state and the inputs u (u.jump is the fraction of the tick jump was
// held; the game reads it at the tick's start, so a press or release inside a tick acts from
// the next: on jumps.txt, with the input timing of docs/models/timing.md, a press switching
// 0.32 into a tick gives the impulse on the next tick, a release 0.32 into a tick still gives
// that tick's force), then advances the timers by dt_s. Independent of the physics, so a recorded
// jump's state at any row is this function run over the recorded inputs since the take-off.
// Rules (RocketSim's public logic and the game's DodgeComponent, parameters/air_dodge.md):
//   - in contact, a press starts the first jump: the impulse and the jump force on this tick;
//   - the force continues while jump_time < min time, or held and jump_time < max time (24
//     ticks when held: jumps.txt's second jump);
//   - the contact phase ends contact_time_s after the impulse;
//   - in the air, a press within double_jump_window_s after the first jump's force (or after
//     leaving without a jump) double jumps, or dodges when |pitch| + |yaw| + |roll| >= the
//     threshold; either one only once until landing;
//   - the dodge acts for dodge_torque_time_s: its torque, and its z damping from the delay on
//     while the car falls or within the up time (air_dodge.md; RocketSim ends both then).
inline JumpTick PlanJumpTick(JumpState* s, const Controls& u, const JumpTiming& t,
                             double dt_s) {
  JumpTick tick;
  // The game reads the input at the start of a tick: a switch inside a tick acts from the next.
  const bool held = u.jump >= 1.0 - 1e-9 || (u.jump > 1e-9 && s->jump_held);
  const bool press = held && !s->jump_held;
  const double half_tick = 0.5 * dt_s;  // tolerance of the time comparisons (float ticks)
  if (s->jumping) {
    s->jumping = s->jump_time_s + half_tick < t.jump_min_time_s ||
                 (held && s->jump_time_s + half_tick < t.jump_max_time_s);
    if (!s->jumping) s->since_jump_s = 0.0;
  } else if (s->in_contact && press) {
    tick.jump_impulse = true;
    s->jumping = true;
    s->has_jumped = true;
    s->jump_time_s = 0.0;
  }
  if (s->in_contact && s->has_jumped && s->jump_time_s + half_tick >= t.contact_time_s)
    s->in_contact = false;
  tick.contact = s->in_contact;
  tick.rest = s->in_contact && !s->has_jumped;
  tick.jump_force = s->jumping;
  if (!s->in_contact && press && !tick.jump_impulse && !s->has_double_jumped &&
      !s->has_flipped && !s->jumping &&
      (!s->has_jumped || s->since_jump_s < t.double_jump_window_s)) {
    const double stick = std::abs(u.pitch) + std::abs(u.yaw) + std::abs(u.roll);
    if (stick >= t.dodge_input_threshold) {
      double f = -u.pitch, side = u.yaw + u.roll;
      const double n = std::sqrt(f * f + side * side);
      f = n > 0.0 ? f / n : 0.0;
      side = n > 0.0 ? side / n : 0.0;
      s->flip_forward = std::abs(f) > t.dodge_direction_deadzone ? f : 0.0;
      s->flip_side = std::abs(side) > t.dodge_direction_deadzone ? side : 0.0;
      s->has_flipped = true;
      s->flipping = true;
      s->flip_time_s = 0.0;
      tick.dodge_impulse = true;
    } else {
      s->has_double_jumped = true;
      tick.double_jump = true;
    }
  }
  if (s->flipping) {
    // The dodge acts (torque, z damping) for dodge_torque_time_s, then ends.
    tick.dodge_torque = s->flip_time_s <= t.dodge_torque_time_s;
    tick.z_damping_window =
        tick.dodge_torque && s->flip_time_s + half_tick >= t.dodge_z_damping_delay_s;
    tick.z_damping_always =
        tick.z_damping_window &&
        s->flip_time_s + half_tick < t.dodge_z_damping_delay_s + t.dodge_z_damping_up_time_s;
    tick.flip_forward = s->flip_forward;
    tick.flip_side = s->flip_side;
    if (!tick.dodge_torque) s->flipping = false;
    s->flip_time_s += dt_s;
  }
  if (s->jumping || s->has_jumped) s->jump_time_s += dt_s;
  if (s->has_jumped && !s->jumping) s->since_jump_s += dt_s;
  s->jump_held = held;
  return tick;
}

// Coefficients of the jump model: the aerial model's (air control, thrust, drift: what the car
// does once the wheels are off) and the jump's own. Flat layout (JSON names in brackets): the
// aerial layout's 11, then
//   block jump        [jump_impulse uu/s along up, jump_accel uu/s^2 along up while held,
//                      sticky_accel uu/s^2 along -up while the wheels touch,
//                      contact_drive_accel uu/s^2 along the nose per unit throttle at rest
//                      while the wheels touch (the ground drive during take-off, falling
//                      with speed: ContactDriveAccel)]
//   block double_jump [double_jump_impulse uu/s along up]
//   block dodge       [dodge_impulse uu/s forward/side, dodge_backward_impulse uu/s,
//                      dodge_torque_forward rad/s^2 about the pitch axis, dodge_torque_side
//                      rad/s^2 about the roll axis, dodge_z_damping fraction of vz per tick]
// No recording shows a double jump or a dodge (jumps.txt, freestyling.txt, data.txt: the
// double_jumped flag is never set): those blocks keep the game's values unless synthetic data
// or a new recording fits them.
template <typename T>
struct JumpCoeffs {
  enum Index {
    kJumpImpulse = AerialCoeffs<T>::kSize,
    kJumpAccel,
    kStickyAccel,
    kContactDriveAccel,
    kDoubleJumpImpulse,
    kDodgeImpulse,
    kDodgeBackwardImpulse,
    kDodgeTorqueForward,
    kDodgeTorqueSide,
    kDodgeZDamping,
    kSize
  };
  AerialCoeffs<T> air;
  T jump_impulse, jump_accel, sticky_accel, contact_drive_accel;
  T double_jump_impulse;
  T dodge_impulse, dodge_backward_impulse, dodge_torque_forward, dodge_torque_side,
      dodge_z_damping;
  JumpTiming timing;
  // Shape of the drive curve (not fitted; RocketSim's): uu/s, fraction, uu/s.
  double drive_fade_speed = 1400.0;
  double drive_fade_fraction = 0.1;
  double drive_cutoff_width = 10.0;

  static JumpCoeffs FromBlocks(const T* torque, const T* damping, const T* thrust,
                               const T* drift, const T* jump, const T* double_jump,
                               const T* dodge) {
    JumpCoeffs c;
    c.air = AerialCoeffs<T>::FromBlocks(torque, damping, thrust, drift);
    c.jump_impulse = jump[0];
    c.jump_accel = jump[1];
    c.sticky_accel = jump[2];
    c.contact_drive_accel = jump[3];
    c.double_jump_impulse = double_jump[0];
    c.dodge_impulse = dodge[0];
    c.dodge_backward_impulse = dodge[1];
    c.dodge_torque_forward = dodge[2];
    c.dodge_torque_side = dodge[3];
    c.dodge_z_damping = dodge[4];
    return c;
  }
  static JumpCoeffs FromArray(const T* flat) {
    return FromBlocks(flat + AerialCoeffs<T>::kTr, flat + AerialCoeffs<T>::kDr,
                      flat + AerialCoeffs<T>::kBoostAccel, flat + AerialCoeffs<T>::kDriftR,
                      flat + kJumpImpulse, flat + kDoubleJumpImpulse, flat + kDodgeImpulse);
  }
};

// Drive along the nose per unit throttle while the wheels touch at forward speed `speed`:
// the game's drive curve (RocketSim: 1 at rest, 0.1 at 1400 uu/s, 0 at 1410) times
// contact_drive_accel. jumps.txt: the rows in contact gain 8-11 uu/s at ~1000 uu/s (curve: 571
// uu/s^2 = 9.5 per row) and ~3.6 at ~1350 (curve: 211 = 3.5 per row).
template <typename T>
T ContactDriveAccel(const JumpCoeffs<T>& c, const T& speed) {
  if (speed < T(c.drive_fade_speed))
    return c.contact_drive_accel *
           (T(1.0) - T(1.0 - c.drive_fade_fraction) * speed / T(c.drive_fade_speed));
  const T cutoff = T(c.drive_fade_speed + c.drive_cutoff_width);
  if (speed < cutoff)
    return c.contact_drive_accel * T(c.drive_fade_fraction) * (cutoff - speed) /
           T(c.drive_cutoff_width);
  return T(0.0);
}

// The aerial layout followed by the jump blocks (defaults: the game's values).
const CoeffLayout& JumpLayout();

// The car with its jump state.
template <typename T>
struct JumpCarState {
  CarState<T> car;
  JumpState jump;
};

// One physics tick of dt_s seconds with inputs u. In contact (take-off): gravity, the sticky
// force along -up, the jump impulse and force along up, drive along the nose; the angular
// velocity is kept (no air control). Resting in contact before a jump, the surface cancels
// the forces along up. Off the surface: the aerial step (StepAerial, unchanged)
// after the tick's impulses and forces have changed the velocity and angular velocity
// (semi-implicit: the position moves with the new velocity); during a dodge the stick's pitch
// and roll are given to the dodge, not to air control.
template <typename T>
JumpCarState<T> StepJump(const JumpCoeffs<T>& c, const JumpCarState<T>& s, const Controls& u,
                         double dt_s, bool rotate_with_new_omega) {
  using std::abs;
  using std::sqrt;
  JumpCarState<T> next;
  next.jump = s.jump;
  const JumpTick tick = PlanJumpTick(&next.jump, u, c.timing, dt_s);
  const T dt(dt_s);
  const Vec3<T> up = s.car.theta.col(2);
  const Vec3<T> nose = s.car.theta.col(0);
  Vec3<T> v = s.car.v;
  if (tick.jump_impulse) v += up * c.jump_impulse;
  if (tick.double_jump) v += up * c.double_jump_impulse;
  if (tick.dodge_impulse) {
    // Along the horizontal forward and left axes; the impulse grows with the forward speed.
    const T forward_speed = v.dot(nose);
    const T h = sqrt(nose(0) * nose(0) + nose(1) * nose(1) + T(1e-12));
    const Vec3<T> fwd2(nose(0) / h, nose(1) / h, T(0.0));
    const Vec3<T> left2(-fwd2(1), fwd2(0), T(0.0));
    const T ratio = abs(forward_speed) / T(c.air.max_speed);
    const double f = tick.flip_forward;
    const bool backward = abs(forward_speed) < T(c.timing.dodge_backward_speed_uu_s)
                              ? f < 0.0
                              : ((f >= 0.0) != (forward_speed >= T(0.0)));
    const T forward_impulse =
        backward ? c.dodge_backward_impulse *
                       (T(1.0) + T(c.timing.dodge_backward_speed_scale - 1.0) * ratio)
                 : c.dodge_impulse * (T(1.0) + T(c.timing.dodge_forward_speed_scale - 1.0) * ratio);
    const T side_impulse =
        c.dodge_impulse * (T(1.0) + T(c.timing.dodge_side_speed_scale - 1.0) * ratio);
    v += fwd2 * (T(f) * forward_impulse) + left2 * (T(tick.flip_side) * side_impulse);
  }
  Vec3<T> accel = Vec3<T>::Zero();
  if (tick.jump_force) accel += up * c.jump_accel;
  if (tick.contact) {
    accel += nose * (ContactDriveAccel(c, abs(v.dot(nose))) * T(u.throttle) +
                     T(u.boost) * (c.air.boost_accel + c.air.throttle_accel));
    accel(2) += T(c.air.gravity_z);
    accel -= up * c.sticky_accel;
    if (tick.rest) accel -= up * accel.dot(up);  // the surface holds the car
    next.car.v = ClampNorm<T>(v + accel * dt, c.air.max_speed);
    next.car.x = s.car.x + next.car.v * dt;
    next.car.omega = s.car.omega;
    const Vec3<T> turn = s.car.omega * dt;
    next.car.theta = ExpSo3<T>(turn) * s.car.theta;
    return next;
  }
  CarState<T> pre = s.car;
  pre.v = v + accel * dt;
  Controls air_u = u;
  if (tick.dodge_torque) {
    // Dodge torque in the body frame, signed as the stick turns the car (pitch input turns it
    // with T_p < 0, roll with T_r < 0): forward dodge (stick forward, pitch < 0) nose down.
    // Holding pitch against the dodge's pitch torque cancels it (air_dodge.md).
    T pitch_torque = c.dodge_torque_forward * T(tick.flip_forward);
    const double cancel = tick.flip_forward > 0.0 ? 1.0 - std::clamp(u.pitch, 0.0, 1.0)
                                                  : 1.0 + std::clamp(u.pitch, -1.0, 0.0);
    pitch_torque *= T(cancel);
    const T roll_torque = -c.dodge_torque_side * T(tick.flip_side);
    const Vec3<T> torque_body(roll_torque, pitch_torque, T(0.0));
    pre.omega = s.car.omega + s.car.theta * torque_body * dt;
    air_u.pitch = 0.0;
    air_u.roll = 0.0;
  }
  if (tick.z_damping_window && (tick.z_damping_always || pre.v(2) < T(0.0)))
    pre.v(2) -= pre.v(2) * c.dodge_z_damping * T(dt_s * game::kTickRateHz);
  // StepAerial adds gravity, thrust and air control to pre's velocity; pre.x moves with the
  // result, so take the position from before the tick.
  next.car = StepAerial(c.air, pre, air_u, dt_s, rotate_with_new_omega);
  return next;
}

}  // namespace rlfit
