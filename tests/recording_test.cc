// Tests of the recording reader: every format, the timing inference, and bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "src/common/error.h"
#include "src/io/recording.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

using testing::TempDir;

// A 25-column car row at 61 Hz: free fall from (0, 0, 1000) with vx = 500.
std::string CarRow(int k, bool braces = false, bool timed = false) {
  const double dt = 1.0 / 60.96;
  const double t = k * dt;
  const double vz = -650.0 * t;
  const double z = 1000.0 - 0.5 * 650.0 * t * t;
  std::string row = (timed ? std::to_string(10.0 + t) + ", " : "") + std::to_string(500.0 * t) +
                    ", 0, " + std::to_string(z) + ", 500, 0, " + std::to_string(vz) +
                    ", 0, 0, 0, 0., 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 0";
  return braces ? "{" + row + "}" : row;
}

std::string CarFile(int rows, bool braces = false, bool timed = false) {
  std::string s;
  for (int k = 0; k < rows; ++k) s += CarRow(k, braces, timed) + "\n";
  return s;
}

// Expects ReadRecording to throw an InputError at this row and column.
void ExpectInputError(const std::string& path, int row, int column) {
  try {
    ReadRecording(path);
    FAIL("no error for " << path);
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.row() == row);
    CHECK(e.column() == column);
    CHECK(std::string(e.what()).find(path) == 0);
  }
}

TEST_CASE("25-column car episodes read with 61 Hz timing") {
  TempDir dir;
  const std::string path = dir.Write("episode_00.csv", CarFile(40));
  const auto episodes = ReadRecording(path);
  REQUIRE(episodes.size() == 1);
  const Episode& ep = episodes[0];
  CHECK(ep.size() == 40);
  CHECK(ep.kind == EpisodeKind::kCar);
  CHECK(ep.step_dt_s[0] == doctest::Approx(1.0 / 60.96));
  CHECK(ep.step_ticks[0] == 2);
  CHECK(ep.rows[39].t_s == doctest::Approx(39 / 60.96));
  CHECK(ep.rows[0].boost_amount == 100);
  CHECK(ep.rows[1].v.z() == doctest::Approx(-650.0 / 60.96).epsilon(1e-5));
}

TEST_CASE("{}-wrapped rows with Mathematica exponents read like plain rows") {
  TempDir dir;
  std::string s = CarFile(40, true);
  // A Mathematica exponent in the last row's wx cell: -9.*^-6 = -9e-6.
  const auto pos = s.rfind("0., 0, 0, 0, 0, 0, 0, 100");
  s.replace(pos, 2, "-9.*^-6");
  s.pop_back();  // no final newline, as in the .txt files
  const auto episodes = ReadRecording(dir.Write("driving.txt", s));
  REQUIRE(episodes.size() == 1);
  CHECK(episodes[0].size() == 40);
  CHECK(episodes[0].rows[39].omega.x() == doctest::Approx(-9e-6));
  CHECK(episodes[0].name == "driving_seg00.csv");
}

TEST_CASE("26-column timed recordings split at pauses") {
  TempDir dir;
  std::string s = CarFile(40, false, true);
  // A pause: shift the game time of the second half by 0.3 s.
  std::string paused;
  for (int k = 0; k < 80; ++k) {
    const double dt = 1.0 / 60.96;
    const double t = 10.0 + k * dt + (k >= 40 ? 0.3 : 0.0);
    std::string row = CarRow(k);
    paused += std::to_string(t) + ", " + row + "\n";
  }
  const auto episodes = ReadRecording(dir.Write("timed.txt", paused));
  REQUIRE(episodes.size() == 2);
  CHECK(episodes[0].size() == 40);
  CHECK(episodes[1].size() == 40);
  CHECK(episodes[1].name == "timed_seg01.csv");
}

TEST_CASE("13-column ball episodes drop duplicated rows and count skipped ones") {
  TempDir dir;
  std::string s;
  const double dt = 1.0 / 60.96;
  for (int k = 0; k < 40; ++k) {
    if (k == 20) continue;  // a skipped row
    const double t = k * dt;
    std::string row = std::to_string(std::round(t * 4096) / 4096) + ", " +
                      std::to_string(100 * t) + ", 0, 500, 100, 0, 0, 0, 0, 0, 0, 0, 0\n";
    s += row;
    if (k == 10) s += row;  // a duplicated row
  }
  const auto episodes = ReadRecording(dir.Write("episode_000001.csv", s));
  REQUIRE(episodes.size() == 1);
  const Episode& ep = episodes[0];
  CHECK(ep.kind == EpisodeKind::kBall);
  CHECK(ep.size() == 39);
  CHECK(ep.step_dt_s[19] == doctest::Approx(2 * dt));  // the row spanning the skip
  CHECK(ep.step_ticks[19] == 4);
  CHECK(ep.step_dt_s[0] == doctest::Approx(dt));
}

TEST_CASE("bad input names file, row and column") {
  TempDir dir;
  SUBCASE("missing file") { ExpectInputError(dir.path() + "/nope.csv", 0, 0); }
  SUBCASE("empty file") { ExpectInputError(dir.Write("e.csv", ""), 1, 0); }
  SUBCASE("wrong column count on the first row") {
    ExpectInputError(dir.Write("w.csv", "1,2,3\n"), 1, 0);
  }
  SUBCASE("too many columns later") {
    std::string s = CarFile(40);
    s.insert(s.find('\n', s.find('\n') + 1), ",7");  // row 2 gets a 26th cell
    ExpectInputError(dir.Write("m.csv", s), 2, 26);
  }
  SUBCASE("a truncated last row") {
    std::string s = CarFile(40);
    s.resize(s.size() - 20);
    ExpectInputError(dir.Write("t.csv", s), 40, 0);
  }
  SUBCASE("a non-number") {
    std::string s = CarFile(40);
    const auto row3 = s.find('\n', s.find('\n') + 1) + 1;
    s.replace(row3, s.find(',', row3) - row3, "abc");
    ExpectInputError(dir.Write("n.csv", s), 3, 1);
  }
  SUBCASE("NaN") {
    std::string s = CarFile(40);
    const auto row5 = [&] {
      std::size_t p = 0;
      for (int i = 0; i < 4; ++i) p = s.find('\n', p) + 1;
      return p;
    }();
    const auto col2 = s.find(',', row5) + 1;
    s.replace(col2, s.find(',', col2) - col2, "nan");
    ExpectInputError(dir.Write("nan.csv", s), 5, 2);
  }
  SUBCASE("an empty episode (one row)") { ExpectInputError(dir.Write("one.csv", CarFile(1)), 0, 0); }
}

TEST_CASE("folders expand to recordings and skip prediction files") {
  TempDir dir;
  dir.Write("episode_00.csv", CarFile(40));
  dir.Write("prediction_00.csv", "1,2,3,4,5,6,7,8,9\n");
  dir.Write("notes.md", "hello");
  const auto files = ExpandRecordingPaths({dir.path()});
  REQUIRE(files.size() == 1);
  CHECK(files[0].find("episode_00.csv") != std::string::npos);
  CHECK(FindBaselineFor(files[0]).has_value());
  CHECK_THROWS_AS(ExpandRecordingPaths({dir.path() + "/missing"}), InputError);
}

TEST_CASE("every recording of the datasets reads and validates") {
  const std::string root = testing::DataRoot();
  if (root.empty()) {
    MESSAGE("datasets not found; skipped");
    return;
  }
  const auto aerial = ReadRecordings({root + "/car_control/aerial"});
  CHECK(aerial.size() >= 10);
  for (const Episode& ep : aerial) CHECK(ep.size() == 301);
  const auto freefalling = ReadRecordings({root + "/car_control/freefalling"});
  for (const Episode& ep : freefalling) {
    // 1/120 s rows, some spanning two ticks.
    int two = 0;
    for (int t : ep.step_ticks) two += t == 2;
    CHECK(ep.step_ticks.front() >= 1);
    CHECK(two > 0);
    CHECK(two < ep.size() / 5);
  }
  const auto txt = ReadRecordings({root + "/car_control/freefall_spinning.txt"});
  CHECK(txt.size() >= 2);  // the teleport at row 16 cuts it
}

}  // namespace
}  // namespace rlfit
