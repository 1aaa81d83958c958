// What every model shares: the flat, named layout of its coefficients and the integration
// settings (src/common/coeff_layout.h), the physics steps of a row, and the inputs acting then.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "src/common/coeff_layout.h"
#include "src/common/constants.h"
#include "src/io/episode.h"

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

// exp(x) for the per-step factors exp(rate dt) whose argument repeats from step to step: for
// double the last argument and value of each call site (kSlot) are kept per thread, so a run
// of steps calls exp once, with the same value bit for bit; any other scalar (a ceres::Jet)
// calls exp every time.
template <int kSlot>
double RepeatedExp(double x) {
  thread_local double last_x = 0.0, last_exp = 1.0;
  if (x != last_x) {  // NaN never matches: exp(NaN) every time
    last_exp = std::exp(x);
    last_x = x;
  }
  return last_exp;
}
template <int kSlot, typename T>
T RepeatedExp(const T& x) {
  using std::exp;
  return exp(x);
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

// Calls tick(controls, h_s) for each physics step of recorded row k -> k+1 of `ep`, in order:
// SubstepsForRow steps of h_s = step_dt_s[k] / n, step i spanning [t_k + i h_s, t_k + (i+1) h_s)
// with the inputs acting then (ControlsOver). The one place a row's steps and their inputs are
// formed: AdvanceCarRow, RowStepControls and JumpStateAt all take them from here.
template <typename Tick>
void ForEachRowTick(const Episode& ep, int k, const Integration& integ, const Tick& tick) {
  const double dt_row = ep.step_dt_s[k];
  const int n = SubstepsForRow(dt_row, integ.tick_rate_hz);
  const double h = dt_row / n;
  for (int i = 0; i < n; ++i) {
    const double t0 = ep.rows[k].t_s + i * h;
    tick(ControlsOver(ep, t0, t0 + h, integ), h);
  }
}

// Advances a car state over recorded row k -> k+1 of `ep`: the row's physics steps
// (ForEachRowTick), each with the inputs acting during it; step(state, controls, dt_s).
template <typename State, typename Step>
State AdvanceCarRow(const State& s, const Episode& ep, int k, const Integration& integ,
                    const Step& step) {
  State out = s;
  ForEachRowTick(ep, k, integ, [&](const Controls& u, double h) { out = step(out, u, h); });
  return out;
}

// The inputs of every physics step of rows first_row .. last_row - 1 of an episode, as
// AdvanceCarRow computes them (ForEachRowTick), computed once: a fit rolls
// each window out many times, and overlapping windows share the rows. Holds no reference to
// the episode.
class RowStepControls {
 public:
  RowStepControls() = default;
  RowStepControls(const Episode& ep, const Integration& integ, int first_row, int last_row)
      : first_row_(first_row) {
    offsets_.reserve(last_row - first_row + 1);
    offsets_.push_back(0);
    for (int k = first_row; k < last_row; ++k) {
      ForEachRowTick(ep, k, integ, [&](const Controls& u, double) { controls_.push_back(u); });
      offsets_.push_back(static_cast<int>(controls_.size()));
    }
  }
  int first_row() const { return first_row_; }
  int last_row() const { return first_row_ + static_cast<int>(offsets_.size()) - 1; }
  // Row k's steps: `count` Controls from `begin` (first_row <= k < last_row).
  const Controls* begin(int k) const { return controls_.data() + offsets_[k - first_row_]; }
  int count(int k) const { return offsets_[k - first_row_ + 1] - offsets_[k - first_row_]; }

 private:
  int first_row_ = 0;
  std::vector<int> offsets_;  // row k's steps are controls_[offsets_[k - first_row_] ...)
  std::vector<Controls> controls_;
};

// AdvanceCarRow with the steps' inputs taken from `controls` (built from the same episode and
// Integration, covering row k): the same states, bit for bit.
template <typename State, typename Step>
State AdvanceCarRow(const State& s, const Episode& ep, int k, const RowStepControls& controls,
                    const Step& step) {
  const int n = controls.count(k);
  const double h = ep.step_dt_s[k] / n;
  const Controls* u = controls.begin(k);
  State out = s;
  for (int i = 0; i < n; ++i) out = step(out, u[i], h);
  return out;
}

}  // namespace rlfit
