// What every model shares: the flat, named layout of its coefficients (grouped into
// parameter blocks by physics), and the integration settings that map a recorded row
// onto physics ticks.
#pragma once

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
  int input_delay_rows = 1;  // the inputs of row k act from row k + delay on (datasets README)
};

inline int SubstepsForRow(double dt_s, double tick_rate_hz) {
  const long n = std::lround(dt_s * tick_rate_hz);
  return n < 1 ? 1 : static_cast<int>(n);
}

// The inputs acting during the step from row k to k + 1.
inline const CarInputs& InputsForStep(const Episode& ep, int k, int delay_rows) {
  const int source = k - delay_rows < 0 ? 0 : k - delay_rows;
  return ep.rows[source].input;
}

}  // namespace rlfit
