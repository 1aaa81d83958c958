// The named-column recording format (README "Your own recordings"): a header line names the
// columns, in any order; fast-cpp-csv-parser maps them onto the reader's canonical cells, and
// the rows then take the validation and timing pass of the datasets' formats.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "src/common/error.h"
#include "src/io/csv_parser.h"
#include "src/io/recording_rows.h"

namespace rlfit::recording_rows {
namespace {

constexpr unsigned kNamedColumns = kCells + 1;
// The known names, in canonical cell order (RowLayout), then the time.
constexpr int kTimeName = kCells;
const char* const kNames[kNamedColumns] = {
    "x",        "y",        "z",           "vx",         "vy",         "vz",
    "pitch",    "yaw",      "roll",        "wx",         "wy",         "wz",
    "supersonic", "jumped", "double_jumped", "on_ground", "boost_amount", "throttle",
    "steer",    "input_pitch", "input_yaw", "input_roll", "jump",       "boost",
    "handbrake", "t"};

// Largest |angle| of the format, radians: two turns, so that yaw in [0, 2 pi) reads as well as
// the tools' own (-pi, pi].
constexpr double kMaxAngleRad = 2.0 * 3.14159265358979323846;

// A header name as a note quotes it: at most 40 bytes, bytes that are not printable ASCII as
// '?' (a one-line note whatever the file holds); at most kNamesListed names.
constexpr std::size_t kNamesListed = 10;
std::string Printable(const std::string& name) {
  constexpr std::size_t kMost = 40;
  std::string out;
  for (char c : name) {
    if (out.size() == kMost) return out + "...";
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out;
}

struct SkipBlank {
  static bool is_comment(const char* line) {
    for (; *line != '\0'; ++line)
      if (*line != ' ' && *line != '\t' && *line != '\r') return false;
    return true;
  }
};

using NamedReader = io::CSVReader<kNamedColumns, io::trim_chars<' ', '\t', '\r'>,
                                  io::no_quote_escape<','>, io::throw_on_overflow, SkipBlank>;

template <std::size_t... I>
void ReadHeader(NamedReader& reader, std::index_sequence<I...>) {
  reader.read_header(io::ignore_extra_column | io::ignore_missing_column,
                     std::string(kNames[I])...);
}

template <std::size_t... I>
bool ReadCells(NamedReader& reader, std::array<char*, kNamedColumns>& cells,
               std::index_sequence<I...>) {
  return reader.read_row(cells[I]...);
}

// The header's names, trimmed, in order (for the column numbers of errors and to name the
// columns the reader ignores; fast-cpp-csv-parser maps the cells).
std::vector<std::string> HeaderNames(const char* begin, const char* end) {
  std::vector<std::string> names;
  const std::string line(begin, end);
  std::size_t at = 0;
  while (at <= line.size()) {
    const std::size_t comma = std::min(line.find(',', at), line.size());
    std::string name = line.substr(at, comma - at);
    name.erase(0, name.find_first_not_of(" \t\r"));
    name.erase(name.find_last_not_of(" \t\r") + 1);
    names.push_back(name);
    at = comma + 1;
  }
  return names;
}

// The reader over `data` after a UTF-8 byte-order mark, with its header read; InputError on a
// header fast-cpp-csv-parser refuses (a name given twice).
void OpenReader(NamedReader* reader, const std::string& name, int header_line) {
  try {
    ReadHeader(*reader, std::make_index_sequence<kNamedColumns>());
  } catch (const io::error::duplicated_column_in_header& e) {
    throw InputError(name, header_line, 0,
                     std::string("column \"") + e.column_name + "\" is named twice in the header");
  } catch (const io::error::base& e) {
    throw InputError(name, header_line, 0, e.what());
  }
}

}  // namespace

bool IsHeaderLine(const char* begin, const char* end) {
  while (begin < end && (*begin == ' ' || *begin == '\t' || *begin == '{')) ++begin;
  const char* cell_end = begin;
  while (cell_end < end && *cell_end != ',') ++cell_end;
  while (cell_end > begin && (cell_end[-1] == ' ' || cell_end[-1] == '\t' ||
                              cell_end[-1] == '\r' || cell_end[-1] == '}'))
    --cell_end;
  if (cell_end == begin) return false;  // an empty first cell: a malformed row, not a header
  const std::string cell(begin, cell_end);
  char* stop = nullptr;
  std::strtod(cell.c_str(), &stop);
  // Not a number (Mathematica's "1.*^-6" counts as one).
  return stop == cell.c_str() || (*stop != '\0' && std::strncmp(stop, "*^", 2) != 0);
}

std::vector<Episode> ParseNamedRecording(const std::string& name, const char* data,
                                         std::size_t size, const ReadOptions& options,
                                         int header_line) {
  const std::size_t skip = (size >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
  const char* begin = data + skip;
  const char* end = data + size;
  // The header line's text (the first non-blank line).
  const char* line = begin;
  for (int l = 1; l < header_line; ++l)
    line = static_cast<const char*>(std::memchr(line, '\n', end - line)) + 1;
  const char* line_end = static_cast<const char*>(std::memchr(line, '\n', end - line));
  if (line_end == nullptr) line_end = end;
  const std::vector<std::string> header = HeaderNames(line, line_end);
  std::map<std::string, int> column_of;  // known name -> 1-based file column
  std::vector<std::string> unknown;
  for (std::size_t i = 0; i < header.size(); ++i) {
    bool known = false;
    for (const char* n : kNames) known = known || header[i] == n;
    if (known) column_of.emplace(header[i], static_cast<int>(i + 1));
    else
      unknown.push_back(header[i].empty() ? "(empty name)" : "\"" + Printable(header[i]) + "\"");
  }
  {
    NamedReader probe(name, begin, end);  // refuses a name given twice
    OpenReader(&probe, name, header_line);
  }
  auto has = [&](int c) { return column_of.count(kNames[c]) > 0; };
  bool car = false;
  for (int c = kSupersonic; c < kCells; ++c) car = car || has(c);
  std::vector<int> required = {kX, kY, kZ, kVx, kVy, kVz, kWx, kWy, kWz};
  if (car) {
    for (int c : {kPitch, kYaw, kRoll, kJumped, kDoubleJumped, kOnGround, kBoostAmount,
                  kThrottle, kSteer, kInputPitch, kInputYaw, kInputRoll, kJump, kBoost})
      required.push_back(c);
  } else {
    required.push_back(kTimeName);
  }
  for (int c : required)
    if (!has(c))
      throw InputError(name, header_line, 0,
                       std::string("no column \"") + kNames[c] + "\": a named " +
                           (car ? "car" : "ball") +
                           " recording has t (ball; optional for a car), x y z, vx vy vz, wx wy "
                           "wz" +
                           (car ? ", pitch yaw roll, on_ground jumped double_jumped, "
                                  "boost_amount, throttle steer input_pitch input_yaw "
                                  "input_roll, jump boost (handbrake, supersonic optional)"
                                : "") +
                           " (README \"Your own recordings\")");

  RowLayout layout;
  layout.car = car;
  layout.angle_unit_rad = 1.0;
  layout.max_angle = kMaxAngleRad;
  layout.pre_spawn_rows = false;
  for (int c = 0; c < kCells; ++c)
    if (has(c)) layout.column[static_cast<std::size_t>(c)] = column_of[kNames[c]];
  layout.time_column = has(kTimeName) ? column_of[kNames[kTimeName]] : 0;

  std::vector<std::string> notes;
  if (!unknown.empty()) {
    std::string list;
    for (std::size_t i = 0; i < unknown.size() && i < kNamesListed; ++i)
      list += (list.empty() ? "" : ", ") + unknown[i];
    if (unknown.size() > kNamesListed)
      list += " and " + std::to_string(unknown.size() - kNamesListed) + " more";
    notes.push_back("columns not read (unknown names): " + list);
  }
  const bool handbrake_column = has(kHandbrake);
  if (car && !handbrake_column)
    notes.push_back("no handbrake column: where a model needs the handbrake it is inferred from "
                    "the motion");

  const std::size_t rows_hint = static_cast<std::size_t>(std::count(data, data + size, '\n')) + 1;
  const RowSource rows = [&](const RowSink& sink) {
    NamedReader reader(name, begin, end);
    OpenReader(&reader, name, header_line);
    std::array<char*, kNamedColumns> text{};
    std::array<double, kCells> cells{};
    try {
      while (ReadCells(reader, text, std::make_index_sequence<kNamedColumns>())) {
        const int row = FileLineNumber(name, reader.get_file_line());
        for (int c = 0; c < kCells; ++c)
          cells[static_cast<std::size_t>(c)] =
              text[static_cast<std::size_t>(c)] != nullptr
                  ? ParseCellNumber(name, row, layout.Column(c), text[static_cast<std::size_t>(c)])
                  : 0.0;
        const double t = text[kTimeName] != nullptr
                             ? ParseCellNumber(name, row, layout.time_column, text[kTimeName])
                             : 0.0;
        sink(row, t, cells.data());
      }
    } catch (const io::error::too_few_columns& e) {
      throw TooFewColumns(name, FileLineNumber(name, e.file_line), data, size, header.size(),
                          "the header");
    } catch (const io::error::too_many_columns& e) {
      throw InputError(name, FileLineNumber(name, e.file_line),
                       static_cast<int>(header.size() + 1),
                       "too many columns, expected " + std::to_string(header.size()) +
                           " like the header");
    } catch (const io::error::line_length_limit_exceeded& e) {
      throw InputError(name, FileLineNumber(name, e.file_line), 0, "line longer than 16 MiB");
    } catch (const io::error::base& e) {
      throw InputError(name, 0, 0, e.what());
    }
  };
  std::vector<Episode> out = car ? ParseCarRows(name, rows_hint, options, layout, rows, notes)
                                 : ParseBallRows(name, rows_hint, options, layout, rows, notes);
  if (car && !handbrake_column)
    for (Episode& ep : out) ep.handbrake = HandbrakeRecord::kNoColumn;
  return out;
}

}  // namespace rlfit::recording_rows
