// Prediction error: per-sample errors, the horizons they are read at, and the summary
// statistics (median, p90, max) of the reports.
#pragma once

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

}  // namespace rlfit
