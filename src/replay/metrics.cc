// Error samples, horizon lookup and order statistics.
#include "src/replay/metrics.h"

#include <algorithm>
#include <cmath>

#include "src/common/rotation.h"

namespace rlfit {

ErrorSample CompareState(const PredictedState& p, const Sample& r) {
  ErrorSample e;
  e.dx = (p.x - r.x).norm();
  e.dv = (p.v - r.v).norm();
  e.domega = (p.omega - r.omega).norm();
  e.angle_deg = AngleBetweenDeg(p.theta, r.theta);
  return e;
}

const std::vector<Quantity>& Quantities(bool with_orientation) {
  static const std::vector<Quantity> all = {
      {"dx", "|dx| uu", &ErrorSample::dx},
      {"dv", "|dv| uu/s", &ErrorSample::dv},
      {"domega", "|dw| rad/s", &ErrorSample::domega},
      {"angle_deg", "angle deg", &ErrorSample::angle_deg}};
  static const std::vector<Quantity> no_orientation(all.begin(), all.begin() + 3);
  return with_orientation ? all : no_orientation;
}

int RowAtHorizon(const Episode& ep, int start, double horizon_s) {
  const double target = ep.rows[start].t_s + horizon_s;
  auto it = std::lower_bound(ep.rows.begin() + start, ep.rows.end(), target,
                             [](const Sample& s, double t) { return s.t_s < t; });
  int k = static_cast<int>(it - ep.rows.begin());
  if (k >= ep.size()) {
    const int last = ep.size() - 1;
    const double half_row = last > 0 ? 0.5 * ep.step_dt_s[last - 1] : 0.0;
    return ep.rows[last].t_s + half_row >= target ? last : -1;
  }
  if (k > start && target - ep.rows[k - 1].t_s < ep.rows[k].t_s - target) --k;
  return k;
}

Stats Summarize(std::vector<double> values) {
  Stats s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  // Linear interpolation between order statistics (numpy's default percentile).
  auto quantile = [&](double q) {
    const double pos = q * (values.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - lo) * (values[hi] - values[lo]);
  };
  s.median = quantile(0.5);
  s.p90 = quantile(0.9);
  s.max = values.back();
  return s;
}

}  // namespace rlfit
