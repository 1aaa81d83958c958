// The car driving on flat ground (note 002): throttle, brake, coast and boost along the car's
// forward axis, a yaw rate that follows steer * kappa(|v_f|) * v_f with a first-order lag, a
// lateral friction that kills sideways slip, and the drag of turning. The car stays on the plane.
#pragma once

#include <cmath>

#include "src/common/constants.h"
#include "src/models/car_state.h"
#include "src/models/model.h"

namespace rlfit {

// Speeds of the curvature knots, uu/s (RLUtilities / RLBot community curve; the game's
// SteerAngleCurve in vehicle_sim.md has knots at the same speeds up to 1750). Above the last
// knot the curvature is held constant.
inline constexpr int kCurvatureKnots = 6;
inline constexpr double kCurvatureKnotSpeeds[kCurvatureKnots] = {0.0,    500.0,  1000.0,
                                                                 1500.0, 1750.0, 2300.0};

// Coefficients of the ground model. Flat layout (JSON names in brackets):
//   block throttle       [throttle_accel uu/s^2 at rest, throttle_fade_speed uu/s where the
//                         drive curve reaches throttle_fade_fraction (1) of throttle_accel;
//                         it drops to 0 over the next kThrottleCutoffWidth uu/s]
//   block brake_coast    [brake_accel, coast_accel]  uu/s^2 toward zero forward speed
//   block boost          [boost_accel_slow, boost_accel_fast]  uu/s^2 added by boost below /
//                         above the drive curve's cut-off speed
//   block curvature      [kappa_0 ... kappa_2300]  1/uu at kCurvatureKnotSpeeds
//   block steer_response [yaw_rate_response]  1/s, rate at which the yaw rate follows its target
//   block lateral        [lateral_friction_rate 1/s, lateral_lever_arm uu]: the sideways
//                         velocity relaxes at that rate toward lever_arm * w_z, the sideways
//                         motion of a point lever_arm ahead of a rear axle that does not slide
//   block backward       [backward_curvature_scale, backward_throttle_scale]  (1) multiply the
//                         curvature when the car rolls backward, the drive curve when the
//                         throttle is negative (driving backward)
//   block turn_drag      [turn_drag_arm, turn_drag_arm_backward]  uu: while turning, an
//                         acceleration -arm * w_z^2 along the forward axis (rolling forward /
//                         backward). The front tires carry b/L of the centripetal force and
//                         are turned by delta ~ steer kappa L, so F sin(delta) ~ b w_z^2 with
//                         b the center-to-rear-axle distance. Measured on spiral_*.txt (after
//                         the w_z v_l term of the rotating frame): 33-38 uu forward at every
//                         steer and speed, 30-32 uu backward, pointing backward in both cases
template <typename T>
struct GroundCoeffs {
  enum Index {
    kThrottleAccel,
    kThrottleFadeSpeed,
    kThrottleFadeFraction,
    kBrakeAccel,
    kCoastAccel,
    kBoostAccelSlow,
    kBoostAccelFast,
    kKappa0,
    kYawRateResponse = kKappa0 + kCurvatureKnots,
    kLateralFrictionRate,
    kLateralLeverArm,
    kBackwardCurvatureScale,
    kBackwardThrottleScale,
    kTurnDragArm,
    kTurnDragArmBackward,
    kSize
  };
  T throttle_accel, throttle_fade_speed, throttle_fade_fraction;
  T brake_accel, coast_accel;
  T boost_accel_slow, boost_accel_fast;
  T kappa[kCurvatureKnots];
  T yaw_rate_response;
  T lateral_friction_rate, lateral_lever_arm;
  T backward_curvature_scale, backward_throttle_scale;
  T turn_drag_arm, turn_drag_arm_backward;
  // Not fitted: game rules and the plane the car rests on.
  double throttle_deadzone = game::kThrottleDeadzone;  // |throttle| below this coasts
  double stop_speed = game::kCarStopSpeed;             // uu/s; below it coasting is braking
  double cutoff_width = game::kThrottleCutoffWidth;    // uu/s
  double max_speed = game::kCarMaxSpeed;               // uu/s
  double rest_height = game::kCarRestHeight;           // uu
  double rest_reported_vz = game::kCarRestReportedVz;  // uu/s, see StepGround

  // From the blocks in layout order: throttle[3], brake_coast[2], boost[2],
  // curvature[kCurvatureKnots], steer_response[1], lateral[2], backward[2], turn_drag[2].
  static GroundCoeffs FromBlocks(const T* throttle, const T* brake_coast, const T* boost,
                                 const T* curvature, const T* steer_response, const T* lateral,
                                 const T* backward, const T* turn_drag) {
    GroundCoeffs c;
    c.throttle_accel = throttle[0];
    c.throttle_fade_speed = throttle[1];
    c.throttle_fade_fraction = throttle[2];
    c.brake_accel = brake_coast[0];
    c.coast_accel = brake_coast[1];
    c.boost_accel_slow = boost[0];
    c.boost_accel_fast = boost[1];
    for (int i = 0; i < kCurvatureKnots; ++i) c.kappa[i] = curvature[i];
    c.yaw_rate_response = steer_response[0];
    c.lateral_friction_rate = lateral[0];
    c.lateral_lever_arm = lateral[1];
    c.backward_curvature_scale = backward[0];
    c.backward_throttle_scale = backward[1];
    c.turn_drag_arm = turn_drag[0];
    c.turn_drag_arm_backward = turn_drag[1];
    return c;
  }
  static GroundCoeffs FromArray(const T* flat) {
    return FromBlocks(flat + kThrottleAccel, flat + kBrakeAccel, flat + kBoostAccelSlow,
                      flat + kKappa0, flat + kYawRateResponse, flat + kLateralFrictionRate,
                      flat + kBackwardCurvatureScale, flat + kTurnDragArm);
  }
};

inline const CoeffLayout& GroundLayout() {
  static const CoeffLayout layout{
      {"throttle_accel",
       "throttle_fade_speed",
       "throttle_fade_fraction",
       "brake_accel",
       "coast_accel",
       "boost_accel_slow",
       "boost_accel_fast",
       "kappa_0",
       "kappa_500",
       "kappa_1000",
       "kappa_1500",
       "kappa_1750",
       "kappa_2300",
       "yaw_rate_response",
       "lateral_friction_rate",
       "lateral_lever_arm",
       "backward_curvature_scale",
       "backward_throttle_scale",
       "turn_drag_arm",
       "turn_drag_arm_backward"},
      {"uu/s^2", "uu/s", "1",    "uu/s^2", "uu/s^2", "uu/s^2", "uu/s^2", "1/uu", "1/uu", "1/uu",
       "1/uu",   "1/uu", "1/uu", "1/s",    "1/s",    "uu",     "1",      "1",    "uu",   "uu"},
      {game::kThrottleAccel,
       game::kThrottleFadeSpeed,
       game::kThrottleFadeFraction,
       game::kBrakeAccel,
       game::kCoastAccel,
       game::kBoostAccel,
       game::kBoostAccel,
       game::kCurvature0,
       game::kCurvature500,
       game::kCurvature1000,
       game::kCurvature1500,
       game::kCurvature1750,
       game::kCurvature2300,
       game::kYawRateResponse,
       game::kLateralFrictionRate,
       game::kCarRearAxleOffset,
       1.0,
       1.0,
       game::kCarRearAxleOffset,
       game::kCarRearAxleOffset},
      {{"throttle", 0, 3},
       {"brake_coast", 3, 2},
       {"boost", 5, 2},
       {"curvature", 7, kCurvatureKnots},
       {"steer_response", 7 + kCurvatureKnots, 1},
       {"lateral", 8 + kCurvatureKnots, 2},
       {"backward", 10 + kCurvatureKnots, 2},
       {"turn_drag", 12 + kCurvatureKnots, 2}},
      // Bounds.
      {// Drive: forward (>= 0), at most 3x the game's 1600 uu/s^2.
       {0.0, 3.0 * game::kThrottleAccel},  // throttle_accel
       // The drive curve divides by the fade speed (> 0); it fades where throttle alone tops
       // out (game 1400 uu/s): not below 500, not above the car's 2300 uu/s speed cap.
       {500.0, game::kCarMaxSpeed},  // throttle_fade_speed
       {0.0, 1.0},                   // throttle_fade_fraction: a fraction of throttle_accel
       // Braking and coasting slow the car (>= 0), at most 3x the game's braking (3500);
       // coasting (the game's 0.15 x braking) is never stronger than the game's braking.
       {0.0, 3.0 * game::kBrakeAccel},  // brake_accel
       {0.0, game::kBrakeAccel},        // coast_accel
       // Boost pushes forward (>= 0), at most twice the game's 991.7 uu/s^2.
       {0.0, 2.0 * game::kBoostAccel},  // boost_accel_slow
       {0.0, 2.0 * game::kBoostAccel},  // boost_accel_fast
       // Curvatures > 0 (steer turns the car): at least 1e-5 1/uu (a 100,000 uu circle, ten
       // arena lengths), at most 0.02 1/uu (a 50 uu circle, under half the car's length; the
       // game's tightest is 0.0069 at rest).
       {1e-5, 0.02},  // kappa_0
       {1e-5, 0.02},  // kappa_500
       {1e-5, 0.02},  // kappa_1000
       {1e-5, 0.02},  // kappa_1500
       {1e-5, 0.02},  // kappa_1750
       {1e-5, 0.02},  // kappa_2300
       // Rates of first-order responses: time constants between 2 ms (under a tick) and 2 s.
       {0.5, 500.0},  // yaw_rate_response
       // Sideways friction: 0 is ice; 500 1/s stops a slide within a tick.
       {0.0, 500.0},  // lateral_friction_rate
       // Lever arms are distances from the car's centre to a point on the car (the rear axle,
       // game 33.75 uu): within half the Octane's 118 uu length.
       {0.0, 60.0},  // lateral_lever_arm
       // Backward multipliers of curvature and drive: the same car, within a factor 4.
       {0.25, 4.0},  // backward_curvature_scale
       {0.25, 4.0},  // backward_throttle_scale
       {0.0, 60.0},  // turn_drag_arm: a lever arm, as above
       {0.0, 60.0}}};  // turn_drag_arm_backward
  return layout;
}

// Piecewise-linear curvature at forward speed `speed` (>= 0), 1/uu; constant past the last knot.
template <typename T>
T GroundCurvature(const GroundCoeffs<T>& c, const T& speed) {
  for (int i = 0; i + 1 < kCurvatureKnots; ++i) {
    if (speed < T(kCurvatureKnotSpeeds[i + 1])) {
      const double span = kCurvatureKnotSpeeds[i + 1] - kCurvatureKnotSpeeds[i];
      const T w = (speed - T(kCurvatureKnotSpeeds[i])) / T(span);
      return c.kappa[i] + (c.kappa[i + 1] - c.kappa[i]) * w;
    }
  }
  return c.kappa[kCurvatureKnots - 1];
}

// Drive acceleration at full throttle and forward speed `speed` (>= 0), uu/s^2: the game's
// DriveTorqueCurve shape, falling linearly from throttle_accel at rest to
// throttle_fade_fraction * throttle_accel at throttle_fade_speed, then to 0 over cutoff_width.
template <typename T>
T GroundDriveAccel(const GroundCoeffs<T>& c, const T& speed) {
  if (speed < c.throttle_fade_speed)
    return c.throttle_accel *
           (T(1) - (T(1) - c.throttle_fade_fraction) * speed / c.throttle_fade_speed);
  const T cutoff = c.throttle_fade_speed + T(c.cutoff_width);
  if (speed < cutoff)
    return c.throttle_accel * c.throttle_fade_fraction * (cutoff - speed) / T(c.cutoff_width);
  return T(0);
}

// New forward speed after dt_s of throttle `throttle` (boost held: throttle 1 plus the boost
// acceleration) and the signed extra acceleration `extra` (uu/s^2, the turn drag), by note
// 002's cases (the wheels' drive multiplied by `drive_scale`, their braking and coasting by
// `brake_scale`: 1 on the ground, the handbrake's share in StepPowerslide):
//   braking  (throttle against the motion, |v_f| > stop_speed): |v_f| falls by brake_accel dt
//   coasting (|throttle| < deadzone): |v_f| falls by coast_accel dt (brake_accel below
//            stop_speed); braking and coasting stop at 0, they never reverse the car
//   throttle: v_f += throttle * drive(|v_f|) dt, the drive scaled by backward_throttle_scale
//            when throttling backward
//   boost:   v_f += boost_accel_slow (below the drive cut-off) or boost_accel_fast (above) dt
template <typename T>
T GroundForwardSpeed(const GroundCoeffs<T>& c, const T& v_f, double throttle, bool boost,
                     const T& extra, double dt_s, const T& drive_scale = T(1),
                     const T& brake_scale = T(1)) {
  using std::abs;
  const T dt(dt_s);
  const T speed = abs(v_f);
  if (boost) throttle = 1.0;
  T push = extra;  // signed acceleration, uu/s^2
  T brake(0);      // deceleration toward zero forward speed, uu/s^2
  if (std::abs(throttle) < c.throttle_deadzone) {
    brake = (speed < T(c.stop_speed) ? c.brake_accel : c.coast_accel) * brake_scale;
  } else if (speed > T(c.stop_speed) && throttle * v_f < T(0)) {
    brake = c.brake_accel * brake_scale;
  } else {
    const T scale = throttle < 0.0 ? c.backward_throttle_scale : T(1);
    push += T(throttle) * scale * GroundDriveAccel(c, speed) * drive_scale;
  }
  if (boost) {
    const T cutoff = c.throttle_fade_speed + T(c.cutoff_width);
    push += v_f < cutoff ? c.boost_accel_slow : c.boost_accel_fast;
  }
  T v = v_f + push * dt;
  if (brake > T(0)) {
    const T drop = brake * dt;
    if (v > drop)
      v -= drop;
    else if (v < -drop)
      v += drop;
    else
      v = T(0);
  }
  return v;
}

// One physics step of dt_s seconds with constant inputs u (u.boost is the fraction of the step
// boost was held; the forward speed is the same blend of the boosted and unboosted updates).
//   1. yaw rate: w_z += (steer kappa(|v_f|) v_f s_b - w_z) (1 - exp(-yaw_rate_response dt)),
//      s_b = backward_curvature_scale when v_f < 0, else 1;
//   2. heading turns about world z by w_z dt (new or average rate, see Integration);
//   3. in the new heading: forward speed by GroundForwardSpeed with the turn drag
//      -turn_drag_arm w_z^2, sideways speed relaxes
//      toward lateral_lever_arm * w_z by the factor exp(-lateral_friction_rate dt);
//      |v| <= max_speed;
//   4. the position moves with the in-plane velocity from before the step (explicit Euler):
//      the recordings advance x_{k+1} - x_k = dt (0.743 v_k + 0.257 v_{k+1}) (least squares
//      over the episodes and spiral_forward_100.txt), which two such ticks per row give
//      (3/4, 1/4); the engine's semi-implicit update (1/4, 3/4) misses by 0.48 vs 0.17 uu per
//      row, i.e. the recorded position trails the recorded velocity by one physics tick;
//   5. the car stays on the plane: z = rest_height, roll/pitch kept, omega_x = omega_y = 0.
// The game reports vz of about 8.3 uu/s for a car resting on flat ground while z stays put
// (10535 of 10535 on-ground rows of ground_driving_no_handbrake: vz 7.98-8.40, z 17.01); the
// prediction reports that constant, rest_reported_vz, so that |dv| measures in-plane error.
// `plane_accel` (uu/s^2, in the same frame as the state) is an extra acceleration whose
// in-plane part is added to the velocity before the forward and sideways updates of point 3:
// gravity along a tilted surface when StepSurface (src/models/surface.h) runs this step in the
// surface's frame; zero on the flat floor (where it adds exactly nothing).
// `decay` holds the step's factors exp(-rate dt) (GroundDecayFactors of c and dt_s): a caller
// stepping many times with one c and dt_s (the ticks of a row) computes them once; the overload
// without it computes them every step. Either way the same values, bit for bit.
template <typename T>
struct GroundDecay {
  T yaw;      // exp(-yaw_rate_response dt)
  T lateral;  // exp(-lateral_friction_rate dt)
};
template <typename T>
GroundDecay<T> GroundDecayFactors(const GroundCoeffs<T>& c, double dt_s) {
  using std::exp;  // a ceres::Jet's exp for the fits: the factors carry the derivatives
  const T dt(dt_s);
  return {exp(T(-c.yaw_rate_response * dt)), exp(T(-c.lateral_friction_rate * dt))};
}

template <typename T>
CarState<T> StepGround(const GroundCoeffs<T>& c, const CarState<T>& s, const Controls& u,
                       double dt_s, const GroundDecay<T>& decay, bool rotate_with_new_omega,
                       const Vec3<T>& plane_accel = Vec3<T>::Zero()) {
  using std::sqrt;
  const T dt(dt_s);
  // Heading axes in the plane (the recorded forward axis carries the small rest pitch).
  auto planar_axes = [](const Mat3<T>& theta, Vec3<T>* f, Vec3<T>* l) {
    const T n = sqrt(theta(0, 0) * theta(0, 0) + theta(1, 0) * theta(1, 0));
    *f = Vec3<T>(theta(0, 0) / n, theta(1, 0) / n, T(0));
    *l = Vec3<T>(-(*f)(1), (*f)(0), T(0));
  };
  Vec3<T> f, l;
  planar_axes(s.theta, &f, &l);
  const T v_f = s.v.dot(f);

  CarState<T> next;
  const T speed_f = v_f < T(0) ? T(-v_f) : v_f;
  const T steer_kappa = T(u.steer) * GroundCurvature(c, speed_f);
  T target = steer_kappa * v_f;
  if (v_f < T(0)) target *= c.backward_curvature_scale;
  const T w_z =
      s.omega(2) + (target - s.omega(2)) * (T(1) - decay.yaw);
  next.omega = Vec3<T>(T(0), T(0), w_z);
  const T turn = (rotate_with_new_omega ? w_z : T(0.5) * (s.omega(2) + w_z)) * dt;
  next.theta = RotateAboutZ<T>(turn, s.theta);

  Vec3<T> f1, l1;
  planar_axes(next.theta, &f1, &l1);
  const T v_f1 = s.v.dot(f1) + plane_accel.dot(f1) * dt;
  const T v_l1 = s.v.dot(l1) + plane_accel.dot(l1) * dt;
  const T drag = -(v_f < T(0) ? c.turn_drag_arm_backward : c.turn_drag_arm) * w_z * w_z;
  T v_fwd = v_f1;
  if (u.boost < 1.0) v_fwd = GroundForwardSpeed(c, v_f1, u.throttle, false, drag, dt_s);
  if (u.boost > 0.0) {
    const T boosted = GroundForwardSpeed(c, v_f1, u.throttle, true, drag, dt_s);
    v_fwd = T(u.boost) * boosted + T(1.0 - u.boost) * v_fwd;
  }
  const T v_side_target = c.lateral_lever_arm * w_z;
  const T v_side = v_side_target +
                   (v_l1 - v_side_target) * decay.lateral;
  Vec3<T> v_plane = ClampNorm<T>(f1 * v_fwd + l1 * v_side, c.max_speed);

  // The position moves with the velocity before the step (see the comment above).
  next.x = s.x + Vec3<T>(s.v(0), s.v(1), T(0)) * dt;
  next.x(2) = T(c.rest_height);
  next.v = v_plane;
  next.v(2) = T(c.rest_reported_vz);
  return next;
}
template <typename T>
CarState<T> StepGround(const GroundCoeffs<T>& c, const CarState<T>& s, const Controls& u,
                       double dt_s, bool rotate_with_new_omega,
                       const Vec3<T>& plane_accel = Vec3<T>::Zero()) {
  return StepGround(c, s, u, dt_s, GroundDecayFactors(c, dt_s), rotate_with_new_omega,
                    plane_accel);
}

}  // namespace rlfit
