// Tests of the aerial fit: derivatives of the rollout residual and a synthetic round trip.
#include <cmath>
#include <random>

#include "fit/aerial_fit.h"
#include "fit/fit.h"
#include "fit/state_residuals.h"
#include "src/common/constants.h"
#include "src/common/error.h"
#include "src/io/files.h"
#include "src/models/ball.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/synth.h"
#include "tests/fit_test_util.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

// Synthetic episodes from the repository (resimulated recordings), read once.
const std::vector<Episode>& Synthetic() {
  static const std::vector<Episode> episodes =
      LoadEpisodesFor(FindModel("aerial"), {testing::RepoDatasets() + "/synthetic/aerial"}, "");
  return episodes;
}

// A tumbling car with random piecewise-constant inputs on every axis (each held 5-20 rows),
// boost and throttle, at 61 Hz rows, simulated with `coeffs`: every coefficient matters.
Episode Tumbling(const CoeffFile& coeffs, unsigned seed, int rows = 240) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> level(-2, 2), hold(5, 20), coin(0, 1);
  Episode ep;
  ep.name = "tumbling_" + std::to_string(seed) + ".csv";
  ep.rows.resize(rows);
  CarInputs u;
  for (int k = 0, next = 0; k < rows; ++k) {
    if (k == next) {
      u.roll = 0.5 * level(rng);
      u.pitch = 0.5 * level(rng);
      u.yaw = 0.5 * level(rng);
      u.boost = coin(rng) == 1;
      u.throttle = 0.5 * level(rng);
      next = k + hold(rng);
    }
    ep.rows[k].t_s = k / 60.96;
    ep.rows[k].input = u;
  }
  ep.step_dt_s.assign(rows - 1, 1.0 / 60.96);
  ep.step_ticks.assign(rows - 1, 2);
  ep.rows[0].x = Eigen::Vector3d(0, 0, 1000);
  ep.rows[0].v = Eigen::Vector3d(300, -200, 500);
  ep.rows[0].omega = Eigen::Vector3d(1.5, -2.0, 1.0);
  ep.rows[0].theta = EulerToMatrix(0.3, 1.2, -0.4);
  return Resimulate(ep, *FindModel("aerial").make_predictor(coeffs, ""), 0);
}

// The seed coefficients at the aerial model's input timing (SeedCoeffs: the timing the fit
// assumes): the truth a synthetic round trip simulates, so that the fit can recover it exactly.
CoeffFile SeedAtFitTiming() { return SeedCoeffs(FindModel("aerial")); }

TEST_CASE("CarRowResiduals: hand-computed residuals of one row (the aerial, jump, car rows)") {
  // Recorded: at rest at the origin, identity orientation. Predicted: omega, v, x off by one
  // scale on each axis in turn, turned by a = 0.01 rad about z: E = Rz(a), whose axial part
  // is (0, 0, sin a).
  const AerialResidualScales scales;  // 0.05 rad/s, 5 uu/s, 2 uu, 0.01 rad
  Sample rec;
  CarState<double> s;
  s.omega = {0.05, 0.0, 0.0};
  s.v = {0.0, 10.0, 0.0};
  s.x = {0.0, 0.0, -6.0};
  const double a = 0.01;
  s.theta << std::cos(a), -std::sin(a), 0.0, std::sin(a), std::cos(a), 0.0, 0.0, 0.0, 1.0;
  double r[12];
  CarRowResiduals(s, rec, scales, r);
  const double expected[12] = {1, 0, 0, 0, 2, 0, 0, 0, -3, 0, 0, std::sin(a) / 0.01};
  for (int i = 0; i < 12; ++i) CHECK(r[i] == doctest::Approx(expected[i]).epsilon(1e-12));
  // The wall rows: the first nine alone, the same numbers.
  double motion[9];
  MotionResiduals(s, rec, scales, motion);
  for (int i = 0; i < 9; ++i) CHECK(motion[i] == r[i]);
}

TEST_CASE("GradientChecker: autodiff of the rollout residual matches finite differences") {
  const Episode ep = Tumbling(DefaultCoeffs("aerial", AerialLayout()), 3, 80);
  std::unique_ptr<ceres::CostFunction> cost(
      AerialRolloutResidual::Create(&ep, 40, 20, Integration{}));
  std::vector<double> params = AerialLayout().defaults;
  params[AerialCoeffs<double>::kDriftR] = 0.02;
  const double* blocks[] = {params.data(), params.data() + 3, params.data() + 6,
                            params.data() + 8};
  ceres::NumericDiffOptions numeric;
  numeric.relative_step_size = 1e-7;
  // Entries near zero (x after one tick depends on a torque through dt^3) make the checker's
  // per-entry relative error meaningless; compare each block's worst absolute error with its
  // largest entry instead. 1e-6 is the precision of forward differences at step 1e-7.
  constexpr double kBlockRelativePrecision = 1e-6;
  testing::CheckJacobianBlocks(*cost, blocks, numeric, kBlockRelativePrecision, true);
}

TEST_CASE("synthetic round trip: perturbed coefficients are recovered") {
  // Episodes simulated with known coefficients, with the recordings' timing and inputs.
  const ModelInfo& model = FindModel("aerial");
  CoeffFile truth = SeedAtFitTiming();
  truth.values = {-38.3, -12.5, 9.1, -4.8, -2.9, -1.9, 990.0, 66.0, 0.02, -0.01, 0.005};
  std::vector<Episode> episodes;
  for (unsigned seed : {1u, 2u, 3u}) episodes.push_back(Tumbling(truth, seed));

  CoeffFile start = truth;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(0.9, 1.1);
  for (double& v : start.values) v *= jitter(rng);

  FitOptions options;
  options.quiet = true;
  options.stride_s = 0.1;
  const FitResult r = FitEpisodes(episodes, {}, start, options);
  // Noise-free data: the optimum is the truth up to solver tolerance; 1e-4 relative leaves
  // room for Ceres' default function tolerance (1e-6) on a cost that starts near 1e6.
  constexpr double kRecoveryRelative = 1e-4;
  for (int i = 0; i < model.layout->size(); ++i) {
    INFO(model.layout->names[i]);
    CHECK(std::abs(r.coeffs.values[i] - truth.values[i]) <
          kRecoveryRelative * std::max(1.0, std::abs(truth.values[i])));
    CHECK(r.coeffs.std_errors[i] < kRecoveryRelative * std::max(1.0, std::abs(truth.values[i])));
  }
  CHECK(r.cost_final < 1e-6 * r.cost_initial);
}

TEST_CASE("held-constant blocks keep their starting values") {
  FitOptions options;
  options.quiet = true;
  options.selection.held = {"air_damping", "thrust"};
  const CoeffFile start = DefaultCoeffs("aerial", AerialLayout());
  const FitResult r = FitEpisodes(Synthetic(), {}, start, options);
  for (int i = 3; i < 8; ++i) CHECK(r.coeffs.values[i] == start.values[i]);
  bool torque_moved = false;  // the free block did move
  for (int i = 0; i < 3; ++i) torque_moved = torque_moved || r.coeffs.values[i] != start.values[i];
  CHECK(torque_moved);
  CHECK(r.coeffs.std_errors[3] == 0.0);
  options.selection.held = {"no_such_block"};
  CHECK_THROWS_AS(FitEpisodes(Synthetic(), {}, start, options), InputError);
}

TEST_CASE("a coefficient held by name stays bit-identical while the rest of its block is fitted") {
  // T_p held at its true value, mixed with a whole block (thrust) held there too; the other
  // coefficients start 10% off and must come back (noise-free: kRecoveryRelative as in the
  // round trip above), T_r and T_y through the block's SubsetManifold.
  const ModelInfo& model = FindModel("aerial");
  const CoeffFile truth = SeedAtFitTiming();
  std::vector<Episode> episodes;
  for (unsigned seed : {3u, 4u}) episodes.push_back(Tumbling(truth, seed, 120));
  CoeffFile start = truth;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> jitter(0.9, 1.1);
  for (double& v : start.values) v *= jitter(rng);
  for (int i : {AerialCoeffs<double>::kTp, AerialCoeffs<double>::kBoostAccel,
                AerialCoeffs<double>::kThrottleAccel})
    start.values[i] = truth.values[i];
  FitOptions options;
  options.quiet = true;
  options.selection.held = {"T_p", "thrust"};
  const FitResult r = FitEpisodes(episodes, {}, start, options);
  constexpr double kRecoveryRelative = 1e-4;
  CHECK(r.coeffs.values[AerialCoeffs<double>::kTp] == start.values[AerialCoeffs<double>::kTp]);
  CHECK(r.coeffs.std_errors[AerialCoeffs<double>::kTp] == 0.0);  // held: exact by choice
  for (int i : {AerialCoeffs<double>::kTr, AerialCoeffs<double>::kTy}) {
    INFO(model.layout->names[i]);
    CHECK(r.coeffs.values[i] != start.values[i]);
    CHECK(std::abs(r.coeffs.values[i] - truth.values[i]) <
          kRecoveryRelative * std::abs(truth.values[i]));
    CHECK(r.coeffs.std_errors[i] > 0.0);  // fitted: its own error, not the held one's 0
  }
  for (int i : {AerialCoeffs<double>::kBoostAccel, AerialCoeffs<double>::kThrottleAccel}) {
    CHECK(r.coeffs.values[i] == start.values[i]);
    CHECK(r.coeffs.std_errors[i] == 0.0);
  }
  const nlohmann::json& chosen = r.coeffs.provenance["options"];
  CHECK(chosen["constant_blocks"] == nlohmann::json::array({"thrust"}));
  CHECK(chosen["constant_coefficients"] == nlohmann::json::array({"T_p"}));

  // The same with T_p free: the block moves it (the start above is not where it stays).
  start.values[AerialCoeffs<double>::kTp] *= 1.05;
  options.selection.held = {"thrust"};
  const FitResult free = FitEpisodes(episodes, {}, start, options);
  CHECK(free.coeffs.values[AerialCoeffs<double>::kTp] != start.values[AerialCoeffs<double>::kTp]);
}

TEST_CASE("--hold's names: blocks and coefficients, a block's name first; unknown ones refused") {
  const CoeffLayout& ball = *FindModel("ball").layout;
  FitSelection s;
  auto held = [&](std::vector<std::string> names) {
    s.held = std::move(names);
    std::vector<std::string> out;
    const std::vector<bool> mask = s.HeldMask(ball);
    for (int i = 0; i < ball.size(); ++i)
      if (mask[static_cast<std::size_t>(i)]) out.push_back(ball.names[i]);
    return out;
  };
  CHECK(held({"recovery"}) == std::vector<std::string>{"recovery"});
  CHECK(held({"geometry"}) == std::vector<std::string>{"contact_radius", "recovery"});
  CHECK(held({"drag"}) == std::vector<std::string>{"drag"});  // block and coefficient alike
  CHECK(held({"mu", "spin", "recovery"}) ==
        std::vector<std::string>{"mu", "spin_factor", "recovery"});
  std::string why;
  s.held = {"drag", "recovery"};
  CHECK(s.Check(ball, &why));
  s.held = {"recovery", "bogus"};
  REQUIRE_FALSE(s.Check(ball, &why));
  CHECK(why == "--hold: unknown parameter block or coefficient \"bogus\" (this model's blocks: "
               "bounce, spin, drag, geometry; coefficients: restitution, mu, Y, spin_factor, drag, "
               "contact_radius, recovery)");
  FitOptions options;
  options.quiet = true;
  options.selection.held = {"T_q"};
  CHECK_THROWS_AS(FitEpisodes(Synthetic(), {}, DefaultCoeffs("aerial", AerialLayout()), options),
                  InputError);
}

TEST_CASE("a model's held-by-default names: the ball's drag, contact_radius and recovery") {
  using Names = std::vector<std::string>;
  FitOptions options;
  options.model = "ball";
  FitOptions with = WithModelDefaults(options);
  CHECK(with.selection.held == Names{"drag", "contact_radius", "recovery"});
  REQUIRE(with.selection.held_at.size() == 3);
  CHECK(with.selection.held_at[0].value == game::kBallDrag);
  CHECK(with.selection.held_at[1].value == 93.1504);  // push30's contact boundary
  CHECK(with.selection.held_at[2].value == 0.797);    // push30's push-out slope
  CHECK(WithModelDefaults(with).selection.held == with.selection.held);  // once only
  CHECK(WithModelDefaults(with).selection.held_at.size() == 3);
  // Held by --hold: at the start's value (no held_at entry), the others as by default.
  options.selection.held = {"recovery"};
  with = WithModelDefaults(options);
  CHECK(with.selection.held == Names{"recovery", "drag", "contact_radius"});
  REQUIRE(with.selection.held_at.size() == 2);
  CHECK(with.selection.held_at[0].name == "drag");
  CHECK(with.selection.held_at[1].name == "contact_radius");
  options.selection.freed = {"drag", "contact_radius"};
  with = WithModelDefaults(options);
  CHECK(with.selection.held == Names{"recovery"});
  CHECK(with.selection.held_at.empty());
  // A block named by --hold holds its coefficients at the start's values.
  options.selection.freed = {};
  options.selection.held = {"geometry"};
  with = WithModelDefaults(options);
  CHECK(with.selection.held == Names{"geometry", "drag"});
  REQUIRE(with.selection.held_at.size() == 1);
  CHECK(with.selection.held_at[0].name == "drag");
  // Freeing what the model does not hold by default, or holding and freeing one name: refused.
  options.selection.freed = {"mu"};
  CHECK_THROWS_WITH_AS(WithModelDefaults(options),
                       "(options): --free mu: the ball fit does not hold it by default (held by "
                       "default: drag, contact_radius, recovery)",
                       InputError);
  options.selection.freed = {"drag"};
  options.selection.held = {"drag"};
  std::string why;
  CHECK_FALSE(options.selection.Check(*FindModel("ball").layout, &why));
  CHECK(why == "--hold and --free both name \"drag\"");
  // The aerial fit holds nothing by default.
  FitOptions aerial;
  CHECK(WithModelDefaults(aerial).selection.held.empty());
  CHECK(WithModelDefaults(aerial).selection.held_at.empty());
  aerial.selection.freed = {"D_r"};
  CHECK_THROWS_AS(WithModelDefaults(aerial), InputError);
}

TEST_CASE("the ball's held-by-default coefficients start at their measured values, any start") {
  const CoeffLayout& ball = *FindModel("ball").layout;
  CoeffFile start = DefaultCoeffs("ball", ball);
  // A start elsewhere, as results/ball/coeffs.json is (contact_radius 93.1672, recovery 0.780).
  start.values[BallCoeffs<double>::kContactRadius] = 93.1672;
  start.values[BallCoeffs<double>::kRecovery] = 0.780;
  start.values[BallCoeffs<double>::kDrag] = -0.0305;
  start.values[BallCoeffs<double>::kMu] = 0.29;
  FitOptions options;
  options.model = "ball";
  const CoeffFile held = WithHeldValues(start, WithModelDefaults(options).selection, ball);
  CHECK(held.values[BallCoeffs<double>::kContactRadius] == 93.1504);
  CHECK(held.values[BallCoeffs<double>::kRecovery] == 0.797);
  CHECK(held.values[BallCoeffs<double>::kDrag] == game::kBallDrag);
  CHECK(held.values[BallCoeffs<double>::kMu] == 0.29);  // fitted: the start's
  // --free recovery and --hold contact_radius: both from the start's values.
  options.selection.freed = {"recovery"};
  options.selection.held = {"contact_radius"};
  const CoeffFile mixed = WithHeldValues(start, WithModelDefaults(options).selection, ball);
  CHECK(mixed.values[BallCoeffs<double>::kContactRadius] == 93.1672);
  CHECK(mixed.values[BallCoeffs<double>::kRecovery] == 0.780);
  CHECK(mixed.values[BallCoeffs<double>::kDrag] == game::kBallDrag);
  // Selections that hold nothing by value leave the start as it is.
  CHECK(WithHeldValues(start, FitSelection{}, ball).values == start.values);
}

TEST_CASE("the fit keeps every coefficient within its bounds and writes a file replay reads") {
  // Data from a car whose roll damping pumps energy (D_r = +1 1/s, outside [-50, 0]): the
  // unconstrained optimum lies outside the bounds, so the fit must stop on the bound.
  const ModelInfo& model = FindModel("aerial");
  CoeffFile truth = SeedAtFitTiming();
  truth.values[AerialCoeffs<double>::kDr] = 1.0;
  std::vector<Episode> episodes;
  for (unsigned seed : {1u, 2u}) episodes.push_back(Tumbling(truth, seed, 120));
  FitOptions options;
  options.quiet = true;
  options.selection.held = {"thrust", "orientation_drift"};
  const CoeffFile start = DefaultCoeffs("aerial", *model.layout);
  const FitResult r = FitEpisodes(episodes, {}, start, options);
  for (int i = 0; i < model.layout->size(); ++i) {
    INFO(model.layout->names[i]);
    CHECK(model.layout->Bound(i).Contains(r.coeffs.values[i]));
  }
  CHECK(r.coeffs.values[AerialCoeffs<double>::kDr] == 0.0);  // on its upper bound
  REQUIRE(r.at_bounds.size() == 1);
  CHECK(r.at_bounds[0] == "D_r");
  CHECK(r.coeffs.fit_report["at_bounds"]["D_r"] == 0.0);
  testing::TempDir dir;
  WriteCoeffFile(dir.path() + "/c.json", r.coeffs, *model.layout);
  const CoeffFile back = ReadCoeffFile(dir.path() + "/c.json", "aerial", *model.layout);
  CHECK(back.values == r.coeffs.values);
}

TEST_CASE("a fit that starts outside the bounds or with bad integration is refused") {
  FitOptions options;
  options.quiet = true;
  CoeffFile start = DefaultCoeffs("aerial", AerialLayout());
  start.values[AerialCoeffs<double>::kDp] = 1e20;
  try {
    FitEpisodes(Synthetic(), {}, start, options);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("D_p 1e+20 is outside its bounds") != std::string::npos);
  }
  std::string why;
  options.integration.tick_rate_hz = 1e9;
  CHECK_FALSE(options.Check(&why));
  CHECK(why.find("tick_rate_hz = 1e+09 is outside [10, 1000] Hz") != std::string::npos);
  CHECK_THROWS_AS(FitEpisodes(Synthetic(), {}, DefaultCoeffs("aerial", AerialLayout()), options),
                  InputError);
}

TEST_CASE("a failed solve is one InputError with the solver's message; nothing is written") {
  // A recorded value that is not finite makes every rollout residual of its windows NaN: Ceres
  // cannot evaluate the cost at the start and stops with FAILURE. Before, the standard errors
  // were computed anyway (SIGSEGV in ceres::Covariance's SVD).
  std::vector<Episode> episodes = Synthetic();
  for (Episode& ep : episodes)
    for (Sample& row : ep.rows) row.v(0) = std::nan("");
  FitOptions options;
  options.quiet = true;
  options.init_coeffs = "C.json";
  try {
    FitEpisodes(episodes, {}, DefaultCoeffs("aerial", AerialLayout()), options);
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("fit aerial from C.json: the solver failed: ") == 0);
    CHECK(what.find("no coefficients written") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("a fit that makes no progress says so; undetermined coefficients get no error, not 0") {
  // No boost and no throttle: the residuals do not depend on the thrust block, the only one
  // left varying, so the solver stops where it starts and nothing determines thrust.
  Episode ep = Tumbling(DefaultCoeffs("aerial", AerialLayout()), 5, 120);
  for (Sample& row : ep.rows) {
    row.input.boost = false;
    row.input.throttle = 0.0;
  }
  const CoeffFile seed = DefaultCoeffs("aerial", AerialLayout());
  ep = Resimulate(ep, *FindModel("aerial").make_predictor(seed, ""), 0);
  FitOptions options;
  options.quiet = true;
  options.selection.held = {"air_torque", "air_damping", "orientation_drift"};
  const FitResult r = FitEpisodes({ep, ep}, {}, DefaultCoeffs("aerial", AerialLayout()), options);
  CHECK(r.stopped_at_start);
  CHECK(r.solver_summary.find("stopped at its start: ") == 0);
  CHECK(r.coeffs.fit_report["termination"].get<std::string>().find("stopped at its start") == 0);
  CHECK(std::isnan(r.coeffs.std_errors[AerialCoeffs<double>::kBoostAccel]));
  CHECK(std::isnan(r.coeffs.std_errors[AerialCoeffs<double>::kThrottleAccel]));
  CHECK(r.coeffs.std_errors[AerialCoeffs<double>::kTr] == 0.0);  // held: exact by choice
  CHECK(r.coeffs.fit_report["covariance_note"].get<std::string>().find("boost_accel") !=
        std::string::npos);
  const nlohmann::json j = CoeffFileToJson(r.coeffs, AerialLayout());
  CHECK(j["std_errors"]["boost_accel"].is_null());
}

}  // namespace
}  // namespace rlfit
