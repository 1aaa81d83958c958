// The car's coefficient layout (the aerial and ground layouts side by side) and the switch on
// recorded rows.
#include "src/models/car.h"

namespace rlfit {
namespace {

void Append(const CoeffLayout& from, const std::string& prefix, CoeffLayout* to) {
  const int offset = to->size();
  for (int i = 0; i < from.size(); ++i) {
    to->names.push_back(prefix + from.names[i]);
    to->units.push_back(from.units[i]);
    to->defaults.push_back(from.defaults[i]);
    to->bounds.push_back(from.Bound(i));
  }
  for (const ParamBlock& b : from.blocks) to->blocks.push_back({prefix + b.name, offset + b.offset, b.size});
}

}  // namespace

const CoeffLayout& CarLayout() {
  static const CoeffLayout layout = [] {
    CoeffLayout l;
    Append(AerialLayout(), "aerial.", &l);
    Append(GroundLayout(), "ground.", &l);
    return l;
  }();
  return layout;
}

std::vector<CarStepChoice> CarChoicesOnRecorded(const Episode& ep, const Arena& arena) {
  std::vector<CarStepChoice> out;
  out.reserve(ep.rows.size());
  for (const Sample& s : ep.rows) {
    CarModelState<double> state;
    state.body = CarState<double>::FromSample(s);
    Controls u;
    out.push_back(ChooseCarStep(state, u, arena));
  }
  return out;
}

}  // namespace rlfit
