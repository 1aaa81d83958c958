// Rotation helpers templated on the scalar (double or ceres::Jet): Euler angles to the
// orientation matrix of note 000, the closed-form exponential of a rotation vector, and
// the angle between two orientations.
#pragma once

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

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

// exp(Skew(phi)) for a rotation vector phi (rad), closed form of note 000:
// 1 + sin(a)/a W + (1 - cos(a))/a^2 W^2 with a = |phi|; a Taylor series near zero keeps
// derivatives finite for autodiff.
template <typename T>
Mat3<T> ExpSo3(const Vec3<T>& phi) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const T a2 = phi.squaredNorm();
  const Mat3<T> w = Skew(phi);
  T c1, c2;  // sin(a)/a and (1 - cos(a))/a^2
  if (a2 < T(1e-8)) {
    c1 = T(1) - a2 / T(6);
    c2 = T(0.5) - a2 / T(24);
  } else {
    const T a = sqrt(a2);
    c1 = sin(a) / a;
    c2 = (T(1) - cos(a)) / a2;
  }
  return Mat3<T>::Identity() + c1 * w + c2 * (w * w);
}

// Angle in degrees of the rotation taking orientation a to orientation b.
inline double AngleBetweenDeg(const Mat3<double>& a, const Mat3<double>& b) {
  const double c = std::clamp(((a.transpose() * b).trace() - 1.0) / 2.0, -1.0, 1.0);
  return std::acos(c) * 180.0 / 3.14159265358979323846;
}

}  // namespace rlfit
