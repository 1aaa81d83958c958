// The powerslide (issue 11 part 2): the car on the flat floor with the handbrake. A handbrake
// level that ramps toward the input (the game's HandbrakeRate) and, while it is above 0, a
// bicycle model with force-limited lateral tyre forces at the front and rear axles, the rear
// grip scaled down by the handbrake. At level 0 the step is StepGround, unchanged.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "src/common/constants.h"
#include "src/models/car_state.h"
#include "src/models/ground.h"
#include "src/models/model.h"

namespace rlfit {

inline constexpr double kPowerslidePi = 3.14159265358979323846;

// Octane axle positions along the forward axis from the centre of mass, uu (magic_numbers.py
// PresetRestPosition: front wheels at +51.25, rear wheels at -33.75).
inline constexpr double kCarFrontAxleUu = 51.25;
inline constexpr double kCarRearAxleUu = 33.75;
// Handbrake ramp of the game (vehicle_sim.md HandbrakeRate): the output handbrake rises at
// 5 /s and falls at 2 /s toward the input (0.2 s to full, 0.5 s back to none).
inline constexpr double kHandbrakeRiseRate = 5.0;
inline constexpr double kHandbrakeFallRate = 2.0;
// Yaw moment of inertia over mass of a uniform box of the Octane hitbox's 118.0 x 84.2 uu
// (hitboxes.txt), (L^2 + W^2) / 12, uu^2: the value RocketSim derives from the hitbox.
inline constexpr double kCarYawGyrationSq = (118.0074 * 118.0074 + 84.1994 * 84.1994) / 12.0;

// Coefficients of the powerslide step (per unit mass: forces are accelerations). Flat layout:
//   block grip     [front_grip uu/s^2, rear_grip uu/s^2, slip_speed uu/s, slide_grip_fraction
//                  (1)]: the lateral force of an axle is
//                    -grip * (1 - (1 - slide_grip_fraction) r) * tanh(s / slip_speed),
//                  s the sideways velocity of the axle in its wheels' frame (the front wheels
//                  turned by the steering angle), r = |s| / (|s| + |u| + 1 uu/s) the slip ratio
//                  (u the velocity along the wheels): linear in the slip for small slips, capped
//                  at the grip (friction x load share), and down to slide_grip_fraction of it
//                  when the wheel slides sideways (game LatFrictionCurve: 1 at ratio 0, 0.2 at 1)
//   block handbrake [handbrake_rear_factor (1): the rear grip at full handbrake over the rear
//                  grip without (game HandbrakeLatFrictionCurve 0.1, the lateral friction's
//                  factor while the handbrake is held); the grips above are those at full
//                  handbrake, the rear one divided by h + (1 - h) handbrake_rear_factor at
//                  level h (the factor shows only while the level ramps, the bicycle running
//                  only at h > 0); handbrake_drive_scale (1): the wheels' drive (throttle)
//                  at full handbrake over that without (the rear wheels lose longitudinal
//                  grip: game HandbrakeLongFrictionCurve 0.5-0.9); handbrake_brake_scale (1):
//                  the same for braking and coasting (boost, a thrust on the body, unchanged)]
//   block steer    [handbrake_steer_0, handbrake_steer_2500] rad: the front wheels' angle at
//                  full steer and full handbrake, at forward speed 0 and 2500 uu/s, linear
//                  between (game HandbrakeSteerAngleCurve 22.09 and 7.17 degrees); at level h
//                  the angle is h of it plus 1 - h of the ground one, atan(kappa(|v_f|) L)
//   block yaw      [yaw_gyration_sq uu^2: yaw inertia over mass; yaw acceleration =
//                  (a F_front,lat - b F_rear) / yaw_gyration_sq, a, b the axle arms]
//   block drive    [front_drive_share (1): the share of the wheels' drive acceleration (the
//                  throttle's, boost implying full throttle, as GroundForwardSpeed) that acts
//                  at the front wheels along their steered direction: its sideways part,
//                  sin(delta) front_drive_share drive, pushes the front axle sideways and turns
//                  the car (four-wheel drive: half of the drive at the front), and forward only
//                  cos(delta) of it drives the car (the ground model's drive less
//                  (1 - cos(delta)) front_drive_share drive). Measured: the one-row yaw acceleration
//                  the bicycle without it misses on ground_driving_handbrake correlates with
//                  steer x throttle (NOTES "Powerslide")]
// Not fitted: the axle arms and the handbrake ramp rates (game values above).
template <typename T>
struct PowerslideCoeffs {
  enum Index {
    kFrontGrip,
    kRearGrip,
    kSlipSpeed,
    kSlideGripFraction,
    kHandbrakeRearFactor,
    kHandbrakeDriveScale,
    kHandbrakeBrakeScale,
    kHandbrakeSteer0,
    kHandbrakeSteer2500,
    kYawGyrationSq,
    kFrontDriveShare,
    kSize
  };
  T front_grip, rear_grip, slip_speed, slide_grip_fraction;
  T handbrake_rear_factor, handbrake_drive_scale, handbrake_brake_scale;
  T handbrake_steer_0, handbrake_steer_2500;
  T yaw_gyration_sq;
  T front_drive_share;
  double front_arm = kCarFrontAxleUu;   // uu ahead of the centre
  double rear_arm = kCarRearAxleUu;     // uu behind the centre
  double rise_rate = kHandbrakeRiseRate;  // 1/s
  double fall_rate = kHandbrakeFallRate;  // 1/s

  // From the blocks in layout order: grip[4], handbrake[3], steer[2], yaw[1], drive[1].
  static PowerslideCoeffs FromBlocks(const T* grip, const T* handbrake, const T* steer,
                                     const T* yaw, const T* drive) {
    PowerslideCoeffs c;
    c.front_grip = grip[0];
    c.rear_grip = grip[1];
    c.slip_speed = grip[2];
    c.slide_grip_fraction = grip[3];
    c.handbrake_rear_factor = handbrake[0];
    c.handbrake_drive_scale = handbrake[1];
    c.handbrake_brake_scale = handbrake[2];
    c.handbrake_steer_0 = steer[0];
    c.handbrake_steer_2500 = steer[1];
    c.yaw_gyration_sq = yaw[0];
    c.front_drive_share = drive[0];
    return c;
  }
  static PowerslideCoeffs FromArray(const T* flat) {
    return FromBlocks(flat + kFrontGrip, flat + kHandbrakeRearFactor, flat + kHandbrakeSteer0,
                      flat + kYawGyrationSq, flat + kFrontDriveShare);
  }
};

inline const CoeffLayout& PowerslideLayout() {
  static const CoeffLayout layout{
      {"front_grip", "rear_grip", "slip_speed", "slide_grip_fraction", "handbrake_rear_factor",
       "handbrake_drive_scale", "handbrake_brake_scale", "handbrake_steer_0",
       "handbrake_steer_2500", "yaw_gyration_sq", "front_drive_share"},
      {"uu/s^2", "uu/s^2", "uu/s", "1", "1", "1", "1", "rad", "rad", "uu^2", "1"},
      // Seeds: the grips share the ~4500 uu/s^2 of centripetal acceleration the ground model
      // reaches at full steer and 2300 uu/s (kappa_2300 v^2) in proportion to the static load
      // (rear b/L, front a/L of the weight sits on the other axle: front 0.4, rear 0.6); slip
      // speed 100 uu/s; the game's LatFrictionCurve 0.2 at full slide and 0.1 handbrake lateral
      // factor; drive and brakes unchanged; the game's HandbrakeSteerAngleCurve; half the drive
      // at the front wheels (four-wheel drive).
      {0.4 * 4500.0, 0.6 * 4500.0, 100.0, 0.2, 0.1, 1.0, 1.0, 22.0869 * kPowerslidePi / 180.0,
       7.17393 * kPowerslidePi / 180.0, kCarYawGyrationSq, 0.5},
      {{"grip", 0, 4}, {"handbrake", 4, 3}, {"steer", 7, 2}, {"yaw", 9, 1}, {"drive", 10, 1}},
      // Bounds.
      {// Grips: lateral accelerations up to 4 g-equivalents of the car's 3600 uu/s^2 turn.
       {100.0, 15000.0},  // front_grip
       {100.0, 15000.0},  // rear_grip
       // Slip speed: from 2 uu/s (a tick's worth of grip, stiff) to 5000 (twice the top speed:
       // a tyre linear in the slip, viscous, over every slip the car reaches).
       {2.0, 5000.0},
       {0.0, 1.0},  // slide_grip_fraction: sliding never grips more than rolling
       // handbrake_rear_factor: the handbrake never adds grip; at least 1/100 (the rear grip
       // without handbrake at most 100x the one with it).
       {0.01, 1.0},
       {0.0, 2.0},  // handbrake_drive_scale
       {0.0, 2.0},  // handbrake_brake_scale
       // Steering angles: 0 to 60 degrees (the game's largest is 30).
       {0.0, kPowerslidePi / 3.0},  // handbrake_steer_0
       {0.0, kPowerslidePi / 3.0},  // handbrake_steer_2500
       // Yaw inertia over mass: from a point at the axles' mean arm squared / 10 to 10x the box.
       {100.0, 10.0 * kCarYawGyrationSq},
       // front_drive_share: none to all of the drive at the front wheels.
       {0.0, 1.0}},
      // The step at handbrake level 0 (StepPowerslide is StepGround bit for bit there).
      {{"ground", &GroundLayout()}}};
  return layout;
}

// The car with its handbrake level (the game's OutputHandbrake, 0..1).
template <typename T>
struct PowerslideState {
  CarState<T> body;
  double handbrake = 0.0;  // depends on the inputs alone: no derivative
};

// Next handbrake level after dt_s toward the input `target` (0..1; a fraction when the input
// switched within the step): up by at most rise_rate dt, down by at most fall_rate dt.
template <typename T>
double NextHandbrakeLevel(const PowerslideCoeffs<T>& c, double level, double target,
                          double dt_s) {
  if (target > level) return std::min(target, level + c.rise_rate * dt_s);
  return std::max(target, level - c.fall_rate * dt_s);
}

// One physics step of dt_s with inputs u (u.handbrake the handbrake input).
//   1. level h moves toward u.handbrake (NextHandbrakeLevel). If the new level is 0 (and so
//      was the old one) the step is StepGround with the ground coefficients, exactly.
//   2. Otherwise, in the car's planar frame (v_f forward, v_l left, w = w_z):
//        steering angle delta = steer * (h hb(|v_f|) + (1 - h) atan(kappa(|v_f|) L)), L = a + b
//          (the ground model's curvature is a kinematic bicycle's tan(delta) / L), hb linear
//          from handbrake_steer_0 at 0 to handbrake_steer_2500 at 2500 uu/s, constant beyond;
//        front slip s_f = cos(delta) (v_l + a w) - sin(delta) v_f, rear s_r = v_l - b w;
//        F_f = -front_grip g(s_f, u_f), u_f = cos(delta) v_f + sin(delta) (v_l + a w),
//        F_r = -rear_grip / (h + (1 - h) handbrake_rear_factor) g(s_r, v_f),
//        g(s, u) = (1 - (1 - slide_grip_fraction) |s| / (|s| + |u| + 1)) tanh(s / slip_speed);
//        D = front_drive_share x the wheels' drive (throttle t, boost held: t = 1; only when
//          driving, not braking or coasting; GroundDriveAccel(|v_f|) t, the backward scale when
//          t < 0, times the drive scale below), the front wheels' sideways share sin(delta) D;
//        w   += (a cos(delta) F_f - b F_r + a sin(delta) D) / yaw_gyration_sq dt;
//        heading turns by w dt (new or average rate, as StepGround);
//        in the new heading: v_l += (cos(delta) F_f + F_r + sin(delta) D) dt,
//        v_f by GroundForwardSpeed (the wheels' drive scaled by 1 - h (1 - handbrake_drive_scale),
//          braking and coasting by 1 - h (1 - handbrake_brake_scale), the front force's component
//          -sin(delta) F_f and -(1 - cos(delta)) D as extra acceleration); |v| <= max_speed;
//   3. position, height and the reported vz as StepGround.
// `decay` is the ground step's GroundDecayFactors(g, dt_s), for step 1's StepGround: a caller
// chaining many steps with one g and dt_s computes them once (StepCar's callers, the replay's
// rows); the overload without it computes them on every step at level 0. The same values.
template <typename T>
PowerslideState<T> StepPowerslide(const GroundCoeffs<T>& g, const PowerslideCoeffs<T>& c,
                                  const PowerslideState<T>& s, const Controls& u, double dt_s,
                                  const GroundDecay<T>& decay, bool rotate_with_new_omega) {
  using std::atan;
  using std::cos;
  using std::sin;
  using std::sqrt;
  using std::tanh;
  PowerslideState<T> next;
  const double level0 = s.handbrake;
  const double level = NextHandbrakeLevel(c, level0, u.handbrake, dt_s);
  next.handbrake = level;
  if (level == 0.0 && level0 == 0.0) {
    next.body = StepGround(g, s.body, u, dt_s, decay, rotate_with_new_omega);
    return next;
  }
  const T dt(dt_s);
  const T h(level);
  auto planar_axes = [](const Mat3<T>& theta, Vec3<T>* f, Vec3<T>* l) {
    const T n = sqrt(theta(0, 0) * theta(0, 0) + theta(1, 0) * theta(1, 0));
    *f = Vec3<T>(theta(0, 0) / n, theta(1, 0) / n, T(0));
    *l = Vec3<T>(-(*f)(1), (*f)(0), T(0));
  };
  Vec3<T> f, l;
  planar_axes(s.body.theta, &f, &l);
  const T v_f = s.body.v.dot(f);
  const T v_l = s.body.v.dot(l);
  const T w0 = s.body.omega(2);
  const T a(c.front_arm), b(c.rear_arm);
  const T speed_f = v_f < T(0) ? T(-v_f) : v_f;
  const T ground_angle = atan(GroundCurvature(g, speed_f) * (a + b));
  const T speed_2500 = speed_f < T(2500.0) ? speed_f / T(2500.0) : T(1);
  const T handbrake_angle =
      c.handbrake_steer_0 + (c.handbrake_steer_2500 - c.handbrake_steer_0) * speed_2500;
  const T delta = T(u.steer) * (h * handbrake_angle + (T(1) - h) * ground_angle);
  const T cd = cos(delta), sd = sin(delta);
  const T slip_f = cd * (v_l + a * w0) - sd * v_f;
  const T slip_r = v_l - b * w0;
  const T roll_f = cd * v_f + sd * (v_l + a * w0);  // velocity along the front wheels
  auto curve = [&](const T& slip, const T& roll) {
    const T as = slip < T(0) ? T(-slip) : slip;
    const T ar = roll < T(0) ? T(-roll) : roll;
    const T ratio = as / (as + ar + T(1));
    return (T(1) - (T(1) - c.slide_grip_fraction) * ratio) * tanh(slip / c.slip_speed);
  };
  const T force_f = -c.front_grip * curve(slip_f, roll_f);
  const T rear_scale = T(1) / (h + (T(1) - h) * c.handbrake_rear_factor);
  const T force_r = -c.rear_grip * rear_scale * curve(slip_r, v_f);
  const T drive_scale = T(1) - h * (T(1) - c.handbrake_drive_scale);
  const T brake_scale = T(1) - h * (T(1) - c.handbrake_brake_scale);
  // The front wheels' drive (GroundForwardSpeed's throttle case; boost implies full throttle).
  const double throttle = u.boost + (1.0 - u.boost) * u.throttle;
  T drive_front(0);
  const bool braking = speed_f > T(g.stop_speed) && T(throttle) * v_f < T(0);
  if (std::abs(throttle) >= g.throttle_deadzone && !braking) {
    const T back = throttle < 0.0 ? g.backward_throttle_scale : T(1);
    drive_front = c.front_drive_share * T(throttle) * back * GroundDriveAccel(g, speed_f) *
                  drive_scale;
  }
  const T side_drive = sd * drive_front;
  const T w = w0 + (a * cd * force_f - b * force_r + a * side_drive) / c.yaw_gyration_sq * dt;
  next.body.omega = Vec3<T>(T(0), T(0), w);
  const T turn = (rotate_with_new_omega ? w : T(0.5) * (w0 + w)) * dt;
  next.body.theta = RotateAboutZ<T>(turn, s.body.theta);

  Vec3<T> f1, l1;
  planar_axes(next.body.theta, &f1, &l1);
  const T v_f1 = s.body.v.dot(f1);
  const T v_l1 = s.body.v.dot(l1) + (cd * force_f + force_r + side_drive) * dt;
  // The front wheels' drive acts along their steered direction: forward only cos(delta) of it.
  const T extra = -sd * force_f - (T(1) - cd) * drive_front;
  auto forward = [&](bool boost) {
    return GroundForwardSpeed(g, v_f1, u.throttle, boost, extra, dt_s, drive_scale, brake_scale);
  };
  T v_fwd = v_f1;
  if (u.boost < 1.0) v_fwd = forward(false);
  if (u.boost > 0.0) v_fwd = T(u.boost) * forward(true) + T(1.0 - u.boost) * v_fwd;
  next.body.v = ClampNorm<T>(f1 * v_fwd + l1 * v_l1, g.max_speed);
  next.body.x = s.body.x + Vec3<T>(s.body.v(0), s.body.v(1), T(0)) * dt;
  next.body.x(2) = T(g.rest_height);
  next.body.v(2) = T(g.rest_reported_vz);
  return next;
}
template <typename T>
PowerslideState<T> StepPowerslide(const GroundCoeffs<T>& g, const PowerslideCoeffs<T>& c,
                                  const PowerslideState<T>& s, const Controls& u, double dt_s,
                                  bool rotate_with_new_omega) {
  return StepPowerslide(g, c, s, u, dt_s, GroundDecayFactors(g, dt_s), rotate_with_new_omega);
}

}  // namespace rlfit
