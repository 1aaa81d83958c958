// Residuals of the vehicle fit (issue 37): open-loop rollouts of StepVehicle (the function replay
// runs) compared with the recorded yaw rate, in-plane velocity and in-plane position, as the
// ground fit compares StepGround's.
#pragma once

#include <ceres/ceres.h>

#include <memory>
#include <utility>
#include <vector>

#include "fit/fit.h"
#include "fit/ground_fit.h"
#include "src/common/error.h"
#include "src/io/episode.h"
#include "src/models/vehicle.h"
#include "src/replay/episode_steps.h"

namespace rlfit {

// The ground fit's scales: the same quantities of the same car on the same floor.
using VehicleResidualScales = GroundResidualScales;

// Rollout over rows start..start+rows of an episode from the recorded state at `start`: for
// each row j in 1..rows the 5 residuals (w_z,pred - w_z,rec) / s_omega,
// (v_xy,pred - v_xy,rec) / s_v, (x_xy,pred - x_xy,rec) / s_x (units rad/s, uu/s, uu over the
// scales; the vertical components carry nothing: the step holds the car on the plane).
// Parameter blocks: drive[4], tyre[3], steer[1], inertia[1] (VehicleLayout()). `controls`: the
// steps' inputs of the episode's rows (RowStepControls), shared by the windows of an episode.
// `acting` (may be null): the handbrake acting on each step of the episode
// (VehicleActingHandbrake), else the recorded input acts; `start_level`: the handbrake level at
// `start` (VehicleStartState; the fit reads it from VehicleEpisodeHandbrake's levels).
class VehicleRolloutResidual {
 public:
  static constexpr int kPerRow = 5;

  VehicleRolloutResidual(const Episode* episode, int start, int rows,
                         const VehicleResidualScales& scales,
                         std::shared_ptr<const RowStepControls> controls,
                         std::shared_ptr<const std::vector<double>> acting = nullptr,
                         double start_level = 0.0)
      : episode_(episode), start_(start), rows_(rows), scales_(scales),
        controls_(std::move(controls)), acting_(std::move(acting)), start_level_(start_level) {
    RLFIT_CHECK(controls_->first_row() <= start && start + rows <= controls_->last_row(),
                "the step controls cover the window's rows");
  }

  template <typename T>
  bool operator()(const T* drive, const T* tyre, const T* steer, const T* inertia,
                  T* residuals) const {
    const VehicleCoeffs<T> c = VehicleCoeffs<T>::FromBlocks(drive, tyre, steer, inertia);
    VehicleState<T> s = FromSample<VehicleState<T>>(episode_->rows[start_]);
    s.wheels.handbrake = start_level_;
    const double* acting = acting_ == nullptr ? nullptr : acting_->data();
    for (int j = 1; j <= rows_; ++j) {
      s = AdvanceVehicleRow(c, s, *episode_, start_ + j - 1, *controls_, acting);
      const Sample& rec = episode_->rows[start_ + j];
      T* r = residuals + kPerRow * (j - 1);
      r[0] = (s.body.omega(2) - T(rec.omega(2))) / T(scales_.omega_rad_s);
      for (int i = 0; i < 2; ++i) {
        r[1 + i] = (s.body.v(i) - T(rec.v(i))) / T(scales_.v_uu_s);
        r[3 + i] = (s.body.x(i) - T(rec.x(i))) / T(scales_.x_uu);
      }
    }
    return true;
  }

  static ceres::CostFunction* Create(const Episode* episode, int start, int rows,
                                     const VehicleResidualScales& scales,
                                     std::shared_ptr<const RowStepControls> controls,
                                     std::shared_ptr<const std::vector<double>> acting = nullptr,
                                     double start_level = 0.0) {
    return new ceres::AutoDiffCostFunction<VehicleRolloutResidual, ceres::DYNAMIC, 4, 3, 1, 1>(
        new VehicleRolloutResidual(episode, start, rows, scales, std::move(controls),
                                   std::move(acting), start_level),
        kPerRow * rows);
  }

 private:
  const Episode* episode_;
  int start_;
  int rows_;
  VehicleResidualScales scales_;
  std::shared_ptr<const RowStepControls> controls_;
  std::shared_ptr<const std::vector<double>> acting_;
  double start_level_;
};

// Adds one VehicleRolloutResidual per window (options.window_s long, options.stride_s apart)
// in which every row is flat-ground driving (IsFlatGroundRow, the ground fit's windows), with
// the handbrake of VehicleActingHandbrake (recorded, or the switch inferred with the vehicle's
// own step).
// Returns the number of residual blocks.
int AddVehicleResiduals(ceres::Problem* problem, double* params,
                        const std::vector<Episode>& episodes, const FitOptions& options,
                        std::vector<int>* block_episodes);

}  // namespace rlfit
