// The car's coefficient layout (the aerial, ground and surface layouts, the jump's own entries
// and the vehicle layout side by side) and the switch on recorded rows.
#include "src/models/car.h"

#include <string>

#include "src/common/error.h"

namespace rlfit {
namespace {

// Appends the entries of `from` from index `first` on (and the blocks that start there).
void Append(const CoeffLayout& from, const std::string& prefix, CoeffLayout* to, int first = 0) {
  const int offset = to->size() - first;
  for (int i = first; i < from.size(); ++i) {
    to->names.push_back(prefix + from.names[i]);
    to->units.push_back(from.units[i]);
    to->defaults.push_back(from.defaults[i]);
    to->bounds.push_back(from.Bound(i));
  }
  for (const ParamBlock& b : from.blocks)
    if (b.offset >= first) to->blocks.push_back({prefix + b.name, offset + b.offset, b.size});
}

// One coefficient of a committed fit, results/<model>/coeffs.json.
struct CommittedValue {
  const char* model;
  const char* name;
  double value;
};

// Written at configure time from the files by cmake/committed_fits.cmake.
constexpr CommittedValue kCommittedFits[] = {
#include "committed_fits.inc"
};

// Sets the defaults of `to` from index `offset` on to the committed fit of `model` for the
// entries of `from` from index `first` on, looked up by name.
void CommittedFitDefaults(const char* model, const CoeffLayout& from, int first, int offset,
                          CoeffLayout* to) {
  for (int i = first; i < from.size(); ++i) {
    const CommittedValue* found = nullptr;
    for (const CommittedValue& v : kCommittedFits)
      if (std::string(v.model) == model && v.name == from.names[i]) found = &v;
    RLFIT_CHECK(found != nullptr,
                std::string("results/") + model + "/coeffs.json has no " + from.names[i]);
    to->defaults[offset + i - first] = found->value;
  }
}

}  // namespace

const CoeffLayout& CarLayout() {
  static const CoeffLayout layout = [] {
    CoeffLayout l;
    Append(AerialLayout(), "aerial.", &l);
    Append(GroundLayout(), "ground.", &l);
    Append(SurfaceLayout(), "wall.", &l);
    // The jump's own entries (JumpLayout after its aerial part, which is the car's "aerial.").
    Append(JumpLayout(), "jump.", &l, AerialLayout().size());
    Append(VehicleLayout(), "vehicle.", &l);
    // The surface, jump and vehicle sets start from those models' committed fits, not from
    // their seeds: the car fit holds them (fit/car_fit.cc).
    CommittedFitDefaults("wall", SurfaceLayout(), 0, CarCoeffs<double>::kWallOffset, &l);
    CommittedFitDefaults("jump", JumpLayout(), AerialLayout().size(),
                         CarCoeffs<double>::kJumpOffset, &l);
    CommittedFitDefaults("vehicle", VehicleLayout(), 0, CarCoeffs<double>::kVehicleOffset, &l);
    return l;
  }();
  return layout;
}

}  // namespace rlfit
