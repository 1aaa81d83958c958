// The ball (notes 003/004): gravity, drag, and the bounce impulse of note 003 against the arena's
// collision mesh (normal part with restitution, tangential part against the slip velocity, spin
// update), |v| <= 6000 and |omega| <= 6; rolling, also up the curved walls, comes from the same
// contact applied every physics tick.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <Eigen/Geometry>

#include "src/common/constants.h"
#include "src/common/error.h"
#include "src/common/inline.h"
#include "src/models/arena.h"
#include "src/models/car_state.h"
#include "src/models/model.h"

namespace rlfit {

template <typename T>
struct BallState {
  Vec3<T> x;      // centre, uu
  Vec3<T> v;      // velocity, uu/s
  Vec3<T> omega;  // angular velocity (world frame), rad/s
};

// The value part of a scalar: itself for double, the `a` member of a ceres::Jet (found by
// overload resolution, so this header needs no Ceres).
inline double ScalarPart(double x) { return x; }
template <typename J>
double ScalarPart(const J& x) {
  return ScalarPart(x.a);
}
template <typename T>
Eigen::Vector3d ScalarPart(const Vec3<T>& v) {
  return Eigen::Vector3d(ScalarPart(v(0)), ScalarPart(v(1)), ScalarPart(v(2)));
}

// Coefficients of the ball model. Flat layout (JSON names in brackets):
//   block bounce   [restitution, mu, Y]  dimensionless: C_R, friction gain mu, slip limit Y
//   block spin     [spin_factor]         m R^2 / I, dimensionless (2.5 for a solid sphere)
//   block drag     [drag]                1/s: v *= exp(drag dt) every tick
//   block geometry [contact_radius,      uu: sphere radius against the collision mesh
//                   recovery]            1: fraction of the penetration beyond the slop removed per tick
template <typename T>
struct BallCoeffs {
  enum Index { kRestitution, kMu, kY, kSpinFactor, kDrag, kContactRadius, kRecovery, kSize };
  T restitution;
  T mu;
  T y;
  T spin_factor;
  T drag;
  T contact_radius;
  T recovery;
  double max_speed = game::kBallMaxSpeed;  // uu/s (game cap, not fitted)
  double max_omega = game::kBallMaxOmega;  // rad/s (game cap, not fitted)
  double gravity_z = game::kGravityZ;      // uu/s^2 (not fitted)
  // The game rounds each velocity component to a multiple of this every tick, uu/s (not
  // fitted; measured, see game::kBallVelocityQuantum). 0 switches the rounding off.
  double velocity_quantum = game::kBallVelocityQuantum;
  // Impacts slower than this along the normal do not bounce (restitution 0), uu/s (not fitted:
  // a threshold has no useful derivative; measured, see game::kBallRestitutionThreshold).
  double restitution_threshold = game::kBallRestitutionThreshold;
  // Depth the push-out leaves in place, uu (not fitted; measured, see
  // game::kBallPenetrationSlop): recovery acts on max(0, depth - penetration_slop).
  double penetration_slop = game::kBallPenetrationSlop;
  // Lever arm from the centre to the contact point, uu (not fitted): the ball's own radius.
  // The recorded rolling rows have v = 91.25 (n x omega) to 4 digits, although the ball rests
  // at 93.14 (the mesh's collision margin is not part of the ball).
  double roll_radius = game::kBallRadius;

  // From the blocks in layout order: bounce[3], spin[1], drag[1], geometry[2].
  static BallCoeffs FromBlocks(const T* bounce, const T* spin, const T* drag, const T* geometry) {
    BallCoeffs c;
    c.restitution = bounce[0];
    c.mu = bounce[1];
    c.y = bounce[2];
    c.spin_factor = spin[0];
    c.drag = drag[0];
    c.contact_radius = geometry[0];
    c.recovery = geometry[1];
    return c;
  }
  static BallCoeffs FromArray(const T* flat) {
    return FromBlocks(flat + kRestitution, flat + kSpinFactor, flat + kDrag, flat + kContactRadius);
  }
};

inline const CoeffLayout& BallLayout() {
  static const CoeffLayout layout{
      {"restitution", "mu", "Y", "spin_factor", "drag", "contact_radius", "recovery"},
      {"1", "1", "1", "1", "1/s", "uu", "1"},
      {game::kBallRestitution, game::kBallFrictionMu, game::kBallFrictionY,
       game::kBallSpinFactor, game::kBallDrag, game::kBallContactRadius,
       game::kBallPenetrationRecovery},
      {{"bounce", 0, 3}, {"spin", 3, 1}, {"drag", 4, 1}, {"geometry", 5, 2}},
      // Bounds.
      {{0.0, 1.0},  // restitution: a bounce neither reverses into the surface nor gains energy
       // mu: a gain on the slip velocity; above 1 one contact would more than remove the slip
       // of the centre (with the spin update mu (1 + spin_factor) = 1 stops the contact point:
       // 0.285 at 2.5). >= 0: friction opposes the slip.
       {0.0, 1.0},
       // Y: friction is at most Y mu / (1 + C_R) times the normal impulse; >= 0, and 10 allows
       // a Coulomb coefficient near 2, beyond any surface (measured 0.35).
       {0.0, 10.0},
       // spin_factor = m R^2 / I: 1.5 for a hollow shell (all mass at the surface: no sphere's
       // is lower), 2.5 solid; 10 is a ball with most of its mass in a small core.
       {1.5, 10.0},
       // drag: air slows the ball (<= 0); -1 1/s would halve its speed in 0.7 s (measured
       // -0.0305).
       {-1.0, 0.0},
       // contact_radius: the ball's radius is 91.25 uu and it rests at 93.15 uu; 80-100 uu.
       {80.0, 100.0},
       {0.0, 1.0}}};  // recovery: a fraction of the penetration removed per tick
  return layout;
}

// The contact normal of the mesh feature closest to `center`: minus the gradient of the
// penetration, which the Arena reports as the largest over the touching triangles, by central
// differences over 0.01 uu. On a faceted curved wall this is the normal of the facet (or edge)
// under the ball, where the Arena's penetration-weighted average of every touching facet leans
// toward the neighbours. Measured on 366 bounces off the ramps and curves of
// ball_trajectories (restart 2 rows before, compare 5 rows after): median velocity error
// 10.2 -> 6.3 uu/s, tangential 3.6 -> 1.5 uu/s, spin 0.033 -> 0.017 rad/s. Falls back to the
// Arena's normal where the gradient is degenerate (between two equally deep contacts).
// `arena` is the Arena or a view answering Collide as it does (bit for bit), e.g. the fit's
// per-tick triangle lists (fit/ball_fit.h).
template <class Mesh = Arena>
Eigen::Vector3d ClosestFeatureNormal(const Mesh& arena, const Eigen::Vector3d& center,
                                     double radius, const Contact& contact) {
  constexpr double kStepUu = 0.01;
  constexpr double kPadUu = 1.0;  // keeps every probe in contact
  constexpr int kMaxNearEntries = 256;
  // Minus the central difference of the penetration along each axis, with `depth(probe
  // centre)`: the descent direction computed as such, so a component whose probes agree is +0
  // (the floor's normal is exactly (0, 0, 1), as Arena::FloorHeight's; the negated gradient
  // had -0 there).
  auto gradient_of = [&](const auto& depth) {
    Eigen::Vector3d descent;
    for (int i = 0; i < 3; ++i) {
      Eigen::Vector3d step = Eigen::Vector3d::Zero();
      step(i) = kStepUu;
      descent(i) = (depth(center - step) - depth(center + step)) / (2.0 * kStepUu);
    }
    return descent;
  };
  Eigen::Vector3d gradient;
  bool probed = false;
  if constexpr (std::is_same_v<Mesh, Arena>) {
    // The six probes lie within kStepUu of the centre: one gathering of the triangles near it
    // (Arena::GatherNear, which guarantees Collide's answer bit for bit for every sphere within
    // its reach) and six tests of those few, instead of six grid lists. Twice the slack covers
    // the rounding of center +- step. The entries in a buffer on the stack; where more are near
    // than it holds, the six Collide calls (the same depths bit for bit: GatherNear's contract).
    std::uint32_t near[kMaxNearEntries];
    const int n = arena.GatherNear(center, radius + kPadUu + kStepUu + 2.0 * Arena::kNearSlackUu,
                                   near, kMaxNearEntries);
    if (n >= 0) {
      const std::uint32_t* begin = near;
      const std::uint32_t* end = near + n;
      gradient = gradient_of([&](const Eigen::Vector3d& probe) {
        return arena.PenetrationEntries(probe, radius + kPadUu, begin, end);
      });
      probed = true;
    }
  }
  if (!probed)
    gradient = gradient_of([&](const Eigen::Vector3d& probe) {
      return arena.Collide(probe, radius + kPadUu).penetration;
    });
  // |gradient| is 1 for a single closest feature, less where two meet.
  return gradient.norm() > 0.5 ? Eigen::Vector3d(gradient.normalized()) : contact.normal;
}

// The ball's contact normal where several facets touch it at once, as the game's engine
// (Bullet) resolves a sphere against a triangle mesh: every touching triangle is a contact of
// the manifold (Arena::CollideEach: its own closest point, direction and penetration; at most
// Arena::kMaxContacts, the deepest), each contact's normal adjusted for internal edges
// (Arena::InternalEdgeNormal: near an edge shared with a coplanar or concave neighbour the face
// normal, near a convex one at most the neighbour's), and the ball bounces off the plain
// average of those normals, n = normalize(sum_i n_i), every contact weighted alike, with the
// deepest contact's penetration as depth. Returns false (the caller takes the closest feature,
// ClosestFeatureNormal) where the manifold holds one contact: one triangle, or several meeting at
// the contact point within Arena::kMergeUu. Then *normal and *penetration are untouched.
// `contact` is Collide's answer at (center, radius): a manifold of several contacts needs several
// touching triangles (CollideEach tests the same triangles as Collide, with the same test), so
// where Collide counts one (most floor and flat-wall ticks) the manifold is not built.
// `always_build` builds it anyway (the same answer: for tests).
// Measured (decision 0046; kept with 0053): at the 1,192 isolated recorded bounces
// the averaged adjusted normal changes 121, better in 85 (median velocity error three rows later
// 42.6 -> 20.1 uu/s); the closest feature's single contact cannot show it (at a concave crease the
// deepest contact is already a face contact); with the tick clock and the ceiling it wins five
// of six guarded crossval figures over nine protocols. Weighted alike, not by penetration
// (rampt30): 40 fast side- and corner-ramp bounces fitted on the tick clock bounce by bounce
// bounce off normals whose weights come out as counts (1/2, 1/3, 2/3); equal weights reproduce
// them to 0.4 uu/s median (p90 65.6) against 11.8 (92.0) by penetration. The 4 deepest, not
// every touching triangle: better per bounce there, worse held out (NOTES cap31).
// `arena` is the Arena or a view answering Collide, CollideEach and InternalEdgeNormal as it does.
template <class Mesh = Arena>
bool ManifoldContactNormal(const Mesh& arena, const Eigen::Vector3d& center, double radius,
                           const Contact& contact, Eigen::Vector3d* normal, double* penetration,
                           bool always_build = false) {
  if (contact.triangles <= 1 && !always_build) return false;
  TriangleContact contacts[Arena::kMaxContacts];
  const int count = arena.CollideEach(center, radius, contacts);
  if (count <= 1) return false;
  Eigen::Vector3d sum = Eigen::Vector3d::Zero();
  for (int i = 0; i < count; ++i)
    sum += arena.InternalEdgeNormal(contacts[i], center);
  // Contacts that only just touch (or cancel): the deepest contact's adjusted normal.
  constexpr double kCancelledNorm = 1e-9;
  *normal = sum.norm() > kCancelledNorm ? Eigen::Vector3d(sum.normalized())
                                        : arena.InternalEdgeNormal(contacts[0], center);
  *penetration = contacts[0].penetration;
  return true;
}

// The normal a ball touching the mesh at `center` (search radius `radius`: the contact
// radius) bounces off, and the depth it uses (*penetration, set from `contact`,
// Collide's answer there): the manifold's averaged adjusted normal where it holds several
// contacts (ManifoldContactNormal), else the closest feature's (ClosestFeatureNormal) where
// several triangles meet at one point, else the one triangle's. StepBallContact's step 2; also
// asked alone by the Python module's Model.ball_contact (the same code).
template <class Mesh = Arena>
Eigen::Vector3d BallContactNormal(const Mesh& arena, const Eigen::Vector3d& center, double radius,
                                  const Contact& contact, double* penetration) {
  Eigen::Vector3d n0;
  *penetration = contact.penetration;
  if (!ManifoldContactNormal(arena, center, radius, contact, &n0, penetration))
    n0 = contact.triangles > 1 ? ClosestFeatureNormal(arena, center, radius, contact)
                               : contact.normal;
  return n0;
}

// StepBall's free flight (every tick but those near the mesh) is a few dozen instructions, so
// it is inlined into the caller's loop (RLFIT_ALWAYS_INLINE) and the contact code kept out of
// line (RLFIT_NOINLINE).

// Steps 3 and 4 of StepBall: the caps and the new position.
template <typename T>
RLFIT_ALWAYS_INLINE BallState<T> FinishBallStep(const BallCoeffs<T>& c, const BallState<T>& s,
                                                const T& dt, const Vec3<T>& v, const Vec3<T>& omega,
                                                const Vec3<T>& push) {
  BallState<T> next;
  next.v = ClampNorm<T>(v, c.max_speed);
  next.omega = ClampNorm<T>(omega, c.max_omega);
  next.x = s.x + next.v * dt + push;
  return next;
}

// StepBall from step 2 on, where the ball may touch the mesh: v is the velocity after step 1,
// x0 and r0 the scalar parts of the centre and contact radius. `arena` is the Arena or a view
// whose Collide answers as the Arena's does, bit for bit (the fit's per-tick triangle lists,
// fit/ball_fit.h). `touched`, if given, is set when the mesh lies within the contact radius
// (the only ticks that read restitution, mu, Y, spin_factor and recovery). `known`, if
// given, is the contact already found (the floor's, Arena::FloorHeight, or Collide's, asked by
// the caller): it is used instead of Collide's (and its normal as the feature's where it
// counts one triangle); where it counts one triangle and Collide would count several, the
// caller must know that the manifold's answer is this contact's (the floor's, see StepBall
// with a BallClearance).
template <typename T, class Mesh = Arena>
RLFIT_NOINLINE BallState<T> StepBallContact(const BallCoeffs<T>& c, const BallState<T>& s,
                                            const T& dt, const Mesh& arena,
                                            const Eigen::Vector3d& x0, double r0, Vec3<T> v,
                                            bool* touched = nullptr,
                                            const Contact* known = nullptr) {
  using std::sqrt;
  Vec3<T> omega = s.omega;
  Vec3<T> push = Vec3<T>::Zero();
  const Contact contact = known != nullptr ? *known : arena.Collide(x0, r0);
  if (contact.hit) {
    if (touched != nullptr) *touched = true;
    double penetration = contact.penetration;
    const Eigen::Vector3d n0 = BallContactNormal(arena, x0, r0, contact, &penetration);
    const Vec3<T> n = n0.cast<T>();
    // Depth of the sphere in the mesh (>= 0 at the query's centre and radius), linearised.
    const T depth = T(penetration) + (c.contact_radius - T(r0)) - n.dot(s.x - x0.cast<T>());
    const T vn = v.dot(n);
    if (vn < T(0.0)) {
      const bool slow = -vn < T(c.restitution_threshold);
      const T restitution = slow ? T(0.0) : c.restitution;
      // The rebound is C_R times the normal speed before this tick's gravity and drag (s.v),
      // as Bullet's solver takes restitution from the velocity it had before integrating the
      // forces: gravity's impulse of the tick is absorbed by the contact. Measured (NOTES,
      // tail28): from v1 every ceiling bounce came out 3-6 uu/s too slow downward.
      const T vn0 = s.v.dot(n);
      T vn_target = vn0 < T(0.0) ? -restitution * vn0 : T(0.0);
      if (vn_target > vn) {
        const T dvn = vn_target - vn;
        const Vec3<T> slip = v - vn * n + T(c.roll_radius) * n.cross(omega);
        Vec3<T> dv_par = Vec3<T>::Zero();
        const T slip2 = slip.squaredNorm();
        if (slip2 > T(1e-12)) {
          const T slip_norm = sqrt(slip2);
          const T limit = c.y * dvn / (T(1.0) + c.restitution);  // Y |v_perp|, see above
          const T scale = limit < slip_norm ? limit / slip_norm : T(1.0);
          dv_par = -scale * c.mu * slip;
        }
        v += dvn * n + dv_par;
        omega += (c.spin_factor / T(c.roll_radius)) * dv_par.cross(n);
      }
    }
    if (depth > T(c.penetration_slop)) push = c.recovery * (depth - T(c.penetration_slop)) * n;
  }
  return FinishBallStep(c, s, dt, v, omega, push);
}

// StepBallContactScalars' response to a contact of normal (n0, n1, n2) and penetration
// `penetration` (hit), or to none (!hit: the caps and the position alone): every operation of
// StepBallContact's template, on the same values in the same order (Eigen sums a 3-vector's dot
// product and squared norm as (a0 b0 + a1 b1) + a2 b2, its cross product term by term;
// fast_paths_test.cc holds them to the template bit for bit), without Eigen's temporaries.
// Inline, so that a caller knowing the normal (the floor's (0, 0, 1): BallLookupTick) has the
// compiler fold what is exact to fold (x * 1.0, x - 0.0), the same values without the call.
RLFIT_ALWAYS_INLINE BallState<double> BallContactResponse(const BallCoeffs<double>& c,
                                                          const BallState<double>& s, double dt,
                                                          const Vec3<double>& v_in, bool hit,
                                                          double penetration, double n0,
                                                          double n1, double n2) {
  const double r0 = c.contact_radius;
  double v0 = v_in(0), v1 = v_in(1), v2 = v_in(2);
  double w0 = s.omega(0), w1 = s.omega(1), w2 = s.omega(2);
  double p0 = 0.0, p1 = 0.0, p2 = 0.0;  // the push
  if (hit) {
    // depth = p + (R - r0) - n . (x - x0), with x0 = x: the template's terms as they are.
    const double d0 = s.x(0) - s.x(0), d1 = s.x(1) - s.x(1), d2 = s.x(2) - s.x(2);
    const double depth =
        (penetration + (c.contact_radius - r0)) - ((n0 * d0 + n1 * d1) + n2 * d2);
    const double vn = (v0 * n0 + v1 * n1) + v2 * n2;
    if (vn < 0.0) {
      const bool slow = -vn < c.restitution_threshold;
      const double restitution = slow ? 0.0 : c.restitution;
      const double vn0 = (s.v(0) * n0 + s.v(1) * n1) + s.v(2) * n2;
      const double vn_target = vn0 < 0.0 ? -restitution * vn0 : 0.0;
      if (vn_target > vn) {
        const double dvn = vn_target - vn;
        const double rr = c.roll_radius;
        // slip = v - vn n + R (n x omega)
        const double s0 = (v0 - vn * n0) + rr * (n1 * w2 - n2 * w1);
        const double s1 = (v1 - vn * n1) + rr * (n2 * w0 - n0 * w2);
        const double s2 = (v2 - vn * n2) + rr * (n0 * w1 - n1 * w0);
        double q0 = 0.0, q1 = 0.0, q2 = 0.0;  // dv_par
        const double slip2 = (s0 * s0 + s1 * s1) + s2 * s2;
        if (slip2 > 1e-12) {
          const double slip_norm = std::sqrt(slip2);
          const double limit = c.y * dvn / (1.0 + c.restitution);
          const double scale = limit < slip_norm ? limit / slip_norm : 1.0;
          const double k = -scale * c.mu;
          q0 = k * s0;
          q1 = k * s1;
          q2 = k * s2;
        }
        v0 += dvn * n0 + q0;
        v1 += dvn * n1 + q1;
        v2 += dvn * n2 + q2;
        const double spin = c.spin_factor / rr;
        w0 += spin * (q1 * n2 - q2 * n1);
        w1 += spin * (q2 * n0 - q0 * n2);
        w2 += spin * (q0 * n1 - q1 * n0);
      }
    }
    if (depth > c.penetration_slop) {
      const double k = c.recovery * (depth - c.penetration_slop);
      p0 = k * n0;
      p1 = k * n1;
      p2 = k * n2;
    }
  }
  // FinishBallStep: the caps (ClampNorm), then x + v dt + push.
  BallState<double> next;
  const double vv = (v0 * v0 + v1 * v1) + v2 * v2;
  if (vv > c.max_speed * c.max_speed) {
    const double k = c.max_speed / std::sqrt(vv);
    v0 *= k;
    v1 *= k;
    v2 *= k;
  }
  const double ww = (w0 * w0 + w1 * w1) + w2 * w2;
  if (ww > c.max_omega * c.max_omega) {
    const double k = c.max_omega / std::sqrt(ww);
    w0 *= k;
    w1 *= k;
    w2 *= k;
  }
  next.v = Vec3<double>(v0, v1, v2);
  next.omega = Vec3<double>(w0, w1, w2);
  next.x = Vec3<double>((s.x(0) + v0 * dt) + p0, (s.x(1) + v1 * dt) + p1, (s.x(2) + v2 * dt) + p2);
  return next;
}

// StepBallContact for double (the double paths' contact ticks: StepBall for double and with a
// BallClearance, PredictBall), spelled out in scalars (BallContactResponse): a floor contact
// tick 300 -> ~170 instructions (issue 38). The template stays the reference (StepBall<T>, the
// fits' Jets).
template <class Mesh = Arena>
RLFIT_NOINLINE BallState<double> StepBallContactScalars(
    const BallCoeffs<double>& c, const BallState<double>& s, double dt, const Mesh& arena,
    const Vec3<double>& v_in, bool* touched, const Contact* known) {
  const double r0 = c.contact_radius;
  const Contact contact = known != nullptr ? *known : arena.Collide(s.x, r0);
  if (!contact.hit) return BallContactResponse(c, s, dt, v_in, false, 0.0, 0.0, 0.0, 0.0);
  if (touched != nullptr) *touched = true;
  double penetration = contact.penetration;
  // One triangle (most floor and flat-wall ticks): BallContactNormal's answer is the
  // contact's own normal and depth (ManifoldContactNormal answers false, the feature is the
  // triangle), here without its call: a floor contact tick ~50 instructions fewer (the
  // spills around the call, its frame).
  const Eigen::Vector3d n = contact.triangles <= 1
                                ? contact.normal
                                : BallContactNormal(arena, s.x, r0, contact, &penetration);
  return BallContactResponse(c, s, dt, v_in, true, penetration, n(0), n(1), n(2));
}

// One physics step of dt_s seconds, in the order of the game's engine (Bullet):
//  1. forces: v1 = v exp(drag dt) + g dt: the drag damps the velocity the tick starts with,
//     not gravity's change of the tick. Measured (NOTES, issue 12, phase32): over 5,560
//     recorded free-flight spans of exactly 120 ticks (61 clock rows) the recorded vz is
//     0.0015 uu/s off this order (median; p10 -0.014, p90 +0.011), against -0.164 (p10 -0.176,
//     p90 -0.152) off (v + g dt) exp(drag dt): a drift of 0.16 uu/s per second that left the
//     open loop 0.5 uu high (median; p90 1.05) at its first contact;
//  2. contact of the sphere (contact_radius R) at the current centre with the mesh, only where
//     the centre starts the tick within R of it: no speculative contact across a gap (measured
//     per floor bounce, NOTES "What the game does at a flat contact", push30: of 747 bounces
//     the 164 whose first tick within 0.3 uu of R lay in such a gap all bounced one tick later,
//     at the first tick below R, and every bounce so placed comes out at 0.600 |vz|, p10-p90
//     0.597-0.601; the model had a margin of 0.3 uu before). Where the contact manifold holds
//     several contacts, normal n the plain average of their internal-edge-adjusted normals and
//     depth p the deepest's (ManifoldContactNormal); else normal n of the closest feature
//     (ClosestFeatureNormal), depth p. If v1.n < 0, the normal velocity becomes
//     b = C_R max(0, -(v.n)), the rebound from the velocity v before step 1 (Bullet's
//     restitution: gravity's impulse of the tick absorbed by the contact), if that is larger
//     than v1.n; the game bounces at C_R |v.n| exactly (push30). With dvn the change of normal speed, note 003's
//     tangential impulse, against the slip velocity at the contact point:
//       s = v1 - (v1.n) n + R (n x omega),
//       dv_par = -min(1, Y |v_perp| / |s|) mu s,  |v_perp| = dvn / (1 + C_R) (= |v1.n| for a
//                                                  full bounce, as in the note),
//     with the coefficient C_R also where the contact does not bounce (under the restitution
//     threshold, e.g. rolling): friction is then at most Y mu / (1 + C_R) = 0.35 times the
//     normal impulse, Coulomb friction. Measured on the 350 recorded rows of a ball sliding on
//     the floor (slip 20-800 uu/s): 227.5 uu/s^2 = 0.350 g in every slip bin; with the
//     thresholded C_R (0) the model slid to a stop at 370 uu/s^2.
//       v2 = v1 + dvn n + dv_par,   omega2 = omega + (spin_factor / R) (dv_par x n);
//  3. caps |v2| <= max_speed, |omega2| <= max_omega;
//  4. x2 = x + v2 dt + f max(p - s, 0) n: a fraction f (recovery) of the penetration beyond the
//     slop s (penetration_slop, 1.9 uu) is removed by moving the ball out along the normal, not
//     by adding velocity (Bullet's split impulse; measured per floor bounce: f 0.797, s 1.900).
// Autodiff: the mesh query runs in double on the scalar part of the centre and radius. n is
// constant in the derivative (exact on a flat face; near a seam or on a curved wall the true
// normal turns with the position); p is re-linearised as p0 + (R - R0) - n.(x - x0), exact to
// first order for a face contact, so the contact radius is seen through the resting height.
// x rounded to the nearest multiple of q, as the game's tick rounds the ball's velocity: the
// reference definition, round(x / q) q with libm's round (halves away from zero; q > 0, else x
// as it is). RoundToQuantum below gives the same double bit for bit (a property test over random
// values, ties, huge values: tests/fast_paths_test.cc) without libm's call, which cost 45k of the
// 6 s prediction's 181k instructions (issue 38).
inline double RoundToQuantumReference(double x, double q) {
  return q > 0.0 ? std::round(x / q) * q : x;
}

#if defined(__SSE2__)
// The SSE2 rounding's constants as 16-byte vectors in memory (each lane the same), read by
// _mm_load_pd: GCC then takes them as memory operands, where _mm_set1_pd had it build each one
// from a scalar (a load and an unpack) on every tick of a chain's loop.
struct alignas(16) RoundSse2Constants {
  double two52[2];  // 2^52
  double half[2];
  double one[2];
  double sign[2];   // -0.0: the sign bit
  double below_half[2];  // 0.5 - 2^-54, the largest double below a half
};
alignas(16) inline const RoundSse2Constants kRoundSse2Constants = {
    {0x1p52, 0x1p52}, {0.5, 0.5}, {1.0, 1.0}, {-0.0, -0.0},
    {0.49999999999999994, 0.49999999999999994}};
// The table through a pointer the compiler cannot see through (an empty asm), so that it reads
// the lanes from memory (memory operands) instead of folding them into constants it builds
// again in registers on every tick (a load and an unpack each).
inline const RoundSse2Constants& RoundSse2() {
  const RoundSse2Constants* k = &kRoundSse2Constants;
#if defined(__GNUC__)
  asm("" : "+r"(k));
#endif
  return *k;
}
inline __m128d RoundSse2Load(const double (&lanes)[2]) { return _mm_load_pd(lanes); }
// std::round of both lanes (halves away from zero, the sign kept: round(-0.3) is -0), in
// SSE2's arithmetic: |y| + 2^52 - 2^52 is |y| rounded to the nearest integer, halves to even
// (every double in [2^52, 2^53) is an integer, so the sum rounds there; exact below 2^52); a
// half rounded down to an even integer (|y| - r == 0.5) goes up by one; |y| >= 2^52 (already an
// integer) and infinity stay as they are, a NaN stays a NaN; then y's sign. First its part
// below 2^52 on ay = |y|, shared with RoundHalfAwaySmallSse2:
inline __m128d RoundHalfAwayAbsSse2(__m128d ay) {
  const RoundSse2Constants& k = RoundSse2();
  const __m128d two52 = RoundSse2Load(k.two52);
  const __m128d r = _mm_sub_pd(_mm_add_pd(ay, two52), two52);
  return _mm_add_pd(r, _mm_and_pd(_mm_cmpeq_pd(_mm_sub_pd(ay, r), RoundSse2Load(k.half)),
                                  RoundSse2Load(k.one)));
}
inline __m128d RoundHalfAwaySse2(__m128d y) {
  const RoundSse2Constants& k = RoundSse2();
  const __m128d sign = _mm_and_pd(y, RoundSse2Load(k.sign));
  const __m128d ay = _mm_xor_pd(y, sign);
  const __m128d keep = _mm_cmpge_pd(ay, RoundSse2Load(k.two52));
  return _mm_or_pd(
      _mm_or_pd(_mm_and_pd(keep, ay), _mm_andnot_pd(keep, RoundHalfAwayAbsSse2(ay))), sign);
}
// RoundHalfAwaySse2 for lanes with |y| <= 2^31 - 1 (not NaN): the same values in five
// operations (a chain's skipped ticks, BallClearance::small_quotients). y + (0.5 - 2^-54)
// with y's sign, truncated toward zero (cvttpd2dq, exact to magnitudes below 2^31), is y
// rounded half away from zero: for y = n + f >= 0 (n an integer, 0 <= f < 1), f >= 1/2 makes
// the sum at least n + 1 - 2^-54, which rounds to n + 1 (n = 0: 1 - 2^-54 is a tie, to even:
// 1); f < 1/2 leaves it below the double next below n + 1 (f is at most 1/2 less y's spacing;
// n = 0: at most 1 - 2^-53), so it truncates to n. Then y's sign on the integer (round(-0.3)
// is -0). Tested against RoundHalfAwaySse2 (ties, their neighbours, zeros, up to 2^31 - 1;
// from 2^31 - 1/2 on the integer is 2^31, beyond cvttpd2dq).
inline __m128d RoundHalfAwaySmallSse2(__m128d y) {
  const RoundSse2Constants& k = RoundSse2();
  const __m128d sign = _mm_and_pd(y, RoundSse2Load(k.sign));
  const __m128d t = _mm_add_pd(y, _mm_or_pd(RoundSse2Load(k.below_half), sign));
  return _mm_or_pd(_mm_cvtepi32_pd(_mm_cvttpd_epi32(t)), sign);
}
// RoundHalfAwaySmallSse2 of the lanes of a and b where every one of them rounds to an integer
// below 2^31 in magnitude: true, *ra and *rb set; false, nothing set, where one does not (or is
// NaN), which cvttpd2dq answers with INT_MIN (a lane truncating to -2^31 itself also answers
// false: the caller then rounds by RoundHalfAwaySse2, the same values). Tested against
// RoundHalfAwaySse2 on both sides of 2^31.
inline bool RoundHalfAwayBothSmallSse2(__m128d a, __m128d b, __m128d* ra, __m128d* rb) {
  const RoundSse2Constants& k = RoundSse2();
  const __m128d sign_bit = RoundSse2Load(k.sign);
  const __m128d below_half = RoundSse2Load(k.below_half);
  const __m128d sa = _mm_and_pd(a, sign_bit);
  const __m128d sb = _mm_and_pd(b, sign_bit);
  const __m128i ia = _mm_cvttpd_epi32(_mm_add_pd(a, _mm_or_pd(below_half, sa)));
  const __m128i ib = _mm_cvttpd_epi32(_mm_add_pd(b, _mm_or_pd(below_half, sb)));
  const __m128i indefinite = _mm_set1_epi32(std::numeric_limits<std::int32_t>::min());
  if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_unpacklo_epi64(ia, ib), indefinite)) != 0)
    return false;
  *ra = _mm_or_pd(_mm_cvtepi32_pd(ia), sa);
  *rb = _mm_or_pd(_mm_cvtepi32_pd(ib), sb);
  return true;
}
// RoundToQuantumReference for both lanes of x: the same quotient x / q, rounded as std::round
// (kSmallQuotients: by RoundHalfAwaySmallSse2, for quotients known to be below 2^31).
template <bool kSmallQuotients = false>
inline __m128d RoundToQuantumSse2(__m128d x, __m128d q) {
  const __m128d y = _mm_div_pd(x, q);
  return _mm_mul_pd(kSmallQuotients ? RoundHalfAwaySmallSse2(y) : RoundHalfAwaySse2(y), q);
}
#endif

// x rounded to the nearest multiple of q (q > 0; q = 0 leaves x as it is): the reference
// (RoundToQuantumReference) bit for bit. A ceres::Jet keeps its derivatives: only its value
// moves, by less than q / 2 (a rounding has no useful slope).
inline double RoundToQuantum(double x, double q) {
#if defined(__SSE2__)
  if (!(q > 0.0)) return x;
  return _mm_cvtsd_f64(RoundToQuantumSse2(_mm_set_sd(x), _mm_set1_pd(q)));
#else
  return RoundToQuantumReference(x, q);
#endif
}
template <typename J>
J RoundToQuantum(const J& x, double q) {
  if (!(q > 0.0)) return x;
  const double a = ScalarPart(x);
  return x + J(RoundToQuantum(a, q) - a);
}

// Step 1 of StepBall, the tick's forces, for every path of a ball tick (the template, the double
// paths, the skipped ticks and the free runs): the drag factor e = exp(drag dt) damps the
// velocity the tick starts with, then gravity's change g_dt is added (the order above), and each
// component is rounded to a multiple of q (BallCoeffs::velocity_quantum). The game rounds at the
// end of its tick, after the position update and any contact; here the rounding comes before
// both, which moves a tick's position by under q dt / 2 (4e-5 uu) and a contact's outgoing
// velocity by under q / 2 until the next tick rounds it again.
template <typename T>
RLFIT_ALWAYS_INLINE Vec3<T> BallForcedVelocity(const Vec3<T>& v, const T& e, const T& g_dt,
                                               double q) {
  return Vec3<T>(RoundToQuantum(v(0) * e, q), RoundToQuantum(v(1) * e, q),
                 RoundToQuantum(v(2) * e + g_dt, q));
}
#if defined(__SSE2__)
// For double and q > 0, the same values with x and y rounded side by side, the quotients by
// RoundHalfAwaySmallSse2 where all three lie below 2^31 (kSmallQuotients: known to, see
// BallClearance::small_quotients; else checked, RoundHalfAwayBothSmallSse2), else by
// RoundHalfAwaySse2.
template <bool kSmallQuotients = false>
RLFIT_ALWAYS_INLINE Vec3<double> BallForcedVelocitySse2(const Vec3<double>& v, double e,
                                                        double g_dt, double q) {
  const __m128d qq = _mm_set1_pd(q);
  const __m128d ee = _mm_set1_pd(e);
  const __m128d yxy = _mm_div_pd(_mm_mul_pd(_mm_loadu_pd(v.data()), ee), qq);
  const __m128d yz = _mm_div_pd(_mm_set_sd(v(2) * e + g_dt), qq);
  __m128d rxy, rz;
  if constexpr (kSmallQuotients) {
    rxy = RoundHalfAwaySmallSse2(yxy);
    rz = RoundHalfAwaySmallSse2(yz);
  } else if (!RoundHalfAwayBothSmallSse2(yxy, yz, &rxy, &rz)) {
    rxy = RoundHalfAwaySse2(yxy);
    rz = RoundHalfAwaySse2(yz);
  }
  Vec3<double> out;
  _mm_storeu_pd(out.data(), _mm_mul_pd(rxy, qq));
  out(2) = _mm_cvtsd_f64(_mm_mul_pd(rz, qq));
  return out;
}
#endif
// For double, the same values with x and y rounded side by side (SSE2).
RLFIT_ALWAYS_INLINE Vec3<double> BallForcedVelocity(const Vec3<double>& v, double e, double g_dt,
                                                    double q) {
#if defined(__SSE2__)
  if (q > 0.0) return BallForcedVelocitySse2(v, e, g_dt, q);
#endif
  return BallForcedVelocity<double>(v, e, g_dt, q);
}

// The drag factor of a tick of dt_s seconds, exp(drag dt) (a ceres::Jet's exp for the fits).
// A caller stepping many ticks with one c and dt_s computes it once and passes it to StepBall
// (drag_factor); the overloads without it compute it every tick. Either way the same values.
template <typename T>
T BallDragFactor(const BallCoeffs<T>& c, double dt_s) {
  using std::exp;
  return exp(T(c.drag * T(dt_s)));
}

template <typename T>
RLFIT_ALWAYS_INLINE BallState<T> StepBall(const BallCoeffs<T>& c, const BallState<T>& s,
                                          double dt_s, const Arena& arena, const T& drag_factor) {
  const T dt(dt_s);
  const Vec3<T> v =
      BallForcedVelocity<T>(s.v, drag_factor, T(c.gravity_z) * dt, c.velocity_quantum);
  const Eigen::Vector3d x0 = ScalarPart(s.x);
  const double r0 = ScalarPart(c.contact_radius);
  // Where the grid shows no triangle near the centre's cell, Collide would report no hit: free
  // flight, without the contact code.
  if (!arena.GridSaysFree(x0, r0))
    return StepBallContact(c, s, dt, arena, x0, r0, v);
  return FinishBallStep<T>(c, s, dt, v, s.omega, Vec3<T>::Zero());
}
template <typename T>
RLFIT_ALWAYS_INLINE BallState<T> StepBall(const BallCoeffs<T>& c, const BallState<T>& s,
                                          double dt_s, const Arena& arena) {
  return StepBall<T>(c, s, dt_s, arena, BallDragFactor(c, dt_s));
}

// StepBall's free flight for double from the velocity after step 1 (v0, v1, v2): the caps and
// the new position, spelled out in scalars (GCC keeps Eigen's small-vector calls out of line in
// a long loop), the same operations in the same order as FinishBallStep with no push, so the
// same values bit for bit. omega_passed: s.omega is known to pass the cap's test unchanged
// (the tick before left it as its cap's test found it, BallClearance::omega_settled), so the
// test is not taken again: the same omega.
RLFIT_ALWAYS_INLINE BallState<double> BallFreeFlight(const BallCoeffs<double>& c,
                                                     const BallState<double>& s, double dt_s,
                                                     double v0, double v1, double v2,
                                                     bool omega_passed = false) {
  BallState<double> next;
  // ClampNorm (Eigen's squaredNorm: the first two squares summed first).
  const double vv = (v0 * v0 + v1 * v1) + v2 * v2;
  if (vv > c.max_speed * c.max_speed) {
    const double v_scale = c.max_speed / std::sqrt(vv);
    next.v = Vec3<double>(v0 * v_scale, v1 * v_scale, v2 * v_scale);
  } else {
    next.v = Vec3<double>(v0, v1, v2);
  }
  const Vec3<double>& w = s.omega;
  if (omega_passed) {
    next.omega = w;
  } else {
    const double ww = (w(0) * w(0) + w(1) * w(1)) + w(2) * w(2);
    if (ww > c.max_omega * c.max_omega) {
      const double w_scale = c.max_omega / std::sqrt(ww);
      next.omega = Vec3<double>(w(0) * w_scale, w(1) * w_scale, w(2) * w_scale);
    } else {
      next.omega = w;
    }
  }
  // + 0.0: the template adds its zero push, which turns a position of -0 into +0.
  for (int i = 0; i < 3; ++i) next.x(i) = (s.x(i) + next.v(i) * dt_s) + 0.0;
  return next;
}

// StepBall for double: the template's free flight through BallFreeFlight, so the same values
// bit for bit (tested against StepBall<double>, which names the template); contacts go to the
// template's StepBallContact.
RLFIT_ALWAYS_INLINE BallState<double> StepBall(const BallCoeffs<double>& c,
                                               const BallState<double>& s, double dt_s,
                                               const Arena& arena, double drag_factor) {
  const Vec3<double> v =
      BallForcedVelocity(s.v, drag_factor, c.gravity_z * dt_s, c.velocity_quantum);
  if (!arena.GridSaysFree(s.x, c.contact_radius))
    return StepBallContactScalars(c, s, dt_s, arena, v, nullptr, nullptr);
  return BallFreeFlight(c, s, dt_s, v(0), v(1), v(2));
}
RLFIT_ALWAYS_INLINE BallState<double> StepBall(const BallCoeffs<double>& c,
                                               const BallState<double>& s, double dt_s,
                                               const Arena& arena) {
  return StepBall(c, s, dt_s, arena, BallDragFactor(c, dt_s));
}

// What a chain of StepBall calls (a prediction) may carry from tick to tick: the number of
// coming ticks in which the ball can neither reach the mesh nor the speed cap, so their arena
// lookups and speed checks can be skipped. The integration is unchanged, so the states are
// StepBall's bit for bit (a tick without a hit gives the same state through either path).
// Use one per chain with fixed coefficients; start it at {} and reset it to {} whenever the
// state is set from outside the chain.
struct BallClearance {
  int ticks = 0;  // coming ticks without a lookup
  // The step of the last lookup tick: the one the ticks were counted for and drag_factor
  // belongs to (another dt_s looks up again and takes its factor; NaN at {}: the first does).
  double dt_s = std::numeric_limits<double>::quiet_NaN();
  double drag_factor = 1.0;    // BallDragFactor(c, dt_s)
  // q > 0 and (max_speed + |gravity_z dt_s|) / q < 2^30 (q = velocity_quantum): the quotients
  // v / q of the skipped ticks (below the speed cap, counted) stay far below 2^31, where
  // RoundHalfAwaySmallSse2 rounds them as RoundHalfAwaySse2 does (600,054 at the defaults).
  bool small_quotients = false;
  bool omega_settled = false;  // the last tick was free flight and did not cap omega
  // small_quotients and omega_settled at the lookup tick that counted the ticks (BallFreeStep):
  // the skipped ticks' one test for their fast path (BallSettledSmallTick).
  bool settled_small = false;
  // Where small_quotients: the skipped ticks' operands, each pair as 16 bytes that SSE2 reads
  // as a memory operand (BallSettledSmallTick), set with dt_s: {e, e} (e = drag_factor), {q, q}
  // (velocity_quantum), {dt_s, dt_s} and gravity's change of a tick, gravity_z dt_s.
  alignas(16) double e2[2] = {1.0, 1.0};
  alignas(16) double q2[2] = {0.0, 0.0};
  alignas(16) double dt2[2] = {0.0, 0.0};
  double g_dt = 0.0;
  // Set (never cleared by the steps) when a tick of the chain found the mesh within the contact
  // radius + margin: until then the chain has read none of restitution, mu, Y, spin_factor and
  // recovery (the fit's derivative starts their perturbed rollouts there, fit/ball_fit.h).
  bool touched = false;
};

// Ticks after the current one in which a ball in free flight from speed |v| (speed2_uu2_s2 =
// |v|^2) can neither move farther than free_uu nor reach the speed cap: the largest n with
// dt (n |v| + dv n (n + 1) / 2) <= free_uu and |v| + (n + 1) dv <= max_speed, as |v| grows by
// at most dv = |g| dt + velocity_quantum a tick (drag <= 0 only slows the ball; the rounding
// moves each component by under half the quantum). 0 when drag > 0 (or NaN) or
// the ball could go that far within one tick (checked first, without a square root: near the
// mesh that is most lookups). At most kMaxTicks.
inline int BallFreeTicks(const BallCoeffs<double>& c, double speed2_uu2_s2, double dt_s,
                         double free_uu) {
  constexpr int kMaxTicks = 1 << 16;
  // Rounding of the chained position and speed updates is below 1e-9 uu (uu/s) per tick at
  // these magnitudes; 0.01 uu and a relative 1e-9 on the speeds cover it many times over.
  constexpr double kSlackUu = 0.01;
  constexpr double kSpeedFactor = 1.0 + 1e-9;
  const double f = free_uu - kSlackUu;
  // Largest speed gain in a tick: gravity's, and the velocity's rounding (under q / 2 a
  // component, so under q for the vector).
  const double dv = std::abs(c.gravity_z) * dt_s + c.velocity_quantum;
  const double a = 0.5 * dv * dt_s;
  // n >= 1 needs dt |v| + 2 a <= f.
  const double one_tick = f - 2.0 * a;
  if (!(c.drag <= 0.0) || !(dt_s > 0.0) || !(one_tick > 0.0) ||
      speed2_uu2_s2 * (dt_s * dt_s) * (kSpeedFactor * kSpeedFactor) > one_tick * one_tick)
    return 0;
  const double speed = std::sqrt(speed2_uu2_s2) * kSpeedFactor;
  const double b = dt_s * speed + a;
  double n = a > 0.0 ? (std::sqrt(b * b + 4.0 * a * f) - b) / (2.0 * a) : f / b;
  const double speed_room = c.max_speed / kSpeedFactor - speed;
  const double n_speed = dv > 0.0 ? speed_room / dv - 1.0 : (speed_room >= 0.0 ? n : -1.0);
  n = std::min(n, n_speed);
  if (!(n >= 0.0)) return 0;  // also NaN from an infinite speed (b = inf)
  if (n > kMaxTicks) n = kMaxTicks;
  int ticks = static_cast<int>(n);
  if (ticks > 0 && a * ticks * ticks + b * ticks > f) --ticks;  // rounding of the root
  return ticks;
}

// Ticks after the current one in which a ball in free flight over the flat floor, floor_uu
// above the contact along z (its centre's height less the contact radius), can reach neither
// the floor's plane, nor another triangle (others_uu away, less the contact radius:
// Arena::FloorHeight's bound), nor the speed cap: the least of BallFreeTicks(others_uu), which
// also keeps the speed cap, and the largest n with dt (n w + dv_z n (n + 1) / 2) <= floor_uu, w
// = -vz the speed toward the floor (negative rising). vz falls by at most dv_z = |g| dt + q +
// max(vz, 0) (1 - e) a tick (e the drag factor: drag pulls a falling ball's vz up, a rising one's
// down by at most (1 - e) of its start, which it never exceeds while gravity outweighs half the
// rounding). Where that premise fails, BallFreeTicks from the nearer of the two. A ball rolling
// fast just above the floor, or rising from it, skips the lookups the distance in any direction
// counted (issue 38: 6 s prediction, see bench/README.md).
inline int BallFloorFreeTicks(const BallCoeffs<double>& c, const Vec3<double>& v, double dt_s,
                              double e, double floor_uu, double others_uu) {
  const double speed2 = v.squaredNorm();
  const int others = BallFreeTicks(c, speed2, dt_s, others_uu);
  if (others == 0) return 0;
  if (!(c.gravity_z * dt_s + 0.5 * c.velocity_quantum < 0.0) || !(e >= 0.0 && e <= 1.0))
    return BallFreeTicks(c, speed2, dt_s, std::min(floor_uu, others_uu));
  constexpr double kSlackUu = 0.01;          // as BallFreeTicks'
  constexpr double kSpeedFactor = 1.0 + 1e-9;
  const double vz = v.z();
  const double dv = -c.gravity_z * dt_s + c.velocity_quantum + std::max(vz, 0.0) * (1.0 - e);
  const double a = 0.5 * dv * dt_s;
  const double f = floor_uu - kSlackUu;
  const double b = dt_s * (vz < 0.0 ? -vz * kSpeedFactor : -vz / kSpeedFactor) + a;
  if (!(f > 0.0) || !(a > 0.0)) return 0;
  const double n = (std::sqrt(b * b + 4.0 * a * f) - b) / (2.0 * a);
  if (!(n >= 0.0)) return 0;  // also NaN
  if (n >= others) return others;
  int ticks = static_cast<int>(n);
  if (ticks > 0 && a * ticks * ticks + b * ticks > f) --ticks;  // rounding of the root
  return ticks;
}

#if defined(__SSE2__)
// A skipped tick with omega settled and small quotients (BallClearance::settled_small, 96% of
// ball_step's skipped ticks; the caller has taken the tick from clearance->ticks): the
// operations of BallForcedVelocitySse2<true> and of BallSkippedTick's position, so the same
// values, on the clearance's pairs (memory operands, where the general path loads and
// broadcasts e, q, dt and g_dt again every tick). Reads and writes each vector of the state in
// one shape, its first two components as 16 bytes and the third as 8 (as Eigen's copies of a
// Vec3), so that a caller's state can live in registers (see StepBall with a BallClearance).
RLFIT_ALWAYS_INLINE BallState<double> BallSettledSmallTick(const BallState<double>& s,
                                                           const BallClearance& clearance) {
  BallState<double> next;
  const __m128d qq = _mm_load_pd(clearance.q2);
  const __m128d yxy =
      _mm_div_pd(_mm_mul_pd(_mm_loadu_pd(s.v.data()), _mm_load_pd(clearance.e2)), qq);
  const __m128d yz = _mm_div_sd(_mm_set_sd(s.v(2) * clearance.e2[0] + clearance.g_dt), qq);
  const __m128d vxy = _mm_mul_pd(RoundHalfAwaySmallSse2(yxy), qq);
  const __m128d vz = _mm_mul_sd(RoundHalfAwaySmallSse2(yz), qq);
  const __m128d dt = _mm_load_pd(clearance.dt2);
  _mm_storeu_pd(next.v.data(), vxy);
  _mm_store_sd(next.v.data() + 2, vz);
  next.omega = s.omega;
  // As BallSkippedTick (no + 0.0).
  _mm_storeu_pd(next.x.data(), _mm_add_pd(_mm_loadu_pd(s.x.data()), _mm_mul_pd(vxy, dt)));
  _mm_store_sd(next.x.data() + 2, _mm_add_sd(_mm_load_sd(s.x.data() + 2), _mm_mul_sd(vz, dt)));
  return next;
}
#endif

// One tick that `clearance` counted free (see BallClearance): StepBall's free flight with the
// drag factor of the tick that counted it, no speed cap (below it, counted), omega's cap test
// only until a tick leaves omega unchanged. Takes the tick from clearance->ticks. kFastPath:
// with the branch for settled_small (BallSettledSmallTick); BallFreeRun's first tick goes
// without it (its loop spills more with it: the 6 s prediction 99.4k -> 100.0k).
template <bool kFastPath = true>
RLFIT_ALWAYS_INLINE BallState<double> BallSkippedTick(const BallCoeffs<double>& c,
                                                      const BallState<double>& s, double dt_s,
                                                      BallClearance* clearance) {
  --clearance->ticks;
#if defined(__SSE2__)
  if (kFastPath && clearance->settled_small) return BallSettledSmallTick(s, *clearance);
#endif
  BallState<double> next;
  // Below the speed cap (counted): ClampNorm leaves v as it is.
#if defined(__SSE2__)
  if (clearance->small_quotients)  // BallForcedVelocity's values (see small_quotients)
    next.v = BallForcedVelocitySse2<true>(s.v, clearance->drag_factor, c.gravity_z * dt_s,
                                          c.velocity_quantum);
  else
#endif
    next.v = BallForcedVelocity(s.v, clearance->drag_factor, c.gravity_z * dt_s,
                                c.velocity_quantum);
  if (clearance->omega_settled) {
    next.omega = s.omega;  // omega passed the cap's test unchanged last tick
  } else {
    const Vec3<double>& w = s.omega;
    const double ww = (w(0) * w(0) + w(1) * w(1)) + w(2) * w(2);
    clearance->omega_settled = !(ww > c.max_omega * c.max_omega);
    clearance->settled_small = clearance->omega_settled && clearance->small_quotients;
    next.omega = clearance->omega_settled ? w : Vec3<double>(w * (c.max_omega / std::sqrt(ww)));
  }
  // Without the template's + 0.0 (its zero push): s.x is not -0 (the lookup tick that counted
  // this one added it, BallFreeFlight), and x + y is -0 only when both are (as BallFreeRun).
  for (int i = 0; i < 3; ++i) next.x(i) = s.x(i) + next.v(i) * dt_s;
  return next;
}

// A tick of free flight found by a lookup (StepBall with a clearance): BallFreeFlight from the
// velocity after step 1 (v0, v1, v2), and `ticks` coming ticks counted free
// (BallFreeTicks, BallFloorFreeTicks). omega_passed: as BallFreeFlight's (the clearance's
// omega_settled at the tick's start), which then stays settled.
RLFIT_ALWAYS_INLINE BallState<double> BallFreeStep(const BallCoeffs<double>& c,
                                                   const BallState<double>& s, double dt_s,
                                                   double v0, double v1, double v2, int ticks,
                                                   BallClearance* clearance, bool omega_passed) {
  clearance->ticks = ticks;  // clearance->dt_s and drag_factor are this tick's (StepBall)
  const BallState<double> next = BallFreeFlight(c, s, dt_s, v0, v1, v2, omega_passed);
  clearance->omega_settled = omega_passed || next.omega == s.omega;
  clearance->settled_small = clearance->omega_settled && clearance->small_quotients;
  return next;
}

// A tick of StepBall with a BallClearance that the clearance does not skip: the drag factor
// when dt_s changes, the floor's table, the grid's clearance or the lookup (see StepBall below).
template <class Mesh>
RLFIT_ALWAYS_INLINE BallState<double> BallLookupTick(const BallCoeffs<double>& c,
                                                     const BallState<double>& s, double dt_s,
                                                     const Mesh& arena,
                                                     BallClearance* clearance) {
  // The drag factor of the chain's ticks (its coefficients are fixed), taken again only when
  // dt_s changes (a NaN dt_s never equals itself: every tick): the value of every tick's.
  if (!(dt_s == clearance->dt_s)) {
    clearance->drag_factor = BallDragFactor(c, dt_s);
    clearance->dt_s = dt_s;
    const double q = c.velocity_quantum;
    clearance->small_quotients =
        q > 0.0 && (c.max_speed + std::abs(c.gravity_z * dt_s)) / q < 0x1p30;
    clearance->e2[0] = clearance->e2[1] = clearance->drag_factor;
    clearance->q2[0] = clearance->q2[1] = q;
    clearance->dt2[0] = clearance->dt2[1] = dt_s;
    clearance->g_dt = c.gravity_z * dt_s;
  }
  const double e = clearance->drag_factor;
  const Vec3<double> v = BallForcedVelocity(s.v, e, c.gravity_z * dt_s, c.velocity_quantum);
  const double v0 = v(0), v1 = v(1), v2 = v(2);
  // s.omega passed the cap's test unchanged (the chain's last tick was free flight that kept
  // it): BallFreeFlight need not test it again (decision 0133).
  const bool omega_passed = clearance->omega_settled;
  const double radius = c.contact_radius;
  // Over the flat floor: the floor's contact (Collide's answer bit for bit, Arena::FloorHeight)
  // without the grid, or the free ticks from its distance bound.
  double others_uu = 0.0;
  const double floor_z = arena.FloorHeight(s.x, radius, &others_uu);
  if (floor_z >= 0.0) {
    if (floor_z <= radius) {
      clearance->ticks = 0;
      clearance->omega_settled = false;
      clearance->settled_small = false;
      // Collide's contact there: normal (0, 0, 1), penetration radius - floor_z, one triangle,
      // also at a seam between floor triangles, where Collide counts two: there every contact
      // of the manifold has the normal (0, 0, 1) exactly (a face contact's, or adjusted at the
      // flat seam it lies on) and the deepest is the floor's, so ManifoldContactNormal's answer
      // is this contact's (tested). StepBallContactScalars' response to it, inline (most
      // contact ticks of a prediction: rolling and bouncing on the floor).
      clearance->touched = true;
      return BallContactResponse(c, s, dt_s, v, true, radius - floor_z, 0.0, 0.0, 1.0);
    }
    return BallFreeStep(
        c, s, dt_s, v0, v1, v2,
        BallFloorFreeTicks(c, s.v, dt_s, e, floor_z - radius, others_uu - radius), clearance,
        omega_passed);
  }
  const double free_uu = arena.GridFreeClearance(s.x, radius);
  if (free_uu < 0.0) {
    clearance->ticks = 0;
    clearance->omega_settled = false;
    clearance->settled_small = false;
    // The lookup here, so that a miss (most listed cells) is BallFreeFlight's free flight
    // without StepBallContact's call; a hit goes there as the contact already found. On the
    // Arena a miss also bounds the distance to the mesh (Arena::CollideFree: the listed
    // triangles' planes), which counts the coming free ticks: 11 a prediction (issue 38).
    double listed_free_uu = -1.0;
    Contact contact;
    if constexpr (std::is_same_v<Mesh, Arena>)
      contact = arena.CollideFree(s.x, radius, &listed_free_uu);
    else
      contact = arena.Collide(s.x, radius);
    if (!contact.hit) {
      if (!(listed_free_uu > radius))
        return BallFreeFlight(c, s, dt_s, v0, v1, v2, omega_passed);
      return BallFreeStep(c, s, dt_s, v0, v1, v2,
                          BallFreeTicks(c, s.v.squaredNorm(), dt_s, listed_free_uu - radius),
                          clearance, omega_passed);
    }
    return StepBallContactScalars(c, s, dt_s, arena, v, &clearance->touched, &contact);
  }
  return BallFreeStep(c, s, dt_s, v0, v1, v2,
                      BallFreeTicks(c, s.v.squaredNorm(), dt_s, free_uu - radius), clearance,
                      omega_passed);
}

// StepBall for double in a prediction: the same state as StepBall(c, s, dt_s, arena), bit for
// bit, without the arena lookup and the speed cap's test in the ticks `clearance` counts as
// free (see BallClearance), and without omega's cap test while free flight leaves omega as it
// is. Over the flat floor the contact is the floor's without a lookup (Arena::FloorHeight); a
// centre in an empty grid cell or a free octant counts the ticks to come by the distance bound
// (Arena::GridFreeClearance) less the contact radius and margin. `arena` is the
// Arena or a view answering FloorHeight, GridFreeClearance and Collide as it does (see
// StepBallContact).
//
// The caller's state is read and written in one shape (each vector's first two components as
// 16 bytes, the third as 8, as Eigen's copies of a Vec3) and never has its address taken: the
// skipped tick's reads and writes (BallSettledSmallTick) and otherwise copies, whose addresses
// the other paths take. GCC can then keep a chain's state in registers (scalar replacement)
// instead of copying it through memory every tick.
template <class Mesh>
RLFIT_ALWAYS_INLINE BallState<double> StepBall(const BallCoeffs<double>& c,
                                               const BallState<double>& s, double dt_s,
                                               const Mesh& arena, BallClearance* clearance) {
  if (clearance->ticks > 0 && clearance->dt_s == dt_s) {
#if defined(__SSE2__)
    if (clearance->settled_small) {
      --clearance->ticks;
      return BallSettledSmallTick(s, *clearance);
    }
#endif
    const BallState<double> s0 = s;
    const BallState<double> next = BallSkippedTick<false>(c, s0, dt_s, clearance);
    return next;
  }
  const BallState<double> s0 = s;
  const BallState<double> next = BallLookupTick(c, s0, dt_s, arena, clearance);
  return next;
}

// StepBall with a BallClearance on a state read in place (the lookup's calls take its address,
// no copies): the same states. PredictBall's ticks, whose states live in its output anyway
// (through StepBall's copies the 6 s prediction took 101.2k instructions, not 99.4k).
template <class Mesh>
RLFIT_ALWAYS_INLINE BallState<double> BallChainTick(const BallCoeffs<double>& c,
                                                    const BallState<double>& s, double dt_s,
                                                    const Mesh& arena, BallClearance* clearance) {
  if (clearance->ticks > 0 && clearance->dt_s == dt_s)
    return BallSkippedTick(c, s, dt_s, clearance);
  return BallLookupTick(c, s, dt_s, arena, clearance);
}

#if defined(__SSE2__)
// BallFreeRun's ticks (omega settled, each tick's state written to out[k], k < ticks) carried
// on the velocity's multiples of q instead of the velocity. A rounded velocity v is fl(n q)
// with n an integer, and the next tick's rounding is round(fl(fl(v e) / q))
// (x, y) or round(fl(fl(fl(v e) + g_dt) / q)) (z): here n' is the integer nearest to fl(n e)
// (x, y) or fl(fl(n e) + fl(g_dt / q)) (z), with no division and no libm call, and v' = fl(n' q)
// as the reference's. The two quotients differ by at most 7 ulp of the run's largest magnitude
// y_max ((|v| + |g_dt|) / q, |v| below the speed cap: the ticks are counted so), so their
// nearest integers are the same unless the fast one lies within y_max 2^-44 of a half (or, for
// z, of 0, where the sign of a zero would be in doubt): the run keeps the largest and smallest
// distances to the nearest integer and, where one comes that near, returns false (the caller
// runs the ticks the reference way). x and y keep their sign through a run (drag only shrinks
// them toward a zero of the same sign), z takes the sign of its sum. Also false where the
// start's velocity is not a multiple of q, q is 0 or the magnitudes are beyond 2^50 q.
// The velocity's chain per tick is a product and two sums (was a division and libm's round):
// 6 s prediction 181k -> 108k instructions with the other fast paths (decision 0084).
inline bool BallFreeRunMultiples(const BallState<double>& start, double e, double g_dt, double q,
                                 double max_speed, double dt_s, int ticks,
                                 BallState<double>* out) {
  if (!(q > 0.0) || !(e >= 0.0 && e <= 1.0)) return false;
  const double y_max = (max_speed + std::abs(g_dt)) / q + 2.0;
  if (!(y_max < 0x1p50)) return false;  // also NaN
  const double margin = y_max * 0x1p-44;
  const __m128d qq = _mm_set1_pd(q);
  const __m128d sign_bit = _mm_set1_pd(-0.0);
  const __m128d vxy = _mm_loadu_pd(start.v.data());
  const __m128d vz = _mm_set_sd(start.v(2));
  const __m128d magic = _mm_set1_pd(0x1.8p52);  // y + 1.5 2^52 - 1.5 2^52: nearest integer
  // The multiples: the integers nearest v / q, checked (v is fl(n q) for them, or not a multiple).
  __m128d nxy = _mm_sub_pd(_mm_add_pd(_mm_div_pd(vxy, qq), magic), magic);
  __m128d nz = _mm_sub_sd(_mm_add_sd(_mm_div_sd(vz, qq), magic), magic);
  if (_mm_movemask_pd(_mm_cmpeq_pd(_mm_mul_pd(nxy, qq), vxy)) != 3 ||
      !(_mm_cvtsd_f64(_mm_mul_sd(nz, qq)) == start.v(2)))
    return false;  // not a multiple (or NaN)
  const __m128d ee = _mm_set1_pd(e);
  const __m128d gq = _mm_set_sd(g_dt / q);
  const __m128d dt = _mm_set1_pd(dt_s);
  const __m128d abs_mask = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffff));
  const __m128d sign_xy = _mm_and_pd(vxy, sign_bit);
  const __m128d w01 = _mm_loadu_pd(start.omega.data());
  const double w2 = start.omega(2);
  __m128d xxy = _mm_loadu_pd(start.x.data());
  __m128d xz = _mm_set_sd(start.x(2));
  __m128d far_xy = _mm_setzero_pd(), far_z = _mm_setzero_pd(), near_z = _mm_set_sd(1.0);
  __m128d v01 = vxy, v2 = vz;
#pragma GCC unroll 2  // two ticks a pass: the loop's count and branch once (decision 0133)
  for (int k = 0; k < ticks; ++k) {
    const __m128d yxy = _mm_mul_pd(nxy, ee);
    const __m128d rxy = _mm_sub_pd(_mm_add_pd(yxy, magic), magic);
    far_xy = _mm_max_pd(far_xy, _mm_and_pd(_mm_sub_pd(yxy, rxy), abs_mask));
    nxy = rxy;
    v01 = _mm_or_pd(_mm_mul_pd(rxy, qq), sign_xy);
    xxy = _mm_add_pd(xxy, _mm_mul_pd(v01, dt));
    const __m128d yz = _mm_add_sd(_mm_mul_sd(nz, ee), gq);
    const __m128d rz = _mm_sub_sd(_mm_add_sd(yz, magic), magic);
    const __m128d dz = _mm_and_pd(_mm_sub_sd(yz, rz), abs_mask);
    far_z = _mm_max_sd(far_z, dz);
    near_z = _mm_min_sd(near_z, dz);
    nz = rz;
    v2 = _mm_or_pd(_mm_mul_sd(rz, qq), _mm_and_pd(yz, sign_bit));
    xz = _mm_add_sd(xz, _mm_mul_sd(v2, dt));
    BallState<double>& o = out[k];
    _mm_storeu_pd(o.x.data(), xxy);
    _mm_store_sd(o.x.data() + 2, xz);
    _mm_storeu_pd(o.v.data(), v01);
    _mm_store_sd(o.v.data() + 2, v2);
    _mm_storeu_pd(o.omega.data(), w01);
    o.omega(2) = w2;
  }
  const double far = std::max(_mm_cvtsd_f64(_mm_max_sd(far_xy, _mm_unpackhi_pd(far_xy, far_xy))),
                              _mm_cvtsd_f64(far_z));
  return far <= 0.5 - margin && _mm_cvtsd_f64(near_z) >= margin;
}
#endif

// `ticks` ticks of free flight that `clearance` has counted (see BallClearance), from s, each
// state written to out[0..ticks): BallSkippedTick's states. s may be out[-1], not in out.
RLFIT_ALWAYS_INLINE void BallFreeRun(const BallCoeffs<double>& c, double dt_s, int ticks,
                                     BallClearance* clearance, const BallState<double>& s,
                                     BallState<double>* out) {
  if (ticks <= 0) return;
#if defined(__SSE2__)
  // Omega settled (the lookup's free flight left it as it was): every tick as the loop below
  // takes them, the first one too: its position's + 0.0 changes nothing either, the lookup
  // tick's position being + 0.0'd already (BallFreeFlight).
  if (ticks >= 2 && clearance->omega_settled && clearance->dt_s == dt_s &&
      BallFreeRunMultiples(s, clearance->drag_factor, c.gravity_z * dt_s, c.velocity_quantum,
                           c.max_speed, dt_s, ticks, out)) {
    clearance->ticks -= ticks;
    return;
  }
#endif
  out[0] = BallSkippedTick<false>(c, s, dt_s, clearance);
  if (!clearance->omega_settled) {  // omega still at its cap's test (rare)
    for (int k = 1; k < ticks; ++k)
      out[k] = BallSkippedTick<false>(c, out[k - 1], dt_s, clearance);
    return;
  }
  // The other ticks: BallSkippedTick with omega settled, with the drag factor and gravity's
  // change in locals (the stores to `out` may alias c and *clearance, which the compiler would
  // load again every tick) and without the + 0.0 on the position: after the first tick no
  // coordinate is -0 (x + 0.0 never is), and x + y is -0 only when both are, so the + 0.0
  // would leave every value as it is.
  const double e = clearance->drag_factor;
  const double g_dt = c.gravity_z * dt_s;
  const double q = c.velocity_quantum;
  BallState<double> b = out[0];
  clearance->ticks -= ticks - 1;
  for (int k = 1; k < ticks; ++k) {
    b.v = BallForcedVelocity(b.v, e, g_dt, q);
    for (int i = 0; i < 3; ++i) b.x(i) = b.x(i) + b.v(i) * dt_s;
    out[k] = b;
  }
}

// A prediction: `ticks` steps of dt_s seconds from `start`, out[i] the state after i + 1 steps
// (out has room for `ticks` states). The states of chained StepBall calls, bit for bit: each
// tick that must look the mesh up goes through StepBall with a BallClearance, and the free
// ticks it counts run in BallFreeRun's loop. `arena` is the Arena or a view answering as it
// does (see StepBall with a clearance).
template <class Mesh>
void PredictBall(const BallCoeffs<double>& c, const BallState<double>& start, double dt_s,
                 int ticks, const Mesh& arena, BallState<double>* out) {
  // Each tick from the last one written (no running copy of the state: ~18 instructions a
  // lookup tick fewer), read in place (BallChainTick).
  BallClearance clearance;
  const BallState<double>* s = &start;
  for (int i = 0; i < ticks;) {
    out[i] = BallChainTick(c, *s, dt_s, arena, &clearance);
    s = &out[i++];
    const int free = std::min(clearance.ticks, ticks - i);
    if (free <= 0) continue;
    BallFreeRun(c, dt_s, free, &clearance, *s, out + i);
    i += free;
    s = &out[i - 1];
  }
}

// The pitch mesh as the ball meets it: its flat ceiling at game::kBallCeilingZ (the mesh's is
// 4 uu low for the ball; its two triangles are the only ones lying flat above kCeilingMinZ).
// The car and wall models use the mesh as it is (src/io/arena_file.h: BallArena, PitchArena).
inline std::vector<Triangle> WithBallCeiling(std::vector<Triangle> tris) {
  constexpr float kCeilingMinZ = 2000.0f;  // uu: above every other flat part of the mesh
  constexpr float kFlatUu = 0.01f;         // vertex heights of a flat triangle agree this well
  for (Triangle& t : tris) {
    const float z = t.p[0].z();
    if (!(z > kCeilingMinZ) || std::abs(t.p[1].z() - z) > kFlatUu ||
        std::abs(t.p[2].z() - z) > kFlatUu)
      continue;
    for (Eigen::Vector3f& q : t.p) q.z() = static_cast<float>(game::kBallCeilingZ);
  }
  return tris;
}

// ---- The game's tick clock (issue 12; NOTES "The tick clock") ----
// The ball steps whole physics ticks of 1 / tick_rate_hz s. A recorded ball row is not a
// physics state: it is the blend (1 - a) S_j + a S_{j+1} of two consecutive ticks, with a the
// row's place between them (measured: a row straddling a bounce holds the same fraction of it
// in all six components, NOTES "Ball tail"). A ~61 Hz row is one clock row, ticks_per_clock_row
// = 120/61 ticks of game time, so a advances by 120/61 - 2 = -2/61 tick per row (a 30.5-row
// beat). Where row 0 of an episode sits on that clock is BallClockOrigin.

// (1 - a) s0 + a s1, component by component.
template <typename T>
BallState<T> BlendBallStates(const BallState<T>& s0, const BallState<T>& s1, double a) {
  BallState<T> out;
  out.x = s0.x * T(1.0 - a) + s1.x * T(a);
  out.v = s0.v * T(1.0 - a) + s1.v * T(a);
  out.omega = s0.omega * T(1.0 - a) + s1.omega * T(a);
  return out;
}

// A rollout on the tick clock: the states of the two consecutive ticks around the current
// row and where that row falls between them. Time is counted in whole clock rows and ticks
// since the rollout's first row (not accumulated in seconds), so a rollout resumed from any of
// its rows repeats the same ticks.
template <typename T>
struct BallTicks {
  BallState<T> tick0;
  BallState<T> tick1;    // StepBall(tick0, one tick)
  double first_a = 0.0;  // place of the rollout's first row past its tick0, [0, 1) tick
  long clock_rows = 0;   // clock rows from the rollout's first row to the current row
  long ticks = 0;        // ticks from the first row's tick0 to the current tick0
  // The current row: (1 - a) tick0 + a tick1.
  double a(const Integration& integ) const {
    return first_a + static_cast<double>(clock_rows) * integ.ticks_per_clock_row -
           static_cast<double>(ticks);
  }
  // The row: the blend of the two ticks.
  BallState<T> Row(const Integration& integ) const {
    return BlendBallStates(tick0, tick1, a(integ));
  }
};

// Ticks from the first row's tick0 to the tick0 of a row `clock_rows` clock rows later.
inline long BallWholeTicks(double first_a, long clock_rows, const Integration& integ) {
  return static_cast<long>(
      std::floor(first_a + static_cast<double>(clock_rows) * integ.ticks_per_clock_row));
}

// The tick pair whose blend at fraction a is `row` (a recorded row), with `step` one tick
// (s -> StepBall(c, s, 1 / tick_rate_hz, arena)): tick0 solves (1 - a) tick0 + a step(tick0) =
// row by the fixed point tick0 <- row - a (step(tick0) - tick0), exact in free flight after 3
// rounds (the step is affine in the state there; tested) and a blend the game never had where
// the row straddles a contact.
template <typename T, class Step>
BallTicks<T> BallTicksAroundRowBy(const BallState<T>& row, double a, const Step& step) {
  constexpr int kRounds = 3;
  BallTicks<T> t;
  t.tick0 = row;
  t.tick1 = step(row);
  t.first_a = a;
  if (a == 0.0) return t;
  // How far a pair's blend is from the row: position, plus velocity over one tick (uu).
  const auto miss = [&](const BallTicks<T>& p) {
    const Vec3<T> dx = p.tick0.x * T(1.0 - a) + p.tick1.x * T(a) - row.x;
    const Vec3<T> dv = p.tick0.v * T(1.0 - a) + p.tick1.v * T(a) - row.v;
    return ScalarPart(dx).norm() + ScalarPart(dv).norm() / 120.0;
  };
  BallTicks<T> best = t;
  double best_miss = miss(t);
  for (int i = 0; i < kRounds; ++i) {
    t.tick0.x = row.x - (t.tick1.x - t.tick0.x) * T(a);
    t.tick0.v = row.v - (t.tick1.v - t.tick0.v) * T(a);
    t.tick0.omega = row.omega - (t.tick1.omega - t.tick0.omega) * T(a);
    t.tick1 = step(t.tick0);
    const double m = miss(t);
    if (m <= best_miss) best = t, best_miss = m;
  }
  return best;
}

template <typename T>
BallTicks<T> BallTicksAroundRow(const BallCoeffs<T>& c, const BallState<T>& row, double a,
                                const Integration& integ, const Arena& arena) {
  const double tick_s = 1.0 / integ.tick_rate_hz;
  const T drag_factor = BallDragFactor(c, tick_s);
  return BallTicksAroundRowBy(row, a, [&](const BallState<T>& s) {
    return StepBall(c, s, tick_s, arena, drag_factor);
  });
}

}  // namespace rlfit
