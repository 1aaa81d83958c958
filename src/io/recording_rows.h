// Internal to the recording reader (recording.cc, named_recording.cc): rows of any format handed
// to one validation and timing pass as "canonical" cells, the 25-column car layout (or the
// 12 state columns of a ball row) whatever order and units the file has.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "src/io/episode.h"
#include "src/io/recording.h"

namespace rlfit::recording_rows {

// Canonical cell indices. Car: the 25 columns of the datasets' car rows; ball: the first 12 of
// them (x, y, z, vx, vy, vz, pitch, yaw, roll, wx, wy, wz: a ball row less its time).
enum Cell {
  kX, kY, kZ, kVx, kVy, kVz, kPitch, kYaw, kRoll, kWx, kWy, kWz,
  kSupersonic, kJumped, kDoubleJumped, kOnGround, kBoostAmount,
  kThrottle, kSteer, kInputPitch, kInputYaw, kInputRoll, kJump, kBoost, kHandbrake,
  kCells
};
inline constexpr int kBallCells = 12;

// Where a format's canonical cells sit in its file, and the unit of its Euler angles.
struct RowLayout {
  bool car = true;
  // Radians per unit of the angle cells: pi / 32768 for the datasets' integer rotation units,
  // 1 for the named format's radians.
  double angle_unit_rad = 0.0;
  // Largest |pitch|, |roll| (and |yaw| of a spawned car) in the file's unit.
  double max_angle = 0.0;
  // Whether rows with |yaw| > max_angle are frames before the car spawns (the datasets'
  // unwrapped yaw), skipped where ParseRecording says, rather than an error.
  bool pre_spawn_rows = true;
  std::array<int, kCells> column{};  // 1-based file column of each cell, 0 when absent
  int time_column = 0;               // 1-based file column of the time, 0 when untimed
  int Column(int cell) const { return column[static_cast<std::size_t>(cell)]; }
};

// One row: its 1-based line, its time (when the layout has one) and its kCells canonical
// cells (absent ones hold their defaults).
using RowSink = std::function<void(int line, double t_s, const double* cells)>;
// Calls the sink for every row of a file, in order.
using RowSource = std::function<void(const RowSink&)>;

// The validation and timing pass of car and ball rows (recording.cc); `rows_hint` is an upper
// bound on the row count (for reserving), `notes` file-level notes for every episode.
std::vector<Episode> ParseCarRows(const std::string& name, std::size_t rows_hint,
                                  const ReadOptions& options, const RowLayout& layout,
                                  const RowSource& rows, const std::vector<std::string>& notes);
std::vector<Episode> ParseBallRows(const std::string& name, std::size_t rows_hint,
                                   const ReadOptions& options, const RowLayout& layout,
                                   const RowSource& rows, const std::vector<std::string>& notes);

// A cell's text as a number (Mathematica exponents accepted); InputError at row and column.
double ParseCellNumber(const std::string& name, int row, int column, const char* text);
// The line number fast-cpp-csv-parser reports, as an int (InputError past INT_MAX).
int FileLineNumber(const std::string& name, long long line);

// The named-column format (named_recording.cc): `header_line` the 1-based line of the header.
std::vector<Episode> ParseNamedRecording(const std::string& name, const char* data,
                                         std::size_t size, const ReadOptions& options,
                                         int header_line);
// Whether the first non-blank line `line` (up to its end) is a header of column names: its
// first cell is not a number.
bool IsHeaderLine(const char* begin, const char* end);

}  // namespace rlfit::recording_rows
