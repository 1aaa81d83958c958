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

namespace {

// Quantile q of sorted `values` by linear interpolation between order statistics (numpy's
// default percentile); equal neighbours (also two infinities) give their value.
double SortedQuantile(const std::vector<double>& values, double q) {
  const double pos = q * (values.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  if (values[lo] == values[hi] || pos == lo) return values[lo];
  return values[lo] + (pos - lo) * (values[hi] - values[lo]);
}

}  // namespace

Stats Summarize(std::vector<double> values) {
  Stats s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.median = SortedQuantile(values, 0.5);
  s.p90 = SortedQuantile(values, 0.9);
  s.max = values.back();
  return s;
}

P90Spread BootstrapP90(const std::vector<double>& values, int set_size, int draws,
                       std::uint64_t seed) {
  P90Spread r;
  if (values.empty() || set_size < 1 || draws < 1) return r;
  r.n = static_cast<int>(values.size());
  r.set_size = set_size;
  // SplitMix64: a generator whose stream is the same on every platform (std's distributions
  // are not), mapped onto an index by the top 53 bits.
  std::uint64_t state = seed;
  auto next_index = [&] {
    state += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    return std::min(values.size() - 1, static_cast<std::size_t>(u * values.size()));
  };
  std::vector<double> set(static_cast<std::size_t>(set_size)), p90s;
  p90s.reserve(static_cast<std::size_t>(draws));
  for (int d = 0; d < draws; ++d) {
    for (double& v : set) v = values[next_index()];
    std::sort(set.begin(), set.end());
    p90s.push_back(SortedQuantile(set, 0.9));
  }
  std::sort(p90s.begin(), p90s.end());
  r.p5 = SortedQuantile(p90s, 0.05);
  r.p50 = SortedQuantile(p90s, 0.5);
  r.p95 = SortedQuantile(p90s, 0.95);
  return r;
}

}  // namespace rlfit
