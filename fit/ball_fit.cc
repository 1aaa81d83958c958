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

}  // namespace

std::vector<int> UnexplainedImpulseRows(const Episode& ep, const Arena& arena,
                                        const BallCoeffs<double>& c, double min_impulse_uu_s,
                                        double surface_margin_uu) {
  std::vector<int> rows;
  const double radius = c.contact_radius + surface_margin_uu;
  for (int k = 0; k + 1 < ep.size(); ++k) {
    const double dt = ep.step_dt_s[k];
    Eigen::Vector3d v = ep.rows[k].v;
    v.z() += c.gravity_z * dt;
    v *= std::exp(c.drag * dt);
    if ((ep.rows[k + 1].v - v).norm() < min_impulse_uu_s) continue;
    if (arena.Collide(ep.rows[k].x, radius).hit || arena.Collide(ep.rows[k + 1].x, radius).hit)
      continue;
    rows.push_back(k);
  }
  return rows;
}

int AddBallResiduals(ceres::Problem* problem, double* params,
                     const std::vector<Episode>& episodes, const FitOptions& options) {
  const CoeffLayout& layout = BallLayout();
  const Arena& arena = PitchArena(options.data_root);
  const BallCoeffs<double> start = BallCoeffs<double>::FromArray(params);
  int blocks = 0, skipped = 0, hit_episodes = 0;
  for (const Episode& ep : episodes) {
    const std::vector<int> hits =
        UnexplainedImpulseRows(ep, arena, start, kMinImpulseUuS, kSurfaceMarginUu);
    hit_episodes += hits.empty() ? 0 : 1;
    for (const RolloutWindow& w : RolloutWindows(ep, options.window_s, options.stride_s)) {
      const auto hit = std::lower_bound(hits.begin(), hits.end(), w.start);
      if (hit != hits.end() && *hit < w.start + w.rows) {
        ++skipped;
        continue;
      }
      problem->AddResidualBlock(
          BallRolloutResidual::Create(&ep, w.start, w.rows, options.integration, &arena),
          MakeLoss(options.solver, 9 * w.rows), params + layout.blocks[0].offset,
          params + layout.blocks[1].offset, params + layout.blocks[2].offset,
          params + layout.blocks[3].offset);
      ++blocks;
    }
  }
  if (!options.quiet)
    std::cerr << "ball fit: " << blocks << " windows; skipped " << skipped << " windows of "
              << hit_episodes << " episodes with a velocity jump no surface explains (car hit)\n";
  return blocks;
}

}  // namespace rlfit
