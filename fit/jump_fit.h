// Residuals of the jump fit: open-loop rollouts of StepJump (the function replay runs) from
// take-off, or from a row inside a recorded jump, compared with the recorded car.
#pragma once

#include <vector>

#include <ceres/ceres.h>

#include "fit/aerial_fit.h"
#include "fit/fit.h"
#include "fit/state_residuals.h"
#include "src/io/episode.h"
#include "src/models/jump.h"
#include "src/replay/episode_steps.h"

namespace rlfit {

// Rollout over rows start..start+rows of an episode from JumpStartState at `start` (the jump
// that took off at row `takeoff`): for each row j in 1..rows the 12 residuals of
// AerialRolloutResidual (angular velocity, velocity, position, rotation vector, divided by the
// same scales). Parameter blocks: air_torque[3], air_damping[3], thrust[2],
// orientation_drift[3], jump[4], double_jump[1], dodge[5] (JumpLayout()).
class JumpRolloutResidual {
 public:
  static constexpr int kPerRow = AerialRolloutResidual::kPerRow;

  JumpRolloutResidual(const Episode* episode, int takeoff, int start, int rows,
                      const Integration& integ, const AerialResidualScales& scales)
      : episode_(episode), takeoff_(takeoff), start_(start), rows_(rows), integ_(integ),
        scales_(scales) {}

  template <typename T>
  bool operator()(const T* torque, const T* damping, const T* thrust, const T* drift,
                  const T* jump, const T* double_jump, const T* dodge, T* residuals) const {
    const JumpCoeffs<T> c =
        JumpCoeffs<T>::FromBlocks(torque, damping, thrust, drift, jump, double_jump, dodge);
    JumpCarState<T> s = JumpStartState<T>(*episode_, takeoff_, start_, integ_, c.timing);
    for (int j = 1; j <= rows_; ++j) {
      s = AdvanceJumpRow(c, s, *episode_, start_ + j - 1, integ_);
      const Sample& rec = episode_->rows[start_ + j];
      CarRowResiduals(s.car, rec, scales_, residuals + kPerRow * (j - 1));
    }
    return true;
  }

  static ceres::CostFunction* Create(const Episode* episode, int takeoff, int start, int rows,
                                     const Integration& integ,
                                     const AerialResidualScales& scales = {}) {
    return new ceres::AutoDiffCostFunction<JumpRolloutResidual, ceres::DYNAMIC, 3, 3, 2, 3, 4, 1,
                                           5>(
        new JumpRolloutResidual(episode, takeoff, start, rows, integ, scales), kPerRow * rows);
  }

 private:
  const Episode* episode_;
  int takeoff_;
  int start_;
  int rows_;
  Integration integ_;
  AerialResidualScales scales_;
};

// Adds one JumpRolloutResidual per window (options.window_s long, options.stride_s apart)
// inside a recorded jump (ClassifyRows "jump": take-off to landing). Returns the number of
// residual blocks. The aerial blocks (air_torque, air_damping, thrust, orientation_drift) are
// held constant: they are the aerial model's. Coefficients no window exercises (double jump and
// dodge on the recordings) keep their starting values, with standard error null.
int AddJumpResiduals(ceres::Problem* problem, double* params, const std::vector<Episode>& episodes,
                     const FitOptions& options, std::vector<int>* block_episodes);

}  // namespace rlfit
