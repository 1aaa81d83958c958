// Tests of the aerial model: rotation helpers, hand-computed single steps, input timing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <Eigen/Geometry>

#include "src/common/rotation.h"
#include "src/models/aerial.h"
#include "src/replay/episode_steps.h"

namespace rlfit {
namespace {

// Round-off of a few double operations on unit-size numbers.
constexpr double kTight = 1e-12;

AerialCoeffs<double> Seed() { return AerialCoeffs<double>::FromArray(AerialLayout().defaults.data()); }

CarState<double> AtRest() {
  CarState<double> s;
  s.x.setZero();
  s.v.setZero();
  s.omega.setZero();
  s.theta.setIdentity();
  return s;
}

TEST_CASE("Euler angles to matrix: note 000's formula is Rz(yaw) Ry(-pitch) Rx(-roll)") {
  for (double pitch : {-1.2, 0.0, 0.4})
    for (double yaw : {-3.0, 0.7, 2.5})
      for (double roll : {-2.0, 0.0, 1.1}) {
        const Eigen::Matrix3d expected =
            (Eigen::AngleAxisd(yaw, Eigen::Vector3d::UnitZ()) *
             Eigen::AngleAxisd(-pitch, Eigen::Vector3d::UnitY()) *
             Eigen::AngleAxisd(-roll, Eigen::Vector3d::UnitX()))
                .toRotationMatrix();
        const Eigen::Matrix3d m = EulerToMatrix(pitch, yaw, roll);
        CHECK((m - expected).norm() < kTight);
        CHECK(m.determinant() == doctest::Approx(1.0));
      }
  // Forward of a car pitched up by 90 degrees points up.
  CHECK((EulerToMatrix(M_PI / 2, 0.0, 0.0).col(0) - Eigen::Vector3d::UnitZ()).norm() < kTight);
}

TEST_CASE("closed-form exponential equals the axis-angle rotation") {
  for (const Eigen::Vector3d& phi : {Eigen::Vector3d(0.3, -0.2, 1.1), Eigen::Vector3d(1e-6, 0, 0),
                                     Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(2.0, 1.0, -0.5)}) {
    const double a = phi.norm();
    const Eigen::Matrix3d expected =
        a > 0 ? Eigen::AngleAxisd(a, phi / a).toRotationMatrix() : Eigen::Matrix3d::Identity();
    CHECK((ExpSo3<double>(phi) - expected).norm() < 1e-10);
  }
  CHECK(AngleBetweenDeg(Eigen::Matrix3d::Identity(),
                        ExpSo3<double>(Eigen::Vector3d(0, 0, M_PI / 2))) ==
        doctest::Approx(90.0));
}

TEST_CASE("the series form of the exponential agrees with sin and cos to the last bits") {
  // Below kExpSo3SeriesMaxAngle2 ExpSo3 takes its coefficients from a series; compare with the
  // closed form evaluated in long double over angles from 1e-9 rad to the switch, in random
  // directions. Entries are at most 1 and the truncation is below 3e-18, so the difference
  // stays within a few ulps of 1 (2.2e-16 each); a missing series term would leave >1e-14.
  constexpr double kUlps = 4.0 * 2.220446049250313e-16;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> gauss(0.0, 1.0);
  double worst = 0.0;
  for (int i = 0; i < 20000; ++i) {
    const double a = std::pow(10.0, -9.0 + 8.0 * (i % 1000) / 1000.0) *
                     std::sqrt(kExpSo3SeriesMaxAngle2);
    const Eigen::Vector3d dir = Eigen::Vector3d(gauss(rng), gauss(rng), gauss(rng)).normalized();
    const Eigen::Vector3d phi = a * dir;
    const long double al = std::sqrt(static_cast<long double>(phi.squaredNorm()));
    const long double c1 = std::sin(al) / al, c2 = (1.0L - std::cos(al)) / (al * al);
    const Eigen::Matrix3d w = Skew<double>(phi);
    const Eigen::Matrix3d w2 = w * w;
    const Mat3<double> r = ExpSo3<double>(phi);
    for (int row = 0; row < 3; ++row)
      for (int col = 0; col < 3; ++col) {
        const long double want = (row == col ? 1.0L : 0.0L) + c1 * w(row, col) + c2 * w2(row, col);
        worst = std::max(worst, static_cast<double>(std::abs(r(row, col) - want)));
      }
  }
  MESSAGE("largest difference from the closed form: " << worst);
  CHECK(worst <= kUlps);
  // Rotating about z alone gives exactly the general product.
  const Mat3<double> theta = EulerToMatrix(0.3, 1.2, -0.4);
  for (const double angle : {0.0, 1e-7, -0.04, 0.099, 0.3, -2.0}) {
    INFO("angle " << angle);
    CHECK(RotateAboutZ<double>(angle, theta) ==
          Mat3<double>(ExpSo3<double>(Vec3<double>(0.0, 0.0, angle)) * theta));
  }
}

TEST_CASE("orientation drift: EulerRateDrift turns the Euler angles at the given rates") {
  // Over a short step dt, rotating theta by the drift's angular velocity must equal changing
  // (pitch, yaw, roll) by (rates_pitch, rates_yaw, rates_roll) dt, to second order in dt.
  const double dt = 1e-4;
  const Vec3<double> rates(0.7, -0.4, 0.9);  // roll, pitch, yaw rates, rad/s
  for (const Vec3<double>& pyr : {Vec3<double>(0.3, 1.2, -0.4), Vec3<double>(-1.1, -2.5, 2.0),
                                  Vec3<double>(0.0, 0.0, 0.0)}) {
    const Mat3<double> theta = EulerToMatrix(pyr(0), pyr(1), pyr(2));
    const Mat3<double> turned = ExpSo3<double>(EulerRateDrift(rates, theta) * dt) * theta;
    const Mat3<double> want = EulerToMatrix(pyr(0) + rates(1) * dt, pyr(1) + rates(2) * dt,
                                            pyr(2) + rates(0) * dt);
    INFO("pitch/yaw/roll " << pyr.transpose());
    // The step turns ~1e-4 rad; second-order terms are ~1e-8 rad = 6e-7 degrees.
    CHECK(AngleBetweenDeg(turned, want) < 1e-5);
  }
}

TEST_CASE("one step from rest with full roll input") {
  const auto c = Seed();
  Controls u;
  u.roll = 1.0;
  const double dt = 1.0 / 120;
  const CarState<double> next = StepAerial(c, AtRest(), u, dt, true);
  // omega = Theta T u dt = (T_r dt, 0, 0); no damping since omega was 0.
  CHECK(next.omega.x() == doctest::Approx(c.torque(0) * dt));
  CHECK(next.omega.y() == 0.0);
  // Gravity only: v = g dt, x = v dt (semi-implicit Euler).
  CHECK(next.v.z() == doctest::Approx(-650.0 * dt));
  CHECK(next.x.z() == doctest::Approx(-650.0 * dt * dt));
  // Rotated about forward (x) by the new omega: angle |T_r| dt^2.
  CHECK(AngleBetweenDeg(Eigen::Matrix3d::Identity(), next.theta) ==
        doctest::Approx(std::abs(c.torque(0)) * dt * dt * 180 / M_PI));
  // Note 000's averaged update turns half as far from rest.
  const CarState<double> avg = StepAerial(c, AtRest(), u, dt, false);
  CHECK(AngleBetweenDeg(Eigen::Matrix3d::Identity(), avg.theta) ==
        doctest::Approx(0.5 * std::abs(c.torque(0)) * dt * dt * 180 / M_PI));
}

TEST_CASE("pitch damping is scaled by 1 - |input|") {
  const auto c = Seed();
  CarState<double> s = AtRest();
  s.omega = Eigen::Vector3d(0.0, 2.0, 0.0);  // about the left axis: pitch rate
  const double dt = 1.0 / 120;
  Controls full, half;
  full.pitch = 1.0;
  half.pitch = 0.5;
  CHECK(StepAerial(c, s, full, dt, true).omega.y() == doctest::Approx(2.0 + c.torque(1) * dt));
  CHECK(StepAerial(c, s, half, dt, true).omega.y() ==
        doctest::Approx(2.0 + (c.torque(1) * 0.5 + c.damping(1) * 0.5 * 2.0) * dt));
  // Roll damping stays on at full roll input.
  s.omega = Eigen::Vector3d(1.0, 0.0, 0.0);
  Controls roll;
  roll.roll = 1.0;
  CHECK(StepAerial(c, s, roll, dt, true).omega.x() ==
        doctest::Approx(1.0 + (c.torque(0) + c.damping(0) * 1.0) * dt));
}

TEST_CASE("angular speed is capped at 5.5 rad/s") {
  const auto c = Seed();
  CarState<double> s = AtRest();
  s.omega = Eigen::Vector3d(-5.5, 0.0, 0.0);
  Controls u;
  u.roll = 1.0;  // T_r < 0: spins up further about -x
  const CarState<double> next = StepAerial(c, s, u, 1.0 / 120, true);
  CHECK(next.omega.norm() == doctest::Approx(5.5));
}

#if defined(__SSE2__)
TEST_CASE("StepAerial for double (the SSE2 path) agrees with the template to round-off") {
  // Chains of random states and inputs: tumbling at and beyond the 5.5 rad/s cap, speeds at the
  // 2300 uu/s cap, orientation drift on and off, random coefficients, both orientation updates,
  // and steps long enough (1/61 s, 0.1 s) for ExpSo3Coefficients' longer series and closed form.
  // The double path reorders the arithmetic and turns theta in the body frame (bench/README.md),
  // so the two differ in the last bits; each step starts both from the template's state. Per
  // three-vector (x, v, omega, each column of theta): |fast - template| <= tolerance
  // max(|template|, floor), the floor covering vectors near zero whose components come from
  // larger terms (x moves by v dt, v by 2300 uu/s, omega by the torque; theta's columns are unit
  // vectors). The tolerance is kRoundOff (a few ulps, 2.2e-16 each, of the largest term summed)
  // per kTurn of the step's turn: the body-frame turn equals the world-frame one only as far as
  // theta is orthonormal (to a few 1e-16 after the chains' 250 steps), times the turn.
  // Measured worst: 4.6e-16 at 120 Hz (turns <= 0.05 rad); 0.46 of the tolerance overall.
  constexpr double kRoundOff = 1e-15;
  constexpr double kTurn = 0.05;  // rad: a 120 Hz step at the 5.5 rad/s cap turns 0.046
  std::mt19937_64 rng(20261125);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double dts[4] = {1.0 / 120, 1.0 / 121.92, 1.0 / 61, 0.1};
  long steps = 0, capped = 0, short_series = 0, long_series = 0, closed_form = 0;
  long nose_vertical = 0;
  double worst_120hz = 0.0, worst = 0.0;  // relative difference / tolerance
  double tolerance = kRoundOff;
  auto check = [&](const Vec3<double>& fast, const Vec3<double>& generic, double floor) {
    const double rel = (fast - generic).norm() / std::max(generic.norm(), floor);
    worst = std::max(worst, rel / tolerance);
    if (tolerance == kRoundOff) worst_120hz = std::max(worst_120hz, rel);
    return rel <= tolerance;
  };
  for (int chain = 0; chain < 400; ++chain) {
    AerialCoeffs<double> c = Seed();
    if (chain % 2 == 1) c.drift = Vec3<double>(-0.032, -0.0144, -0.0182);
    if (chain % 3 == 2)
      for (int i = 0; i < 3; ++i) {
        c.torque(i) *= 1.0 + 0.5 * u(rng);
        c.damping(i) = -3.0 * (1.0 + u(rng));
      }
    const bool rotate_with_new_omega = chain % 4 < 2;
    const double dt = dts[(chain / 4) % 4];
    CarState<double> s;
    s.x = Vec3<double>(u(rng), u(rng), u(rng)) * 3000.0;
    s.v = Vec3<double>(u(rng), u(rng), u(rng)) * (chain % 3 == 0 ? 2300.0 : 1300.0);
    s.omega = Vec3<double>(u(rng), u(rng), u(rng)) * (chain % 5 == 0 ? 6.0 : 3.5);
    s.theta = EulerToMatrix(1.5 * u(rng), 3.1 * u(rng), 3.1 * u(rng));
    // Some chains start with the nose vertical (EulerRateDrift's other branch).
    if (chain % 10 == 7) s.theta = EulerToMatrix(M_PI / 2, 3.1 * u(rng), 3.1 * u(rng));
    for (int t = 0; t < 250; ++t) {
      Controls in;
      in.pitch = t % 7 == 0 ? 0.0 : u(rng);
      in.yaw = t % 5 == 0 ? 1.0 : u(rng);
      in.roll = u(rng);
      in.throttle = u(rng);
      in.boost = t % 11 == 0 ? 0.5 : (u(rng) > 0.0 ? 1.0 : 0.0);
      const CarState<double> fast = StepAerial(c, s, in, dt, rotate_with_new_omega);
      const CarState<double> generic = StepAerial<double>(c, s, in, dt, rotate_with_new_omega);
      const double turn = std::max(s.omega.norm(), generic.omega.norm()) * dt;
      tolerance = kRoundOff * std::max(1.0, turn / kTurn);
      INFO("chain " << chain << " step " << t);
      REQUIRE(check(fast.x, generic.x, 2300.0 * dt));
      REQUIRE(check(fast.v, generic.v, 2300.0));
      REQUIRE(check(fast.omega, generic.omega, 5.5));
      for (int j = 0; j < 3; ++j) REQUIRE(check(fast.theta.col(j), generic.theta.col(j), 1.0));
      ++steps;
      nose_vertical += !IsExactlyZero(c.drift) &&
                       s.theta(0, 0) * s.theta(0, 0) + s.theta(1, 0) * s.theta(1, 0) <= 1e-12;
      capped += generic.omega.norm() > 5.5 - 1e-9;
      const double a2 = (generic.omega * dt).squaredNorm();
      short_series += a2 < kAerialSeriesMaxAngle2;
      long_series += a2 >= kAerialSeriesMaxAngle2 && a2 < kExpSo3SeriesMaxAngle2;
      closed_form += a2 >= kExpSo3SeriesMaxAngle2;
      s = generic;
    }
  }
  MESSAGE("largest difference / tolerance: " << worst
          << "; largest relative difference at turns <= kTurn: " << worst_120hz);
  CHECK(steps == 100000);
  CHECK(capped > 1000);         // the cap's branch was taken
  CHECK(nose_vertical >= 10);   // the drift with the nose vertical
  CHECK(short_series > 10000);  // and each way to ExpSo3's coefficients
  CHECK(long_series > 1000);
  CHECK(closed_form > 1000);
}

TEST_CASE("the aerial double path's usual step gives its general path's bits") {
  // Without a drift, rotating with the new rates and at 120 Hz, StepAerial for double decides the
  // cap, the drift and the series with one comparison against max_omega^2 (decision 0101). A cap
  // of 1000 rad/s (its max_omega^2 dt^2 above the series' limit) sends every step through the
  // general path instead, which decides them one by one; below 5.5 rad/s neither caps, so the two
  // must agree bit for bit. Random tumbling states under the cap, random inputs.
  std::mt19937_64 rng(20261130);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const AerialCoeffs<double> usual = Seed();
  AerialCoeffs<double> general = usual;
  general.max_omega = 1000.0;
  REQUIRE(usual.max_omega * usual.max_omega * (1.0 / 14400) < kAerialSeriesMaxAngle2);
  REQUIRE(general.max_omega * general.max_omega * (1.0 / 14400) >= kAerialSeriesMaxAngle2);
  long compared = 0;
  for (int i = 0; i < 20000; ++i) {
    CarState<double> s;
    s.x = Vec3<double>(u(rng), u(rng), u(rng)) * 3000.0;
    s.v = Vec3<double>(u(rng), u(rng), u(rng)) * 1300.0;
    s.omega = Vec3<double>(u(rng), u(rng), u(rng)) * 3.0;
    s.theta = EulerToMatrix(1.5 * u(rng), 3.1 * u(rng), 3.1 * u(rng));
    Controls in;
    in.pitch = u(rng);
    in.yaw = u(rng);
    in.roll = u(rng);
    in.throttle = u(rng);
    in.boost = u(rng) > 0.0 ? 1.0 : 0.0;
    const CarState<double> a = StepAerial(usual, s, in, 1.0 / 120, true);
    if (a.omega.norm() >= 5.5 - 1e-9) continue;  // capped: the two caps differ
    const CarState<double> b = StepAerial(general, s, in, 1.0 / 120, true);
    INFO("state " << i);
    REQUIRE(a.x == b.x);
    REQUIRE(a.v == b.v);
    REQUIRE(a.omega == b.omega);
    REQUIRE(a.theta == b.theta);
    ++compared;
  }
  CHECK(compared > 15000);
}

TEST_CASE("the aerial double path's short series is the exponential to round-off") {
  // Below kAerialSeriesMaxAngle2 the SSE2 StepAerial takes sin(a)/a and (1 - cos a)/a^2 from
  // their series to a^6. Turn a unit-speed car with zero inputs, drift and damping by angles from
  // 1e-9 rad to the switch in random directions (its orientation is then exp(Skew(omega dt))
  // theta, omega unchanged), and compare with the closed form in long double. Entries are at
  // most 1: a few ulps of 1 (2.2e-16 each); leaving out the a^6 terms would give > 1e-14.
  constexpr double kUlps = 4.0 * 2.220446049250313e-16;
  std::mt19937_64 rng(8);
  std::normal_distribution<double> gauss(0.0, 1.0);
  AerialCoeffs<double> c = Seed();
  c.damping.setZero();
  const double dt = 1.0 / 120;
  double worst = 0.0;
  for (int i = 0; i < 20000; ++i) {
    const double a = std::pow(10.0, -9.0 + 9.0 * (i % 1000) / 1000.0) *
                     std::sqrt(kAerialSeriesMaxAngle2) * (1.0 - 1e-9);
    const Eigen::Vector3d dir = Eigen::Vector3d(gauss(rng), gauss(rng), gauss(rng)).normalized();
    CarState<double> s = AtRest();
    s.theta = EulerToMatrix(1.5 * gauss(rng), 3.0 * gauss(rng), 3.0 * gauss(rng));
    s.omega = dir * (a / dt);
    const CarState<double> next = StepAerial(c, s, Controls{}, dt, true);
    const Eigen::Vector3d phi = s.omega * dt;
    const long double al = std::sqrt(static_cast<long double>(phi.squaredNorm()));
    const long double c1 = al > 0 ? std::sin(al) / al : 1.0L;
    const long double c2 = al > 0 ? (1.0L - std::cos(al)) / (al * al) : 0.5L;
    const Eigen::Matrix3d w = Skew<double>(phi);
    const Eigen::Matrix3d w2 = w * w;
    for (int row = 0; row < 3; ++row)
      for (int col = 0; col < 3; ++col) {
        long double want = 0.0L;
        for (int k = 0; k < 3; ++k)
          want += ((row == k ? 1.0L : 0.0L) + c1 * w(row, k) + c2 * w2(row, k)) * s.theta(k, col);
        worst = std::max(worst, static_cast<double>(std::abs(next.theta(row, col) - want)));
      }
  }
  MESSAGE("largest difference from the closed form: " << worst);
  CHECK(worst <= kUlps);
}
#endif

TEST_CASE("boost pushes along the nose with full air throttle") {
  const auto c = Seed();
  Controls u;
  u.boost = 1.0;
  const double dt = 1.0 / 120;
  const CarState<double> next = StepAerial(c, AtRest(), u, dt, true);
  CHECK(next.v.x() == doctest::Approx((c.boost_accel + c.throttle_accel) * dt));
  CHECK(next.v.z() == doctest::Approx(-650.0 * dt));
  Controls half_boost;  // boost held for half the step
  half_boost.boost = 0.5;
  CHECK(StepAerial(c, AtRest(), half_boost, dt, true).v.x() ==
        doctest::Approx(0.5 * (c.boost_accel + c.throttle_accel) * dt));
}

TEST_CASE("inputs act after the delay, averaged over the step") {
  Episode ep;
  ep.rows.resize(3);
  for (int k = 0; k < 3; ++k) ep.rows[k].t_s = 0.1 * k;
  ep.rows[1].input.boost = true;
  ep.rows[1].input.pitch = 1.0;
  ep.step_dt_s = {0.1, 0.1};
  Integration integ;
  integ.input_delay_s = 0.05;
  integ.tick_aligned_inputs = false;
  // No clock: row 1's input acts from 0.15 s to 0.25 s.
  const Controls a = ControlsOver(ep, 0.1, 0.2, integ);
  CHECK(a.boost == doctest::Approx(0.5));
  CHECK(a.pitch == doctest::Approx(0.5));
  CHECK(ControlsOver(ep, 0.15, 0.25, integ).boost == doctest::Approx(1.0));
  CHECK(ControlsOver(ep, 0.0, 0.1, integ).boost == doctest::Approx(0.0));
  integ.input_delay_s = 0.0;
  CHECK(ControlsOver(ep, 0.2, 0.3, integ).boost == doctest::Approx(0.0));
  // Tick-aligned without a clock: half a tick (at 10 ticks/s, 0.05 s) later on average.
  integ.tick_aligned_inputs = true;
  integ.tick_rate_hz = 10.0;
  integ.input_delay_s = 0.0;
  CHECK(ControlsOver(ep, 0.1, 0.2, integ).boost == doctest::Approx(0.5));
  integ.tick_rate_hz = 120.0;

  // With the clock known, switches wait for the next tick: ticks every 0.4 rows from clock
  // row 0; row 0 sits at clock row 10.1, so row 1 (clock 11.1) + 0.5 rows switches at the
  // tick at clock 11.6 -> episode time 0.15 s; row 2 (12.1 + 0.5) at 12.8 -> 0.27 s.
  ep.clock_origin_rows = 10.1;
  integ.input_delay_s = 0.05;
  integ.tick_aligned_inputs = true;
  integ.ticks_per_clock_row = 2.5;
  CHECK(ControlsOver(ep, 0.1, 0.2, integ).boost == doctest::Approx(0.5));
  CHECK(ControlsOver(ep, 0.2, 0.3, integ).boost == doctest::Approx(0.7));
  // The ticks a quarter tick later (tick_phase 0.25: clock rows 0.4 i + 0.1): row 1 switches at
  // the tick at clock 11.7 -> 0.16 s, row 2 at 12.9 -> 0.28 s.
  integ.tick_phase = 0.25;
  CHECK(ControlsOver(ep, 0.1, 0.2, integ).boost == doctest::Approx(0.4));
  CHECK(ControlsOver(ep, 0.2, 0.3, integ).boost == doctest::Approx(0.8));
  integ.tick_phase = 0.0;
  integ.tick_aligned_inputs = false;
  CHECK(ControlsOver(ep, 0.2, 0.3, integ).boost == doctest::Approx(0.5));
}

TEST_CASE("a row of ~1/61 s takes two physics ticks, a 120 Hz row one") {
  CHECK(SubstepsForRow(1.0 / 60.96, 120.0) == 2);
  CHECK(SubstepsForRow(1.0 / 120, 120.0) == 1);
  CHECK(SubstepsForRow(2.0 / 120, 120.0) == 2);
  CHECK(SubstepsForRow(1e-4, 120.0) == 1);
}

}  // namespace
}  // namespace rlfit
