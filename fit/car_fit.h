// Residuals of the car fit: open-loop rollouts of StepCar (the function replay runs: the
// regime switch, then that regime's step: StepVehicle on the flat floor, StepSurface, StepAerial
// or StepJump) over the mixed recordings, compared with the
// recorded angular velocity, velocity, position and orientation.
#pragma once

#include <ceres/ceres.h>

#include <vector>

#include "fit/aerial_fit.h"
#include "fit/active_lanes.h"
#include "fit/fit.h"
#include "fit/state_residuals.h"
#include "src/io/episode.h"
#include "src/models/car.h"
#include "src/replay/episode_steps.h"

namespace rlfit {

// Rollout over rows start..start+rows of an episode from the recorded state at `start`
// (CarRecordedState, with the jump state `jump` and the handbrake level `handbrake` of replay's
// start, CarStartState), through
// StepCar on `arena`: for each row j in 1..rows the 12 residuals of AerialRolloutResidual
// (omega, v, x and the rotation-vector error, divided by the aerial scales), whichever regime
// the switch chose. On the floor the floor step (StepVehicle) holds z, vz, omega_x, omega_y at
// their rest values, which the recorded floor rows share, so those residuals carry no
// information there (and do no harm). Parameter blocks: the 4 aerial blocks, the 8 ground
// blocks, then the surface block, the 3 jump blocks and the 4 vehicle blocks (CarLayout()),
// sizes 3, 3, 2, 3 | 3, 2, 2, kCurvatureKnots, 1, 2, 2, 2 | 4 | 4, 1, 5 | 4, 3, 1, 1. On walls,
// curves and ramps StepSurface runs; its derivatives treat the mesh's normal as fixed within a
// tick (as the wall fit's). A jump runs StepJump.
class CarRolloutResidual {
 public:
  static constexpr int kPerRow = 12;

  CarRolloutResidual(const Episode* episode, const Arena* arena, int start, int rows,
                     const Integration& integ, const JumpState& jump, double handbrake,
                     const AerialResidualScales& scales)
      : episode_(episode), arena_(arena), start_(start), rows_(rows), integ_(integ), jump_(jump),
        handbrake_(handbrake), scales_(scales) {}

  template <typename T>
  bool operator()(const T* torque, const T* damping, const T* thrust, const T* drift,
                  const T* throttle, const T* brake_coast, const T* boost, const T* curvature,
                  const T* steer_response, const T* lateral, const T* backward,
                  const T* turn_drag, const T* wall, const T* jump, const T* double_jump,
                  const T* dodge, const T* vehicle_drive, const T* vehicle_tyre,
                  const T* vehicle_steer, const T* vehicle_inertia, T* residuals) const {
    CarCoeffs<T> c;
    c.air = AerialCoeffs<T>::FromBlocks(torque, damping, thrust, drift);
    c.ground = GroundCoeffs<T>::FromBlocks(throttle, brake_coast, boost, curvature,
                                           steer_response, lateral, backward, turn_drag);
    c.wall = SurfaceCoeffs<T>::FromBlocks(wall);
    c.jump = JumpCoeffs<T>::FromBlocks(torque, damping, thrust, drift, jump, double_jump, dodge);
    c.vehicle =
        VehicleCoeffs<T>::FromBlocks(vehicle_drive, vehicle_tyre, vehicle_steer, vehicle_inertia);
    return Rollout(c, residuals);
  }

  // The same residuals from the flat coefficient vector (CarLayout() order).
  template <typename T>
  bool Flat(const T* c, T* residuals) const {
    return Rollout(CarCoeffs<T>::FromArray(c), residuals);
  }

  // What the fit uses: the same values and Jacobian, with Jet lanes only for the varying
  // coefficients the window reads (ActiveLaneCost): a window in the air reads none of the
  // ground's 20, one on the floor none of the aerial drift or thrust, and the held surface,
  // jump and vehicle blocks (AddCarResiduals) get no lanes at all; Create's Jets carry all
  // CarCoeffs::kSize (54).
  static ceres::CostFunction* CreateActive(const Episode* episode, const Arena* arena, int start,
                                           int rows, const Integration& integ,
                                           const JumpState& jump = JumpState(),
                                           double handbrake = 0.0,
                                           const AerialResidualScales& scales = {}) {
    std::vector<int> sizes;
    for (const ParamBlock& b : CarLayout().blocks) sizes.push_back(b.size);
    return new ActiveLaneCost<CarRolloutResidual, 8, 12, 16, 24, 32, CarCoeffs<double>::kSize>(
        new CarRolloutResidual(episode, arena, start, rows, integ, jump, handbrake, scales), sizes,
        kPerRow * rows);
  }

  static ceres::CostFunction* Create(const Episode* episode, const Arena* arena, int start,
                                     int rows, const Integration& integ,
                                     const JumpState& jump = JumpState(), double handbrake = 0.0,
                                     const AerialResidualScales& scales = {}) {
    return new ceres::AutoDiffCostFunction<CarRolloutResidual, ceres::DYNAMIC, 3, 3, 2, 3, 3, 2,
                                           2, kCurvatureKnots, 1, 2, 2, 2,
                                           SurfaceCoeffs<double>::kSize, 4, 1, 5, 4, 3, 1, 1>(
        new CarRolloutResidual(episode, arena, start, rows, integ, jump, handbrake, scales),
        kPerRow * rows);
  }

 private:
  // The rows' residuals of the rollout with coefficients c.
  template <typename T>
  bool Rollout(const CarCoeffs<T>& c, T* residuals) const {
    CarModelState<T> s = CarRecordedState<T>(*episode_, start_);
    s.jump = jump_;
    s.wheels.handbrake = handbrake_;
    for (int j = 1; j <= rows_; ++j) {
      s = AdvanceCarModelRow(c, *arena_, s, *episode_, start_ + j - 1, integ_);
      const Sample& rec = episode_->rows[start_ + j];
      CarRowResiduals(s.body, rec, scales_, residuals + kPerRow * (j - 1));
    }
    return true;
  }

  const Episode* episode_;
  const Arena* arena_;
  int start_;
  int rows_;
  Integration integ_;
  JumpState jump_;
  double handbrake_;  // the handbrake level at `start` (CarStartState: VehicleStartState's)
  AerialResidualScales scales_;
};

// Adds one CarRolloutResidual per window (options.window_s long, options.stride_s apart) inside
// the rows the car model covers (ClassifyRows "car"). Returns the number of residual blocks.
// The surface block ("wall.surface") is held at its value (the layout's default: the wall
// model's fit on wall_driving): the car's recordings hold 430 covered rows on walls, curves
// and ramps, all in one recording (freestyling.txt), against the wall fit's 7,525 rows in 25
// episodes. The jump blocks ("jump.jump", "jump.double_jump", "jump.dodge") are held too: the
// car's recordings hold 3 jumps (freestyling.txt), which the jump model's fit (results/jump)
// already used with jumps.txt's 2, and no double jump or dodge. The vehicle blocks
// ("vehicle.*", the flat-floor step) are held as well, at the vehicle model's fit
// (results/vehicle: ground_driving_no_handbrake, 65,710 rows replayed, against the car's
// 3,218 rows in all).
int AddCarResiduals(ceres::Problem* problem, double* params, const std::vector<Episode>& episodes,
                    const FitOptions& options, std::vector<int>* block_episodes);

}  // namespace rlfit
