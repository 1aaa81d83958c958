// Tests of the replay engine: statistics, horizons, synthetic episodes that replay with
// (near) zero error, the output files, and the coefficient files.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/common/error.h"
#include "src/io/coeff_file.h"
#include "src/io/files.h"
#include "src/models/aerial.h"
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
  CHECK(table.str().find("open loop from row 0") != std::string::npos);

  // The outputs: one trajectory per episode with a header and one row per recorded row.
  for (const EpisodeReport& e : report.episodes) {
    std::ifstream in(fs::path(out.path()) / e.name);
    REQUIRE(in.good());
    std::string header;
    std::getline(in, header);
    CHECK(header.rfind("row,t_s,x,y,z,vx,vy,vz,wx,wy,wz,", 0) == 0);
    int rows = 0;
    for (std::string line; std::getline(in, line);) ++rows;
    CHECK(rows == e.rows);
  }
  const nlohmann::json summary = ReadJsonFile(out.path() + "/replay_summary.json");
  CHECK(summary.at("schema_version") == 1);
  CHECK(summary.at("episodes").size() == report.episodes.size());
  CHECK(summary.at("aggregate").at("open_loop").at("dx").contains("last"));
  CHECK(fs::exists(out.path() + "/summary.txt"));
}

TEST_CASE("worse coefficients give a worse replay") {
  ReplayOptions options;
  options.paths = {testing::RepoDatasets() + "/synthetic/aerial"};
  options.quiet = true;
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

}  // namespace
}  // namespace rlfit
