// Rotation helpers templated on the scalar (double or ceres::Jet): Euler angles to the
// orientation matrix of note 000, the closed-form exponential of a rotation vector, and
// the angle between two orientations.
#pragma once

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "src/common/inline.h"

namespace rlfit {

template <typename T> using Vec3 = Eigen::Matrix<T, 3, 1>;
template <typename T> using Mat3 = Eigen::Matrix<T, 3, 3>;

// Orientation matrix with columns forward, left, up from Euler angles in radians
// (note 000 "convert_from_Euler_angles"; equals Rz(yaw) Ry(-pitch) Rx(-roll)).
template <typename T>
Mat3<T> EulerToMatrix(const T& pitch, const T& yaw, const T& roll) {
  using std::cos;
  using std::sin;
  const T cp = cos(pitch), sp = sin(pitch);
  const T cy = cos(yaw), sy = sin(yaw);
  const T cr = cos(roll), sr = sin(roll);
  Mat3<T> m;
  m(0, 0) = cp * cy;
  m(1, 0) = cp * sy;
  m(2, 0) = sp;
  m(0, 1) = cy * sp * sr - cr * sy;
  m(1, 1) = sy * sp * sr + cr * cy;
  m(2, 1) = -cp * sr;
  m(0, 2) = -cr * cy * sp - sr * sy;
  m(1, 2) = -cr * sy * sp + sr * cy;
  m(2, 2) = cp * cr;
  return m;
}

// Skew matrix W with W a = w x a.
template <typename T>
Mat3<T> Skew(const Vec3<T>& w) {
  Mat3<T> s;
  s << T(0), -w(2), w(1), w(2), T(0), -w(0), -w(1), w(0), T(0);
  return s;
}

// Below this squared angle (rad^2) ExpSo3 uses the series of its two coefficients: an angle
// under 0.1 rad, 12 rad/s at 120 Hz, so every physics step of the car (|omega| <= 5.5 rad/s).
inline constexpr double kExpSo3SeriesMaxAngle2 = 0.01;

// exp(Skew(phi)) for a rotation vector phi (rad), closed form of note 000:
// 1 + sin(a)/a W + (1 - cos(a))/a^2 W^2 with a = |phi|, W^2 = phi phi^T - a^2 1.
// For a^2 < kExpSo3SeriesMaxAngle2 the coefficients come from their Taylor series in a^2 up to
// a^8: the first term left out is below 2.6e-18 relative (a^10 / 11! and a^10 / 12! at
// a^2 = 0.01), under an eighth of the last bit, so this is the closed form to double precision
// without the square root, sine, cosine and divisions (it may differ from them in the last bit,
// as libm's own rounding does). The series also keeps derivatives finite at 0 for autodiff.
template <typename T>
void ExpSo3Coefficients(const T& a2, T* c1, T* c2) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  if (a2 < T(kExpSo3SeriesMaxAngle2)) {
    *c1 = T(1) - a2 * (T(1.0 / 6.0) -
                       a2 * (T(1.0 / 120.0) - a2 * (T(1.0 / 5040.0) - a2 * T(1.0 / 362880.0))));
    *c2 = T(0.5) - a2 * (T(1.0 / 24.0) -
                         a2 * (T(1.0 / 720.0) - a2 * (T(1.0 / 40320.0) - a2 * T(1.0 / 3628800.0))));
  } else {
    const T a = sqrt(a2);
    *c1 = sin(a) / a;
    *c2 = (T(1) - cos(a)) / a2;
  }
}

template <typename T>
Mat3<T> ExpSo3(const Vec3<T>& phi) {
  const T x = phi(0), y = phi(1), z = phi(2);
  const T xx = x * x, yy = y * y, zz = z * z;
  const T a2 = xx + yy + zz;
  T c1, c2;  // sin(a)/a and (1 - cos(a))/a^2
  ExpSo3Coefficients(a2, &c1, &c2);
  const T c2xy = c2 * (x * y), c2xz = c2 * (x * z), c2yz = c2 * (y * z);
  const T c1x = c1 * x, c1y = c1 * y, c1z = c1 * z;
  Mat3<T> r;
  r(0, 0) = T(1) - c2 * (yy + zz);
  r(1, 1) = T(1) - c2 * (xx + zz);
  r(2, 2) = T(1) - c2 * (xx + yy);
  r(0, 1) = c2xy - c1z;
  r(1, 0) = c2xy + c1z;
  r(0, 2) = c2xz + c1y;
  r(2, 0) = c2xz - c1y;
  r(1, 2) = c2yz - c1x;
  r(2, 1) = c2yz + c1x;
  return r;
}

// ExpSo3((0, 0, angle)) * m, rotating m about the world z axis, without the zero terms: the
// same coefficients, so the same values as the general product (there x = y = 0 makes
// r(0, 0) = 1 - c2 a^2 and r(1, 0) = c1 angle exactly).
template <typename T>
Mat3<T> RotateAboutZ(const T& angle, const Mat3<T>& m) {
  const T a2 = angle * angle;
  T c1, c2;
  ExpSo3Coefficients(a2, &c1, &c2);
  const T c = T(1) - c2 * a2, s = c1 * angle;  // cos(angle) and sin(angle) as ExpSo3 forms them
  Mat3<T> out;
  out.row(0) = c * m.row(0) - s * m.row(1);
  out.row(1) = s * m.row(0) + c * m.row(1);
  out.row(2) = m.row(2);
  return out;
}

#if defined(__SSE2__)
// RotateAboutZ for double, two doubles at a time (SSE2), bit for bit the template's values
// (tests/aerial_test.cc): the series' two coefficients c1, c2 side by side in one register
// through the same Horner steps, c1 angle and c2 a^2 in one product, and each column's rows 0-1
// as one pair: (c m0 - s m1, s m0 + c m1) = (c, s) m0 + (-s, c) m1 (x - y is x + (-y) in IEEE
// arithmetic, and (-s) m1 = -(s m1)). The floor steps' rotation (StepVehicle, StepGround): the
// scalar form cost 86 instructions a call out of line (bench/perf_guard car_step_floor).
template <>
RLFIT_ALWAYS_INLINE Mat3<double> RotateAboutZ<double>(const double& angle, const Mat3<double>& m) {
  const double a2 = angle * angle;
  __m128d c12;  // (c1, c2)
  if (a2 < kExpSo3SeriesMaxAngle2) {
    const __m128d a2v = _mm_set1_pd(a2);
    __m128d p = _mm_mul_pd(a2v, _mm_set_pd(1.0 / 3628800.0, 1.0 / 362880.0));
    p = _mm_mul_pd(a2v, _mm_sub_pd(_mm_set_pd(1.0 / 40320.0, 1.0 / 5040.0), p));
    p = _mm_mul_pd(a2v, _mm_sub_pd(_mm_set_pd(1.0 / 720.0, 1.0 / 120.0), p));
    p = _mm_mul_pd(a2v, _mm_sub_pd(_mm_set_pd(1.0 / 24.0, 1.0 / 6.0), p));
    c12 = _mm_sub_pd(_mm_set_pd(0.5, 1.0), p);
  } else {
    double c1, c2;
    ExpSo3Coefficients(a2, &c1, &c2);
    c12 = _mm_set_pd(c2, c1);
  }
  const __m128d prod = _mm_mul_pd(c12, _mm_set_pd(a2, angle));  // (c1 angle, c2 a^2)
  const double s = _mm_cvtsd_f64(prod);
  const double c = 1.0 - _mm_cvtsd_f64(_mm_unpackhi_pd(prod, prod));
  const __m128d cs = _mm_set_pd(s, c), ms = _mm_set_pd(c, -s);
  Mat3<double> out;
  for (int j = 0; j < 3; ++j) {
    const __m128d col = _mm_loadu_pd(m.data() + 3 * j);  // rows 0-1 of column j
    const __m128d m0 = _mm_castsi128_pd(_mm_shuffle_epi32(_mm_castpd_si128(col), 0x44));
    const __m128d m1 = _mm_castsi128_pd(_mm_shuffle_epi32(_mm_castpd_si128(col), 0xEE));
    _mm_storeu_pd(out.data() + 3 * j, _mm_add_pd(_mm_mul_pd(cs, m0), _mm_mul_pd(ms, m1)));
    out(2, j) = m(2, j);
  }
  return out;
}
#endif

// Angle in degrees of the rotation taking orientation a to orientation b.
inline double AngleBetweenDeg(const Mat3<double>& a, const Mat3<double>& b) {
  const double c = std::clamp(((a.transpose() * b).trace() - 1.0) / 2.0, -1.0, 1.0);
  return std::acos(c) * 180.0 / 3.14159265358979323846;
}

}  // namespace rlfit
