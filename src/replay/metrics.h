// Prediction error: per-sample errors, the horizons they are read at, and the summary
// statistics (median, p90, max) of the reports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/io/episode.h"
#include "src/replay/predictor.h"

namespace rlfit {

// Error of one predicted state against the recorded one.
struct ErrorSample {
  double dx = 0.0;         // |x_pred - x_rec|, uu
  double dv = 0.0;         // |v_pred - v_rec|, uu/s
  double domega = 0.0;     // |omega_pred - omega_rec|, rad/s
  double angle_deg = 0.0;  // rotation between predicted and recorded orientation, degrees
};

ErrorSample CompareState(const PredictedState& predicted, const Sample& recorded);

// The quantities reported, in table/JSON order.
struct Quantity {
  const char* key;    // JSON key
  const char* label;  // table label with unit
  double ErrorSample::*member;
};
const std::vector<Quantity>& Quantities(bool with_orientation);

// Index of the row closest to t_start + horizon_s, or -1 if the episode ends more than half
// a row before it.
int RowAtHorizon(const Episode& ep, int start, double horizon_s);

// Order statistics of n numbers; meaningless (null in JSON, n/a in tables) when n = 0.
struct Stats {
  int n = 0;
  int diverged = 0;   // figures left out because their rollout diverged (no number)
  double median = 0.0;
  double p90 = 0.0;
  double max = 0.0;
};
Stats Summarize(std::vector<double> values);

// The p90 over episodes rests on the worst tenth, so it moves from one set of episodes to the
// next: at the ball's last row, where about one episode in ten misses a seam contact by tens of
// uu or more, the p90 of 86 episodes drawn from 258 held-out ones spans about 13-116 uu (5-95%)
// around 31 (decisions/0106). What a new set of `set_size` episodes like `values` may show:
// the p90 of `set_size` values drawn with replacement, over `draws` such sets (a fixed seed,
// the same figures on every run), and the 5th, 50th and 95th percentiles of those p90s.
// A diverged figure enters as +infinity (worse than any number). n = 0 when values is empty
// or set_size < 1.
struct P90Spread {
  int n = 0;          // values drawn from
  int set_size = 0;   // episodes per drawn set
  double p5 = 0.0, p50 = 0.0, p95 = 0.0;
};
// 2000 draws: the ball's last-row 5% and 95% move by up to ~5% from one seed to another.
inline constexpr int kBootstrapDraws = 2000;
inline constexpr std::uint64_t kBootstrapSeed = 20261130;
P90Spread BootstrapP90(const std::vector<double>& values, int set_size,
                       int draws = kBootstrapDraws, std::uint64_t seed = kBootstrapSeed);

}  // namespace rlfit
