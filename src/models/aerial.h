// The car in the air (notes 000/001): torque Theta (T u + D Theta^T omega) with pitch and yaw
// damping scaled by (1 - |input|), |omega| <= 5.5, orientation advanced by the closed-form
// exponential of the averaged angular velocity; gravity, boost and air throttle along the nose.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "src/common/constants.h"
#include "src/common/inline.h"
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
  // the recorded angular velocity 1.1 -> 0.18 degrees (decision 0004). 0 by default.
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
// StepAerial for double, two doubles at a time (SSE2): the template's physics to double
// round-off, not its operation order (tested against StepAerial<double>, which names the
// template: within 1e-15 relative at 120 Hz). World three-vectors are held as rows 0-1 in one
// register and row 2 beside; body-frame ones as (pitch, yaw) in one register and roll beside, so
// the two damping factors 1 - |input| are one operation. Arranged to shorten the chain of
// dependent operations from one step's orientation to the next, which bounds chained steps
// (bench/README.md):
// - the orientation turns in the body frame, theta exp(Skew(theta^T omega_rot dt)), equal to the
//   template's exp(Skew(omega_rot dt)) theta for orthonormal theta: theta^T omega_new is the old
//   body rates plus the torque's change, so the world angular velocity (the cap's input and the
//   next step's omega) is off that chain;
// - dt scales the inputs and damping before the torque instead of the torque after it;
// - the rotation's a^2 is the body rates' squared norm times dt^2;
// - sin(a)/a and (1 - cos a)/a^2 come from a shorter series (kAerialSeriesMaxAngle2) in
//   Estrin's form (two independent halves) instead of Horner's;
// - the diagonal of exp(Skew(phi)) is c2 (phi_i^2 - a^2) + 1, and constants are memory operands;
// - a scalar that multiplies a register pair (theta(2, 0), the roll rate, a^2, e00) is computed
//   in both lanes of one register (a packed operation costs what a scalar one does, and its
//   broadcast goes), and one comparison decides the usual step (decision 0101).

// Below this squared angle per step (rad^2; |omega| dt < 0.0548 rad, 6.57 rad/s at 120 Hz: every
// 120 Hz aerial step, the cap of 5.5 rad/s plus one tick of torque) the double path takes
// c1 = sin(a)/a and c2 = (1 - cos a)/a^2 from their series to a^6 (three terms after the
// constant). The first term left out of c1, a^8 / 9! <= 2.3e-16, multiplies |phi| <= 0.0548 in
// the rotation matrix: at most 1.2e-17 there, a tenth of the last bit of its unit-size entries;
// in c2 it is a^8 / 10! <= 2.3e-17 times a^2: 7e-20. Above it, ExpSo3Coefficients (its longer
// series, then the closed form).
inline constexpr double kAerialSeriesMaxAngle2 = 0.003;

// Lane 0 or lane 1 in both lanes, and the lanes swapped (pshufd: one instruction, a intact).
inline __m128d LowSse2(__m128d a) {
  return _mm_castsi128_pd(_mm_shuffle_epi32(_mm_castpd_si128(a), 0x44));
}
inline __m128d HighSse2(__m128d a) {
  return _mm_castsi128_pd(_mm_shuffle_epi32(_mm_castpd_si128(a), 0xEE));
}
inline __m128d SwapSse2(__m128d a) {
  return _mm_castsi128_pd(_mm_shuffle_epi32(_mm_castpd_si128(a), 0x4E));
}
// Lane 0 + lane 1 in both lanes (a0 + a1 and a1 + a0 are the same double).
inline __m128d LaneSumBothSse2(__m128d a) { return _mm_add_pd(a, SwapSse2(a)); }
// Lane 0 + lane 1, as a scalar.
inline double LaneSumSse2(__m128d a) { return _mm_cvtsd_f64(_mm_add_sd(a, HighSse2(a))); }

// sqrtsd: the correctly rounded square root std::sqrt returns, without its errno branch.
inline double SqrtSse2(double x) {
  const __m128d v = _mm_set1_pd(x);
  return _mm_cvtsd_f64(_mm_sqrt_sd(v, v));
}

// |v|^2 of the three-vector (lanes 0-1 of v01, v2): (v0^2 + v1^2) + v2^2.
inline double SquaredNormSse2(__m128d v01, double v2) {
  return LaneSumSse2(_mm_mul_pd(v01, v01)) + v2 * v2;
}

// limit when use, else -1 (below every squared norm), from bits: a value, not a branch, so GCC
// computes it once before a chain of steps.
inline double LimitOrMinusOne(bool use, double limit) {
  const double minus_one = -1.0;
  std::uint64_t limit_bits, minus_one_bits;
  std::memcpy(&limit_bits, &limit, 8);
  std::memcpy(&minus_one_bits, &minus_one, 8);
  const std::uint64_t mask = 0 - static_cast<std::uint64_t>(use);
  const std::uint64_t bits = (limit_bits & mask) | (minus_one_bits & ~mask);
  double out;
  std::memcpy(&out, &bits, 8);
  return out;
}

// (c1, c2) = (1 - a^2/6 + a^4/120 - a^6/5040, 1/2 - a^2/24 + a^4/720 - a^6/40320) for a^2 in both
// lanes of a2 (below kAerialSeriesMaxAngle2), as (k0 + a^2 k1) + a^4 (k2 + a^2 k3).
inline __m128d ExpSo3SeriesSse2(__m128d a2) {
  const __m128d head = _mm_add_pd(_mm_mul_pd(a2, _mm_set_pd(-1.0 / 24.0, -1.0 / 6.0)),
                                  _mm_set_pd(0.5, 1.0));
  const __m128d tail = _mm_add_pd(_mm_mul_pd(a2, _mm_set_pd(-1.0 / 40320.0, -1.0 / 5040.0)),
                                  _mm_set_pd(1.0 / 720.0, 1.0 / 120.0));
  return _mm_add_pd(_mm_mul_pd(_mm_mul_pd(a2, a2), tail), head);
}

// (c1, c2) of ExpSo3Coefficients, out of line: the rare path of StepAerial below, which then
// keeps a^2 in a register. RLFIT_CONST: libm's sin and cos touch errno only for an infinite
// angle, whose step is NaN either way.
RLFIT_NOINLINE RLFIT_CONST inline __m128d ExpSo3CoefficientsSse2(double a2) {
  double c1, c2;
  ExpSo3Coefficients(a2, &c1, &c2);
  return _mm_set_pd(c2, c1);
}

// EulerRateDrift(rates, theta) in the body frame, its pitch and yaw components (roll's is
// rates_y theta(2, 0) - rates_r), from theta's column 0 rows 0-1 and row 2 columns 1-2:
// -rates_r nose - rates_p left + rates_y e_z with theta^T nose = e_0, theta^T e_z = row 2 of
// theta, and for the horizontal left axis (-nose_y, nose_x, 0) / h, theta^T of it =
// (0, (nose x left)_z, (nose x up)_z) / h = (0, theta(2, 2), -theta(2, 1)) / h (theta
// orthonormal); with the nose vertical the car's left axis, e_1. Out of line: only fitted
// coefficients have a drift. From values, not through pointers: StepAerial's state and
// coefficients do not escape to a call, so a chain of steps keeps them in registers.
RLFIT_NOINLINE RLFIT_CONST inline __m128d EulerRateDriftPitchYawSse2(__m128d rates_py,
                                                                      __m128d col0, __m128d p2) {
  const double horizontal2 = LaneSumSse2(_mm_mul_pd(col0, col0));
  __m128d left_py = _mm_set_pd(0.0, 1.0);
  if (horizontal2 > 1e-12) {
    const double inv_h = 1.0 / SqrtSse2(horizontal2);
    left_py = _mm_mul_pd(_mm_xor_pd(SwapSse2(p2), _mm_set_pd(-0.0, 0.0)), _mm_set1_pd(inv_h));
  }
  return _mm_sub_pd(_mm_mul_pd(HighSse2(rates_py), p2), _mm_mul_pd(LowSse2(rates_py), left_py));
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

// RLFIT_ALWAYS_INLINE: GCC's heuristics leave it out of line once its clamps are calls.
RLFIT_ALWAYS_INLINE CarState<double> StepAerial(const AerialCoeffs<double>& c,
                                                const CarState<double>& s, const Controls& u,
                                                double dt_s, bool rotate_with_new_omega) {
  static_assert(offsetof(Controls, yaw) == offsetof(Controls, pitch) + sizeof(double),
                "pitch and yaw are loaded as one pair");
  const double* th = s.theta.data();  // column major: th[i + 3 j] = theta(i, j)
  const __m128d dt = _mm_set1_pd(dt_s);
  const __m128d one = _mm_set1_pd(1.0);
  const __m128d col0 = _mm_loadu_pd(th), col1 = _mm_loadu_pd(th + 3), col2 = _mm_loadu_pd(th + 6);
  const __m128d t20 = _mm_set1_pd(th[2]);  // theta(2, 0) in both lanes
  // theta(2, 1), theta(2, 2); not _mm_loadh_pd, whose builtin takes the state's address: GCC
  // then counts it as escaped and reloads the coefficients and their products every step.
  const __m128d p2 = _mm_set_pd(th[8], th[5]);
  const __m128d w01 = _mm_loadu_pd(s.omega.data());
  const double w2 = s.omega(2);

  // Body-frame angular velocity theta^T omega: roll (in both lanes), then (pitch, yaw). Rows 0-1
  // of each column times (omega_0, omega_1), their lanes summed: column 0, then columns 1 and 2
  // side by side.
  const __m128d wb_r =
      _mm_add_pd(LaneSumBothSse2(_mm_mul_pd(col0, w01)), _mm_mul_pd(t20, _mm_set1_pd(w2)));
  const __m128d m1 = _mm_mul_pd(col1, w01), m2 = _mm_mul_pd(col2, w01);
  const __m128d wb_py = _mm_add_pd(_mm_add_pd(_mm_unpacklo_pd(m1, m2), _mm_unpackhi_pd(m1, m2)),
                                   _mm_mul_pd(p2, _mm_set1_pd(w2)));
  // The step's change of body-frame angular velocity, (T u + D f theta^T omega) dt, with the
  // damping factors f = 1 - |input| for pitch and yaw (1 for roll).
  // Written as T u dt - D (|u| - 1) dt theta^T omega.
  const __m128d u_py = _mm_loadu_pd(&u.pitch);
  const __m128d abs_u_py = _mm_and_pd(u_py, _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffff)));
  const __m128d tau_py = _mm_sub_pd(
      _mm_mul_pd(_mm_loadu_pd(c.torque.data() + 1), _mm_mul_pd(u_py, dt)),
      _mm_mul_pd(_mm_mul_pd(_mm_loadu_pd(c.damping.data() + 1),
                            _mm_mul_pd(_mm_sub_pd(abs_u_py, one), dt)),
                 wb_py));
  const __m128d tau_r =
      _mm_add_pd(_mm_mul_pd(_mm_set1_pd(c.torque(0)), _mm_mul_pd(_mm_set1_pd(u.roll), dt)),
                 _mm_mul_pd(_mm_set1_pd(c.damping(0) * dt_s), wb_r));

  CarState<double> next;
  // The new angular velocity before the cap, in the body frame (theta^T omega + tau dt) and in
  // the world (omega + theta tau dt; the orientation turns with it, see the template).
  const __m128d wub_py = _mm_add_pd(wb_py, tau_py);
  const __m128d wub_r = _mm_add_pd(wb_r, tau_r);
  __m128d wu01 =
      _mm_add_pd(_mm_add_pd(_mm_mul_pd(col0, tau_r), _mm_mul_pd(col1, LowSse2(tau_py))),
                 _mm_add_pd(_mm_mul_pd(col2, HighSse2(tau_py)), w01));
  double wu2 =
      (_mm_cvtsd_f64(_mm_mul_pd(t20, tau_r)) + w2) + LaneSumSse2(_mm_mul_pd(p2, tau_py));
  const __m128d wub_n2 =
      _mm_add_pd(LaneSumBothSse2(_mm_mul_pd(wub_py, wub_py)), _mm_mul_pd(wub_r, wub_r));
  // The step's rotation vector in the body frame, phi = (r, p, y) = theta^T omega_rot dt (r in
  // both lanes, q = (p, y)), its squared norm a^2 in both lanes and (c1, c2) of exp(Skew(phi)).
  // Usually (no drift, rotating with the new rates, at most max_omega) phi is the new body rates
  // times dt, uncapped, and a^2 <= max_omega^2 dt^2 (rounding is monotonic): when that bound is
  // below the series' limit (at the game's cap, every tick rate from 62 Hz up) one comparison,
  // against a limit computed once for a chain of steps, decides the cap, the drift and the
  // series. Otherwise the general path decides them one by one. (A NaN takes the first path:
  // NaN either way.)
  const double max_omega2 = c.max_omega * c.max_omega;
  const double usual_limit = LimitOrMinusOne(
      AllZeroBits(c.drift.data()) & (max_omega2 * (dt_s * dt_s) < kAerialSeriesMaxAngle2),
      max_omega2);
  __m128d q, r, a2, coef;
  if (rotate_with_new_omega && !(_mm_cvtsd_f64(wub_n2) > usual_limit)) {
    q = _mm_mul_pd(wub_py, dt);
    r = _mm_mul_pd(wub_r, dt);
    a2 = _mm_mul_pd(wub_n2, _mm_set1_pd(dt_s * dt_s));
    coef = ExpSo3SeriesSse2(a2);
  } else {
    // The cap, decided on the body-frame squared norm (the world one's as far as theta is
    // orthonormal, ~1e-15 relative: at a tie either side is the cap to round-off) and scaled by
    // the world vector's own norm, as the template, so a capped omega has the cap's norm to the
    // last bits.
    if (_mm_cvtsd_f64(wub_n2) > max_omega2) {
      const double scale = c.max_omega / SqrtSse2(SquaredNormSse2(wu01, wu2));
      wu01 = _mm_mul_pd(wu01, _mm_set1_pd(scale));
      wu2 *= scale;
    }
    // The new body rates, or their average with the old ones, plus the drift (which is given in
    // the world frame).
    __m128d rot_py = wub_py, rot_r = wub_r, rot_n2 = wub_n2;
    if (!rotate_with_new_omega) {
      rot_py = _mm_mul_pd(_mm_set1_pd(0.5), _mm_add_pd(wb_py, wub_py));
      rot_r = _mm_mul_pd(_mm_set1_pd(0.5), _mm_add_pd(wb_r, wub_r));
      rot_n2 = _mm_add_pd(LaneSumBothSse2(_mm_mul_pd(rot_py, rot_py)), _mm_mul_pd(rot_r, rot_r));
    }
    if (!AllZeroBits(c.drift.data())) {
      const __m128d d = EulerRateDriftPitchYawSse2(_mm_loadu_pd(c.drift.data() + 1), col0, p2);
      rot_py = _mm_add_pd(rot_py, d);
      rot_r = _mm_add_pd(rot_r, _mm_set1_pd(c.drift(2) * s.theta(2, 0) - c.drift(0)));
      rot_n2 = _mm_add_pd(LaneSumBothSse2(_mm_mul_pd(rot_py, rot_py)), _mm_mul_pd(rot_r, rot_r));
    }
    q = _mm_mul_pd(rot_py, dt);
    r = _mm_mul_pd(rot_r, dt);
    a2 = _mm_mul_pd(rot_n2, _mm_set1_pd(dt_s * dt_s));
    coef = _mm_cvtsd_f64(a2) < kAerialSeriesMaxAngle2 ? ExpSo3SeriesSse2(a2)
                                                      : ExpSo3CoefficientsSse2(_mm_cvtsd_f64(a2));
  }
  _mm_storeu_pd(next.omega.data(), wu01);
  next.omega(2) = wu2;

  // exp(Skew(phi)) = 1 + c1 Skew(phi) + c2 Skew(phi)^2, c1 = sin(a)/a, c2 = (1 - cos a)/a^2. Its
  // blocks [[e00, b], [d, (e1; e2)]] with b = (e01, e02), d = (e10, e20), e1 = (e11, e12),
  // e2 = (e21, e22); the diagonal 1 - c2 (a^2 - phi_i^2) as c2 (phi_i^2 - a^2) + 1; -c1 x as
  // (-c1) x (the same double).
  const __m128d c1b = LowSse2(coef), c2b = HighSse2(coef);
  const __m128d c1_neg_lo = _mm_xor_pd(c1b, _mm_set_pd(0.0, -0.0));  // -c1, c1
  const __m128d q_swap = SwapSse2(q);                                // y, p
  const __m128d c2r_py = _mm_mul_pd(c2b, _mm_mul_pd(q, r));         // c2 r p, c2 r y
  const __m128d c1_negy_p = _mm_mul_pd(c1_neg_lo, q_swap);          // -c1 y, c1 p
  const __m128d b = _mm_add_pd(c2r_py, c1_negy_p);  // c2 r p - c1 y, c2 r y + c1 p
  const __m128d d = _mm_sub_pd(c2r_py, c1_negy_p);  // c2 r p + c1 y, c2 r y - c1 p
  const __m128d diag12 = _mm_add_pd(_mm_mul_pd(c2b, _mm_sub_pd(_mm_mul_pd(q, q), a2)), one);
  const __m128d off12 = _mm_add_pd(_mm_mul_pd(c2b, _mm_mul_pd(q, q_swap)),
                                   _mm_mul_pd(c1_neg_lo, r));  // e12, e21
  const __m128d e1 = _mm_unpacklo_pd(diag12, off12);           // e11, e12
  const __m128d e2 = _mm_unpackhi_pd(off12, diag12);           // e21, e22
  const __m128d e00 = _mm_add_pd(_mm_mul_pd(c2b, _mm_sub_pd(_mm_mul_pd(r, r), a2)), one);

  // theta exp(Skew(phi)): row 2 of columns 1-2 and 0, then (after the translation, an order in
  // which GCC keeps more of a chain's state in registers) rows 0-1 of each column.
  double* nth = next.theta.data();
  const __m128d n2_12 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(t20, b), _mm_mul_pd(LowSse2(p2), e1)),
                                   _mm_mul_pd(HighSse2(p2), e2));
  _mm_storel_pd(nth + 5, n2_12);
  _mm_storeh_pd(nth + 8, n2_12);
  nth[2] = _mm_cvtsd_f64(_mm_mul_pd(t20, e00)) + LaneSumSse2(_mm_mul_pd(p2, d));

  // Thrust along the nose, gravity, the speed cap, the position (as the template).
  // (1 - boost) throttle_accel throttle, as - (boost - 1) ... (exactly its negative).
  const double thrust_dt = (u.boost * (c.boost_accel + c.throttle_accel) -
                            (u.boost - 1.0) * c.throttle_accel * u.throttle) * dt_s;
  __m128d v01 = _mm_add_pd(_mm_loadu_pd(s.v.data()), _mm_mul_pd(col0, _mm_set1_pd(thrust_dt)));
  double v2 = s.v(2) + (_mm_cvtsd_f64(t20) * thrust_dt + c.gravity_z * dt_s);
  const double v_n2 = SquaredNormSse2(v01, v2);
  if (v_n2 > c.max_speed * c.max_speed) {  // ClampNorm: max_speed / sqrt(n2), in both lanes
    const __m128d scale = _mm_div_pd(_mm_set1_pd(c.max_speed), _mm_sqrt_pd(_mm_set1_pd(v_n2)));
    v01 = _mm_mul_pd(v01, scale);
    v2 *= _mm_cvtsd_f64(scale);
  }
  _mm_storeu_pd(next.v.data(), v01);
  next.v(2) = v2;
  _mm_storeu_pd(next.x.data(), _mm_add_pd(_mm_loadu_pd(s.x.data()), _mm_mul_pd(v01, dt)));
  next.x(2) = s.x(2) + v2 * dt_s;

  _mm_storeu_pd(nth, _mm_add_pd(_mm_add_pd(_mm_mul_pd(col0, e00), _mm_mul_pd(col1, LowSse2(d))),
                                _mm_mul_pd(col2, HighSse2(d))));
  _mm_storeu_pd(nth + 3, _mm_add_pd(_mm_add_pd(_mm_mul_pd(col0, LowSse2(b)),
                                               _mm_mul_pd(col1, LowSse2(e1))),
                                    _mm_mul_pd(col2, LowSse2(e2))));
  _mm_storeu_pd(nth + 6, _mm_add_pd(_mm_add_pd(_mm_mul_pd(col0, HighSse2(b)),
                                               _mm_mul_pd(col1, HighSse2(e1))),
                                    _mm_mul_pd(col2, HighSse2(e2))));
  return next;
}
#endif

}  // namespace rlfit
