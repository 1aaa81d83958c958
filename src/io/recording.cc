// Recording reader: fast-cpp-csv-parser splits rows of a file loaded once (or of memory),
// each row is converted and validated as it is read, then the row timing is inferred and the
// rows are cut into continuous episodes.
#include "src/io/recording.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <cctype>
#include <filesystem>
#include <map>
#include <system_error>
#include <thread>
#include <utility>

#include "src/io/csv_parser.h"

#include "src/common/constants.h"
#include "src/common/error.h"
#include "src/common/number_text.h"
#include "src/common/resources.h"
#include "src/common/rotation.h"
#include "src/io/plausible.h"
#include "src/io/recording_rows.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;

// Largest magnitude of an Euler angle in the game's rotation units (32768 = pi occurs).
constexpr double kMaxRotationUnits = 32768.0;
constexpr unsigned kBallColumns = 13;
constexpr unsigned kCarColumns = 25;
constexpr unsigned kTimedCarColumns = 26;
constexpr unsigned kBaselineColumns = 9;

// A number for an error message.
std::string Fmt(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

// Converts one cell (ReadNumberText: decimal, Mathematica exponents as the .txt files write
// them; underflow to zero accepted; hex, overflow, inf and NaN not).
double ParseNumber(const std::string& name, int row, int column, const char* text) {
  if (*text == '\0') throw InputError(name, row, column, "empty cell, expected a number");
  double value = 0.0;
  if (std::string why = ReadNumberText(text, &value); !why.empty())
    throw InputError(name, row, column, why);
  return value;
}

bool IsBlank(const char* begin, const char* end) {
  return std::all_of(begin, end, [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

// fast-cpp-csv-parser comment policy: blank lines (spaces, tabs, a carriage return) are
// skipped wherever they are; the line count still includes them.
struct SkipBlankLines {
  static bool is_comment(const char* line) { return IsBlank(line, line + std::strlen(line)); }
};

template <unsigned N>
using Reader = io::CSVReader<N, io::trim_chars<' ', '\t', '{', '}', '\r'>,
                             io::no_quote_escape<','>, io::throw_on_overflow, SkipBlankLines>;

template <unsigned N, std::size_t... I>
bool ReadCells(Reader<N>& reader, std::array<char*, N>& cells, std::index_sequence<I...>) {
  return reader.read_row(cells[I]...);
}

template <unsigned N, std::size_t... I>
void SetHeader(Reader<N>& reader, std::index_sequence<I...>) {
  reader.set_header(("c" + std::to_string(I + 1))...);
}

int LineNumber(const std::string& name, long long line) {
  if (line < 0) return 0;
  if (line > INT_MAX)
    throw InputError(name, 0, 0, "more than " + std::to_string(INT_MAX) + " lines");
  return static_cast<int>(line);
}

// The first line that is not blank, as fast-cpp-csv-parser will split it (after a UTF-8
// byte-order mark, up to '\n' or a NUL byte): its 1-based number and its comma-separated
// cell count. Line 0 when every line is blank.
struct FirstLine {
  int line = 0;
  std::size_t columns = 0;
  const char* begin = nullptr;  // the line's text, up to its '\n' (or a NUL byte)
  const char* end = nullptr;
};

FirstLine FindFirstLine(const std::string& name, const char* data, std::size_t size) {
  std::size_t pos = (size >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
  long long line = 0;
  while (pos < size) {
    ++line;
    const char* begin = data + pos;
    const void* newline = std::memchr(begin, '\n', size - pos);
    const char* end = newline != nullptr ? static_cast<const char*>(newline) : data + size;
    const void* nul = std::memchr(begin, '\0', end - begin);
    const char* text_end = nul != nullptr ? static_cast<const char*>(nul) : end;
    if (!IsBlank(begin, text_end))
      return {LineNumber(name, line),
              1 + static_cast<std::size_t>(std::count(begin, text_end, ',')), begin, text_end};
    pos = static_cast<std::size_t>(end - data) + 1;
  }
  return {};
}

// Refuses a text whose last row has no end of line: a file cut short (an interrupted copy or
// download) may end inside a number, "...,4.039400" read as "...,4." without a word. Every .csv
// recording ends with '\n'; the datasets' Mathematica exports (.txt, each row in {...}) end
// without one, but their last row is closed by its '}'. A blank last line is no row.
void CheckLastRowEnded(const std::string& name, const char* data, std::size_t size) {
  std::size_t begin = size;
  while (begin > 0 && data[begin - 1] != '\n') --begin;
  const char* first = data + begin;
  const char* last = data + size;
  while (last > first && IsBlank(last - 1, last)) --last;
  if (last == first) return;  // ends with '\n' (or only blanks after it)
  while (first < last && IsBlank(first, first + 1)) ++first;
  if (*first == '{' && last[-1] == '}') return;  // a whole {...} row of the .txt exports
  const long long line = std::count(data, data + begin, '\n') + 1;
  const int column = 1 + static_cast<int>(std::count(data + begin, data + size, ','));
  throw InputError(name, LineNumber(name, line), column,
                   "truncated: the file does not end with a newline (its last row may be cut "
                   "short)");
}

// Calls on_row(line, values) for every non-blank row of an N-column text, converting each
// cell as it is read. Throws InputError on a malformed row or cell.
template <unsigned N, typename OnRow>
void ForEachRow(const std::string& name, const char* data, std::size_t size, OnRow&& on_row) {
  try {
    Reader<N> reader(name, data, data + size);
    SetHeader<N>(reader, std::make_index_sequence<N>());
    std::array<char*, N> cells{};
    std::array<double, N> values{};
    while (ReadCells<N>(reader, cells, std::make_index_sequence<N>())) {
      const int line = LineNumber(name, reader.get_file_line());
      for (unsigned c = 0; c < N; ++c)
        values[c] = ParseNumber(name, line, static_cast<int>(c + 1), cells[c]);
      on_row(line, values);
    }
  } catch (const io::error::too_few_columns& e) {
    throw TooFewColumns(name, LineNumber(name, e.file_line), data, size, N, "the first row");
  } catch (const io::error::too_many_columns& e) {
    throw InputError(name, LineNumber(name, e.file_line), static_cast<int>(N + 1),
                     "too many columns, expected " + std::to_string(N) + " like the first row");
  } catch (const io::error::line_length_limit_exceeded& e) {
    throw InputError(name, LineNumber(name, e.file_line), 0, "line longer than 16 MiB");
  } catch (const io::error::base& e) {
    throw InputError(name, 0, 0, e.what());
  }
}

using recording_rows::RowLayout;
namespace cell = recording_rows;

// The datasets' formats: `first` the 1-based file column of the first canonical cell (x),
// `time` that of the time (0: none); integer rotation units, pre-spawn rows skipped.
RowLayout DatasetLayout(bool car, int first, int time) {
  RowLayout layout;
  layout.car = car;
  layout.angle_unit_rad = game::kRadiansPerUnrealUnit;
  layout.max_angle = kMaxRotationUnits;
  layout.pre_spawn_rows = true;
  const int cells = car ? cell::kCells : cell::kBallCells;
  for (int c = 0; c < cells; ++c) layout.column[static_cast<std::size_t>(c)] = first + c;
  layout.time_column = time;
  return layout;
}

// `c` holds the row's canonical cells (see RowLayout).
Sample SampleFromCells(const double* c, const RowLayout& layout, int source_row) {
  Sample s;
  s.source_row = source_row;
  s.x = {c[cell::kX], c[cell::kY], c[cell::kZ]};
  s.v = {c[cell::kVx], c[cell::kVy], c[cell::kVz]};
  s.theta = EulerToMatrix(c[cell::kPitch] * layout.angle_unit_rad,
                          c[cell::kYaw] * layout.angle_unit_rad,
                          c[cell::kRoll] * layout.angle_unit_rad);
  s.omega = {c[cell::kWx], c[cell::kWy], c[cell::kWz]};
  if (!layout.car) return s;
  s.supersonic = c[cell::kSupersonic] != 0.0;
  s.jumped = c[cell::kJumped] != 0.0;
  s.double_jumped = c[cell::kDoubleJumped] != 0.0;
  s.on_ground = c[cell::kOnGround] != 0.0;
  s.boost_amount = c[cell::kBoostAmount];
  s.input = CarInputs::FromColumns(&c[cell::kThrottle]);
  return s;
}

// The angles as the error messages quote their range.
std::string AngleRange(const RowLayout& layout) {
  return "[-" + Fmt(layout.max_angle) + ", " + Fmt(layout.max_angle) + "]";
}

// Plausibility of one row's values (canonical cells `c`); the limits are generous multiples of
// the arena's size and the game's caps. The yaw is checked by the caller (pre-spawn rows).
void ValidateCells(const std::string& name, int row, const double* c, const RowLayout& layout) {
  static const char* const kAxis[] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    const double limit = plausible::MaxAbsPositionUu(i);
    if (std::abs(c[cell::kX + i]) > limit)
      throw InputError(name, row, layout.Column(cell::kX + i),
                       std::string("position ") + kAxis[i] + " = " + Fmt(c[cell::kX + i]) +
                           " uu is outside the arena (|" + kAxis[i] + "| <= " + Fmt(limit) +
                           " accepted)");
  }
  for (int i : {cell::kPitch, cell::kRoll}) {
    if (std::abs(c[i]) > layout.max_angle)
      throw InputError(name, row, layout.Column(i),
                       std::string(i == cell::kPitch ? "pitch " : "roll ") + Fmt(c[i]) +
                           " is outside " + AngleRange(layout));
  }
  const double max_speed = plausible::MaxSpeedUuS(layout.car);
  const double max_omega = plausible::MaxOmegaRadS(layout.car);
  const double speed = std::hypot(c[cell::kVx], c[cell::kVy], c[cell::kVz]);
  const double omega = std::hypot(c[cell::kWx], c[cell::kWy], c[cell::kWz]);
  if (speed > max_speed)
    throw InputError(name, row, layout.Column(cell::kVx),
                     "speed " + Fmt(speed) + " uu/s is implausible (at most " + Fmt(max_speed) +
                         ")");
  if (omega > max_omega)
    throw InputError(name, row, layout.Column(cell::kWx),
                     "angular speed " + Fmt(omega) + " rad/s is implausible (at most " +
                         Fmt(max_omega) + ")");
  if (layout.car) {
    for (int i = cell::kThrottle; i <= cell::kInputRoll; ++i)
      if (std::abs(c[i]) > 1.0 + 1e-6)
        throw InputError(name, row, layout.Column(i),
                         "input " + Fmt(c[i]) + " outside [-1, 1]");
    // Flags (supersonic, jumped, double_jumped, on_ground) and buttons (jump, boost,
    // handbrake) are 0 or 1 in every recording; any other value is not a game state (a
    // shifted column), which would otherwise read as "set".
    for (int i : {cell::kSupersonic, cell::kJumped, cell::kDoubleJumped, cell::kOnGround,
                  cell::kJump, cell::kBoost, cell::kHandbrake})
      if (c[i] != 0.0 && c[i] != 1.0)
        throw InputError(name, row, layout.Column(i),
                         (i < cell::kBoostAmount ? "flag " : "button ") + Fmt(c[i]) +
                             " is neither 0 nor 1");
    if (!(c[cell::kBoostAmount] >= 0.0 && c[cell::kBoostAmount] <= 100.0))
      throw InputError(name, row, layout.Column(cell::kBoostAmount),
                       "boost amount " + Fmt(c[cell::kBoostAmount]) + " outside [0, 100]");
  }
}

// Row duration estimated from position and velocity: the dt that best explains
// x[k+1] - x[k] = dt (v[k] + v[k+1]) / 2; negative when the car is (almost) still.
double EstimateStepFromMotion(const Sample& a, const Sample& b) {
  const Eigen::Vector3d v_avg = 0.5 * (a.v + b.v);
  const double speed2 = v_avg.squaredNorm();
  if (speed2 < kMovingSpeedUuS * kMovingSpeedUuS) return -1.0;
  return (b.x - a.x).dot(v_avg) / speed2;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

bool SameState(const Sample& a, const Sample& b) {
  return a.x == b.x && a.v == b.v && a.omega == b.omega;
}

// For episode names only: a .txt recording's episodes have always been named as segments
// (driving_seg00.csv), as outputs and fit provenance list them; nothing is read differently.
bool IsTxt(const std::string& name) { return fs::path(name).extension() == ".txt"; }

// "empty episode (1 rows)", and why when rows repeating the state before them (repeated frames,
// merged into it) are what left too few: 300 identical rows are one state, not 300 rows.
std::string EmptyEpisodeText(std::size_t rows, std::size_t merged) {
  if (merged == 0)
    return "empty episode (" + std::to_string(rows) + (rows == 1 ? " row)" : " rows)");
  return "empty episode: " + std::to_string(rows) + " distinct row" + (rows == 1 ? "" : "s") +
         " and " + std::to_string(merged) +
         " that repeat the state before them exactly (merged as repeated frames); a replay "
         "needs 2 distinct rows";
}

// Rows kept so far and the steps between them, before the cut into episodes.
struct Track {
  std::vector<Sample> rows;
  std::vector<double> dt_s;  // dt_s[k]: rows[k] to rows[k+1], s; <= 0 marks a clock break
  std::vector<int> ticks;    // physics ticks of the same step
  std::vector<int> merged;   // source rows merged into the row before them, ascending
  // Steps k (rows[k] to rows[k+1]) across a gap of dropped frames, with the reason: the track
  // is cut there whatever the format.
  std::vector<std::pair<int, std::string>> gaps;
  // Timed recordings: steps k whose game clock breaks (a restart or a pause of the game), with
  // what the clock did; the track is cut there too (EmitSegments' split_at_breaks).
  std::vector<std::pair<int, std::string>> clock_breaks;

  void Reserve(std::size_t most) {
    rows.reserve(most);
    dt_s.reserve(most);
    ticks.reserve(most);
  }
};

// An upper bound on the rows of an N-cell text: a row of N cells has at least 2N bytes.
std::size_t RowsHint(const char* data, std::size_t size, std::size_t columns) {
  const std::size_t lines = static_cast<std::size_t>(std::count(data, data + size, '\n')) + 1;
  return std::min(lines, size / (2 * columns) + 1);
}

// FNV-1a 64 over the bytes of `value`.
template <typename T>
void Mix(std::uint64_t* h, const T& value) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    *h ^= bytes[i];
    *h *= 0x100000001b3ULL;
  }
}

// Episode::fingerprint: the rows' states (a car's orientation, flags, boost and inputs too; not
// the ball's orientation, which no model reads and the named format need not carry) and steps.
std::uint64_t Fingerprint(const Episode& ep) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  Mix(&h, ep.kind == EpisodeKind::kCar ? 1 : 0);
  for (const Sample& s : ep.rows) {
    for (int i = 0; i < 3; ++i) {
      Mix(&h, s.x(i));
      Mix(&h, s.v(i));
      Mix(&h, s.omega(i));
    }
    if (ep.kind != EpisodeKind::kCar) continue;
    for (int i = 0; i < 9; ++i) Mix(&h, s.theta(i));
    const unsigned char flags = (s.jumped ? 1 : 0) | (s.double_jumped ? 2 : 0) |
                                (s.on_ground ? 4 : 0) | (s.input.jump ? 8 : 0) |
                                (s.input.boost ? 16 : 0) | (s.input.handbrake ? 32 : 0);
    Mix(&h, flags);
    Mix(&h, s.boost_amount);
    for (double u : {s.input.throttle, s.input.steer, s.input.pitch, s.input.yaw, s.input.roll})
      Mix(&h, u);
  }
  for (int t : ep.step_ticks) Mix(&h, t);
  return h;
}

// "rows 336-337" or "row 336".
std::string RowSpan(int first, int last) {
  return first == last ? "row " + std::to_string(first)
                       : "rows " + std::to_string(first) + "-" + std::to_string(last);
}

// Cuts `track` into continuous episodes and appends them to `out`: at its gaps of dropped
// frames always (with a note each); at clock breaks and teleports when `split_at_breaks` (a
// timed recording), else a break is an InputError (a position jump at the x column).
// Stretches shorter than the minimum are dropped (an error when nothing is left).
void EmitSegments(const std::string& name, EpisodeKind kind, Track track, const RowLayout& layout,
                  const ReadOptions& options, bool split_at_breaks,
                  std::vector<std::string> notes, std::vector<Episode>* out) {
  const std::string file_name = fs::path(name).filename().string();
  const int n = static_cast<int>(track.rows.size());
  std::vector<std::pair<int, int>> ranges;  // [begin, end) row ranges
  std::vector<bool> after_gap;              // the range starts after a gap
  int begin = 0;
  std::size_t next_gap = 0;
  bool gap_before = false;
  for (int k = 0; k + 1 < n; ++k) {
    const Sample& a = track.rows[k];
    const Sample& b = track.rows[k + 1];
    if (next_gap < track.gaps.size() && track.gaps[next_gap].first == k) {
      notes.push_back("cut at row " + std::to_string(b.source_row) + ": " +
                      track.gaps[next_gap].second);
      ++next_gap;
      ranges.push_back({begin, k + 1});
      after_gap.push_back(gap_before);
      begin = k + 1;
      gap_before = true;
      continue;
    }
    const double dt = track.dt_s[k];
    const double miss_uu = (a.x + dt * 0.5 * (a.v + b.v) - b.x).norm();
    if (dt > 0.0 && miss_uu <= options.max_teleport_uu) continue;
    if (!split_at_breaks) {
      if (dt <= 0.0) throw InputError(name, b.source_row, 1, "time does not increase");
      throw InputError(name, b.source_row, layout.Column(cell::kX),
                       "position jumps " + Fmt(miss_uu) +
                           " uu from the velocity prediction: not a continuous episode");
    }
    const auto clock = std::find_if(track.clock_breaks.begin(), track.clock_breaks.end(),
                                    [k](const auto& c) { return c.first == k; });
    notes.push_back("cut at row " + std::to_string(b.source_row) + ": " +
                    (clock != track.clock_breaks.end()
                         ? clock->second
                         : "the car lands " + Fmt(miss_uu) +
                               " uu off its velocity's path: a teleport (a reset of the game)") +
                    " (the parts are replayed apart)");
    ranges.push_back({begin, k + 1});
    after_gap.push_back(gap_before);
    begin = k + 1;
    gap_before = true;
  }
  ranges.push_back({begin, n});
  after_gap.push_back(gap_before);
  const bool any_gap = ranges.size() > 1;  // a gap of dropped frames or a break
  const bool split = split_at_breaks || any_gap;

  // The file's last kept row (repeats merged into it after it are not counted).
  const int last_source = n > 0 ? track.rows.back().source_row : 0;
  // Parts of a cut recording that are too short to keep are noted.
  for (std::size_t r = 0; r < ranges.size() && any_gap; ++r) {
    const auto [b, e] = ranges[r];
    const bool gap_side = after_gap[r] || (r + 1 < ranges.size() && after_gap[r + 1]);
    if (e - b < options.min_segment_rows && gap_side)
      notes.push_back(RowSpan(track.rows[b].source_row, track.rows[e - 1].source_row) +
                      " left out: a part of " + std::to_string(e - b) +
                      (e - b == 1 ? " row" : " rows") + " beside a cut (at least " +
                      std::to_string(options.min_segment_rows) + " kept)");
  }

  const bool segmented = ranges.size() > 1;
  const int first_source = n > 0 ? track.rows[0].source_row : 0;
  const std::size_t first_out = out->size();
  std::size_t next_merged = 0;
  int index = 0;
  for (const auto& [b, e] : ranges) {
    // Repeats of this range's rows lie between its first row and the next range's first row.
    const int first_row = track.rows[b].source_row;
    const int end_row = e < n ? track.rows[e].source_row : INT_MAX;
    while (next_merged < track.merged.size() && track.merged[next_merged] < first_row)
      ++next_merged;
    std::vector<int> merged;
    while (next_merged < track.merged.size() && track.merged[next_merged] < end_row)
      merged.push_back(track.merged[next_merged++]);
    if (e - b < (split ? options.min_segment_rows : 2)) {
      if (!split)
        throw InputError(name, 0, 0, EmptyEpisodeText(e - b, merged.size()));
      continue;
    }
    Episode ep;
    ep.path = name;
    ep.kind = kind;
    ep.name = file_name;
    if (segmented || IsTxt(name)) {
      char suffix[32];
      std::snprintf(suffix, sizeof(suffix), "_seg%02d.csv", index);
      ep.name = fs::path(name).stem().string() + suffix;
      ep.segment = index;
    }
    ++index;
    if (!segmented) {  // the whole track: move, not copy (a long recording is large)
      ep.rows = std::move(track.rows);
      ep.step_dt_s = std::move(track.dt_s);
      ep.step_ticks = std::move(track.ticks);
    } else {
      ep.rows.assign(track.rows.begin() + b, track.rows.begin() + e);
      ep.step_dt_s.assign(track.dt_s.begin() + b, track.dt_s.begin() + e - 1);
      ep.step_ticks.assign(track.ticks.begin() + b, track.ticks.begin() + e - 1);
    }
    ep.merged_source_rows = std::move(merged);
    ep.file_first_row = first_source;
    ep.file_last_row = last_source;
    // Times are accumulated from the steps: whole multiples of the row period for episode
    // files, the game clock's steps for timed recordings.
    double t = 0.0;
    ep.rows[0].t_s = 0.0;
    for (int k = 0; k + 1 < ep.size(); ++k) {
      t += ep.step_dt_s[k];
      ep.rows[k + 1].t_s = t;
    }
    ep.fingerprint = Fingerprint(ep);
    out->push_back(std::move(ep));
  }
  if (out->size() == first_out)
    throw InputError(name, 0, 0, "empty episode: no continuous stretch of at least " +
                                     std::to_string(options.min_segment_rows) + " rows");
  for (std::size_t i = first_out; i < out->size(); ++i) (*out)[i].notes = notes;
}

}  // namespace

namespace recording_rows {

double ParseCellNumber(const std::string& name, int row, int column, const char* text) {
  return ParseNumber(name, row, column, text);
}

int FileLineNumber(const std::string& name, long long line) { return LineNumber(name, line); }

// Car rows (any format, canonical cells): validation, merged repeats, pre-spawn rows, the row
// timing (the game clock, else inferred from the motion: 61 Hz or 120 Hz), and the continuity
// checks of ParseRecording (rows out of order, jumps, gaps of dropped frames).
std::vector<Episode> ParseCarRows(const std::string& name, std::size_t rows_hint,
                                  const ReadOptions& options, const RowLayout& layout,
                                  const RowSource& source, const std::vector<std::string>& notes) {
  const bool timed = layout.time_column > 0;
  const int yaw_column = layout.Column(cell::kYaw);
  Track track;
  track.Reserve(rows_hint);
  std::vector<double> game_time;
  if (timed) game_time.reserve(rows_hint);
  source([&](int line, double t_s, const double* c) {
    if (std::abs(c[cell::kYaw]) > layout.max_angle) {
      // Frames before the car spawns carry unwrapped yaw (81920, 90112): not car states.
      // They come first in a recording, and in a timed one again after a restart of the game.
      const double step = timed && !game_time.empty() ? t_s - game_time.back() : 0.0;
      const bool clock_broke = step < 0.0 || step > options.max_step_s;
      if (layout.pre_spawn_rows && (track.rows.empty() || clock_broke)) return;
      throw InputError(name, line, yaw_column,
                       "yaw " + Fmt(c[cell::kYaw]) + " is outside " + AngleRange(layout) +
                           (layout.pre_spawn_rows
                                ? std::string(": frames before the car spawns are skipped only "
                                              "before the first car row") +
                                      (timed ? " or after a break of the game clock" : "")
                                : std::string()));
    }
    ValidateCells(name, line, c, layout);
    Sample s = SampleFromCells(c, layout, line);
    if (!track.rows.empty()) {
      // A repeated frame (identical state, no game-time step) carries no information.
      if (SameState(track.rows.back(), s) && (!timed || t_s <= game_time.back())) {
        track.merged.push_back(line);
        return;
      }
      // The clock going back while the car stays where it was is not a restart of the game
      // (which teleports it) but rows out of order.
      if (timed && t_s < game_time.back() &&
          (s.x - track.rows.back().x).norm() <= options.max_teleport_uu)
        throw InputError(name, line, layout.time_column,
                         "rows out of order: time goes back from " + Fmt(game_time.back()) +
                             " s to " + Fmt(t_s) + " s while the car stays within " +
                             Fmt(options.max_teleport_uu) + " uu (a restart teleports it)");
    }
    track.rows.push_back(std::move(s));
    if (timed) game_time.push_back(t_s);
  });
  if (track.rows.size() < 2)
    throw InputError(name, 0, 0, EmptyEpisodeText(track.rows.size(), track.merged.size()));

  const std::vector<Sample>& rows = track.rows;
  const int n = static_cast<int>(rows.size());
  track.dt_s.assign(n - 1, 0.0);
  track.ticks.assign(n - 1, 0);
  if (timed) {
    // Game clock: a step outside (0, max_step_s] is a restart or a pause and cuts the
    // recording. max_step_s <= 1 s (ReadOptions::Check) bounds the tick count.
    for (int k = 0; k + 1 < n; ++k) {
      const double step = game_time[k + 1] - game_time[k];
      if (step > 0.0 && step <= options.max_step_s) {
        track.dt_s[k] = step;
        track.ticks[k] = std::max(1, static_cast<int>(std::lround(step * game::kTickRateHz)));
      } else if (step == 0.0) {
        // A stale time stamp (the ball's rule, ParseBallRows): the state moved on while the
        // clock did not, so this row's time, and the tick it sits on, is unknown. Cut.
        track.gaps.push_back({k, "the time stamp " + Fmt(game_time[k + 1]) +
                                     " s repeats with a new state: frames dropped or out of "
                                     "step (the parts are replayed apart)"});
      } else {
        track.clock_breaks.push_back(
            {k, step < 0.0 ? "the game clock goes back from " + Fmt(game_time[k]) + " s to " +
                                 Fmt(game_time[k + 1]) + " s: a restart of the game"
                           : "the game clock jumps by " + Fmt(step) + " s (more than " +
                                 Fmt(options.max_step_s) + " s): a pause of the game"});
      }
    }
    // A clock that mostly stands still is not a clock (as a ball file whose steps are mostly
    // gaps): refused at the first stale stamp rather than cut into pieces of a row.
    if (track.gaps.size() * 2 > static_cast<std::size_t>(n - 1))
      throw InputError(name, rows[track.gaps.front().first + 1].source_row, layout.time_column,
                       "time does not increase on " + std::to_string(track.gaps.size()) +
                           " of " + std::to_string(n - 1) +
                           " steps while the state changes: the time column is not the game's "
                           "clock");
  } else {
    std::vector<double> estimates;
    for (int k = 0; k + 1 < n; ++k) {
      const double e = EstimateStepFromMotion(rows[k], rows[k + 1]);
      if (e > 0.0) estimates.push_back(e);
    }
    const std::size_t estimate_count = estimates.size();
    const double median = Median(std::move(estimates));
    const double tick = 1.0 / game::kTickRateHz;
    const double row61 = 1.0 / game::kEpisodeRowRateHz;
    double period = row61;  // the step a row is measured in
    if (estimate_count < 3 || std::abs(median - row61) < 0.15 * row61) {
      // ~61 Hz episode rows (also the assumption for recordings with too little motion).
      std::fill(track.dt_s.begin(), track.dt_s.end(), row61);
      std::fill(track.ticks.begin(), track.ticks.end(), 2);
    } else if (std::abs(median - tick) < 0.15 * tick) {
      // 120 Hz rows; some rows span two ticks: count them from the motion (1 to 4, rounded
      // in double precision so that no unbounded value is converted to an integer).
      period = tick;
      for (int k = 0; k + 1 < n; ++k) {
        const double e = EstimateStepFromMotion(rows[k], rows[k + 1]);
        const double ticks =
            e > 0.0 ? std::clamp(std::round(e / tick), 1.0, double{kMaxTicksPerStep120}) : 1.0;
        track.ticks[k] = static_cast<int>(ticks);
        track.dt_s[k] = ticks * tick;
      }
    } else {
      throw InputError(name, 0, 0,
                       "cannot infer the row timing: median step from motion is " +
                           Fmt(median) + " s, neither 1/61 s nor 1/120 s");
    }
    // Continuity: rows out of order, gaps of dropped frames (at 120 Hz beyond the 1 to 4
    // ticks a step is stepped through above), and jumps.
    for (int k = 0; k + 1 < n; ++k) {
      const Sample& a = rows[k];
      const Sample& b = rows[k + 1];
      const Eigen::Vector3d v_avg = 0.5 * (a.v + b.v);
      const double speed = v_avg.norm();
      const Eigen::Vector3d dx = b.x - a.x;
      if (speed >= kMovingSpeedUuS) {
        const double along = dx.dot(v_avg) / (speed * speed) / period;  // periods travelled
        if (along < kMaxOutOfOrderRows)
          throw InputError(name, b.source_row, layout.Column(cell::kX),
                           "rows out of order: the car covers " + Fmt(along) +
                               " rows of its velocity (" + Fmt(speed) +
                               " uu/s) since the row before, under " +
                               Fmt(kMaxOutOfOrderRows) +
                               " (an earlier or later row, or a reversed file)");
        // At 61 Hz a step of kMinGapRows rows or more; at 120 Hz more ticks than a step is
        // stepped through (kMaxTicksPerStep120).
        const double gap_rows = period == row61 ? kMinGapRows : kMaxTicksPerStep120 + 0.5;
        // Across a gap the car may turn or change speed: its path then lies off the line of
        // its mean velocity by up to half the gap's time times the change of velocity (made
        // at any moment within it; a steady turn of up to 6 rad misses by less), plus a quarter
        // of kMaxCarAccelUuS2 times the time squared where the velocity strays and comes back
        // (an S-bend in a powerslide), on top of what one row may miss.
        const double gap_s = along * period;
        const double gap_miss_uu = kMaxCarRowJumpUu + 0.5 * gap_s * (b.v - a.v).norm() +
                                   0.25 * kMaxCarAccelUuS2 * gap_s * gap_s;
        if (along >= gap_rows && (dx - gap_s * v_avg).norm() <= gap_miss_uu) {
          track.gaps.push_back(
              {k, "the car covers " + Fmt(along) + " rows of its velocity in one step: frames "
                  "dropped (the parts are replayed apart)"});
          continue;
        }
      }
      const double miss_uu = (dx - track.dt_s[k] * v_avg).norm();
      if (miss_uu > kMaxCarRowJumpUu)
        throw InputError(name, b.source_row, layout.Column(cell::kX),
                         "position jumps " + Fmt(miss_uu) +
                             " uu from the velocity prediction (at most " +
                             Fmt(kMaxCarRowJumpUu) +
                             " uu between consecutive car rows): not a continuous episode");
    }
  }
  std::vector<Episode> out;
  EmitSegments(name, EpisodeKind::kCar, std::move(track), layout, options, timed, notes, &out);
  return out;
}

// Ball rows (canonical cells, the time): the time column only tells how many ~1/61 s rows a
// step spans (0 for a repeated row); it is quantised to 2^-12 s.
std::vector<Episode> ParseBallRows(const std::string& name, std::size_t rows_hint,
                                   const ReadOptions& options, const RowLayout& layout,
                                   const RowSource& source,
                                   const std::vector<std::string>& notes) {
  const double row_s = 1.0 / game::kEpisodeRowRateHz;
  Track track;
  track.Reserve(rows_hint);
  double last_t = 0.0;
  // How far each step is from a whole number of rows (in rows), and its line.
  std::vector<std::pair<double, int>> off_rows;
  source([&](int line, double t_s, const double* c) {
    if (std::abs(c[cell::kYaw]) > layout.max_angle)
      throw InputError(name, line, layout.Column(cell::kYaw),
                       "yaw " + Fmt(c[cell::kYaw]) + " is outside " + AngleRange(layout));
    ValidateCells(name, line, c, layout);
    Sample s = SampleFromCells(c, layout, line);
    if (!track.rows.empty()) {
      const double step_s = t_s - last_t;
      const double periods = step_s / row_s;  // may be huge or infinite: compared, not converted
      if (!(periods >= -0.5))
        throw InputError(name, line, layout.time_column,
                         "rows out of order: time goes back (" + Fmt(last_t) + " s, then " +
                             Fmt(t_s) + " s)");
      const int k = static_cast<int>(track.rows.size()) - 1;  // the step rows[k] -> this row
      if (periods < 0.5) {
        if (SameState(track.rows.back(), s)) {  // a repeated row
          track.merged.push_back(line);
          return;
        }
        // A stale time stamp: the time of this row is unknown, so is its place on the clock.
        const std::string stamp = "the time stamp " + Fmt(t_s) + " s";
        const std::string what =
            step_s == 0.0 ? stamp + " repeats with a new state"
            : step_s < 0.0
                ? stamp + " is " + Fmt(-step_s) + " s before the row before's, with a new state"
                : stamp + " is only " + Fmt(step_s) +
                      " s after the row before's (under half a row), with a new state";
        track.gaps.push_back(
            {k, what + ": frames dropped or out of step (the parts are replayed apart)"});
        track.dt_s.push_back(0.0);
        track.ticks.push_back(0);
      } else if (periods < kMinGapRows) {
        off_rows.emplace_back(std::abs(periods - 1.0), line);
        track.dt_s.push_back(row_s);
        track.ticks.push_back(static_cast<int>(std::lround(row_s * game::kTickRateHz)));
      } else {
        // periods is infinite for a step beyond the double's range (1e308 s after -1e308 s).
        track.gaps.push_back(
            {k, "time jumps by " + Fmt(step_s) + " s" +
                    (std::isfinite(periods) ? " (" + Fmt(periods) + " rows of 1/60.96 s)" : "") +
                    ": frames dropped (the parts are replayed apart)"});
        track.dt_s.push_back(0.0);
        track.ticks.push_back(0);
      }
    }
    last_t = t_s;
    track.rows.push_back(std::move(s));
  });
  if (track.rows.size() < 2)
    throw InputError(name, 0, 0, EmptyEpisodeText(track.rows.size(), track.merged.size()));
  // A recording at another rate (120 Hz: 0.51 row a step; 40 Hz: 1.52, also a gap) is read as
  // one row a step and replayed at the wrong speed (a ball's own 120 Hz ticks were 105 uu off
  // at 0.5 s). The recordings' steps are within 0.012 row of whole rows but for 2 of 155,367
  // (episodes 270 and 332: 1.49 and 1.16 rows), so the median decides, not each step; a file
  // whose steps are mostly gaps is refused too.
  const std::size_t steps = track.rows.size() - 1;
  if (track.gaps.size() * 2 > steps) {
    throw InputError(name, track.rows[track.gaps.front().first + 1].source_row,
                     layout.time_column,
                     "time steps are not whole rows of 1/60.96 s (" +
                         std::to_string(track.gaps.size()) + " of " + std::to_string(steps) +
                         " steps are gaps of 1.5 rows or more, or under half a row): the "
                         "ball model reads recordings of ~61 rows a second");
  }
  if (!off_rows.empty()) {
    std::vector<std::pair<double, int>> sorted = off_rows;
    const std::size_t mid = sorted.size() / 2;
    std::nth_element(sorted.begin(), sorted.begin() + mid, sorted.end());
    if (sorted[mid].first > kMaxBallMedianOffRows) {
      const auto first = std::find_if(off_rows.begin(), off_rows.end(), [](const auto& o) {
        return o.first > kMaxBallMedianOffRows;
      });
      throw InputError(name, first->second, layout.time_column,
                       "time steps are not whole rows of 1/60.96 s (the median step is " +
                           Fmt(sorted[mid].first) +
                           " row off one): the ball model reads recordings of ~61 rows a second");
    }
  }
  std::vector<Episode> out;
  EmitSegments(name, EpisodeKind::kBall, std::move(track), layout, options, false, notes, &out);
  return out;
}

}  // namespace recording_rows

namespace {

// The datasets' numeric formats as a row source: N cells a row, the canonical cells from
// `first` (0-based) on, the time (when timed) in cell 0.
template <unsigned N>
recording_rows::RowSource NumericRows(const std::string& name, const char* data,
                                      std::size_t size, unsigned first, bool timed) {
  return [&name, data, size, first, timed](const recording_rows::RowSink& sink) {
    std::array<double, cell::kCells> cells{};
    ForEachRow<N>(name, data, size, [&](int line, const std::array<double, N>& r) {
      std::copy(r.begin() + first, r.end(), cells.begin());
      sink(line, timed ? r[0] : 0.0, cells.data());
    });
  };
}

std::vector<Episode> ParseBall(const std::string& name, const char* data, std::size_t size,
                               const ReadOptions& options) {
  return recording_rows::ParseBallRows(name, RowsHint(data, size, kBallColumns), options,
                                       DatasetLayout(false, 2, 1),
                                       NumericRows<kBallColumns>(name, data, size, 1, true), {});
}

// 25-column car rows (timed = false) or 26-column rows with the game time first.
template <unsigned N>
std::vector<Episode> ParseCar(const std::string& name, const char* data, std::size_t size,
                              const ReadOptions& options) {
  constexpr bool timed = N == kTimedCarColumns;
  return recording_rows::ParseCarRows(
      name, RowsHint(data, size, N), options, DatasetLayout(true, timed ? 2 : 1, timed ? 1 : 0),
      NumericRows<N>(name, data, size, timed ? 1 : 0, timed), {});
}

// What kind of file a stat mode is, for "not a regular file".
std::string FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a file";
}

// Why a path cannot be used, from the error of a file-system call.
std::string DescribeError(int error) {
  switch (error) {
    case ENOENT:
      return "no such file";
    case ENOTDIR:
      return "no such file (a part of the path is not a folder)";
    case ELOOP:
      return "symbolic link loop (too many levels of symbolic links)";
    case EACCES:
      return "permission denied";
    case ENAMETOOLONG:
      return "file name too long";
    case ENXIO:
      return "not a regular file";
    default:
      return std::generic_category().message(error);
  }
}

// Bytes of a file's start that RefuseNonText looks at: many rows of any recording.
constexpr std::size_t kSniffBytes = 1 << 16;

// Refuses, naming what it is, a file that is not the plain text (ASCII or UTF-8, lines ended
// by LF or CRLF) every recording is, judged on its first bytes `head` (up to kSniffBytes): a
// compressed file (gzip, bzip2, xz, zstd, zip), UTF-16 or UTF-32 text, a binary file (a NUL or
// another control byte), or text with CR-only line endings. Without it these all read as one
// long line and were reported as "truncated: the file does not end with a newline", or as an
// empty file after reading gigabytes of NUL bytes.
void RefuseNonText(const std::string& name, const char* head, std::size_t size) {
  if (size == 0) return;  // an empty file is refused later, by name; `head` may then be null
  const auto starts = [&](const char* magic, std::size_t n) {
    return size >= n && std::memcmp(head, magic, n) == 0;
  };
  const auto refuse = [&](const std::string& what) { throw InputError(name, 0, 0, what); };
  if (starts("\x1f\x8b", 2)) refuse("is gzip-compressed, not a text recording: gunzip it first");
  if (starts("BZh", 3) && size > 3 && head[3] >= '1' && head[3] <= '9')
    refuse("is bzip2-compressed, not a text recording: bunzip2 it first");
  if (starts("\xfd" "7zXZ\0", 6)) refuse("is xz-compressed, not a text recording: unxz it first");
  if (starts("\x28\xb5\x2f\xfd", 4))
    refuse("is zstd-compressed, not a text recording: unzstd it first");
  if (starts("PK\x03\x04", 4)) refuse("is a zip archive, not a text recording: unzip it first");
  if (starts("\xff\xfe\0\0", 4) || starts("\0\0\xfe\xff", 4))
    refuse("is UTF-32 text (byte-order mark): recordings are UTF-8 or ASCII; convert it");
  if (starts("\xff\xfe", 2) || starts("\xfe\xff", 2))
    refuse("is UTF-16 text (byte-order mark): recordings are UTF-8 or ASCII; convert it "
           "(iconv -f UTF-16 -t UTF-8)");
  std::size_t n = std::min(size, kSniffBytes);
  // The line breaks that end a whole file are no content: with or without them, the same answer.
  if (n == size)
    while (n > 0 && (head[n - 1] == '\n' || head[n - 1] == '\r')) --n;
  const void* nul = std::memchr(head, '\0', n);
  if (nul != nullptr) {
    const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(nul) - head);
    // UTF-16 without a byte-order mark: ASCII text with a NUL after (or before) each byte.
    std::size_t even = 0, odd = 0, pairs = std::min<std::size_t>(n / 2, 256);
    for (std::size_t i = 0; i < pairs; ++i) {
      even += head[2 * i] == '\0';
      odd += head[2 * i + 1] == '\0';
    }
    if (pairs >= 4 && (even == pairs) != (odd == pairs))
      refuse("is UTF-16 text (a NUL byte beside every character): recordings are UTF-8 or "
             "ASCII; convert it (iconv -f UTF-16 -t UTF-8)");
    if (std::all_of(head, head + n, [](char c) { return c == '\0'; }))
      refuse("holds only NUL bytes (its first " + std::to_string(n) +
             " at least), not a text recording");
    refuse("is a binary file, not a text recording (a NUL byte at byte " + std::to_string(at + 1) +
           ")");
  }
  // Control bytes (not whitespace) in more than 1% of the start: a binary file. One or a few
  // are a damaged text, which the row and column of the bad cell describe better.
  std::size_t controls = 0, first_control = n;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(head[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f') ||
        c == 0x7f) {
      ++controls;
      first_control = std::min(first_control, i);
    }
  }
  if (controls > 0 && controls * 100 > n) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02x",
                  static_cast<unsigned char>(head[first_control]));
    refuse("is a binary file, not a text recording (" + std::to_string(controls) +
           " control bytes, the first " + hex + " at byte " + std::to_string(first_control + 1) +
           ")");
  }
  if (std::memchr(head, '\r', n) != nullptr && std::memchr(head, '\n', n) == nullptr)
    refuse("ends its lines with CR alone (old Mac text): recordings end them with LF or CRLF; "
           "convert it (tr '\\r' '\\n')");
}

// A regular file opened for reading, closed with the object. Opens without blocking (a FIFO
// with no writer would block a plain open) and refuses anything but a regular file.
struct RegularFile {
  explicit RegularFile(const std::string& path)
      : fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)) {
    if (fd < 0) throw InputError(path, 0, 0, DescribeError(errno));
    if (::fstat(fd, &st) != 0) {
      const int error = errno;
      ::close(fd);
      throw InputError(path, 0, 0, DescribeError(error));
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      throw InputError(path, 0, 0, "not a regular file (" + FileKind(st.st_mode) + ")");
    }
  }
  ~RegularFile() { ::close(fd); }
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  int fd;
  struct stat st {};
};

// The whole contents of a regular file (RegularFile's refusals).
std::string LoadFile(const std::string& path) {
  const RegularFile file(path);
  const int fd = file.fd;
  const struct stat& st = file.st;
  std::string data(std::min(static_cast<std::size_t>(std::max<off_t>(st.st_size, 0)),
                            kSniffBytes),
                   '\0');
  std::size_t filled = 0;
  // The start first: a file that is not text is refused before the rest is read (a 2 GiB file
  // of NUL bytes at once, not after 20 s and 2 GB of memory).
  while (filled < data.size()) {
    const ssize_t got = ::read(fd, &data[filled], data.size() - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InputError(path, 0, 0, "cannot read: " + DescribeError(errno));
    if (got == 0) break;
    filled += static_cast<std::size_t>(got);
  }
  RefuseNonText(path, data.data(), filled);
  if (filled == data.size())
    data.resize(std::max<std::size_t>(static_cast<std::size_t>(st.st_size), filled));
  char more[1 << 16];  // for a file that grew since fstat
  for (;;) {
    const bool full = filled == data.size();
    char* into = full ? more : &data[filled];
    const std::size_t room = full ? sizeof(more) : data.size() - filled;
    const ssize_t got = ::read(fd, into, room);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw InputError(path, 0, 0, "cannot read: " + DescribeError(errno));
    }
    if (got == 0) break;
    if (full) data.append(more, static_cast<std::size_t>(got));
    filled += static_cast<std::size_t>(got);
  }
  data.resize(filled);
  return data;
}

std::string DescribeError(const std::error_code& ec) {
  return ec.category() == std::generic_category() || ec.category() == std::system_category()
             ? DescribeError(ec.value())
             : ec.message();
}

}  // namespace

std::string FingerprintText(std::uint64_t fingerprint) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(fingerprint));
  return text;
}

std::string PlaceAndMessage(const InputError& e) {
  std::string where;
  if (e.row() > 0) where = "row " + std::to_string(e.row());
  if (e.column() > 0) where += ", column " + std::to_string(e.column());
  return where.empty() ? e.message() : where + ": " + e.message();
}

bool ReadOptions::Check(std::string* why) const {
  auto fail = [&](const std::string& reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  if (min_segment_rows < 2) return fail("min_segment_rows must be at least 2");
  if (!(max_step_s > 0.0 && max_step_s <= 1.0)) return fail("max_step_s must be in (0, 1] s");
  if (!(max_teleport_uu > 0.0 && std::isfinite(max_teleport_uu)))
    return fail("max_teleport_uu must be positive and finite");
  std::string facts_why;
  if (!facts.Check(&facts_why)) return fail(facts_why);
  return true;
}

namespace {

// Episode::unlimited_boost of a car episode: boost held on some row and the recorded amount
// never falling from one row to the next (a recording without the amount, 0 on every row, counts
// as unlimited: its boost thrust as it always has).
bool BoostNeverRanOut(const Episode& ep) {
  if (ep.kind != EpisodeKind::kCar) return false;
  bool held = false;
  for (std::size_t k = 0; k < ep.rows.size(); ++k) {
    held = held || ep.rows[k].input.boost;
    if (k > 0 && ep.rows[k].boost_amount < ep.rows[k - 1].boost_amount) return false;
  }
  return held;
}

std::vector<Episode> ParseRecordingRows(const std::string& name, const char* data,
                                        std::size_t size, const ReadOptions& options) {
  std::string why;
  RLFIT_CHECK(options.Check(&why), "ReadOptions: " + why);
  RefuseNonText(name, data, size);
  const FirstLine first = FindFirstLine(name, data, size);
  if (first.line != 0) CheckLastRowEnded(name, data, size);
  if (first.line != 0 && recording_rows::IsHeaderLine(first.begin, first.end))
    return recording_rows::ParseNamedRecording(name, data, size, options, first.line);
  switch (first.line == 0 ? 0 : first.columns) {
    case 0:
      throw InputError(name, 0, 0, "empty file (no rows)");
    case kBallColumns:
      return ParseBall(name, data, size, options);
    case kCarColumns:
      return ParseCar<kCarColumns>(name, data, size, options);
    case kTimedCarColumns:
      return ParseCar<kTimedCarColumns>(name, data, size, options);
    default:
      throw InputError(name, first.line, 0,
                       std::to_string(first.columns) +
                           " columns: expected 13 (ball), 25 (car), 26 (timed car) or a header "
                           "of column names (README \"Your own recordings\")");
  }
}

}  // namespace

std::vector<Episode> ParseRecording(const std::string& name, const char* data, std::size_t size,
                                    const ReadOptions& options) {
  std::vector<Episode> episodes = ParseRecordingRows(name, data, size, options);
  for (Episode& ep : episodes) ep.unlimited_boost = BoostNeverRanOut(ep);
  return episodes;
}

namespace {

// The facts of `path`'s manifest and the command line, on its episodes (ReadRecording).
void ApplyRecordingFacts(const std::string& path, const RecordingFacts& given,
                         std::vector<Episode>* episodes) {
  const FileFacts facts = FactsForRecording(path, given);
  if (facts.source.empty() || episodes->empty()) return;
  for (Episode& ep : *episodes) {
    ep.facts_source = facts.source;
    if (ep.kind == EpisodeKind::kCar && facts.handbrake_unrecorded)
      ep.handbrake = HandbrakeRecord::kNotRecorded;
    // A reference predicts the recording from its first row: it belongs to the part that
    // starts there (later parts of a cut recording have none from their own start).
    if (ep.rows[0].source_row == ep.file_first_row) ep.reference_path = facts.reference;
  }
  // The clock origin is that of the file's first row; it holds for the part starting there
  // while its rows follow the row clock one by one (61 Hz rows of two ticks, nothing merged:
  // after a repeated frame the clock row of the rows is not known).
  Episode& first = episodes->front();
  const bool on_clock =
      first.rows[0].source_row == first.file_first_row && first.merged_source_rows.empty() &&
      std::all_of(first.step_ticks.begin(), first.step_ticks.end(), [](int t) { return t == 2; });
  if (!std::isnan(facts.clock_origin_rows) && on_clock)
    first.clock_origin_rows = facts.clock_origin_rows;
}

// The start of a file: its bytes up to the first non-blank line's end (at most 16 MiB), or
// less when the file is shorter. Refuses what LoadFile refuses.
std::string LoadFileStart(const std::string& path) {
  const RegularFile file(path);
  const int fd = file.fd;
  constexpr std::size_t kChunk = 1 << 16, kMost = 16u << 20;
  std::string data;
  char buf[kChunk];
  while (data.size() < kMost) {
    const ssize_t got = ::read(fd, buf, sizeof(buf));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw InputError(path, 0, 0, "cannot read: " + DescribeError(errno));
    }
    if (got == 0) break;
    const std::size_t before = data.size();
    data.append(buf, static_cast<std::size_t>(got));
    // Done once a line that is not blank has ended.
    if (std::memchr(data.data() + before, '\n', data.size() - before) == nullptr) continue;
    const FirstLine first = FindFirstLine(path, data.data(), data.size());
    if (first.line != 0 && first.end < data.data() + data.size()) break;
  }
  return data;
}

}  // namespace

std::vector<Episode> ReadRecording(const std::string& path, const ReadOptions& options) {
  const std::string data = LoadFile(path);
  std::vector<Episode> episodes = ParseRecording(path, data.data(), data.size(), options);
  ApplyRecordingFacts(path, options.facts, &episodes);
  return episodes;
}

std::string LoadRowText(const std::string& path) {
  std::string data = LoadFile(path);
  RefuseNonText(path, data.data(), data.size());
  CheckLastRowEnded(path, data.data(), data.size());
  return data;
}

std::string NotARecordingReason(const std::string& path) {
  std::string data;
  try {
    data = LoadFileStart(path);
  } catch (const InputError& e) {
    return e.message();
  }
  const FirstLine first = FindFirstLine(path, data.data(), data.size());
  if (first.line == 0) return kNoRowsReason;
  if (recording_rows::IsHeaderLine(first.begin, first.end)) {
    // A header: a recording's names x, y and z among its cells.
    std::string line(first.begin, first.end);
    int found = 0;
    std::size_t begin = 0;
    while (begin <= line.size()) {
      const std::size_t end = std::min(line.find(',', begin), line.size());
      std::string name = line.substr(begin, end - begin);
      name.erase(0, name.find_first_not_of(" \t\r{"));
      name.erase(name.find_last_not_of(" \t\r}") + 1);
      found += name == "x" || name == "y" || name == "z";
      begin = end + 1;
    }
    if (found == 3) return "";
  } else if (first.columns == kBallColumns || first.columns == kCarColumns ||
             first.columns == kTimedCarColumns) {
    return "";
  }
  return "its first line is neither a header naming x, y and z nor 13, 25 or 26 numbers";
}

std::vector<std::string> ExpandRecordingPaths(const std::vector<std::string>& paths,
                                              std::vector<SkippedInput>* skipped,
                                              std::vector<SkippedInput>* unreadable) {
  std::vector<std::string> files;
  std::map<std::pair<dev_t, ino_t>, std::string> seen;  // file identity -> its first path
  auto fail = [&](const std::string& path, const std::string& why) {
    if (unreadable == nullptr) throw InputError(path, 0, 0, why);
    unreadable->push_back({path, why});
  };
  auto add = [&](const std::string& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0) {
      const auto [it, fresh] = seen.emplace(std::make_pair(st.st_dev, st.st_ino), file);
      if (!fresh) {
        if (skipped != nullptr)
          skipped->push_back({file, "the same file as " + it->second + ": read once"});
        return;
      }
    }
    files.push_back(file);
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(p, ec);
    if (status.type() == fs::file_type::not_found) {
      fail(p, "no such file or folder");
      continue;
    }
    if (ec) {
      fail(p, DescribeError(ec));
      continue;
    }
    if (fs::is_regular_file(status)) {
      add(p);
      continue;
    }
    struct stat st {};
    if (!fs::is_directory(status)) {
      fail(p, "not a regular file" + (::stat(p.c_str(), &st) == 0
                                          ? " (" + FileKind(st.st_mode) + ")"
                                          : std::string()));
      continue;
    }
    std::vector<std::string> entries;
    fs::directory_iterator it(p, ec);
    bool listed = !ec;
    for (; listed && it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) break;
      entries.push_back(it->path().string());
    }
    if (ec) {
      fail(p, "cannot list the folder: " + DescribeError(ec));
      continue;
    }
    std::sort(entries.begin(), entries.end());
    std::vector<std::string> found;
    std::vector<SkippedInput> not_recordings;
    for (const std::string& entry : entries) {
      const fs::path e(entry);
      std::error_code entry_ec;
      const fs::file_status entry_status = fs::status(e, entry_ec);
      if (fs::is_directory(entry_status)) continue;  // sub-folders: RecordingFilesFor
      std::string extension = e.extension().string();
      std::transform(extension.begin(), extension.end(), extension.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (extension != ".csv" && extension != ".txt") {
        not_recordings.push_back({entry, "not a .csv or .txt file"});
        continue;
      }
      if (entry_ec) {
        fail(entry, entry_ec == std::errc::no_such_file_or_directory ? "broken symbolic link"
                                                                      : DescribeError(entry_ec));
        continue;
      }
      if (!fs::is_regular_file(entry_status)) {
        not_recordings.push_back({entry, "not a regular file"});
        continue;
      }
      if (IsDeclaredReference(entry)) continue;  // its manifest says what it is
      const std::string why = NotARecordingReason(entry);
      // A .csv or .txt with no rows at all is a recording cut to nothing (an interrupted copy):
      // listed, so that reading it fails on it rather than the folder passing it over.
      if (!why.empty() && why != kNoRowsReason) {
        not_recordings.push_back({entry, "not a recording: " + why});
        continue;
      }
      found.push_back(entry);
    }
    if (skipped != nullptr)
      skipped->insert(skipped->end(), not_recordings.begin(), not_recordings.end());
    if (found.empty()) {
      std::string why = "folder holds no recordings (a recording is a .csv or .txt file whose "
                        "first line is a header of column names or 13, 25 or 26 numbers";
      if (!not_recordings.empty())
        why += "; " + std::to_string(not_recordings.size()) + " other file" +
               (not_recordings.size() == 1 ? "" : "s") + ", e.g. " +
               fs::path(not_recordings.front().path).filename().string() + ": " +
               not_recordings.front().reason;
      fail(p, why + ")");
      continue;
    }
    for (const std::string& f : found) add(f);
  }
  return files;
}

std::vector<Episode> ReadRecordingFiles(const std::vector<std::string>& files,
                                        const ReadOptions& options, int threads,
                                        std::vector<SkippedInput>* unreadable) {
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min<int>(threads, static_cast<int>(files.size())));
  const bool keep_going = unreadable != nullptr;
  // Per file its episodes or its error; files are handed out one at a time (they differ in
  // size), and a thread stops taking new ones once any file has failed (unless keep_going).
  std::vector<std::vector<Episode>> per_file(files.size());
  std::vector<std::exception_ptr> errors(files.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    // A file once taken is read, so every file before a failed one is read (files are taken
    // in order): its error, if any, is found.
    while (keep_going || !failed) {
      const std::size_t i = next++;
      if (i >= files.size()) break;
      try {
        per_file[i] = ReadRecording(files[i], options);
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  // The first error in the list is the one reading in order would have met first.
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) continue;
    if (!keep_going) std::rethrow_exception(errors[i]);
    try {
      std::rethrow_exception(errors[i]);
    } catch (const InputError& e) {
      unreadable->push_back({files[i], PlaceAndMessage(e)});
    }
  }
  std::vector<Episode> episodes;
  for (std::vector<Episode>& some : per_file)
    for (Episode& e : some) episodes.push_back(std::move(e));
  return episodes;
}

std::vector<Episode> ReadRecordings(const std::vector<std::string>& paths,
                                    const ReadOptions& options) {
  return ReadRecordingFiles(ExpandRecordingPaths(paths), options);
}

BaselinePrediction ParseBaselinePrediction(const std::string& name, const char* data,
                                           std::size_t size) {
  RefuseNonText(name, data, size);
  const FirstLine first = FindFirstLine(name, data, size);
  if (first.line == 0) throw InputError(name, 0, 0, "empty file (no rows)");
  CheckLastRowEnded(name, data, size);
  if (first.columns != kBaselineColumns)
    throw InputError(name, first.line, 0,
                     std::to_string(first.columns) + " columns: expected 9");
  BaselinePrediction out;
  out.path = name;
  ForEachRow<kBaselineColumns>(name, data, size, [&](int, const std::array<double, 9>& r) {
    out.x.emplace_back(r[0], r[1], r[2]);
    out.v.emplace_back(r[3], r[4], r[5]);
    out.omega.emplace_back(r[6], r[7], r[8]);
  });
  return out;
}

BaselinePrediction ReadBaselinePrediction(const std::string& path) {
  const std::string data = LoadFile(path);
  return ParseBaselinePrediction(path, data.data(), data.size());
}

std::string ResolveDataRoot(const std::string& cli_value) {
  if (!cli_value.empty()) {
    if (!fs::is_directory(cli_value)) throw InputError(cli_value, 0, 0, "data folder not found");
    return cli_value;
  }
  if (const char* env = std::getenv("RLFIT_DATA"); env != nullptr && *env != '\0') {
    if (!fs::is_directory(env))
      throw InputError(env, 0, 0, "data folder from RLFIT_DATA not found");
    return env;
  }
  for (const std::string& candidate : DataRootCandidates()) {
    std::error_code ec;
    if (!fs::is_directory(candidate, ec)) continue;
    const fs::path canonical = fs::weakly_canonical(candidate, ec);
    return ec ? candidate : canonical.string();
  }
  return "";
}

std::string ResolveUnderRoot(const std::string& path, const std::string& data_root) {
  // symlink_status: a link that leads nowhere (or to itself) is there as given, and the reader
  // then says what is wrong with it; exists() would throw on a loop.
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path, ec)) || data_root.empty() ||
      fs::path(path).is_absolute())
    return path;
  const fs::path joined = fs::path(data_root) / path;
  return fs::exists(fs::symlink_status(joined, ec)) ? joined.string() : path;
}

void RequireSomethingRead(std::size_t read, const std::vector<SkippedInput>& unreadable,
                          const std::string& what) {
  if (read > 0 || unreadable.empty()) return;
  const std::string more = unreadable.size() > 1
                               ? "and " + std::to_string(unreadable.size() - 1) +
                                     " more unreadable inputs; "
                               : "";
  throw InputError(unreadable.front().path, 0, 0,
                   unreadable.front().reason + " (" + more + "nothing left to " + what + ")");
}

}  // namespace rlfit
