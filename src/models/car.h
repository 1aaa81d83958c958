// One car across regimes (issue 11 part 4): every physics tick the car decides, from its own
// predicted state and the arena mesh, whether its wheels are on a surface or it is flying, and
// calls that regime's step (StepVehicle on the flat floor, StepSurface, StepAerial, StepJump)
// with that step's own coefficients.
#pragma once

#include <algorithm>
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
#include "src/models/jump.h"
#include "src/models/model.h"
#include "src/models/surface.h"
#include "src/models/vehicle.h"

namespace rlfit {

// Coefficients of the car: the aerial set, the ground set, the surface set, the jump's own set
// and the vehicle set, each the sub-model's own coefficients under the sub-model's names
// prefixed "aerial." / "ground." / "wall." / "jump." / "vehicle." (CarLayout). There is one
// implementation of each step: the car calls StepAerial with `air`, StepSurface with `ground`
// and `wall` (the wall model's pairing), StepJump with `jump`, whose aerial part is `air` (the
// jump model's pairing: the jump is built on the aerial step), and StepVehicle with `vehicle`
// on the flat floor (issue 37, decision 0097). The ground set is read off the floor only: by
// StepSurface, and for its rest_reported_vz on take-off. Flat layout: AerialLayout() at offset
// 0, GroundLayout() at kGroundOffset, SurfaceLayout() at kWallOffset, then JumpLayout()'s own
// entries (those after its aerial part: blocks jump, double_jump, dodge) at kJumpOffset, then
// VehicleLayout() at kVehicleOffset.
template <typename T>
struct CarCoeffs {
  static constexpr int kAerialOffset = 0;
  static constexpr int kGroundOffset = AerialCoeffs<T>::kSize;
  static constexpr int kWallOffset = kGroundOffset + GroundCoeffs<T>::kSize;
  static constexpr int kJumpOffset = kWallOffset + SurfaceCoeffs<T>::kSize;
  // The jump's own entries: JumpCoeffs' flat layout less its aerial part.
  static constexpr int kJumpSize = JumpCoeffs<T>::kSize - AerialCoeffs<T>::kSize;
  static constexpr int kVehicleOffset = kJumpOffset + kJumpSize;
  static constexpr int kSize = kVehicleOffset + VehicleCoeffs<T>::kSize;
  AerialCoeffs<T> air;
  GroundCoeffs<T> ground;
  SurfaceCoeffs<T> wall;
  JumpCoeffs<T> jump;  // jump.air == air
  VehicleCoeffs<T> vehicle;

  static CarCoeffs FromArray(const T* flat) {
    CarCoeffs c;
    c.air = AerialCoeffs<T>::FromArray(flat + kAerialOffset);
    c.ground = GroundCoeffs<T>::FromArray(flat + kGroundOffset);
    c.wall = SurfaceCoeffs<T>::FromArray(flat + kWallOffset);
    const T* a = flat + kAerialOffset;
    const T* j = flat + kJumpOffset;
    constexpr int kDouble = JumpCoeffs<T>::kDoubleJumpImpulse - JumpCoeffs<T>::kJumpImpulse;
    constexpr int kDodge = JumpCoeffs<T>::kDodgeImpulse - JumpCoeffs<T>::kJumpImpulse;
    c.jump = JumpCoeffs<T>::FromBlocks(a + AerialCoeffs<T>::kTr, a + AerialCoeffs<T>::kDr,
                                       a + AerialCoeffs<T>::kBoostAccel,
                                       a + AerialCoeffs<T>::kDriftR, j, j + kDouble, j + kDodge);
    c.vehicle = VehicleCoeffs<T>::FromArray(flat + kVehicleOffset);
    return c;
  }
};

// The aerial, ground and surface layouts, the jump's own entries and the vehicle layout one
// after the other: names, units, blocks ("aerial.air_torque", ..., "ground.throttle", ...,
// "wall.surface", "jump.jump", "jump.double_jump", "jump.dodge", "vehicle.drive", ...,
// "vehicle.inertia") and bounds (with the reasons stated in AerialLayout / GroundLayout /
// SurfaceLayout / JumpLayout / VehicleLayout) carried over. Defaults: the seed
// notes' for the aerial and ground sets; for the surface set the wall model's fit
// (results/wall/coeffs.json, 19 wall_driving episodes: far more wall driving than the car's
// recordings hold); for the jump block the jump model's fit (results/jump/coeffs.json: the 5
// recorded jumps, 3 of them in freestyling.txt) and the game's values for double jump and
// dodge (never recorded); for the vehicle set the vehicle model's fit
// (results/vehicle/coeffs.json: 42 ground_driving_no_handbrake episodes, 32 fitted on: far more
// floor driving than the car's recordings hold; the handbrake's effects are the game's). The car fit holds the surface, jump
// and vehicle sets (see NOTES "One car across regimes").
const CoeffLayout& CarLayout();

// Which step the car takes this tick. The switch (ChooseCarStep) returns one of these.
//   kSurface: wheels on the arena mesh: StepVehicle on the flat floor, StepSurface elsewhere;
//   kAir:     no wheel contact: StepAerial.
//   kJump:    a jump's take-off from a surface, its contact ticks and held force, a double
//             jump or a dodge: StepJump (which runs StepAerial once the wheels are off).
// kUnknown is the regime carried into the first tick of a rollout (no transition from it).
enum class CarRegime : std::uint8_t { kUnknown = 0, kSurface, kAir, kJump };

// The car's state as the car model carries it: the rigid body, the regime of the last tick, how
// many ticks the car has been in it, and the jump state (JumpState: carried through every
// regime; reset on every surface tick, advanced by PlanJumpTick on every tick).
template <typename T>
struct CarModelState {
  CarState<T> body;
  // The regime and the three flags before regime_ticks: eight bytes without padding, which a
  // state's copy moves at once (StepCar's result: bench/perf_guard car_step_floor).
  CarRegime regime = CarRegime::kUnknown;
  bool on_floor = false;  // the last tick ran the flat-floor step (StepVehicle)
  bool on_surface = false;  // the last tick ran the surface step (StepSurface)
  // StepSurface reported the car leaving the surface (the ceiling, an overhang, a slow car on
  // its side): the car flies (kAir) while its wheels still touch that surface, and lands
  // anew once they have lost it (or on the flat floor, which no car leaves this way).
  bool left_surface = false;
  int regime_ticks = 0;  // ticks spent in `regime`, counting the last one
  // The jump state. FromSample: the row's flags (JumpState::FromSample: a recorded jumped flag
  // counts as used, its windows closed); a rollout that starts inside a recorded jump takes
  // the state since its take-off instead (CarJumpStateAt, src/replay/regime.h).
  JumpState jump;
  // What StepVehicle carries between floor ticks (VehicleState::wheels): the wheels decided at
  // the end of the last floor tick (set), and the handbrake level (wheels.handbrake, the game's
  // OutputHandbrake, 0..1), which follows the input at the game's rates on every tick whatever
  // the regime (NextVehicleHandbrake). Every tick off the flat floor leaves the wheels unset,
  // so the next floor tick decides its own from its state. FromSample: unset, level 0; a
  // rollout from a recorded row takes the level ramped over the recorded input before it
  // (VehicleStartState, CarStartState).
  WheelSettings<T> wheels;
  // The boost amount, 0..game::kBoostMax: boost thrusts only while it is above 0 and drains at
  // game::kBoostUsedPerSecond while held (StepCar). FromSample: the recorded amount.
  double boost = game::kBoostMax;
  // Boost never drains (the recording's fact, Episode::unlimited_boost, set by the replay's
  // rollouts; never set for predictions).
  bool unlimited_boost = false;
};

// The boost of one tick: the controls with boost held only while the car has boost left
// (RocketSim Car.cpp: boost acts when held and the amount is above 0), and the amount after
// the tick (the fraction of the tick it was held times game::kBoostUsedPerSecond, never below
// 0; unchanged when unlimited).
inline Controls BoostLimited(const Controls& u, double boost, bool unlimited) {
  Controls out = u;
  if (!unlimited && !(boost > 0.0)) out.boost = 0.0;
  return out;
}
inline double BoostAfterTick(double boost, const Controls& acting, double dt_s, bool unlimited) {
  if (unlimited) return boost;
  return std::max(0.0, boost - acting.boost * game::kBoostUsedPerSecond * dt_s);
}

// The value of a scalar of the step: itself for double, the value part of a ceres::Jet (the
// regime decision is a switch, it has no derivative).
inline double ValueOf(double x) { return x; }
template <typename T>
double ValueOf(const T& x) {
  return x.a;
}

// Thresholds of the decision, with where their values come from (measured on
// car_control/freestyling.txt and data.txt, 3,218 rows, 2,361 with on_ground set; see decisions
// 0018 and 0020).
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
// The surface under the wheels is the flat floor (the surface StepVehicle models) when its
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
// distance there (its probes cross the plane) is the floor's. This is the mesh's answer;
// FindWheelContact adds a fast path over the open floor.
inline WheelContact FindWheelContactOnMesh(const Arena& arena, const Eigen::Vector3d& x,
                                           const Eigen::Vector3d& up) {
  const double reach = game::kCarRestHeight + kCarWheelContactUu;
  const Contact c = arena.Collide(x - up * game::kCarRestHeight, kCarWheelContactUu);
  WheelContact w;
  w.hit = c.hit;
  if (c.hit) {
    const Contact centre = arena.Collide(x, reach);
    w.normal = centre.hit ? ClosestFeatureNormal(arena, x, reach, centre) : c.normal;
    w.distance_uu = kCarWheelContactUu - c.penetration;
  }
  return w;
}

// Over the open floor (Arena::FloorHeight answers for the centre: no triangle but the floor's,
// in the plane z = 0, within Arena::kGridRadius of it, which holds the wheel point's sphere)
// the answer is the floor's without asking the mesh: the wheel point touches when
// z^2 <= kCarWheelContactUu^2 (Collide's own test), and then the centre, within
// kCarRestHeight + kCarWheelContactUu of the floor, has the floor's normal (0, 0, 1) from
// ClosestFeatureNormal. The same answer as FindWheelContactOnMesh bit for bit
// (tests/fast_paths_test.cc, random cars over the floor); it skips two grid queries and
// ClosestFeatureNormal's six probes: the whole car step on the floor costs 0.21x
// (bench/perf_guard car_step_floor).
inline WheelContact FindWheelContact(const Arena& arena, const Eigen::Vector3d& x,
                                     const Eigen::Vector3d& up) {
  if (arena.FloorHeight(x, game::kCarRestHeight + kCarWheelContactUu) < 0.0)
    return FindWheelContactOnMesh(arena, x, up);
  WheelContact w;
  const double z = x.z() - up.z() * game::kCarRestHeight;  // the wheel point's height
  w.hit = z * z <= kCarWheelContactUu * kCarWheelContactUu;
  if (w.hit) w.distance_uu = kCarWheelContactUu - (kCarWheelContactUu - std::abs(z));
  return w;
}

// The switch's answer for one tick: the regime, the contact it was decided on, and the jump
// state: `jump` the state the tick starts from (reset to resting on a surface when the wheels
// touch one, marked off the surface in the air); `jump_after` the state after this tick's
// PlanJumpTick, which StepCar carries on from a surface or air tick (StepJump plans its own
// tick from `jump`).
struct CarStepChoice {
  CarRegime regime = CarRegime::kAir;
  WheelContact contact;
  JumpState jump;
  JumpState jump_after;
};

// The take-off's contact ticks: the first jump's impulse happened less than contact_time_s
// ago and the wheels still touch (PlanJumpTick ends the contact then; its time tolerance is half
// a tick, here half a 120 Hz tick).
inline bool InJumpContact(const JumpState& j, const JumpTiming& t) {
  const double half_tick = 0.5 / game::kTickRateHz;
  return j.has_jumped && j.in_contact && j.jump_time_s + half_tick < t.contact_time_s;
}

// The decision rule, evaluated at the start of every tick on the state the car carries (its
// own prediction, or a recorded row for the row labels and the on_ground check), the controls
// of the tick and the arena:
//   1. a jump's contact ticks (InJumpContact) -> kJump,
//      whatever the mesh says (the take-off lifts the wheels ~15 uu in those 6 ticks);
//   2. wheel contact (FindWheelContact: the mesh within kCarWheelContactUu of the wheel point)
//      -> kSurface. Landing is the first tick of kSurface after kAir; take-off the first tick
//      of kAir after kSurface (driving off a ledge; later also the jump).
//      Except right after StepSurface reported the car leaving a surface (s.left_surface): on
//      any surface but the flat floor the car keeps flying -> kAir.
//   3. otherwise -> kAir.
//   Then the jump: on a surface the jump state is reset (Landed: every surface tick is a
//   landing for the jump rules) and a jump press there is the take-off -> kJump; in the air
//   the first jump's force or a dodge in progress, or a press that starts a double jump or a
//   dodge (PlanJumpTick on the tick's inputs decides) -> kJump. A car the jump's force still
//   lifts lands when its wheels come within reach (2. wins over the force: landing resets
//   the jump).
// What StepSurface expects of a kSurface state holds: the wheel point within 10 uu of the mesh
// puts the mesh within 17.01 + 10 uu of the centre (the triangle inequality), inside the
// surface's drive_reach (30) and search reach (40), so StepSurface always finds the surface;
// its up-axis test (IsOnSurface, 30 degrees) holds once StepCar has turned the car onto the
// surface on landing.
// Deterministic: a function of the state's values, the tick's inputs (jump, stick) and the
// arena only; dt_s is the tick's length (the jump's timers).
// ChooseCarStep's answer written to the caller's contact and jump states, the regime returned:
// StepCar writes the state after the tick's PlanJumpTick straight into its next state instead
// of copying it out of a CarStepChoice (JumpState: 56 bytes). On the take-off's contact ticks
// (the first rule) *jump_after is left as it was.
template <typename T>
CarRegime ChooseCarStepInto(const CarModelState<T>& s, const Controls& u, const Arena& arena,
                            double dt_s, const JumpTiming& timing, WheelContact* contact,
                            JumpState* jump, JumpState* jump_after) {
  const Eigen::Vector3d x(ValueOf(s.body.x(0)), ValueOf(s.body.x(1)), ValueOf(s.body.x(2)));
  const Eigen::Vector3d up(ValueOf(s.body.theta(0, 2)), ValueOf(s.body.theta(1, 2)),
                           ValueOf(s.body.theta(2, 2)));
  *contact = FindWheelContact(arena, x, up);
  if (InJumpContact(s.jump, timing)) {
    *jump = s.jump;
    return CarRegime::kJump;  // the take-off's contact ticks
  }
  CarRegime regime = contact->hit ? CarRegime::kSurface : CarRegime::kAir;
  if (s.left_surface && contact->hit && !contact->flat_floor()) regime = CarRegime::kAir;
  if (regime == CarRegime::kSurface) {
    *jump = Landed(s.jump);  // resting on the surface, no jump used
  } else {
    *jump = s.jump;
    jump->in_contact = false;
  }
  *jump_after = *jump;
  const JumpTick tick = PlanJumpTick(jump_after, u, timing, dt_s);
  const bool jump_acts = tick.jump_impulse || tick.jump_force || tick.double_jump ||
                         tick.dodge_impulse || tick.dodge_torque;
  if (jump_acts) regime = CarRegime::kJump;
  return regime;
}

template <typename T>
CarStepChoice ChooseCarStep(const CarModelState<T>& s, const Controls& u, const Arena& arena,
                            double dt_s = 1.0 / game::kTickRateHz,
                            const JumpTiming& timing = JumpTiming()) {
  CarStepChoice choice;
  choice.regime = ChooseCarStepInto(s, u, arena, dt_s, timing, &choice.contact, &choice.jump,
                                    &choice.jump_after);
  return choice;
}

// Landing: the orientation turned by the smallest rotation that takes the car's up axis onto
// the surface normal n (the wheels settle on the surface). The velocity into the surface and
// the angular velocity off the normal are the surface steps' business (StepVehicle and
// StepSurface drop both).
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

// The car's body against the arena mesh (issue 36): the regimes' steps meet the mesh only
// through the wheels (landing, the surface steps), so without this a car flying into a wall,
// the ceiling or a goal's roof, or carried on by left_surface while its wheels touch the
// surface it left, passes through it. The body is a sphere of kCarBodyRadiusUu at the car's
// centre: the game's car origin rests kCarRestHeight (RocketSim CAR_SPAWN_REST_Z = 17) above
// the surface on its wheels, and its hitbox (RocketSim CarConfig.cpp, Octane: 120.507 x
// 86.6994 x 38.6591 uu offset 13.8757, 0, 20.755) keeps the origin farther from the mesh in
// every other attitude (40 uu on its roof, 43 on its side, 46 on its tail): the sphere never
// touches where the game's car would not, and a car on its wheels (17.01 uu up) never touches.
inline constexpr double kCarBodyRadiusUu = 17.0;
// The response of a contact: the velocity into the mesh reversed at the game's car-world
// restitution and the velocity along it reduced by Coulomb friction at the game's car-world
// friction (RocketSim RLConst.h CARWORLD_COLLISION_RESTITUTION = 0.3,
// CARWORLD_COLLISION_FRICTION = 0.3; the angular response of the box is not modelled).
inline constexpr double kCarWorldRestitution = 0.3;
inline constexpr double kCarWorldFriction = 0.3;

// True when the segment from a to b crosses triangle t (either face; Moller-Trumbore), with the
// triangle's unit face normal in *face (its winding's).
inline bool SegmentCrossesTriangle(const Eigen::Vector3d& a, const Eigen::Vector3d& b,
                                   const Triangle& t, Eigen::Vector3d* face) {
  const Eigen::Vector3d p0 = t.p[0].cast<double>();
  const Eigen::Vector3d e1 = t.p[1].cast<double>() - p0, e2 = t.p[2].cast<double>() - p0;
  *face = e1.cross(e2).normalized();
  const Eigen::Vector3d d = b - a;
  const Eigen::Vector3d p = d.cross(e2);
  const double det = e1.dot(p);
  if (std::abs(det) < 1e-12) return false;  // parallel to the triangle (or no motion)
  const Eigen::Vector3d s = a - p0;
  const double u = s.dot(p) / det;
  if (u < 0.0 || u > 1.0) return false;
  const Eigen::Vector3d q = s.cross(e1);
  const double v = d.dot(q) / det;
  if (v < 0.0 || u + v > 1.0) return false;
  const double along = e2.dot(q) / det;
  return along >= 0.0 && along <= 1.0;
}

// The body contact of one tick: `before` the centre at the tick's start (inside the arena),
// *body the tick's result. The mesh within kCarBodyRadiusUu + the tick's move of the new
// centre (Arena::CollideEach, the deepest Arena::kMaxContacts triangles) is met one triangle
// at a time: a triangle the centre's path crossed this tick (at 2300 uu/s the centre moves
// 19.2 uu a tick, more than the sphere's radius: a sphere test alone would push it out on the
// far side) puts the centre back kCarBodyRadiusUu in front of its plane, on the side it came
// from; any other within kCarBodyRadiusUu pushes the centre out along the direction from its
// closest point. Each push removes the velocity into the mesh (kCarWorldRestitution,
// kCarWorldFriction). Returns whether the body touched.
template <typename T>
bool CarBodyContact(const Arena& arena, const Eigen::Vector3d& before, CarState<T>* body) {
  Eigen::Vector3d x(ValueOf(body->x(0)), ValueOf(body->x(1)), ValueOf(body->x(2)));
  const double reach = kCarBodyRadiusUu + (x - before).norm();
  if (!(reach < Arena::kGridRadius)) return false;  // not a tick's move (or not finite)
  TriangleContact contacts[Arena::kMaxContacts];
  const int n = arena.CollideEach(x, reach, contacts);
  bool touched = false;
  for (int i = 0; i < n; ++i) {
    const TriangleContact& tc = contacts[i];
    const Triangle tri = arena.LeafTriangle(tc.entry);
    Eigen::Vector3d normal;
    double push = 0.0;
    if (SegmentCrossesTriangle(before, x, tri, &normal)) {
      const Eigen::Vector3d p0 = tri.p[0].cast<double>();
      if ((before - p0).dot(normal) < 0.0) normal = -normal;  // the side it came from
      push = kCarBodyRadiusUu - (x - p0).dot(normal);
    } else {
      const Eigen::Vector3d away = x - tc.point;
      const double d = away.norm();
      if (!(d < kCarBodyRadiusUu)) continue;
      normal = d > 1e-9 ? Eigen::Vector3d(away / d) : tc.normal;
      push = kCarBodyRadiusUu - d;
    }
    if (!(push > 0.0)) continue;
    touched = true;
    x += normal * push;
    const Vec3<T> nt = normal.cast<T>();
    body->x += nt * T(push);
    const T vn = body->v.dot(nt);
    if (ValueOf(vn) < 0.0) {
      const Vec3<T> tangent = body->v - nt * vn;
      const double speed_along = ScalarPart(tangent).norm();
      const double slow = kCarWorldFriction * (1.0 + kCarWorldRestitution) * -ValueOf(vn);
      const T keep = speed_along > slow ? T(1.0 - slow / speed_along) : T(0.0);
      body->v = tangent * keep - nt * (vn * kCarWorldRestitution);
    }
  }
  return touched;
}

// The end of every tick of StepCar: the body contact (CarBodyContact) from the tick's starting
// centre, except on the flat floor (the floor step holds the centre at rest height on the
// floor's plane, and the floor meets every wall through a curve, which is a surface tick: the
// floor tick stays as cheap as before). The game's angular speed cap (RocketSim Car.cpp clamps
// the angular velocity to CAR_MAX_ANG_SPEED = 5.5 rad/s after every tick) is each regime
// step's own last operation (StepVehicle, StepSurface, StepAerial), and the body contact does
// not touch the angular velocity.
template <typename T>
void MeetMesh(const Arena& arena, const CarState<T>& before, bool on_floor, CarState<T>* after) {
  if (on_floor) return;
  const Eigen::Vector3d x0(ValueOf(before.x(0)), ValueOf(before.x(1)), ValueOf(before.x(2)));
  CarBodyContact(arena, x0, after);
}

// One physics tick of the car: ChooseCarStep, then that regime's step.
//   kSurface: on landing (the last tick ran neither surface step) AlignToSurface(contact
//     normal); from the floor step onto another surface, the car turned with the surface;
//     then on the flat floor (contact.flat_floor()) StepVehicle (the game's four wheels, with
//     the handbrake) from the body and the car's wheels (s.wheels: those decided on the last
//     tick when it was a floor tick, else unset and decided by this tick), the floor at z =
//     rest_height; on any other surface (ramp, curve, wall, ceiling) StepSurface with the
//     ground and wall coefficients. When StepSurface reports the car leaving the surface, its
//     result is dropped and the car flies (StepAerial) this tick from the state before it,
//     then on (left_surface, see ChooseCarStep); the tick's regime is kAir.
//   kAir: on take-off (the last tick ran a surface step) the surface steps' reported rest speed
//     along the normal (rest_reported_vz, a reporting convention of the recordings, not
//     motion) is removed along the up axis; then StepAerial.
//   kJump: StepJump from the choice's jump state (its aerial part is c.air): a take-off keeps
//     the reported rest speed (the jump model's convention: 8.31 + 291.67 + one tick of 483
//     uu/s^2 = 304.0 uu/s, recorded 304.3 in jumps.txt) and is not turned (the car is on its
//     wheels already). The next tick's switch hands over: to kJump while the contact ticks
//     or the force last, to kAir after them, to kSurface (a landing) when the wheels touch.
//   Boost: held boost acts only while s.boost > 0 (BoostLimited), and the amount drains at
//     game::kBoostUsedPerSecond while it acts (BoostAfterTick), unless s.unlimited_boost.
//   The body: every tick ends in MeetMesh (the body contact with the mesh off the flat floor,
//     CarBodyContact).
//   The jump state: StepJump's on a kJump tick, the choice's jump_after otherwise. The wheels:
//     StepVehicle's on a floor tick; unset after any other tick, with the handbrake level
//     moved one tick toward the input (NextVehicleHandbrake, the game's ramp, as StepVehicle
//     moves it), so a car lands or stops holding it with the level where the game has it. The
//     handbrake's other effects (air roll in the air, powerslides on walls, curves and ramps)
//     are not modelled.
// The floor step reads neither rotate_with_new_omega (StepVehicle turns the heading by the
// tick's new yaw rate) nor any per-tick factor a caller could compute once (decision 0097).
template <typename T>
CarModelState<T> StepCar(const CarCoeffs<T>& c, const Arena& arena, const CarModelState<T>& s,
                         const Controls& held, double dt_s, bool rotate_with_new_omega) {
  const Controls u = BoostLimited(held, s.boost, s.unlimited_boost);
  CarModelState<T> next;
  // The switch (ChooseCarStep), the jump state after a surface or air tick written into next.
  WheelContact contact;
  JumpState jump;
  const CarRegime regime =
      ChooseCarStepInto(s, u, arena, dt_s, c.jump.timing, &contact, &jump, &next.jump);
  next.boost = BoostAfterTick(s.boost, u, dt_s, s.unlimited_boost);
  next.unlimited_boost = s.unlimited_boost;
  if (regime == CarRegime::kJump) {
    JumpCarState<T> js;
    js.car = s.body;
    js.jump = jump;
    const JumpCarState<T> out = StepJump(c.jump, js, u, dt_s, rotate_with_new_omega);
    next.body = out.car;
    next.jump = out.jump;
    next.regime = CarRegime::kJump;
    next.regime_ticks = s.regime == CarRegime::kJump ? s.regime_ticks + 1 : 1;
    next.wheels.handbrake = NextVehicleHandbrake(c.vehicle, s.wheels.handbrake, u.handbrake, dt_s);
    MeetMesh(arena, s.body, false, &next.body);
    return next;
  }
  const bool surface = regime == CarRegime::kSurface;
  const bool on_floor = surface && contact.flat_floor();
  // Off the floor the wheels are unset and only the level ramps (the floor tick's StepVehicle
  // returns its own wheels, the level ramped the same way).
  if (!on_floor)
    next.wheels.handbrake = NextVehicleHandbrake(c.vehicle, s.wheels.handbrake, u.handbrake, dt_s);
  // The floor tick from a floor tick (the usual one) steps s.body itself; a landing or a turn
  // onto another surface steps this copy.
  CarState<T> body;
  const CarState<T>* from = &s.body;
  if (surface) {
    // Landing: the last tick ran no surface step (a rollout's first tick did no tick).
    const bool landing = s.regime != CarRegime::kUnknown && !s.on_floor && !s.on_surface;
    if (landing || !on_floor) {
      body = s.body;
      from = &body;
    }
    if (landing) body.theta = AlignToSurface(body.theta, contact.normal);
    // From the floor step onto another surface (a ramp, the curve at a wall's foot): the car
    // turns with the surface as StepSurface turns it across a crease at the end of its tick
    // (orientation, velocity, angular velocity by the smallest rotation from its up axis to
    // the surface's normal); else StepSurface would start on a surface 45 degrees from the
    // car's wheels at a ramp's foot and let go of it. Only where the surface rises ahead (a
    // crease: the normal against the velocity along the floor); over an edge that falls away
    // (a ledge) the car is not turned and StepSurface lets go of it.
    if (s.on_floor && !on_floor) {
      const Eigen::Vector3d up0 = ScalarPart(Vec3<T>(body.theta.col(2))).normalized();
      const Eigen::Vector3d v0 = ScalarPart(body.v);
      if ((v0 - up0 * v0.dot(up0)).dot(contact.normal) <= 0.0) {
        Eigen::Vector3d phi;
        const Mat3<T> q = RotationBetween<T>(up0, contact.normal, &phi);
        body.theta = q * body.theta;
        body.v = q * body.v;
        body.omega = q * body.omega;
      }
    }
    if (on_floor) {
      StepVehicleInto(c.vehicle, *from, s.wheels, u, dt_s, &next.body, &next.wheels,
                      /*keep_reported_tilt_rate=*/false);
    } else {
      bool stays = true;
      next.body = StepSurface(c.ground, c.wall, body, u, dt_s, rotate_with_new_omega, arena,
                              &stays);
      if (!stays) {
        // Leaves: the tick is flown from the state before it, unturned (StepSurface's result
        // has already turned the car with the surface: over a ledge's edge, 26 degrees down in
        // one tick at 1000 uu/s), and the car flies on from there (left_surface).
        body = s.body;
        if (s.on_floor || s.on_surface)
          body.v -= body.theta.col(2) * T(c.ground.rest_reported_vz);
        next.body = StepAerial(c.air, body, u, dt_s, rotate_with_new_omega);
        next.left_surface = true;
      }
    }
  } else {
    body = s.body;
    if (s.on_floor || s.on_surface) body.v -= body.theta.col(2) * T(c.ground.rest_reported_vz);
    next.body = StepAerial(c.air, body, u, dt_s, rotate_with_new_omega);
    // Still touching the surface it left: keeps flying (ChooseCarStep).
    next.left_surface = s.left_surface && contact.hit;
  }
  const bool flew = next.left_surface && surface;  // the surface let go this tick
  MeetMesh(arena, s.body, on_floor, &next.body);
  next.on_floor = on_floor;
  next.on_surface = surface && !on_floor && !flew;
  next.regime = flew ? CarRegime::kAir : regime;
  next.regime_ticks = next.regime == s.regime ? s.regime_ticks + 1 : 1;
  return next;
}

}  // namespace rlfit
