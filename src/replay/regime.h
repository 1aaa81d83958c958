// Which recorded rows a model covers. Every model states its regime (aerial: airborne and not
// touching a surface; ground: all wheels on the flat floor; ball: no car touch); replay and
// fit score only covered rows and say how many they left out and why.
//
// Labels are per row and describe the recorded *state* at that row: row k is covered when its
// state lies in the model's regime. A step k -> k+1 (one row of prediction) is scored only
// when rows k and k+1 are both covered; an open-loop prediction restarts from the recorded
// state where coverage resumes (CoveredStretches). The one label that is about a step, a car
// touching the ball between rows k and k+1, is written on both rows k and k+1.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/io/episode.h"
#include "src/models/arena.h"
#include "src/models/ball.h"
#include "src/models/jump.h"
#include "src/replay/episode_steps.h"

namespace rlfit {

// Why a row is or is not covered. kCovered first; the others are reasons to leave a row out.
enum class Regime : std::uint8_t {
  kCovered = 0,
  kOnGround,          // wheels on a surface (aerial model)
  kTouchingSurface,   // body near the arena mesh (aerial model)
  kAirborne,          // no wheel contact (ground model)
  kOffFlatFloor,      // on a wall, curve or ramp (ground model)
  kHandbrake,         // handbrake held: powerslide (ground, wall models), off the floor (car)
  kCarTouch,          // velocity change no surface explains (ball model)
  kNoTakeOff,         // in the air, but no recorded take-off starts this flight (jump model)
  kOutsideArena,      // centre outside the arena mesh's bounding box (any model on the mesh)
};
inline constexpr int kRegimeCount = 9;

// Short label for tables and JSON, e.g. "on the ground".
const char* RegimeLabel(Regime regime);

// Per row of `ep`: kCovered where model `model` ("aerial", "ground", "ball") covers it, else
// why not. `data_root` locates the arena mesh for the surface tests (PitchArena; the ball's
// BallArena); when it is empty (no datasets on this machine) the aerial surface test uses the
// floor plane z = 0 alone, the ball model throws InputError (it needs the mesh anyway).
// InputError for another model name, or for a ball model on a car episode and the other way
// round.
//
// aerial: kOnGround when the recorded on_ground flag is set; else kTouchingSurface when the
//   car's centre lies within kCarSurfaceReachUu of the mesh (some part of the car may touch
//   it, whatever its orientation); else kCovered. Jump input and jumped flags do not matter.
// ground: kAirborne when on_ground is not set; kOffFlatFloor when the centre is more than
//   kGroundHeightBandUu from the rest height 17.01 uu or the up axis (theta column 2) tilts
//   more than acos(kGroundUprightMinCos) from vertical; kHandbrake when the handbrake input
//   is held (not recorded in ground_driving_handbrake, where it is always 0); else kCovered.
// jump: kCovered on the rows of every JumpSegments stretch (take-off to the last row before
//   on_ground is set again) until the landing: once the car's centre has been more than
//   kJumpLandingReachUu from the mesh, the rows from where it comes back within it are
//   kTouchingSurface; elsewhere kOnGround when on_ground is set, else kNoTakeOff. Without a
//   datasets root the floor plane stands for the mesh, as for the aerial model.
// wall: kAirborne when on_ground is not set or no mesh lies within kWallDriveReachUu of the
//   centre (the surface model has nothing to drive on); kHandbrake when the handbrake is held
//   (powerslides are modelled apart); else kCovered: floor, curves, ramps, walls alike. A jump
//   pressed on the ground is not left out (none in wall_driving); the car leaves the surface
//   on the next rows, which the on_ground flag then leaves out.
// car: the switch of the car model (ChooseCarStep, src/models/car.h) on the recorded state,
//   then what the sub-models cover: kHandbrake when the handbrake is held at row k or k-1
//   (the input of row k-1 still acts for input_delay_s, ~1 row, into step k -> k+1) and the
//   row is not on the flat floor as below (the floor's powerslide is the car's StepVehicle;
//   a powerslide on a wall, curve or ramp and air roll in the air are not modelled); on a
//   surface: covered when the surface
//   under the wheels is the flat floor (WheelContact::flat_floor) and the car lies on it as the
//   ground model's rows do or settles on it after a landing (z from rest - kCarFloorSettleUu
//   to rest + kGroundHeightBandUu, up axis within kCarFloorSettleTiltDeg of vertical), or it is
//   another surface (wall, curve, ramp) and the car is on its wheels there as the surface step
//   requires (IsOnSurface), or the car is taking off with jump held (the jump step: a surface
//   row that passes these tests with jump held at k or k-1 starts a take-off, and the
//   following rows with jump held still on the surface continue it); else kOffFlatFloor;
//   in the air: kTouchingSurface when the centre is within kCarSurfaceReachUu of the mesh
//   (the aerial model's rule) unless the car is taking off (rows after a take-off, until
//   the centre is first beyond that reach); else kCovered. Jump rows are covered (the car's
//   jump step). The recorded on_ground flag is not read: it checks the switch
//   (CompareOnGround).
// ball: kCarTouch on rows k and k+1 of every UnexplainedImpulseRows step (default ball
//   coefficients, kBallMinImpulseUuS, kBallSurfaceMarginUu); else kCovered.
// Every model but ground and powerslide (whose floor is a plane), against the arena mesh of
// `data_root`: kOutsideArena on a row whose centre lies outside the box of the mesh's vertices
// (beyond a side or back wall, above the ceiling, below the floor): no recording has one, and
// the models' contacts would be missing or wrong there (a corrupt recording or a different
// arena). Not applied for a given arena (tests' hand-made floors) or the floor-only stand-in.
std::vector<Regime> ClassifyRows(const std::string& model, const Episode& ep,
                                 const std::string& data_root);
// Same against a given arena mesh (tests use a hand-made one).
std::vector<Regime> ClassifyRows(const std::string& model, const Episode& ep, const Arena& arena);

// Thresholds of the classification, with what they are and where their values come from.

// Octane hitbox (datasets parameters/hitboxes.txt): centre offset from the car's centre and
// half extents along forward, left, up, uu.
inline constexpr double kOctaneHitboxOffsetUu[3] = {13.97565993, 0.0, 20.75498772};
inline constexpr double kOctaneHitboxHalfUu[3] = {59.00368881, 42.09970474, 18.07953644};
// Reach of the car from its centre, uu: the farthest hitbox corner,
// |offset| + |half| per axis = |(72.98, 42.10, 38.83)| = 92.77, rounded up. The wheels reach
// less (rear wheel at (-33.75, +-29.5, -4.3) with radius 15: 60 uu, magic_numbers.py). A car
// whose centre is farther than this from the mesh touches it nowhere, whatever its orientation.
// Measured: every row of car_control/aerial (3612) and freefalling (1906) has its centre at
// least 106 uu from the mesh (175 uu in aerial), so none is left out there; the airborne rows
// it leaves out in the .txt recordings are the first rows after a jump, the last before a
// landing and a car lying on its roof (freefall_damping.txt, 80 rows at 40-93 uu, flag off).
inline constexpr double kCarSurfaceReachUu = 92.8;
// Farthest the arena mesh may be from the centre of a car driving on it, uu: the centre
// rides 17.01 uu above floor and walls and 11.7-24.7 above the curves (wall_driving, 7,525
// on_ground rows, distance to the closest mesh feature), 30 with a margin (SurfaceCoeffs::
// drive_reach, src/models/surface.h).
inline constexpr double kWallDriveReachUu = 30.0;
// Largest |z - 17.01| of a car on the flat floor, uu. Measured on the on_ground rows of
// ground_driving_no_handbrake (65,716): 65,692 within 0.05 uu, 65,704 within 0.35, 65,710
// within 1.0; the 6 beyond are landings in driving.txt (the flag comes on at z = 30 while the
// car still falls at 130 uu/s). Landing rows settle at z 16.1-16.6 (suspension; kept). In
// wall_driving the car climbing the curve leaves the band (4,693 of its 7,525 on_ground rows
// are beyond 1 uu, 4,484 beyond 10 uu).
inline constexpr double kGroundHeightBandUu = 1.0;
// Smallest up-axis z component of a car on the flat floor: cos(1 degree). Measured: every
// on_ground row of ground_driving_no_handbrake (65,716) and ground_driving_handbrake (9,030)
// tilts 0.72 degrees or less (the recorded rest attitude: 0.716 degrees on nearly all of them);
// in wall_driving 4,692 of 7,525 on_ground rows tilt more than 1 degree.
inline constexpr double kGroundUprightMinCos = 0.99984769515639127;
// The car on the flat floor after a landing: how far below the rest height (uu) and how far
// from vertical (degrees) its centre and up axis may be while it settles on the suspension.
// Measured on the 16 rows of freestyling.txt the switch puts on the flat floor that the ground
// model's 1 uu / 1 degree left out (as "on a wall, curve or ramp"): rows 403-405, 1143-1147 and
// 1694-1701, after landings from a jump and from the corner curves: the centre 0.58-1.74 uu
// below 17.01 (z 15.27-16.43), rising back at ~20 uu/s, the up axis up to 1.43 degrees from
// vertical, and 2.93 degrees on row 1694 (the first flat-floor row after coming down a corner
// curve). The car's floor step puts the car at the rest height and keeps its tilt: the error on
// those rows is those 0.6-1.7 uu in z (and the tilt of a rollout started there).
inline constexpr double kCarFloorSettleUu = 2.0;
inline constexpr double kCarFloorSettleTiltDeg = 3.0;
// A free-flight row step changes v by gravity and drag (removed here) plus the recorded
// quantisation; a car hit by hundreds of uu/s, uu/s. Measured on ball_trajectories, the 85,574
// steps with the ball more than kBallSurfaceMarginUu clear of the mesh: median 0.009 uu/s,
// p99.9 0.016, largest 1.88 (episode 343's skipped row): there is no car touch in that folder.
inline constexpr double kBallMinImpulseUuS = 50.0;
// A velocity jump with the ball centre within contact radius + this of the mesh (at row k or
// k+1) is taken as a bounce, uu. Measured: the 3,092 steps of ball_trajectories that change
// v by more than 50 uu/s all have the ball within 8.9 uu of its contact radius at one of the
// two rows (median -0.14: a fast ball is recorded a row before or after the contact).
inline constexpr double kBallSurfaceMarginUu = 40.0;

// Ball: velocity change of row k -> k+1 beyond gravity and drag under `c`, uu/s.
double BallVelocityJump(const Episode& ep, const BallCoeffs<double>& c, int k);

// Ball: steps k -> k+1 of `ep` whose recorded velocity change is not explained by the model:
// the change differs from free flight by more than `min_impulse_uu_s` while the recorded ball
// is more than `surface_margin_uu` away from the mesh (beyond c.contact_radius) at both rows
// (a car hit, not a bounce). Returns the ks, ascending.
std::vector<int> UnexplainedImpulseRows(const Episode& ep, const Arena& arena,
                                        const BallCoeffs<double>& c, double min_impulse_uu_s,
                                        double surface_margin_uu);

// Ball: what the ball was doing around recorded row `row` of `ep`, for the worst-episode
// lists: the surface it touched on the rows row - kBallSituationRowsBefore .. row + 1 (the
// deepest contact within contact radius + kBallSituationReachUu: a ball at 2000 uu/s moves
// 33 uu a row and is recorded up to a row before or after its contact), as
// "<motion> <surface>[ at a seam]":
//   motion  "bounce" (recorded speed into the surface >= the restitution threshold) or
//           "roll" (slower: rolling or sliding);
//   surface "goal" (centre beyond the goal line |y| > kGoalLineY), "floor", "ceiling"
//           (normal within 2.6 degrees of vertical), "wall" (within 2.6 degrees of
//           horizontal: the flat side and back walls), else "corner curve" (|x| and |y| both
//           beyond the straight parts), "side ramp" (|x| beyond), "back-wall ramp" (|y|
//           beyond), "curve";
//   seam    the closest feature's normal and the Arena's penetration-weighted average over
//           the touching triangles differ by more than kBallSeamDeg: the ball sits where two
//           mesh patches meet at an angle (where the model bounces off the plain average of
//           the manifold's adjusted normals, ManifoldContactNormal).
// "free flight" when no row touches anything.
std::string BallSituation(const Episode& ep, int row, const Arena& arena,
                          const BallCoeffs<double>& c);
inline constexpr int kBallSituationRowsBefore = 3;
inline constexpr double kBallSituationReachUu = 20.0;
inline constexpr double kBallSeamDeg = 1.0;
inline constexpr double kGoalLineY = 5120.0;  // uu: the back walls' plane (pitch.dat)
// Straight parts of the side walls (|y| below) and back walls (|x| below), uu: the curves and
// ramps of pitch.dat start beyond them (floor ramps rise from |x| ~ 3000, corners ~ 2900 /
// 4000 from the centre lines).
inline constexpr double kStraightSideY = 3900.0;
inline constexpr double kStraightBackX = 2900.0;

// The recorded on_ground flag against a regime decision, per row: decision[k] is 1 where the
// decision puts row k's state on a surface, 0 in the air, -1 where there is no decision (a row
// no prediction reaches); rows with -1 are not counted.
struct OnGroundAgreement {
  int rows = 0;               // rows with a decision
  int agree = 0;              // decision == on_ground
  int surface_not_flagged = 0;  // decision on a surface, flag off
  int flagged_in_air = 0;       // decision in the air, flag on
  double Percent() const { return rows > 0 ? 100.0 * agree / rows : 0.0; }
  OnGroundAgreement& operator+=(const OnGroundAgreement& o);
};
OnGroundAgreement CompareOnGround(const Episode& ep, const std::vector<signed char>& decision);

// Jump: the take-off is the row whose step to the next changes the velocity along the
// car's up axis by more than this, with on_ground set and jump pressed on that row or one of the
// two before, uu/s. Measured: the jump impulse steps of jumps.txt and freestyling.txt change it
// by 296 uu/s (5 jumps); other on_ground steps of those files and data.txt by at most ~60
// (landings are not take-offs: they start in the air).
inline constexpr double kJumpTakeOffMinDvUuS = 150.0;
// Jump: the wheels' reach from the car's centre, uu (rear wheel at (-33.75, +-29.5, -4.3), radius
// 15: 60 uu, magic_numbers.py). The recordings touch down before their on_ground flag: in
// freestyling.txt the first jump's car is at z 35 -> 21 for 4 rows with the flag off while its
// velocity changes by 156-560 uu/s; in jumps.txt the landing's first row (z 34) already
// changes vz by 0.9 uu/s less than gravity.
inline constexpr double kJumpLandingReachUu = 60.0;

// Jump: the recorded jumps of `ep`, [take-off row, last row before the wheels touch again]
// (inclusive; to the episode's last row when it ends in the air). A take-off whose car never
// leaves on_ground within the episode is not a jump. Ascending, disjoint.
std::vector<std::pair<int, int>> JumpSegments(const Episode& ep);

// Car: the jump state a rollout of the car model starts from at recorded row `row`: inside a
// recorded jump (JumpSegments: take-off to landing), the state since its take-off
// (JumpStateAt, as the jump model starts); elsewhere the row alone (JumpStateOfRow).
JumpState CarJumpStateAt(const Episode& ep, int row, const Integration& integ,
                         const JumpTiming& timing);

// Car: the state a rollout of the car model starts from at recorded row `row` (replay's
// CarPredictor, the Python Car from its one-row episode, the car fit's windows): the recorded
// car and the recording's unlimited boost (CarRecordedState), the jump state of CarJumpStateAt
// and the handbrake level ramped over the recorded input (VehicleStartState's; the wheels unset).
CarModelState<double> CarStartState(const Episode& ep, int row, const Integration& integ,
                                    const JumpTiming& timing);
// The same with the level read from `levels`, VehicleHandbrakeLevels(ep, integ, nullptr) worked
// out once per episode (the replay's restarts, the fit's windows): the same state, bit for bit.
CarModelState<double> CarStartState(const Episode& ep, int row, const Integration& integ,
                                    const JumpTiming& timing, const std::vector<double>& levels);

// Maximal runs [first, last] (inclusive row indices) of covered rows with at least two rows.
std::vector<std::pair<int, int>> CoveredStretches(const std::vector<Regime>& rows);

// Number of rows per Regime value (index static_cast<int>(regime)).
std::vector<int> CountRegimes(const std::vector<Regime>& rows);

}  // namespace rlfit
