// The car driving on any surface of the arena (floor, curves, walls): StepGround run in the
// frame of the surface under the wheels (found on the arena mesh), with gravity split into its
// along-surface part (which drives the car) and its into-surface part (which, with the sticky
// force, decides whether the car stays on the surface), and the car carried across the curves.
#pragma once

#include <algorithm>
#include <cmath>

#include "src/common/constants.h"
#include "src/models/arena.h"
#include "src/models/ball.h"
#include "src/models/car_state.h"
#include "src/models/ground.h"
#include "src/models/model.h"

namespace rlfit {

// Coefficients of the surface model beyond the ground model's (GroundCoeffs, which it runs
// unchanged: the wall model takes them from results/ground/coeffs.json). Flat layout (JSON
// names in brackets):
//   block surface [surface_gravity_scale (1): multiplies the along-surface part of gravity;
//                  coast_wall_grip (1): while coasting (throttle released) the tires grip a
//                  surface of normal n with the factor WallGrip(|n_z|), piecewise linear
//                  through (0, coast_wall_grip), (0.707, 0.5), (1, 1): the game's
//                  WallFrictionCurve (Wheel_Friction_Curves.txt, 0.1 at 0) and RocketSim's
//                  non-sticky friction factor; it scales the sideways friction rate, the
//                  yaw-rate response, the coasting deceleration and the braking that holds a
//                  car below stop_speed (all the tires' grip, as RocketSim scales both the
//                  lateral and the longitudinal friction), so a slow coasting car slides down
//                  a wall and off it. Measured: a car coasting across a wall (wall_driving
//                  episode 32, rows 0-48) slides sideways at 490-620 uu/s and keeps turning
//                  nose-up under gravity; with throttle back (row 54) the slide is gone within
//                  6 rows; its acceleration beyond gravity along the nose is -54 uu/s^2 on
//                  every row (world frame; the floor's coasting is 530: 0.10 of it);
//                  surface_follow_rate (1/s): the reported angular velocity of the car turning
//                  with the surface follows the surface's turn rate with this first-order rate
//                  (the closest mesh feature turns in jumps of a few degrees where the curves'
//                  facets meet; the recorded angular velocity turns smoothly);
//                  curve_friction (1): crossing a curve costs speed like a rope around a
//                  capstan whose friction grows with the curve's tightness: each tick the
//                  surface turns by an angle a under the car, the velocity along the surface
//                  loses curve_friction * (curve_reference_radius * k)^2 * a * |v . d| (d the
//                  direction in which the surface turns, so only the speed across the curve
//                  counts; k the curvature of the car's path, CurveCurvature times
//                  (|v . d| / |v|)^2), i.e. a deceleration of a friction coefficient
//                  curve_friction (r_ref / r)^2 times the centripetal acceleration v^2 / r.
//                  Measured (decision 0115): per radian, ln(speed in / speed out) beyond gravity
//                  over the 29 floor-wall crossings of wall_driving is 0.34 (150 / r)^2 (r the
//                  centre's path radius, rms 0.059; a constant leaves 0.119, one growing with
//                  the load v^2 / r 0.112: the loss follows the radius): 0.28-0.50 on the
//                  back walls' curves (r 137-161), 0.0-0.16 on the side walls' (r 246-617);
//                  episode 02 enters a back wall's curve at 1273 uu/s and leaves it at 736
//                  within 0.25 s (gravity explains ~70 uu/s)]
// Not fitted (the recordings never leave a surface, see the members below).
template <typename T>
struct SurfaceCoeffs {
  enum Index { kGravityScale, kCoastWallGrip, kFollowRate, kCurveFriction, kSize };
  T gravity_scale;
  T coast_wall_grip;
  T follow_rate;
  T curve_friction;
  double gravity_z = game::kGravityZ;  // uu/s^2
  // Sticky force (RocketSim; the game's StickyForce, parameters/car.md): an acceleration
  // sticky_base * |g| into the surface, plus (1 - |n_z|) * |g| more while the car "sticks
  // fully" (throttle held or forward speed above sticky_full_speed). In units of |g|.
  // car.md reads Ground 0.5, Wall 1.5 (= 0.5 + 1 on a vertical wall); magic_numbers.py has 1.5
  // and 0. The car leaves the surface when gravity pulls it away from the surface harder
  // than this holds it (StaysOnSurface).
  double sticky_base = 0.5;
  double sticky_full_speed = game::kCarStopSpeed;  // uu/s
  // How far from the car's centre the surface under it is searched, uu: the centre rides
  // 17.01 uu above the floor and walls and 11.7-24.7 uu above the curves (wall_driving,
  // closest mesh feature, 7,525 rows); the search must also catch the next facet of a curve.
  double surface_reach = 40.0;
  // Farthest a surface may be from the centre for the car to drive on it, uu: the largest
  // recorded distance (24.7, a car on the curve at speed) with a margin.
  double drive_reach = 30.0;
  // Smallest cosine between the car's up axis and the surface's normal for the car to be on
  // its wheels there: cos 30 degrees. The recorded up axis is at most 11 degrees from the
  // closest feature's normal on the curves of wall_driving (5.3 on walls, 9.0 on the floor,
  // landing); a car on its roof or side is not driving.
  double wheels_min_cos = 0.86602540378443865;
  // How far the wheels may lift off a surface that falls away under the car before it leaves
  // the surface, uu (HoldsOverCrest): the car's wheel contact band (kCarWheelContactUu,
  // src/models/car.h, measured against the recorded on_ground flag). The faceted curves'
  // closest feature jitters by a few degrees where facets meet (2.7 degrees "away" at 890
  // uu/s on freestyling row 1132: a 0.9 uu hop); a ledge's edge turns 26-30 degrees in the
  // first tick at 1000 uu/s (away 430-550 uu/s: ~95-160 uu).
  double hop_reach = 10.0;
  // The curve radius at which curve_friction is the friction per radian, uu: the back walls'
  // floor-to-wall curves (facets 31.4 uu wide turning 11.25 degrees: 160 uu; the side walls'
  // 50 uu wide, 256 uu; meshes/pitch.dat).
  double curve_reference_radius = 160.0;
  // The car's largest angular speed, rad/s: the game caps |omega| at the end of every tick
  // (parameters/car.md MaxAngularSpeed 5.5; RocketSim Car::_FinishPhysicsTick,
  // CAR_MAX_ANG_SPEED). On the curves the car turns with the surface at v / r (~9.8 rad/s at
  // 1400 uu/s on the back walls' 143 uu path radius) on top of its yaw: wall_driving's recorded
  // |omega| piles up at the cap (178 of 7,525 rows within 5.45-5.50, none above), and where it
  // does the yaw about the up axis is 0.3-0.6 of steer kappa v_f (1.00 on the floor and walls).
  double max_omega = game::kCarMaxOmega;

  static SurfaceCoeffs FromBlocks(const T* surface) {
    SurfaceCoeffs c;
    c.gravity_scale = surface[0];
    c.coast_wall_grip = surface[1];
    c.follow_rate = surface[2];
    c.curve_friction = surface[3];
    return c;
  }
  static SurfaceCoeffs FromArray(const T* flat) { return FromBlocks(flat + kGravityScale); }
};

inline const CoeffLayout& SurfaceLayout() {
  static const CoeffLayout layout{
      {"surface_gravity_scale", "coast_wall_grip", "surface_follow_rate", "curve_friction"},
      {"1", "1", "1/s", "1"},
      {1.0, 0.1, 30.0, 0.0},
      {{"surface", 0, 4}},
      // Bounds. Gravity along the surface is the game's gravity: within a factor of 2 either
      // way it would be another game. The coasting grip on a wall: 0 is ice, 1 the floor's
      // grip (the curve reaches 0.5 at 45 degrees). The follow rate: a time constant between
      // a tick (120 1/s; 500 is the instantaneous turn) and half a second. The curve's
      // friction only takes speed (>= 0); at 3 a quarter turn would keep e^-4.7 = 1% of it.
      {{0.5, 2.0}, {0.0, 1.0}, {2.0, 500.0}, {0.0, 3.0}},
      // The flat-floor physics it runs in the surface's frame (StepSurface's `ground`).
      {{"ground", &GroundLayout()}}};
  return layout;
}

// The surface under a car whose centre is at `x`: the closest mesh feature within `reach`
// (the ball's ClosestFeatureNormal: on the curves the recorded up axis is 3.1 degrees from it
// at the median, 4.7 from the Arena's averaged normal; on walls 0.55 vs 2.8).
struct SurfaceUnder {
  bool found = false;
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();  // unit, from the surface to the car
  double distance = 0.0;                              // from the centre to the surface, uu
};
inline SurfaceUnder FindSurface(const Arena& arena, const Eigen::Vector3d& x, double reach) {
  SurfaceUnder out;
  const Contact c = arena.Collide(x, reach);
  if (!c.hit) return out;
  out.found = true;
  out.normal = c.triangles > 1 ? ClosestFeatureNormal(arena, x, reach, c) : c.normal;
  out.distance = reach - c.penetration;
  return out;
}

// An orthonormal frame (columns e1, e2, n) whose third axis is the unit vector n; the identity
// for n = +z exactly, so that StepSurface on the flat floor is StepGround in world axes.
template <typename T>
Mat3<T> SurfaceFrame(const Eigen::Vector3d& n) {
  Mat3<T> b;
  if (n(0) == 0.0 && n(1) == 0.0 && n(2) == 1.0) {
    b.setIdentity();
    return b;
  }
  // e2 = n x (the world axis least aligned with n), e1 = e2 x n.
  Eigen::Vector3d ref = Eigen::Vector3d::UnitX();
  if (std::abs(n(1)) < std::abs(n(0)) && std::abs(n(1)) <= std::abs(n(2)))
    ref = Eigen::Vector3d::UnitY();
  else if (std::abs(n(2)) < std::abs(n(0)))
    ref = Eigen::Vector3d::UnitZ();
  const Eigen::Vector3d e2 = n.cross(ref).normalized();
  const Eigen::Vector3d e1 = e2.cross(n);
  b.col(0) = e1.cast<T>();
  b.col(1) = e2.cast<T>();
  b.col(2) = n.cast<T>();
  return b;
}

// The rotation taking unit vector a to unit vector b by the smallest angle (about a x b), and
// that rotation vector (rad) in *phi. Identity when a == b.
template <typename T>
Mat3<T> RotationBetween(const Eigen::Vector3d& a, const Eigen::Vector3d& b, Eigen::Vector3d* phi) {
  const Eigen::Vector3d axis = a.cross(b);
  const double s = axis.norm();
  const double c = a.dot(b);
  if (!(s > 0.0)) {
    phi->setZero();
    return Mat3<T>::Identity();
  }
  *phi = axis / s * std::atan2(s, c);
  return ExpSo3<double>(*phi).cast<T>();
}

// The tires' grip on a surface whose normal has |z component| nz, as a fraction of the floor's,
// while coasting (see SurfaceCoeffs::coast_wall_grip).
template <typename T>
T WallGrip(const SurfaceCoeffs<T>& c, double nz) {
  constexpr double kMidNz = 0.707, kMidGrip = 0.5;
  if (nz < kMidNz) return c.coast_wall_grip + (T(kMidGrip) - c.coast_wall_grip) * T(nz / kMidNz);
  return T(kMidGrip + (1.0 - kMidGrip) * (nz - kMidNz) / (1.0 - kMidNz));
}

// The curvature across the turn of the surface under a car whose centre is at x, 1/uu: the
// turn phi (rad, rotation vector from the previous tick's surface normal to n1) over the width,
// across the turn, of the facet now under the car (the closest triangle within reach, a
// triangle of the facet's strip spanning it): 2 sin(|phi| / 2) / w, the curvature of the circle
// whose chords are the facets. The arena's curves are strips of flat facets meeting at
// 11.25 degrees, 31.4 uu wide on the back walls' floor-to-wall curves (radius 160 uu), 50 uu on
// the side walls' (256 uu). A sharp crease between two wide faces reads as a wide curve. 0 where
// no triangle is found or phi is 0.
inline double CurveCurvature(const Arena& arena, const Eigen::Vector3d& x, double reach,
                             const Eigen::Vector3d& n1, const Eigen::Vector3d& phi) {
  const double angle = phi.norm();
  if (!(angle > 0.0)) return 0.0;
  TriangleContact contacts[Arena::kMaxContacts];
  if (arena.CollideEach(x, reach, contacts) < 1 || contacts[0].entry < 0) return 0.0;
  const Triangle t = arena.LeafTriangle(contacts[0].entry);
  const Eigen::Vector3d across = n1.cross(phi / angle);  // in the surface, across the turn
  double width = 0.0;
  for (int i = 0; i < 3; ++i)
    width = std::max(width, std::abs((t.p[i] - t.p[(i + 1) % 3]).cast<double>().dot(across)));
  return width > 0.0 ? 2.0 * std::sin(0.5 * angle) / width : 0.0;
}

// Acceleration holding the car on a surface of normal n, uu/s^2 (>= 0): the sticky force
// (see SurfaceCoeffs), with full stick while the throttle is held or the car rolls faster
// than sticky_full_speed.
template <typename T>
double StickyAccel(const SurfaceCoeffs<T>& c, const Eigen::Vector3d& n, double throttle,
                   double forward_speed) {
  const bool full = std::abs(throttle) > 0.0 || std::abs(forward_speed) > c.sticky_full_speed;
  const double scale = c.sticky_base + (full ? 1.0 - std::abs(n(2)) : 0.0);
  return scale * std::abs(c.gravity_z);
}

// True when the car stays on a surface of normal n: gravity's pull away from it (g.n, > 0 on
// an overhang or the ceiling) is at most the sticky acceleration. On the walls and curves of
// wall_driving gravity pulls away by at most 26 uu/s^2 (n_z >= -0.04) against 975: the
// recordings never leave a surface, so this is RocketSim's rule, not a measurement.
template <typename T>
bool StaysOnSurface(const SurfaceCoeffs<T>& c, const Eigen::Vector3d& n, double throttle,
                    double forward_speed) {
  return c.gravity_z * n(2) <= StickyAccel(c, n, throttle, forward_speed);
}

// True when a car keeps its wheels on a surface of normal n that falls away under it (a
// convex turn, see StepSurface) at `away_speed` (uu/s: the speed across the turn times the
// sine of this tick's turn, the speed at which the car, flown on, leaves the surface): the
// sticky force and gravity's part into the surface (hold = StickyAccel - g.n) bring it back
// within away_speed^2 / (2 hold), which must stay within hop_reach.
template <typename T>
bool HoldsOverCrest(const SurfaceCoeffs<T>& c, const Eigen::Vector3d& n, double throttle,
                    double forward_speed, double away_speed) {
  const double hold = StickyAccel(c, n, throttle, forward_speed) - c.gravity_z * n(2);
  return away_speed * away_speed <= 2.0 * hold * c.hop_reach;
}

// Whether a car with centre x and up axis `up` is on a surface it can drive: the mesh within
// drive_reach of the centre and the up axis within acos(wheels_min_cos) of the surface's
// normal. What a regime switch asks of a state (the step answers it for its own result).
template <typename T>
bool IsOnSurface(const SurfaceCoeffs<T>& c, const Arena& arena, const Eigen::Vector3d& x,
                 const Eigen::Vector3d& up) {
  const SurfaceUnder under = FindSurface(arena, x, c.surface_reach);
  return under.found && under.distance <= c.drive_reach &&
         up.dot(under.normal) >= c.wheels_min_cos;
}

// One physics step of dt_s seconds on the surface under the car (arena mesh), inputs u.
//   1. the surface under the centre: closest feature within surface_reach, normal n0, distance
//      d0 (FindSurface); none found: the car is not on a surface, *on_surface = false and the
//      state is returned unchanged (the caller hands it to StepAerial);
//   2. StepGround in the surface's frame B = (e1, e2, n0) (SurfaceFrame), centred on the point
//      under the car: heading about n0, forward/sideways speeds with the along-surface part of
//      gravity_scale * g added (StepGround's plane_accel), sideways friction rate, yaw-rate
//      response and coasting deceleration times WallGrip while coasting, centre at
//      rest_height above the plane and the reported normal speed rest_reported_vz (as recorded
//      on walls too: median v.n 8.29 uu/s over 3,716 wall rows, 8.28 on the floor). On the
//      floor (n0 = +z) B is the identity: this is StepGround itself;
//   3. the car follows the surface: at the new centre the surface has normal n1 and distance
//      d1; the centre moves along n1 to rest_height above it, and the orientation and velocity
//      turn with the surface by the smallest rotation Q taking n0 to n1 (so the car keeps its
//      attitude and speed relative to the surface across a curve); the angular velocity about
//      the axes in the surface, w_perp (the recorded one includes the turn with the surface),
//      relaxes toward Q's rotation vector / dt by the factor exp(-follow_rate dt); the
//      velocity along the surface loses curve_friction (curve_reference_radius k)^2 |phi|
//      |v . d| along itself, d the direction from n0 to n1, k the path's curvature
//      CurveCurvature (|v . d| / |v|)^2 (see SurfaceCoeffs::curve_friction);
//   4. |omega| is capped at max_omega after the tick, as the game does (the next tick's yaw
//      starts from the capped rate; see SurfaceCoeffs::max_omega).
// *on_surface (if given) is false when no surface lies within drive_reach of the new centre,
// the car's up axis is more than acos(wheels_min_cos) from its normal, the car does not stay
// on it (StaysOnSurface), or the surface falls away under it faster than the car's hold can
// keep the wheels on it (HoldsOverCrest): the caller then hands the state to StepAerial. The
// surface falls away (convex) where the normal turns toward the car's motion over the tick,
// (n1 - n0) . (x1 - x0) > 0, as over a ledge's edge; the car, flown on, would leave it at
// |v . d| sin|phi|. On a concave curve (floor to wall, wall to ceiling) the surface pushes
// the car round and this does not apply. Without it the car follows a sharp edge's
// closest-feature normal (the direction from the edge to the centre) round the edge and under
// the surface: the up-axis test never fires, since the car turns with that normal every tick
// and keeps the tilt it met the edge with (below 30 degrees unless the last floor tick left
// the centre more than 9.8 uu past the edge). The hop is per tick: a car slower than ~530
// uu/s turns less than that per tick round a sharp edge and still follows it.
template <typename T>
CarState<T> StepSurface(const GroundCoeffs<T>& g, const SurfaceCoeffs<T>& c, const CarState<T>& s,
                        const Controls& u, double dt_s, bool rotate_with_new_omega,
                        const Arena& arena, bool* on_surface = nullptr) {
  using std::abs;
  using std::exp;
  using std::sqrt;
  const SurfaceUnder under = FindSurface(arena, ScalarPart(s.x), c.surface_reach);
  if (!under.found) {
    if (on_surface) *on_surface = false;
    return s;
  }
  const Eigen::Vector3d& n0 = under.normal;
  const Mat3<T> b = SurfaceFrame<T>(n0);
  const Vec3<T> origin = s.x - b.col(2) * T(under.distance);  // point under the centre

  CarState<T> local;
  local.x = b.transpose() * (s.x - origin);
  local.v = b.transpose() * s.v;
  local.omega = b.transpose() * s.omega;
  local.theta = b.transpose() * s.theta;
  Vec3<T> gravity_local = b.row(2).transpose() * (T(c.gravity_z) * c.gravity_scale);
  GroundCoeffs<T> gs = g;
  if (std::abs(u.throttle) < g.throttle_deadzone && std::abs(n0(2)) < 1.0) {
    const T grip = WallGrip(c, std::abs(n0(2)));
    gs.lateral_friction_rate = g.lateral_friction_rate * grip;
    gs.yaw_rate_response = g.yaw_rate_response * grip;
    gs.brake_accel = g.brake_accel * grip;  // what holds a coasting car below stop_speed
    gs.coast_accel = g.coast_accel * grip;  // the coasting brake (RocketSim: longFriction)
  }
  const CarState<T> stepped =
      StepGround(gs, local, u, dt_s, rotate_with_new_omega, gravity_local);

  CarState<T> next;
  next.x = origin + b * stepped.x;
  next.v = b * stepped.v;
  next.omega = b * stepped.omega;
  next.theta = b * stepped.theta;

  const SurfaceUnder after = FindSurface(arena, ScalarPart(next.x), c.surface_reach);
  bool stays = after.found && after.distance <= c.drive_reach;
  if (after.found) {
    const Eigen::Vector3d& n1 = after.normal;
    const Eigen::Vector3d moved = ScalarPart(next.x) - ScalarPart(s.x);
    next.x += n1.cast<T>() * T(g.rest_height - after.distance);
    Eigen::Vector3d phi;
    const Mat3<T> q = RotationBetween<T>(n0, n1, &phi);
    double away_speed = 0.0;  // off a surface that falls away, flown on, uu/s
    if (!phi.isZero(0.0)) {
      next.theta = q * next.theta;
      next.v = q * next.v;
      next.omega = q * next.omega;
      // Friction of the curve: the speed across it pays curve_friction (r_ref k)^2 per radian.
      const Vec3<T> n1t = n1.cast<T>();
      const Vec3<T> along = next.v - n1t * next.v.dot(n1t);
      const T speed2 = along.squaredNorm();
      if (speed2 > T(0)) {
        const Eigen::Vector3d d = (n1 - n0).normalized();
        const T across = abs(along.dot(d.cast<T>()));
        if (moved.dot(d) > 0.0) away_speed = ScalarPart(across) * std::sin(phi.norm());
        // The path's curvature: the surface's across the turn times cos^2 of the angle
        // between the velocity and the turn's direction (a cylinder's normal curvature).
        const T tightness = T(c.curve_reference_radius *
                              CurveCurvature(arena, ScalarPart(next.x), c.surface_reach, n1, phi)) *
                            across * across / speed2;
        const T loss =
            c.curve_friction * tightness * tightness * T(phi.norm()) * across / sqrt(speed2);
        next.v -= along * (loss < T(1) ? loss : T(1));
      }
    }
    // The turn with the surface: none on the floor's plane (nothing turns, nothing reported).
    const Vec3<T> w_perp = s.omega - b.col(2) * s.omega.dot(b.col(2));
    if (!phi.isZero(0.0) || !IsExactlyZero(w_perp)) {
      const Vec3<T> target = (phi / dt_s).cast<T>();
      next.omega += target + (w_perp - target) * exp(-c.follow_rate * T(dt_s));
    }
    // The cap on the angular speed, after the tick as in the game: the tick turned the car at
    // its uncapped rate, the next one starts from the capped yaw (so the yaw builds up again
    // through yaw_rate_response each tick and settles below steer kappa v_f while the surface
    // turns fast).
    next.omega = ClampNorm<T>(next.omega, c.max_omega);
    const double v_forward = ScalarPart(next.v).dot(ScalarPart(Vec3<T>(next.theta.col(0))));
    stays = stays && StaysOnSurface(c, n1, u.throttle, v_forward) &&
            HoldsOverCrest(c, n1, u.throttle, v_forward, away_speed) &&
            ScalarPart(Vec3<T>(next.theta.col(2))).dot(n1) >= c.wheels_min_cos;
  }
  if (on_surface) *on_surface = stays;
  return next;
}

}  // namespace rlfit
