// The car's coefficient layout (the aerial, ground and surface layouts, the jump's own entries
// and the powerslide layout side by side) and the switch on recorded rows.
#include "src/models/car.h"

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

}  // namespace

const CoeffLayout& CarLayout() {
  static const CoeffLayout layout = [] {
    CoeffLayout l;
    Append(AerialLayout(), "aerial.", &l);
    Append(GroundLayout(), "ground.", &l);
    Append(SurfaceLayout(), "wall.", &l);
    // The jump's own entries (JumpLayout after its aerial part, which is the car's "aerial.").
    Append(JumpLayout(), "jump.", &l, AerialLayout().size());
    // The surface set's defaults: the wall model's fit, results/wall/coeffs.json (surface_gravity_scale,
    // coast_wall_grip, surface_follow_rate, curve_friction), not its seed (1, 0.1, 30, 0).
    const double wall_fit[] = {0.9507630748970521, 0.05977431065516686, 18.286376227107073,
                               0.058377141870472736};
    for (int i = 0; i < SurfaceCoeffs<double>::kSize; ++i)
      l.defaults[CarCoeffs<double>::kWallOffset + i] = wall_fit[i];
    // The jump block's defaults: the jump model's fit, results/jump/coeffs.json (jump_impulse,
    // jump_accel, sticky_accel, contact_drive_accel); double jump and dodge keep the game's.
    const double jump_fit[] = {294.3079835078712, 1411.348440617462, 204.6582205561329,
                               1185.556237435008};
    for (int i = 0; i < 4; ++i) l.defaults[CarCoeffs<double>::kJumpOffset + i] = jump_fit[i];
    // The powerslide set: the powerslide model's fit, results/powerslide/coeffs.json, in
    // PowerslideLayout() order.
    Append(PowerslideLayout(), "powerslide.", &l);
    const double slide_fit[] = {4851.982181878558,   6689.362468270913,   5000.0,
                                0.1671187960190371,  0.6280186062132176,  0.7038725711226559,
                                0.17356751649503985, 0.3052234987936512,  0.14104219271618357,
                                1901.940339622643,   0.7194160464086045};
    for (int i = 0; i < PowerslideCoeffs<double>::kSize; ++i)
      l.defaults[CarCoeffs<double>::kSlideOffset + i] = slide_fit[i];
    return l;
  }();
  return layout;
}

}  // namespace rlfit
