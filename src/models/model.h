// What every model shares: the flat, named layout of its coefficients and the integration
// settings (src/common/coeff_layout.h), the physics steps of a row, and the inputs of a step
// (Controls; from a recorded episode: src/replay/episode_steps.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "src/common/coeff_layout.h"
#include "src/common/constants.h"

namespace rlfit {

// Most physics steps one recorded row may take. The readers emit rows of at most 0.05 s
// (.txt recordings are cut at longer steps) or a few 1/61 s clock periods, 50-100 steps at the
// highest tick rate Integration allows (1000 Hz); 256 leaves room for those and bounds the work
// of one row whatever the input (a NaN or huge dt_s * tick_rate_hz).
inline constexpr int kMaxSubstepsPerRow = 256;

// max(1, round(dt_s * tick_rate_hz)), at most kMaxSubstepsPerRow (1 when the product is NaN).
inline int SubstepsForRow(double dt_s, double tick_rate_hz) {
  const double ticks = dt_s * tick_rate_hz;
  if (!(ticks >= 1.5)) return 1;  // also NaN
  if (!(ticks < kMaxSubstepsPerRow)) return kMaxSubstepsPerRow;
  return static_cast<int>(std::lround(ticks));
}

// Controller inputs averaged over a stretch of time; the switches (boost, jump, handbrake)
// become the fraction of that time they were held, in [0, 1].
struct Controls {
  double throttle = 0.0;
  double steer = 0.0;
  double pitch = 0.0;
  double yaw = 0.0;
  double roll = 0.0;
  double boost = 0.0;
  double jump = 0.0;
  double handbrake = 0.0;
};

}  // namespace rlfit
