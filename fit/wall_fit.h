// Residuals of the wall (surface) car fit: open-loop rollouts of StepSurface (the function
// replay runs) on the arena mesh, compared with the recorded angular velocity, velocity and
// position. Only the surface coefficients vary; the ground ones are the committed ground fit.
#pragma once

#include <ceres/ceres.h>

#include <vector>

#include "fit/fit.h"
#include "fit/ground_fit.h"
#include "fit/state_residuals.h"
#include "src/io/episode.h"
#include "src/models/surface.h"
#include "src/replay/episode_steps.h"

namespace rlfit {

// The ground fit's scales (the step is the ground model's, in the surface's frame); they are also
// about the size of a good 0.5 s prediction on the wall episodes (windowed medians 0.06 rad/s,
// 29 uu/s, 6 uu with the seed coefficients).
using WallResidualScales = GroundResidualScales;

// Rollout over rows start..start+rows of an episode from the recorded state at `start`: for
// each row j in 1..rows the 9 residuals
//   (omega_pred - omega_rec) / s_omega, (v_pred - v_rec) / s_v, (x_pred - x_rec) / s_x,
// world frame, units rad/s, uu/s, uu divided by the scales (all three axes: on a wall the
// vertical one is in the surface). Parameter block: surface[4] (SurfaceLayout()). The
// surface under the car is found from the rollout's own position (its value part): the
// derivatives treat the mesh's normal as fixed within a tick.
class WallRolloutResidual {
 public:
  static constexpr int kPerRow = 9;

  WallRolloutResidual(const Episode* episode, int start, int rows, const Integration& integ,
                      const std::vector<double>& ground, const Arena* arena,
                      const WallResidualScales& scales)
      : episode_(episode), start_(start), rows_(rows), integ_(integ), ground_(ground),
        arena_(arena), scales_(scales) {}

  template <typename T>
  bool operator()(const T* surface, T* residuals) const {
    const SurfaceCoeffs<T> c = SurfaceCoeffs<T>::FromBlocks(surface);
    T ground_t[GroundCoeffs<double>::kSize];
    for (int i = 0; i < GroundCoeffs<double>::kSize; ++i) ground_t[i] = T(ground_[i]);
    const GroundCoeffs<T> g = GroundCoeffs<T>::FromArray(ground_t);
    CarState<T> s = FromSample<CarState<T>>(episode_->rows[start_]);
    for (int j = 1; j <= rows_; ++j) {
      s = AdvanceSurfaceRow(g, c, s, *episode_, start_ + j - 1, integ_, *arena_);
      const Sample& rec = episode_->rows[start_ + j];
      MotionResiduals(s, rec, scales_, residuals + kPerRow * (j - 1));
    }
    return true;
  }

  static ceres::CostFunction* Create(const Episode* episode, int start, int rows,
                                     const Integration& integ, const std::vector<double>& ground,
                                     const Arena* arena, const WallResidualScales& scales = {}) {
    return new ceres::AutoDiffCostFunction<WallRolloutResidual, ceres::DYNAMIC, 4>(
        new WallRolloutResidual(episode, start, rows, integ, ground, arena, scales),
        kPerRow * rows);
  }

 private:
  const Episode* episode_;
  int start_;
  int rows_;
  Integration integ_;
  std::vector<double> ground_;  // GroundLayout() order
  const Arena* arena_;
  WallResidualScales scales_;
};

// Adds one WallRolloutResidual per window (options.window_s long, options.stride_s apart) inside
// the rows the wall model covers (ClassifyRows "wall"), with the committed ground coefficients
// (results/ground/coeffs.json) and the arena of options.data_root. Returns the number of blocks.
int AddWallResiduals(ceres::Problem* problem, double* params, const std::vector<Episode>& episodes,
                     const FitOptions& options, std::vector<int>* block_episodes);

}  // namespace rlfit
