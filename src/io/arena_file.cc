// Reading the arena mesh file into the models' Arena, and the per-process arenas of a
// datasets root (src/io/arena_file.h).
#include "src/io/arena_file.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "src/common/error.h"
#include "src/common/number_text.h"
#include "src/common/resources.h"
#include "src/io/csv_parser.h"
#include "src/io/files.h"
#include "src/io/plausible.h"
#include "src/models/ball.h"

namespace rlfit {
namespace {

float ParseCoordinate(const std::string& path, int row, int column, const char* text) {
  if (text == nullptr || *text == '\0')
    throw InputError(path, row, column, "empty cell, expected a number");
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0')
    throw InputError(path, row, column, "'" + std::string(text) + "' is not a number");
  if (!std::isfinite(value) || errno == ERANGE ||
      std::abs(value) > std::numeric_limits<float>::max())
    throw InputError(path, row, column,
                     "'" + std::string(text) + "' is not a finite single-precision number");
  return static_cast<float>(value);
}

// Number of tab-separated cells on line `row` of `path`, for the message of a short row.
int CountCells(const std::string& path, int row) {
  io::LineReader lines(path);
  const char* line = nullptr;
  for (int i = 0; i < row; ++i) line = lines.next_line();
  if (line == nullptr) return 0;
  const std::string text(line);
  if (text.find_first_not_of(" \t") == std::string::npos) return 0;  // blank line
  return 1 + static_cast<int>(std::count(text.begin(), text.end(), '\t'));
}

// The arena `build(path of <root>/meshes/pitch.dat)` makes for a datasets root, made once per
// process, `kind` (a distinct static per caller) and root. InputError if the root is unknown;
// `build` throws one if the mesh is missing.
template <class Kind, class Build>
const Arena& ArenaOfRoot(const std::string& data_root, const Build& build) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Arena>> arenas;
  const std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Arena>& arena = arenas[data_root];
  if (!arena) {
    if (data_root.empty())
      throw InputError("meshes/pitch.dat", 0, 0,
                       "the ball model needs the arena mesh, but " + MissingDataRootMessage());
    arena = std::make_unique<Arena>(build(data_root + "/meshes/pitch.dat"));
  }
  return *arena;
}

}  // namespace

Arena LoadArena(const std::string& path) { return Arena(LoadArenaTriangles(path)); }

std::vector<Triangle> LoadArenaTriangles(const std::string& path) {
  using Reader = io::CSVReader<9, io::trim_chars<' ', '\t'>, io::no_quote_escape<'\t'>>;
  // A FIFO would block the reader's open, a folder read as a mesh with no triangles and a
  // device (/dev/zero) as one endless line: each is refused by what it is.
  RequireReadableFile(path);
  std::vector<Triangle> triangles;
  try {
    Reader reader(path);
    reader.set_header("x1", "y1", "z1", "x2", "y2", "z2", "x3", "y3", "z3");
    std::array<char*, 9> cell{};
    while (reader.read_row(cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6], cell[7],
                           cell[8])) {
      const int row = static_cast<int>(reader.get_file_line());
      Triangle t;
      for (int c = 0; c < 9; ++c) t.p[c / 3][c % 3] = ParseCoordinate(path, row, c + 1, cell[c]);
      triangles.push_back(t);
    }
  } catch (const io::error::can_not_open_file&) {
    throw InputError(path, 0, 0, "cannot open mesh file");
  } catch (const io::error::too_few_columns& e) {
    const int found = CountCells(path, e.file_line);
    throw InputError(path, e.file_line, found + 1,
                     found == 0 ? std::string("blank line, expected 9 tab-separated values")
                                : "missing value: " + std::to_string(found) +
                                      " tab-separated values, expected 9 (3 vertices x, y, z)");
  } catch (const io::error::too_many_columns& e) {
    throw InputError(path, e.file_line, 10, "too many values, expected 9 (3 vertices x, y, z)");
  } catch (const io::error::base& e) {
    throw InputError(path, 0, 0, e.what());
  }
  if (triangles.empty()) throw InputError(path, 0, 0, "mesh has no triangles");
  CheckTriangles(triangles, path);  // rows are triangles: fccp reads no header or blank line
  // A mesh file is an arena: a vertex beyond the limits of a plausible position (twice the
  // arena's extent, as for the recordings) is a corrupt file, not a bigger arena.
  for (std::size_t i = 0; i < triangles.size(); ++i)
    for (int j = 0; j < 3; ++j)
      for (int axis = 0; axis < 3; ++axis) {
        const double limit = plausible::MaxAbsPositionUu(axis);
        const double value = triangles[i].p[j][axis];
        if (std::abs(value) <= limit) continue;
        throw InputError(path, static_cast<int>(i + 1), 3 * j + axis + 1,
                         "vertex coordinate " + MessageNumber(value) + " uu is beyond +-" +
                             MessageNumber(limit) +
                             " uu (twice the arena's extent): not an arena mesh");
      }
  return triangles;
}

const Arena& PitchArena(const std::string& data_root) {
  struct Pitch {};
  return ArenaOfRoot<Pitch>(data_root, [](const std::string& path) { return LoadArena(path); });
}

const Arena& BallArena(const std::string& data_root) {
  struct Ball {};
  return ArenaOfRoot<Ball>(data_root, [](const std::string& path) {
    return Arena(WithBallCeiling(LoadArenaTriangles(path)));
  });
}

}  // namespace rlfit
