// Tests of the ground fit: derivatives of the rollout residual, a synthetic round trip, and the
// selection of flat-ground rollout windows.
#include "fit/ground_fit.h"


#include <cstring>
#include <random>

#include "fit/fit.h"
#include "fit/fit_common.h"
#include "src/replay/synth.h"
#include "tests/fit_test_util.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

// A car driving on flat ground with random piecewise-constant throttle, steer and boost (each
// held 10-60 rows) at 61 Hz rows, simulated with `coeffs`. Long boosts take it past 2000 uu/s,
// long reverse throttle to -1400 uu/s, so every coefficient matters.
Episode Driving(const CoeffFile& coeffs, unsigned seed, int rows = 1200) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> level(-2, 2), hold(10, 60), die(0, 5);
  Episode ep;
  ep.name = "driving_" + std::to_string(seed) + ".csv";
  ep.rows.resize(rows);
  CarInputs u;
  for (int k = 0, next = 0; k < rows; ++k) {
    if (k == next) {
      u.throttle = 0.5 * level(rng);
      u.steer = 0.5 * level(rng);
      const int roll = die(rng);
      u.boost = roll >= 4;               // a third of the time
      if (roll == 0) u.throttle = -1.0;  // and extra reverse
      next = k + hold(rng) * (u.boost || u.throttle < 0 ? 2 : 1);
    }
    ep.rows[k].t_s = k / game::kEpisodeRowRateHz;
    ep.rows[k].input = u;
    ep.rows[k].on_ground = true;
  }
  ep.step_dt_s.assign(rows - 1, 1.0 / game::kEpisodeRowRateHz);
  ep.step_ticks.assign(rows - 1, 2);
  ep.rows[0].x = Eigen::Vector3d(0, 0, game::kCarRestHeight);
  ep.rows[0].v = Eigen::Vector3d(0, 0, game::kCarRestReportedVz);
  ep.rows[0].theta =
      EulerToMatrix(-104 * game::kRadiansPerUnrealUnit, 0.3, -8 * game::kRadiansPerUnrealUnit);
  Episode out = Resimulate(ep, *FindModel("ground").make_predictor(coeffs, ""), 0);
  for (Sample& s : out.rows) s.on_ground = true;
  return out;
}

TEST_CASE("GradientChecker: autodiff of the ground rollout residual matches finite differences") {
  const Episode ep = Driving(DefaultCoeffs("ground", GroundLayout()), 5, 400);
  std::vector<double> params = GroundLayout().defaults;
  for (double& p : params) p *= 1.03;  // away from the simulated truth: residuals non-zero
  std::vector<const double*> blocks;
  for (const ParamBlock& b : GroundLayout().blocks) blocks.push_back(params.data() + b.offset);
  ceres::NumericDiffOptions numeric;
  // GradientChecker differentiates by Ridders' extrapolation, which starts at a 1% step: that
  // straddles the model's branches (curvature knots, the drive cut-off, braking to a stop) and
  // gives wrong "numeric" derivatives of a correct autodiff. Start inside one branch instead.
  numeric.ridders_relative_initial_step_size = 1e-6;
  // Several windows: accelerating, braking, boosting, turning both ways. The residual has kinks
  // where the speed crosses a curvature knot or the car stops and reverses (rows 240-270 cross
  // 1750 uu/s, rows 300-330 stop): derivatives there are one-sided, so windows avoid them.
  for (int start : {20, 120, 200, 280}) {
    std::unique_ptr<ceres::CostFunction> cost(
        GroundRolloutResidual::Create(&ep, start, 30, Integration{}));
    // Entries near zero make the per-entry relative error meaningless; compare each block's
    // worst absolute error with its largest entry. 1e-6: Ridders from a 1e-6 step keeps about
    // 7 digits on residuals built over 60 ticks. A block may be all zero in a window (no
    // boost in it, say).
    constexpr double kBlockRelativePrecision = 1e-6;
    INFO("window " << start);
    testing::CheckJacobianBlocks(*cost, blocks.data(), numeric, kBlockRelativePrecision, false);
  }
}

// Evaluates `cost` at `params` with every Jacobian block asked for (but block `held`, as for a
// constant block): residuals, then each block's row-major Jacobian.
std::vector<double> EvaluateAll(const ceres::CostFunction& cost, const std::vector<double>& params,
                                int held = -1) {
  std::vector<const double*> blocks;
  std::vector<std::vector<double>> jac;
  for (const ParamBlock& b : GroundLayout().blocks) {
    blocks.push_back(params.data() + b.offset);
    jac.emplace_back(static_cast<std::size_t>(cost.num_residuals()) * b.size);
  }
  std::vector<double*> jac_ptrs;
  for (auto& j : jac) jac_ptrs.push_back(j.data());
  if (held >= 0) jac_ptrs[held] = nullptr;
  std::vector<double> out(cost.num_residuals());
  REQUIRE(cost.Evaluate(blocks.data(), out.data(), jac_ptrs.data()));
  for (const auto& j : jac) out.insert(out.end(), j.begin(), j.end());
  return out;
}

TEST_CASE("active lanes: the ground Jacobian is the full autodiff's, bit for bit") {
  const Episode ep = Driving(DefaultCoeffs("ground", GroundLayout()), 5, 600);
  std::vector<double> params = GroundLayout().defaults;
  for (double& p : params) p *= 1.03;
  // Windows across boosts, reversing, stops and curvature knots (see the GradientChecker test),
  // so that the active set differs from window to window and changes inside some.
  int narrower = 0;
  for (int start = 0; start + 61 < ep.size(); start += 37) {
    std::unique_ptr<ceres::CostFunction> full(
        GroundRolloutResidual::Create(&ep, start, 61, Integration{}));
    std::unique_ptr<ceres::CostFunction> active(
        GroundRolloutResidual::CreateActive(&ep, start, 61, Integration{}));
    const std::vector<double> a = EvaluateAll(*full, params), b = EvaluateAll(*active, params);
    INFO("window " << start);
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
    // After a cost-only evaluation the Jacobian at the same point takes its set of coefficients
    // from that pass; at another point it recomputes it. Both the full autodiff's, also with a
    // block held (curvature, block 3: the set restricted to the blocks asked for).
    std::vector<double> moved = params;
    for (double& p : moved) p *= 1.02;
    std::vector<const double*> at_params, at_moved;
    for (const ParamBlock& blk : GroundLayout().blocks) {
      at_params.push_back(params.data() + blk.offset);
      at_moved.push_back(moved.data() + blk.offset);
    }
    std::vector<double> r(active->num_residuals());
    for (int held : {-1, 3}) {
      const std::vector<double> expected = EvaluateAll(*full, params, held);
      REQUIRE(active->Evaluate(at_params.data(), r.data(), nullptr));
      const std::vector<double> same_point = EvaluateAll(*active, params, held);
      REQUIRE(active->Evaluate(at_moved.data(), r.data(), nullptr));
      const std::vector<double> other_point = EvaluateAll(*active, params, held);
      REQUIRE(same_point.size() == expected.size());
      REQUIRE(other_point.size() == expected.size());
      CHECK(std::memcmp(same_point.data(), expected.data(), expected.size() * sizeof(double)) == 0);
      CHECK(std::memcmp(other_point.data(), expected.data(), expected.size() * sizeof(double)) ==
            0);
    }
    // A window that reads fewer than all coefficients has all-zero columns in the full
    // Jacobian too; count them to show the test covers narrower Jets.
    int zero_columns = 0;
    for (int c = 0; c < GroundLayout().size(); ++c) {
      bool zero = true;
      for (const ParamBlock& blk : GroundLayout().blocks)
        if (c >= blk.offset && c < blk.offset + blk.size) {
          const std::size_t base = full->num_residuals();
          std::size_t block_start = base;
          for (const ParamBlock& q : GroundLayout().blocks) {
            if (&q == &blk) break;
            block_start += static_cast<std::size_t>(full->num_residuals()) * q.size;
          }
          for (int r = 0; r < full->num_residuals() && zero; ++r)
            zero = a[block_start + r * blk.size + (c - blk.offset)] == 0.0;
        }
      zero_columns += zero ? 1 : 0;
    }
    narrower += zero_columns > 0 ? 1 : 0;
  }
  CHECK(narrower > 0);
  // Cost-only evaluations (trial steps) give the same residuals too.
  std::unique_ptr<ceres::CostFunction> full(
      GroundRolloutResidual::Create(&ep, 100, 61, Integration{}));
  std::unique_ptr<ceres::CostFunction> active(
      GroundRolloutResidual::CreateActive(&ep, 100, 61, Integration{}));
  std::vector<const double*> blocks;
  for (const ParamBlock& blk : GroundLayout().blocks) blocks.push_back(params.data() + blk.offset);
  std::vector<double> ra(full->num_residuals()), rb(active->num_residuals());
  REQUIRE(full->Evaluate(blocks.data(), ra.data(), nullptr));
  REQUIRE(active->Evaluate(blocks.data(), rb.data(), nullptr));
  CHECK(ra == rb);
}

TEST_CASE("active lanes: the columns written for ReducedCost are the full autodiff's Jacobian, "
          "bit for bit") {
  const Episode ep = Driving(DefaultCoeffs("ground", GroundLayout()), 5, 600);
  std::vector<double> params = GroundLayout().defaults;
  for (double& p : params) p *= 1.03;
  std::vector<const double*> blocks;
  for (const ParamBlock& blk : GroundLayout().blocks) blocks.push_back(params.data() + blk.offset);
  for (int start = 0; start + 61 < ep.size(); start += 111) {
    std::unique_ptr<ceres::CostFunction> full(
        GroundRolloutResidual::Create(&ep, start, 61, Integration{}));
    std::unique_ptr<ceres::CostFunction> active(
        GroundRolloutResidual::CreateActive(&ep, start, 61, Integration{}));
    const auto* columns = dynamic_cast<const ColumnMajorJacobian*>(active.get());
    REQUIRE(columns != nullptr);
    const int m = full->num_residuals();
    for (int held : {-1, 3}) {
      INFO("window " << start << ", held block " << held);
      std::vector<std::vector<double>> jac(GroundLayout().blocks.size());
      std::vector<double*> jac_pointers;
      bool asked[8];
      int q = 0;
      for (std::size_t b = 0; b < GroundLayout().blocks.size(); ++b) {
        asked[b] = static_cast<int>(b) != held;
        if (asked[b]) {
          jac[b].assign(static_cast<std::size_t>(m) * GroundLayout().blocks[b].size, 0.0);
          q += GroundLayout().blocks[b].size;
        }
        jac_pointers.push_back(asked[b] ? jac[b].data() : nullptr);
      }
      std::vector<double> r_full(m), r_cols(m), cols(static_cast<std::size_t>(m) * q, -1.0);
      REQUIRE(full->Evaluate(blocks.data(), r_full.data(), jac_pointers.data()));
      REQUIRE(columns->EvaluateColumns(blocks.data(), r_cols.data(), asked, cols.data()));
      CHECK(std::memcmp(r_full.data(), r_cols.data(), sizeof(double) * m) == 0);
      int col = 0, differ = 0;
      for (std::size_t b = 0; b < GroundLayout().blocks.size(); ++b) {
        if (!asked[b]) continue;
        const int size = GroundLayout().blocks[b].size;
        for (int j = 0; j < size; ++j, ++col)
          for (int r = 0; r < m; ++r)
            differ += std::memcmp(&jac[b][r * size + j], &cols[col * m + r], sizeof(double)) != 0;
      }
      CHECK(col == q);
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("synthetic round trip: perturbed ground coefficients are recovered") {
  const ModelInfo& model = FindModel("ground");
  CoeffFile truth = DefaultCoeffs("ground", *model.layout);
  // Away from the defaults, near what the recordings give (see the fit report).
  truth.values = {1610.0,  1395.0,  0.11,    3600.0, 540.0, 970.0, 1010.0, 0.0075, 0.0041, 0.0023,
                  0.00134, 0.00111, 0.00085, 17.0,   20.0,  31.0,  0.9,    0.97,   29.0,   32.0};
  REQUIRE(static_cast<int>(truth.values.size()) == model.layout->size());
  std::vector<Episode> episodes;
  for (unsigned seed : {1u, 2u, 3u}) episodes.push_back(Driving(truth, seed));

  const CoeffFile start = testing::Jittered(truth, 0.05);
  const FitResult r = FitEpisodes(episodes, {}, start, testing::RoundTripOptions("ground"));
  // Noise-free data: the optimum is the truth up to solver tolerance. 1e-4 relative leaves
  // room for Ceres' default function tolerance (1e-6) on a cost that starts near 1e6.
  constexpr double kRecoveryRelative = 1e-4;
  testing::CheckRecovered(model.layout->names, start, r.coeffs, truth, kRecoveryRelative);
  CHECK(r.cost_final < 1e-6 * r.cost_initial);
}

TEST_CASE("rollout windows: only flat-ground rows, none across a jump or handbrake") {
  Episode ep = Driving(DefaultCoeffs("ground", GroundLayout()), 9, 200);
  FitOptions options;
  options.model = "ground";
  options.window_s = 0.5;
  options.stride_s = 0.5;
  std::vector<double> params = GroundLayout().defaults;
  ceres::Problem all;
  std::vector<int> block_episodes;
  const int n_all = AddGroundResiduals(&all, params.data(), {ep}, options, &block_episodes);
  CHECK(n_all == 6);
  CHECK(block_episodes == std::vector<int>(6, 0));  // windows starting at 0, 0.5, ... 2.5 s of a 3.26 s episode
  CHECK(IsFlatGroundRow(ep, 10));
  ep.rows[10].input.handbrake = true;
  CHECK_FALSE(IsFlatGroundRow(ep, 10));
  ep.rows[100].x.z() += 50.0;  // on a ramp or a wall
  CHECK_FALSE(IsFlatGroundRow(ep, 100));
  ceres::Problem some;
  // The windows at 0 and 1.5 s cross rows 10 and 100 and are gone; two restart where coverage
  // resumes, at rows 11 and 101.
  CHECK(AddGroundResiduals(&some, params.data(), {ep}, options, &block_episodes) == n_all);
}

}  // namespace
}  // namespace rlfit
