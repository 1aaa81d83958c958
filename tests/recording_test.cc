// Tests of the recording reader: every format, the timing inference, and bad input.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

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

// `rows` 25-column rows of a car driving along x at 500 uu/s on the floor, 61 Hz.
std::string FloorCarFile(int rows) {
  std::string s;
  for (int k = 0; k < rows; ++k)
    s += std::to_string(500.0 * k / 60.96) +
         ", 0, 17.01, 500, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 100, 1, 0, 0, 0, 0, 0, 0, 0\n";
  return s;
}

std::string CarFile(int rows, bool braces = false, bool timed = false) {
  std::string s;
  for (int k = 0; k < rows; ++k) s += CarRow(k, braces, timed) + "\n";
  return s;
}

// Expects ReadRecording to throw an InputError at this row and column whose message holds
// `text`.
void ExpectInputError(const std::string& path, int row, int column, const std::string& text = "") {
  try {
    ReadRecording(path);
    FAIL("no error for " << path);
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.row() == row);
    CHECK(e.column() == column);
    CHECK(std::string(e.what()).find(path) == 0);
    CHECK_MESSAGE(std::string(e.what()).find(text) != std::string::npos, e.what());
  }
}

// The same for ParseRecording on `contents` named `name`.
void ExpectParseError(const std::string& name, const std::string& contents, int row, int column,
                      const std::string& text) {
  try {
    ParseRecording(name, contents.data(), contents.size());
    FAIL("no error for " << name);
  } catch (const InputError& e) {
    CHECK(e.row() == row);
    CHECK(e.column() == column);
    CHECK_MESSAGE(std::string(e.what()).find(text) != std::string::npos, e.what());
  }
}

std::vector<Episode> Parse(const std::string& name, const std::string& contents) {
  return ParseRecording(name, contents.data(), contents.size());
}

// A 13-column ball row at time t_s: rolling along x at vx from x = 100 vx t.
std::string BallRow(double t_s, double vx = 100.0, double x = -1.0) {
  if (x < 0.0) x = vx * t_s;
  return std::to_string(t_s) + ", " + std::to_string(x) + ", 0, 93.15, " + std::to_string(vx) +
         ", 0, 0, 0, 0, 0, 0, 0, 0\n";
}

// `rows` ball rows at 61 Hz (k = 0 .. rows - 1).
std::string BallFile(int rows, double vx = 100.0) {
  std::string s;
  for (int k = 0; k < rows; ++k) s += BallRow(k / 60.96, vx);
  return s;
}

// Replaces the cell at 0-based `column` of the 1-based line `line` of `s`.
std::string WithCell(std::string s, int line, int column, const std::string& value) {
  std::size_t p = 0;
  for (int i = 1; i < line; ++i) p = s.find('\n', p) + 1;
  for (int c = 0; c < column; ++c) p = s.find(',', p) + 1;
  while (s[p] == ' ' || s[p] == '{') ++p;
  const std::size_t end = s.find_first_of(",}\n", p);
  return s.replace(p, end - p, value);
}

// The 1-based line `line` of `s`, with its newline.
std::string Line(const std::string& s, int line) {
  std::size_t p = 0;
  for (int i = 1; i < line; ++i) p = s.find('\n', p) + 1;
  return s.substr(p, s.find('\n', p) + 1 - p);
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

TEST_CASE("unlimited boost: held while the recorded amount never falls, from the rows alone") {
  const std::string plain = CarFile(40);
  // Column 23 boost input, 16 boost amount (0-based).
  std::string held = plain;
  for (int line = 5; line <= 30; ++line) held = WithCell(held, line, 23, "1");
  std::string drained = held;
  for (int line = 6; line <= 40; ++line) drained = WithCell(drained, line, 16, "99.4");
  auto read = [](const std::string& name, const std::string& text) {
    const auto episodes = ParseRecording(name, text.data(), text.size());
    REQUIRE(episodes.size() == 1);
    return episodes[0].unlimited_boost;
  };
  CHECK_FALSE(read("episode_00.csv", plain));  // never held: nothing to say
  CHECK(read("episode_00.csv", held));          // held, 100 on every row: the Lobot recordings
  CHECK_FALSE(read("episode_00.csv", drained));  // the amount falls: boost ran as the game's
  CHECK(read("other_name.csv", held));           // not from the name
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

TEST_CASE("13-column ball episodes: a repeated row is merged, a dropped frame cuts the file") {
  TempDir dir;
  std::string s;
  const double dt = 1.0 / 60.96;
  for (int k = 0; k < 80; ++k) {
    if (k == 40) continue;  // a dropped frame: the step 39 -> 41 spans two rows
    const double t = k * dt;
    std::string row = std::to_string(std::round(t * 4096) / 4096) + ", " +
                      std::to_string(100 * t) + ", 0, 500, 100, 0, 0, 0, 0, 0, 0, 0, 0\n";
    s += row;
    if (k == 10) s += row;  // a duplicated row
  }
  const auto episodes = ReadRecording(dir.Write("episode_000001.csv", s));
  REQUIRE(episodes.size() == 2);
  const Episode& ep = episodes[0];
  CHECK(ep.kind == EpisodeKind::kBall);
  CHECK(ep.size() == 40);
  CHECK(ep.merged_source_rows == std::vector<int>{12});
  CHECK(ep.step_dt_s[0] == doctest::Approx(dt));
  CHECK(ep.name == "episode_000001_seg00.csv");
  CHECK(ep.segment == 0);
  CHECK(episodes[1].rows[0].source_row == 42);
  CHECK(episodes[1].size() == 39);
  CHECK(episodes[1].rows[0].t_s == 0.0);
  REQUIRE(ep.notes.size() == 1);
  CHECK_MESSAGE(ep.notes[0].find("cut at row 42: time jumps by 0.032959 s (2.00918 rows") == 0,
                ep.notes[0]);
  CHECK(episodes[1].notes == ep.notes);
}

// The fixture built like public ball episode 343 (held back, not in ../shared): rows 336-337
// repeat row 335 with its time stamp, row 338 comes 0.0791 s = 4.82 rows later
// (tests/fixtures/dropped_frames/make_fixture.py).
TEST_CASE("a ball recording with dropped frames like episode 343 is cut, not refused") {
  const std::string path =
      std::string(RLFIT_SOURCE_DIR) + "/tests/fixtures/dropped_frames/ball_dropped_frames.csv";
  const auto episodes = ReadRecording(path);
  REQUIRE(episodes.size() == 2);
  CHECK(episodes[0].rows.front().source_row == 1);
  CHECK(episodes[0].rows.back().source_row == 335);
  CHECK(episodes[0].merged_source_rows == std::vector<int>{336, 337});
  CHECK(episodes[1].rows.front().source_row == 338);
  CHECK(episodes[1].rows.back().source_row == 611);
  for (const Episode& ep : episodes)
    for (double dt : ep.step_dt_s) CHECK(dt == doctest::Approx(1.0 / 60.96));
  REQUIRE(episodes[0].notes.size() == 1);
  CHECK_MESSAGE(episodes[0].notes[0].find("cut at row 338: time jumps by 0.0791") == 0,
                episodes[0].notes[0]);
  CHECK(episodes[0].notes[0].find("(4.822 rows of 1/60.96 s): frames dropped") !=
        std::string::npos);
  // A part shorter than min_segment_rows beside the cut is left out, and said so.
  ReadOptions strict;
  strict.min_segment_rows = 300;
  const auto long_parts = ReadRecording(path, strict);
  REQUIRE(long_parts.size() == 1);
  CHECK(long_parts[0].rows.front().source_row == 1);
  REQUIRE(long_parts[0].notes.size() == 2);
  CHECK(long_parts[0].notes[1] == "rows 338-611 left out: a part of 274 rows beside a cut (at "
                                  "least 300 kept)");
}

TEST_CASE("bad input names file, row and column") {
  TempDir dir;
  SUBCASE("missing file") { ExpectInputError(dir.path() + "/nope.csv", 0, 0); }
  SUBCASE("empty file") { ExpectInputError(dir.Write("e.csv", ""), 0, 0, "empty file"); }
  SUBCASE("only blank lines") {
    ExpectInputError(dir.Write("b.csv", "\n  \n\t\r\n"), 0, 0, "empty file");
  }
  SUBCASE("wrong column count on the first row") {
    ExpectInputError(dir.Write("w.csv", "1,2,3\n"), 1, 0);
  }
  SUBCASE("too many columns later") {
    std::string s = CarFile(40);
    s.insert(s.find('\n', s.find('\n') + 1), ",7");  // row 2 gets a 26th cell
    ExpectInputError(dir.Write("m.csv", s), 2, 26);
  }
  SUBCASE("a truncated last row") {
    // Cut inside row 40 (no final newline): refused at the cell the cut falls in.
    std::string s = CarFile(40);
    s.resize(s.size() - 20);
    const int cells = 1 + static_cast<int>(std::count(s.begin() + s.rfind('\n'), s.end(), ','));
    ExpectInputError(dir.Write("t.csv", s), 40, cells, "truncated");
  }
  SUBCASE("a last row cut inside its last number") {
    // "...,1.000000\n" cut to "...,1.": every column is there, the number reads the same
    // (the last column is the handbrake button, 0 or 1).
    std::string s = WithCell(CarFile(40), 40, 24, "1.000000");
    s.resize(s.size() - 7);
    REQUIRE(s.substr(s.size() - 4) == ", 1.");
    ExpectInputError(dir.Write("cut.csv", s), 40, 25,
                     "truncated: the file does not end with a newline");
    // The same rows with their final newline read.
    CHECK(ReadRecording(dir.Write("whole.csv", s + "\n")).at(0).size() == 40);
  }
  SUBCASE("a {...} row of a .txt export cut before its '}'") {
    std::string s = CarFile(40, true);
    s.pop_back();  // no final newline: a whole {...} row, as the datasets' .txt files end
    CHECK(ReadRecording(dir.Write("whole.txt", s)).at(0).size() == 40);
    s.resize(s.size() - 3);
    ExpectInputError(dir.Write("cut.txt", s), 40, 25, "does not end with a newline");
  }
  SUBCASE("a ball recording cut in its last number") {
    std::string s = WithCell(BallFile(40), 40, 12, "0.25");
    s.resize(s.size() - 3);  // "..., 0.25\n" -> "..., 0."
    ExpectParseError("ball.csv", s, 40, 13, "truncated");
    CHECK(Parse("ball.csv", s + "\n").at(0).size() == 40);
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
  SUBCASE("an empty episode (one row)") {
    ExpectInputError(dir.Write("one.csv", CarFile(1)), 0, 0);
  }
}

TEST_CASE("folders expand to every .csv and .txt recording; other files are named as skipped") {
  TempDir dir;
  dir.Write("drive_01.csv", CarFile(40));
  dir.Write("b.txt", CarFile(40, true));
  dir.Write("prediction_00.csv", "1,2,3,4,5,6,7,8,9\n");
  dir.Write("notes.md", "hello");
  dir.Write("notes.txt", "hello\n");
  std::vector<SkippedInput> skipped;
  const auto files = ExpandRecordingPaths({dir.path()}, &skipped);
  REQUIRE(files.size() == 2);
  CHECK(files[0] == dir.path() + "/b.txt");
  CHECK(files[1] == dir.path() + "/drive_01.csv");
  REQUIRE(skipped.size() == 3);
  CHECK(skipped[0].path == dir.path() + "/notes.md");
  CHECK(skipped[0].reason == "not a .csv or .txt file");
  CHECK(skipped[1].path == dir.path() + "/notes.txt");
  CHECK(skipped[1].reason == "not a recording: its first line is neither a header naming x, y "
                             "and z nor 13, 25 or 26 numbers");
  CHECK(skipped[2].path == dir.path() + "/prediction_00.csv");
  CHECK_THROWS_AS(ExpandRecordingPaths({dir.path() + "/missing"}), InputError);
  TempDir none;
  none.Write("notes.md", "hello");
  CHECK_THROWS_WITH_AS(ExpandRecordingPaths({none.path()}),
                       doctest::Contains("folder holds no recordings"), InputError);
  // A .csv with no rows is a recording cut to nothing: listed, so that reading it fails.
  TempDir cut;
  cut.Write("a.csv", CarFile(40));
  const std::string empty = cut.Write("b.csv", "");
  CHECK(ExpandRecordingPaths({cut.path()}) ==
        std::vector<std::string>{cut.path() + "/a.csv", empty});
  CHECK_THROWS_WITH_AS(ReadRecordings({cut.path()}), doctest::Contains("empty file (no rows)"),
                       InputError);
}

TEST_CASE("a recording given twice is read once, however it is named") {
  TempDir dir;
  const std::string a = dir.Write("a.csv", CarFile(40));
  const std::string b = dir.Write("b.csv", CarFile(41));
  std::filesystem::create_directory(dir.path() + "/sub");
  const std::string link = dir.path() + "/sub/hard.csv";
  std::filesystem::create_hard_link(a, link);
  std::filesystem::create_symlink(b, dir.path() + "/sub/soft.csv");
  std::vector<SkippedInput> skipped;
  const auto files = ExpandRecordingPaths(
      {a, dir.path(), dir.path() + "/sub/../a.csv", link, dir.path() + "/sub/soft.csv", b},
      &skipped);
  CHECK(files == std::vector<std::string>{a, b});
  REQUIRE(skipped.size() == 5);
  CHECK(skipped[0].path == dir.path() + "/a.csv");  // the folder's a.csv
  CHECK(skipped[0].reason == "the same file as " + a + ": read once");
  CHECK(skipped[1].path == dir.path() + "/sub/../a.csv");
  CHECK(skipped[2].path == link);
  CHECK(skipped[3].reason == "the same file as " + dir.path() + "/b.csv: read once");
}

TEST_CASE("--keep-going reads every file and names each one that cannot be read") {
  TempDir dir;
  std::string bad = WithCell(CarFile(40), 3, 0, "abc");
  const std::vector<std::string> files = {dir.Write("a.csv", CarFile(40)),
                                          dir.Write("bad.csv", bad),
                                          dir.path() + "/missing.csv",
                                          dir.Write("c.csv", CarFile(41))};
  for (int threads : {1, 3}) {
    std::vector<SkippedInput> unreadable;
    const auto episodes = ReadRecordingFiles(files, {}, threads, &unreadable);
    REQUIRE(episodes.size() == 2);
    CHECK(episodes[0].path == files[0]);
    CHECK(episodes[1].path == files[3]);
    REQUIRE(unreadable.size() == 2);
    CHECK(unreadable[0].path == files[1]);
    CHECK(unreadable[0].reason == "row 3, column 1: 'abc' is not a number");
    CHECK(unreadable[1].path == files[2]);
    CHECK(unreadable[1].reason == "no such file");
  }
  // Without it, the first bad file's error, as before.
  CHECK_THROWS_WITH_AS(ReadRecordingFiles(files), doctest::Contains("bad.csv: row 3"),
                       InputError);
  // Paths: a missing one and a folder of no recordings are named too.
  TempDir empty;
  std::vector<SkippedInput> unreadable;
  const auto expanded =
      ExpandRecordingPaths({files[0], dir.path() + "/nope", empty.path()}, nullptr, &unreadable);
  CHECK(expanded == std::vector<std::string>{files[0]});
  REQUIRE(unreadable.size() == 2);
  CHECK(unreadable[0].reason == "no such file or folder");
  CHECK(unreadable[1].reason.find("folder holds no recordings") == 0);
}

TEST_CASE("files read by several threads: the same episodes, the first file's error") {
  TempDir dir;
  std::vector<std::string> files;
  for (int i = 0; i < 9; ++i)
    files.push_back(dir.Write("episode_0" + std::to_string(i) + ".csv", CarFile(35 + i)));
  std::vector<Episode> one;
  for (const std::string& f : files)
    for (Episode& e : ReadRecording(f)) one.push_back(std::move(e));
  for (int threads : {1, 2, 3, 16}) {
    const std::vector<Episode> many = ReadRecordingFiles(files, {}, threads);
    REQUIRE(many.size() == one.size());
    for (std::size_t i = 0; i < one.size(); ++i) {
      CHECK(many[i].path == one[i].path);
      REQUIRE(many[i].size() == one[i].size());
      for (int k = 0; k < one[i].size(); ++k) CHECK(many[i].rows[k].x == one[i].rows[k].x);
    }
  }
  // Two bad files (a non-number in row 3, a missing one): the error is the earlier one's,
  // whichever thread meets which first.
  std::string bad = CarFile(40);
  const auto row3 = bad.find('\n', bad.find('\n') + 1) + 1;
  bad.replace(row3, bad.find(',', row3) - row3, "abc");
  files[6] = dir.Write("episode_bad.csv", bad);
  files[2] = dir.path() + "/missing.csv";
  for (int threads : {1, 2, 3, 16})
    for (int repeat = 0; repeat < 5; ++repeat) {
      try {
        ReadRecordingFiles(files, {}, threads);
        FAIL("no error");
      } catch (const InputError& e) {
        CHECK(e.file() == files[2]);
      }
    }
  files[2] = files[0];
  try {
    ReadRecordingFiles(files, {}, 2);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == files[6]);
    CHECK(e.row() == 3);
    CHECK(e.column() == 1);
  }
}

TEST_CASE("pre-spawn rows are skipped only before the first car row") {
  // Frames before the car spawns carry unwrapped yaw (81920); driving.txt starts with 29.
  std::string file;
  for (int k = 0; k < 3; ++k) file += WithCell(CarRow(0), 1, 7, "81920") + "\n";
  file += CarFile(40);
  SUBCASE("leading rows: skipped, rows keep their line numbers") {
    const auto episodes = Parse("episode_00.csv", file);
    REQUIRE(episodes.size() == 1);
    CHECK(episodes[0].size() == 40);
    CHECK(episodes[0].rows[0].source_row == 4);
    CHECK(episodes[0].rows[39].source_row == 43);
  }
  SUBCASE("one mid-episode: an error at its row and the yaw column, not a silent drop") {
    ExpectParseError("episode_00.csv", WithCell(file, 20, 7, "-40000"), 20, 8,
                     "yaw -40000 is outside [-32768, 32768]");
  }
  SUBCASE("timed .txt: the yaw column is 9") {
    ExpectParseError("timed.txt", WithCell(CarFile(40, true, true), 20, 8, "90112"), 20, 9,
                     "yaw 90112");
  }
  SUBCASE("timed .txt: pre-spawn rows after a restart of the game clock are skipped") {
    // As freefall_spinning.txt: the clock goes back 182 s, pre-spawn frames, then the car.
    std::string txt = CarFile(40, true, true);
    for (int k = 0; k < 3; ++k) txt += WithCell(CarRow(k, true, true), 1, 0, "1.5") + "\n";
    txt = WithCell(WithCell(WithCell(txt, 41, 8, "90112"), 42, 8, "90112"), 43, 8, "90112");
    for (int k = 0; k < 40; ++k)
      txt += WithCell(CarRow(k, true, true), 1, 0, std::to_string(2.0 + k / 60.96)) + "\n";
    const auto episodes = Parse("restart.txt", txt);
    REQUIRE(episodes.size() == 2);
    CHECK(episodes[1].rows[0].source_row == 44);
  }
}

TEST_CASE("repeated rows are merged and recorded, source rows stay exact") {
  SUBCASE("ball: a repeat inside and two at the end") {
    std::string s = BallFile(40);
    s.insert(s.find(Line(s, 11)), Line(s, 10));  // line 11 repeats line 10
    s += Line(s, 41) + Line(s, 41);              // lines 42, 43 repeat the last row
    const auto episodes = Parse("episode_000001.csv", s);
    REQUIRE(episodes.size() == 1);
    const Episode& ep = episodes[0];
    CHECK(ep.size() == 40);
    CHECK(ep.merged_source_rows == std::vector<int>{11, 42, 43});
    CHECK(ep.rows[9].source_row == 10);
    CHECK(ep.rows[10].source_row == 12);
    CHECK(ep.rows[39].source_row == 41);
    // One output row per source row: kept rows plus merged rows cover every line.
    CHECK(ep.size() + static_cast<int>(ep.merged_source_rows.size()) == 43);
  }
  SUBCASE("a repeat belongs to the segment holding the row it repeats") {
    std::string s;
    const double dt = 1.0 / 60.96;
    for (int k = 0; k < 80; ++k) {
      const std::string row =
          std::to_string(10.0 + k * dt + (k >= 40 ? 0.3 : 0.0)) + ", " + CarRow(k) + "\n";
      s += row;
      if (k == 39 || k == 50) s += row;  // lines 41 and 53 repeat lines 40 and 52
    }
    const auto episodes = Parse("paused.txt", s);
    REQUIRE(episodes.size() == 2);
    CHECK(episodes[0].merged_source_rows == std::vector<int>{41});
    CHECK(episodes[1].merged_source_rows == std::vector<int>{53});
    CHECK(episodes[1].rows[0].source_row == 42);
  }
}

TEST_CASE("ball time steps: gaps cut, time going back is an error") {
  const double dt = 1.0 / 60.96;
  std::string at_rest;
  for (int k = 0; k < 80; ++k) at_rest += BallRow(k * dt, 0.0, 100.0);
  SUBCASE("a huge jump after a ball at rest cuts there; the way back is out of order") {
    for (const char* t : {"1e6", "1e9", "1e300"}) {
      CAPTURE(t);
      ExpectParseError("episode_000001.csv", WithCell(at_rest, 40, 0, t), 41, 1,
                       "rows out of order: time goes back");
    }
    ExpectParseError("episode_000001.csv", WithCell(at_rest, 40, 0, "-1e300"), 40, 1,
                     "rows out of order: time goes back");
  }
  SUBCASE("a gap of any length cuts, the parts each a continuous episode") {
    for (double rows : {1.51, 2.0, 4.82, 50.0, 1e6}) {
      CAPTURE(rows);
      std::string s;
      for (int k = 0; k < 80; ++k)
        s += BallRow(k * dt + (k >= 40 ? (rows - 1.0) * dt : 0.0), 0.0, 100);
      const auto episodes = Parse("episode_000001.csv", s);
      REQUIRE(episodes.size() == 2);
      CHECK(episodes[1].rows[0].source_row == 41);
    }
  }
  SUBCASE("a step under 1.5 rows is one row (the recordings' hitches of 1.16 and 1.49 rows)") {
    std::string s;
    for (int k = 0; k < 80; ++k) s += BallRow(k * dt + (k >= 40 ? 0.49 * dt : 0.0), 0.0, 100);
    const auto episodes = Parse("episode_000001.csv", s);
    REQUIRE(episodes.size() == 1);
    CHECK(episodes[0].step_dt_s[38] == doctest::Approx(dt));
  }
  SUBCASE("a time stamp repeated with a new state cuts (a stale stamp)") {
    std::string s = WithCell(BallFile(80), 41, 0, std::to_string(39 * dt));
    const auto episodes = Parse("episode_000001.csv", s);
    REQUIRE(episodes.size() == 2);
    CHECK(episodes[0].notes[0].find("cut at row 41: the time stamp") == 0);
  }
  SUBCASE("time going back with a new state") {
    ExpectParseError("episode_000001.csv", WithCell(BallFile(40), 20, 0, "0.1"), 20, 1,
                     "rows out of order");
  }
  SUBCASE("a file of gaps (40 Hz) is not a 61 Hz recording") {
    std::string s;
    for (int k = 0; k < 80; ++k) s += BallRow(k / 40.0, 0.0, 100);
    ExpectParseError("episode_000001.csv", s, 2, 1, "steps are gaps of 1.5 rows or more");
  }
}

// What is not plain text was read as one long line ("truncated: the file does not end with a
// newline") or as an empty file: now it is named from the file's start (RefuseNonText).
TEST_CASE("a file that is not plain text is named for what it is") {
  const std::string text = CarFile(40);
  std::string utf16 = "\xff\xfe", utf16_plain, cr_only = text, binary, damaged = text;
  for (char c : text) {
    utf16 += c;
    utf16 += '\0';
    utf16_plain += c;
    utf16_plain += '\0';
  }
  std::replace(cr_only.begin(), cr_only.end(), '\n', '\r');
  for (int i = 0; i < 4000; ++i) binary += static_cast<char>(1 + (i * 37) % 250);
  ExpectParseError("episode_00.csv", "\x1f\x8b\x08\x00" + text, 0, 0, "is gzip-compressed");
  ExpectParseError("episode_00.csv", "BZh9" + text, 0, 0, "is bzip2-compressed");
  ExpectParseError("episode_00.csv", "PK\x03\x04" + text, 0, 0, "is a zip archive");
  ExpectParseError("episode_00.csv", utf16, 0, 0, "is UTF-16 text (byte-order mark)");
  ExpectParseError("episode_00.csv", utf16_plain, 0, 0, "a NUL byte beside every character");
  ExpectParseError("episode_00.csv", cr_only, 0, 0, "ends its lines with CR alone");
  ExpectParseError("episode_00.csv", std::string(100000, '\0'), 0, 0,
                   "holds only NUL bytes (its first 65536 at least)");
  ExpectParseError("episode_00.csv", text + std::string(3, '\0'), 0, 0,
                   "is a binary file, not a text recording (a NUL byte at byte " +
                       std::to_string(text.size() + 1) + ")");
  ExpectParseError("episode_00.csv", binary, 0, 0, "control bytes, the first 0x01 at byte 1)");
  // A UTF-8 byte-order mark and CRLF are text; one stray control byte is a bad cell (below).
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  CHECK(Parse("episode_00.csv", "\xEF\xBB\xBF" + crlf).size() == 1);
}

TEST_CASE("errors name the column that is wrong") {
  SUBCASE("a ball position jump: the x column") {
    ExpectParseError("episode_000001.csv", WithCell(BallFile(40), 20, 1, "900"), 20, 2,
                     "position jumps");
  }
  SUBCASE("a timed .txt whose time stamp repeats with a new state: cut there, as a ball's") {
    std::string s = CarFile(80, false, true);
    s = WithCell(s, 41, 0, Line(s, 40).substr(0, Line(s, 40).find(',')));
    const auto episodes = Parse("timed.txt", s);
    REQUIRE(episodes.size() == 2);
    CHECK(episodes[0].size() == 40);
    CHECK(episodes[1].rows[0].source_row == 41);
    REQUIRE(!episodes[0].notes.empty());
    CHECK(episodes[0].notes[0].find("cut at row 41: the time stamp") == 0);
    CHECK(episodes[0].notes[0].find("repeats with a new state") != std::string::npos);
  }
  SUBCASE("a timed .txt whose time mostly stands still: the time column, not a clock") {
    std::string s = CarFile(40, false, true);
    const std::string t0 = Line(s, 1).substr(0, Line(s, 1).find(','));
    for (int line = 2; line <= 40; ++line) s = WithCell(s, line, 0, t0);
    ExpectParseError("timed.txt", s, 2, 1, "time does not increase on 39 of 39 steps");
  }
  SUBCASE("26 columns in a .csv: the timed format, whatever the extension") {
    const auto episodes = Parse("episode_00.csv", CarFile(40, false, true));
    REQUIRE(episodes.size() == 1);
    CHECK(episodes[0].size() == 40);
  }
  SUBCASE("implausible positions: row and column of the coordinate") {
    ExpectParseError("episode_00.csv", WithCell(CarFile(40), 7, 0, "1e300"), 7, 1,
                     "position x = 1e+300 uu is outside the arena");
    ExpectParseError("episode_000001.csv", WithCell(BallFile(40), 9, 3, "-5000"), 9, 4,
                     "position z = -5000");
    ExpectParseError("timed.txt", WithCell(CarFile(40, true, true), 3, 2, "13000"), 3, 3,
                     "position y = 13000");
  }
  SUBCASE("inputs of a timed row") {
    ExpectParseError("timed.txt", WithCell(CarFile(40, true, true), 3, 19, "2"), 3, 20,
                     "input 2 outside [-1, 1]");
  }
  SUBCASE("a long or binary cell is quoted short and on one line") {
    const std::string junk = std::string(100, 'x') + "\x01\r";
    try {
      Parse("episode_00.csv", WithCell(CarFile(40), 2, 4, junk));
      FAIL("no error");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CHECK(what.find("xxx...'") != std::string::npos);
      CHECK(what.size() < 150);
      CHECK(what.find('\r') == std::string::npos);
    }
  }
  SUBCASE("a number too small for a double reads as zero") {
    const auto episodes = Parse("episode_00.csv", WithCell(CarFile(40), 2, 9, "1e-400"));
    CHECK(episodes[0].rows[1].omega.x() == 0.0);
  }
}

TEST_CASE("blank lines are skipped wherever they are; rows keep their line numbers") {
  // Leading blank lines, one inside, several at the end; CRLF line ends and a UTF-8 BOM.
  std::string file = "\n  \n\r\n";
  const std::string car = CarFile(40);
  std::size_t p = 0;
  for (int k = 0; k < 40; ++k) {
    const std::size_t e = car.find('\n', p);
    file += car.substr(p, e - p) + "\r\n";
    if (k == 19) file += "\t \r\n";
    p = e + 1;
  }
  file += "\n\n";
  for (const std::string& contents : {file, "\xEF\xBB\xBF" + file}) {
    const auto episodes = Parse("episode_00.csv", contents);
    REQUIRE(episodes.size() == 1);
    CHECK(episodes[0].size() == 40);
    CHECK(episodes[0].rows[0].source_row == 4);
    CHECK(episodes[0].rows[20].source_row == 25);
    CHECK(episodes[0].rows[39].source_row == 44);
  }
}

TEST_CASE("ParseRecording reads from memory what ReadRecording reads from the file") {
  TempDir dir;
  const std::string s = CarFile(40, true, true);
  const auto from_file = ReadRecording(dir.Write("timed.txt", s));
  const auto from_memory = ParseRecording(dir.path() + "/timed.txt", s.data(), s.size());
  REQUIRE(from_file.size() == from_memory.size());
  CHECK(from_file[0].size() == from_memory[0].size());
  CHECK(from_file[0].rows[39].x == from_memory[0].rows[39].x);
  CHECK(from_file[0].step_dt_s == from_memory[0].step_dt_s);
  CHECK(from_file[0].path == from_memory[0].path);
  CHECK_THROWS_AS(ParseRecording("x.csv", nullptr, 0), InputError);
}

TEST_CASE("the reader's options are checked") {
  std::string why;
  CHECK(ReadOptions{}.Check(&why));
  ReadOptions bad;
  bad.max_step_s = 1e9;
  CHECK_FALSE(bad.Check(&why));
  CHECK(why.find("max_step_s") != std::string::npos);
  ReadOptions origin;
  origin.facts.clock_origin_rows = -1.0;
  CHECK_FALSE(origin.Check(&why));
  CHECK(why.find("--clock-origin") != std::string::npos);
}

TEST_CASE("paths that are not regular files: InputErrors, never blocking") {
  TempDir dir;
  const std::string loop = dir.path() + "/episode_00.csv";
  std::filesystem::create_symlink(loop, loop);
  ExpectInputError(loop, 0, 0, "symbolic link loop");
  CHECK_THROWS_WITH_AS(ExpandRecordingPaths({loop}), doctest::Contains("symbolic link loop"),
                       InputError);
  CHECK_THROWS_WITH_AS(ExpandRecordingPaths({dir.path()}),
                       doctest::Contains("symbolic link loop"), InputError);

  TempDir fifo_dir;
  const std::string fifo = fifo_dir.path() + "/episode_00.csv";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  ExpectInputError(fifo, 0, 0, "not a regular file (a FIFO)");
  CHECK_THROWS_WITH_AS(ExpandRecordingPaths({fifo}), doctest::Contains("not a regular file"),
                       InputError);
  ExpectInputError(fifo_dir.path(), 0, 0, "not a regular file (a folder)");
  ExpectInputError(fifo_dir.path() + "/missing.csv", 0, 0, "no such file");
}

// Rows of a 25-column car file in another order (0-based row indices of CarFile's rows).
std::string CarRows(const std::vector<int>& order) {
  std::string s;
  for (int k : order) s += CarRow(k) + "\n";
  return s;
}

std::vector<int> Ascending(int n) {
  std::vector<int> order(n);
  for (int k = 0; k < n; ++k) order[k] = k;
  return order;
}

TEST_CASE("car rows out of order or jumping are refused with file, row and column") {
  SUBCASE("a reversed file") {
    std::vector<int> order = Ascending(40);
    std::reverse(order.begin(), order.end());
    ExpectParseError("episode_00.csv", CarRows(order), 2, 1, "rows out of order");
  }
  SUBCASE("two rows swapped") {
    std::vector<int> order = Ascending(40);
    std::swap(order[20], order[21]);
    ExpectParseError("episode_00.csv", CarRows(order), 22, 1, "rows out of order");
  }
  SUBCASE("a row repeated 50 rows later") {
    std::vector<int> order = Ascending(80);
    order.insert(order.begin() + 61, 10);
    ExpectParseError("episode_00.csv", CarRows(order), 62, 1, "rows out of order");
  }
  SUBCASE("a jump of a car at rest") {
    std::string s;
    for (int k = 0; k < 40; ++k)
      s += std::string(k == 20 ? "30" : "0") +
           ", 0, 17.01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 100, 0, 0, 0, 0, 0, 0, 0, 0\n";
    ExpectParseError("episode_00.csv", s, 21, 1, "position jumps 30 uu");
    // 20 uu is within what a car can do in a row (a stop from full speed misses by 18.9).
    CHECK(Parse("ok.csv", WithCell(s, 21, 0, "0.2")).size() == 1);
  }
  SUBCASE("timed: the clock going back while the car stays is out of order") {
    std::string s;
    const double dt = 1.0 / 60.96;
    for (int k : {0, 1, 2, 4, 3, 5, 6})
      s += std::to_string(10.0 + k * dt) + ", " + CarRow(k) + "\n";
    ExpectParseError("timed.txt", s, 5, 1, "rows out of order: time goes back");
  }
}

TEST_CASE("a 61 Hz car gap of dropped frames cuts the recording") {
  // A stale repeated row, then a step the car covers in 2.3 rows (as spiral_forward_100.txt).
  std::string s;
  for (int k = 0; k < 80; ++k) {
    if (k == 41) continue;  // dropped
    s += CarRow(k) + "\n";
    if (k == 40) s += CarRow(k) + "\n";  // stale
  }
  const auto episodes = Parse("drive.csv", s);
  REQUIRE(episodes.size() == 2);
  CHECK(episodes[0].rows.back().source_row == 41);
  CHECK(episodes[0].merged_source_rows == std::vector<int>{42});
  CHECK(episodes[1].rows.front().source_row == 43);
  CHECK(episodes[0].notes[0].find("cut at row 43: the car covers 2") == 0);
  for (const Episode& ep : episodes) CHECK(std::isnan(ep.clock_origin_rows));
}

// A 25-column row of a car on the floor at (x, y) with velocity (vx, vy).
std::string FloorRow(double x, double y, double vx, double vy) {
  return std::to_string(x) + ", " + std::to_string(y) + ", 17.01, " + std::to_string(vx) + ", " +
         std::to_string(vy) + ", 0, 0, 0, 0, 0., 0, 0, 0, 0, 0, 1, 100, 0, 0, 0, 0, 0, 0, 0, 0";
}

TEST_CASE("a 61 Hz car gap across a turn or an S-bend cuts the recording; a jump does not") {
  const double dt = 1.0 / 60.96;
  constexpr int kRows = 100, kFirstDropped = 41, kDropped = 20;  // 0.33 s
  SUBCASE("a steady turn: 1000 uu/s at 2 rad/s, 76 degrees within a gap of 40 rows") {
    std::string s;
    for (int k = 0; k < kRows + kDropped; ++k) {
      if (k >= kFirstDropped && k < kFirstDropped + 2 * kDropped) continue;
      const double a = 2.0 * k * dt;
      s += FloorRow(500.0 * std::sin(a), 500.0 * (1.0 - std::cos(a)), 1000.0 * std::cos(a),
                    1000.0 * std::sin(a)) + "\n";
    }
    const auto episodes = Parse("turn.csv", s);
    REQUIRE(episodes.size() == 2);
    CHECK_MESSAGE(episodes[0].notes[0].find("cut at row 42: the car covers 4") == 0,
                  episodes[0].notes[0]);
  }
  // Along x at 1000 uu/s, moving sideways by `side` uu within the gap (a smooth step, its
  // sideways velocity 0 on both sides: the path is off the line of the mean velocity by `side`).
  auto s_bend = [&](double side) {
    const double t0 = kFirstDropped * dt - 0.5 * dt, span = (kDropped + 1) * dt;
    std::string s;
    for (int k = 0; k < kRows; ++k) {
      if (k >= kFirstDropped && k < kFirstDropped + kDropped) continue;
      const double u = std::clamp((k * dt - t0) / span, 0.0, 1.0);  // 0 or 1 outside the gap
      s += FloorRow(1000.0 * k * dt, side * u * u * (3.0 - 2.0 * u), 1000.0, 0.0) + "\n";
    }
    return s;
  };
  SUBCASE("an S-bend of 64 uu (a powerslide's, 3,500 uu/s^2 at most): a gap") {
    const auto episodes = Parse("bend.csv", s_bend(64.0));
    REQUIRE(episodes.size() == 2);
    CHECK(episodes[0].notes[0].find("cut at row 42: the car covers 2") == 0);
  }
  SUBCASE("300 uu sideways within the gap, beyond what the car can do in 0.33 s: a jump") {
    ExpectParseError("bend.csv", s_bend(300.0), 42, 1, "position jumps");
  }
}

TEST_CASE("a 120 Hz car gap of dropped frames cuts the recording") {
  // A car flying at 120 Hz with rows 41-50 dropped: 11 ticks in one step, beyond the 4 a step
  // is stepped through (was refused as a position jump).
  std::string s;
  for (int k = 0; k < 100; ++k) {
    if (k >= 40 && k < 50) continue;
    const double t = k / 120.0;
    s += std::to_string(500.0 * t) + ", 0, " + std::to_string(1000.0 - 325.0 * t * t) +
         ", 500, 0, " + std::to_string(-650.0 * t) +
         ", 0, 0, 0, 0., 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 0\n";
  }
  const auto episodes = Parse("fall.csv", s);
  REQUIRE(episodes.size() == 2);
  CHECK(episodes[0].rows.back().source_row == 40);
  CHECK(episodes[1].rows.front().source_row == 41);
  CHECK_MESSAGE(episodes[0].notes[0].find("cut at row 41: the car covers 11") == 0,
                episodes[0].notes[0]);
  for (int t : episodes[0].step_ticks) CHECK(t == 1);
}

TEST_CASE("a timed recording is cut at a pause of its game clock, with a note") {
  std::string s;
  const double dt = 1.0 / 60.96;
  for (int k = 0; k < 80; ++k)
    s += std::to_string(10.0 + k * dt + (k >= 40 ? 1.0 : 0.0)) + ", " + CarRow(k) + "\n";
  const auto episodes = Parse("timed.txt", s);
  REQUIRE(episodes.size() == 2);
  CHECK(episodes[1].rows.front().source_row == 41);
  REQUIRE(episodes[0].notes.size() == 1);
  CHECK_MESSAGE(episodes[0].notes[0].find("cut at row 41: the game clock jumps by 1.01") == 0,
                episodes[0].notes[0]);
  CHECK(episodes[1].notes == episodes[0].notes);
}

// A named-column car file: the canonical rows of CarFile, columns in the order `names` (a
// column not known to the reader gets "7").
std::string NamedCar(int rows, const std::vector<std::string>& names) {
  const std::vector<std::string> canonical = {
      "x", "y", "z", "vx", "vy", "vz", "pitch", "yaw", "roll", "wx", "wy", "wz", "supersonic",
      "jumped", "double_jumped", "on_ground", "boost_amount", "throttle", "steer", "input_pitch",
      "input_yaw", "input_roll", "jump", "boost", "handbrake"};
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? "," : "") + names[i];
  s += "\n";
  for (int k = 0; k < rows; ++k) {
    std::string row = CarRow(k);
    std::vector<std::string> cells;
    std::size_t p = 0;
    for (;;) {
      const std::size_t comma = row.find(',', p);
      cells.push_back(row.substr(p, comma == std::string::npos ? std::string::npos : comma - p));
      if (comma == std::string::npos) break;
      p = comma + 1;
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      const auto at = std::find(canonical.begin(), canonical.end(), names[i]);
      std::string cell = at != canonical.end() ? cells[at - canonical.begin()]
                         : names[i] == "t"     ? std::to_string(10.0 + k / 60.96)
                                               : "7";
      s += (i ? "," : "") + cell;
    }
    s += "\n";
  }
  return s;
}

TEST_CASE("named-column recordings: any order, unknown columns named once, same rows") {
  const std::vector<std::string> order = {
      "handbrake", "boost", "jump", "input_roll", "input_yaw", "input_pitch", "steer", "throttle",
      "boost_amount", "on_ground", "double_jumped", "jumped", "supersonic", "wz", "wy", "wx",
      "roll", "yaw", "pitch", "vz", "vy", "vx", "z", "y", "x", "comment", "t"};
  const auto legacy = Parse("timed.txt", [] {
    std::string s;
    for (int k = 0; k < 40; ++k) s += std::to_string(10.0 + k / 60.96) + ", " + CarRow(k) + "\n";
    return s;
  }());
  const auto named = Parse("mine.csv", NamedCar(40, order));
  REQUIRE(named.size() == 1);
  REQUIRE(named[0].size() == 40);
  for (int k = 0; k < 40; ++k) {
    CHECK(named[0].rows[k].x == legacy[0].rows[k].x);
    CHECK(named[0].rows[k].v == legacy[0].rows[k].v);
    CHECK(named[0].rows[k].source_row == k + 2);  // the header is line 1
  }
  CHECK(named[0].step_dt_s == legacy[0].step_dt_s);
  CHECK(named[0].handbrake == HandbrakeRecord::kColumn);
  CHECK(named[0].notes ==
        std::vector<std::string>{"columns not read (unknown names): \"comment\""});
  SUBCASE("without t: timed from the motion, as a 25-column file") {
    std::vector<std::string> untimed(order.begin(), order.end() - 1);
    const auto episodes = Parse("mine.csv", NamedCar(40, untimed));
    REQUIRE(episodes.size() == 1);
    CHECK(episodes[0].step_ticks[0] == 2);
  }
  SUBCASE("without handbrake: inferred where needed, and said so") {
    std::vector<std::string> less(order.begin() + 1, order.end());
    const auto episodes = Parse("mine.csv", NamedCar(40, less));
    REQUIRE(episodes.size() == 1);
    CHECK(episodes[0].handbrake == HandbrakeRecord::kNoColumn);
    CHECK(episodes[0].notes.back().find("no handbrake column") == 0);
  }
  SUBCASE("a missing required column names it") {
    std::vector<std::string> less = order;
    less.erase(std::find(less.begin(), less.end(), "steer"));
    ExpectParseError("mine.csv", NamedCar(40, less), 1, 0, "no column \"steer\"");
  }
  SUBCASE("a name twice") {
    std::vector<std::string> twice = order;
    twice.back() = "x";
    ExpectParseError("mine.csv", NamedCar(40, twice), 1, 0, "\"x\" is named twice");
  }
  SUBCASE("errors name the file's own column") {
    // "vx" is column 22 of this header.
    ExpectParseError("mine.csv", WithCell(NamedCar(40, order), 5, 21, "1e9"), 5, 22,
                     "speed 1e+09 uu/s is implausible");
  }
  SUBCASE("a ball: t x y z vx vy vz wx wy wz") {
    std::string s = "wz,wy,wx,vz,vy,vx,z,y,x,t\n";
    for (int k = 0; k < 40; ++k)
      s += "0,0,0,0,0,100," + std::to_string(93.15) + ",0," + std::to_string(100.0 * k / 60.96) +
           "," + std::to_string(k / 60.96) + "\n";
    const auto episodes = Parse("ball.csv", s);
    REQUIRE(episodes.size() == 1);
    CHECK(episodes[0].kind == EpisodeKind::kBall);
    CHECK(episodes[0].rows[39].x.x() == doctest::Approx(100.0 * 39 / 60.96).epsilon(1e-6));
  }
}

TEST_CASE("dataset manifests: patterns, facts, default recordings") {
  CHECK(MatchManifestPattern("a/episode_{n}.csv", "a/episode_07.csv"));
  std::string digits;
  CHECK(MatchManifestPattern("a/episode_{n}.csv", "a/episode_000343.csv", &digits));
  CHECK(digits == "000343");
  CHECK_FALSE(MatchManifestPattern("a/episode_{n}.csv", "a/episode_.csv"));
  CHECK_FALSE(MatchManifestPattern("a/episode_{n}.csv", "a/episode_1a.csv"));
  CHECK_FALSE(MatchManifestPattern("a/episode_{n}.csv", "b/a/episode_1.csv"));
  CHECK(MatchManifestPattern("a/*", "a/x.csv"));
  CHECK_FALSE(MatchManifestPattern("a/*", "a/b/x.csv"));
  CHECK(MatchManifestPattern("*/p_{n}.csv", "x/p_12.csv", &digits));
  CHECK(digits == "12");

  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/slices");
  dir.Write("rlfit_dataset.json", R"({"schema_version": 1,
    "default_data": {"aerial": ["slices"]},
    "handbrake_unrecorded": ["slices/*"],
    "clock_slices": [{"recordings": "slices/s{n}.csv", "origin_rows": 10, "rows_per_n": 300}],
    "references": [{"recordings": "slices/s{n}.csv", "reference": "refs/p{n}.csv"}]})");
  std::filesystem::create_directories(dir.path() + "/refs");
  const std::string ref = dir.Write("refs/p02.csv", "1,2,3,4,5,6,7,8,9\n");
  const std::string slice = dir.Write("slices/s02.csv", FloorCarFile(301));
  const auto episodes = ReadRecording(slice);
  REQUIRE(episodes.size() == 1);
  CHECK(episodes[0].clock_origin_rows == 610.0);
  CHECK(episodes[0].handbrake == HandbrakeRecord::kNotRecorded);
  CHECK(episodes[0].reference_path == ref);
  CHECK(episodes[0].facts_source == "dataset manifest " + dir.path() + "/rlfit_dataset.json");
  CHECK(DefaultRecordings("aerial", dir.path()) ==
        std::vector<std::string>{dir.path() + "/slices"});
  CHECK_THROWS_WITH_AS(DefaultRecordings("ball", dir.path()),
                       doctest::Contains("names none for the ball model"), InputError);
  // The same rows elsewhere under another name: none of those facts...
  TempDir other;
  const std::string copy = other.Write("drive.csv", FloorCarFile(301));
  const auto plain = ReadRecording(copy);
  CHECK(std::isnan(plain[0].clock_origin_rows));
  CHECK(plain[0].handbrake == HandbrakeRecord::kColumn);
  CHECK(plain[0].reference_path.empty());
  CHECK(plain[0].fingerprint == episodes[0].fingerprint);
  // ... unless the command line gives them.
  ReadOptions given;
  given.facts.clock_origin_rows = 610.0;
  given.facts.handbrake_unrecorded = true;
  given.facts.reference_dir = other.path();
  const auto with = ReadRecording(copy, given);
  CHECK(with[0].clock_origin_rows == 610.0);
  CHECK(with[0].handbrake == HandbrakeRecord::kNotRecorded);
  CHECK(with[0].reference_path == copy);  // DIR/<its own name>: here the file itself
  // The folder reads without the reference; a malformed manifest is an error naming it.
  std::vector<SkippedInput> skipped;
  CHECK(ExpandRecordingPaths({dir.path() + "/slices"}, &skipped).size() == 1);
  TempDir broken;
  broken.Write("rlfit_dataset.json", R"({"schema_version": 1, "defaults": {}})");
  const std::string in_broken = broken.Write("x.csv", CarFile(40));
  CHECK_THROWS_WITH_AS(ReadRecording(in_broken), doctest::Contains("unknown key \"defaults\""),
                       InputError);
}

TEST_CASE("the shipped Lobot manifest applies to a root holding its mesh" *
          doctest::skip(testing::NoData())) {
  const std::string root = testing::DataRoot();
  REQUIRE(std::filesystem::exists(root + "/meshes/pitch.dat"));
  if (std::filesystem::exists(root + "/" + kManifestFileName)) {
    MESSAGE("the root has its own manifest; the shipped one is not looked for");
    return;
  }
  const auto m = FindDatasetManifest(root + "/car_control/aerial/episode_00.csv");
  REQUIRE(m != nullptr);
  CHECK(m->root == std::filesystem::path(root).lexically_normal().string());
  const auto episodes = ReadRecording(root + "/car_control/aerial/episode_02.csv");
  CHECK(episodes[0].clock_origin_rows == 600.0);
  CHECK(episodes[0].reference_path == root + "/car_control/aerial/prediction_02.csv");
  const auto handbrake =
      ReadRecording(root + "/car_control/ground_driving_handbrake/episode_01.csv");
  CHECK(handbrake[0].handbrake == HandbrakeRecord::kNotRecorded);
  // A copy of the mesh identifies another folder as the same dataset.
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/meshes");
  std::filesystem::copy_file(root + "/meshes/pitch.dat", dir.path() + "/meshes/pitch.dat");
  CHECK(FindDatasetManifest(dir.path()) != nullptr);
  // One byte different: not the dataset.
  TempDir changed;
  std::filesystem::create_directories(changed.path() + "/meshes");
  std::string mesh;
  {
    std::ifstream in(root + "/meshes/pitch.dat", std::ios::binary);
    mesh.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  mesh[100] = mesh[100] == '1' ? '2' : '1';
  changed.Write("meshes/pitch.dat", mesh);
  CHECK(FindDatasetManifest(changed.path()) == nullptr);
}

TEST_CASE("every recording of the datasets reads and validates" *
          doctest::skip(testing::NoData())) {
  const std::string root = testing::DataRoot();
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
  // driving.txt: 29 pre-spawn rows, then 16323 rows; every one is kept or merged (the last
  // 171 repeat the car at rest), so outputs can be row-aligned with the file.
  // driving.txt: 29 pre-spawn rows, then 16323 rows; every one is kept or merged (the last
  // 171 repeat the car at rest), so outputs can be row-aligned with the file; cut in two at
  // its gap of dropped frames (row 16126 repeats 16125, row 16127 covers 2.32 rows).
  const auto driving =
      ReadRecordings({root + "/car_control/ground_driving_no_handbrake/driving.txt"});
  REQUIRE(driving.size() == 2);
  CHECK(driving[0].rows[0].source_row == 30);
  CHECK(driving[1].rows[0].source_row == 16127);
  int covered = 0;
  for (const Episode& ep : driving)
    covered += ep.size() + static_cast<int>(ep.merged_source_rows.size());
  CHECK(covered == 16352 - 29);
  CHECK(driving[1].merged_source_rows.back() == 16352);
  CHECK(driving[0].notes[0].find("cut at row 16127: the car covers 2.3") == 0);
  // Every .csv of every folder is a recording or a reference its manifest declares (no
  // prediction_*.csv is skipped as "not a recording"), and every recording reads.
  for (const char* folder : {"ball_trajectories", "car_control", "car_control/aerial",
                             "car_control/freefalling", "car_control/wall_driving",
                             "car_control/ground_driving_handbrake",
                             "car_control/ground_driving_no_handbrake"}) {
    CAPTURE(folder);
    std::vector<SkippedInput> skipped, unreadable;
    const auto files = ExpandRecordingPaths({root + "/" + folder}, &skipped);
    for (const SkippedInput& s : skipped)
      CHECK_MESSAGE(s.path.find(".csv") == std::string::npos, s.path);
    const auto episodes = ReadRecordingFiles(files, {}, 0, &unreadable);
    CHECK(unreadable.empty());
    CHECK(!episodes.empty());
  }
}

TEST_CASE("nothing readable at all is one error, worded alike for every tool") {
  const std::vector<SkippedInput> none, one = {{"a.csv", "row 3, column 2: \"x\" is not a number"}},
                                        three = {one[0], {"b.csv", "empty"}, {"c.csv", "empty"}};
  CHECK_NOTHROW(RequireSomethingRead(0, none, "replay"));
  CHECK_NOTHROW(RequireSomethingRead(2, three, "replay"));
  try {
    RequireSomethingRead(0, one, "fit on");
    FAIL("no error for an input with nothing readable");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("a.csv") != std::string::npos);
    CHECK(std::string(e.what()).find("(nothing left to fit on)") != std::string::npos);
  }
  try {
    RequireSomethingRead(0, three, "replay");
    FAIL("no error for inputs with nothing readable");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("(and 2 more unreadable inputs; nothing left to replay)") !=
          std::string::npos);
  }
}

}  // namespace
}  // namespace rlfit
