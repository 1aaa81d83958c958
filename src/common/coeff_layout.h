// The coefficient layout a model exposes (names, units, defaults, parameter blocks, bounds) and
// the integration settings that map a recorded row onto physics ticks, with their ranges. Below
// both the models and the coefficient file reader, which share them.
#pragma once

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "src/common/constants.h"

namespace rlfit {

// A group of coefficients that is fitted or held constant together (one Ceres block).
struct ParamBlock {
  std::string name;  // e.g. "air_torque"
  int offset = 0;    // index of its first coefficient in the flat vector
  int size = 0;
};

// The range a coefficient may take, in its unit; both ends inclusive. Each model's Layout()
// states beside every bound why it is there. The coefficient reader refuses a value outside
// (InputError) and the fit keeps every varying coefficient inside (Ceres bounds).
struct CoeffBound {
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  bool Contains(double v) const { return v >= lower && v <= upper; }  // false for NaN
};

// The flat layout of a model's coefficients: names (as in the JSON files), units,
// the seed note's defaults, the parameter blocks that partition the vector, and the bounds of
// each coefficient (empty: unbounded, e.g. a test's layout; every model's layout has them).
struct CoeffLayout {
  // Another model's coefficients this model runs on and holds fixed (the wall and powerslide
  // models drive with the ground model's): a coefficients file carries the values it was
  // fitted with under "runs_on" (src/io/coeff_file.h).
  struct RunsOn {
    std::string model;          // e.g. "ground"
    const CoeffLayout* layout;  // that model's layout
  };
  std::vector<std::string> names;
  std::vector<std::string> units;
  std::vector<double> defaults;
  std::vector<ParamBlock> blocks;
  std::vector<CoeffBound> bounds;
  std::vector<RunsOn> runs_on = {};  // none: runs on no other model
  int size() const { return static_cast<int>(names.size()); }
  int IndexOf(const std::string& name) const {
    for (int i = 0; i < size(); ++i)
      if (names[i] == name) return i;
    return -1;
  }
  CoeffBound Bound(int i) const {
    return bounds.empty() ? CoeffBound{} : bounds[static_cast<std::size_t>(i)];
  }
};

// Ranges of the integration settings (Integration::Check), with why.
// The game ticks at 120 Hz; below 10 Hz a "tick" spans more than six 61 Hz recording rows and is
// no physics step of this game any more, above 1000 Hz replays only get slower (and the step
// count per row is capped, kMaxSubstepsPerRow). Hz.
inline constexpr double kMinTickRateHz = 10.0;
inline constexpr double kMaxTickRateHz = 1000.0;
// An input acts after its recorded time, never before (causality), and within half a second:
// measured 0.0151 s on the aerial episodes; 0.5 s is 30 rows, a different recording. s.
inline constexpr double kMaxInputDelayS = 0.5;
// Physics ticks per row of the recording's clock: 120/61 at the game's rate. At least 1 (the
// game records at most once per tick), at most 16 (the 1000 Hz tick rate over a 61 Hz row).
inline constexpr double kMinTicksPerClockRow = 1.0;
inline constexpr double kMaxTicksPerClockRow = 16.0;

// How a recorded row is integrated. The game ticks at `tick_rate_hz`; a row lasting dt_s is
// split into max(1, round(dt_s * tick_rate_hz)) equal physics steps: 2 for the ~61 Hz
// episode rows (each 1/121.9 s), 1 or 2 for the 120 Hz freefalling rows.
struct Integration {
  double tick_rate_hz = game::kTickRateHz;  // physics steps per second, Hz
  // The input recorded at time t acts from t + input_delay_s on (then from the next tick, see
  // below). Measured on the aerial episodes by sweeping this delay (README "Input timing"). The
  // default is every model's timing but the aerial's (0.01635 with tick_phase 0.15, below).
  double input_delay_s = 0.0151;
  // When the episode's place on the recording clock is known (Episode::clock_origin_rows),
  // an input takes effect at the first physics tick at or after its row's time + delay; the
  // ticks fall 120/61 to a clock row (rows are 1/61 s of game time: the input phase repeats
  // every 30.5 rows in the aerial recordings). Otherwise the input switches exactly at row
  // time + delay, which is the same on average.
  bool tick_aligned_inputs = true;
  double ticks_per_clock_row = 120.0 / 61.0;
  // Where the ticks fall on the recording's clock, in ticks: tick i at clock row
  // (i + tick_phase) / ticks_per_clock_row. The default, 0, puts a tick at clock row 0: the
  // timing of every model but the aerial. The aerial model's timing is 0.15 with input_delay_s
  // 0.01635 (the same switch ticks as 0.0151 at phase 0, each 0.15 tick later; its
  // ModelDescriptor::timing, src/replay/models.cc, which its seed coefficients, its fit and
  // results/aerial carry): measured in decision 0107 (one-row angular velocity residual rms
  // 0.0047 -> 0.0025 rad/s; the refitted air torque and damping land on the game's values),
  // switched in decision 0124 (crossval windowed |dx| at 1 s median 1.12 -> 0.56 uu, folds 4).
  // A coefficients file carries its own (written only when not 0).
  double tick_phase = 0.0;
  // Orientation update of a step: true rotates by the step's new angular velocity
  // (semi-implicit, as the game's engine does); false by the average of old and new (note 000).
  bool rotate_with_new_omega = true;

  // Every setting within its range above (NaN is outside); `why` names the setting (as in the
  // coefficients JSON), its value and the range.
  bool Check(std::string* why) const {
    auto outside = [why](const char* key, double v, double lo, double hi, const char* unit) {
      char buf[192];
      std::snprintf(buf, sizeof(buf), "%s = %.9g is outside [%g, %g]%s", key, v, lo, hi, unit);
      *why = buf;
      return false;
    };
    if (!(tick_rate_hz >= kMinTickRateHz && tick_rate_hz <= kMaxTickRateHz))
      return outside("tick_rate_hz", tick_rate_hz, kMinTickRateHz, kMaxTickRateHz, " Hz");
    if (!(input_delay_s >= 0.0 && input_delay_s <= kMaxInputDelayS))
      return outside("input_delay_s", input_delay_s, 0.0, kMaxInputDelayS, " s");
    if (!(ticks_per_clock_row >= kMinTicksPerClockRow &&
          ticks_per_clock_row <= kMaxTicksPerClockRow))
      return outside("ticks_per_clock_row", ticks_per_clock_row, kMinTicksPerClockRow,
                     kMaxTicksPerClockRow, "");
    if (!(tick_phase >= 0.0 && tick_phase < 1.0))
      return outside("tick_phase", tick_phase, 0.0, 1.0, " tick (1 is phase 0 a tick on)");
    return true;
  }
};

}  // namespace rlfit
