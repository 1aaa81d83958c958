// Row classification per model (placeholder until the regime tests land: every row covered).
#include "src/replay/regime.h"

namespace rlfit {

const char* RegimeLabel(Regime regime) {
  switch (regime) {
    case Regime::kCovered: return "covered";
    case Regime::kOnGround: return "on the ground";
    case Regime::kTouchingSurface: return "touching a surface";
    case Regime::kAirborne: return "in the air";
    case Regime::kOffFlatFloor: return "on a wall, curve or ramp";
    case Regime::kHandbrake: return "handbrake held";
    case Regime::kCarTouch: return "touched by a car";
  }
  return "unknown";
}

std::vector<Regime> ClassifyRows(const std::string&, const Episode& ep, const std::string&) {
  return std::vector<Regime>(ep.rows.size(), Regime::kCovered);
}

std::vector<std::pair<int, int>> CoveredStretches(const std::vector<Regime>& rows) {
  std::vector<std::pair<int, int>> out;
  int begin = -1;
  for (int k = 0; k <= static_cast<int>(rows.size()); ++k) {
    const bool covered = k < static_cast<int>(rows.size()) && rows[k] == Regime::kCovered;
    if (covered && begin < 0) begin = k;
    if (!covered && begin >= 0) {
      if (k - 1 > begin) out.push_back({begin, k - 1});
      begin = -1;
    }
  }
  return out;
}

}  // namespace rlfit
