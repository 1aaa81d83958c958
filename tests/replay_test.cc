// Tests of the replay engine: statistics, horizons, synthetic episodes that replay with
// (near) zero error, the output files, and the coefficient files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

#include "src/common/error.h"
#include "src/io/arena_file.h"
#include "src/io/coeff_file.h"
#include "src/io/files.h"
#include "src/models/aerial.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/episode_steps.h"
#include "src/replay/replay.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// Synthetic episodes are written with 10 significant digits and integer Euler angles
// (2 pi / 65536 rad = 0.0055 deg): their replay error is bounded by that rounding.
constexpr double kSyntheticDxUu = 0.01;
constexpr double kSyntheticAngleDeg = 0.02;

TEST_CASE("order statistics") {
  const Stats s = Summarize({5, 1, 4, 2, 3, 6, 7, 8, 9, 10});
  CHECK(s.n == 10);
  CHECK(s.median == doctest::Approx(5.5));
  CHECK(s.p90 == doctest::Approx(9.1));
  CHECK(s.max == 10);
  CHECK(Summarize({}).n == 0);
}

TEST_CASE("the p90 of a new set: bootstrap spread over episodes") {
  // Equal figures: every drawn set has the same p90.
  const P90Spread flat = BootstrapP90(std::vector<double>(50, 2.5), 20);
  CHECK(flat.n == 50);
  CHECK(flat.set_size == 20);
  CHECK(flat.p5 == 2.5);
  CHECK(flat.p95 == 2.5);
  // A tail made of few episodes (the ball's last row: 22 of 258 beyond 60 uu): 236 figures of
  // 1 and 22 of 1000. A set of 86 has 86 * 22/258 = 7.3 large ones on average (binomial sd
  // 2.6); its p90 (position 76.5 of 0..85) is 1 with 8 or fewer, 500 with 9, 1000 with 10 or
  // more. P(<= 8) ~ 0.68 and P(>= 10) ~ 0.2: the 5% and median are 1, the 95% is 1000.
  std::vector<double> cliff(236, 1.0);
  cliff.insert(cliff.end(), 22, 1000.0);
  const P90Spread small = BootstrapP90(cliff, 86);
  CHECK(Summarize(cliff).p90 == doctest::Approx(1.0));
  CHECK(small.p5 == 1.0);
  CHECK(small.p50 == 1.0);
  CHECK(small.p95 == 1000.0);
  // A set of 2580 needs 258 large ones (mean 220, sd 14): its p90 stays 1 in every draw seen.
  const P90Spread large = BootstrapP90(cliff, 2580, 200);
  CHECK(large.p95 == 1.0);
  // Fixed seed: the same figures on every run; another seed moves them on spread data.
  std::vector<double> spread;
  for (int i = 0; i < 200; ++i) spread.push_back(i * i);
  const P90Spread a = BootstrapP90(spread, 30), b = BootstrapP90(spread, 30);
  CHECK(a.p5 == b.p5);
  CHECK(a.p95 == b.p95);
  CHECK(a.p5 < a.p50);
  CHECK(a.p50 < a.p95);
  CHECK(BootstrapP90(spread, 30, kBootstrapDraws, 7).p95 != a.p95);
  // A diverged figure (+infinity) is worse than any number, and a set of them stays infinite.
  const P90Spread diverged =
      BootstrapP90(std::vector<double>(10, std::numeric_limits<double>::infinity()), 10);
  CHECK(std::isinf(diverged.p50));
  CHECK(BootstrapP90({}, 10).n == 0);
  CHECK(BootstrapP90({1.0}, 0).n == 0);
}

TEST_CASE("horizons pick the closest row and stop at the episode's end") {
  Episode ep;
  ep.rows.resize(100);
  ep.step_dt_s.assign(99, 1.0 / 60.96);
  for (int k = 0; k < 100; ++k) ep.rows[k].t_s = k / 60.96;
  CHECK(RowAtHorizon(ep, 0, 0.5) == 30);  // 30.48 rows
  CHECK(RowAtHorizon(ep, 10, 1.0) == 71);  // 60.96 rows
  CHECK(RowAtHorizon(ep, 0, 0.0) == 0);
  CHECK(RowAtHorizon(ep, 50, 2.0) == -1);
}

TEST_CASE("synthetic aerial episodes replay with near-zero error") {
  TempDir out;
  ReplayOptions options;
  options.model = "aerial";
  options.coeffs_path = "seed";  // the synthetic episodes were generated with these
  options.paths = {testing::RepoDatasets() + "/synthetic/aerial"};
  options.out_dir = out.path();
  options.quiet = true;
  std::ostringstream table;
  const ReplayReport report = RunReplay(options, table);
  REQUIRE(report.episodes.size() >= 2);
  const auto& q = Quantities(true);
  for (std::size_t h = 0; h < report.horizon_labels.size(); ++h) {
    CHECK(report.OpenLoop(q[0], h).max < kSyntheticDxUu);
    CHECK(report.OpenLoop(q[3], h).max < kSyntheticAngleDeg);
  }
  CHECK(table.str().find("open loop from the first covered row") != std::string::npos);
  CHECK(table.str().find("coefficients: seed notes") != std::string::npos);
  CHECK(report.reference_kind != "seed_coefficients");  // the run itself uses the seed

  // The outputs: one trajectory per episode with a header and one row per recorded row.
  for (const EpisodeReport& e : report.episodes) {
    std::ifstream in(fs::path(out.path()) / e.name);
    REQUIRE(in.good());
    std::string header;
    std::getline(in, header);
    CHECK(header.rfind("source_row,t_s,covered,regime,x,y,z,vx,vy,vz,wx,wy,wz,rec_x,", 0) == 0);
    CHECK(header.find(",pitch,yaw,roll,rec_pitch,rec_yaw,rec_roll,angle_err_deg") !=
          std::string::npos);
    int rows = 0;
    for (std::string line; std::getline(in, line);) ++rows;
    CHECK(rows == e.rows);
  }
  const nlohmann::json summary = ReadJsonFile(out.path() + "/replay_summary.json");
  CHECK(summary.at("schema_version") == 2);
  CHECK(summary.at("episodes").size() == report.episodes.size());
  CHECK(summary.at("coefficients_source") == "seed notes");
  CHECK(summary.at("options").at("coeffs") == "seed");
  CHECK(fs::exists(out.path() + "/summary.txt"));
}

TEST_CASE("worse coefficients give a worse replay") {
  ReplayOptions options;
  options.paths = {testing::RepoDatasets() + "/synthetic/aerial"};
  options.quiet = true;
  options.coeffs_path = "seed";
  const ModelInfo& model = FindModel("aerial");
  const auto episodes = LoadEpisodesFor(model, options.paths, "");
  CoeffFile coeffs = DefaultCoeffs("aerial", *model.layout);
  for (int i : {AerialCoeffs<double>::kTr, AerialCoeffs<double>::kTp, AerialCoeffs<double>::kTy})
    coeffs.values[i] *= 1.1;
  const ReplayReport r = ReplayEpisodes(episodes, *model.make_predictor(coeffs, ""), model, options);
  CHECK(r.OpenLoop(Quantities(true)[2], 1).median > 0.05);  // |domega| at 1 s, rad/s
}

TEST_CASE("coefficient files round-trip and strict reads name the missing key") {
  TempDir dir;
  const CoeffLayout& layout = AerialLayout();
  CoeffFile file = DefaultCoeffs("aerial", layout);
  file.values[0] = -38.0;
  file.std_errors.assign(layout.size(), 0.1);
  file.integration.input_delay_s = 0.02;
  const std::string path = dir.path() + "/c.json";
  WriteCoeffFile(path, file, layout);
  const CoeffFile back = ReadCoeffFile(path, "aerial", layout);
  CHECK(back.values == file.values);
  CHECK(back.std_errors == file.std_errors);
  CHECK(back.integration.input_delay_s == 0.02);
  // tick_phase is written only when not 0 (files from before it and at phase 0 lack it).
  CHECK(!ReadJsonFile(path)["integration"].contains("tick_phase"));
  CHECK(back.integration.tick_phase == 0.0);
  file.integration.tick_phase = 0.15;
  const std::string phased = dir.path() + "/phased.json";
  WriteCoeffFile(phased, file, layout);
  CHECK(ReadCoeffFile(phased, "aerial", layout).integration.tick_phase == 0.15);

  nlohmann::json j = ReadJsonFile(path);
  j["coefficients"].erase("D_y");
  const std::string broken = dir.Write("broken.json", j.dump());
  try {
    ReadCoeffFile(broken, "aerial", layout);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("D_y") != std::string::npos);
  }
  CHECK_THROWS_AS(ReadCoeffFile(path, "ball", layout), InputError);
  CHECK_THROWS_AS(ReadCoeffFile(dir.Write("bad.json", "{"), "aerial", layout), InputError);
}

TEST_CASE("atomic writes leave no temporary file behind") {
  TempDir dir;
  WriteFileAtomic(dir.path() + "/a.txt", "hello");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
  CHECK_THROWS_AS(WriteFileAtomic(dir.path() + "/no/such/dir/a.txt", "x"), InputError);
}

// ---- The replay engine on hand-made episodes and predictors ----

// A hand-made car episode of `n` rows at the 61 Hz episode rate, moving at 1 uu/s along x in
// mid-air near the centre of the arena (so the aerial model covers every row).
Episode MakeEpisode(int n, const std::string& name = "episode_00.csv") {
  Episode ep;
  ep.path = "/tmp/made/" + name;
  ep.name = name;
  ep.rows.resize(n);
  for (int k = 0; k < n; ++k) {
    ep.rows[k].source_row = k + 2;  // after a header line
    ep.rows[k].t_s = k / 60.96;
    ep.rows[k].x = Eigen::Vector3d(1.0 * k / 60.96, 0.0, 500.0);
    ep.rows[k].v = Eigen::Vector3d(1.0, 0.0, 0.0);
  }
  ep.step_dt_s.assign(n - 1, 1.0 / 60.96);
  ep.step_ticks.assign(n - 1, 2);
  return ep;
}

// Predicts the recorded states, shifted along y by (rows since the start) * drift_uu, and
// "explodes" (x = 1e6 uu) from absolute row `explode_at` on. Records every Rollout call.
class FakePredictor : public Predictor {
 public:
  explicit FakePredictor(double drift_uu = 0.0, int explode_at = -1)
      : drift_uu_(drift_uu), explode_at_(explode_at) {}
  std::vector<PredictedState> Rollout(const Episode& ep, int start, int end) const override {
    calls.push_back({start, end});
    std::vector<PredictedState> out;
    for (int k = start; k <= end; ++k) {
      PredictedState p{ep.rows[k].x, ep.rows[k].v, ep.rows[k].omega, ep.rows[k].theta};
      p.x.y() += drift_uu_ * (k - start);
      if (explode_at_ >= 0 && k >= explode_at_) p.x.x() = 1e6;
      out.push_back(p);
    }
    return out;
  }
  long RowsRolled() const {
    long n = 0;
    for (const auto& [a, b] : calls) n += b - a + 1;
    return n;
  }
  mutable std::vector<std::pair<int, int>> calls;

 private:
  double drift_uu_;
  int explode_at_;
};

ReplayOptions QuietOptions() {
  ReplayOptions o;
  o.model = "aerial";
  o.quiet = true;
  return o;
}

// Rows of a 61 Hz episode per second of horizon (60.96), rounded up.
constexpr int kRowsPerSecond = 61;

TEST_CASE("replay work grows linearly with the episode: restarts stop at the longest horizon") {
  const ModelInfo& model = FindModel("aerial");  // horizons 0.5, 1, 2 s
  long rolled[2];
  int i = 0;
  for (int n : {3000, 6000}) {
    FakePredictor fake;
    const ReplayReport r = ReplayEpisodes({MakeEpisode(n)}, fake, model, QuietOptions());
    // One open-loop rollout over the whole (covered) episode...
    CHECK(fake.calls.front() == std::make_pair(0, n - 1));
    // ...and every windowed restart no longer than the longest horizon (2 s) plus a row.
    for (std::size_t c = 1; c < fake.calls.size(); ++c)
      CHECK(fake.calls[c].second - fake.calls[c].first <= 2 * kRowsPerSecond + 1);
    rolled[i++] = fake.RowsRolled();
    // The curve stops at the longest report horizon.
    CHECK(r.curve_horizons_s.back() == doctest::Approx(2.0));
    CHECK(r.curve_horizons_s.size() == 20);
  }
  // Twice the rows, about twice the work (quadratic would be 4x).
  CHECK(static_cast<double>(rolled[1]) / rolled[0] < 2.1);
}

// A window shorter than a row restarted several times at one row (--window 0.01 on a 61 Hz
// episode: 444 restarts over 271 rows); now each row is restarted at most once, and a window
// below one physics tick is refused.
TEST_CASE("restarts: a window shorter than a row restarts at every row once") {
  const ModelInfo& model = FindModel("aerial");
  const int n = 300;
  for (const double window_s : {1.0 / 120.0, 0.01, 0.5}) {
    FakePredictor fake;
    ReplayOptions o = QuietOptions();
    o.window_s = window_s;
    ReplayEpisodes({MakeEpisode(n)}, fake, model, o);
    std::vector<int> starts;
    for (std::size_t c = 1; c < fake.calls.size(); ++c) starts.push_back(fake.calls[c].first);
    CHECK(std::adjacent_find(starts.begin(), starts.end(), std::greater_equal<int>()) ==
          starts.end());  // strictly increasing: no row twice
    if (window_s < 1.0 / 60.96) CHECK(starts.size() == static_cast<std::size_t>(n - 1));
    else CHECK(starts.size() == 10);  // 0, 0.5, ..., 4.5 s of a 4.9 s episode
  }
  ReplayOptions o = QuietOptions();
  o.window_s = 0.001;
  std::string why;
  CHECK(!o.Check(&why));
  CHECK(why.find("--window must be at least 1/120 s") != std::string::npos);
}

TEST_CASE("a diverging rollout reports diverged_at_s, no numbers after it, and the count") {
  const ModelInfo& model = FindModel("aerial");
  FakePredictor fake(0.0, 100);  // explodes from row 100 (1.64 s)
  const ReplayReport r = ReplayEpisodes({MakeEpisode(300)}, fake, model, QuietOptions());
  const EpisodeReport& e = r.episodes[0];
  REQUIRE(e.diverged_at_s);
  CHECK(*e.diverged_at_s == doctest::Approx(100 / 60.96));
  const Quantity& dx = Quantities(true)[0];
  // 0.5 s and 1 s are before row 100: numbers; 2 s and the last row: diverged.
  REQUIRE(e.open_loop[0]);
  CHECK_FALSE(e.open_loop[0]->diverged);
  CHECK(e.open_loop[2]->diverged);
  CHECK(e.open_loop[3]->diverged);
  const Stats at2 = r.OpenLoop(dx, 2);
  CHECK(at2.n == 0);
  CHECK(at2.diverged == 1);
  CHECK(r.EpisodesDiverged() == 1);
  // Windowed restarts after row 100 diverge at once: never counted as numbers.
  const Stats w = r.Windowed(dx, 0);
  CHECK(w.diverged > 0);
  CHECK(w.max < 1.0);
  const std::string table = r.Table();
  CHECK(table.find("diverged (open loop): 1 of 1 episodes") != std::string::npos);
  CHECK(table.find("diverged at 1.64 s") != std::string::npos);
  const nlohmann::json j = r.ToJson();
  CHECK(j["episodes"][0]["diverged_at_s"].get<double>() == doctest::Approx(100 / 60.96));
  bool found = false;
  for (const auto& rec : j["errors"])
    if (rec["episode"] == "episode_00.csv" && rec["mode"] == "open_loop" &&
        rec["quantity"] == "dx" && rec["horizon_s"] == 2.0) {
      found = true;
      CHECK(rec["median"].is_null());
      CHECK(rec["diverged"] == 1);
    }
  CHECK(found);
  // The trajectory CSV leaves predicted fields empty from the diverged row on.
  const Episode ep = MakeEpisode(300);
  const std::string csv = TrajectoryCsv(ep, e, true);
  std::istringstream lines(csv);
  std::string line;
  for (int k = 0; k <= 100; ++k) std::getline(lines, line);  // header + rows 0..99
  CHECK(line.find(",,,") == std::string::npos);
  std::getline(lines, line);  // row 100
  CHECK(line.find("covered,,,,,,,,,,") != std::string::npos);
  // A recorded -0 is written 0, as rlsim predict writes it (src/common/number_text.h).
  Episode signed_zero = MakeEpisode(300);
  signed_zero.rows[1].v = Eigen::Vector3d(-0.0, -0.0, -0.0);
  std::istringstream zero_lines(TrajectoryCsv(signed_zero, e, true));
  for (int k = 0; k <= 2; ++k) std::getline(zero_lines, line);  // header + rows 0..1
  CHECK(line.find(",0,0,0,") != std::string::npos);
  CHECK(line.find("-0,") == std::string::npos);
}

TEST_CASE("departure: the first row of kDepartureRows with |dv| above kDepartureDvUuS") {
  Episode ep;
  ep.kind = EpisodeKind::kBall;
  ep.rows.resize(20);
  std::vector<PredictedState> pred(18);  // rows 2..19
  for (Sample& r : ep.rows) r.x = r.v = r.omega = Eigen::Vector3d::Zero();
  for (PredictedState& p : pred) p.x = p.v = p.omega = Eigen::Vector3d::Zero();
  CHECK(DepartureRow(ep, 2, pred) == -1);
  // A blip shorter than kDepartureRows (a bounce a tick off) is not a departure...
  for (int i = 3; i < 3 + kDepartureRows - 1; ++i) pred[i].v.x() = 2 * kDepartureDvUuS;
  CHECK(DepartureRow(ep, 2, pred) == -1);
  // ...a lasting error is, from its first row; one that reaches the end of the stretch too.
  for (int i = 10; i < 18; ++i) pred[i].v.y() = -1.5 * kDepartureDvUuS;
  CHECK(DepartureRow(ep, 2, pred) == 12);
  for (int i = 10; i < 16; ++i) pred[i].v.y() = 0.0;
  CHECK(DepartureRow(ep, 2, pred) == 18);
}

TEST_CASE("an empty horizon prints n/a and is null in JSON, never 0") {
  const ModelInfo& model = FindModel("aerial");
  ReplayOptions options = QuietOptions();
  options.horizons_s = {0.5, 5.0};  // the 2 s episode never reaches 5 s
  FakePredictor fake(1.0);
  const ReplayReport r = ReplayEpisodes({MakeEpisode(122)}, fake, model, options);
  const Quantity& dx = Quantities(true)[0];
  CHECK(r.OpenLoop(dx, 0).n == 1);
  CHECK(r.OpenLoop(dx, 1).n == 0);
  CHECK(r.Windowed(dx, 1).n == 0);
  const std::string table = r.Table();
  CHECK(table.find("|dx| uu      5s           n/a       n/a       n/a      0") !=
        std::string::npos);
  CHECK(table.find("0.000     0.000     0.000      0") == std::string::npos);
  const nlohmann::json j = r.ToJson();
  int checked = 0;
  for (const auto& rec : j["errors"])
    if (rec["horizon_s"] == 5.0) {
      CHECK(rec["n"] == 0);
      CHECK(rec["median"].is_null());
      CHECK(rec["p90"].is_null());
      CHECK(rec["max"].is_null());
      ++checked;
    }
  CHECK(checked > 0);
}

TEST_CASE("regimes: restart at coverage, count what is left out, windows stay inside") {
  const ModelInfo& model = FindModel("aerial");
  const int n = 600;
  std::vector<Regime> regimes(n, Regime::kCovered);
  for (int k = 0; k < 10; ++k) regimes[k] = Regime::kOnGround;
  for (int k = 300; k < 320; ++k) regimes[k] = Regime::kTouchingSurface;
  ReplayExtras extras;
  extras.regimes = {regimes};
  FakePredictor fake(1.0);  // dx = rows since the rollout's start
  const ReplayReport r = ReplayEpisodes({MakeEpisode(n)}, fake, model, QuietOptions(), extras);
  const EpisodeReport& e = r.episodes[0];
  CHECK(e.rows_scored == 570);
  CHECK(e.rows_left_out.at("on the ground") == 10);
  CHECK(e.rows_left_out.at("touching a surface") == 20);
  // Open loop once over each stretch, from its own first row.
  CHECK(fake.calls[0] == std::make_pair(10, 299));
  CHECK(fake.calls[1] == std::make_pair(320, 599));
  // Per-episode figures from the first stretch: 0.5 s after row 10 is row 40; last = row 299.
  CHECK(e.open_loop[0]->error.dx == doctest::Approx(30.0));
  CHECK(e.open_loop[3]->error.dx == doctest::Approx(289.0));
  // No rollout starts on an uncovered row or crosses a gap.
  for (const auto& [a, b] : fake.calls) {
    CHECK(regimes[a] == Regime::kCovered);
    CHECK(((b < 300) || (a >= 320)));
  }
  // Every windowed sample spans exactly its horizon (so it never crossed a gap), and there are
  // fewer 2 s samples than on the all-covered episode.
  const Quantity& dx = Quantities(true)[0];
  for (const ErrorPoint& p : e.windowed[2]) CHECK(p.error.dx == doctest::Approx(122.0));
  FakePredictor all_covered(1.0);
  const ReplayReport full = ReplayEpisodes({MakeEpisode(n)}, all_covered, model, QuietOptions());
  CHECK(r.Windowed(dx, 2).n < full.Windowed(dx, 2).n);
  // Restarts (every 30.48 rows) at rows 0 (ground) and 305 (surface) are skipped; a 2 s window
  // (122 rows) fits from 30, 61, 91, 122, 152 and 335, 366, 396, 427, 457 only (16 when all
  // rows are covered).
  CHECK(r.Windowed(dx, 2).n == 10);
  CHECK(full.Windowed(dx, 2).n == 16);
  const std::string table = r.Table();
  CHECK(table.find("left out: 10 on the ground, 20 touching a surface") != std::string::npos);
  const nlohmann::json j = r.ToJson();
  CHECK(j["episodes"][0]["rows_left_out"]["on the ground"] == 10);
  CHECK(j["episodes"][0]["rows_scored"] == 570);
}

TEST_CASE("a file no row of which the model covers is refused alone and skipped among others") {
  std::vector<Episode> eps = {MakeEpisode(100, "episode_00.csv"), MakeEpisode(100, "episode_01.csv")};
  std::vector<Regime> none(100, Regime::kOnGround);
  for (int k = 90; k < 100; ++k) none[k] = Regime::kTouchingSurface;
  std::vector<std::vector<Regime>> regimes = {none, std::vector<Regime>(100, Regime::kCovered)};
  std::vector<SkippedInput> skipped;
  std::ostringstream warnings;
  {
    auto e = eps;
    auto g = regimes;
    SelectCovered("aerial", &e, &g, false, "rlsim", warnings, &skipped);
    REQUIRE(e.size() == 1);
    CHECK(e[0].name == "episode_01.csv");
    REQUIRE(skipped.size() == 1);
    CHECK(skipped[0].reason ==
          "no row the aerial model covers (90 on the ground, 10 touching a surface)");
    CHECK(warnings.str() == "rlsim: skipped /tmp/made/episode_00.csv: no row the aerial model "
                            "covers (90 on the ground, 10 touching a surface)\n");
  }
  {
    std::vector<Episode> e = {eps[0]};
    std::vector<std::vector<Regime>> g = {none};
    try {
      SelectCovered("aerial", &e, &g, true, "rlsim", warnings, &skipped);
      FAIL("no error");
    } catch (const InputError& err) {
      CHECK(std::string(err.what()) == "/tmp/made/episode_00.csv: no row the aerial model covers "
                                       "(90 on the ground, 10 touching a surface)");
    }
    // Among several inputs, but nothing covered at all: an error too.
    CHECK_THROWS_AS(SelectCovered("aerial", &e, &g, false, "rlsim", warnings, &skipped),
                    InputError);
  }
}

TEST_CASE("JSON schema 2: keys, tidy records and nulls") {
  const ModelInfo& model = FindModel("aerial");
  FakePredictor fake(1.0), reference(2.0);
  ReplayExtras extras;
  extras.reference = &reference;
  extras.coefficients_source = "fit.json";
  const ReplayReport r = ReplayEpisodes({MakeEpisode(200)}, fake, model, QuietOptions(), extras);
  const nlohmann::json j = r.ToJson();
  for (const char* key : {"schema_version", "tool", "model", "units", "quantities", "horizons_s",
                          "window_s", "curve_step_s", "coefficients_source", "reference",
                          "skipped", "episodes", "errors", "curve"})
    CHECK_MESSAGE(j.contains(key), key);
  CHECK(j["schema_version"] == 2);
  CHECK(j["tool"] == "rlsim replay");
  CHECK(j["quantities"].size() == 4);
  CHECK(j["horizons_s"] == nlohmann::json({0.5, 1.0, 2.0}));
  CHECK(j["reference"]["kind"] == "seed_coefficients");
  CHECK(j["coefficients_source"] == "fit.json");
  const nlohmann::json& ep = j["episodes"][0];
  for (const char* key : {"name", "path", "output", "split", "rows", "rows_scored",
                          "rows_left_out", "duration_s", "diverged_at_s", "has_reference"})
    CHECK_MESSAGE(ep.contains(key), key);
  CHECK(ep["diverged_at_s"].is_null());
  CHECK(ep["split"] == "unseen");
  int last = 0, reference_records = 0;
  for (const auto& rec : j["errors"]) {
    for (const char* key : {"episode", "split", "mode", "quantity", "horizon_s", "n", "median",
                            "p90", "max"})
      CHECK_MESSAGE(rec.contains(key), key);
    if (rec["horizon_s"].is_null()) ++last;
    if (rec["mode"] == "reference" && rec["episode"] == "episode_00.csv" &&
        rec["quantity"] == "dx" && rec["horizon_s"] == 0.5) {
      ++reference_records;
      CHECK(rec["n"] == 1);
      CHECK(rec["median"].get<double>() == doctest::Approx(60.0));  // 30 rows x 2 uu
      CHECK(rec["max"] == rec["median"]);
    }
    if (rec["episode"].is_null()) CHECK((rec["split"] == "all" || rec["split"] == "unseen"));
  }
  CHECK(last > 0);
  CHECK(reference_records == 1);
  bool open_curve = false;
  for (const auto& rec : j["curve"]) {
    for (const char* key : {"split", "mode", "quantity", "horizon_s", "n", "median", "p90"})
      CHECK_MESSAGE(rec.contains(key), key);
    CHECK(rec["horizon_s"].get<double>() <= 2.0 + 1e-9);
    if (rec["mode"] == "open_loop" && rec["split"] == "all" && rec["quantity"] == "dx" &&
        std::abs(rec["horizon_s"].get<double>() - 1.0) < 1e-9) {
      open_curve = true;
      CHECK(rec["median"].get<double>() == doctest::Approx(61.0));
    }
  }
  CHECK(open_curve);
  // The reference table: this model 1 uu per row, the earlier one 2: ratio 0.5.
  CHECK(r.Table().find("0.500") != std::string::npos);
}

TEST_CASE("a garbage or wrong-length reference prediction is dropped with one warning") {
  TempDir dir;
  const std::string episode = testing::RepoDatasets() + "/synthetic/aerial/episode_9000.csv";
  fs::copy_file(episode, dir.path() + "/episode_00.csv");
  fs::create_directories(dir.path() + "/refs");
  ReplayOptions options = QuietOptions();
  options.coeffs_path = "seed";
  options.paths = {dir.path() + "/episode_00.csv"};
  options.facts.reference_dir = dir.path() + "/refs";  // --reference: refs/<recording's name>
  std::ostringstream table;
  std::stringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  struct Restore {
    std::streambuf* old;
    ~Restore() { std::cerr.rdbuf(old); }
  } restore{old};

  dir.Write("refs/episode_00.csv", "abc, def\n1,2\n");
  ReplayReport r = RunReplay(options, table);
  CHECK(r.episodes.size() == 1);
  CHECK_FALSE(r.episodes[0].has_reference);
  CHECK(r.reference_kind == "none");
  std::string err = captured.str();
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(err.rfind("rlsim: warning: " + dir.path() + "/refs/episode_00.csv: ", 0) == 0);
  CHECK(err.find("; compared without it\n") != std::string::npos);

  captured.str("");
  dir.Write("refs/episode_00.csv", "1,2,3,4,5,6,7,8,9\n1,2,3,4,5,6,7,8,9\n");
  r = RunReplay(options, table);
  err = captured.str();
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(err.find("2 rows, but its episode has") != std::string::npos);

  // A good one (the recorded states themselves) is the reference: zero error.
  captured.str("");
  const Episode ep = ReadRecording(dir.path() + "/episode_00.csv").front();
  std::ostringstream pred;
  pred.precision(10);
  for (const Sample& s : ep.rows)
    pred << s.x(0) << "," << s.x(1) << "," << s.x(2) << "," << s.v(0) << "," << s.v(1) << ","
         << s.v(2) << "," << s.omega(0) << "," << s.omega(1) << "," << s.omega(2) << "\n";
  dir.Write("refs/episode_00.csv", pred.str());
  r = RunReplay(options, table);
  CHECK(captured.str().empty());
  CHECK(r.reference_kind == "shipped_predictions");
  CHECK(r.Reference(Quantities(true)[0], 0).median < 1e-6);
}

TEST_CASE("trajectory CSV: one row per source row, merged rows repeat the row before") {
  Episode ep = MakeEpisode(4);
  // Source rows 2, 3, 5, 6: row 4 was an exact repeat of row 3, merged into it.
  ep.rows[2].source_row = 5;
  ep.rows[3].source_row = 6;
  ep.merged_source_rows = {4};
  FakePredictor fake;
  const ReplayReport r = ReplayEpisodes({ep}, fake, FindModel("aerial"), QuietOptions());
  const std::string csv = TrajectoryCsv(ep, r.episodes[0], true);
  std::istringstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 6);  // header + 5 source rows
  std::vector<int> sources;
  for (std::size_t i = 1; i < lines.size(); ++i) sources.push_back(std::stoi(lines[i]));
  CHECK(sources == std::vector<int>{2, 3, 4, 5, 6});
  CHECK(lines[3].substr(1) == lines[2].substr(1));  // same values, its own source row
  CHECK(lines[1].find(",1,covered,") != std::string::npos);
}

TEST_CASE("splits come from the coefficients' provenance, matched under the data root") {
  Episode ep = MakeEpisode(10);
  ep.path = "/data/here/car_control/aerial/episode_04.csv";
  ep.name = "episode_04.csv";
  const nlohmann::json provenance = {
      {"train_episodes", {"/other/machine/lobot/car_control/aerial/episode_00.csv",
                          "/other/machine/lobot/car_control/driving.txt#driving_seg01.csv"}},
      {"heldout_episodes", {"/other/machine/lobot/car_control/aerial/episode_04.csv"}}};
  CHECK(SplitOf(ep, provenance, "/data/here") == "heldout");
  ep.path = "/data/here/car_control/aerial/episode_00.csv";
  CHECK(SplitOf(ep, provenance, "/data/here") == "train");
  ep.path = "/data/here/car_control/aerial/episode_01.csv";
  CHECK(SplitOf(ep, provenance, "/data/here") == "unseen");
  CHECK(SplitOf(ep, nlohmann::json(), "/data/here") == "unseen");
  ep.path = "/data/here/car_control/driving.txt";
  ep.name = "driving_seg01.csv";
  ep.segment = 1;
  CHECK(SplitOf(ep, provenance, "/data/here") == "train");
  // A part the provenance does not name, of a file it does (cut since at a gap of dropped
  // frames): the file's side. Not a part of a file it does not name.
  ep.name = "driving_seg02.csv";
  ep.segment = 2;
  CHECK(SplitOf(ep, provenance, "/data/here") == "train");
  ep.path = "/data/here/car_control/jumps.txt";
  CHECK(SplitOf(ep, provenance, "/data/here") == "unseen");
  // A provenance with fingerprints matches by content, whatever the path or name.
  ep.fingerprint = 0x0123456789abcdefULL;
  const nlohmann::json by_content = {{"train_fingerprints", {"0123456789abcdef"}},
                                     {"heldout_fingerprints", {"00000000000000ff"}},
                                     {"train_episodes", {"/anything/else.csv"}}};
  CHECK(SplitOf(ep, by_content, "/data/here") == "train");
  ep.fingerprint = 0xff;
  CHECK(SplitOf(ep, by_content, "/somewhere") == "heldout");
  ep.fingerprint = 0xfe;
  CHECK(SplitOf(ep, by_content, "/data/here") == "unseen");

  // Tables put held-out first and training apart.
  FakePredictor fake;
  ReplayExtras extras;
  extras.provenance = {{"train_episodes", {"/x/a/episode_00.csv"}},
                       {"heldout_episodes", {"/x/a/episode_01.csv"}}};
  std::vector<Episode> eps = {MakeEpisode(100, "episode_00.csv"), MakeEpisode(100, "episode_01.csv")};
  eps[0].path = "/x/a/episode_00.csv";
  eps[1].path = "/x/a/episode_01.csv";
  const ReplayReport r = ReplayEpisodes(eps, fake, FindModel("aerial"), QuietOptions(), extras);
  CHECK(r.episodes[0].split == "train");
  CHECK(r.episodes[1].split == "heldout");
  const std::string table = r.Table();
  const auto held = table.find("== held-out episodes"), train = table.find("== training episodes");
  REQUIRE(held != std::string::npos);
  REQUIRE(train != std::string::npos);
  CHECK(held < train);
  CHECK(r.OpenLoop(Quantities(true)[0], 0, "heldout").n == 1);
}

// The streamed replay (one file at a time) against the one that reads every file first: the
// same table and the same summary JSON, with shipped predictions, with the seed reference,
// and with a file skipped for want of covered rows.
TEST_CASE("a streamed replay reports what the replay of all episodes at once reports") {
  const std::string root = testing::DataRoot();
  struct Case {
    std::string model;
    std::vector<std::string> paths;
    std::string root;
  };
  std::vector<Case> cases = {{"aerial", {testing::RepoDatasets() + "/synthetic/aerial"}, root},
                             {"ball", {testing::RepoDatasets() + "/synthetic/ball"}, root}};
  if (!root.empty()) {
    const std::string ball = root + "/ball_trajectories/";
    cases.push_back({"ball",
                     {ball + "episode_000000.csv", ball + "episode_000001.csv",
                      ball + "episode_000005.csv", ball + "episode_000002.csv"},
                     root});
    const std::string car = root + "/car_control/";
    cases.push_back({"ground",
                     {car + "ground_driving_no_handbrake/episode_00.csv",
                      car + "wall_driving/episode_17.csv",
                      car + "ground_driving_no_handbrake/episode_01.csv"},
                     root});
  }
  int with_shipped = 0, skipping = 0;
  for (const Case& c : cases) {
    if (c.model == "ball" && c.root.empty()) continue;  // needs the arena mesh
    ReplayReport reports[2];
    std::string tables[2];
    for (int stream = 0; stream < 2; ++stream) {
      ReplayOptions options;
      options.model = c.model;
      options.paths = c.paths;
      options.data_root = c.root;
      options.quiet = true;
      options.stream = stream == 1;
      std::ostringstream table;
      reports[stream] = RunReplay(options, table);
      tables[stream] = table.str();
    }
    CAPTURE(c.paths.front());
    CHECK(tables[1] == tables[0]);
    CHECK(reports[1].ToJson().dump() == reports[0].ToJson().dump());
    with_shipped += reports[1].reference_kind == "shipped_predictions" ? 1 : 0;
    skipping += reports[1].skipped.empty() ? 0 : 1;
  }
  if (!root.empty()) {
    CHECK(with_shipped > 0);
    CHECK(skipping > 0);
  }
}


// The ball predictor's rollout against chained AdvanceBallTicks calls (no clearance: the plain
// steps) from the tick pair around the same row, every row ==: the committed synthetic
// episodes, and constructed ones from random in-arena starts whose rows mix the 61 Hz clock row
// with doubled and tripled rows, with rollouts from several starts. So the replay's one
// PredictBall over all the ticks, its clock origin and its blends are the tick clock's.
TEST_CASE("the ball predictor's PredictBall on the tick clock gives chained AdvanceBallTicks' rows") {
  const std::string root = testing::DataRoot();
  if (root.empty()) {
    MESSAGE("skipped: no datasets root (meshes/pitch.dat)");
    return;
  }
  const Arena& arena = BallArena(root);
  const ModelInfo& model = FindModel("ball");
  const CoeffFile coeffs = LoadCoefficients(model, "");
  const Integration& integ = coeffs.integration;
  const auto c = BallCoeffs<double>::FromArray(coeffs.values.data());
  const std::unique_ptr<Predictor> predictor = model.make_predictor(coeffs, root);
  std::vector<Episode> episodes = ReadRecordings({testing::RepoDatasets() + "/synthetic/ball"});
  REQUIRE(episodes.size() == 3);
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int e = 0; e < 40; ++e) {
    Episode ep;
    ep.kind = EpisodeKind::kBall;
    ep.rows.resize(400);
    ep.rows[0].x = Eigen::Vector3d(3900.0 * u(rng), 5000.0 * u(rng), 1000.0 + 900.0 * u(rng));
    ep.rows[0].v = Eigen::Vector3d(u(rng), u(rng), u(rng)) * (e % 4 == 0 ? 5000.0 : 2000.0);
    ep.rows[0].omega = Eigen::Vector3d(u(rng), u(rng), u(rng)) * 5.0;
    for (int k = 0; k + 1 < ep.size(); ++k) {
      const double r = 0.5 * (u(rng) + 1.0);
      const double clock_rows = r < 0.8 ? 1.0 : r < 0.95 ? 2.0 : 3.0;
      ep.step_dt_s.push_back(clock_rows / 60.96);
      ep.step_ticks.push_back(SubstepsForRow(clock_rows / 60.96, 120.0));
    }
    episodes.push_back(std::move(ep));
  }
  long rows = 0, contacts = 0;
  for (const Episode& ep : episodes) {
    for (const int start : {0, 1, ep.size() / 3, ep.size() - 2}) {
      const int end = ep.size() - 1;
      const std::vector<PredictedState> rollout = predictor->Rollout(ep, start, end);
      REQUIRE(static_cast<int>(rollout.size()) == end - start + 1);
      BallState<double> s = FromSample<BallState<double>>(ep.rows[start]);
      int from = start;
      BallTicks<double> t =
          BallStartTicks(c, ep, start, BallClockOrigin(ep, c, integ), BallClockRowsPrefix(ep),
                         integ, arena, &from);
      for (int k = from; k < start; ++k) AdvanceBallTicks(c, &t, ep, k, integ, arena);
      for (int k = start;; ++k) {
        const PredictedState& p = rollout[k - start];
        REQUIRE(p.x == s.x);
        REQUIRE(p.v == s.v);
        REQUIRE(p.omega == s.omega);
        if (k == end) break;
        contacts += arena.Collide(s.x, c.contact_radius).hit;
        ++rows;
        s = AdvanceBallTicks(c, &t, ep, k, integ, arena);
      }
    }
  }
  CHECK(contacts > rows / 50);  // bounces and rolling ran, not just free flight
  // The restarts of one episode (RolloutEach: its clock worked out once) give Rollout's rows.
  for (const Episode& ep : episodes) {
    const int end = ep.size() - 1;
    const std::vector<std::pair<int, int>> windows = {
        {0, end}, {1, end / 2}, {ep.size() / 3, end}, {end - 1, end}, {end - 1, end - 1}};
    std::size_t seen = 0;
    predictor->RolloutEach(ep, windows, [&](std::size_t i, std::vector<PredictedState> pred) {
      REQUIRE(i == seen++);
      const std::vector<PredictedState> one =
          predictor->Rollout(ep, windows[i].first, windows[i].second);
      REQUIRE(pred.size() == one.size());
      for (std::size_t k = 0; k < one.size(); ++k) {
        REQUIRE(pred[k].x == one[k].x);
        REQUIRE(pred[k].v == one[k].v);
        REQUIRE(pred[k].omega == one[k].omega);
      }
    });
    CHECK(seen == windows.size());
  }
}


// A restart at a recorded row that holds no fraction of a bounce (on free flight from the row
// before) but whose tick pair at the row's guessed clock place bounces between its ticks starts
// from the previous row's pair (BallStartTicks). Episode 82 has no straddled bounce (half-tick
// clock guess); its row 244 is 7 uu below the contact radius falling at 967 uu/s, straight off
// free flight from row 243, and the next row is past the bounce: the fixed point at row 244's
// guessed place (0.815 tick) is an exact blend of a pair that bounced (tick0 vz -2,850, tick1
// +1,710), 556 uu off 0.5 s on; from row 243's pair 1.07 uu (the restart from row 243 itself).
TEST_CASE("ball restart at a row whose tick pair contradicts the record takes the row before's") {
  const std::string root = testing::DataRoot();
  if (root.empty()) {
    MESSAGE("skipped: no datasets root (recordings)");
    return;
  }
  // 10 uu: the restarts from rows 240-243 are 0.9-1.1 uu off at row 274, the bad pair 556.
  constexpr double kToleranceUu = 10.0;
  const ModelInfo& model = FindModel("ball");
  const CoeffFile coeffs = LoadCoefficients(model, "");
  const std::unique_ptr<Predictor> predictor = model.make_predictor(coeffs, root);
  const std::vector<Episode> eps =
      ReadRecordings({root + "/ball_trajectories/episode_000082.csv"});
  REQUIRE(eps.size() == 1);
  const Episode& ep = eps[0];
  REQUIRE(ep.size() > 275);
  const std::vector<PredictedState> from_244 = predictor->Rollout(ep, 244, 274);
  CHECK((from_244.back().x - ep.rows[274].x).norm() < kToleranceUu);
  CHECK(from_244.front().x == ep.rows[244].x);  // the first row is still the recorded one
  // A row off free flight (row 245, the bounce's other side) keeps its own pair: its rollout
  // is the one from row 245 of the episode cut there (0.06 uu at row 274).
  const std::vector<PredictedState> from_245 = predictor->Rollout(ep, 245, 274);
  CHECK((from_245.back().x - ep.rows[274].x).norm() < 1.0);
}


// A restart at a recorded row that holds a fraction of a bounce (the recorded steps into and out
// of it both off free flight) starts from the previous row's free pair too (BallStartTicks):
// the fixed point at such a row finds a pair the game never had. Episode 237, row 152 (a
// 1,776 uu/s side-ramp bounce, 1,593 uu/s of it in the step before the row, 619 after): the
// pair through the row is a free parabola, 230.9 uu off 0.5 s on, row 151's pair 0.07 uu;
// episode 89, row 396 (629 / 391 uu/s): the pair bounces between its ticks, 88.6 uu off, row
// 395's pair 0.02 (NOTES, issue 12, new34).
TEST_CASE("ball restart at a row inside a straddled bounce takes the row before's pair") {
  const std::string root = testing::DataRoot();
  if (root.empty()) {
    MESSAGE("skipped: no datasets root (recordings)");
    return;
  }
  // 5 uu: both restarts are 0.02-0.07 uu off from the row before's pair, 88.6-230.9 without.
  constexpr double kToleranceUu = 5.0;
  const ModelInfo& model = FindModel("ball");
  const CoeffFile coeffs = LoadCoefficients(model, "");
  const std::unique_ptr<Predictor> predictor = model.make_predictor(coeffs, root);
  for (const auto& [file, start] :
       {std::pair<std::string, int>{"episode_000237.csv", 152}, {"episode_000089.csv", 396}}) {
    CAPTURE(file);
    const std::vector<Episode> eps = ReadRecordings({root + "/ball_trajectories/" + file});
    REQUIRE(eps.size() == 1);
    const Episode& ep = eps[0];
    REQUIRE(ep.size() > start + 31);
    const std::vector<PredictedState> pred = predictor->Rollout(ep, start, start + 30);
    CHECK((pred.back().x - ep.rows[start + 30].x).norm() < kToleranceUu);
    CHECK(pred.front().x == ep.rows[start].x);  // the first row is still the recorded one
  }
}

}  // namespace
}  // namespace rlfit
