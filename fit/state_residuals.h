// The residuals of a predicted car state against a recorded row, one formula for the rollouts
// of the aerial, jump, car (12 a row) and wall (9 a row) fits.
#pragma once

#include "src/io/episode.h"
#include "src/models/car_state.h"

namespace rlfit {

// r[0..8] = (omega - omega_rec) / s_omega, (v - v_rec) / s_v, (x - x_rec) / s_x: world frame,
// rad/s, uu/s and uu over the scales (a struct with omega_rad_s, v_uu_s, x_uu).
template <typename T, typename Scales>
void MotionResiduals(const CarState<T>& s, const Sample& rec, const Scales& scales, T* r) {
  for (int i = 0; i < 3; ++i) {
    r[i] = (s.omega(i) - T(rec.omega(i))) / T(scales.omega_rad_s);
    r[3 + i] = (s.v(i) - T(rec.v(i))) / T(scales.v_uu_s);
    r[6 + i] = (s.x(i) - T(rec.x(i))) / T(scales.x_uu);
  }
}

// r[0..11]: MotionResiduals, then the orientation error E = R_rec^T R as its small-angle
// rotation vector, (E(2,1) - E(1,2), E(0,2) - E(2,0), E(1,0) - E(0,1)) / 2 / s_angle (rad over
// scales.angle_rad).
template <typename T, typename Scales>
void CarRowResiduals(const CarState<T>& s, const Sample& rec, const Scales& scales, T* r) {
  MotionResiduals(s, rec, scales, r);
  const Mat3<T> e = rec.theta.transpose().cast<T>() * s.theta;
  const T half_inv_scale = T(0.5 / scales.angle_rad);
  r[9] = (e(2, 1) - e(1, 2)) * half_inv_scale;
  r[10] = (e(0, 2) - e(2, 0)) * half_inv_scale;
  r[11] = (e(1, 0) - e(0, 1)) * half_inv_scale;
}

}  // namespace rlfit
