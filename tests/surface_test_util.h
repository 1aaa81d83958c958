// A small arena for the surface model's tests: the floor z = 0 (x <= 0), a 45-degree ramp
// rising to z = kRampTopUu at x = kRampTopUu, and a vertical wall x = kRampTopUu above it
// (normal -x), each two triangles spanning |y| <= kHalfWidthUu; and a driving episode on it.
#pragma once

#include <cmath>
#include <utility>
#include <vector>

#include "src/io/episode.h"
#include "src/models/surface.h"
#include "src/replay/episode_steps.h"

namespace rlfit::testing {

inline constexpr float kRampTopUu = 300.0f;
inline constexpr float kHalfWidthUu = 5000.0f;

inline void AddQuad(std::vector<Triangle>* t, Eigen::Vector3f a, Eigen::Vector3f b,
                    Eigen::Vector3f c, Eigen::Vector3f d) {
  Triangle t1, t2;
  t1.p[0] = a, t1.p[1] = b, t1.p[2] = c;
  t2.p[0] = a, t2.p[1] = c, t2.p[2] = d;
  t->push_back(t1);
  t->push_back(t2);
}

// Floor, ramp and wall; faces toward the driving side (winding does not matter to Collide).
inline Arena FloorRampWall() {
  const float w = kHalfWidthUu, top = kRampTopUu;
  std::vector<Triangle> t;
  AddQuad(&t, {-5000.0f, -w, 0.0f}, {0.0f, -w, 0.0f}, {0.0f, w, 0.0f}, {-5000.0f, w, 0.0f});
  AddQuad(&t, {0.0f, -w, 0.0f}, {top, -w, top}, {top, w, top}, {0.0f, w, 0.0f});
  AddQuad(&t, {top, -w, top}, {top, -w, 4000.0f}, {top, w, 4000.0f}, {top, w, top});
  return Arena(t);
}

// Floor and wall alone (two planes meeting at a right angle at x = kRampTopUu).
inline Arena FloorWall() {
  const float w = kHalfWidthUu, top = kRampTopUu;
  std::vector<Triangle> t;
  AddQuad(&t, {-5000.0f, -w, 0.0f}, {top, -w, 0.0f}, {top, w, 0.0f}, {-5000.0f, w, 0.0f});
  AddQuad(&t, {top, -w, 0.0f}, {top, -w, 4000.0f}, {top, w, 4000.0f}, {top, w, 0.0f});
  return Arena(t);
}

// The floor z = 0 (x <= 0) rising through a quarter circle of `radius_uu` (8 flat facets of
// 11.25 degrees, as the arena's floor-to-wall curves: radius 160 on the back walls, 256 on the
// side walls) to the wall x = radius_uu (normal -x).
inline Arena FloorCurveWall(float radius_uu) {
  const float w = kHalfWidthUu, r = radius_uu;
  std::vector<Triangle> t;
  AddQuad(&t, {-5000.0f, -w, 0.0f}, {0.0f, -w, 0.0f}, {0.0f, w, 0.0f}, {-5000.0f, w, 0.0f});
  for (int k = 0; k < 8; ++k) {
    const double a0 = k * M_PI / 16.0, a1 = (k + 1) * M_PI / 16.0;
    const float x0 = r * std::sin(a0), z0 = r * (1.0 - std::cos(a0));
    const float x1 = r * std::sin(a1), z1 = r * (1.0 - std::cos(a1));
    AddQuad(&t, {x0, -w, z0}, {x1, -w, z1}, {x1, w, z1}, {x0, w, z0});
  }
  AddQuad(&t, {r, -w, r}, {r, -w, 4000.0f}, {r, w, 4000.0f}, {r, w, r});
  return Arena(t);
}

// The floor plane z = 0 alone: two triangles far beyond any test position.
inline Arena FlatFloor() {
  const float far = 1.0e5f;
  std::vector<Triangle> t;
  AddQuad(&t, {-far, -far, 0.0f}, {far, -far, 0.0f}, {far, far, 0.0f}, {-far, far, 0.0f});
  return Arena(t);
}

// One ~61 Hz episode row, s (datasets README).
inline constexpr double kEpisodeRowS = 1.0 / 60.96;

// A hand-made episode of `kind` from `rows`: row k at k rows of 61 Hz, two ticks per step.
inline Episode HandMadeEpisode(EpisodeKind kind, std::vector<Sample> rows) {
  Episode ep;
  ep.path = ep.name = "hand.csv";
  ep.kind = kind;
  ep.rows = std::move(rows);
  for (int k = 0; k < ep.size(); ++k) {
    ep.rows[k].t_s = k * kEpisodeRowS;
    if (k + 1 < ep.size()) {
      ep.step_dt_s.push_back(kEpisodeRowS);
      ep.step_ticks.push_back(2);
    }
  }
  return ep;
}

// A car at rest height on the floor at (x, y) heading along yaw (rad), forward speed v_f.
inline CarState<double> OnFloor(double x, double y, double yaw, double v_f) {
  CarState<double> s;
  s.theta = EulerToMatrix(0.0, yaw, 0.0);
  s.x = Eigen::Vector3d(x, y, game::kCarRestHeight);
  s.v = s.theta.col(0) * v_f + Eigen::Vector3d(0, 0, game::kCarRestReportedVz);
  s.omega.setZero();
  return s;
}

// An episode of `rows` 61 Hz rows simulated by StepSurface on `arena` from `start` with the
// inputs `input(k)` of row k (on_ground set on every row). Used to test the model and its fit.
template <typename InputFn>
Episode SurfaceEpisode(const GroundCoeffs<double>& g, const SurfaceCoeffs<double>& c,
                       const Arena& arena, const CarState<double>& start, int rows,
                       InputFn input) {
  Episode ep;
  ep.name = "surface.csv";
  ep.rows.resize(rows);
  ep.step_dt_s.assign(rows - 1, 1.0 / game::kEpisodeRowRateHz);
  ep.step_ticks.assign(rows - 1, 2);
  for (int k = 0; k < rows; ++k) {
    ep.rows[k].t_s = k / game::kEpisodeRowRateHz;
    ep.rows[k].input = input(k);
    ep.rows[k].on_ground = true;
  }
  CarState<double> s = start;
  const Integration integ;
  for (int k = 0; k < rows; ++k) {
    ep.rows[k].x = s.x;
    ep.rows[k].v = s.v;
    ep.rows[k].omega = s.omega;
    ep.rows[k].theta = s.theta;
    if (k + 1 < rows) s = AdvanceSurfaceRow(g, c, s, ep, k, integ, arena);
  }
  return ep;
}

}  // namespace rlfit::testing
