// Tests of `rlsim predict`: a dropped ball against the law of free fall and the model's own step
// loop, a car in the air against the aerial step, predict vs replay's open-loop prediction on a
// recorded episode, coefficient choice, the output CSV, and every validation error.
#include "src/io/arena_file.h"
#include "src/replay/episode_steps.h"
#include "src/replay/predict.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

#include "src/common/error.h"
#include "src/common/rotation.h"
#include "src/io/episode_writer.h"
#include "src/io/recording.h"
#include "src/models/aerial.h"
#include "src/models/arena.h"
#include "src/models/ball.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/replay.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

using testing::TempDir;

// The ball falls as z0 - g/2 tau^2 up to two stated terms: semi-implicit Euler with steps h
// gives z0 - g/2 (tau^2 + tau h), and drag (v *= exp(drag h) per step) slows it by at most
// |drag| g tau^3 / 6; the slack covers rounding.
constexpr double kFreeFallSlackUu = 1e-6;

// Writes a datasets root whose arena is the floor z = 0, 16000 uu square (two triangles), and a
// small triangle 1800 uu up in a far corner, out of the ball's reach, so that the box of the
// mesh's vertices holds the drops (predict refuses a state outside it, as replay does).
std::string WriteFloorRoot(const TempDir& dir) {
  std::filesystem::create_directories(dir.path() + "/floor/meshes");
  std::ofstream(dir.path() + "/floor/meshes/pitch.dat")
      << "-8000\t-8000\t0\t8000\t-8000\t0\t8000\t8000\t0\n"
      << "-8000\t-8000\t0\t8000\t8000\t0\t-8000\t8000\t0\n"
      << "7900\t7900\t1800\t8000\t7900\t1800\t8000\t8000\t1800\n";
  return dir.path() + "/floor";
}

PredictOptions BallDrop(const std::string& root, double z0) {
  PredictOptions o;
  o.model = "ball";
  char state[64];
  std::snprintf(state, sizeof(state), "0,0,%.17g,0,0,0", z0);
  o.state = state;
  o.duration_s = 3.0;
  o.data_root = root;
  return o;
}

TEST_CASE("a dropped ball falls under gravity, matches its step loop exactly, then bounces") {
  TempDir dir;
  std::vector<std::string> roots = {WriteFloorRoot(dir)};
  if (!testing::DataRoot().empty()) roots.push_back(testing::DataRoot());
  const ModelInfo& model = FindModel("ball");
  const CoeffFile file = LoadCoefficients(model, "");
  const auto c = BallCoeffs<double>::FromArray(file.values.data());
  const Integration& integ = file.integration;
  for (const std::string& root : roots) {
    CAPTURE(root);
    const double z0 = 1000.0;
    const std::vector<Trajectory> out = RunPredict(BallDrop(root, z0));
    REQUIRE(out.size() == 1);
    const std::vector<PredictedState>& rows = out[0].rows;
    REQUIRE(rows.size() == 3 * 61);  // floor(3 s * 60.96) + 1
    // One row: one period of the recordings' clock, 120/61 ticks of 1/120 s of game time; the
    // state is a tick (row 0 on the tick clock's origin), row k the blend of the two ticks
    // around tick 120/61 k (ball.h).
    const double row_s = integ.ticks_per_clock_row / integ.tick_rate_hz;
    const double h = 1.0 / integ.tick_rate_hz;
    const Arena& arena = BallArena(root);
    BallState<double> s;
    s.x = {0, 0, z0};
    s.v.setZero();
    s.omega.setZero();
    BallTicks<double> ticks = BallTicksAroundRow(c, s, 0.0, integ, arena);
    Episode ep;
    ep.step_dt_s.assign(rows.size(), 1.0 / 60.96);
    int bounce_row = -1;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      CAPTURE(k);
      CHECK(out[0].t_s[k] == k * (1.0 / 60.96));
      // The model's own tick loop, bit for bit.
      CHECK(rows[k].x == s.x);
      CHECK(rows[k].v == s.v);
      CHECK(rows[k].omega == s.omega);
      // Contacts are found 0.3 uu ahead, so a falling ball ends at most one step's travel
      // inside the floor (8.9 uu at the impact speed of this drop, 1070 uu/s).
      CHECK(rows[k].x.z() > c.contact_radius - 1100.0 * h);
      if (bounce_row < 0 && rows[k].v.z() > 0.0) bounce_row = static_cast<int>(k);
      const double tau = k * row_s;
      const double law = z0 - 0.5 * 650.0 * tau * tau;
      if (bounce_row < 0 && law > c.contact_radius) {
        // Free fall while the parabola stays above the floor (at the row that reaches it the
        // contact's push-out, recovery, already moves the ball). The ticks' semi-implicit Euler lies 325 tau h below the parabola, drag takes up to
        // |drag| g tau^3 / 6, and the blend between two ticks of a parabola at most g h^2 / 8.
        const double tolerance = 325.0 * tau * h +
                                 std::abs(c.drag) * 650.0 * tau * tau * tau / 6.0 +
                                 650.0 * h * h / 8.0 + kFreeFallSlackUu;
        CHECK(std::abs(rows[k].x.z() - law) <= tolerance);
      }
      s = AdvanceBallTicks(c, &ticks, ep, static_cast<int>(k), integ, arena);
    }
    // It reaches the floor after sqrt(2 (z0 - R) / g) = 1.67 s and rebounds with about
    // restitution times its impact speed (within the row's gravity and friction).
    REQUIRE(bounce_row > 0);
    const double fall_s = std::sqrt(2.0 * (z0 - c.contact_radius) / 650.0);
    CHECK(bounce_row * row_s == doctest::Approx(fall_s).epsilon(0.02));
    // (The rows around the bounce blend the ticks before and after it: compare the rows a row
    // clear of it on either side.)
    const double ratio = rows[bounce_row + 1].v.z() / -rows[bounce_row - 2].v.z();
    CHECK(ratio == doctest::Approx(c.restitution).epsilon(0.05));
  }
}

TEST_CASE("a car in the air with no input follows the aerial step row by row, bit for bit") {
  PredictOptions o;
  o.model = "aerial";
  o.state = "100,-200,1000,500,300,200,1.5,-2,0.5";
  o.orientation = "0.3,-1.2,0.7";
  o.duration_s = 1.0;
  const std::vector<Trajectory> out = RunPredict(o);
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].rows.size() == 121);  // 1/120 s rows

  const ModelInfo& model = FindModel("aerial");
  // As predict runs them: without the recordings' drift.
  const CoeffFile file =
      PredictionCoefficients(model, LoadCoefficients(model, ""), "", false, false);
  const auto c = AerialCoeffs<double>::FromArray(file.values.data());
  CarState<double> s;
  s.x = {100, -200, 1000};
  s.v = {500, 300, 200};
  s.omega = {1.5, -2, 0.5};
  s.theta = EulerToMatrix(0.3, -1.2, 0.7);
  for (std::size_t k = 0; k < out[0].rows.size(); ++k) {
    CAPTURE(k);
    CHECK(out[0].rows[k].x == s.x);
    CHECK(out[0].rows[k].v == s.v);
    CHECK(out[0].rows[k].omega == s.omega);
    CHECK(out[0].rows[k].theta == s.theta);
    s = StepAerial(c, s, Controls{}, 1.0 / 120.0, file.integration.rotate_with_new_omega);
  }

  // The same as Predictor::Rollout over the constructed episode.
  InitialState init;
  init.x = {100, -200, 1000};
  init.v = {500, 300, 200};
  init.omega = {1.5, -2, 0.5};
  init.euler = {0.3, -1.2, 0.7};
  const Episode ep = PredictionEpisode(EpisodeKind::kCar, init, {}, 1.0 / 120.0, 120);
  const std::vector<PredictedState> rollout = model.make_predictor(file, "")->Rollout(ep, 0, 120);
  for (int k = 0; k <= 120; ++k) {
    CHECK(rollout[k].x == out[0].rows[k].x);
    CHECK(rollout[k].theta == out[0].rows[k].theta);
  }
}

// A still car in the air with no input has no torque and no angular velocity: its orientation
// matrix is not touched, so the Euler angles come back as given up to the rounding of
// EulerToMatrix then MatrixToEuler (~1e-16 rad). The recordings' drift turned the committed
// aerial fit's car by 0.036 rad in yaw over 2 s (yaw 1.5708 -> 1.5348).
constexpr double kStillCarTurnRad = 1e-12;
// Smallest turn the drift makes over the same 2 s with --recording-drift (its largest Euler
// angle change; in yaw 0.036 rad with the committed aerial fit, 0.00098 with the car's, whose
// pitch drift is larger): shows the check above would see it.
constexpr double kDriftTurnRad = 1e-3;

TEST_CASE("a still car in the air with no input does not turn; the drift is opt-in") {
  std::vector<std::string> models = {"aerial"};
  if (!testing::DataRoot().empty()) models.push_back("car");  // the car needs the arena mesh
  for (const std::string& name : models) {
    CAPTURE(name);
    PredictOptions o;
    o.model = name;
    // Thrown up at 650 uu/s (gravity, 650 uu/s^2): back at z 1000 after 2 s, apex 1325.
    o.state = "0,0,1000,0,0,650";
    o.orientation = "0,1.5708,0";
    o.duration_s = 2.0;
    const std::vector<Trajectory> out = RunPredict(o);
    REQUIRE(out[0].rows.size() == 241);
    const Eigen::Vector3d start(0.0, 1.5708, 0.0);
    double turn = 0.0;
    for (const PredictedState& p : out[0].rows)
      turn = std::max(turn, (MatrixToEuler(p.theta) - start).cwiseAbs().maxCoeff());
    CHECK(turn < kStillCarTurnRad);
    CHECK(out[0].rows.back().x.z() > 900.0);  // still in the air

    o.recording_drift = true;
    const std::vector<Trajectory> drifting = RunPredict(o);
    const Eigen::Vector3d end = MatrixToEuler(drifting[0].rows.back().theta);
    CHECK((end - start).cwiseAbs().maxCoeff() > kDriftTurnRad);
  }
}

TEST_CASE("predict from a recorded episode's first state with its inputs equals replay's") {
  TempDir dir;
  const std::string path = testing::RepoDatasets() + "/synthetic/aerial/episode_9000.csv";
  const std::vector<Episode> eps = ReadRecording(path);
  REQUIRE(eps.size() == 1);
  const Episode& ep = eps[0];
  // No recording clock (a 181-row file), so inputs switch as predict's do.
  REQUIRE(std::isnan(ep.clock_origin_rows));

  // Row 0's Euler integers, as the reader converts them (7th-9th cells of the first line).
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<double> cells;
  std::stringstream split(line);
  for (std::string cell; std::getline(split, cell, ',');) cells.push_back(std::stod(cell));
  REQUIRE(cells.size() == 25);
  const Sample& r0 = ep.rows[0];
  char buf[1024];
  std::snprintf(buf, sizeof(buf),
                "x,y,z,vx,vy,vz,wx,wy,wz,pitch,yaw,roll\n%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,"
                "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n",
                r0.x(0), r0.x(1), r0.x(2), r0.v(0), r0.v(1), r0.v(2), r0.omega(0), r0.omega(1),
                r0.omega(2), cells[6] * game::kRadiansPerUnrealUnit,
                cells[7] * game::kRadiansPerUnrealUnit, cells[8] * game::kRadiansPerUnrealUnit);
  const std::string states = dir.Write("state.csv", buf);
  std::string controls = "t_s,throttle,steer,pitch,yaw,roll,jump,boost,handbrake\n";
  for (const Sample& s : ep.rows) {
    const CarInputs& u = s.input;
    std::snprintf(buf, sizeof(buf), "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%d,%d\n", s.t_s,
                  u.throttle, u.steer, u.pitch, u.yaw, u.roll, u.jump, u.boost, u.handbrake);
    controls += buf;
  }

  PredictOptions o;
  o.model = "aerial";
  o.states_path = states;
  o.controls_path = dir.Write("controls.csv", controls);
  // Against a recording's replay: with the drift and the input delay replay runs (facts of
  // the recordings).
  o.recording_drift = true;
  o.recording_input_delay = true;
  o.dt_s = ep.step_dt_s[0];
  o.duration_s = ep.duration_s();
  const std::vector<Trajectory> out = RunPredict(o);
  REQUIRE(out.size() == 1);
  REQUIRE(static_cast<int>(out[0].rows.size()) == ep.size());

  const ModelInfo& model = FindModel("aerial");
  ReplayOptions ro;
  ro.model = "aerial";
  ro.quiet = true;
  const ReplayReport report =
      ReplayEpisodes(eps, *model.make_predictor(LoadCoefficients(model, ""), ""), model, ro);
  const EpisodeReport& replayed = report.episodes[0];
  // Not bit for bit: the reader's row times and predict's (t_(k-1) + dt with dt from --dt)
  // differ in their last bits, and so do input switch times (checked bit for bit below with
  // the same row times).
  constexpr double kTimeRoundingUu = 1e-8;
  constexpr double kTimeRoundingRad = 1e-12;  // of the orientation matrices' difference
  double max_dx = 0.0;
  for (int k = 0; k < ep.size(); ++k) {
    const PredictedState* p = replayed.PredictedAt(k);
    REQUIRE(p != nullptr);
    max_dx = std::max(max_dx, (out[0].rows[k].x - p->x).norm());
    CHECK((out[0].rows[k].theta - p->theta).norm() < kTimeRoundingRad);
  }
  CHECK(max_dx < kTimeRoundingUu);
  // With the row times formed the same way (a car's prediction rows: t_k = t_(k-1) + dt, see
  // PredictionEpisode), replay's prediction is predict's, bit for bit.
  Episode derived = ep;
  for (int k = 1; k < derived.size(); ++k)
    derived.rows[k].t_s = derived.rows[k - 1].t_s + derived.step_dt_s[0];
  const std::vector<PredictedState> same =
      model.make_predictor(LoadCoefficients(model, ""), "")->Rollout(derived, 0, ep.size() - 1);
  for (int k = 0; k < ep.size(); ++k) {
    CAPTURE(k);
    CHECK(same[k].x == out[0].rows[k].x);
    CHECK(same[k].v == out[0].rows[k].v);
    CHECK(same[k].theta == out[0].rows[k].theta);
  }
}

TEST_CASE("the committed fit is the default and differs from --coeffs seed") {
  PredictOptions o;
  o.model = "aerial";
  o.state = "0,0,1000,0,0,0,2,1,-1";
  o.duration_s = 0.5;
  const std::vector<Trajectory> committed = RunPredict(o);
  o.coeffs = CommittedCoeffsPath("aerial");
  const std::vector<Trajectory> by_path = RunPredict(o);
  o.coeffs = "seed";
  const std::vector<Trajectory> seed = RunPredict(o);
  CHECK(committed[0].rows.back().omega == by_path[0].rows.back().omega);
  CHECK((committed[0].rows.back().omega - seed[0].rows.back().omega).norm() > 1e-6);
}

TEST_CASE("controls hold from their time; the CSV has 17 digits and a state column") {
  TempDir dir;
  PredictOptions o;
  o.model = "aerial";
  o.states_path = dir.Write("s.json", R"([{"x": [0, 0, 1000], "v": [0, 0, 0]},
      {"x": [0, 0, 500], "v": [100, 0, 0], "omega": [0, 0, 1], "euler": [0, 1.5, 0]}])");
  o.controls_path = dir.Write("c.csv", "boost,t_s\n0,0\n1,0.5\n");
  o.duration_s = 1.0;
  const std::vector<Trajectory> out = RunPredict(o);
  REQUIRE(out.size() == 2);
  CHECK(out[1].state_index == 2);
  // Boost (along the nose, level at first) acts only after 0.5 s plus the input delay.
  CHECK(out[0].rows[60].v.x() == 0.0);
  CHECK(out[0].rows[120].v.x() > 100.0);

  const std::string csv = TrajectoriesCsv(out, true, true);
  std::istringstream lines(csv);
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  CHECK(header == "state,source_row,t_s,x,y,z,vx,vy,vz,wx,wy,wz,pitch,yaw,roll");
  CHECK(first == "1,1,0,0,0,1000,0,0,0,0,0,0,0,0,0");
  int n = 0;
  for (std::string l; std::getline(lines, l);) ++n;
  CHECK(n == 2 * 121 - 1);
  std::vector<Trajectory> one = {out[1]};
  one[0].rows.resize(2);
  one[0].t_s.resize(2);
  std::istringstream short_csv(TrajectoriesCsv(one, false, false));
  std::string row2;
  for (int i = 0; i < 3; ++i) std::getline(short_csv, row2);
  double t = 0, x = 0;
  int source_row = 0;
  REQUIRE(std::sscanf(row2.c_str(), "%d,%lf,%lf", &source_row, &t, &x) == 3);
  CHECK(source_row == 2);
  CHECK(t == 1.0 / 120.0);
  // The identity orientation's roll is atan2(-0, 1) = -0: written as 0.
  Trajectory level;
  level.t_s = {0.0};
  level.rows.resize(1);
  CHECK(TrajectoriesCsv({level}, true, false).find("-0") == std::string::npos);
  CHECK(x == one[0].rows[1].x.x());  // the shortest text reads back to the same double
}

std::string CheckFails(const PredictOptions& o) {
  std::string why;
  CHECK_FALSE(o.Check(&why));
  return why;
}

TEST_CASE("option errors name the option") {
  PredictOptions ok;
  ok.model = "aerial";
  ok.state = "0,0,1000,0,0,0";
  std::string why;
  CHECK(ok.Check(&why));

  PredictOptions o = ok;
  o.model = "rocket";
  CHECK(CheckFails(o).find("unknown model") != std::string::npos);
  o = ok;
  o.state = "";
  CHECK(CheckFails(o).find("--state") != std::string::npos);
  o = ok;
  o.states_path = "s.json";
  CHECK(CheckFails(o).find("exactly one") != std::string::npos);
  o = ok;
  o.state = "0,0,1000,0,0";
  CHECK(CheckFails(o) == "--state: 5 values, expected 6 or 9");
  o.state = "0,0,1000,0,0,x";
  CHECK(CheckFails(o) == "--state: value 6: 'x' is not a number");
  o.state = "0,0,1000,0,0,nan";
  CHECK(CheckFails(o) == "--state: value 6: 'nan' is not a finite number");
  o.state = "0,0,1000,5000,0,0";
  CHECK(CheckFails(o).find("speed 5000 uu/s is implausible") != std::string::npos);
  o.state = "0,0,1000,0,0,0,20,0,0";
  CHECK(CheckFails(o).find("angular speed 20 rad/s") != std::string::npos);
  o.state = "0,0,1e6,0,0,0";
  CHECK(CheckFails(o).find("position z = 1e+06 uu is outside the arena") != std::string::npos);
  o = ok;
  o.orientation = "0,90,0";
  CHECK(CheckFails(o).find("--orientation: Euler angle 90 is not in radians") != std::string::npos);
  o = ok;
  o.duration_s = -1;
  CHECK(CheckFails(o).find("--duration -1 s") != std::string::npos);
  o.duration_s = 601;
  CHECK(CheckFails(o).find("(0, 600]") != std::string::npos);
  o.duration_s = std::nan("");
  CHECK(CheckFails(o).find("--duration") != std::string::npos);
  o = ok;
  o.dt_s = -0.1;
  CHECK(CheckFails(o).find("--dt") != std::string::npos);
  o.dt_s = 0.012;
  CHECK(CheckFails(o).find("whole number of physics ticks") != std::string::npos);
  o.dt_s = 5.0;
  CHECK(CheckFails(o).find("--dt") != std::string::npos);
  o.dt_s = 1.0 / 60.96;  // 2 steps of 1/121.92 s, as the recorded rows
  CHECK(o.Check(&why));
  o.dt_s = 0.5;
  o.duration_s = 0.25;
  CHECK(CheckFails(o).find("longer than --duration") != std::string::npos);

  PredictOptions ball;
  ball.model = "ball";
  ball.state = "0,0,500,0,0,0";
  CHECK(ball.Check(&why));
  o = ball;
  o.orientation = "0,0,0";
  CHECK(CheckFails(o).find("no orientation") != std::string::npos);
  o = ball;
  o.controls_path = "c.csv";
  CHECK(CheckFails(o).find("takes no controls") != std::string::npos);
  o = ball;
  o.dt_s = 1.0 / 120.0;
  CHECK(CheckFails(o).find("multiple of it") != std::string::npos);
  o.dt_s = 3.0 / 60.96;
  CHECK(o.Check(&why));
  o = ball;
  o.state = "0,0,500,0,0,7000";
  CHECK(o.Check(&why));  // the ball's limit is 12000 uu/s
  o.state = "0,0,500,0,0,13000";
  CHECK(CheckFails(o).find("speed 13000") != std::string::npos);
}

// The InputError `body` throws; fails the test if it throws none.
InputError ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError");
  return InputError("", 0, 0, "");
}

TEST_CASE("states files: errors name file, row and column") {
  TempDir dir;
  auto read_csv = [&](const std::string& text, bool car = true) {
    const std::string p = dir.Write("s.csv", text);
    return ErrorOf([&] { ReadStates(p, car); });
  };
  InputError e = read_csv("x,y,z,vx,vy,vz\n0,0,100,0,0,0\n0,0,abc,0,0,0\n");
  CHECK(e.row() == 3);
  CHECK(e.column() == 3);
  e = read_csv("z,y,x,vx,vy,vz\n0,0,100,0,nan,0\n");
  CHECK(e.row() == 2);
  CHECK(e.column() == 5);
  CHECK(std::string(e.what()).find("not a finite number") != std::string::npos);
  e = read_csv("x,y,z,vx,vy,vz\n0,0,100,9000,0,0\n");
  CHECK(e.column() == 4);
  CHECK(std::string(e.what()).find("implausible") != std::string::npos);
  e = read_csv("x,y,z,vx,vy,vz\n0,0,100,0,0,0,7\n");
  CHECK(e.row() == 2);
  CHECK(std::string(e.what()).find("too many columns") != std::string::npos);
  e = read_csv("x,y,z,vx,vy,vz,speed\n0,0,100,0,0,0,7\n");
  CHECK(e.column() == 7);
  CHECK(std::string(e.what()).find("unknown column 'speed'") != std::string::npos);
  e = read_csv("x,y,z,vx,vy\n0,0,100,0,0\n");
  CHECK(std::string(e.what()).find("vx,vy,vz") != std::string::npos);
  e = read_csv("x,y,z,vx,vy,vz,wx\n0,0,100,0,0,0,1\n");
  CHECK(std::string(e.what()).find("together or none") != std::string::npos);
  e = read_csv("x,y,z,vx,vy,vz,pitch,yaw,roll\n0,0,100,0,0,0,0,0,0\n", false);
  CHECK(std::string(e.what()).find("no orientation") != std::string::npos);
  e = read_csv("x,y,z,vx,vy,vz\n");
  CHECK(std::string(e.what()).find("no states") != std::string::npos);
  e = read_csv("");
  CHECK(std::string(e.what()).find("empty file") != std::string::npos);
  const std::vector<InitialState> s = ReadStates(
      dir.Write("ok.csv", "vz,x,y,z,vx,vy,roll,yaw,pitch\n-5,1,2,3,4,5,0.1,0.2,0.3\n"), true);
  REQUIRE(s.size() == 1);
  CHECK(s[0].x == Eigen::Vector3d(1, 2, 3));
  CHECK(s[0].v == Eigen::Vector3d(4, 5, -5));
  CHECK(s[0].euler == Eigen::Vector3d(0.3, 0.2, 0.1));

  auto read_json = [&](const std::string& text) {
    const std::string p = dir.Write("s.json", text);
    return ErrorOf([&] { ReadStates(p, true); });
  };
  CHECK(std::string(read_json("{\"x\": [0, 0]").what()).find("s.json") != std::string::npos);
  CHECK(std::string(read_json("{\"x\": [0, 0, 1]}").what()).find("missing key 'v'") !=
        std::string::npos);
  CHECK(std::string(read_json("[{\"x\": [0, 0, 1], \"v\": [0, 0, 0], \"w\": [1, 2, 3]}]").what())
            .find("state 1: unknown key 'w'") != std::string::npos);
  CHECK(std::string(read_json("[{\"x\": [0, 0, 1], \"v\": [0, \"a\", 0]}]").what())
            .find("list of 3 numbers") != std::string::npos);
  CHECK(std::string(read_json("[{\"x\": [0, 0, 1], \"v\": [0, 0, 0]}, {\"x\": [0, 0, 1], "
                              "\"v\": [0, 0, 1e300]}]")
                        .what())
            .find("state 2: speed") != std::string::npos);
  CHECK(std::string(read_json("[]").what()).find("non-empty list") != std::string::npos);
  CHECK(std::string(ErrorOf([&] { ReadStates(dir.path() + "/none.json", true); }).what())
            .find("no such file") != std::string::npos);
  CHECK(std::string(ErrorOf([&] { ReadStates(dir.Write("s.txt", "x"), true); }).what())
            .find(".json or .csv") != std::string::npos);
}

TEST_CASE("controls files: values, timing and columns are checked") {
  TempDir dir;
  auto error = [&](const std::string& text) {
    const std::string p = dir.Write("c.csv", text);
    return ErrorOf([&] { ReadControls(p, 0.1); });
  };
  InputError e = error("throttle,steer\n1,0\n0.5,1.5\n");
  CHECK(e.row() == 3);
  CHECK(e.column() == 2);
  CHECK(std::string(e.what()).find("outside [-1, 1]") != std::string::npos);
  e = error("boost\n0.5\n");
  CHECK(std::string(e.what()).find("must be 0 or 1") != std::string::npos);
  e = error("throttle,steer\n1,0\n1,0,1\n");
  CHECK(e.row() == 3);
  CHECK(std::string(e.what()).find("too many columns, expected 2") != std::string::npos);
  e = error("throttle,steer\n1\n");
  CHECK(std::string(e.what()).find("too few columns") != std::string::npos);
  e = error("t_s,throttle\n0,1\n0,1\n");
  CHECK(e.column() == 1);
  CHECK(std::string(e.what()).find("does not increase") != std::string::npos);
  e = error("t_s,throttle\n-1,1\n");
  CHECK(std::string(e.what()).find("negative") != std::string::npos);
  e = error("throttle,nitro\n1,1\n");
  CHECK(std::string(e.what()).find("unknown column 'nitro'") != std::string::npos);
  e = error("throttle\ninf\n");
  CHECK(std::string(e.what()).find("not a finite number") != std::string::npos);

  const std::vector<TimedInput> u =
      ReadControls(dir.Write("ok.csv", "yaw,throttle\n0.5,1\n-1,0\n"), 0.25);
  REQUIRE(u.size() == 2);
  CHECK(u[1].t_s == 0.25);
  CHECK(u[1].input.yaw == -1.0);
  CHECK(u[0].input.throttle == 1.0);
  // Rows take the control in force at their time.
  const Episode ep = PredictionEpisode(EpisodeKind::kCar, InitialState{}, u, 0.125, 4);
  CHECK(ep.rows[1].input.yaw == 0.5);
  CHECK(ep.rows[2].input.yaw == -1.0);
  CHECK(ep.rows[4].input.yaw == -1.0);
  CHECK(std::isnan(ep.clock_origin_rows));
}

TEST_CASE("run-time limits and missing files are input errors") {
  PredictOptions o;
  o.model = "aerial";
  o.state = "0,0,1000,0,0,0";
  o.controls_path = "/nonexistent/c.csv";
  CHECK(std::string(ErrorOf([&] { RunPredict(o); }).what()).find("no such file") !=
        std::string::npos);
  o.controls_path.clear();
  o.coeffs = "/nonexistent/coeffs.json";
  CHECK(std::string(ErrorOf([&] { RunPredict(o); }).what()).find("coeffs.json") !=
        std::string::npos);
  o.coeffs.clear();
  o.duration_s = 0.0;
  CHECK(std::string(ErrorOf([&] { RunPredict(o); }).what()).find("(options)") != std::string::npos);
  TempDir dir;
  std::string many = "x,y,z,vx,vy,vz\n";
  for (int i = 0; i < 100; ++i) many += "0,0,1000,0,0,0\n";
  o.state.clear();
  o.states_path = dir.Write("many.csv", many);
  o.duration_s = 600.0;
  CHECK(std::string(ErrorOf([&] { RunPredict(o); }).what()).find("output rows") !=
        std::string::npos);
}

}  // namespace
}  // namespace rlfit
