// The car on the flat floor as the game's vehicle drives it (issue 37): four wheels, each
// pushing the body with its own tyre impulse every tick (sideways: a fraction of the impulse
// that would stop the wheel's sideways slip, falling as the wheel slides; lengthways: the
// drive, the brake or the coasting friction), the front wheels steered by the game's steer
// angle, the body turning under the impulses' moments. A candidate for the `ground` model,
// replayed and fitted as the model `vehicle` on the same rows.
#pragma once

#include <cmath>

#include "src/common/constants.h"
#include "src/common/inline.h"
#include "src/models/car_state.h"
#include "src/models/model.h"

namespace rlfit {

// The game's handbrake (powerslide), read from RocketSim (ZealanL/RocketSim v2.2, MIT;
// ../shared/refs) for what the game does. Not fitted.
// The handbrake level rises at 5 /s while the input is held and falls at 2 /s after, within
// [0, 1]: src/RLConst.h POWERSLIDE_RISE_RATE, POWERSLIDE_FALL_RATE (Car::_UpdateWheels).
inline constexpr double kVehicleHandbrakeRiseRate = 5.0;  // 1/s
inline constexpr double kVehicleHandbrakeFallRate = 2.0;  // 1/s
// Front wheels' angle at full steer and full handbrake against forward speed, rad at uu/s:
// src/RLConst.h POWERSLIDE_STEER_ANGLE_FROM_SPEED_CURVE; at level h the angle is the steer
// curve's moved h of the way to it (Car::_UpdateWheels).
inline constexpr double kVehicleHandbrakeSteerSpeeds[2] = {0.0, 2500.0};
inline constexpr double kVehicleHandbrakeSteerAngles[2] = {0.39235, 0.12610};
// Each wheel's sideways friction at full handbrake over that without: src/RLConst.h
// HANDBRAKE_LAT_FRICTION_FACTOR_CURVE (one point: 0.1 at every slip ratio).
inline constexpr double kVehicleHandbrakeLatFactor = 0.1;
// Each wheel's lengthways friction (drive, brake and rolling friction) at full handbrake against
// its slip ratio: src/RLConst.h HANDBRAKE_LONG_FRICTION_FACTOR_CURVE (0.5 at ratio 0, 0.9 at 1).
inline constexpr double kVehicleHandbrakeLongRatios[2] = {0.0, 1.0};
inline constexpr double kVehicleHandbrakeLongFactors[2] = {0.5, 0.9};

// The largest roll and pitch rate, rad/s, that StepVehicle keeps from a rollout's start as
// reported rather than turning (step 5). The rates the recordings report on the flat floor, roll
// and pitch staying constant, are at most 0.047 rad/s over the covered rows of
// car_control/ground_driving_no_handbrake and 0.026 over ground_driving_handbrake; one start
// above it (0.076, the row after a landing, driving.txt) is turning and falls to the reported
// value within two rows (decision 0131).
inline constexpr double kVehicleReportedTiltRateMax = 0.05;  // rad/s

// Coefficients of the vehicle step (per unit mass: impulses are velocity changes). Flat layout
// (JSON names in brackets):
//   block drive    [throttle_accel uu/s^2: the four wheels' drive at rest and full throttle
//                  (game 1600: RocketSim src/RLConst.h THROTTLE_TORQUE_AMOUNT = 400 x mass,
//                  over 4 wheels, x 4); brake_accel uu/s^2: the four wheels' braking (game
//                  3500: BRAKE_TORQUE_AMOUNT); coast_brake (1): the braking while coasting, a
//                  fraction of brake_accel (game COASTING_BRAKE_FACTOR 0.15); boost_accel
//                  uu/s^2 (game 991.67: BOOST_ACCEL_GROUND)]
//   block tyre     [lateral_rate_front, lateral_rate_rear 1/s: each wheel's sideways impulse per
//                  tick is rate x dt of the impulse that would stop its sideways slip (the
//                  contact's velocity along the wheel's axle, against the body's mass and yaw
//                  inertia at that point); game 12 /s (RocketSim btVehicleRL calcFrictionImpulses:
//                  Bullet's bilateral contact damping 0.2 x the friction scale mass / 3);
//                  slide_grip (1): the sideways grip when the wheel slides fully sideways, the
//                  grip falling linearly from 1 at no slide (game LAT_FRICTION_CURVE 1 -> 0.2)]
//   block steer    [steer_scale (1): multiplies the game's steer angle curve
//                  (STEER_ANGLE_FROM_SPEED_CURVE, kVehicleSteerAngle*)]
//   block inertia  [yaw_gyration_sq uu^2: yaw inertia over mass (game: the Octane hitbox box,
//                  (120.507^2 + 86.6994^2) / 12 = 1836.6)]
// Not fitted: the wheel positions, the curves' shapes, the rolling-friction gain, the stop speed
// and the handbrake's ramp and friction factors (game values).
template <typename T>
struct VehicleCoeffs {
  enum Index {
    kThrottleAccel,
    kBrakeAccel,
    kCoastBrake,
    kBoostAccel,
    kLateralRateFront,
    kLateralRateRear,
    kSlideGrip,
    kSteerScale,
    kYawGyrationSq,
    kSize
  };
  T throttle_accel, brake_accel, coast_brake, boost_accel;
  T lateral_rate_front, lateral_rate_rear, slide_grip;
  T steer_scale;
  T yaw_gyration_sq;
  // Not fitted.
  double roll_gyration_sq = game::kOctaneRollGyrationSq;    // uu^2, inertia about forward / m
  double pitch_gyration_sq = game::kOctanePitchGyrationSq;  // uu^2, inertia about left / m
  double contact_below_uu = game::kCarRestHeight;  // contact points below the centre, uu
  double rolling_gain = game::kVehicleRollingGain;  // 1/s, see StepVehicle
  double stop_speed = game::kCarStopSpeed;           // uu/s
  double throttle_deadzone = game::kVehicleThrottleDeadzone;
  double slide_min_speed = game::kVehicleSlideMinSpeed;  // uu/s
  double max_speed = game::kCarMaxSpeed;
  double rest_height = game::kCarRestHeight;
  double rest_reported_vz = game::kCarRestReportedVz;
  double handbrake_rise_rate = kVehicleHandbrakeRiseRate;  // 1/s
  double handbrake_fall_rate = kVehicleHandbrakeFallRate;  // 1/s
  double handbrake_lat_factor = kVehicleHandbrakeLatFactor;

  static VehicleCoeffs FromBlocks(const T* drive, const T* tyre, const T* steer,
                                  const T* inertia) {
    VehicleCoeffs c;
    c.throttle_accel = drive[0];
    c.brake_accel = drive[1];
    c.coast_brake = drive[2];
    c.boost_accel = drive[3];
    c.lateral_rate_front = tyre[0];
    c.lateral_rate_rear = tyre[1];
    c.slide_grip = tyre[2];
    c.steer_scale = steer[0];
    c.yaw_gyration_sq = inertia[0];
    return c;
  }
  static VehicleCoeffs FromArray(const T* flat) {
    return FromBlocks(flat + kThrottleAccel, flat + kLateralRateFront, flat + kSteerScale,
                      flat + kYawGyrationSq);
  }
};

inline const CoeffLayout& VehicleLayout() {
  static const CoeffLayout layout{
      {"throttle_accel", "brake_accel", "coast_brake", "boost_accel", "lateral_rate_front",
       "lateral_rate_rear", "slide_grip", "steer_scale", "yaw_gyration_sq"},
      {"uu/s^2", "uu/s^2", "1", "uu/s^2", "1/s", "1/s", "1", "1", "uu^2"},
      {game::kThrottleAccel, game::kBrakeAccel, game::kVehicleCoastBrake,
       game::kBoostAccelGround, game::kVehicleLateralRate, game::kVehicleLateralRate,
       game::kVehicleSlideGrip, 1.0, game::kOctaneYawGyrationSq},
      {{"drive", 0, 4}, {"tyre", 4, 3}, {"steer", 7, 1}, {"inertia", 8, 1}},
      // Bounds.
      {// Drive and brakes push the way the game's do (>= 0), at most 3x the game's values;
       // coasting never brakes harder than braking.
       {0.0, 3.0 * game::kThrottleAccel},
       {0.0, 3.0 * game::kBrakeAccel},
       {0.0, 1.0},
       {0.0, 2.0 * game::kBoostAccelGround},
       // Sideways impulse rates: 0 is ice; at 120 /s a wheel stops its slip within one tick.
       {0.0, game::kTickRateHz},
       {0.0, game::kTickRateHz},
       {0.0, 1.0},  // slide_grip: a sliding wheel never grips more than a rolling one
       // The steer angle within a factor 2 of the game's curve.
       {0.5, 2.0},
       // Yaw inertia over mass: from a tenth of the hitbox box's to 10x it.
       {0.1 * game::kOctaneYawGyrationSq, 10.0 * game::kOctaneYawGyrationSq}}};
  return layout;
}

// Piecewise-linear game curve through (x_i, y_i), constant beyond its ends.
template <typename T, int N>
T VehicleCurve(const double (&xs)[N], const double (&ys)[N], const T& x) {
  if (x <= T(xs[0])) return T(ys[0]);
  for (int i = 0; i + 1 < N; ++i)
    if (x < T(xs[i + 1]))
      return T(ys[i]) + (x - T(xs[i])) * T((ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]));
  return T(ys[N - 1]);
}

// What the wheels do in a tick, decided from the state and inputs of the tick before (the
// game decides them after computing the tick's tyre impulses, which therefore use the last
// tick's: RocketSim Car::_PreTickUpdate, updateVehicleFirst before _UpdateWheels).
template <typename T>
struct WheelSettings {
  T steer_angle = T(0);   // rad, front wheels, positive turns left
  T drive = T(0);         // uu/s^2 along each wheel's heading, the four wheels' sum
  T brake = T(0);         // uu/s^2, the four wheels' sum of the largest braking
  // Handbrake level 0..1 the wheels act with (the game's handbrakeVal; it depends on the inputs
  // alone: no derivative). Before the wheels are set: the level at the rollout's start.
  double handbrake = 0.0;
  // Each wheel's slip ratio when the wheels were decided (front left, front right, rear left,
  // rear right; 0 below slide_min_speed): the game reads its tyres' friction off the curves
  // then, so a wheel grips with the ratio of the tick before (decision 0144).
  T slip_ratio[4] = {T(0), T(0), T(0), T(0)};
  bool set = false;       // false: not decided yet (a rollout's first tick decides its own)
};

// The handbrake level one tick of dt_s after `level` with the handbrake input `input` (held when
// above 0.5, the game's input being a button): up at handbrake_rise_rate while held, down at
// handbrake_fall_rate after, within [0, 1] (RocketSim Car::_UpdateWheels).
template <typename T>
double NextVehicleHandbrake(const VehicleCoeffs<T>& c, double level, double input, double dt_s) {
  const double next = input > 0.5 ? level + c.handbrake_rise_rate * dt_s
                                   : level - c.handbrake_fall_rate * dt_s;
  return next < 0.0 ? 0.0 : (next > 1.0 ? 1.0 : next);
}

// The car and its wheels' settings. FromSample: a rollout's start, the recorded car, its wheels
// decided on its first tick.
template <typename T>
struct VehicleState {
  CarState<T> body;
  WheelSettings<T> wheels;
};

// The wheel settings for inputs u on a car rolling at forward speed v_f with the handbrake at
// `level` (RocketSim Car::_UpdateWheels): boost makes the throttle 1. With the handbrake input
// held the throttle drives whatever the motion and nothing brakes. Without it, a throttle
// against the motion above stop_speed brakes fully with no drive; a released throttle (below
// the deadzone) coasts with coast_brake x brake_accel, or brakes fully below stop_speed. The
// drive follows the game's DriveTorqueCurve (1 at rest, 0.1 at 1400 uu/s, 0 from 1410). The
// steer angle is the game's steer curve, moved `level` of the way to the handbrake's curve.
// Always inlined: out of line its call and the copy of its result cost StepCar's floor tick 7
// instructions (bench/perf_guard car_step_floor).
template <typename T>
RLFIT_ALWAYS_INLINE WheelSettings<T> DecideWheels(const VehicleCoeffs<T>& c, const T& v_f,
                                                  const Controls& u, double level) {
  using std::abs;
  WheelSettings<T> w;
  w.set = true;
  w.handbrake = level;
  const T speed = v_f < T(0) ? T(-v_f) : v_f;
  const double throttle = u.boost > 0.5 ? 1.0 : u.throttle;
  if (u.handbrake > 0.5) {
    w.drive = T(throttle) * c.throttle_accel *
              VehicleCurve(game::kDriveCurveSpeeds, game::kDriveCurveFactors, speed);
  } else if (std::abs(throttle) >= c.throttle_deadzone) {
    const bool against = (throttle > 0.0) != (v_f > T(0));
    if (speed > T(c.stop_speed) && against) {
      w.brake = c.brake_accel;
    } else {
      w.drive = T(throttle) * c.throttle_accel *
                VehicleCurve(game::kDriveCurveSpeeds, game::kDriveCurveFactors, speed);
    }
  } else {
    w.brake = speed < T(c.stop_speed) ? c.brake_accel : c.brake_accel * c.coast_brake;
  }
  T angle = VehicleCurve(game::kSteerAngleSpeeds, game::kSteerAngles, speed);
  if (level > 0.0)
    angle += (VehicleCurve(kVehicleHandbrakeSteerSpeeds, kVehicleHandbrakeSteerAngles, speed) -
              angle) * T(level);
  w.steer_angle = T(u.steer) * c.steer_scale * angle;
  return w;
}

// One tick of dt_s with inputs u, the car on the flat floor (z = 0 under its wheels), as the
// game's vehicle: in the car's planar frame (forward f, left l, the yaw rate w about +z),
//   1. the wheels act with the settings decided last tick (WheelSettings: steer angle, drive,
//      brake, handbrake level and each wheel's slip ratio; the first tick of a rollout decides
//      its own from its state, inputs and the start's handbrake level);
//   2. each wheel i at (a_i, b_i) (kVehicleWheelX/Y: front wheels 51.25 uu ahead, 25.9 to
//      the side; rear 33.75 behind, 29.5 to the side; contact points contact_below_uu below the
//      centre) with heading h_i (f turned by the steer angle for the front wheels) and axle
//      e_i = z x h_i: contact velocity c_i = v + w z x r_i; the sideways impulse
//        J_lat = -rate dt grip_i (c_i . e_i) / K_i,  K_i = 1 + |r_i x e_i|^2 weighted by the
//        inverse inertias (yaw_gyration_sq about z; roll and pitch: the Octane hitbox's),
//      grip_i = 1 - (1 - slide_grip) s_i (LAT_FRICTION_CURVE of the slip ratio), s_i the
//      wheel's slip ratio |c_i . e_i| / (|c_i . e_i| + |c_i . h_i|) (0 when |c_i . e_i| <=
//      slide_min_speed) read when the wheels were decided, at the start of the tick before;
//      the lengthways impulse: the drive, drive dt / 4 along h_i, or, without drive, the
//      rolling friction clamp(-rolling_gain dt (c_i . h_i), -brake dt / 4, brake dt / 4);
//      with the handbrake at level h > 0, the sideways impulse times 1 + (handbrake_lat_factor
//      - 1) h and the lengthways one times 1 + (f(s_i) - 1) h, f the game's handbrake
//      lengthways factor (0.5 at slip ratio s_i = 0, 0.9 at 1; RocketSim Car::_UpdateWheels);
//   3. all impulses, computed from the state at the start of the tick, are applied together:
//      v += sum J_i, w += sum (r_i x J_i) . z / yaw_gyration_sq; boost adds boost_accel dt
//      along f (a force on the centre); then the next tick's wheels are decided (1.) as the
//      game decides them before its physics step (RocketSim Car::_PreTickUpdate runs the
//      friction impulses with the last settings, then Car::_UpdateWheels): from this tick's
//      inputs, the forward speed and slip ratios at the tick's start, the handbrake level
//      moved one tick toward the input (NextVehicleHandbrake);
//   4. heading turns by w dt, |v| <= max_speed, |w| <= the car's 5.5 rad/s; the position moves
//      with the velocity from before the tick (the recorded position trails the recorded
//      velocity by one tick, see StepGround), the car stays on the plane (z = rest_height,
//      roll and pitch kept, the reported vz = rest_reported_vz as StepGround);
//   5. with keep_reported_tilt_rate, the angular velocity's horizontal part (the roll and pitch
//      rates) is the start's, kept in the car's frame and so turned with the heading, when it
//      is at most kVehicleReportedTiltRateMax; else 0. The recordings report such rates on the
//      flat floor while roll and pitch stay constant (a reporting convention, as
//      rest_reported_vz): about 0.0094 rad/s about the nose and 0.0047 about the left axis in
//      most of car_control/ground_driving_no_handbrake, other values in other sessions,
//      constant within a recording (decision 0131). Without keep_reported_tilt_rate (the car
//      model's floor tick, whose take-off would carry them into the jump and aerial steps)
//      the horizontal part is 0.
// |x| of a wheel's slip or roll speed. For double fabs (one instruction); it differs from the
// generic form only for x = -0, where the generic one keeps -0: both are read only through
// "> slide_min_speed" (> 0) and, past it, beside a nonzero |slip|, where the sign of a zero
// changes no result.
template <typename T>
inline T WheelAbs(const T& x) {
  return x < T(0) ? T(-x) : x;
}
inline double WheelAbs(const double& x) { return std::fabs(x); }

// One wheel's impulses of StepVehicle's step 2 (see there), added to the sums dv_f, dv_l, dw.
// kFront: a front wheel (steered: heading (cs, sn) in the car's frame), else a rear one
// (heading (1, 0)); kLeft: the wheel on the left. Compile-time, so each of the four calls
// is straight code with the wheel's position folded in (decision 0097: the loop over four
// wheels with these as run-time choices cost 714 instructions a tick, 534 unrolled); the
// arithmetic is the loop's, operation for operation, so the results are the same bit for bit.
template <typename T, bool kFront, bool kLeft>
inline void AddWheelImpulse(const VehicleCoeffs<T>& c, const WheelSettings<T>& wheels,
                            const T& v_f, const T& v_l, const T& w, const T& cs, const T& sn,
                            const T& dt, const T* last_ratio, T* dv_f, T* dv_l, T* dw,
                            T* next_ratio) {
  constexpr int kWheel = (kFront ? 0 : 2) + (kLeft ? 0 : 1);
  const T a(game::kVehicleWheelX[kFront ? 0 : 1]);
  const T b(kLeft ? game::kVehicleWheelY[kFront ? 0 : 1] : -game::kVehicleWheelY[kFront ? 0 : 1]);
  const T hz(c.contact_below_uu);
  // Heading and axle in the car's frame (forward, left).
  const T h_f = kFront ? cs : T(1), h_l = kFront ? sn : T(0);
  const T e_f = -h_l, e_l = h_f;
  // Contact velocity: v + w z x r, r = (a, b).
  const T c_f = v_f - w * b, c_l = v_l + w * a;
  const T slip = c_f * e_f + c_l * e_l;  // along the axle
  const T roll = c_f * h_f + c_l * h_l;  // along the heading
  // r x e with r = (a, b, -hz), e = (e_f, e_l, 0): (hz e_l, -hz e_f, a e_l - b e_f).
  const T m_roll = hz * e_l, m_pitch = -hz * e_f, m_yaw = a * e_l - b * e_f;
  const T k = T(1) + m_roll * m_roll / T(c.roll_gyration_sq) +
              m_pitch * m_pitch / T(c.pitch_gyration_sq) + m_yaw * m_yaw / c.yaw_gyration_sq;
  const T abs_slip = WheelAbs(slip);
  const T abs_roll = WheelAbs(roll);
  // This tick's slip ratio, which the next tick's wheels grip with; this tick's wheels grip with
  // the one read when they were decided (last_ratio), or, on a rollout's first tick, which
  // decides its own wheels (last_ratio null), with this one.
  next_ratio[kWheel] =
      abs_slip > T(c.slide_min_speed) ? T(abs_slip / (abs_slip + abs_roll)) : T(0);
  const T& ratio = last_ratio ? last_ratio[kWheel] : next_ratio[kWheel];
  T grip = T(1) - (T(1) - c.slide_grip) * ratio;
  T long_factor(1);
  if (wheels.handbrake > 0.0) {
    const T h(wheels.handbrake);
    grip *= T(1) + (T(c.handbrake_lat_factor) - T(1)) * h;
    long_factor = T(1) + (VehicleCurve(kVehicleHandbrakeLongRatios, kVehicleHandbrakeLongFactors,
                                       ratio) - T(1)) * h;
  }
  const T rate = kFront ? c.lateral_rate_front : c.lateral_rate_rear;
  const T j_lat = -rate * dt * grip * slip / k;
  T j_long(0);
  if (wheels.drive != T(0)) {
    j_long = wheels.drive * dt / T(4);
  } else if (wheels.brake > T(0)) {
    const T limit = wheels.brake * dt / T(4);
    j_long = -T(c.rolling_gain) * dt * roll;
    if (j_long > limit) j_long = limit;
    if (j_long < -limit) j_long = -limit;
  }
  if (wheels.handbrake > 0.0) j_long *= long_factor;
  const T j_f = j_long * h_f + j_lat * e_f;
  const T j_l = j_long * h_l + j_lat * e_l;
  *dv_f += j_f;
  *dv_l += j_l;
  *dw += (a * j_l - b * j_f) / c.yaw_gyration_sq;
}

// cos and sin of the front wheels' steer angle. For double an angle of exactly 0 (no steer
// input: most ticks of straight driving) skips libm's sincos (~100 instructions): cos 0 = 1 and
// sin 0 = 0 exactly. For a Jet the derivatives need the call.
template <typename T>
inline void SteerCosSin(const T& angle, T* cs, T* sn) {
  using std::cos;
  using std::sin;
  *cs = cos(angle);
  *sn = sin(angle);
}
inline void SteerCosSin(const double& angle, double* cs, double* sn) {
  if (angle == 0.0) {
    *cs = 1.0;
    *sn = angle;  // 0 with the angle's sign, as sin(+-0) = +-0
    return;
  }
  *cs = std::cos(angle);
  *sn = std::sin(angle);
}

// StepVehicle from the body and the wheels as a caller holds them, the tick's body and wheels
// written to *next_body and *next_wheels (which must not be `body` or `wheels`): the car model's
// floor tick (StepCar) keeps both in its own state, and builds, passes and copies no
// VehicleState (about 80 instructions a tick of car_step_floor). Always inlined (GCC left it
// out of line): in StepCar its call, spills and the next state's dead stores cost 28
// instructions a tick. keep_reported_tilt_rate: step 5 (StepVehicle: on; StepCar: off).
template <typename T>
RLFIT_ALWAYS_INLINE void StepVehicleInto(const VehicleCoeffs<T>& c, const CarState<T>& body,
                     const WheelSettings<T>& wheels_in, const Controls& u, double dt_s,
                     CarState<T>* next_body, WheelSettings<T>* next_wheels,
                     bool keep_reported_tilt_rate) {
  using std::abs;
  using std::sqrt;
  const T dt(dt_s);
  const Mat3<T>& theta = body.theta;
  const T n = sqrt(theta(0, 0) * theta(0, 0) + theta(1, 0) * theta(1, 0));
  const T fx = theta(0, 0) / n, fy = theta(1, 0) / n;  // forward; left = (-fy, fx)
  const T vx = body.v(0), vy = body.v(1);
  const T v_f = vx * fx + vy * fy;
  const T v_l = -vx * fy + vy * fx;
  const T w = body.omega(2);
  const WheelSettings<T> wheels =
      wheels_in.set ? wheels_in : DecideWheels(c, v_f, u, wheels_in.handbrake);
  const T* last_ratio = wheels_in.set ? wheels_in.slip_ratio : nullptr;
  // The next tick's wheels, from this tick's inputs on the speed and slip ratios at the tick's
  // start, as the game decides them before the physics step that follows (decision 0144); the
  // impulses below write the slip ratios.
  *next_wheels =
      DecideWheels(c, v_f, u, NextVehicleHandbrake(c, wheels.handbrake, u.handbrake, dt_s));

  T cs, sn;
  SteerCosSin(wheels.steer_angle, &cs, &sn);
  T dv_f(0), dv_l(0), dw(0);
  T* ratio = next_wheels->slip_ratio;
  // Front left, front right, rear left, rear right: the order of the sums.
  AddWheelImpulse<T, true, true>(c, wheels, v_f, v_l, w, cs, sn, dt, last_ratio, &dv_f, &dv_l,
                                  &dw, ratio);
  AddWheelImpulse<T, true, false>(c, wheels, v_f, v_l, w, cs, sn, dt, last_ratio, &dv_f, &dv_l,
                                  &dw, ratio);
  AddWheelImpulse<T, false, true>(c, wheels, v_f, v_l, w, cs, sn, dt, last_ratio, &dv_f, &dv_l,
                                  &dw, ratio);
  AddWheelImpulse<T, false, false>(c, wheels, v_f, v_l, w, cs, sn, dt, last_ratio, &dv_f, &dv_l,
                                  &dw, ratio);
  const T boost = T(u.boost) * c.boost_accel * dt;
  T nv_f = v_f + dv_f + boost;
  T nv_l = v_l + dv_l;
  T nw = w + dw;
  const T cap_w(game::kCarMaxOmega);
  if (nw > cap_w) nw = cap_w;
  if (nw < -cap_w) nw = -cap_w;

  next_body->omega = Vec3<T>(T(0), T(0), nw);
  next_body->theta = RotateAboutZ<T>(nw * dt, theta);
  if (keep_reported_tilt_rate) {
    // Step 5: the start's roll and pitch rates in the car's frame (nose, left), written in the
    // turned frame.
    const T o_f = body.omega(0) * fx + body.omega(1) * fy;
    const T o_l = -body.omega(0) * fy + body.omega(1) * fx;
    if (o_f * o_f + o_l * o_l <= T(kVehicleReportedTiltRateMax * kVehicleReportedTiltRateMax)) {
      const T nfx = next_body->theta(0, 0) / n, nfy = next_body->theta(1, 0) / n;
      next_body->omega(0) = o_f * nfx - o_l * nfy;
      next_body->omega(1) = o_f * nfy + o_l * nfx;
    }
  }
  Vec3<T> v_plane(nv_f * fx - nv_l * fy, nv_f * fy + nv_l * fx, T(0));
  v_plane = ClampNorm<T>(v_plane, c.max_speed);
  next_body->x = body.x + Vec3<T>(vx, vy, T(0)) * dt;
  next_body->x(2) = T(c.rest_height);
  next_body->v = v_plane;
  next_body->v(2) = T(c.rest_reported_vz);
}

template <typename T>
VehicleState<T> StepVehicle(const VehicleCoeffs<T>& c, const VehicleState<T>& s,
                            const Controls& u, double dt_s) {
  VehicleState<T> next;
  StepVehicleInto(c, s.body, s.wheels, u, dt_s, &next.body, &next.wheels,
                  /*keep_reported_tilt_rate=*/true);
  return next;
}

}  // namespace rlfit
