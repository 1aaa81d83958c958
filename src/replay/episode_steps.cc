// The inputs acting during a recorded row, the jump state of a recorded row and the car's
// surface choice on recorded rows (src/replay/episode_steps.h).
#include "src/replay/episode_steps.h"

#include <cmath>

namespace rlfit {

Controls ControlsOver(const Episode& ep, double t0_s, double t1_s, const Integration& integ) {
  Controls avg;
  const double span = t1_s - t0_s;
  if (!(span > 0.0)) return avg;
  const bool on_ticks = integ.tick_aligned_inputs && !std::isnan(ep.clock_origin_rows) &&
                        !ep.step_dt_s.empty();
  // Rows of this episode are step_dt_s[0] apart; ticks are 1/ticks_per_clock_row rows apart
  // on the recording's row clock, at clock rows (i + tick_phase) tick_rows.
  const double row_s = on_ticks ? ep.step_dt_s[0] : 0.0;
  const double tick_rows = 1.0 / integ.ticks_per_clock_row;
  // Time from which row j's input acts.
  // Without the clock, a tick-aligned switch comes half a tick late on average.
  const double unknown_phase_s =
      integ.tick_aligned_inputs && !on_ticks ? 0.5 / integ.tick_rate_hz : 0.0;
  auto switch_time = [&](int j) {
    const double t = ep.rows[j].t_s + integ.input_delay_s;
    if (!on_ticks) return t + unknown_phase_s;
    const double clock_rows = t / row_s + ep.clock_origin_rows;
    const double tick =
        (std::ceil(clock_rows / tick_rows - integ.tick_phase - 1e-9) + integ.tick_phase) *
        tick_rows;
    return (tick - ep.clock_origin_rows) * row_s;
  };
  // Row whose input acts at time t: the last j whose switch time is <= t (0 if none). Switch
  // times increase with j, so a binary search over rows works.
  int lo = 0, hi = ep.size() - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (switch_time(mid) <= t0_s) lo = mid;
    else hi = mid - 1;
  }
  double t = t0_s;
  int j = lo;
  while (t < t1_s) {
    const double next_switch = j + 1 < ep.size() ? switch_time(j + 1) : t1_s;
    const double end = std::min(t1_s, std::max(next_switch, t));
    const double w = (end - t) / span;
    const CarInputs& u = ep.rows[j].input;
    avg.throttle += w * u.throttle;
    avg.steer += w * u.steer;
    avg.pitch += w * u.pitch;
    avg.yaw += w * u.yaw;
    avg.roll += w * u.roll;
    avg.boost += w * (u.boost ? 1.0 : 0.0);
    avg.jump += w * (u.jump ? 1.0 : 0.0);
    avg.handbrake += w * (u.handbrake ? 1.0 : 0.0);
    t = end;
    if (j + 1 < ep.size()) ++j;
    else break;
  }
  return avg;
}

JumpState JumpStateOfRow(const Episode& ep, int row, const Integration& integ,
                         const JumpTiming& timing) {
  JumpState j = FromSample<JumpState>(ep.rows[row], timing);
  const double t = ep.rows[row].t_s;
  j.jump_held = row > 0 && ControlsOver(ep, t - 1.0 / integ.tick_rate_hz, t, integ).jump > 0.5;
  return j;
}

JumpState JumpStateAt(const Episode& ep, int takeoff, int row, const Integration& integ,
                      const JumpTiming& timing) {
  JumpState s;  // in contact, jump not held
  for (int k = takeoff; k < row; ++k)
    ForEachRowTick(ep, k, integ,
                   [&](const Controls& u, double h) { PlanJumpTick(&s, u, timing, h); });
  return s;
}

std::vector<CarStepChoice> CarChoicesOnRecorded(const Episode& ep, const Arena& arena) {
  std::vector<CarStepChoice> out;
  out.reserve(ep.rows.size());
  for (const Sample& s : ep.rows) {
    CarModelState<double> state;
    state.body = FromSample<CarState<double>>(s);
    Controls u;
    out.push_back(ChooseCarStep(state, u, arena));
  }
  return out;
}

}  // namespace rlfit
