// Row classification per model: which recorded rows each registered model covers (its
// classifier, bound to its name in the registry), and the arena mesh it is classified on.
#include "src/replay/regime.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/common/constants.h"
#include "src/common/error.h"
#include "src/io/arena_file.h"
#include "src/io/recording.h"
#include "src/models/car.h"
#include "src/replay/episode_steps.h"
#include "src/replay/regime_models.h"
#include "src/replay/registry.h"

namespace rlfit {
namespace {

Regime AerialRegime(const Sample& s, const Arena& arena) {
  if (s.on_ground) return Regime::kOnGround;
  if (arena.Collide(s.x, kCarSurfaceReachUu).hit) return Regime::kTouchingSurface;
  return Regime::kCovered;
}

// The wall (surface) model: every surface of the arena, so only the wheels' contact matters.
Regime WallRegime(const Sample& s, const Arena& arena) {
  if (!s.on_ground) return Regime::kAirborne;
  if (!arena.Collide(s.x, kWallDriveReachUu).hit) return Regime::kAirborne;
  if (s.input.handbrake) return Regime::kHandbrake;
  return Regime::kCovered;
}

// Row labels of the car model (see ClassifyRows).
std::vector<Regime> CarRegimes(const Episode& ep, const Arena& arena) {
  const std::vector<CarStepChoice> choices = CarChoicesOnRecorded(ep, arena);
  std::vector<Regime> rows(ep.rows.size(), Regime::kCovered);
  const double settle_min_cos = std::cos(kCarFloorSettleTiltDeg * M_PI / 180.0);
  bool taking_off = false;  // left (or leaving) a surface with jump held, not yet clear of it
  for (int k = 0; k < ep.size(); ++k) {
    const Sample& s = ep.rows[k];
    const Sample& before = ep.rows[k > 0 ? k - 1 : 0];
    const bool jump_held = s.input.jump || before.input.jump;
    const bool surface = choices[k].regime == CarRegime::kSurface;
    // The flat floor: the car lies on it as the ground model's rows do, or settles on its
    // suspension after a landing.
    const double dz = s.x.z() - game::kCarRestHeight;
    const bool on_floor = surface && choices[k].contact.flat_floor() &&
                          dz <= kGroundHeightBandUu && dz >= -kCarFloorSettleUu &&
                          s.theta(2, 2) >= settle_min_cos;
    if ((s.input.handbrake || before.input.handbrake) && !on_floor) {
      // The handbrake on the flat floor is the vehicle step's; elsewhere (air roll in the
      // air, a powerslide on a wall, curve or ramp) it is not modelled.
      rows[k] = Regime::kHandbrake;
      taking_off = false;
    } else if (surface) {
      // Any other surface than the flat floor: the car is on its wheels there as the surface
      // step requires (IsOnSurface).
      const bool on_surface = !choices[k].contact.flat_floor() &&
                              IsOnSurface(SurfaceCoeffs<double>(), arena, s.x, s.theta.col(2));
      // A take-off's rows that still touch: the jump lifts the car off the band.
      const bool ok = on_floor || on_surface || (jump_held && taking_off);
      if (!ok) rows[k] = Regime::kOffFlatFloor;
      taking_off = ok && jump_held;
    } else if (arena.Collide(s.x, kCarSurfaceReachUu).hit) {
      if (!taking_off) rows[k] = Regime::kTouchingSurface;
    } else {
      taking_off = false;
    }
  }
  return rows;
}

// The registered model `model`; InputError naming the registered ones otherwise.
const ModelDescriptor& RegisteredModel(const std::string& model) {
  if (const ModelDescriptor* d = LookUpDescriptor(model)) return *d;
  throw InputError("model", 0, 0,
                   "unknown model '" + model + "' (known: " + RegisteredNamesText() + ")");
}

void CheckKind(const std::string& model, const Episode& ep, EpisodeKind kind) {
  if (ep.kind != kind)
    throw InputError(ep.path, 0, 0,
                     "the " + model + " model needs " +
                         (kind == EpisodeKind::kBall ? "ball" : "car") + " episodes");
}

// The floor plane z = 0 alone (two triangles far beyond the pitch), for the aerial surface test
// when no datasets root (and so no arena mesh) is available.
const Arena& FloorOnlyArena() {
  static const Arena arena = [] {
    constexpr float kFarUu = 1.0e5f;
    std::vector<Triangle> t(2);
    t[0].p[0] = {-kFarUu, -kFarUu, 0.0f};
    t[0].p[1] = {kFarUu, -kFarUu, 0.0f};
    t[0].p[2] = {kFarUu, kFarUu, 0.0f};
    t[1].p[0] = {-kFarUu, -kFarUu, 0.0f};
    t[1].p[1] = {kFarUu, kFarUu, 0.0f};
    t[1].p[2] = {-kFarUu, kFarUu, 0.0f};
    return Arena(t);
  }();
  return arena;
}

// Sets kOutsideArena on the rows whose centre lies outside the box of the mesh's vertices.
void MarkOutsideArena(const Episode& ep, const Arena& arena, std::vector<Regime>* rows) {
  const Arena::VertexBox& box = arena.Box();
  for (int k = 0; k < ep.size(); ++k) {
    const Eigen::Vector3d& x = ep.rows[k].x;
    if ((x.array() < box.lo.array()).any() || (x.array() > box.hi.array()).any())
      (*rows)[k] = Regime::kOutsideArena;
  }
}

// ClassifyRows: the model's classifier, on an episode of its kind. `arena` may be null for
// the models whose ArenaUse is kNone only.
std::vector<Regime> Classify(const ModelDescriptor& d, const Episode& ep, const Arena* arena) {
  CheckKind(d.replay.name, ep, d.replay.kind);
  return d.classify(ep, arena);
}

}  // namespace

Regime GroundRegime(const Sample& s) {
  if (!s.on_ground) return Regime::kAirborne;
  if (std::abs(s.x.z() - game::kCarRestHeight) > kGroundHeightBandUu ||
      s.theta(2, 2) < kGroundUprightMinCos)
    return Regime::kOffFlatFloor;
  if (s.input.handbrake) return Regime::kHandbrake;
  return Regime::kCovered;
}

std::vector<Regime> AerialRows(const Episode& ep, const Arena* arena) {
  std::vector<Regime> rows(ep.rows.size(), Regime::kCovered);
  for (int k = 0; k < ep.size(); ++k) rows[k] = AerialRegime(ep.rows[k], *arena);
  return rows;
}

std::vector<Regime> GroundRows(const Episode& ep, const Arena*) {
  std::vector<Regime> rows(ep.rows.size(), Regime::kCovered);
  for (int k = 0; k < ep.size(); ++k) rows[k] = GroundRegime(ep.rows[k]);
  return rows;
}

std::vector<Regime> JumpRows(const Episode& ep, const Arena* arena) {
  std::vector<Regime> rows(ep.rows.size(), Regime::kCovered);
  for (int k = 0; k < ep.size(); ++k)
    rows[k] = ep.rows[k].on_ground ? Regime::kOnGround : Regime::kNoTakeOff;
  for (const auto& [first, last] : JumpSegments(ep)) {
    int k = first;
    for (; k <= last; ++k) rows[k] = Regime::kCovered;
    // The landing starts where the car, once clear of the surface, comes back within reach.
    k = first + 1;
    while (k <= last && arena->Collide(ep.rows[k].x, kJumpLandingReachUu).hit) ++k;
    while (k <= last && !arena->Collide(ep.rows[k].x, kJumpLandingReachUu).hit) ++k;
    for (; k <= last; ++k) rows[k] = Regime::kTouchingSurface;
  }
  return rows;
}

std::vector<Regime> WallRows(const Episode& ep, const Arena* arena) {
  std::vector<Regime> rows(ep.rows.size(), Regime::kCovered);
  for (int k = 0; k < ep.size(); ++k) rows[k] = WallRegime(ep.rows[k], *arena);
  return rows;
}

std::vector<Regime> CarRows(const Episode& ep, const Arena* arena) {
  return CarRegimes(ep, *arena);
}

std::vector<Regime> BallRows(const Episode& ep, const Arena* arena) {
  std::vector<Regime> rows(ep.rows.size(), Regime::kCovered);
  const BallCoeffs<double> c = BallCoeffs<double>::FromArray(BallLayout().defaults.data());
  for (int k : UnexplainedImpulseRows(ep, *arena, c, kBallMinImpulseUuS, kBallSurfaceMarginUu))
    rows[k] = rows[k + 1] = Regime::kCarTouch;
  return rows;
}

const char* RegimeLabel(Regime regime) {
  switch (regime) {
    case Regime::kCovered: return "covered";
    case Regime::kOnGround: return "on the ground";
    case Regime::kTouchingSurface: return "touching a surface";
    case Regime::kAirborne: return "in the air";
    case Regime::kOffFlatFloor: return "on a wall, curve or ramp";
    case Regime::kHandbrake: return "handbrake held";
    case Regime::kCarTouch: return "touched by a car";
    case Regime::kNoTakeOff: return "in the air without a take-off";
    case Regime::kOutsideArena: return "outside the arena";
  }
  return "unknown";
}

std::vector<Regime> ClassifyRows(const std::string& model, const Episode& ep,
                                 const std::string& data_root) {
  const ModelDescriptor& d = RegisteredModel(model);
  // The flat floor is a plane: no mesh is needed, do not require one.
  if (d.arena == ArenaUse::kNone) return Classify(d, ep, nullptr);
  const std::string root = data_root.empty() ? ResolveDataRoot("") : data_root;
  // Without datasets, the floor alone (the aerial, car and jump models decide on the mesh).
  if (d.arena == ArenaUse::kPitchOrFloor && root.empty())
    return Classify(d, ep, &FloorOnlyArena());
  // The ball is classified in its own arena (BallArena: the ceiling where it bounces).
  const Arena& pitch = d.arena == ArenaUse::kBall ? BallArena(root) : PitchArena(root);
  std::vector<Regime> rows = Classify(d, ep, &pitch);
  MarkOutsideArena(ep, pitch, &rows);
  return rows;
}

std::vector<Regime> ClassifyRows(const std::string& model, const Episode& ep,
                                 const Arena& arena) {
  return Classify(RegisteredModel(model), ep, &arena);
}

double BallVelocityJump(const Episode& ep, const BallCoeffs<double>& c, int k) {
  return BallFreeFlightResidual(ep, c, k).norm();
}

std::vector<int> UnexplainedImpulseRows(const Episode& ep, const Arena& arena,
                                        const BallCoeffs<double>& c, double min_impulse_uu_s,
                                        double surface_margin_uu) {
  std::vector<int> rows;
  const double radius = c.contact_radius + surface_margin_uu;
  for (int k = 0; k + 1 < ep.size(); ++k) {
    if (BallVelocityJump(ep, c, k) < min_impulse_uu_s) continue;
    if (arena.Collide(ep.rows[k].x, radius).hit || arena.Collide(ep.rows[k + 1].x, radius).hit)
      continue;
    rows.push_back(k);
  }
  return rows;
}

std::vector<std::pair<int, int>> JumpSegments(const Episode& ep) {
  std::vector<std::pair<int, int>> out;
  const int n = ep.size();
  for (int k = 0; k + 1 < n; ++k) {
    const Sample& s = ep.rows[k];
    if (!s.on_ground) continue;
    bool pressed = false;
    for (int j = std::max(0, k - 2); j <= k; ++j) pressed = pressed || ep.rows[j].input.jump;
    const Eigen::Vector3d up = s.theta.col(2);
    if (!pressed || (ep.rows[k + 1].v - s.v).dot(up) <= kJumpTakeOffMinDvUuS) continue;
    int j = k + 1;
    while (j < n && ep.rows[j].on_ground) ++j;  // the wheels still touch
    if (j == n) break;                           // never left the surface
    while (j < n && !ep.rows[j].on_ground) ++j;  // the flight
    out.push_back({k, j - 1});
    k = j - 1;
  }
  return out;
}

JumpState CarJumpStateAt(const Episode& ep, int row, const Integration& integ,
                         const JumpTiming& timing) {
  for (const auto& [first, last] : JumpSegments(ep))
    if (first <= row && row <= last) return JumpStateAt(ep, first, row, integ, timing);
  return JumpStateOfRow(ep, row, integ, timing);
}

namespace {

CarModelState<double> CarStartStateAtLevel(const Episode& ep, int row, const Integration& integ,
                                           const JumpTiming& timing, double handbrake) {
  CarModelState<double> s = CarRecordedState<double>(ep, row);
  s.jump = CarJumpStateAt(ep, row, integ, timing);
  s.wheels.handbrake = handbrake;
  return s;
}

}  // namespace

CarModelState<double> CarStartState(const Episode& ep, int row, const Integration& integ,
                                    const JumpTiming& timing) {
  return CarStartStateAtLevel(ep, row, integ, timing,
                              VehicleStartState(ep, row, integ, nullptr).wheels.handbrake);
}

CarModelState<double> CarStartState(const Episode& ep, int row, const Integration& integ,
                                    const JumpTiming& timing, const std::vector<double>& levels) {
  return CarStartStateAtLevel(ep, row, integ, timing, levels[row]);
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

OnGroundAgreement& OnGroundAgreement::operator+=(const OnGroundAgreement& o) {
  rows += o.rows;
  agree += o.agree;
  surface_not_flagged += o.surface_not_flagged;
  flagged_in_air += o.flagged_in_air;
  return *this;
}

OnGroundAgreement CompareOnGround(const Episode& ep, const std::vector<signed char>& decision) {
  RLFIT_CHECK(decision.size() == ep.rows.size(), "one decision per row");
  OnGroundAgreement a;
  for (int k = 0; k < ep.size(); ++k) {
    if (decision[k] < 0) continue;
    ++a.rows;
    const bool surface = decision[k] != 0;
    if (surface == ep.rows[k].on_ground) ++a.agree;
    else if (surface) ++a.surface_not_flagged;
    else ++a.flagged_in_air;
  }
  return a;
}

std::vector<int> CountRegimes(const std::vector<Regime>& rows) {
  std::vector<int> counts(kRegimeCount, 0);
  for (Regime r : rows) ++counts[static_cast<int>(r)];
  return counts;
}

std::string BallSituation(const Episode& ep, int row, const Arena& arena,
                          const BallCoeffs<double>& c) {
  const double reach = c.contact_radius + kBallSituationReachUu;
  int best = -1;
  Contact deepest;
  for (int k = std::max(0, row - kBallSituationRowsBefore); k <= row + 1 && k < ep.size(); ++k) {
    const Contact ct = arena.Collide(ep.rows[k].x, reach);
    if (ct.hit && (best < 0 || ct.penetration > deepest.penetration)) {
      best = k;
      deepest = ct;
    }
  }
  if (best < 0) return "free flight";
  const Eigen::Vector3d& x = ep.rows[best].x;
  const Eigen::Vector3d n = deepest.triangles > 1
                                ? ClosestFeatureNormal(arena, x, reach, deepest)
                                : deepest.normal;
  // The speed into the surface before the contact: the row before the deepest one.
  const double vn = ep.rows[std::max(0, best - 1)].v.dot(n);
  std::string label = -vn >= c.restitution_threshold ? "bounce" : "roll";
  constexpr double kFlatCos = 0.999;   // cos 2.6 degrees
  constexpr double kUprightSin = 0.045;  // sin 2.6 degrees
  if (std::abs(x.y()) > kGoalLineY) label += " goal";
  else if (n.z() > kFlatCos) label += " floor";
  else if (n.z() < -kFlatCos) label += " ceiling";
  else if (std::abs(n.z()) < kUprightSin) label += " wall";
  else if (std::abs(x.x()) > kStraightBackX && std::abs(x.y()) > kStraightSideY)
    label += " corner curve";
  else if (std::abs(x.x()) > kStraightBackX) label += " side ramp";
  else if (std::abs(x.y()) > kStraightSideY) label += " back-wall ramp";
  else label += " curve";
  const double seam_cos = std::cos(kBallSeamDeg * M_PI / 180.0);
  if (deepest.triangles > 1 && n.dot(deepest.normal) < seam_cos) label += " at a seam";
  return label;
}

}  // namespace rlfit
