// Residuals of the ground car fit: open-loop rollouts of StepGround (the function replay runs)
// compared with the recorded yaw rate, in-plane velocity and in-plane position.
#pragma once

#include <ceres/ceres.h>

#include <memory>
#include <utility>
#include <vector>

#include "fit/active_lanes.h"
#include "fit/fit.h"
#include "src/io/episode.h"
#include "src/models/ground.h"
#include "src/replay/episode_steps.h"

namespace rlfit {

// Per-component scales that turn errors into dimensionless residuals; roughly the size of a
// good 0.5 s prediction error on the ground episodes, so that each quantity weighs in comparably.
struct GroundResidualScales {
  double omega_rad_s = 0.05;
  double v_uu_s = 10.0;
  double x_uu = 5.0;
};

// Rollout over rows start..start+rows of an episode from the recorded state at `start`:
// for each row j in 1..rows the 5 residuals
//   (w_z,pred - w_z,rec) / s_omega, (v_xy,pred - v_xy,rec) / s_v, (x_xy,pred - x_xy,rec) / s_x,
// units rad/s, uu/s, uu divided by the scales. The vertical components are left out: the model
// holds the car on the plane (StepGround), so they carry no information on the coefficients.
// Parameter blocks: throttle[3], brake_coast[2], boost[2], curvature[6], steer_response[1],
// lateral[2], backward[2], turn_drag[2] (GroundLayout()).
class GroundRolloutResidual {
 public:
  static constexpr int kPerRow = 5;

  // `controls`: the steps' inputs of the episode's rows (RowStepControls of `episode` and
  // `integ`, covering rows start..start+rows-1), shared by the windows of an episode; null:
  // computed here for the window's rows.
  GroundRolloutResidual(const Episode* episode, int start, int rows, const Integration& integ,
                        const GroundResidualScales& scales,
                        std::shared_ptr<const RowStepControls> controls = nullptr)
      : episode_(episode), start_(start), rows_(rows), integ_(integ), scales_(scales),
        controls_(controls != nullptr
                      ? std::move(controls)
                      : std::make_shared<const RowStepControls>(*episode, integ, start,
                                                                start + rows)) {
    RLFIT_CHECK(controls_->first_row() <= start && start + rows <= controls_->last_row(),
                "the step controls cover the window's rows");
  }

  template <typename T>
  bool operator()(const T* throttle, const T* brake_coast, const T* boost, const T* curvature,
                  const T* steer_response, const T* lateral, const T* backward, const T* turn_drag,
                  T* residuals) const {
    const GroundCoeffs<T> c = GroundCoeffs<T>::FromBlocks(
        throttle, brake_coast, boost, curvature, steer_response, lateral, backward, turn_drag);
    CarState<T> s = FromSample<CarState<T>>(episode_->rows[start_]);
    for (int j = 1; j <= rows_; ++j) {
      s = AdvanceGroundRow(c, s, *episode_, start_ + j - 1, integ_, *controls_);
      const Sample& rec = episode_->rows[start_ + j];
      T* r = residuals + kPerRow * (j - 1);
      r[0] = (s.omega(2) - T(rec.omega(2))) / T(scales_.omega_rad_s);
      for (int i = 0; i < 2; ++i) {
        r[1 + i] = (s.v(i) - T(rec.v(i))) / T(scales_.v_uu_s);
        r[3 + i] = (s.x(i) - T(rec.x(i))) / T(scales_.x_uu);
      }
    }
    return true;
  }

  // The same residuals from the flat coefficient vector (GroundLayout() order).
  template <typename T>
  bool Flat(const T* c, T* residuals) const {
    using G = GroundCoeffs<double>;
    return (*this)(c + G::kThrottleAccel, c + G::kBrakeAccel, c + G::kBoostAccelSlow,
                   c + G::kKappa0, c + G::kYawRateResponse, c + G::kLateralFrictionRate,
                   c + G::kBackwardCurvatureScale, c + G::kTurnDragArm, residuals);
  }

  // Autodiff over all 20 coefficients (the reference of CreateActive).
  static ceres::CostFunction* Create(const Episode* episode, int start, int rows,
                                     const Integration& integ,
                                     const GroundResidualScales& scales = {}) {
    return new ceres::AutoDiffCostFunction<GroundRolloutResidual, ceres::DYNAMIC, 3, 2, 2,
                                           kCurvatureKnots, 1, 2, 2, 2>(
        new GroundRolloutResidual(episode, start, rows, integ, scales), kPerRow * rows);
  }

  // What the fit uses: the same values and Jacobian, with Jet lanes only for the coefficients
  // the window reads (ActiveLaneCost).
  static ceres::CostFunction* CreateActive(
      const Episode* episode, int start, int rows, const Integration& integ,
      const GroundResidualScales& scales = {},
      std::shared_ptr<const RowStepControls> controls = nullptr) {
    return new ActiveLaneCost<GroundRolloutResidual, 8, 12, 16, GroundCoeffs<double>::kSize>(
        new GroundRolloutResidual(episode, start, rows, integ, scales, std::move(controls)),
        {3, 2, 2, kCurvatureKnots, 1, 2, 2, 2}, kPerRow * rows);
  }

 private:
  const Episode* episode_;
  int start_;
  int rows_;
  Integration integ_;
  GroundResidualScales scales_;
  std::shared_ptr<const RowStepControls> controls_;
};

// True if row k of `ep` is a car driving on flat ground: on_ground, at the rest height (within
// kGroundHeightToleranceUu), upright, no jump and no handbrake.
bool IsFlatGroundRow(const Episode& ep, int k);

// Adds one GroundRolloutResidual per window (options.window_s long, options.stride_s apart) in
// which every row is flat-ground driving. Returns the number of residual blocks.
int AddGroundResiduals(ceres::Problem* problem, double* params,
                       const std::vector<Episode>& episodes, const FitOptions& options,
                       std::vector<int>* block_episodes);

}  // namespace rlfit
