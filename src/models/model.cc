// Input timing shared by the car models.
#include "src/models/model.h"

namespace rlfit {

Controls ControlsOver(const Episode& ep, double t0_s, double t1_s, double delay_s) {
  Controls avg;
  const double span = t1_s - t0_s;
  if (!(span > 0.0)) return avg;
  // Row whose input acts at time t: the last j with rows[j].t_s + delay_s <= t (0 if none).
  auto row_at = [&](double t) {
    const double tr = t - delay_s;
    auto it = std::upper_bound(ep.rows.begin(), ep.rows.end(), tr,
                               [](double v, const Sample& s) { return v < s.t_s; });
    const int j = static_cast<int>(it - ep.rows.begin()) - 1;
    return j < 0 ? 0 : j;
  };
  double t = t0_s;
  int j = row_at(t0_s);
  while (t < t1_s) {
    const double next_switch =
        j + 1 < ep.size() ? ep.rows[j + 1].t_s + delay_s : t1_s;
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
