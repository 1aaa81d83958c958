// The car in the air (notes 000/001): torque Theta (T u + D Theta^T omega) with pitch and yaw
// damping scaled by (1 - |input|), |omega| <= 5.5, orientation advanced by the closed-form
// exponential of the averaged angular velocity; gravity, boost and air throttle along the nose.
#pragma once

#include <cmath>

#include "src/common/constants.h"
#include "src/models/car_state.h"
#include "src/models/model.h"

namespace rlfit {

// Coefficients of the aerial model. Flat layout (JSON names in brackets):
//   block air_torque  [T_r, T_p, T_y]      rad/s^2 per unit input (roll, pitch, yaw)
//   block air_damping [D_r, D_p, D_y]      1/s, acting on the body-frame angular velocity
//   block thrust      [boost_accel, air_throttle_accel]  uu/s^2 along the nose
//   block orientation_drift [drift_r, drift_p, drift_y]  rad/s, rates of the recorded Euler
//                                          angles roll, pitch, yaw (see below)
template <typename T>
struct AerialCoeffs {
  enum Index {
    kTr, kTp, kTy, kDr, kDp, kDy, kBoostAccel, kThrottleAccel, kDriftR, kDriftP, kDriftY, kSize
  };
  Vec3<T> torque;
  Vec3<T> damping;
  T boost_accel;
  T throttle_accel;
  // Constant rates of the recorded Euler angles (roll, pitch, yaw; rad/s) added in the
  // orientation update only. Not in note 000 and not physics: the aerial recordings' Euler
  // integers drift against their own angular velocity by about -0.03 (roll) and -0.016
  // (pitch, yaw) rad/s whatever the car does: a bias of the game's integer rotators, which are
  // floored (an Euler integer that should rise by 0-6 units in a row stays put ~77% of the
  // time). A constant rate of the Euler angles describes it; a constant body-frame rate (the
  // previous form of this block) does not once the car tumbles: orientation error at 1 s from
  // the recorded angular velocity 1.1 -> 0.18 degrees (NOTES.md). 0 by default.
  Vec3<T> drift;
  double max_omega = game::kCarMaxOmega;   // rad/s (game cap, not fitted)
  double max_speed = game::kCarMaxSpeed;   // uu/s (game cap, not fitted)
  double gravity_z = game::kGravityZ;      // uu/s^2 (not fitted)

  // From the blocks in layout order: torque[3], damping[3], thrust[2], drift[3].
  static AerialCoeffs FromBlocks(const T* torque, const T* damping, const T* thrust,
                                 const T* drift) {
    AerialCoeffs c;
    c.torque = Vec3<T>(torque[0], torque[1], torque[2]);
    c.damping = Vec3<T>(damping[0], damping[1], damping[2]);
    c.boost_accel = thrust[0];
    c.throttle_accel = thrust[1];
    c.drift = Vec3<T>(drift[0], drift[1], drift[2]);
    return c;
  }
  static AerialCoeffs FromArray(const T* flat) {
    return FromBlocks(flat + kTr, flat + kDr, flat + kBoostAccel, flat + kDriftR);
  }
};

inline const CoeffLayout& AerialLayout() {
  static const CoeffLayout layout{
      {"T_r", "T_p", "T_y", "D_r", "D_p", "D_y", "boost_accel", "air_throttle_accel", "drift_r",
       "drift_p", "drift_y"},
      {"rad/s^2", "rad/s^2", "rad/s^2", "1/s", "1/s", "1/s", "uu/s^2", "uu/s^2", "rad/s", "rad/s",
       "rad/s"},
      {game::kAirTorqueRoll, game::kAirTorquePitch, game::kAirTorqueYaw, game::kAirDampingRoll,
       game::kAirDampingPitch, game::kAirDampingYaw, game::kBoostAccel, game::kAirThrottleAccel,
       0.0, 0.0, 0.0},
      {{"air_torque", 0, 3}, {"air_damping", 3, 3}, {"thrust", 6, 2}, {"orientation_drift", 8, 3}},
      // Bounds. Torques keep RocketSim's sign (in this frame convention that is the direction
      // the input turns the car) and at most 3x its magnitude (note 000's values; the
      // recordings' spin-up agrees within 10%).
      {{3.0 * game::kAirTorqueRoll, 0.0},   // T_r, RocketSim -36.1
       {3.0 * game::kAirTorquePitch, 0.0},  // T_p, RocketSim -12.1
       {0.0, 3.0 * game::kAirTorqueYaw},    // T_y, RocketSim 8.9
       // Damping only removes angular velocity (<= 0). At -50 1/s a spin would die within
       // 0.02 s, which no recording shows (RocketSim's strongest is -4.5; the explicit step
       // itself diverges below -2 x tick rate).
       {-50.0, 0.0},  // D_r
       {-50.0, 0.0},  // D_p
       {-50.0, 0.0},  // D_y
       // Boost and air throttle push along the nose, never back (>= 0), at most twice
       // (boost) / three times (throttle) the game's force / mass.
       {0.0, 2.0 * game::kBoostAccel},        // boost_accel, game 991.7
       {0.0, 3.0 * game::kAirThrottleAccel},  // air_throttle_accel, game 66.7
       // Drift of the floored Euler integers: a few rotation units (9.6e-5 rad) per 61 Hz row,
       // measured -0.03 to -0.016 rad/s; 0.2 rad/s (11 degrees a second) would be a visible
       // turn, not a rounding bias.
       {-0.2, 0.2},  // drift_r
       {-0.2, 0.2},  // drift_p
       {-0.2, 0.2}}};  // drift_y
  return layout;
}

// The world angular velocity that turns the Euler angles of theta (R = Rz(yaw) Ry(-pitch)
// Rx(-roll)) at rates (roll, pitch, yaw) = rates: yaw about world z, pitch about minus the
// horizontal left axis Rz(yaw) e_y, roll about minus the nose. With the nose vertical (yaw
// undefined) the car's left axis stands in for the horizontal one.
template <typename T>
Vec3<T> EulerRateDrift(const Vec3<T>& rates, const Mat3<T>& theta) {
  using std::sqrt;
  const Vec3<T> nose = theta.col(0);
  const T horizontal2 = nose(0) * nose(0) + nose(1) * nose(1);
  Vec3<T> left = theta.col(1);
  if (horizontal2 > T(1e-12)) {
    const T h = sqrt(horizontal2);
    left = Vec3<T>(-nose(1) / h, nose(0) / h, T(0.0));
  }
  return -rates(0) * nose - rates(1) * left + rates(2) * Vec3<T>(T(0.0), T(0.0), T(1.0));
}

// One physics step of dt_s seconds with constant inputs u. The orientation turns by the new
// angular velocity (semi-implicit) or by the average of old and new (note 000), see Integration.
template <typename T>
CarState<T> StepAerial(const AerialCoeffs<T>& c, const CarState<T>& s, const Controls& u,
                       double dt_s, bool rotate_with_new_omega) {
  using std::abs;
  const T dt(dt_s);
  // Torque in the body frame (roll, pitch, yaw axes = forward, left, up columns of theta).
  const Vec3<T> w_body = s.theta.transpose() * s.omega;
  Vec3<T> tau_body;
  tau_body(0) = c.torque(0) * T(u.roll) + c.damping(0) * w_body(0);
  tau_body(1) = c.torque(1) * T(u.pitch) + c.damping(1) * T(1.0 - abs(u.pitch)) * w_body(1);
  tau_body(2) = c.torque(2) * T(u.yaw) + c.damping(2) * T(1.0 - abs(u.yaw)) * w_body(2);

  CarState<T> next;
  // The orientation turns with the angular velocity before the 5.5 rad/s cap is applied:
  // the recorded freefalling orientations (spinning at the cap) turn 1-2% faster than the
  // capped angular velocity says (README "Orientation update").
  const Vec3<T> omega_uncapped = s.omega + s.theta * tau_body * dt;
  next.omega = ClampNorm<T>(omega_uncapped, c.max_omega);
  Vec3<T> omega_rot =
      rotate_with_new_omega ? omega_uncapped : Vec3<T>(T(0.5) * (s.omega + omega_uncapped));
  // No drift (the default) adds nothing: skip it (for double; a Jet carries derivatives).
  if (!IsExactlyZero(c.drift)) omega_rot += EulerRateDrift(c.drift, s.theta);
  next.theta = ExpSo3<T>(omega_rot * dt) * s.theta;

  // Boost implies full throttle in the air; both push along the nose. u.boost is the fraction
  // of the step boost was held.
  const T thrust = T(u.boost) * (c.boost_accel + c.throttle_accel) +
                   T(1.0 - u.boost) * c.throttle_accel * T(u.throttle);
  Vec3<T> accel = s.theta.col(0) * thrust;
  accel(2) += T(c.gravity_z);
  next.v = ClampNorm<T>(s.v + accel * dt, c.max_speed);
  // Semi-implicit Euler as in the game's engine (Bullet): position moves with the new velocity.
  next.x = s.x + next.v * dt;
  return next;
}

// Advances the state over recorded row k -> k+1 of `ep` (substeps per Integration).
template <typename T>
CarState<T> AdvanceAerialRow(const AerialCoeffs<T>& c, const CarState<T>& s, const Episode& ep,
                             int k, const Integration& integ) {
  return AdvanceCarRow(s, ep, k, integ,
                       [&](const CarState<T>& state, const Controls& u, double h) {
                         return StepAerial(c, state, u, h, integ.rotate_with_new_omega);
                       });
}

}  // namespace rlfit
