// Input timing shared by the car models.
#include "src/models/model.h"

#include <cmath>

namespace rlfit {

Controls ControlsOver(const Episode& ep, double t0_s, double t1_s, const Integration& integ) {
  Controls avg;
  const double span = t1_s - t0_s;
  if (!(span > 0.0)) return avg;
  const bool on_ticks = integ.tick_aligned_inputs && !std::isnan(ep.clock_origin_rows) &&
                        !ep.step_dt_s.empty();
  // Rows of this episode are step_dt_s[0] apart; ticks are 1/ticks_per_clock_row rows apart
  // on the recording's row clock, the first at clock row 0.
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
    const double tick = std::ceil(clock_rows / tick_rows - 1e-9) * tick_rows;
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

}  // namespace rlfit
