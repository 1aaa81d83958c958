// Residuals of the ball fit: open-loop rollouts of StepBall (the function replay runs) against
// the arena mesh, compared with the recorded position, velocity and angular velocity.
#pragma once

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include <ceres/ceres.h>

#include "fit/fit.h"
#include "src/io/episode.h"
#include "src/models/arena.h"
#include "src/models/ball.h"
#include "src/replay/regime.h"

namespace rlfit {

// Per-component scales that turn errors into dimensionless residuals; roughly the size of a
// good 0.5 s prediction error across a bounce, so that each quantity weighs in comparably.
struct BallResidualScales {
  double x_uu = 2.0;
  double v_uu_s = 10.0;
  double omega_rad_s = 0.05;
};

// Rollout over rows start..start+rows of an episode from the recorded state at `start`: for
// each row j in 1..rows the 9 residuals
//   (x_pred - x_rec) / s_x, (v_pred - v_rec) / s_v, (omega_pred - omega_rec) / s_omega,
// units uu, uu/s, rad/s divided by the scales; 0 for the rows in `skip_rows` (episode row
// indices, sorted): the recordings interpolate between physics ticks, so a row in the middle
// of a bounce holds a velocity half-way between incoming and outgoing that no tick has. Parameter blocks: bounce[3], spin[1], drag[1],
// geometry[2] (BallLayout()). With Jets the mesh query runs in double on the value part (see
// StepBall): the contact normal is constant in the derivative and the penetration linearised.
class BallRolloutResidual {
 public:
  template <typename T>
  struct StatesOf {  // (a non-deduced context: Roll takes nullptr for "no states")
    using type = std::vector<BallState<T>>;
  };

  BallRolloutResidual(const Episode* episode, int start, int rows, const Integration& integ,
                      const Arena* arena, const BallResidualScales& scales,
                      std::vector<int> skip_rows)
      : episode_(episode), start_(start), rows_(rows), integ_(integ), arena_(arena),
        scales_(scales), skip_rows_(std::move(skip_rows)) {}

  template <typename T>
  bool operator()(const T* bounce, const T* spin, const T* drag, const T* geometry,
                  T* residuals) const {
    const BallCoeffs<T> c = BallCoeffs<T>::FromBlocks(bounce, spin, drag, geometry);
    Roll(c, 0, BallState<T>::FromSample(episode_->rows[start_]), residuals, nullptr);
    return true;
  }

  // The rollout from step j0 of the window on, from its state `s` there: writes the residual
  // rows j0+1..rows (at residuals + 9 (j - 1), as operator() lays them out) and, if `states`
  // is given, the state at each row j0..rows (states->at(j), resized to rows + 1).
  template <typename T>
  void Roll(const BallCoeffs<T>& c, int j0, BallState<T> s, T* residuals,
            typename StatesOf<T>::type* states) const {
    if (states != nullptr) {
      states->resize(rows_ + 1);
      (*states)[j0] = s;
    }
    BallClearance clearance;  // used by the double rollouts (AdvanceBallRow)
    for (int j = j0 + 1; j <= rows_; ++j) {
      s = AdvanceBallRow(c, s, *episode_, start_ + j - 1, integ_, *arena_, &clearance);
      if (states != nullptr) (*states)[j] = s;
      const Sample& rec = episode_->rows[start_ + j];
      T* r = residuals + 9 * (j - 1);
      if (std::binary_search(skip_rows_.begin(), skip_rows_.end(), start_ + j)) {
        for (int i = 0; i < 9; ++i) r[i] = T(0.0);
        continue;
      }
      for (int i = 0; i < 3; ++i) {
        r[i] = (s.x(i) - T(rec.x(i))) / T(scales_.x_uu);
        r[3 + i] = (s.v(i) - T(rec.v(i))) / T(scales_.v_uu_s);
        r[6 + i] = (s.omega(i) - T(rec.omega(i))) / T(scales_.omega_rad_s);
      }
    }
  }

  // Number of leading steps of the window along `states` (a rollout's states, from Roll) in
  // which the ball cannot touch the mesh with a contact radius up to `radius`: at the start
  // of each such step no triangle lies within radius + contact_margin + the distance the ball
  // can travel during the step. A coefficient that acts only through a contact leaves those
  // steps bit-identical (SmoothedBallRolloutCost).
  int StepsClearOfContact(const std::vector<BallState<double>>& states,
                          const BallCoeffs<double>& c, double radius) const {
    // Safety on the travel: 10% and 1 uu beyond |v| dt + |g| dt^2 (drag only slows the ball).
    constexpr double kTravelFactor = 1.1, kTravelPadUu = 1.0;
    for (int j = 0; j < rows_; ++j) {
      const double clock_rows =
          std::round(episode_->step_dt_s[start_ + j] * game::kEpisodeRowRateHz);
      const double dt = std::max(episode_->step_dt_s[start_ + j],
                                 clock_rows * integ_.ticks_per_clock_row / integ_.tick_rate_hz);
      const double travel =
          kTravelFactor * (states[j].v.norm() + std::abs(c.gravity_z) * dt) * dt + kTravelPadUu;
      if (arena_->Collide(states[j].x, radius + c.contact_margin + travel).hit) return j;
    }
    return rows_;
  }

  BallState<double> StartState() const {
    return BallState<double>::FromSample(episode_->rows[start_]);
  }

  static ceres::CostFunction* Create(const Episode* episode, int start, int rows,
                                     const Integration& integ, const Arena* arena,
                                     const BallResidualScales& scales = {},
                                     std::vector<int> skip_rows = {}) {
    return new ceres::AutoDiffCostFunction<BallRolloutResidual, ceres::DYNAMIC, 3, 1, 1, 2>(
        new BallRolloutResidual(episode, start, rows, integ, arena, scales,
                                std::move(skip_rows)),
        9 * rows);
  }

 private:
  const Episode* episode_;
  int start_;
  int rows_;
  Integration integ_;
  const Arena* arena_;
  BallResidualScales scales_;
  std::vector<int> skip_rows_;
};

// The fit's cost function: the residuals of a BallRolloutResidual, differentiated by central
// differences at coarse, fixed steps (one per coefficient, BallLayout order) instead of by
// autodiff. Why: the rollout cost is piecewise smooth, with a jump wherever a coefficient moves
// a contact to another physics tick; the exact derivative between jumps misses the trend the
// jumps make, and Levenberg-Marquardt stalls where it starts (from a perturbed start on the
// recordings neither drag nor restitution moved). A difference over a step that spans many
// such jumps measures the trend: it is the derivative of the cost smoothed over that step.
class SmoothedBallRolloutCost : public ceres::CostFunction {
 public:
  // steps: per coefficient in BallLayout order, in the coefficient's unit.
  // share_prefix: the rollouts of a coefficient that acts only through contacts (all but
  // drag) start from the unperturbed rollout's state at the first step that may touch the mesh
  // (BallRolloutResidual::StepsClearOfContact); the steps before are the same to the bit, and
  // so is the Jacobian (tested). false recomputes them (reference for the tests).
  SmoothedBallRolloutCost(BallRolloutResidual* residual, int rows, std::vector<double> steps,
                          bool share_prefix = true)
      : residual_(residual), steps_(std::move(steps)), share_prefix_(share_prefix) {
    set_num_residuals(9 * rows);
    for (const ParamBlock& b : BallLayout().blocks)
      mutable_parameter_block_sizes()->push_back(b.size);
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const std::vector<ParamBlock>& blocks = BallLayout().blocks;
    std::vector<double> flat(BallLayout().size());
    for (std::size_t bi = 0; bi < blocks.size(); ++bi)
      std::copy(parameters[bi], parameters[bi] + blocks[bi].size,
                flat.begin() + blocks[bi].offset);
    if (jacobians == nullptr) return Run(flat.data(), residuals);
    // The unperturbed rollout, with its states.
    std::vector<BallState<double>> states;
    const BallCoeffs<double> c = BallCoeffs<double>::FromArray(flat.data());
    residual_->Roll(c, 0, residual_->StartState(), residuals, &states);
    const int shared =
        share_prefix_
            ? residual_->StepsClearOfContact(
                  states, c, c.contact_radius + std::abs(steps_[BallCoeffs<double>::kContactRadius]))
            : 0;
    const int m = num_residuals();
    std::vector<double> plus(m), minus(m);
    for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
      if (jacobians[bi] == nullptr) continue;
      for (int j = 0; j < blocks[bi].size; ++j) {
        const int i = blocks[bi].offset + j;
        // Every coefficient but drag acts only through a contact (StepBall).
        const int from = i == BallCoeffs<double>::kDrag ? 0 : shared;
        const double x = flat[i], h = steps_[i];
        flat[i] = x + h;
        residual_->Roll(BallCoeffs<double>::FromArray(flat.data()), from, states[from],
                        plus.data(), nullptr);
        flat[i] = x - h;
        residual_->Roll(BallCoeffs<double>::FromArray(flat.data()), from, states[from],
                        minus.data(), nullptr);
        flat[i] = x;
        for (int r = 0; r < 9 * from; ++r) jacobians[bi][r * blocks[bi].size + j] = 0.0;
        for (int r = 9 * from; r < m; ++r)
          jacobians[bi][r * blocks[bi].size + j] = (plus[r] - minus[r]) / (2.0 * h);
      }
    }
    return true;
  }

 private:
  // The residual functor on a flat coefficient vector (its blocks at their layout offsets).
  bool Run(const double* flat, double* residuals) const {
    const std::vector<ParamBlock>& blocks = BallLayout().blocks;
    return (*residual_)(flat + blocks[0].offset, flat + blocks[1].offset, flat + blocks[2].offset,
                        flat + blocks[3].offset, residuals);
  }
  std::unique_ptr<BallRolloutResidual> residual_;
  std::vector<double> steps_;
  bool share_prefix_;
};

// The fit's smoothing steps for SmoothedBallRolloutCost (BallLayout order; see ball_fit.cc).
const std::vector<double>& BallSmoothingSteps();

// Rows of `ep` whose recorded velocity is off free flight from the previous or to the next row
// by more than `min_jump_uu_s`: the rows in the middle of a bounce.
std::vector<int> ContactRows(const Episode& ep, const BallCoeffs<double>& c, double min_jump_uu_s);

// The rollout cost is piecewise smooth, with a small jump wherever a coefficient change moves a
// contact to another tick. With the exact autodiff derivative (exact between jumps, blind to
// the trend the jumps make) Levenberg-Marquardt stalled near its start: from restitution 0.55,
// drag -0.025 it ended at 0.550 and -0.0248. The fit therefore differentiates with
// SmoothedBallRolloutCost, in passes of decreasing step (FitterInfo::smoothing_passes); from
// the same start it now lands within 0.0006 of the restitution and 1% of the drag it reaches
// from the defaults (all 258 episodes; NOTES.md).
//
// Adds one SmoothedBallRolloutCost per window (options.window_s long, options.stride_s apart;
// steps BallSmoothingSteps() * options.smoothing),
// inside the rows ClassifyRows("ball") covers (no car touch: UnexplainedImpulseRows in
// src/replay/regime.h; the rows left out are counted on stderr unless quiet), skipping the
// residuals of ContactRows.
// The arena is <options.data_root>/meshes/pitch.dat. Returns the number of residual blocks.
int AddBallResiduals(ceres::Problem* problem, double* params,
                     const std::vector<Episode>& episodes, const FitOptions& options,
                     std::vector<int>* block_episodes);

}  // namespace rlfit
