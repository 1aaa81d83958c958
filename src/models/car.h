// One car across regimes (issue 11 part 4): every physics tick the car decides, from its own
// predicted state and the arena mesh, whether its wheels are on a surface or it is flying, and
// calls that regime's step (StepGround, StepAerial) with that step's own coefficients.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "src/common/coeff_layout.h"
#include "src/models/aerial.h"
#include "src/models/arena.h"
#include "src/models/ball.h"
#include "src/models/car_state.h"
#include "src/models/ground.h"
#include "src/models/model.h"

namespace rlfit {

// Coefficients of the car: the aerial set then the ground set, each the sub-model's own
// coefficients under the sub-model's names prefixed "aerial." / "ground." (CarLayout). There is
// one implementation of each step: the car calls StepAerial with `air` and StepGround with
// `ground`. Flat layout: AerialLayout() at offset 0, GroundLayout() at kGroundOffset.
template <typename T>
struct CarCoeffs {
  static constexpr int kAerialOffset = 0;
  static constexpr int kGroundOffset = AerialCoeffs<T>::kSize;
  static constexpr int kSize = AerialCoeffs<T>::kSize + GroundCoeffs<T>::kSize;
  AerialCoeffs<T> air;
  GroundCoeffs<T> ground;

  static CarCoeffs FromArray(const T* flat) {
    CarCoeffs c;
    c.air = AerialCoeffs<T>::FromArray(flat + kAerialOffset);
    c.ground = GroundCoeffs<T>::FromArray(flat + kGroundOffset);
    return c;
  }
};

// The aerial layout followed by the ground layout, names, units, defaults (the seed notes'),
// blocks ("aerial.air_torque", ..., "ground.throttle", ...) and bounds (with the reasons stated
// in AerialLayout / GroundLayout) carried over.
const CoeffLayout& CarLayout();

// Which step the car takes this tick. The switch (ChooseCarStep) returns one of these.
//   kSurface: wheels on the arena mesh: the surface step (today StepGround, the flat floor);
//   kAir:     no wheel contact: StepAerial.
// kUnknown is the regime carried into the first tick of a rollout (no transition from it).
// The jump helper adds kJump here (see ChooseCarStep for where it takes precedence).
enum class CarRegime : std::uint8_t { kUnknown = 0, kSurface, kAir };

// The car's state as the car model carries it: the rigid body, the regime of the last tick and
// how many ticks the car has been in it (the timer a jump or a dodge will count on).
template <typename T>
struct CarModelState {
  CarState<T> body;
  CarRegime regime = CarRegime::kUnknown;
  int regime_ticks = 0;  // ticks spent in `regime`, counting the last one
  bool on_floor = false;  // the last tick ran the flat-floor step (StepGround)

  static CarModelState FromSample(const Sample& s) {
    CarModelState out;
    out.body = CarState<T>::FromSample(s);
    return out;
  }
};

// The value of a scalar of the step: itself for double, the value part of a ceres::Jet (the
// regime decision is a switch, it has no derivative).
inline double ValueOf(double x) { return x; }
template <typename T>
double ValueOf(const T& x) {
  return x.a;
}

// Thresholds of the decision, with where their values come from (measured on
// car_control/freestyling.txt and data.txt, 3,218 rows, 2,361 with on_ground set; see NOTES.md
// "One car across regimes").
//
// The wheel point: the car's centre moved kCarRestHeight (17.01 uu) down the car's own up axis,
// which is where the surface lies under a car resting on it, whatever the surface's tilt.
// The wheels touch a surface when the mesh comes within kCarWheelContactUu of that point.
// Measured distance of the wheel point from the mesh: rows with on_ground set: median 0.001 uu,
// p99 2.6, largest 10.6 (a car landing tilted in a corner, z 1663); rows with it off: smallest
// 4.1 (the row before a landing), 1st percentile 20.3. Agreement of "within d" with the flag:
// d = 5: 99.69% (9 flagged rows beyond), 10: 99.91%, 12: 99.94%, 15: 99.78% (7 unflagged rows
// within: the first rows of a jump). 10 uu sits in the gap (jump take-off rows flagged on
// reach 9.6 uu) and below where the unflagged rows start.
inline constexpr double kCarWheelContactUu = 10.0;
// The surface under the wheels is the flat floor (the surface StepGround models) when its
// normal is within 1 degree of vertical: the same angle as the ground model's upright test
// (kGroundUprightMinCos, src/replay/regime.h), cos(1 degree).
inline constexpr double kCarFlatFloorMinCos = 0.99984769515639127;

// What the switch reads from the arena: the surface under the wheels.
struct WheelContact {
  bool hit = false;                                       // within kCarWheelContactUu
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();      // the mesh's normal there
  double distance_uu = 0.0;                               // wheel point to mesh, when hit
  bool flat_floor() const { return hit && normal.z() >= kCarFlatFloorMinCos; }
};

// The contact under the wheels of a car at centre x with up axis `up` (unit), see above. The
// normal is that of the mesh feature closest to the car's centre (ClosestFeatureNormal of a
// sphere reaching kCarRestHeight + kCarWheelContactUu, which touches whenever the wheel point
// does): at the wheel point itself, 0.001 uu above the floor, neither the Arena's averaged
// normal (it leans toward the other floor triangle when the diagonal seam of the floor is
// within 10 uu: up to 41 degrees on rows 424-426 of data.txt) nor a gradient of the unsigned
// distance there (its probes cross the plane) is the floor's.
inline WheelContact FindWheelContact(const Arena& arena, const Eigen::Vector3d& x,
                                     const Eigen::Vector3d& up) {
  const Contact c = arena.Collide(x - up * game::kCarRestHeight, kCarWheelContactUu);
  WheelContact w;
  w.hit = c.hit;
  if (c.hit) {
    const double reach = game::kCarRestHeight + kCarWheelContactUu;
    const Contact centre = arena.Collide(x, reach);
    w.normal = centre.hit ? ClosestFeatureNormal(arena, x, reach, centre) : c.normal;
    w.distance_uu = kCarWheelContactUu - c.penetration;
  }
  return w;
}

// The switch's answer for one tick: the regime and the contact it was decided on.
struct CarStepChoice {
  CarRegime regime = CarRegime::kAir;
  WheelContact contact;
};

// The decision rule, evaluated at the start of every tick on the state the car carries (its
// own prediction, or a recorded row for the row labels and the on_ground check), the controls
// of the tick and the arena:
//   1. (jump helper: a jump in progress, s.regime == kJump with its timer running, or jump
//      pressed while on a surface, takes precedence here and returns kJump.)
//   2. wheel contact (FindWheelContact: the mesh within kCarWheelContactUu of the wheel point)
//      -> kSurface. Landing is the first tick of kSurface after kAir; take-off the first tick
//      of kAir after kSurface (driving off a ledge; later also the jump).
//   3. otherwise -> kAir.
// Deterministic: a function of the state's values and the arena only (the controls are passed
// for the jump and handbrake steps that will read them; today's rule does not).
template <typename T>
CarStepChoice ChooseCarStep(const CarModelState<T>& s, const Controls& /*u*/, const Arena& arena) {
  const Eigen::Vector3d x(ValueOf(s.body.x(0)), ValueOf(s.body.x(1)), ValueOf(s.body.x(2)));
  const Eigen::Vector3d up(ValueOf(s.body.theta(0, 2)), ValueOf(s.body.theta(1, 2)),
                           ValueOf(s.body.theta(2, 2)));
  CarStepChoice choice;
  choice.contact = FindWheelContact(arena, x, up);
  choice.regime = choice.contact.hit ? CarRegime::kSurface : CarRegime::kAir;
  return choice;
}

// Landing: the orientation turned by the smallest rotation that takes the car's up axis onto
// the surface normal n (the wheels settle on the surface). The velocity into the surface and
// the angular velocity off the normal are the surface step's business (StepGround drops both).
template <typename T>
Mat3<T> AlignToSurface(const Mat3<T>& theta, const Eigen::Vector3d& n) {
  using std::atan2;
  using std::sqrt;
  const Vec3<T> up = theta.col(2);
  const Vec3<T> axis = up.cross(n.cast<T>());
  const T s2 = axis.squaredNorm();
  if (ValueOf(s2) < 1e-24) return theta;  // already aligned (or upside down: no unique turn)
  const T s = sqrt(s2);
  const T angle = atan2(s, up.dot(n.cast<T>()));
  return ExpSo3<T>(Vec3<T>(axis * (angle / s))) * theta;
}

// One physics tick of the car: ChooseCarStep, then that regime's step.
//   kSurface on the flat floor (contact.flat_floor()): on landing (the last tick was not on the
//     floor) AlignToSurface(contact normal); then StepGround, the floor at z = rest_height.
//   kSurface on any other surface (a ramp, curve, wall, the ceiling): there is no step for it
//     yet, so the car keeps flying (StepAerial) rather than being put on the floor; the row
//     labels (ClassifyRows "car") leave such rows out. The wall helper's surface step goes here.
//   kAir: on take-off (the last tick ran the floor step) the ground step's reported rest vz
//     (rest_reported_vz, a reporting convention of the recordings, not motion) is removed
//     along the up axis; then StepAerial.
template <typename T>
CarModelState<T> StepCar(const CarCoeffs<T>& c, const Arena& arena, const CarModelState<T>& s,
                         const Controls& u, double dt_s, bool rotate_with_new_omega) {
  const CarStepChoice choice = ChooseCarStep(s, u, arena);
  CarModelState<T> next;
  CarState<T> body = s.body;
  const bool on_floor = choice.regime == CarRegime::kSurface && choice.contact.flat_floor();
  if (on_floor) {
    // Landing: the last tick did not run the floor step (a rollout's first tick did no tick).
    if (s.regime != CarRegime::kUnknown && !s.on_floor)
      body.theta = AlignToSurface(body.theta, choice.contact.normal);
    next.body = StepGround(c.ground, body, u, dt_s, rotate_with_new_omega);
  } else {
    // In the air, or on a surface no step models yet (see above).
    if (s.on_floor) body.v -= body.theta.col(2) * T(c.ground.rest_reported_vz);  // take-off
    next.body = StepAerial(c.air, body, u, dt_s, rotate_with_new_omega);
  }
  next.on_floor = on_floor;
  next.regime = choice.regime;
  next.regime_ticks = choice.regime == s.regime ? s.regime_ticks + 1 : 1;
  return next;
}

// Advances the state over recorded row k -> k+1 of `ep` (substeps per Integration).
template <typename T>
CarModelState<T> AdvanceCarModelRow(const CarCoeffs<T>& c, const Arena& arena,
                                    const CarModelState<T>& s, const Episode& ep, int k,
                                    const Integration& integ) {
  return AdvanceCarRow(s, ep, k, integ,
                       [&](const CarModelState<T>& state, const Controls& u, double h) {
                         return StepCar(c, arena, state, u, h, integ.rotate_with_new_omega);
                       });
}

// Per row of `ep`: would the switch put the recorded state on a surface (ChooseCarStep on the
// recorded row, no carried regime)? For the on_ground check and the row labels.
std::vector<CarStepChoice> CarChoicesOnRecorded(const Episode& ep, const Arena& arena);

}  // namespace rlfit
