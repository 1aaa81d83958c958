// State of the car shared by the aerial and ground models, templated on the scalar.
#pragma once

#include "src/common/rotation.h"

namespace rlfit {

template <typename T>
struct CarState {
  Vec3<T> x;      // position, uu
  Vec3<T> v;      // velocity, uu/s
  Vec3<T> omega;  // angular velocity (world frame), rad/s
  Mat3<T> theta;  // orientation, columns forward, left, up
};

// True when every component is exactly 0 and so is every derivative: for double the value,
// for any other scalar (a ceres::Jet, whose derivative parts matter) never, so a model may
// skip a term it scales only where that changes nothing.
inline bool IsExactlyZero(const Vec3<double>& v) {
  return v(0) == 0.0 && v(1) == 0.0 && v(2) == 0.0;
}
template <typename T>
bool IsExactlyZero(const Vec3<T>&) {
  return false;
}

// Scales `w` down to norm at most `max_norm`; smooth except at the cap (autodiff-safe).
template <typename T>
Vec3<T> ClampNorm(const Vec3<T>& w, double max_norm) {
  using std::sqrt;
  const T n2 = w.squaredNorm();
  if (n2 > T(max_norm * max_norm)) return w * (T(max_norm) / sqrt(n2));
  return w;
}

}  // namespace rlfit
