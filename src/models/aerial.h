// The car in the air (notes 000/001): torque Theta (T u + D Theta^T omega) with pitch and yaw
// damping scaled by (1 - |input|), |omega| <= 5.5, orientation advanced by the closed-form
// exponential of the averaged angular velocity; gravity, boost and air throttle along the nose.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// (a0 b0 + a1 b1) + a2 b2 and a0 b0 + (a1 b1 + a2 b2): the two orders in which Eigen summed the
// 3-term products of rows 0-1 (two-double packets) and of row 2 (its scalar reduction) in the
// earlier Eigen expressions of StepAerial; spelled out so the step keeps their values bit for
// bit, for double and Jet alike, without Eigen's temporaries.
template <typename T>
inline T SumFirstPair(const T& a0, const T& b0, const T& a1, const T& b1, const T& a2,
                      const T& b2) {
  return (a0 * b0 + a1 * b1) + a2 * b2;
}
template <typename T>
inline T SumLastPair(const T& a0, const T& b0, const T& a1, const T& b1, const T& a2,
                     const T& b2) {
  return a0 * b0 + (a1 * b1 + a2 * b2);
}

// One physics step of dt_s seconds with constant inputs u. The orientation turns by the new
// angular velocity (semi-implicit) or by the average of old and new (note 000), see Integration.
template <typename T>
CarState<T> StepAerial(const AerialCoeffs<T>& c, const CarState<T>& s, const Controls& u,
                       double dt_s, bool rotate_with_new_omega) {
  using std::abs;
  const T dt(dt_s);
  const Mat3<T>& th = s.theta;
  const Vec3<T>& w = s.omega;
  // Torque in the body frame (roll, pitch, yaw axes = forward, left, up columns of theta), from
  // the body-frame angular velocity theta^T omega.
  const T wb0 = SumFirstPair(th(0, 0), w(0), th(1, 0), w(1), th(2, 0), w(2));
  const T wb1 = SumFirstPair(th(0, 1), w(0), th(1, 1), w(1), th(2, 1), w(2));
  const T wb2 = SumFirstPair(th(0, 2), w(0), th(1, 2), w(1), th(2, 2), w(2));
  const T tau0 = c.torque(0) * T(u.roll) + c.damping(0) * wb0;
  const T tau1 = c.torque(1) * T(u.pitch) + c.damping(1) * T(1.0 - abs(u.pitch)) * wb1;
  const T tau2 = c.torque(2) * T(u.yaw) + c.damping(2) * T(1.0 - abs(u.yaw)) * wb2;

  CarState<T> next;
  // The orientation turns with the angular velocity before the 5.5 rad/s cap is applied:
  // the recorded freefalling orientations (spinning at the cap) turn 1-2% faster than the
  // capped angular velocity says (README "Orientation update"). omega + (theta tau) dt:
  Vec3<T> omega_uncapped;
  omega_uncapped(0) = w(0) + SumFirstPair(th(0, 0), tau0, th(0, 1), tau1, th(0, 2), tau2) * dt;
  omega_uncapped(1) = w(1) + SumFirstPair(th(1, 0), tau0, th(1, 1), tau1, th(1, 2), tau2) * dt;
  omega_uncapped(2) = w(2) + SumLastPair(th(2, 0), tau0, th(2, 1), tau1, th(2, 2), tau2) * dt;
  next.omega = ClampNorm<T>(omega_uncapped, c.max_omega);
  Vec3<T> omega_rot =
      rotate_with_new_omega ? omega_uncapped : Vec3<T>(T(0.5) * (w + omega_uncapped));
  // No drift (the default) adds nothing: skip it (for double; a Jet carries derivatives).
  if (!IsExactlyZero(c.drift)) omega_rot += EulerRateDrift(c.drift, th);
  // exp(omega_rot dt) theta.
  const Mat3<T> r = ExpSo3<T>(omega_rot * dt);
  for (int j = 0; j < 3; ++j) {
    next.theta(0, j) = SumFirstPair(r(0, 0), th(0, j), r(0, 1), th(1, j), r(0, 2), th(2, j));
    next.theta(1, j) = SumFirstPair(r(1, 0), th(0, j), r(1, 1), th(1, j), r(1, 2), th(2, j));
    next.theta(2, j) = SumLastPair(r(2, 0), th(0, j), r(2, 1), th(1, j), r(2, 2), th(2, j));
  }

  // Boost implies full throttle in the air; both push along the nose. u.boost is the fraction
  // of the step boost was held.
  const T thrust = T(u.boost) * (c.boost_accel + c.throttle_accel) +
                   T(1.0 - u.boost) * c.throttle_accel * T(u.throttle);
  Vec3<T> accel = th.col(0) * thrust;
  accel(2) += T(c.gravity_z);
  next.v = ClampNorm<T>(s.v + accel * dt, c.max_speed);
  // Semi-implicit Euler as in the game's engine (Bullet): position moves with the new velocity.
  next.x = s.x + next.v * dt;
  return next;
}

#if defined(__SSE2__)
// StepAerial for double, the same arithmetic two doubles at a time (SSE2): every component is
// computed by the same operations in the same order as the template above, so the result is
// the template's bit for bit (tested against StepAerial<double>, which names the template);
// only faster (bench/README.md). Three-vectors are held as rows 0-1 in one register and row 2
// beside; a product of two doubles with 1.0 is exact, which lets the roll axis share the
// pitch axis's damping factor.
// ClampNorm of the three-vector (lanes 0-1 of v01, v2) to max_norm, as the template does it:
// the squared norm (v0^2 + v1^2) + v2^2, and if it exceeds max_norm^2 every component times
// max_norm / sqrt(it). Stores the result at out[0..2].
inline void ClampNormSse2(__m128d v01, double v2, double max_norm, double* out) {
  const __m128d sq = _mm_mul_pd(v01, v01);
  const double n2 = _mm_cvtsd_f64(_mm_add_sd(sq, _mm_unpackhi_pd(sq, sq))) + v2 * v2;
  if (n2 > max_norm * max_norm) {
    // sqrtsd is the correctly rounded square root std::sqrt returns, without its errno branch.
    const double scale = max_norm / _mm_cvtsd_f64(_mm_sqrt_sd(_mm_setzero_pd(), _mm_set_sd(n2)));
    v01 = _mm_mul_pd(v01, _mm_set1_pd(scale));
    v2 *= scale;
  }
  _mm_storeu_pd(out, v01);
  out[2] = v2;
}

// True when the three doubles at v are all zero (+0 or -0), as IsExactlyZero, from their bits:
// a zero has no bit set but the sign.
inline bool AllZeroBits(const double* v) {
  std::uint64_t b0, b1, b2;
  std::memcpy(&b0, v, 8);
  std::memcpy(&b1, v + 1, 8);
  std::memcpy(&b2, v + 2, 8);
  return ((b0 | b1 | b2) << 1) == 0;
}

#if defined(__GNUC__)
__attribute__((always_inline))  // GCC's heuristics leave it out of line once its clamps are calls
#endif
inline CarState<double> StepAerial(const AerialCoeffs<double>& c, const CarState<double>& s,
                                   const Controls& u, double dt_s, bool rotate_with_new_omega) {
  const double* th = s.theta.data();  // column major: th[i + 3 j] = theta(i, j)
  const __m128d dt = _mm_set1_pd(dt_s);
  const __m128d col0 = _mm_loadu_pd(th), col1 = _mm_loadu_pd(th + 3), col2 = _mm_loadu_pd(th + 6);
  const __m128d row0 = _mm_unpacklo_pd(col0, col1);  // theta(0, 0), theta(0, 1)
  const __m128d row1 = _mm_unpackhi_pd(col0, col1);  // theta(1, 0), theta(1, 1)
  const __m128d row2 = _mm_set_pd(th[5], th[2]);      // theta(2, 0), theta(2, 1)
  const __m128d w01 = _mm_loadu_pd(s.omega.data());
  const double w2 = s.omega(2);
  // Lane 0 or 1 in both lanes (pshufd: one instruction, leaves a intact).
  auto low = [](__m128d a) {
    return _mm_castsi128_pd(_mm_shuffle_epi32(_mm_castpd_si128(a), 0x44));
  };
  auto high = [](__m128d a) {
    return _mm_castsi128_pd(_mm_shuffle_epi32(_mm_castpd_si128(a), 0xEE));
  };
  // Sum of the two lanes (lane 0 + lane 1), as a scalar.
  auto lane_sum = [&](__m128d a) { return _mm_cvtsd_f64(_mm_add_sd(a, high(a))); };

  // Body-frame angular velocity: lanes (0, 1), then 2.
  const __m128d wb01 = _mm_add_pd(
      _mm_add_pd(_mm_mul_pd(row0, low(w01)), _mm_mul_pd(row1, high(w01))),
      _mm_mul_pd(row2, _mm_set1_pd(w2)));
  const double wb2 = lane_sum(_mm_mul_pd(col2, w01)) + th[8] * w2;
  // Torque: lanes roll, pitch; then yaw.
  const __m128d tau01 = _mm_add_pd(
      _mm_mul_pd(_mm_loadu_pd(c.torque.data()), _mm_set_pd(u.pitch, u.roll)),
      _mm_mul_pd(
          _mm_mul_pd(_mm_loadu_pd(c.damping.data()), _mm_set_pd(1.0 - std::abs(u.pitch), 1.0)),
          wb01));
  const double tau2 = c.torque(2) * u.yaw + c.damping(2) * (1.0 - std::abs(u.yaw)) * wb2;
  const __m128d tau0b = low(tau01), tau1b = high(tau01), tau2b = _mm_set1_pd(tau2);

  CarState<double> next;
  const __m128d wu01 = _mm_add_pd(
      w01, _mm_mul_pd(_mm_add_pd(_mm_add_pd(_mm_mul_pd(col0, tau0b), _mm_mul_pd(col1, tau1b)),
                                 _mm_mul_pd(col2, tau2b)),
                      dt));
  const double wu2 = w2 + (th[2] * _mm_cvtsd_f64(tau01) +
                           (th[5] * _mm_cvtsd_f64(tau1b) + th[8] * tau2)) * dt_s;
  ClampNormSse2(wu01, wu2, c.max_omega, next.omega.data());
  __m128d rot01 = wu01;
  double rot2 = wu2;
  if (!rotate_with_new_omega) {
    rot01 = _mm_mul_pd(_mm_set1_pd(0.5), _mm_add_pd(w01, wu01));
    rot2 = 0.5 * (w2 + wu2);
  }
  if (!AllZeroBits(c.drift.data())) {
    const Vec3<double> drift = EulerRateDrift(c.drift, s.theta);
    rot01 = _mm_add_pd(rot01, _mm_loadu_pd(drift.data()));
    rot2 += drift(2);
  }

  // ExpSo3(phi), phi = omega_rot dt, as in ExpSo3: lanes hold (x, y) and the coefficients
  // (c1, c2) side by side.
  const __m128d phi01 = _mm_mul_pd(rot01, dt);
  const double z = rot2 * dt_s;
  const __m128d sq01 = _mm_mul_pd(phi01, phi01);  // xx, yy
  const double zz = z * z;
  const double xxyy = lane_sum(sq01);
  const double a2 = xxyy + zz;
  __m128d coef;  // c1, c2
  if (a2 < kExpSo3SeriesMaxAngle2) {
    const __m128d a2b = _mm_set1_pd(a2);
    coef = _mm_mul_pd(a2b, _mm_set_pd(1.0 / 3628800.0, 1.0 / 362880.0));
    coef = _mm_mul_pd(a2b, _mm_sub_pd(_mm_set_pd(1.0 / 40320.0, 1.0 / 5040.0), coef));
    coef = _mm_mul_pd(a2b, _mm_sub_pd(_mm_set_pd(1.0 / 720.0, 1.0 / 120.0), coef));
    coef = _mm_mul_pd(a2b, _mm_sub_pd(_mm_set_pd(1.0 / 24.0, 1.0 / 6.0), coef));
    coef = _mm_sub_pd(_mm_set_pd(0.5, 1.0), coef);
  } else {
    double c1, c2;
    ExpSo3Coefficients(a2, &c1, &c2);
    coef = _mm_set_pd(c2, c1);
  }
  const __m128d c1b = low(coef), c2b = high(coef);
  const double c1 = _mm_cvtsd_f64(coef), c2 = _mm_cvtsd_f64(c2b);
  const __m128d zb = _mm_set1_pd(z);
  // Diagonal: 1 - c2 (yy + zz), 1 - c2 (xx + zz); 1 - c2 (xx + yy).
  const __m128d diag01 = _mm_sub_pd(
      _mm_set1_pd(1.0),
      _mm_mul_pd(c2b, _mm_add_pd(_mm_shuffle_pd(sq01, sq01, 1), _mm_set1_pd(zz))));
  const double r22 = 1.0 - c2 * xxyy;
  const double c2xy = c2 * (_mm_cvtsd_f64(phi01) * _mm_cvtsd_f64(high(phi01)));
  const double c1z = c1 * z;
  const __m128d c2xz_yz = _mm_mul_pd(c2b, _mm_mul_pd(phi01, zb));       // c2 xz, c2 yz
  const __m128d c1xy = _mm_mul_pd(c1b, phi01);                          // c1 x, c1 y
  const __m128d c1y_negx = _mm_xor_pd(_mm_shuffle_pd(c1xy, c1xy, 1), _mm_set_pd(-0.0, 0.0));
  const __m128d r10_01 = _mm_add_pd(_mm_set1_pd(c2xy), _mm_set_pd(-c1z, c1z));  // r10, r01
  const __m128d rc0 = _mm_unpacklo_pd(diag01, r10_01);  // r00, r10
  const __m128d rc1 = _mm_unpackhi_pd(r10_01, diag01);  // r01, r11
  const __m128d rc2 = _mm_add_pd(c2xz_yz, c1y_negx);    // r02 = c2xz + c1y, r12 = c2yz - c1x
  const __m128d r2_01 = _mm_sub_pd(c2xz_yz, c1y_negx);  // r20 = c2xz - c1y, r21 = c2yz + c1x

  // exp(omega_rot dt) theta: rows 0-1 of each column, then row 2 of columns 0-1 and 2.
  double* nth = next.theta.data();
  for (int j = 0; j < 3; ++j) {
    const __m128d colj = _mm_loadu_pd(th + 3 * j);
    _mm_storeu_pd(nth + 3 * j,
                  _mm_add_pd(_mm_add_pd(_mm_mul_pd(rc0, low(colj)), _mm_mul_pd(rc1, high(colj))),
                             _mm_mul_pd(rc2, _mm_set1_pd(th[3 * j + 2]))));
  }
  const double r20 = _mm_cvtsd_f64(r2_01), r21 = _mm_cvtsd_f64(high(r2_01));
  const __m128d n2_01 = _mm_add_pd(
      _mm_mul_pd(low(r2_01), row0),
      _mm_add_pd(_mm_mul_pd(high(r2_01), row1), _mm_mul_pd(_mm_set1_pd(r22), row2)));
  nth[2] = _mm_cvtsd_f64(n2_01);
  nth[5] = _mm_cvtsd_f64(high(n2_01));
  nth[8] = r20 * th[6] + (r21 * th[7] + r22 * th[8]);

  // Thrust along the nose, gravity, the speed cap, the position (as the template).
  const double thrust = u.boost * (c.boost_accel + c.throttle_accel) +
                        (1.0 - u.boost) * c.throttle_accel * u.throttle;
  const __m128d v01 = _mm_add_pd(_mm_loadu_pd(s.v.data()),
                                 _mm_mul_pd(_mm_mul_pd(col0, _mm_set1_pd(thrust)), dt));
  const double v2 = s.v(2) + (th[2] * thrust + c.gravity_z) * dt_s;
  ClampNormSse2(v01, v2, c.max_speed, next.v.data());
  _mm_storeu_pd(next.x.data(),
                _mm_add_pd(_mm_loadu_pd(s.x.data()), _mm_mul_pd(_mm_loadu_pd(next.v.data()), dt)));
  next.x(2) = s.x(2) + next.v(2) * dt_s;
  return next;
}
#endif

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
