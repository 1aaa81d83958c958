// What every model shares: the flat, named layout of its coefficients (grouped into
// parameter blocks by physics), and the integration settings that map a recorded row
// onto physics ticks.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "src/common/constants.h"
#include "src/io/episode.h"

namespace rlfit {

// A group of coefficients that is fitted or held constant together (one Ceres block).
struct ParamBlock {
  std::string name;  // e.g. "air_torque"
  int offset = 0;    // index of its first coefficient in the flat vector
  int size = 0;
};

// The flat layout of a model's coefficients: names (as in the JSON files), units,
// the seed note's defaults, and the parameter blocks that partition the vector.
struct CoeffLayout {
  std::vector<std::string> names;
  std::vector<std::string> units;
  std::vector<double> defaults;
  std::vector<ParamBlock> blocks;
  int size() const { return static_cast<int>(names.size()); }
  int IndexOf(const std::string& name) const {
    for (int i = 0; i < size(); ++i)
      if (names[i] == name) return i;
    return -1;
  }
};

// How a recorded row is integrated. The game ticks at `tick_rate_hz`; a row lasting dt_s is
// split into max(1, round(dt_s * tick_rate_hz)) equal physics steps: 2 for the ~61 Hz
// episode rows (each 1/121.9 s), 1 or 2 for the 120 Hz freefalling rows.
struct Integration {
  double tick_rate_hz = game::kTickRateHz;  // physics steps per second, Hz
  // The input recorded at time t acts from t + input_delay_s on (then from the next tick, see
  // below). Measured on the aerial episodes by sweeping this delay (README "Input timing").
  double input_delay_s = 0.0151;
  // When the episode's place on the recording clock is known (Episode::clock_origin_rows),
  // an input takes effect at the first physics tick at or after its row's time + delay; the
  // ticks fall 120/61 to a clock row (rows are 1/61 s of game time: the input phase repeats
  // every 30.5 rows in the aerial recordings). Otherwise the input switches exactly at row
  // time + delay, which is the same on average.
  bool tick_aligned_inputs = true;
  double ticks_per_clock_row = 120.0 / 61.0;
  // Orientation update of a step: true rotates by the step's new angular velocity
  // (semi-implicit, as the game's engine does); false by the average of old and new (note 000).
  bool rotate_with_new_omega = true;
};

inline int SubstepsForRow(double dt_s, double tick_rate_hz) {
  const long n = std::lround(dt_s * tick_rate_hz);
  return n < 1 ? 1 : static_cast<int>(n);
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

// The time average over [t0_s, t1_s) (episode time) of the inputs acting then: the input
// recorded at row j acts from its switch time until the next row's input takes over; the
// switch time is rows[j].t_s + input_delay_s, moved on to the next physics tick when the
// inputs are tick-aligned and the episode's clock is known (see Integration). Before the
// first row's input acts, the first row's input is assumed.
Controls ControlsOver(const Episode& ep, double t0_s, double t1_s, const Integration& integ);

// Advances a car state over recorded row k -> k+1 of `ep`: the row's physics steps
// (SubstepsForRow), each with the inputs acting during it; step(state, controls, dt_s).
template <typename State, typename Step>
State AdvanceCarRow(const State& s, const Episode& ep, int k, const Integration& integ,
                    const Step& step) {
  const double dt_row = ep.step_dt_s[k];
  const int n = SubstepsForRow(dt_row, integ.tick_rate_hz);
  const double h = dt_row / n;
  State out = s;
  for (int i = 0; i < n; ++i) {
    const double t0 = ep.rows[k].t_s + i * h;
    out = step(out, ControlsOver(ep, t0, t0 + h, integ), h);
  }
  return out;
}

}  // namespace rlfit
