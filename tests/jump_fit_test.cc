// Tests of the jump fit: derivatives of the rollout residual, and synthetic round trips of
// each mechanic (first jump held and tapped, double jump, dodges) generated with the model.
#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "fit/fit.h"
#include "fit/jump_fit.h"
#include "src/io/recording.h"
#include "src/replay/regime.h"
#include "src/replay/synth.h"
#include "tests/fit_test_util.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

// A car driving at `speed` on the floor that presses jump on row 1 for `held_rows` rows, then
// (second_press_row > 0) presses again on that row with the stick at (pitch, yaw, roll), at
// 61 Hz rows, simulated with `coeffs` (the template's flags say when it is on the ground).
Episode Jumping(const CoeffFile& coeffs, int held_rows, int second_press_row, double pitch,
                double yaw, double roll, double speed, int rows = 90) {
  Episode ep;
  ep.name = "jump_" + std::to_string(held_rows) + "_" + std::to_string(second_press_row) + ".csv";
  ep.rows.resize(rows);
  for (int k = 0; k < rows; ++k) {
    Sample& s = ep.rows[k];
    s.t_s = k / 60.96;
    s.on_ground = k <= 2;
    s.input.throttle = 0.5;
    s.input.jump = (k >= 1 && k < 1 + held_rows) ||
                   (second_press_row > 0 && k >= second_press_row && k < second_press_row + 3);
    if (second_press_row > 0 && k >= second_press_row) {
      s.input.pitch = pitch;
      s.input.yaw = yaw;
      s.input.roll = roll;
    }
  }
  ep.step_dt_s.assign(rows - 1, 1.0 / 60.96);
  ep.step_ticks.assign(rows - 1, 2);
  ep.rows[0].x = Eigen::Vector3d(0, 0, 17.01);
  ep.rows[0].v = Eigen::Vector3d(speed, 0, 0);
  ep.rows[0].theta = Eigen::Matrix3d::Identity();
  return Resimulate(ep, *FindModel("jump").make_predictor(coeffs, ""), 0);
}

std::vector<Episode> Mechanics(const CoeffFile& truth) {
  return {Jumping(truth, 20, 0, 0, 0, 0, 800),         // first jump, held
          Jumping(truth, 1, 0, 0, 0, 0, 1200),         // tapped
          Jumping(truth, 4, 25, 0, 0, 0, 900),         // double jump
          Jumping(truth, 4, 25, -1.0, 0, 0, 1000),     // forward dodge
          Jumping(truth, 4, 25, 0, 0.7, 0.3, 600),     // side dodge
          Jumping(truth, 4, 25, 1.0, 0, 0, 1000)};     // backward dodge
}

TEST_CASE("synthetic episodes are jumps the coverage finds, from take-off to the end") {
  const CoeffFile truth = DefaultCoeffs("jump", JumpLayout());
  for (const Episode& ep : Mechanics(truth)) {
    INFO(ep.name);
    const auto segments = JumpSegments(ep);
    REQUIRE(segments.size() == 1);
    // The press of row 1 acts 15.1 ms + half a tick later (no clock: Integration), on the
    // second tick of row step 2 -> 3: the take-off row is 2.
    CHECK(segments[0].first == 2);
    CHECK(segments[0].second == ep.size() - 1);
    // Replayed with the coefficients that made it: zero error (same step, same state).
    const std::vector<PredictedState> p =
        FindModel("jump").make_predictor(truth, "")->Rollout(ep, 2, ep.size() - 1);
    CHECK((p.back().x - ep.rows.back().x).norm() < 1e-9);
  }
}

TEST_CASE("GradientChecker: autodiff of the jump rollout residual matches finite differences") {
  const CoeffFile truth = DefaultCoeffs("jump", JumpLayout());
  const Episode ep = Jumping(truth, 4, 25, -1.0, 0.3, 0, 1000, 60);
  std::unique_ptr<ceres::CostFunction> cost(
      JumpRolloutResidual::Create(&ep, 2, 2, 50, Integration{}));
  std::vector<double> params = JumpLayout().defaults;
  const CoeffLayout& l = JumpLayout();
  std::vector<const double*> blocks;
  for (const ParamBlock& b : l.blocks) blocks.push_back(params.data() + b.offset);
  ceres::NumericDiffOptions numeric;
  numeric.relative_step_size = 1e-7;
  // As for the aerial residual: each block's worst error against its largest entry; 1e-6 is
  // the precision of forward differences at step 1e-7. The drift block is zero at 0 for
  // double (skipped) but not for the Jet: not required non-zero.
  testing::CheckJacobianBlocks(*cost, blocks.data(), numeric, 1e-6, false);
}

TEST_CASE("synthetic round trip: every jump coefficient is recovered") {
  const ModelInfo& model = FindModel("jump");
  CoeffFile truth = DefaultCoeffs("jump", *model.layout);
  const int j = JumpCoeffs<double>::kJumpImpulse;
  // Different from the defaults, within the bounds.
  const double values[] = {296.0, 1440.0, 300.0, 420.0, 280.0, 520.0, 510.0, 230.0, 250.0, 0.3};
  for (int i = 0; i < 10; ++i) truth.values[j + i] = values[i];
  const std::vector<Episode> episodes = Mechanics(truth);

  CoeffFile start = truth;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> jitter(0.95, 1.05);
  for (int i = j; i < model.layout->size(); ++i) start.values[i] *= jitter(rng);

  FitOptions options;
  options.model = "jump";
  options.quiet = true;
  options.window_s = 0.5;
  const FitResult r = FitEpisodes(episodes, {}, start, options);
  // Noise-free data: the optimum is the truth up to solver tolerance (see the aerial test).
  constexpr double kRecoveryRelative = 1e-4;
  for (int i = j; i < model.layout->size(); ++i) {
    INFO(model.layout->names[i]);
    CHECK(std::abs(r.coeffs.values[i] - truth.values[i]) <
          kRecoveryRelative * std::max(1.0, std::abs(truth.values[i])));
  }
  // The aerial blocks are the aerial model's: held at their starting values, error 0.
  for (int i = 0; i < j; ++i) {
    CHECK(r.coeffs.values[i] == start.values[i]);
    CHECK(r.coeffs.std_errors[i] == 0.0);
  }
  CHECK(r.cost_final < 1e-6 * r.cost_initial);
}

TEST_CASE("coefficients no window exercises keep their start and get no standard error") {
  const CoeffFile truth = DefaultCoeffs("jump", JumpLayout());
  FitOptions options;
  options.model = "jump";
  options.quiet = true;
  options.window_s = 0.5;
  const FitResult r =
      FitEpisodes({Jumping(truth, 20, 0, 0, 0, 0, 800), Jumping(truth, 2, 0, 0, 0, 0, 1100)}, {},
                  truth, options);
  for (int i = JumpCoeffs<double>::kDoubleJumpImpulse; i < JumpCoeffs<double>::kSize; ++i) {
    CHECK(r.coeffs.values[i] == truth.values[i]);
    CHECK(std::isnan(r.coeffs.std_errors[i]));
  }
}

TEST_CASE("training and validation never share a file: the split and the folds go by file") {
  // Files a (2 segments), b, c (3 segments), d, e: every 2nd file held out, all its segments.
  std::vector<Episode> all;
  for (const auto& [path, parts] : std::vector<std::pair<std::string, int>>{
           {"a.txt", 2}, {"b.csv", 1}, {"c.txt", 3}, {"d.csv", 1}, {"e.csv", 1}})
    for (int k = 0; k < parts; ++k) {
      Episode ep;
      ep.path = path;
      ep.name = path + std::to_string(k);
      all.push_back(ep);
    }
  CHECK(FileIndices(all) == std::vector<int>{0, 0, 1, 2, 2, 2, 3, 4});
  std::vector<Episode> train, heldout;
  SplitEpisodes(all, 2, &train, &heldout);
  std::vector<std::string> held;
  for (const Episode& e : heldout) held.push_back(e.name);
  CHECK(held == std::vector<std::string>{"b.csv0", "d.csv0"});
  CHECK(train.size() == 6);
  // By episode, a.txt1 and c.txt1 would have been held out beside their files' other parts.
  train.clear();
  heldout.clear();
  SplitEpisodes(all, 3, &train, &heldout);
  for (const Episode& e : heldout) CHECK(e.path == "c.txt");
  CHECK(heldout.size() == 3);
}

TEST_CASE("rlfit fit's held-out table says n/a where no held-out episode has a covered row" *
          doctest::skip(testing::NoData())) {
  const std::string root = ResolveDataRoot("");
  // jumps.txt (one episode, two jumps) trains; data.txt's two segments (no jump: no row the
  // jump model covers) are held out (every 2nd file, both its segments).
  FitOptions options;
  options.model = "jump";
  options.paths = {root + "/car_control/jumps.txt", root + "/car_control/data.txt"};
  options.data_root = root;
  options.holdout_every = 2;
  options.solver.max_iterations = 1;
  options.quiet = true;
  std::ostringstream out;
  const FitResult r = RunFit(options, out);
  REQUIRE(!r.heldout.empty());
  const std::string text = out.str();
  const std::string table = text.substr(text.find("held-out episodes"));
  const std::string dx = table.substr(table.find("|dx| uu"), 80);
  INFO(table);
  CHECK(dx.find("n/a") != std::string::npos);
  CHECK(dx.find(" 0 ") == std::string::npos);
}

}  // namespace
}  // namespace rlfit
