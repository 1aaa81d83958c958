// Rollout windows of the ball fit, and the screen for car hits (impulses no surface explains).
#include "fit/ball_fit.h"

#include <algorithm>
#include <iostream>

#include "fit/fit_common.h"

namespace rlfit {
namespace {

// A free-flight row step changes v by at most gravity and drag; a car hit changes it by
// hundreds of uu/s. 50 uu/s sits far above the recorded velocity quantisation (~0.1 uu/s) and
// far below the smallest hits seen, uu/s.
constexpr double kMinImpulseUuS = 50.0;
// A bounce can be recorded a row late and the ball sinks up to ~12 uu into the mesh on a fast
// impact (measured: lowest recorded z 81.7 against a rest height of 93.14), so a velocity jump
// within this distance of the mesh is taken as a bounce, uu.
constexpr double kSurfaceMarginUu = 40.0;

// Rows in the middle of a bounce change velocity by (1 + C_R) |v_n| / 2 ~ 100s of uu/s; free
// flight by less than 0.5 uu/s beyond gravity and drag (velocity quantisation), uu/s.
constexpr double kContactJumpUuS = 20.0;

// Velocity change of row k -> k+1 beyond gravity and drag, uu/s.
double VelocityJump(const Episode& ep, const BallCoeffs<double>& c, int k) {
  const double dt = ep.step_dt_s[k];
  Eigen::Vector3d v = ep.rows[k].v;
  v.z() += c.gravity_z * dt;
  v *= std::exp(c.drag * dt);
  return (ep.rows[k + 1].v - v).norm();
}

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
    if (VelocityJump(ep, c, k - 1) > min_jump_uu_s && VelocityJump(ep, c, k) > min_jump_uu_s)
      rows.push_back(k);
  return rows;
}

std::vector<int> UnexplainedImpulseRows(const Episode& ep, const Arena& arena,
                                        const BallCoeffs<double>& c, double min_impulse_uu_s,
                                        double surface_margin_uu) {
  std::vector<int> rows;
  const double radius = c.contact_radius + surface_margin_uu;
  for (int k = 0; k + 1 < ep.size(); ++k) {
    if (VelocityJump(ep, c, k) < min_impulse_uu_s) continue;
    if (arena.Collide(ep.rows[k].x, radius).hit || arena.Collide(ep.rows[k + 1].x, radius).hit)
      continue;
    rows.push_back(k);
  }
  return rows;
}

int AddBallResiduals(ceres::Problem* problem, double* params,
                     const std::vector<Episode>& episodes, const FitOptions& options,
                     std::vector<int>* block_episodes) {
  const CoeffLayout& layout = BallLayout();
  const Arena& arena = PitchArena(options.data_root);
  const BallCoeffs<double> start = BallCoeffs<double>::FromArray(params);
  int blocks = 0, skipped = 0, hit_episodes = 0;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const Episode& ep = episodes[e];
    const std::vector<int> hits =
        UnexplainedImpulseRows(ep, arena, start, kMinImpulseUuS, kSurfaceMarginUu);
    hit_episodes += hits.empty() ? 0 : 1;
    const std::vector<int> contact = ContactRows(ep, start, kContactJumpUuS);
    for (const RolloutWindow& w : RolloutWindows(ep, options.window_s, options.stride_s)) {
      const auto hit = std::lower_bound(hits.begin(), hits.end(), w.start);
      if (hit != hits.end() && *hit < w.start + w.rows) {
        ++skipped;
        continue;
      }
      problem->AddResidualBlock(
          new SmoothedBallRolloutCost(
              new BallRolloutResidual(&ep, w.start, w.rows, options.integration, &arena, {},
                                      contact),
              w.rows, Scaled(BallSmoothingSteps(), options.smoothing)),
          MakeLoss(options.solver, 9 * w.rows), params + layout.blocks[0].offset,
          params + layout.blocks[1].offset, params + layout.blocks[2].offset,
          params + layout.blocks[3].offset);
      block_episodes->push_back(static_cast<int>(e));
      ++blocks;
    }
  }
  if (!options.quiet)
    std::cerr << "ball fit: " << blocks << " windows; skipped " << skipped << " windows of "
              << hit_episodes << " episodes with a velocity jump no surface explains (car hit)\n";
  return blocks;
}

}  // namespace rlfit
