// Tests of the row regimes: hand-made car and ball episodes classified per model, the covered
// stretches, and the classification of the real recordings (skipped without the datasets).
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Geometry>
#include <doctest/doctest.h>

#include "src/common/error.h"
#include "src/io/recording.h"
#include "src/replay/regime.h"
#include "tests/test_util.h"
#include "tests/surface_test_util.h"

namespace rlfit {
namespace {

constexpr double kRowDtS = 1.0 / 60.96;  // one ~61 Hz episode row, s (datasets README)

Sample Car(double z, bool on_ground) {
  Sample s;
  s.x = Eigen::Vector3d(100.0, -200.0, z);
  s.on_ground = on_ground;
  return s;
}

TEST_CASE("the car's reach is the farthest corner of the Octane hitbox") {
  double corner2 = 0.0;
  for (int i = 0; i < 3; ++i) {
    const double c = std::abs(kOctaneHitboxOffsetUu[i]) + kOctaneHitboxHalfUu[i];
    corner2 += c * c;
  }
  CHECK(kCarSurfaceReachUu >= std::sqrt(corner2));
  CHECK(kCarSurfaceReachUu < std::sqrt(corner2) + 0.1);  // rounded up, not padded
}

TEST_CASE("aerial: airborne and clear of the mesh is covered, whatever the jump state") {
  const Arena floor = testing::FlatFloor();
  Sample jumping = Car(800.0, false);
  jumping.input.jump = true;
  jumping.jumped = true;
  Sample tilted = Car(800.0, false);
  tilted.theta = Eigen::AngleAxisd(1.2, Eigen::Vector3d::UnitX()).toRotationMatrix();
  const Episode ep = testing::HandMadeEpisode(EpisodeKind::kCar,
                          {Car(17.01, true),                     // resting on the floor
                           Car(800.0, true),                     // flag set: trust it
                           Car(17.01, false),                    // flag off, wheels down
                           Car(kCarSurfaceReachUu - 1.0, false),  // a corner may touch
                           Car(kCarSurfaceReachUu + 1.0, false),  // clear of the floor
                           jumping, tilted});
  const std::vector<Regime> r = ClassifyRows("aerial", ep, floor);
  REQUIRE(r.size() == 7);
  CHECK(r[0] == Regime::kOnGround);
  CHECK(r[1] == Regime::kOnGround);
  CHECK(r[2] == Regime::kTouchingSurface);
  CHECK(r[3] == Regime::kTouchingSurface);
  CHECK(r[4] == Regime::kCovered);
  CHECK(r[5] == Regime::kCovered);
  CHECK(r[6] == Regime::kCovered);
  // Without a datasets root the surface test falls back to the floor plane: same answers here.
  CHECK(ClassifyRows("aerial", ep, std::string()) == r);
}

TEST_CASE("ground: on the flat floor, upright, no handbrake is covered") {
  Sample high = Car(17.01 + kGroundHeightBandUu + 0.5, true);  // on a ramp's foot
  Sample wall = Car(300.0, true);
  wall.theta = Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitX()).toRotationMatrix();
  Sample tilted = Car(17.01, true);  // at rest height but leaning (the floor's curved edge)
  const double tilt = 1.5 * std::acos(kGroundUprightMinCos);
  tilted.theta = Eigen::AngleAxisd(tilt, Eigen::Vector3d::UnitY()).toRotationMatrix();
  Sample leaning = Car(17.01, true);  // within the measured band
  leaning.theta =
      Eigen::AngleAxisd(0.5 * std::acos(kGroundUprightMinCos), Eigen::Vector3d::UnitY())
          .toRotationMatrix();
  Sample handbrake = Car(17.01, true);
  handbrake.input.handbrake = true;
  Sample settling = Car(17.01 - 0.5 * kGroundHeightBandUu, true);
  const Episode ep = testing::HandMadeEpisode(
      EpisodeKind::kCar,
      {Car(17.01, true), Car(17.01, false), high, wall, tilted, leaning, handbrake, settling});
  // The ground test needs no mesh: an empty datasets root is fine.
  const std::vector<Regime> r = ClassifyRows("ground", ep, std::string());
  REQUIRE(r.size() == 8);
  CHECK(r[0] == Regime::kCovered);
  CHECK(r[1] == Regime::kAirborne);
  CHECK(r[2] == Regime::kOffFlatFloor);
  CHECK(r[3] == Regime::kOffFlatFloor);
  CHECK(r[4] == Regime::kOffFlatFloor);
  CHECK(r[5] == Regime::kCovered);
  CHECK(r[6] == Regime::kHandbrake);
  CHECK(r[7] == Regime::kCovered);
}

// A ball in free flight under the classifier's own gravity and drag from (x, v), 60 rows.
Episode FreeBall(const Eigen::Vector3d& x0, const Eigen::Vector3d& v0) {
  const BallCoeffs<double> c = BallCoeffs<double>::FromArray(BallLayout().defaults.data());
  std::vector<Sample> rows(60);
  Eigen::Vector3d x = x0, v = v0;
  for (Sample& s : rows) {
    s.x = x;
    s.v = v;
    v.z() += c.gravity_z * kRowDtS;
    v *= std::exp(c.drag * kRowDtS);
    x += v * kRowDtS;
  }
  return testing::HandMadeEpisode(EpisodeKind::kBall, rows);
}

TEST_CASE("ball: a velocity jump far from any surface marks both rows of the step") {
  const Arena floor = testing::FlatFloor();
  Episode ep = FreeBall({0, 0, 1500}, {300, 0, 200});
  CHECK(CountRegimes(ClassifyRows("ball", ep, floor))[0] == ep.size());  // free flight
  // A car hit between rows 29 and 30: every later row carries 800 uu/s more along y.
  for (int k = 30; k < ep.size(); ++k) ep.rows[k].v.y() += 800.0;
  const std::vector<Regime> r = ClassifyRows("ball", ep, floor);
  for (int k = 0; k < ep.size(); ++k) {
    INFO("row " << k);
    CHECK(r[k] == (k == 29 || k == 30 ? Regime::kCarTouch : Regime::kCovered));
  }
  const auto stretches = CoveredStretches(r);
  REQUIRE(stretches.size() == 2);
  CHECK(stretches[0] == std::make_pair(0, 28));
  CHECK(stretches[1] == std::make_pair(31, ep.size() - 1));

  // The same jump next to the floor is a bounce, not a car.
  Episode low = FreeBall({0, 0, 100}, {300, 0, 0});
  for (int k = 30; k < low.size(); ++k) low.rows[k].v.y() += 800.0;
  REQUIRE(low.rows[30].x.z() < game::kBallContactRadius + kBallSurfaceMarginUu);
  CHECK(CountRegimes(ClassifyRows("ball", low, floor))[0] == low.size());
}

// The floor z = 0 for x <= 0 and a 30 degree ramp rising from the line x = 0: a crease where
// two flat patches meet at an angle (like the floor and the side ramps of pitch.dat).
Arena FloorAndRamp() {
  constexpr float kFar = 1.0e4f;
  const float rise = kFar * static_cast<float>(std::tan(M_PI / 6.0));
  std::vector<Triangle> t(4);
  t[0].p[0] = {-kFar, -kFar, 0};
  t[0].p[1] = {0, -kFar, 0};
  t[0].p[2] = {0, kFar, 0};
  t[1].p[0] = {-kFar, -kFar, 0};
  t[1].p[1] = {0, kFar, 0};
  t[1].p[2] = {-kFar, kFar, 0};
  t[2].p[0] = {0, -kFar, 0};
  t[2].p[1] = {kFar, -kFar, rise};
  t[2].p[2] = {kFar, kFar, rise};
  t[3].p[0] = {0, -kFar, 0};
  t[3].p[1] = {kFar, kFar, rise};
  t[3].p[2] = {0, kFar, 0};
  return Arena(t);
}

TEST_CASE("ball situation: free flight, a floor bounce, rolling, a seam, the goal") {
  const Arena arena = FloorAndRamp();
  const BallCoeffs<double> c = BallCoeffs<double>::FromArray(BallLayout().defaults.data());
  const double r = c.contact_radius;
  auto one = [&](Eigen::Vector3d x, Eigen::Vector3d v) {
    Sample s;
    s.x = x;
    s.v = v;
    return testing::HandMadeEpisode(EpisodeKind::kBall, {s, s});
  };
  CHECK(BallSituation(one({-3000, 0, 500}, {0, 0, -500}), 1, arena, c) == "free flight");
  CHECK(BallSituation(one({-3000, 0, r}, {0, 0, -500}), 1, arena, c) == "bounce floor");
  CHECK(BallSituation(one({-3000, 0, r}, {300, 0, 0}), 1, arena, c) == "roll floor");
  // Touching both patches of the crease, deeper in the ramp: the closest feature (the ramp's
  // face) and the penetration-weighted average of both differ by more than kBallSeamDeg.
  const std::string crease = BallSituation(one({5, 0, r - 2}, {0, 0, -500}), 1, arena, c);
  CHECK(crease.find("at a seam") != std::string::npos);
  CHECK(BallSituation(one({-3000, kGoalLineY + 200, r}, {0, 400, -500}), 1, arena, c) ==
        "bounce goal");
  // A contact on the rows before (or the row after) the one asked about counts.
  Episode ep = one({-3000, 0, 500}, {0, 0, -500});
  ep.rows[0].x.z() = r;
  CHECK(BallSituation(ep, 1, arena, c) == "bounce floor");
}

TEST_CASE("the arena's vertex box (what `outside the arena` tests) spans every vertex") {
  const Arena arena = FloorAndRamp();
  const float rise = 1.0e4f * static_cast<float>(std::tan(M_PI / 6.0));
  CHECK(arena.Box().lo == Eigen::Vector3d(-1.0e4, -1.0e4, 0.0));
  CHECK(arena.Box().hi == Eigen::Vector3d(1.0e4, 1.0e4, static_cast<double>(rise)));
}

TEST_CASE("unknown models and episodes of the wrong kind are input errors") {
  const Arena floor = testing::FlatFloor();
  const Episode car =
      testing::HandMadeEpisode(EpisodeKind::kCar, {Car(500, false), Car(500, false)});
  const Episode ball = FreeBall({0, 0, 1500}, {0, 0, 0});
  CHECK_THROWS_AS(ClassifyRows("boat", car, floor), InputError);
  CHECK_THROWS_AS(ClassifyRows("boat", car, std::string()), InputError);
  CHECK_THROWS_AS(ClassifyRows("ball", car, floor), InputError);
  CHECK_THROWS_AS(ClassifyRows("aerial", ball, floor), InputError);
  CHECK_THROWS_AS(ClassifyRows("ground", ball, std::string()), InputError);
}

TEST_CASE("covered stretches: maximal runs of at least two covered rows") {
  using R = Regime;
  using Runs = std::vector<std::pair<int, int>>;
  CHECK(CoveredStretches({}).empty());
  CHECK(CoveredStretches({R::kCovered}).empty());
  CHECK(CoveredStretches({R::kOnGround, R::kOnGround}).empty());
  CHECK(CoveredStretches({R::kCovered, R::kOnGround, R::kCovered}).empty());
  CHECK(CoveredStretches({R::kCovered, R::kCovered}) == Runs{{0, 1}});
  CHECK(CoveredStretches({R::kCovered, R::kCovered, R::kAirborne, R::kCovered, R::kHandbrake,
                          R::kCovered, R::kCovered, R::kCovered}) == Runs{{0, 1}, {5, 7}});
  CHECK(CoveredStretches({R::kCarTouch, R::kCovered, R::kCovered, R::kCarTouch}) ==
        Runs{{1, 2}});
}

TEST_CASE("counts per regime add up to the rows") {
  const std::vector<Regime> r = {Regime::kCovered, Regime::kCarTouch, Regime::kCarTouch,
                                 Regime::kHandbrake};
  const std::vector<int> n = CountRegimes(r);
  REQUIRE(static_cast<int>(n.size()) == kRegimeCount);
  CHECK(n[static_cast<int>(Regime::kCovered)] == 1);
  CHECK(n[static_cast<int>(Regime::kCarTouch)] == 2);
  CHECK(n[static_cast<int>(Regime::kHandbrake)] == 1);
  CHECK(n[static_cast<int>(Regime::kOnGround)] == 0);
}

// --- the recordings ---------------------------------------------------------------------

// Rows of `model`'s classification over the recordings at `relative` (under the data root):
// per Regime value.
std::vector<int> CountOver(const std::string& model, const std::string& relative,
                           const std::string& root) {
  std::vector<int> total(kRegimeCount, 0);
  for (const Episode& ep : ReadRecordings({root + "/" + relative})) {
    const std::vector<int> n = CountRegimes(ClassifyRows(model, ep, root));
    for (int i = 0; i < kRegimeCount; ++i) total[i] += n[i];
  }
  return total;
}

int Sum(const std::vector<int>& n) {
  int s = 0;
  for (int x : n) s += x;
  return s;
}

TEST_CASE("recordings: the aerial episodes are nearly all covered by the aerial model") {
  const std::string root = testing::DataRoot();
  if (root.empty()) return;  // no datasets on this machine
  // Measured: every row, the car's centre at least 175 uu from the mesh (106 in freefalling).
  const std::vector<int> n = CountOver("aerial", "car_control/aerial", root);
  CHECK(n[0] == Sum(n));
  const std::vector<int> f = CountOver("aerial", "car_control/freefalling", root);
  CHECK(f[0] == Sum(f));
}

TEST_CASE("recordings: freefall_spinning.txt is mostly on the ground for the aerial model") {
  const std::string root = testing::DataRoot();
  if (root.empty()) return;
  // Measured: 215 of 1,043 rows covered, 781 on the ground, 47 near the floor.
  const std::vector<int> n = CountOver("aerial", "car_control/freefall_spinning.txt", root);
  CHECK(n[0] < 0.5 * Sum(n));
  CHECK(n[static_cast<int>(Regime::kOnGround)] > 0.5 * Sum(n));
  CHECK(n[static_cast<int>(Regime::kTouchingSurface)] > 0);
}

TEST_CASE("recordings: wall_driving leaves wall rows out of the ground model") {
  const std::string root = testing::DataRoot();
  if (root.empty()) return;
  const std::vector<int> wall = CountOver("ground", "car_control/wall_driving", root);
  CHECK(wall[static_cast<int>(Regime::kOffFlatFloor)] > 0.1 * Sum(wall));
  const std::vector<int> flat =
      CountOver("ground", "car_control/ground_driving_no_handbrake", root);
  CHECK(flat[0] > 0.95 * Sum(flat));
}

TEST_CASE("recordings: no bounce of ball_trajectories is taken for a car touch") {
  const std::string root = testing::DataRoot();
  if (root.empty()) return;
  // Measured: no car touches the ball in that folder (far from the mesh the largest velocity
  // step is 1.9 uu/s), while 3,092 steps near it change v by more than 50 uu/s.
  const std::vector<int> n = CountOver("ball", "ball_trajectories", root);
  CHECK(n[0] == Sum(n));
}

}  // namespace
}  // namespace rlfit
