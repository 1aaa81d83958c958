// Property tests of the fast paths against their reference steps (issue 35 item 2): the ball's
// templated StepBall<T> (what the fits run on Jets) and libm's round(x / q) q for the velocity
// rounding, bit for bit (the sign of a zero included); the aerial step's SSE2 path against the
// template StepAerial<double> to a stated round-off bound. Elsewhere: the aerial SSE2 step's
// other coefficients and step lengths (aerial_test.cc), the arena's grid to its BVH bit for bit
// and the BVH to every triangle (arena_test.cc), the fit's shared tick meshes to unshared
// rollouts (ball_fit_test.cc). The list, with what each path saves: docs/design.md, "Fast paths".
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <Eigen/Geometry>

#include "src/common/rotation.h"
#include "src/io/arena_file.h"
#include "src/models/aerial.h"
#include "src/models/ball.h"
#include "src/models/car.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

bool SameBits(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

bool SameBits(const BallState<double>& a, const BallState<double>& b) {
  for (int i = 0; i < 3; ++i)
    if (!SameBits(a.x(i), b.x(i)) || !SameBits(a.v(i), b.v(i)) ||
        !SameBits(a.omega(i), b.omega(i)))
      return false;
  return true;
}

std::string Show(const BallState<double>& s) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "x %.17g %.17g %.17g v %.17g %.17g %.17g w %.17g %.17g %.17g",
                s.x(0), s.x(1), s.x(2), s.v(0), s.v(1), s.v(2), s.omega(0), s.omega(1),
                s.omega(2));
  return buf;
}

// The reference step: the template, as the fits run it (StepBall<double> names it).
BallState<double> Reference(const BallCoeffs<double>& c, const BallState<double>& s, double dt,
                            const Arena& arena) {
  return StepBall<double>(c, s, dt, arena);
}

TEST_CASE("RoundToQuantum is libm's round(x / q) q, bit for bit") {
  // Random magnitudes from 1e-6 to 1e9, exact multiples, values whose quotient is a half (the
  // ties, and their neighbours one ulp off), zeros of both signs, subnormals, quotients beyond
  // 2^52 (already integers), infinities and NaN, for several quanta; and q <= 0 or NaN (x as it
  // is).
  std::mt19937_64 rng(20261129);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> xs;
  for (int i = 0; i < 200000; ++i) {
    const double x = std::pow(10.0, -6.0 + 15.0 * u(rng)) * (u(rng) < 0.5 ? -1.0 : 1.0);
    xs.push_back(x);
  }
  const double specials[] = {0.0,
                             -0.0,
                             std::numeric_limits<double>::denorm_min(),
                             -std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::min(),
                             std::numeric_limits<double>::max(),
                             -std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(),
                             0x1p52,
                             0x1p52 - 0.5,
                             -0x1p52 + 0.5,
                             0x1p53 + 2.0,
                             0x1p51 + 0.5,
                             4503599627370495.5,
                             0.49999999999999994,
                             -0.49999999999999994,
                             1e300,
                             -1e300};
  long ties = 0, checked = 0;
  for (const double q : {0.01, 0.5, 1.0, 0.3, 1e-6, 7.0, 0x1p-60}) {
    std::vector<double> cases = xs;
    for (const double x : specials) cases.push_back(x * (q < 1.0 ? 1.0 : q));
    for (int i = 0; i < 20000; ++i) {
      // Halves: k + 1/2 times q, and its neighbours.
      const double k = std::floor(std::pow(10.0, 7.0 * u(rng))) * (i % 2 ? -1.0 : 1.0);
      const double x = (k + 0.5) * q;
      cases.push_back(x);
      cases.push_back(std::nextafter(x, 0.0));
      cases.push_back(std::nextafter(x, 2.0 * x));
      cases.push_back(k * q);  // multiples
    }
    for (const double x : cases) {
      const double want = RoundToQuantumReference(x, q);
      const double got = RoundToQuantum(x, q);
      ties += std::abs(x / q - std::trunc(x / q)) == 0.5;
      ++checked;
      if (!SameBits(got, want)) {
        CAPTURE(q);
        CAPTURE(x);
        CAPTURE(got);
        CAPTURE(want);
        FAIL("RoundToQuantum differs from round(x / q) q");
      }
    }
  }
  for (const double q : {0.0, -0.01, std::numeric_limits<double>::quiet_NaN()})
    for (const double x : {1.234, -0.0, 1e300})
      CHECK(SameBits(RoundToQuantum(x, q), x));
  MESSAGE(checked << " values checked, " << ties << " of them exact ties");
  CHECK(ties > 50000);
}

#if defined(__SSE2__)
TEST_CASE("RoundHalfAwaySmallSse2 is RoundHalfAwaySse2 below 2^31 - 1, bit for bit") {
  // The skipped ticks' rounding (BallClearance::small_quotients): quotients of random
  // magnitudes up to 2^31 - 1, halves and their neighbours one ulp off, zeros of both signs,
  // in both lanes. Where y rounds to 2^31 (from 2^31 - 1/2 on) the two differ: the bound is
  // needed.
  std::mt19937_64 rng(20261201);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> ys = {0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 0.49999999999999994,
                            -0.49999999999999994, 0x1p30 + 0.5, 0x1p31 - 0.5, -0x1p31 + 0.5,
                            0x1p31 - 1.0, 1.0 - 0x1p-53, 1.5 - 0x1p-52,
                            std::numeric_limits<double>::denorm_min(),
                            -std::numeric_limits<double>::denorm_min()};
  for (int i = 0; i < 200000; ++i) {
    const double sign = i % 2 ? -1.0 : 1.0;
    ys.push_back(sign * std::pow(2.0, -20.0 + 51.0 * u(rng)) * (1.0 - 0x1p-53));
    const double half = sign * (std::floor(std::pow(2.0, 31.0 * u(rng))) + 0.5);
    ys.push_back(half);
    ys.push_back(std::nextafter(half, 0.0));
    ys.push_back(std::nextafter(half, 2.0 * half));
    const double whole = sign * std::floor(std::pow(2.0, 31.0 * u(rng)));
    ys.push_back(std::nextafter(whole, 0.0));
    ys.push_back(std::nextafter(whole, 2.0 * whole + 1.0));
  }
  long checked = 0;
  for (std::size_t i = 0; i + 1 < ys.size(); ++i) {
    if (!(std::abs(ys[i]) <= 0x1p31 - 1.0) || !(std::abs(ys[i + 1]) <= 0x1p31 - 1.0)) continue;
    const __m128d y = _mm_set_pd(ys[i + 1], ys[i]);
    double want[2], got[2];
    _mm_storeu_pd(want, RoundHalfAwaySse2(y));
    _mm_storeu_pd(got, RoundHalfAwaySmallSse2(y));
    ++checked;
    if (!SameBits(got[0], want[0]) || !SameBits(got[1], want[1])) {
      CAPTURE(ys[i]);
      CAPTURE(ys[i + 1]);
      FAIL("RoundHalfAwaySmallSse2 differs from RoundHalfAwaySse2");
    }
  }
  MESSAGE(checked << " pairs checked");
  CHECK(checked > 1000000);
  double big[2];
  _mm_storeu_pd(big, RoundHalfAwaySmallSse2(_mm_set1_pd(0x1p31 - 0.5)));
  CHECK(big[0] != 0x1p31);
}

TEST_CASE("RoundHalfAwayBothSmallSse2 is RoundHalfAwaySse2, and answers below 2^31") {
  // The checked rounding of the lookup ticks' velocities (BallForcedVelocitySse2): quotients on
  // both sides of 2^31 (and of -2^31), halves and their neighbours, zeros, infinities and NaN,
  // four lanes at a time; it must answer (true) wherever every lane rounds to an integer of
  // magnitude below 2^31, and then as RoundHalfAwaySse2, bit for bit.
  std::mt19937_64 rng(20261202);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> ys = {0.0, -0.0, 0.5, -0.5, -2.5, 0.49999999999999994,
                            0x1p31 - 0.5, 0x1p31 - 0.6, 0x1p31, -0x1p31 + 0.5, -0x1p31 + 0.4,
                            -0x1p31 - 0.4, 0x1p52 + 1.0, 1e300,
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN()};
  for (int i = 0; i < 100000; ++i) {
    const double sign = i % 2 ? -1.0 : 1.0;
    ys.push_back(sign * std::pow(2.0, -20.0 + 56.0 * u(rng)));
    const double half = sign * (std::floor(std::pow(2.0, 33.0 * u(rng))) + 0.5);
    ys.push_back(half);
    ys.push_back(std::nextafter(half, 0.0));
  }
  long answered = 0, declined = 0;
  for (std::size_t i = 0; i + 3 < ys.size(); ++i) {
    const __m128d a = _mm_set_pd(ys[i + 1], ys[i]);
    const __m128d b = _mm_set_pd(ys[i + 3], ys[i + 2]);
    __m128d ra = _mm_setzero_pd(), rb = _mm_setzero_pd();  // set by the call where it answers
    const bool small = RoundHalfAwayBothSmallSse2(a, b, &ra, &rb);
    bool must = true;
    for (int k = 0; k < 4; ++k)
      must = must && std::abs(std::round(ys[i + k])) < 0x1p31;
    if (must) REQUIRE(small);
    if (!small) {
      ++declined;
      continue;
    }
    ++answered;
    double want[4], got[4];
    _mm_storeu_pd(want, RoundHalfAwaySse2(a));
    _mm_storeu_pd(want + 2, RoundHalfAwaySse2(b));
    _mm_storeu_pd(got, ra);
    _mm_storeu_pd(got + 2, rb);
    for (int k = 0; k < 4; ++k)
      if (!SameBits(got[k], want[k])) {
        CAPTURE(ys[i + k]);
        FAIL("RoundHalfAwayBothSmallSse2 differs from RoundHalfAwaySse2");
      }
  }
  MESSAGE(answered << " answered, " << declined << " declined");
  CHECK(answered > 50000);
  CHECK(declined > 50000);
}
#endif

TEST_CASE("BallForcedVelocity for double is the template's, bit for bit") {
  std::mt19937_64 rng(20261130);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < 100000; ++i) {
    Vec3<double> v(7000.0 * u(rng), 7000.0 * u(rng), 7000.0 * u(rng));
    if (i % 5 == 0) v(i % 3) = i % 2 ? -0.0 : 0.0;
    if (i % 7 == 0) v(2) = 1e18 * u(rng);
    const double e = i % 3 ? std::exp(-0.03 / 120.0) : std::exp(-1.0 * u(rng) * u(rng));
    const double g_dt = -650.0 / (i % 4 ? 120.0 : 122.0);
    const double q = i % 11 == 0 ? 0.0 : (i % 13 == 0 ? 0.3 : 0.01);
    const Vec3<double> fast = BallForcedVelocity(v, e, g_dt, q);
    const Vec3<double> reference = BallForcedVelocity<double>(v, e, g_dt, q);
    for (int k = 0; k < 3; ++k) REQUIRE(SameBits(fast(k), reference(k)));
  }
}

// A random state: anywhere in the pitch's box (in the air, touching, inside the mesh's
// surfaces), every fifth on the floor or a side wall at the contact radius +- 3 uu, velocity and
// spin at random (above the caps sometimes), some components zero or -0.
BallState<double> RandomState(std::mt19937_64& rng, int i) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  BallState<double> s;
  s.x = Vec3<double>(4100.0 * u(rng), 5200.0 * u(rng), 1030.0 + 1030.0 * u(rng));
  if (i % 5 == 0) s.x(2) = game::kBallContactRadius + 3.0 * u(rng);
  if (i % 5 == 1) s.x(0) = 4096.0 - game::kBallContactRadius + 3.0 * u(rng);
  const double speed = i % 4 == 0 ? 7000.0 : (i % 4 == 1 ? 20.0 : 2000.0);
  s.v = Vec3<double>(u(rng), u(rng), u(rng)) * speed;
  s.omega = Vec3<double>(u(rng), u(rng), u(rng)) * (i % 3 == 0 ? 8.0 : 3.0);
  if (i % 7 == 0) s.v(i % 3) = i % 2 ? -0.0 : 0.0;
  if (i % 11 == 0) s.omega = Vec3<double>::Zero();
  if (i % 13 == 0) s.x(0) = -0.0;
  return s;
}

// Coefficients for chain or state i: the defaults, some with the rounding off or coarser, a
// strong drag, or a drag that speeds the ball up (no free ticks then).
BallCoeffs<double> RandomCoeffs(int i) {
  BallCoeffs<double> c = BallCoeffs<double>::FromArray(BallLayout().defaults.data());
  if (i % 6 == 1) c.velocity_quantum = 0.0;
  if (i % 6 == 2) c.velocity_quantum = 0.3;
  if (i % 6 == 3) c.velocity_quantum = 1e-9;  // the free runs' checks refuse (margin too wide)
  if (i % 10 == 4) c.drag = -0.5;
  if (i % 10 == 5) c.drag = 0.01;
  return c;
}

TEST_CASE("one step of every double path is the template's, bit for bit, on random states") {
  // StepBall for double (free flight by the grid, contacts by StepBallContactScalars) and
  // StepBall with a fresh BallClearance (the floor's table, the grid's clearance, the listed
  // cells' CollideFree), from random states: in the air, on and in the floor and walls.
  if (testing::DataRoot().empty()) {
    MESSAGE("skipped: no datasets root (meshes/pitch.dat)");
    return;
  }
  const Arena& arena = BallArena(testing::DataRoot());
  std::mt19937_64 rng(20261131);
  long contacts = 0;
  for (int i = 0; i < 200000; ++i) {
    const BallCoeffs<double> c = RandomCoeffs(i);
    const BallState<double> s = RandomState(rng, i);
    const double dt = i % 9 == 0 ? 1.0 / 122.0 : 1.0 / 120.0;
    const BallState<double> want = Reference(c, s, dt, arena);
    const BallState<double> plain = StepBall(c, s, dt, arena);
    BallClearance clearance;
    const BallState<double> looked_up = StepBall(c, s, dt, arena, &clearance);
    contacts += clearance.touched;
    if (!SameBits(plain, want) || !SameBits(looked_up, want)) {
      CAPTURE(Show(s));
      CAPTURE(Show(want));
      CAPTURE(Show(plain));
      CAPTURE(Show(looked_up));
      FAIL("a double path differs from the template");
    }
  }
  MESSAGE(contacts << " of 200000 states touched the mesh");
  CHECK(contacts > 20000);
}

TEST_CASE("chained double paths and PredictBall are the template's chain, bit for bit") {
  // From random starts, 720 ticks: chained StepBall for double, chained StepBall with a
  // BallClearance (its skipped ticks, BallSkippedTick) and PredictBall (its free runs,
  // BallFreeRun on the velocity's multiples or, where they cannot promise, the plain loop),
  // against the template's chain.
  if (testing::DataRoot().empty()) {
    MESSAGE("skipped: no datasets root (meshes/pitch.dat)");
    return;
  }
  const Arena& arena = BallArena(testing::DataRoot());
  std::mt19937_64 rng(20261132);
  long steps = 0, skipped = 0;
  std::vector<BallState<double>> predicted(720);
  for (int chain = 0; chain < 240; ++chain) {
    const BallCoeffs<double> c = RandomCoeffs(chain);
    const BallState<double> start = RandomState(rng, chain);
    const double dt = chain % 7 == 0 ? 1.0 / 122.0 : 1.0 / 120.0;
    PredictBall(c, start, dt, 720, arena, predicted.data());
    BallState<double> reference = start, plain = start, skipping = start;
    BallClearance clearance;
    for (int t = 0; t < 720; ++t) {
      skipped += clearance.ticks > 0;
      reference = Reference(c, reference, dt, arena);
      plain = StepBall(c, plain, dt, arena);
      skipping = StepBall(c, skipping, dt, arena, &clearance);
      ++steps;
      if (!SameBits(plain, reference) || !SameBits(skipping, reference) ||
          !SameBits(predicted[t], reference)) {
        CAPTURE(chain);
        CAPTURE(t);
        CAPTURE(Show(reference));
        CAPTURE(Show(plain));
        CAPTURE(Show(skipping));
        CAPTURE(Show(predicted[t]));
        FAIL("a chained double path differs from the template's chain");
      }
    }
  }
  MESSAGE(skipped << " of " << steps << " ticks skipped their lookup");
  CHECK(skipped > steps / 3);
}

#if defined(__SSE2__)
// Largest |fast - reference| over one three-vector, relative to max(|reference|, floor).
double RelativeDifference(const Vec3<double>& fast, const Vec3<double>& reference, double floor) {
  return (fast - reference).norm() / std::max(reference.norm(), floor);
}

// The largest of RelativeDifference over x, v, omega and theta's columns, with floors of the
// sizes their components come from (x moves by v dt, v by 2300 uu/s, omega by up to 5.5 rad/s;
// theta's columns are unit vectors).
double WorstRelativeDifference(const CarState<double>& fast, const CarState<double>& reference,
                               double dt) {
  double worst = std::max({RelativeDifference(fast.x, reference.x, 2300.0 * dt),
                           RelativeDifference(fast.v, reference.v, 2300.0),
                           RelativeDifference(fast.omega, reference.omega, 5.5)});
  for (int j = 0; j < 3; ++j)
    worst = std::max(worst, RelativeDifference(fast.theta.col(j), reference.theta.col(j), 1.0));
  return worst;
}

// A random tumbling car: uniform orientation, |omega| up to 5.5 rad/s (at the cap when
// `at_cap`), |v| up to 2300 uu/s, anywhere in the arena's box.
CarState<double> RandomAerialState(std::mt19937_64& rng, bool at_cap) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), mag(0.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  auto direction = [&] {
    return Vec3<double>(gauss(rng), gauss(rng), gauss(rng)).normalized();
  };
  CarState<double> s;
  s.x = Vec3<double>(4000.0 * u(rng), 5000.0 * u(rng), 1000.0 + 1000.0 * u(rng));
  s.v = direction() * (2300.0 * mag(rng));
  s.omega = direction() * (at_cap ? 5.5 : 5.5 * mag(rng));
  s.theta = Eigen::Quaterniond(gauss(rng), gauss(rng), gauss(rng), gauss(rng))
                .normalized()
                .toRotationMatrix();
  return s;
}

// Random air inputs: each of pitch, yaw and roll full (+-1, where the damping switches off),
// zero or partial; throttle anywhere in [-1, 1]; boost off, on or held for part of the step.
Controls RandomAirControls(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> pick(0, 3);
  auto stick = [&] {
    switch (pick(rng)) {
      case 0: return -1.0;
      case 1: return 1.0;
      case 2: return 0.0;
      default: return u(rng);
    }
  };
  Controls in;
  in.pitch = stick();
  in.yaw = stick();
  in.roll = stick();
  in.throttle = u(rng);
  const int b = pick(rng);
  in.boost = b == 0 ? 0.5 * (u(rng) + 1.0) : (b % 2 == 0 ? 1.0 : 0.0);
  return in;
}

TEST_CASE("the aerial SSE2 step is the template's to a stated bound, step by step and chained") {
  // The reference is StepAerial<double>, the template the fits run on Jets; the fast path is the
  // SSE2 overload for double (src/models/aerial.h) replay and the Python Car run. It reorders the
  // arithmetic and turns theta in the body frame, so it is not bit for bit: each step agrees to
  // round-off, kStepBound relative per three-vector (aerial.h: a few ulps, 2.2e-16 each, of the
  // largest term summed; measured worst 4.6e-16). Chained on their own, the two paths' states
  // drift apart by the steps' round-off accumulated: the rotation neither grows nor shrinks an
  // error, so it grows about linearly with the ticks, kStepBound per tick, up to kChainTicks
  // (6 s at 120 Hz; measured worst per tick in the message). Default coefficients, drift off and
  // on, both orientation updates; inputs held for 1-60 ticks (as a player's), so that full
  // inputs turn the car up to the 5.5 rad/s cap.
  constexpr double kStepBound = 1e-15;
  constexpr int kChainTicks = 720;
  constexpr double kDt = 1.0 / 120;
  std::mt19937_64 rng(20261133);
  AerialCoeffs<double> c = AerialCoeffs<double>::FromArray(AerialLayout().defaults.data());
  const Vec3<double> fitted_drift(-0.0320, -0.0144, -0.0182);
  long steps = 0, full_pitch = 0, full_yaw = 0, capped = 0;
  double worst_step = 0.0, worst_chain_per_tick = 0.0;
  for (int chain = 0; chain < 200; ++chain) {
    c.drift = chain % 2 == 0 ? Vec3<double>::Zero() : fitted_drift;
    const bool rotate_with_new_omega = chain % 4 < 2;
    const CarState<double> start = RandomAerialState(rng, chain % 3 == 0);
    CarState<double> reference = start, fast = start;
    Controls in;
    int held = 0;
    for (int t = 0; t < kChainTicks; ++t) {
      if (held-- == 0) {
        in = RandomAirControls(rng);
        held = std::uniform_int_distribution<int>(0, 59)(rng);
      }
      full_pitch += std::abs(in.pitch) == 1.0;
      full_yaw += std::abs(in.yaw) == 1.0;
      // One step from the same state.
      const CarState<double> one = StepAerial(c, reference, in, kDt, rotate_with_new_omega);
      const CarState<double> next = StepAerial<double>(c, reference, in, kDt, rotate_with_new_omega);
      const double step_diff = WorstRelativeDifference(one, next, kDt);
      // The chains, each from its own state.
      fast = StepAerial(c, fast, in, kDt, rotate_with_new_omega);
      reference = next;
      const double chain_diff = WorstRelativeDifference(fast, reference, kDt);
      worst_step = std::max(worst_step, step_diff);
      worst_chain_per_tick = std::max(worst_chain_per_tick, chain_diff / (t + 1));
      capped += reference.omega.norm() > 5.5 - 1e-9;
      ++steps;
      if (step_diff > kStepBound || chain_diff > kStepBound * (t + 1)) {
        CAPTURE(chain);
        CAPTURE(t);
        CAPTURE(step_diff);
        CAPTURE(chain_diff);
        FAIL("the SSE2 aerial step left the template's round-off");
      }
    }
  }
  MESSAGE("worst one-step relative difference " << worst_step << ", worst chained one per tick "
          << worst_chain_per_tick << " (bound " << kStepBound << " for both)");
  CHECK(steps == 200 * kChainTicks);
  CHECK(full_pitch > steps / 3);  // the damping switched off, pitch and yaw
  CHECK(full_yaw > steps / 3);
  CHECK(capped > 1000);  // the 5.5 rad/s cap
}
#endif

TEST_CASE("BallFreeRun's multiples promise only what they can keep") {
  // Free flight high above a floor (no contact for seconds): BallFreeRunMultiples from a
  // rounded velocity runs the ticks of the reference; it refuses a velocity that is not a
  // multiple of q, q = 0, and a quantum so fine that the near-tie margin swallows the ticks;
  // BallFreeRun gives the reference's states whichever way it goes.
  std::vector<Triangle> floor(1);
  floor[0].p[0] = {-1e5, -1e5, -1e4};
  floor[0].p[1] = {1e5, -1e5, -1e4};
  floor[0].p[2] = {0, 1e5, -1e4};
  const Arena arena(floor);
  std::mt19937_64 rng(20261133);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double dt = 1.0 / 120.0;
  int accepted = 0, refused_not_multiple = 0, refused_margin = 0;
  for (int i = 0; i < 3000; ++i) {
    BallCoeffs<double> c = BallCoeffs<double>::FromArray(BallLayout().defaults.data());
    const int kind = i % 3;  // 0: a rounded start; 1: not a multiple; 2: q = 1e-9
    if (kind == 2) c.velocity_quantum = 1e-9;
    BallState<double> s;
    s.x = Vec3<double>(1000.0 * u(rng), 1000.0 * u(rng), 2000.0 * u(rng));
    s.v = Vec3<double>(u(rng), u(rng), u(rng)) * 2000.0;  // below the speed cap for 200 ticks
    if (i % 10 == 0) s.v(i % 3) = i % 20 ? -0.0 : 0.0;
    s.omega = Vec3<double>(u(rng), u(rng), u(rng));
    if (kind != 1) s = Reference(c, s, dt, arena);  // a rounded velocity
    const double e = std::exp(c.drag * dt);
    std::vector<BallState<double>> out(200);
    const bool promised = BallFreeRunMultiples(s, e, c.gravity_z * dt, c.velocity_quantum,
                                               c.max_speed, dt, 200, out.data());
    if (kind == 0) CHECK(promised);
    if (kind == 1) CHECK_FALSE(promised);
    if (kind == 2) CHECK_FALSE(promised);
    accepted += promised;
    refused_not_multiple += kind == 1 && !promised;
    refused_margin += kind == 2 && !promised;
    BallClearance clearance;
    clearance.ticks = 200;
    clearance.dt_s = dt;
    clearance.drag_factor = e;
    clearance.omega_settled = true;
    const BallState<double> run = s;
    std::vector<BallState<double>> ran(200);
    BallFreeRun(c, dt, 200, &clearance, run, ran.data());
    CHECK(clearance.ticks == 0);
    BallState<double> reference = s;
    for (int k = 0; k < 200; ++k) {
      reference = Reference(c, reference, dt, arena);
      if (promised) REQUIRE(SameBits(out[k], reference));
      REQUIRE(SameBits(ran[k], reference));
    }
    REQUIRE(SameBits(run, s));  // the start is left as it was
  }
  MESSAGE(accepted << " runs on the multiples, " << refused_not_multiple
                   << " refused (not multiples), " << refused_margin << " (margin)");
  CHECK(accepted == 1000);
}

TEST_CASE("CollideFree: Collide's contact, and a distance no triangle comes within") {
  // Random spheres in the grid's listed cells (where the ball's prediction asks it): the
  // contact is Collide's bit for bit; where there is none, no triangle lies within the bound
  // (every triangle tested), and the bound is useful (above the ball's radius) for many.
  if (testing::DataRoot().empty()) {
    MESSAGE("skipped: no datasets root (meshes/pitch.dat)");
    return;
  }
  const Arena& arena = BallArena(testing::DataRoot());
  std::mt19937_64 rng(20261134);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double radius = game::kBallContactRadius;
  int listed = 0, misses = 0, useful = 0;
  for (int i = 0; i < 60000 && listed < 6000; ++i) {
    const Eigen::Vector3d center(4200.0 * u(rng), 6100.0 * u(rng), 1030.0 + 1030.0 * u(rng));
    if (arena.GridListSize(center, radius) <= 0) continue;
    ++listed;
    double free_uu = -2.0;
    const Contact got = arena.CollideFree(center, radius, &free_uu);
    const Contact want = arena.Collide(center, radius);
    REQUIRE(got.hit == want.hit);
    REQUIRE(SameBits(got.penetration, want.penetration));
    REQUIRE(got.triangles == want.triangles);
    for (int k = 0; k < 3; ++k) REQUIRE(SameBits(got.normal(k), want.normal(k)));
    if (got.hit) continue;
    ++misses;
    REQUIRE(free_uu <= Arena::kGridRadius);
    if (free_uu > 0.0) {
      CAPTURE(center.transpose());
      CAPTURE(free_uu);
      CHECK_FALSE(arena.CollideNaive(center, free_uu).hit);
    }
    useful += free_uu > radius;
  }
  MESSAGE(listed << " spheres in listed cells, " << misses << " without contact, " << useful
                 << " of those with room beyond the radius");
  CHECK(listed == 6000);
  CHECK(useful > misses / 10);
}

TEST_CASE("FindWheelContact's floor fast path is the mesh's answer, bit for bit") {
  // Random cars at and above the floor over the whole pitch (tilted, on their side, upside
  // down; centre 0-80 uu up, most near the rest height 17): the switch's contact is
  // FindWheelContactOnMesh's, hit, normal and distance alike. Counts make sure the fast path
  // ran, with hits and misses, and that the mesh route ran where it does not apply.
  if (testing::DataRoot().empty()) {
    MESSAGE("skipped: no datasets root (meshes/pitch.dat)");
    return;
  }
  const Arena& arena = PitchArena(testing::DataRoot());
  std::mt19937_64 rng(20261129);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int fast = 0, fast_hits = 0, mesh = 0;
  for (int i = 0; i < 20000; ++i) {
    const double z = i % 4 == 0 ? 40.0 + 40.0 * u(rng) : 17.0 + 10.0 * u(rng);
    const Eigen::Vector3d x(4100.0 * u(rng), 5100.0 * u(rng), z);
    Eigen::Vector3d up(u(rng), u(rng), u(rng));
    if (i % 2 == 0) up = Eigen::Vector3d(0.05 * u(rng), 0.05 * u(rng), 1.0);  // about upright
    if (up.norm() < 1e-3) continue;
    up.normalize();
    const WheelContact got = FindWheelContact(arena, x, up);
    const WheelContact want = FindWheelContactOnMesh(arena, x, up);
    INFO("x " << x.transpose() << " up " << up.transpose());
    REQUIRE(got.hit == want.hit);
    for (int k = 0; k < 3; ++k) REQUIRE(SameBits(got.normal(k), want.normal(k)));
    REQUIRE(SameBits(got.distance_uu, want.distance_uu));
    if (arena.FloorHeight(x, game::kCarRestHeight + kCarWheelContactUu) >= 0.0) {
      ++fast;
      fast_hits += got.hit;
    } else {
      ++mesh;
    }
  }
  CHECK(fast > 10000);
  CHECK(fast_hits > 3000);
  CHECK(fast - fast_hits > 1000);
  CHECK(mesh > 500);
}

}  // namespace
}  // namespace rlfit
