// Tests of the car model across regimes: landing on a floor and driving on, driving off a ledge
// of a hand-made arena and flying, the switch's determinism, and the on_ground agreement and
// row labels of a hand-made episode.
#include <cmath>
#include <vector>

#include <Eigen/Geometry>
#include <doctest/doctest.h>

#include "src/models/car.h"
#include "src/replay/regime.h"
#include "tests/surface_test_util.h"

namespace rlfit {
namespace {

constexpr double kTickS = 1.0 / 120.0;    // one physics tick, s
constexpr double kRowDtS = 1.0 / 60.96;   // one ~61 Hz episode row, s (datasets README)

// Two triangles covering [x0, x1] x [-y, y] at height z.
void AddRectangle(double x0, double x1, double y, double z, std::vector<Triangle>* t) {
  Triangle a, b;
  const float fx0 = static_cast<float>(x0), fx1 = static_cast<float>(x1);
  const float fy = static_cast<float>(y), fz = static_cast<float>(z);
  a.p[0] = {fx0, -fy, fz};
  a.p[1] = {fx1, -fy, fz};
  a.p[2] = {fx1, fy, fz};
  b.p[0] = {fx0, -fy, fz};
  b.p[1] = {fx1, fy, fz};
  b.p[2] = {fx0, fy, fz};
  t->push_back(a);
  t->push_back(b);
}

// The floor z = 0, far beyond any test position.
Arena Floor() {
  std::vector<Triangle> t;
  AddRectangle(-1.0e5, 1.0e5, 1.0e5, 0.0, &t);
  return Arena(t);
}

// A floor that ends at x = 0 (a ledge: nothing beyond it).
Arena Ledge() {
  std::vector<Triangle> t;
  AddRectangle(-5000.0, 0.0, 5000.0, 0.0, &t);
  return Arena(t);
}

CarCoeffs<double> Defaults() { return CarCoeffs<double>::FromArray(CarLayout().defaults.data()); }

CarModelState<double> Car(const Eigen::Vector3d& x, const Eigen::Vector3d& v,
                          const Eigen::Matrix3d& theta = Eigen::Matrix3d::Identity()) {
  CarModelState<double> s;
  s.body.x = x;
  s.body.v = v;
  s.body.omega.setZero();
  s.body.theta = theta;
  return s;
}

TEST_CASE("the car's layout is the aerial, the ground then the surface layout, prefixed") {
  const CoeffLayout& car = CarLayout();
  REQUIRE(car.size() == AerialLayout().size() + GroundLayout().size() + SurfaceLayout().size());
  CHECK(car.names[0] == "aerial." + AerialLayout().names[0]);
  CHECK(car.names[CarCoeffs<double>::kGroundOffset] == "ground." + GroundLayout().names[0]);
  CHECK(car.names[CarCoeffs<double>::kWallOffset] == "wall." + SurfaceLayout().names[0]);
  CHECK(car.blocks.size() == AerialLayout().blocks.size() + GroundLayout().blocks.size() +
                                 SurfaceLayout().blocks.size());
  CHECK(car.blocks.back().name == "wall.surface");
  // The surface set defaults to the wall model's fit (results/wall/coeffs.json).
  CHECK(car.defaults[CarCoeffs<double>::kWallOffset] == doctest::Approx(0.9508).epsilon(1e-4));
  CHECK(car.blocks.back().offset + car.blocks.back().size == car.size());
  const CarCoeffs<double> c = Defaults();
  CHECK(c.air.torque(0) == AerialLayout().defaults[0]);
  CHECK(c.ground.throttle_accel == GroundLayout().defaults[0]);
}

TEST_CASE("a car falling onto the floor lands, settles upright and drives on") {
  const Arena floor = Floor();
  const CarCoeffs<double> c = Defaults();
  // Tilted 8 degrees about the forward axis, falling at 400 uu/s while rolling forward.
  const Eigen::Matrix3d tilt =
      Eigen::AngleAxisd(8.0 * M_PI / 180.0, Eigen::Vector3d::UnitX()).toRotationMatrix();
  CarModelState<double> s = Car({0.0, 0.0, 120.0}, {300.0, 0.0, -400.0}, tilt);
  Controls u;
  u.throttle = 1.0;
  int landed_at = -1;
  for (int i = 0; i < 120 && landed_at < 0; ++i) {
    s = StepCar(c, floor, s, u, kTickS, true);
    CHECK(s.regime != CarRegime::kUnknown);
    if (s.regime == CarRegime::kSurface) landed_at = i;
  }
  REQUIRE(landed_at > 0);  // it was in the air first
  // Centre 120 uu up, falling from 400 uu/s: the wheel point (17.01 cos 8 = 16.84 below) meets
  // the 10 uu contact band when 120 - 400 t - 325 t^2 = 26.84, t = 0.200 s: tick 24 (0-based 23).
  CHECK(landed_at >= 22);
  CHECK(landed_at <= 25);
  CHECK(s.body.x.z() == game::kCarRestHeight);
  CHECK(s.body.theta(2, 2) == doctest::Approx(1.0).epsilon(1e-12));  // aligned with the floor
  const double speed_at_landing = s.body.v.x();
  for (int i = 0; i < 60; ++i) {
    s = StepCar(c, floor, s, u, kTickS, true);
    REQUIRE(s.regime == CarRegime::kSurface);
  }
  CHECK(s.regime_ticks == 61);
  // Half a second of full throttle from 320 uu/s: the drive curve gives 1270-1090 uu/s^2
  // between 320 and 600 uu/s, ~1000 on average up to 820: ~500 uu/s gained.
  CHECK(s.body.v.x() > speed_at_landing + 400.0);
  CHECK(s.body.x.z() == game::kCarRestHeight);
}

TEST_CASE("a car driving off a ledge flies and falls") {
  const Arena ledge = Ledge();
  const CarCoeffs<double> c = Defaults();
  CarModelState<double> s =
      Car({-400.0, 0.0, game::kCarRestHeight}, {1000.0, 0.0, game::kCarRestReportedVz});
  Controls u;
  u.throttle = 1.0;
  bool was_on_floor = false;
  int took_off_at = -1;
  for (int i = 0; i < 90; ++i) {
    s = StepCar(c, ledge, s, u, kTickS, true);
    if (s.body.x.x() < -kCarWheelContactUu) CHECK(s.on_floor);
    // Over the edge the wheels still touch it for a few ticks (kSurface), but the closest
    // feature is the edge, not the flat floor: the surface step lets go (the edge's normal is
    // more than 30 degrees from the up axis after its tick) and the car flies from the first
    // of them on, level (StepSurface's turn around the edge is dropped).
    if (was_on_floor && !s.on_floor) {
      took_off_at = i;
      // The ground step's reported rest vz is not motion: the car leaves level, then falls.
      CHECK(s.body.v.z() == doctest::Approx(game::kGravityZ * kTickS).epsilon(1e-9));
    }
    was_on_floor = s.on_floor;
  }
  REQUIRE(took_off_at > 0);
  CHECK(s.regime == CarRegime::kAir);
  // Past the edge by the contact band, then gravity alone for the remaining ticks.
  const double t_air = (90 - took_off_at) * kTickS;
  CHECK(s.body.x.z() < game::kCarRestHeight - 0.4 * -game::kGravityZ * t_air * t_air);
  CHECK(s.body.x.x() > 0.0);
}

TEST_CASE("a car touching a wall with its wheels is on a surface and the wall step holds it") {
  // The floor and a wall at x = 500 facing -x: the car runs StepSurface, not the floor step.
  std::vector<Triangle> t;
  AddRectangle(-5000.0, 500.0, 5000.0, 0.0, &t);
  Triangle a, b;
  a.p[0] = {500.0f, -5000.0f, 0.0f};
  a.p[1] = {500.0f, 5000.0f, 2000.0f};
  a.p[2] = {500.0f, 5000.0f, 0.0f};
  b.p[0] = {500.0f, -5000.0f, 0.0f};
  b.p[1] = {500.0f, -5000.0f, 2000.0f};
  b.p[2] = {500.0f, 5000.0f, 2000.0f};
  t.push_back(a);
  t.push_back(b);
  const Arena arena(t);
  // Nose up, wheels (up axis) toward the wall: forward +z, left +y, up -x; 5 uu off the wall.
  Eigen::Matrix3d theta;
  theta.col(0) = Eigen::Vector3d::UnitZ();
  theta.col(1) = Eigen::Vector3d::UnitY();
  theta.col(2) = -Eigen::Vector3d::UnitX();
  CarModelState<double> s = Car({500.0 - game::kCarRestHeight - 5.0, 0.0, 300.0}, {0, 0, 0}, theta);
  const CarCoeffs<double> c = Defaults();
  Controls u;
  u.throttle = 1.0;
  for (int i = 0; i < 6; ++i) {
    s = StepCar(c, arena, s, u, kTickS, true);
    CHECK(s.regime == CarRegime::kSurface);
    CHECK(!s.on_floor);
    CHECK(s.on_surface);
    CHECK(!s.left_surface);
    // Put at rest height in front of the wall (not at the floor's height, not falling free).
    CHECK(s.body.x.x() == doctest::Approx(500.0 - game::kCarRestHeight).epsilon(1e-9));
    CHECK(s.body.theta.col(2).dot(-Eigen::Vector3d::UnitX()) > 0.9999);
  }
  // Throttle up the wall: it climbs (free fall would have taken it below 300).
  CHECK(s.body.x.z() > 300.0);
  CHECK(s.body.v.z() > 0.0);
}

TEST_CASE("a car drives from the floor up a ramp onto a wall through the car model") {
  const Arena arena = testing::FloorRampWall();
  const CarCoeffs<double> c = Defaults();
  CarModelState<double> s;
  s.body = testing::OnFloor(-600.0, 0.0, 0.0, 1400.0);
  Controls u;
  u.throttle = 1.0;
  int floor_ticks = 0, surface_ticks = 0;
  bool always_drivable = true;
  for (int i = 0; i < 96; ++i) {  // 0.8 s at full throttle
    s = StepCar(c, arena, s, u, kTickS, true);
    REQUIRE(s.regime == CarRegime::kSurface);
    REQUIRE(!s.left_surface);
    floor_ticks += s.on_floor;
    surface_ticks += s.on_surface;
    // The surface step's states are on their wheels where it drives (IsOnSurface). (The floor
    // step's last state before the ramp is not: upright, with the ramp's face the closest.)
    if (s.on_surface)
      always_drivable =
          always_drivable && IsOnSurface(c.wall, arena, s.body.x, s.body.theta.col(2));
  }
  CHECK(always_drivable);
  CHECK(floor_ticks > 20);    // 600 uu of floor at ~1400 uu/s: ~50 ticks
  CHECK(surface_ticks > 20);  // then the ramp and the wall
  CHECK(!s.on_floor);
  // On the wall: centre at rest height in front of it, up axis along -x, nose up, climbing.
  CHECK(s.body.x.x() == doctest::Approx(testing::kRampTopUu - game::kCarRestHeight).epsilon(1e-6));
  CHECK(s.body.x.z() > 350.0);
  CHECK(s.body.theta.col(2).dot(Eigen::Vector3d(-1, 0, 0)) > 0.999);
  CHECK(s.body.theta.col(0).z() > 0.999);
  CHECK(s.body.v.z() > 500.0);
  // Coasting, it slides back down the wall and the ramp onto the floor, where StepGround runs.
  u.throttle = 0.0;
  for (int i = 0; i < 1200; ++i) s = StepCar(c, arena, s, u, kTickS, true);
  CHECK(s.on_floor);
  CHECK(s.body.x.z() == doctest::Approx(game::kCarRestHeight).epsilon(1e-6));
  CHECK(s.body.x.x() < 0.0);
}

TEST_CASE("the car's row labels cover the floor, the ramp and the wall alike") {
  const Arena arena = testing::FloorRampWall();
  const Episode ep = testing::SurfaceEpisode(
      Defaults().ground, Defaults().wall, arena, testing::OnFloor(-600.0, 0.0, 0.0, 1400.0), 50,
      [](int) {
        CarInputs u;
        u.throttle = 1.0;
        return u;
      });
  REQUIRE(ep.rows.back().theta.col(2).x() < -0.999);  // it reached the wall
  const std::vector<Regime> r = ClassifyRows("car", ep, arena);
  for (int k = 0; k < ep.size(); ++k) {
    INFO("row " << k);
    CHECK(r[k] == Regime::kCovered);
  }
}

TEST_CASE("a car the surface step lets go of (the ceiling) flies, and lands anew only after") {
  // A ceiling z = 1000 facing down; the car on it, wheels up: gravity pulls it off.
  std::vector<Triangle> t;
  AddRectangle(-5000.0, 5000.0, 5000.0, 1000.0, &t);
  const Arena arena(t);
  Eigen::Matrix3d theta;  // upside down: forward +x, left -y, up -z
  theta.col(0) = Eigen::Vector3d::UnitX();
  theta.col(1) = -Eigen::Vector3d::UnitY();
  theta.col(2) = -Eigen::Vector3d::UnitZ();
  CarModelState<double> s = Car({0.0, 0.0, 1000.0 - game::kCarRestHeight}, {500, 0, 0}, theta);
  const CarCoeffs<double> c = Defaults();
  const double z_left = s.body.x.z();
  s = StepCar(c, arena, s, Controls{}, kTickS, true);
  // The surface step lets go: the tick is flown (gravity alone, no rest speed: it starts from
  // rest on the ceiling, the first tick ran no surface step).
  CHECK(s.regime == CarRegime::kAir);
  CHECK(!s.on_surface);
  CHECK(s.left_surface);
  CHECK(s.body.v.z() == doctest::Approx(game::kGravityZ * kTickS).epsilon(1e-9));
  s = StepCar(c, arena, s, Controls{}, kTickS, true);
  CHECK(s.regime == CarRegime::kAir);  // wheels still within reach, but it left
  CHECK(s.left_surface);
  for (int i = 0; i < 60 && s.left_surface; ++i) s = StepCar(c, arena, s, Controls{}, kTickS, true);
  CHECK(!s.left_surface);  // out of the ceiling's reach: lands anew if it comes back
  for (int i = 0; i < 60; ++i) s = StepCar(c, arena, s, Controls{}, kTickS, true);
  CHECK(s.regime == CarRegime::kAir);
  CHECK(s.body.x.z() < z_left - 100.0);  // falling
}

TEST_CASE("the switch is deterministic: the same inputs give the same states and regimes") {
  const Arena ledge = Ledge();
  const CarCoeffs<double> c = Defaults();
  auto run = [&] {
    std::vector<CarModelState<double>> out;
    CarModelState<double> s = Car({-300.0, 50.0, 60.0}, {900.0, 100.0, -200.0});
    Controls u;
    u.throttle = 1.0;
    u.steer = 0.3;
    u.boost = 0.5;
    for (int i = 0; i < 120; ++i) {
      s = StepCar(c, ledge, s, u, kTickS, true);
      out.push_back(s);
    }
    return out;
  };
  const auto a = run(), b = run();
  bool surface = false, air = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].regime == b[i].regime);
    REQUIRE(a[i].regime_ticks == b[i].regime_ticks);
    REQUIRE(a[i].body.x == b[i].body.x);  // bit for bit
    REQUIRE(a[i].body.theta == b[i].body.theta);
    surface = surface || a[i].regime == CarRegime::kSurface;
    air = air || a[i].regime == CarRegime::kAir;
  }
  CHECK(surface);  // lands on the platform, then drives off its edge
  CHECK(air);
}

Episode Make(std::vector<Sample> rows) {
  Episode ep;
  ep.path = ep.name = "hand.csv";
  ep.kind = EpisodeKind::kCar;
  ep.rows = std::move(rows);
  for (int k = 0; k < ep.size(); ++k) {
    ep.rows[k].t_s = k * kRowDtS;
    if (k + 1 < ep.size()) {
      ep.step_dt_s.push_back(kRowDtS);
      ep.step_ticks.push_back(2);
    }
  }
  return ep;
}

Sample Row(double z, bool on_ground) {
  Sample s;
  s.x = Eigen::Vector3d(100.0, -200.0, z);
  s.on_ground = on_ground;
  return s;
}

TEST_CASE("on_ground against the switch on a hand-made episode, and the car's row labels") {
  const Arena floor = Floor();
  std::vector<Sample> rows;
  for (int k = 0; k < 4; ++k) rows.push_back(Row(game::kCarRestHeight, true));  // 0-3 driving
  rows.push_back(Row(game::kCarRestHeight, false));  // 4: flag off on the floor (disagrees)
  rows.push_back(Row(game::kCarRestHeight + 9.0, true));  // 5: within the band (agrees)
  rows.push_back(Row(game::kCarRestHeight + 11.0, true));  // 6: beyond it (disagrees)
  for (int k = 0; k < 3; ++k) rows.push_back(Row(400.0, false));  // 7-9 flying
  rows.push_back(Row(60.0, false));  // 10: flying, body near the floor
  rows.push_back(Row(400.0, false));  // 11
  rows.back().input.jump = true;
  rows.push_back(Row(400.0, false));  // 12: the row after a jump input
  rows.push_back(Row(game::kCarRestHeight, true));  // 13
  rows.back().input.handbrake = true;
  // 14, 15: on the floor but tilted 5 degrees (landing rows)
  for (int k = 0; k < 2; ++k) {
    rows.push_back(Row(game::kCarRestHeight, true));
    rows.back().theta =
        Eigen::AngleAxisd(5.0 * M_PI / 180.0, Eigen::Vector3d::UnitY()).toRotationMatrix();
  }
  const Episode ep = Make(rows);

  const std::vector<CarStepChoice> choices = CarChoicesOnRecorded(ep, floor);
  std::vector<signed char> decision;
  for (const CarStepChoice& c : choices) decision.push_back(c.regime == CarRegime::kSurface);
  const OnGroundAgreement a = CompareOnGround(ep, decision);
  CHECK(a.rows == 16);
  CHECK(a.surface_not_flagged == 1);  // row 4
  CHECK(a.flagged_in_air == 1);       // row 6
  CHECK(a.agree == 14);
  CHECK(a.Percent() == doctest::Approx(100.0 * 14 / 16));
  // Rows without a decision are not counted.
  decision[0] = decision[6] = -1;
  const OnGroundAgreement b = CompareOnGround(ep, decision);
  CHECK(b.rows == 14);
  CHECK(b.flagged_in_air == 0);

  const std::vector<Regime> r = ClassifyRows("car", ep, floor);
  CHECK(r[0] == Regime::kCovered);
  CHECK(r[4] == Regime::kCovered);        // the switch decides, not the flag
  CHECK(r[5] == Regime::kOffFlatFloor);   // on a surface, above the floor's band
  CHECK(r[6] == Regime::kTouchingSurface);  // in the air, within reach of the floor
  CHECK(r[7] == Regime::kCovered);
  CHECK(r[10] == Regime::kTouchingSurface);
  CHECK(r[11] == Regime::kJumping);
  CHECK(r[12] == Regime::kJumping);
  CHECK(r[13] == Regime::kHandbrake);
  CHECK(r[14] == Regime::kHandbrake);     // the row after a handbrake input
  CHECK(r[15] == Regime::kOffFlatFloor);  // on the floor, not lying flat on it
}

}  // namespace
}  // namespace rlfit
