// Residuals of the powerslide fit: open-loop rollouts of StepPowerslide (the function replay
// runs) compared with the recorded yaw rate, in-plane velocity and position. Only the
// powerslide coefficients vary; the ground ones are the committed ground fit.
#pragma once

#include <ceres/ceres.h>

#include <memory>
#include <utility>
#include <vector>

#include "fit/fit.h"
#include "fit/ground_fit.h"
#include "src/common/error.h"
#include "src/io/episode.h"
#include "src/models/powerslide/powerslide.h"
#include "src/replay/episode_steps.h"

namespace rlfit {

// The ground fit's scales: the same quantities of the same car on the same floor.
using PowerslideResidualScales = GroundResidualScales;

// Rollout over rows start..start+rows of an episode from the recorded state at `start` (the
// handbrake level ramped to there from the value acting on the first step): for each row j in
// 1..rows the 5 residuals (w_z,pred - w_z,rec) / s_omega, (v_xy,pred - v_xy,rec) / s_v,
// (x_xy,pred - x_xy,rec) / s_x. `handbrake`: the episode's switch acting on each step (empty
// acting: the recorded input; InferHandbrake) and handbrake level at each row
// (PowerslideEpisodeHandbrake), shared by the windows of an episode; or, in the second form, the
// switch `acting` alone (the levels worked out here). `controls`: the steps' inputs of the
// episode's rows (RowStepControls of `episode` and `integ`, covering rows start..start+rows-1),
// shared by the windows of an episode; null: computed here for the window's rows. Parameter
// blocks: grip[4], handbrake[3], steer[2], yaw[1], drive[1] (PowerslideLayout()).
class PowerslideRolloutResidual {
 public:
  static constexpr int kPerRow = 5;

  PowerslideRolloutResidual(const Episode* episode, int start, int rows, const Integration& integ,
                            const std::vector<double>& ground,
                            std::shared_ptr<const EpisodeHandbrake> handbrake,
                            const PowerslideResidualScales& scales,
                            std::shared_ptr<const RowStepControls> controls = nullptr)
      : episode_(episode), start_(start), rows_(rows), integ_(integ), ground_(ground),
        handbrake_(std::move(handbrake)), scales_(scales),
        controls_(controls != nullptr
                      ? std::move(controls)
                      : std::make_shared<const RowStepControls>(*episode, integ, start,
                                                                start + rows)),
        start_handbrake_(handbrake_->levels[start_]) {
    RLFIT_CHECK(controls_->first_row() <= start && start + rows <= controls_->last_row(),
                "the step controls cover the window's rows");
  }
  PowerslideRolloutResidual(const Episode* episode, int start, int rows, const Integration& integ,
                            const std::vector<double>& ground, std::vector<double> acting,
                            const PowerslideResidualScales& scales,
                            std::shared_ptr<const RowStepControls> controls = nullptr)
      : PowerslideRolloutResidual(episode, start, rows, integ, ground,
                                  std::make_shared<const EpisodeHandbrake>(
                                      PowerslideEpisodeHandbrake(*episode, integ,
                                                                 std::move(acting))),
                                  scales, std::move(controls)) {}

  template <typename T>
  bool operator()(const T* grip, const T* handbrake, const T* steer, const T* yaw,
                  const T* drive, T* residuals) const {
    const PowerslideCoeffs<T> c =
        PowerslideCoeffs<T>::FromBlocks(grip, handbrake, steer, yaw, drive);
    T ground_t[GroundCoeffs<double>::kSize];
    for (int i = 0; i < GroundCoeffs<double>::kSize; ++i) ground_t[i] = T(ground_[i]);
    const GroundCoeffs<T> g = GroundCoeffs<T>::FromArray(ground_t);
    const double* a = handbrake_->acting_or_null();
    PowerslideState<T> s;
    s.body = FromSample<CarState<T>>(episode_->rows[start_]);
    s.handbrake = start_handbrake_;
    for (int j = 1; j <= rows_; ++j) {
      s = AdvancePowerslideRow(g, c, s, *episode_, start_ + j - 1, integ_, *controls_, a);
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
                                     const Integration& integ, const std::vector<double>& ground,
                                     std::vector<double> acting,
                                     const PowerslideResidualScales& scales = {},
                                     std::shared_ptr<const RowStepControls> controls = nullptr) {
    return Wrap(new PowerslideRolloutResidual(episode, start, rows, integ, ground,
                                              std::move(acting), scales, std::move(controls)));
  }
  // With the episode's handbrake (scales and controls given: no overload with `acting` to tell
  // apart from).
  static ceres::CostFunction* Create(const Episode* episode, int start, int rows,
                                     const Integration& integ, const std::vector<double>& ground,
                                     std::shared_ptr<const EpisodeHandbrake> handbrake,
                                     const PowerslideResidualScales& scales,
                                     std::shared_ptr<const RowStepControls> controls) {
    return Wrap(new PowerslideRolloutResidual(episode, start, rows, integ, ground,
                                              std::move(handbrake), scales, std::move(controls)));
  }

 private:
  static ceres::CostFunction* Wrap(PowerslideRolloutResidual* residual) {
    return new ceres::AutoDiffCostFunction<PowerslideRolloutResidual, ceres::DYNAMIC, 4, 3, 2, 1, 1>(
        residual, kPerRow * residual->rows_);
  }

  const Episode* episode_;
  int start_;
  int rows_;
  Integration integ_;
  std::vector<double> ground_;  // GroundLayout() order
  std::shared_ptr<const EpisodeHandbrake> handbrake_;
  PowerslideResidualScales scales_;
  std::shared_ptr<const RowStepControls> controls_;
  // The handbrake level at `start` (handbrake_'s levels): it depends on no coefficient, so it is
  // read once here rather than per evaluation.
  double start_handbrake_;
};

// Adds one PowerslideRolloutResidual per window (options.window_s long, options.stride_s apart)
// inside the rows the powerslide model covers (ClassifyRows "powerslide") in which the handbrake
// acts at some step (windows without it are the ground fit's), with the committed ground
// coefficients. Where the file does not record the handbrake (ChooseHandbrakeSource) it is
// inferred once per episode with the starting coefficients `init`. Returns the number of blocks.
int AddPowerslideResiduals(ceres::Problem* problem, double* params,
                           const std::vector<Episode>& episodes, const FitOptions& options,
                           std::vector<int>* block_episodes);

}  // namespace rlfit
