// Tests of the recording reader: every format, the timing inference, and bad input.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
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

TEST_CASE("a ball step spans 1 to kMaxBallStepRows rows: a time jump is an error") {
  const double dt = 1.0 / 60.96;
  std::string at_rest;
  for (int k = 0; k < 40; ++k) at_rest += BallRow(k * dt, 0.0, 100.0);
  SUBCASE("a huge jump after a ball at rest (the teleport check cannot see it)") {
    for (const char* t : {"1e6", "1e9", "1e300", "-1e300"}) {
      CAPTURE(t);
      ExpectParseError("episode_000001.csv", WithCell(at_rest, 20, 0, t), 20, 1,
                       t[0] == '-' ? "time does not increase" : "time jumps by");
    }
  }
  SUBCASE("one period more than the cap") {
    std::string s;
    for (int k = 0; k < 40; ++k)
      s += BallRow((k + (k >= 20 ? kMaxBallStepRows : 0)) * dt, 0.0, 100);
    ExpectParseError("episode_000001.csv", s, 21, 1, "not a continuous episode");
  }
  SUBCASE("up to the cap is a step of that many rows") {
    std::string s;
    for (int k = 0; k < 40; ++k)
      s += BallRow((k + (k >= 20 ? kMaxBallStepRows - 1 : 0)) * dt, 0.0, 100);
    const auto episodes = Parse("episode_000001.csv", s);
    REQUIRE(episodes.size() == 1);
    CHECK(episodes[0].step_dt_s[19] == doctest::Approx(kMaxBallStepRows * dt));
  }
  SUBCASE("time going back with a new state") {
    ExpectParseError("episode_000001.csv", WithCell(BallFile(40), 20, 0, "0.1"), 20, 1,
                     "time does not increase");
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
  SUBCASE("a timed .txt whose time stands still while the state changes: the time column") {
    std::string s = CarFile(40, false, true);
    s = WithCell(s, 21, 0, Line(s, 20).substr(0, Line(s, 20).find(',')));
    ExpectParseError("timed.txt", s, 21, 1, "time does not increase");
  }
  SUBCASE("26 columns in a .csv: the timed format is for .txt only") {
    ExpectParseError("episode_00.csv", CarFile(40, false, true), 1, 0,
                     "26 columns: the timed format");
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

TEST_CASE("file names: recordings and slice numbers") {
  CHECK(IsRecordingFileName("episode_00.csv"));
  CHECK(IsRecordingFileName("freefalling_3.csv"));
  CHECK(IsRecordingFileName("driving.txt"));
  CHECK_FALSE(IsRecordingFileName("prediction_00.csv"));
  CHECK_FALSE(IsRecordingFileName("prediction_x.txt"));
  CHECK_FALSE(IsRecordingFileName("notes.csv"));
  CHECK_FALSE(IsRecordingFileName(".txt"));  // a hidden file without extension
  CHECK_FALSE(IsRecordingFileName("episode_00.csv.bak"));
  CHECK(EpisodeSliceNumber("episode_07.csv") == 7);
  CHECK(EpisodeSliceNumber("episode_000342.csv") == 342);
  CHECK_FALSE(EpisodeSliceNumber("episode_.csv").has_value());
  CHECK_FALSE(EpisodeSliceNumber("episode_-1.csv").has_value());
  CHECK_FALSE(EpisodeSliceNumber("episode_1a.csv").has_value());
  CHECK_FALSE(EpisodeSliceNumber("episode_99999999999999999999.csv").has_value());
  CHECK_FALSE(EpisodeSliceNumber("xepisode_1.csv").has_value());
  std::string why;
  CHECK(ReadOptions{}.Check(&why));
  ReadOptions bad;
  bad.max_step_s = 1e9;
  CHECK_FALSE(bad.Check(&why));
  CHECK(why.find("max_step_s") != std::string::npos);
}

TEST_CASE("a 301-row slice: the clock origin from its number, none when it does not fit") {
  TempDir dir;
  std::string s;  // driving along x at 500 uu/s, 61 Hz rows
  for (int k = 0; k < 301; ++k)
    s += std::to_string(500.0 * k / 60.96) +
         ", 0, 17, 500, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 100, 1, 0, 0, 0, 0, 0, 0, 0\n";
  CHECK(Parse("episode_02.csv", s)[0].clock_origin_rows == 600.0);
  const auto huge = ReadRecording(dir.Write("episode_99999999999999999999.csv", s));
  REQUIRE(huge.size() == 1);
  CHECK(std::isnan(huge[0].clock_origin_rows));
  CHECK(huge[0].size() == 301);
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
  const std::string prediction_loop = dir.path() + "/prediction_01.csv";
  std::filesystem::create_symlink(prediction_loop, prediction_loop);
  CHECK_FALSE(FindBaselineFor(dir.path() + "/episode_01.csv").has_value());

  TempDir fifo_dir;
  const std::string fifo = fifo_dir.path() + "/episode_00.csv";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  ExpectInputError(fifo, 0, 0, "not a regular file (a FIFO)");
  CHECK_THROWS_WITH_AS(ExpandRecordingPaths({fifo}), doctest::Contains("not a regular file"),
                       InputError);
  ExpectInputError(fifo_dir.path(), 0, 0, "not a regular file (a folder)");
  ExpectInputError(fifo_dir.path() + "/missing.csv", 0, 0, "no such file");
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
  // driving.txt: 29 pre-spawn rows, then 16323 rows; every one is kept or merged (the last
  // 171 repeat the car at rest), so outputs can be row-aligned with the file.
  const auto driving =
      ReadRecordings({root + "/car_control/ground_driving_no_handbrake/driving.txt"});
  REQUIRE(driving.size() == 1);
  CHECK(driving[0].rows[0].source_row == 30);
  CHECK(driving[0].size() + static_cast<int>(driving[0].merged_source_rows.size()) ==
        16352 - 29);
  CHECK(driving[0].merged_source_rows.back() == 16352);
}

}  // namespace
}  // namespace rlfit
