// Residuals of the aerial car fit: open-loop rollouts of StepAerial (the function replay
// runs) compared with the recorded angular velocity, velocity and position.
#pragma once

#include <vector>

#include <ceres/ceres.h>

#include "fit/fit.h"
#include "fit/state_residuals.h"
#include "src/io/episode.h"
#include "src/models/aerial.h"
#include "src/replay/episode_steps.h"

namespace rlfit {

// Per-component scales that turn errors into dimensionless residuals; roughly the size of
// a good 0.5 s prediction error, so that each quantity weighs in comparably.
struct AerialResidualScales {
  double omega_rad_s = 0.05;
  double v_uu_s = 5.0;
  double x_uu = 2.0;
  double angle_rad = 0.01;  // about 0.6 degrees
};

// Rollout over rows start..start+rows of an episode from the recorded state at `start`:
// for each row j in 1..rows the 12 residuals
//   (omega_pred - omega_rec) / s_omega, (v_pred - v_rec) / s_v, (x_pred - x_rec) / s_x,
//   vee(E - E^T) / 2 / s_angle with E = Theta_rec^T Theta_pred (the rotation-vector error,
//   sin(angle) times the axis, in the body frame),
// units rad/s, uu/s, uu, rad divided by the scales. Parameter blocks: air_torque[3],
// air_damping[3], thrust[2], orientation_drift[3] (AerialLayout()).
class AerialRolloutResidual {
 public:
  static constexpr int kPerRow = 12;  // residuals per predicted row

  AerialRolloutResidual(const Episode* episode, int start, int rows, const Integration& integ,
                        const AerialResidualScales& scales)
      : episode_(episode), start_(start), rows_(rows), integ_(integ), scales_(scales) {}

  template <typename T>
  bool operator()(const T* torque, const T* damping, const T* thrust, const T* drift,
                  T* residuals) const {
    const AerialCoeffs<T> c = AerialCoeffs<T>::FromBlocks(torque, damping, thrust, drift);
    CarState<T> s = FromSample<CarState<T>>(episode_->rows[start_]);
    for (int j = 1; j <= rows_; ++j) {
      s = AdvanceAerialRow(c, s, *episode_, start_ + j - 1, integ_);
      const Sample& rec = episode_->rows[start_ + j];
      CarRowResiduals(s, rec, scales_, residuals + kPerRow * (j - 1));
    }
    return true;
  }

  static ceres::CostFunction* Create(const Episode* episode, int start, int rows,
                                     const Integration& integ,
                                     const AerialResidualScales& scales = {}) {
    return new ceres::AutoDiffCostFunction<AerialRolloutResidual, ceres::DYNAMIC, 3, 3, 2, 3>(
        new AerialRolloutResidual(episode, start, rows, integ, scales), kPerRow * rows);
  }

 private:
  const Episode* episode_;
  int start_;
  int rows_;
  Integration integ_;
  AerialResidualScales scales_;
};

// Adds one AerialRolloutResidual per window (options.window_s long, options.stride_s apart)
// in which the car stays in the air. Returns the number of residual blocks.
int AddAerialResiduals(ceres::Problem* problem, double* params,
                       const std::vector<Episode>& episodes, const FitOptions& options,
                       std::vector<int>* block_episodes);

}  // namespace rlfit
