// Rollout windows of the ball fit over the rows the ball model covers (no car touch).
#include "fit/ball_fit.h"

#include <algorithm>
#include <iostream>

#include "fit/fit_common.h"
#include "src/io/arena_file.h"
#include "src/replay/episode_steps.h"

namespace rlfit {
namespace {

// Rows in the middle of a bounce change velocity by (1 + C_R) |v_n| / 2 ~ 100s of uu/s; free
// flight by less than 0.5 uu/s beyond gravity and drag (velocity quantisation), uu/s.
constexpr double kContactJumpUuS = 20.0;

std::vector<double> Scaled(std::vector<double> v, double factor) {
  for (double& x : v) x *= factor;
  return v;
}

}  // namespace

// Smoothing steps of the derivative (SmoothedBallRolloutCost), per coefficient in BallLayout
// order: restitution, mu, Y, spin_factor (1), drag (1/s), contact_radius (uu), recovery (1).
// About 1-2% of each value, except the geometry: a contact radius step of 0.25 uu left the fit
// stuck at 92.8 uu with recovery 0.16 from a start at 92.5 (cost 82,748), a step of 1 uu
// brought it back to 93.13 (cost 80,265; measured on 60 recorded episodes); recovery 0.2 for
// the same reason (0.05 stuck at 0.09).
const std::vector<double>& BallSmoothingSteps() {
  static const std::vector<double> steps = {0.01, 0.01, 0.05, 0.05, 0.001, 1.0, 0.2};
  return steps;
}

std::vector<int> ContactRows(const Episode& ep, const BallCoeffs<double>& c,
                             double min_jump_uu_s) {
  std::vector<int> rows;
  for (int k = 1; k + 1 < ep.size(); ++k)
    if (BallVelocityJump(ep, c, k - 1) > min_jump_uu_s &&
        BallVelocityJump(ep, c, k) > min_jump_uu_s)
      rows.push_back(k);
  return rows;
}

int AddBallResiduals(ceres::Problem* problem, double* params,
                     const std::vector<Episode>& episodes, const FitOptions& options,
                     std::vector<int>* block_episodes) {
  const CoeffLayout& layout = BallLayout();
  const Arena& arena = BallArena(options.data_root);
  const BallCoeffs<double> start = BallCoeffs<double>::FromArray(params);
  int blocks = 0, touched_episodes = 0, touched_rows = 0;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const Episode& ep = episodes[e];
    const std::vector<Regime> regimes = ClassifyRows("ball", ep, arena);
    const int touched = CountRegimes(regimes)[static_cast<int>(Regime::kCarTouch)];
    touched_rows += touched;
    touched_episodes += touched > 0 ? 1 : 0;
    const auto plan = std::make_shared<const BallRolloutResidual::EpisodePlan>(
        ep, ContactRows(ep, start, kContactJumpUuS),
        BallClockOrigin(ep, start, options.integration));
    for (const RolloutWindow& w : RolloutWindows(ep, regimes, options.window_s, options.stride_s)) {
      problem->AddResidualBlock(
          Reduced(new SmoothedBallRolloutCost(
              new BallRolloutResidual(plan, &ep, w.start, w.rows, options.integration, &arena, {}),
              w.rows, Scaled(BallSmoothingSteps(), options.smoothing))),
          MakeLoss(options.solver, 9 * w.rows), params + layout.blocks[0].offset,
          params + layout.blocks[1].offset, params + layout.blocks[2].offset,
          params + layout.blocks[3].offset);
      block_episodes->push_back(static_cast<int>(e));
      ++blocks;
    }
  }
  if (!options.quiet)
    std::cerr << "ball fit: " << blocks << " windows; left out " << touched_rows << " rows of "
              << touched_episodes << " episodes touched by a car (a velocity jump no surface "
              << "explains; ClassifyRows)\n";
  return blocks;
}

}  // namespace rlfit
