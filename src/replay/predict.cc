// Prediction from given states: option checks, the states and controls readers (fast-cpp-csv-
// parser and nlohmann, then a validation pass), the constructed episode, the trajectory CSV.
#include "src/replay/predict.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <utility>

#include "src/common/constants.h"
#include "src/common/error.h"
#include "src/common/number_text.h"
#include "src/common/parallel.h"
#include "src/common/rotation.h"
#include "src/io/arena_file.h"
#include "src/io/csv_parser.h"
#include "src/io/episode_writer.h"
#include "src/io/files.h"
#include "src/io/plausible.h"
#include "src/io/recording.h"
#include "src/models/ball.h"
#include "src/models/model.h"
#include "src/models/surface.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/regime.h"
#include "src/replay/registry.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;

constexpr double kPi = 3.14159265358979323846;
// Largest |angle| accepted as radians: catches angles given in degrees or game units.
constexpr double kMaxAngleRad = 2.0 * kPi;
// A control row at t_s acts from the first output row at or after it; rows computed as k dt
// may fall this far short of a t_s written in decimal.
constexpr double kRowTimeSlackS = 1e-9;

// Converts one value (a CSV cell or an item of an option's list); "" on success, else why.
std::string ParseDouble(const char* text, double* value) {
  if (text == nullptr || *text == '\0') return "empty value, expected a number";
  return ReadNumberText(text, value);
}

double CellNumber(const std::string& path, int row, int column, const char* text) {
  double value = 0.0;
  const std::string why = ParseDouble(text, &value);
  if (!why.empty()) throw InputError(path, row, column, why);
  return value;
}

// "a, b ,c" into its comma-separated items, each without the `blanks` around it.
std::vector<std::string> SplitTrimmed(const std::string& text, const char* blanks) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    std::string item = text.substr(begin, comma == std::string::npos ? comma : comma - begin);
    item.erase(0, item.find_first_not_of(blanks));
    item.erase(item.find_last_not_of(blanks) + 1);
    items.push_back(std::move(item));
    if (comma == std::string::npos) return items;
    begin = comma + 1;
  }
}

// "a,b,c" into `count` values, or `alt_count` when that is > 0.
std::string ParseValueList(const std::string& option, const std::string& text, int count,
                           int alt_count, std::vector<double>* values) {
  values->clear();
  for (const std::string& item : SplitTrimmed(text, " \t")) {
    double v = 0.0;
    const std::string why = ParseDouble(item.c_str(), &v);
    if (!why.empty()) return option + ": value " + std::to_string(values->size() + 1) + ": " + why;
    values->push_back(v);
  }
  const int n = static_cast<int>(values->size());
  if (n != count && n != alt_count) {
    return option + ": " + std::to_string(n) + " values, expected " + std::to_string(count) +
           (alt_count > 0 ? " or " + std::to_string(alt_count) : std::string());
  }
  return "";
}

// What is implausible about a state: part 0 position, 1 velocity, 2 angular velocity, 3 Euler
// angles; message "" if nothing.
struct StateProblem {
  int part = -1;  // 0 position, 1 velocity, 2 angular velocity, 3 Euler angles
  std::string message;
  int component = 0;  // the value of the part the message names (0 when it names the whole)
};

// A number in a message: 6 significant digits, as %g.
std::string Num(double v) { return MessageNumber(v, 6); }

StateProblem FindStateProblem(const InitialState& s, bool car,
                              const Arena::VertexBox* box = nullptr,
                              const StartRule* rule = nullptr) {
  // The recording reader's limits (src/io/plausible.h).
  const double max_speed = plausible::MaxSpeedUuS(car);
  const double max_omega = plausible::MaxOmegaRadS(car);
  const Eigen::Vector3d* parts[] = {&s.x, &s.v, &s.omega, &s.euler};
  for (int p = 0; p < 4; ++p)
    for (int i = 0; i < 3; ++i)
      if (!std::isfinite((*parts[p])(i))) return {p, "value is not finite", i};
  for (int i = 0; i < 3; ++i)
    if (std::abs(s.x(i)) > plausible::MaxAbsPositionUu(i))
      return {0, std::string("position ") + "xyz"[i] + " = " + Num(s.x(i)) +
                     " uu is outside the arena (|" + "xyz"[i] +
                     "| <= " + Num(plausible::MaxAbsPositionUu(i)) + " accepted)",
              i};
  // stableNorm: (1e300, 0, 0) is 1e300 uu/s, not inf.
  if (s.v.stableNorm() > max_speed)
    return {1, "speed " + Num(s.v.stableNorm()) + " uu/s is implausible (limit " +
                   Num(max_speed) + ")"};
  if (s.omega.stableNorm() > max_omega)
    return {2, "angular speed " + Num(s.omega.stableNorm()) + " rad/s is implausible (limit " +
                   Num(max_omega) + ")"};
  if (Eigen::Index i = 0; s.euler.cwiseAbs().maxCoeff(&i) > kMaxAngleRad)
    return {3, "Euler angle " + Num(std::abs(s.euler(i))) +
                   " is not in radians (|angle| <= 2 pi)",
            static_cast<int>(i)};
  if (!car && !s.euler.isZero()) return {3, "the ball model has no orientation"};
  if (box != nullptr) {
    int axis = -1;
    std::string outside = OutsideArenaProblem(s.x, *box, &axis);
    if (!outside.empty()) return {0, std::move(outside), std::max(axis, 0)};
  }
  if (rule != nullptr) {
    StateProblem p;
    p.message = ModelStartProblem(*rule->model, s, rule->data_root, &p.part);
    if (!p.message.empty()) return p;
  }
  return {};
}

// "(x, y, z)" of a position, uu.
std::string PositionText(const Eigen::Vector3d& x) {
  return "(" + Num(x(0)) + ", " + Num(x(1)) + ", " + Num(x(2)) + ")";
}

// Whether `x` lies behind the mesh: one of 26 rays from it (along the axes and the diagonals
// of the faces and of the cube, Arena::FirstFacesAlong) first meets the back of a triangle. A
// ray that meets nothing (the mesh is open: 708 unshared edges; a hand-made floor) says
// nothing. The six axis rays alone let starts behind the open curves of the upper corners in:
// 8 of 4,199 random in-box balls left the arena; every one of them meets a back face along a
// diagonal.
bool BehindMesh(const Arena& arena, const Eigen::Vector3d& x) {
  static constexpr int kLines[13][3] = {{1, 0, 0},  {0, 1, 0},  {0, 0, 1},  {1, 1, 0},  {1, -1, 0},
                                        {1, 0, 1},  {1, 0, -1}, {0, 1, 1},  {0, 1, -1}, {1, 1, 1},
                                        {1, 1, -1}, {1, -1, 1}, {1, -1, -1}};
  for (const auto& line : kLines) {
    const std::array<Arena::RayFace, 2> faces =
        arena.FirstFacesAlong(x, Eigen::Vector3d(line[0], line[1], line[2]));
    if (faces[0] == Arena::RayFace::kBack || faces[1] == Arena::RayFace::kBack) return true;
  }
  return false;
}

double Degrees(double cos_angle) {
  return std::acos(std::clamp(cos_angle, -1.0, 1.0)) * 180.0 / kPi;
}

const ModelInfo* LookUpModel(const std::string& name) {
  for (const ModelInfo& m : Models())
    if (m.name == name) return &m;
  return nullptr;
}

// The state given by --state and --orientation (assumed checked).
InitialState StateFromOptions(const PredictOptions& o, std::string* why) {
  InitialState s;
  std::vector<double> v;
  *why = ParseValueList("--state", o.state, 6, 9, &v);
  if (!why->empty()) return s;
  s.x = {v[0], v[1], v[2]};
  s.v = {v[3], v[4], v[5]};
  if (v.size() == 9) s.omega = {v[6], v[7], v[8]};
  if (!o.orientation.empty()) {
    *why = ParseValueList("--orientation", o.orientation, 3, 0, &v);
    if (!why->empty()) return s;
    s.euler = {v[0], v[1], v[2]};
  }
  return s;
}

template <unsigned N>
using Reader = io::CSVReader<N, io::trim_chars<' ', '\t', '\r'>, io::no_quote_escape<','>,
                             io::throw_on_overflow, io::no_comment>;

// The header's names in file order, from the file's text (only to give an error its column
// number; the reader itself matches names to cells).
std::vector<std::string> HeaderNames(const std::string& text) {
  const std::size_t begin = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  const std::size_t end = text.find('\n', begin);
  if (begin >= text.size()) return {};
  return SplitTrimmed(text.substr(begin, end == std::string::npos ? end : end - begin), " \t\r");
}

int ColumnOf(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? 0 : static_cast<int>(it - header.begin()) + 1;
}

// Reads a CSV whose header names some of `names` (no others): on_header(header names) once,
// then row(line, cells, header) per data row, with a null cell for a column the file lacks.
// fccp errors become InputErrors.
template <unsigned N, typename HeaderFn, typename RowFn, std::size_t... I>
void ReadNamedCsv(const std::string& path, const std::array<const char*, N>& names,
                  std::index_sequence<I...>, const HeaderFn& on_header, const RowFn& row) {
  const std::string text = LoadRowText(path);
  std::string expected;
  for (const char* n : names) expected += (expected.empty() ? "" : ", ") + std::string(n);
  std::vector<std::string> header;
  try {
    header = HeaderNames(text);
    Reader<N> reader(path, text.data(), text.data() + text.size());
    reader.read_header(io::ignore_missing_column, names[I]...);
    on_header(header);
    std::array<char*, N> cells{};
    while (true) {
      cells.fill(nullptr);
      if (!reader.read_row(cells[I]...)) break;
      row(static_cast<int>(reader.get_file_line()), cells, header);
    }
  } catch (const io::error::header_missing&) {
    throw InputError(path, 1, 0, "empty file, expected a header naming " + expected);
  } catch (const io::error::extra_column_in_header& e) {
    throw InputError(
        path, 1, ColumnOf(header, e.column_name),
        "unknown column '" + std::string(e.column_name) + "' (expected any of " + expected + ")");
  } catch (const io::error::duplicated_column_in_header& e) {
    throw InputError(path, 1, 0, "column '" + std::string(e.column_name) + "' appears twice");
  } catch (const io::error::too_few_columns& e) {
    throw TooFewColumns(path, static_cast<int>(e.file_line), text.data(), text.size(),
                        header.size(), "the header");
  } catch (const io::error::too_many_columns& e) {
    throw InputError(
        path, e.file_line, static_cast<int>(header.size()) + 1,
        "too many columns, expected " + std::to_string(header.size()) + " like the header");
  } catch (const io::error::can_not_open_file&) {
    throw InputError(path, 0, 0, "cannot open file");
  } catch (const io::error::base& e) {
    throw InputError(path, 0, 0, e.what());
  }
}

std::vector<InitialState> ReadStatesCsv(const std::string& path, bool car,
                                        const Arena::VertexBox* box, const StartRule* rule) {
  static constexpr std::array<const char*, 12> kNames = {"x",  "y",  "z",  "vx",    "vy",  "vz",
                                                         "wx", "wy", "wz", "pitch", "yaw", "roll"};
  std::vector<InitialState> states;
  // Groups are given whole or not at all; position and velocity always.
  auto check_header = [&](const std::vector<std::string>& header) {
    const char* groups[][3] = {
        {"x", "y", "z"}, {"vx", "vy", "vz"}, {"wx", "wy", "wz"}, {"pitch", "yaw", "roll"}};
    for (int g = 0; g < 4; ++g) {
      int present = 0;
      for (const char* n : groups[g]) present += ColumnOf(header, n) > 0;
      if ((g < 2 && present != 3) || (present != 0 && present != 3))
        throw InputError(path, 1, 0,
                         std::string("the header must name ") + groups[g][0] + "," + groups[g][1] +
                             "," + groups[g][2] + (g < 2 ? "" : " together or none of them"));
    }
    if (!car && ColumnOf(header, "pitch") > 0)
      throw InputError(path, 1, ColumnOf(header, "pitch"), "the ball model has no orientation");
  };
  ReadNamedCsv<12>(
      path, kNames, std::make_index_sequence<12>(), check_header,
      [&](int line, const std::array<char*, 12>& cells, const std::vector<std::string>& header) {
        double v[12] = {};
        for (int c = 0; c < 12; ++c) {
          const int column = ColumnOf(header, kNames[c]);
          if (cells[c] != nullptr) v[c] = CellNumber(path, line, column, cells[c]);
        }
        InitialState s;
        s.x = {v[0], v[1], v[2]};
        s.v = {v[3], v[4], v[5]};
        s.omega = {v[6], v[7], v[8]};
        s.euler = {v[9], v[10], v[11]};
        const StateProblem p = FindStateProblem(s, car, box, rule);
        if (!p.message.empty()) {
          throw InputError(path, line, ColumnOf(header, kNames[3 * p.part + p.component]),
                           p.message);
        }
        states.push_back(s);
      });
  if (states.empty()) throw InputError(path, 0, 0, "no states (a header but no rows)");
  return states;
}

Eigen::Vector3d JsonVec3(const nlohmann::json& object, const char* key, bool required,
                         const std::string& path, const std::string& where) {
  if (!object.contains(key)) {
    if (required) throw InputError(path, 0, 0, where + ": missing key '" + key + "'");
    return Eigen::Vector3d::Zero();
  }
  const nlohmann::json& a = object.at(key);
  if (!a.is_array() || a.size() != 3)
    throw InputError(path, 0, 0, where + ": '" + key + "' must be a list of 3 numbers");
  Eigen::Vector3d out;
  for (int i = 0; i < 3; ++i) {
    if (!a[i].is_number())
      throw InputError(path, 0, 0, where + ": '" + key + "' must be a list of 3 numbers");
    out(i) = a[i].get<double>();
  }
  return out;
}

std::vector<InitialState> ReadStatesJson(const std::string& path, bool car,
                                         const Arena::VertexBox* box, const StartRule* rule) {
  const nlohmann::json j = ReadJsonFile(path);
  std::vector<const nlohmann::json*> objects;
  if (j.is_object()) {
    objects.push_back(&j);
  } else if (j.is_array()) {
    for (const nlohmann::json& e : j) objects.push_back(&e);
  }
  if (objects.empty())
    throw InputError(path, 0, 0, "expected a state object or a non-empty list of them");
  std::vector<InitialState> states;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const nlohmann::json& o = *objects[i];
    const std::string where = "state " + std::to_string(i + 1);
    if (!o.is_object()) throw InputError(path, 0, 0, where + ": not an object");
    for (const auto& item : o.items()) {
      const std::string& k = item.key();
      if (k != "x" && k != "v" && k != "omega" && k != "euler")
        throw InputError(path, 0, 0,
                         where + ": unknown key '" + k + "' (expected x, v, omega, euler)");
    }
    InitialState s;
    s.x = JsonVec3(o, "x", true, path, where);
    s.v = JsonVec3(o, "v", true, path, where);
    s.omega = JsonVec3(o, "omega", false, path, where);
    s.euler = JsonVec3(o, "euler", false, path, where);
    if (!car && o.contains("euler"))
      throw InputError(path, 0, 0, where + ": the ball model has no orientation ('euler')");
    const StateProblem p = FindStateProblem(s, car, box, rule);
    if (!p.message.empty()) throw InputError(path, 0, 0, where + ": " + p.message);
    states.push_back(s);
  }
  return states;
}

}  // namespace

double DefaultPredictDt(const ModelInfo& model) {
  return model.kind == EpisodeKind::kBall ? 1.0 / game::kEpisodeRowRateHz : 1.0 / game::kTickRateHz;
}

std::string PredictSpanProblem(const ModelInfo& model, double duration_s, double dt_s,
                               const std::string& duration_name, const std::string& dt_name) {
  if (!std::isfinite(duration_s) || duration_s <= 0.0 || duration_s > kMaxPredictDurationS)
    return duration_name + " " + Num(duration_s) + " s: must be in (0, " +
           Num(kMaxPredictDurationS) + "] s";
  const double dt = dt_s == 0.0 ? DefaultPredictDt(model) : dt_s;
  if (!std::isfinite(dt) || dt <= 0.0 || dt > kMaxPredictDtS)
    return dt_name + " " + Num(dt_s) + " s: must be in (0, " + Num(kMaxPredictDtS) + "] s";
  if (model.kind == EpisodeKind::kCar) {
    const int n = SubstepsForRow(dt, game::kTickRateHz);
    if (std::abs(dt / n * game::kTickRateHz - 1.0) > kPredictStepTolerance)
      return dt_name + " " + Num(dt) + " s is not a whole number of physics ticks (1/120 s, " +
             "within 5%), e.g. " + Num(n / game::kTickRateHz);
  } else {
    const double rows = dt * game::kEpisodeRowRateHz;
    const long m_rows = std::lround(rows);
    if (m_rows < 1 || std::abs(rows - m_rows) > 1e-6 * m_rows)
      return dt_name + " " + Num(dt) + " s: the ball model runs in rows of the recordings, " +
             "1/60.96 s: use a multiple of it, e.g. " +
             ShortestText(std::max(1L, m_rows) / game::kEpisodeRowRateHz);
  }
  if (dt > duration_s * (1.0 + 1e-12))
    return dt_name + " " + Num(dt) + " s is longer than " + duration_name + " " + Num(duration_s) +
           " s";
  return "";
}

int PredictSteps(double duration_s, double dt_s) {
  return static_cast<int>(std::floor(duration_s / dt_s + 1e-9));
}

std::string OutsideArenaProblem(const Eigen::Vector3d& x, const Arena::VertexBox& box,
                                int* axis) {
  for (int i = 0; i < 3; ++i)
    if (x(i) < box.lo(i) || x(i) > box.hi(i)) {
      *axis = i;
      return std::string("position ") + "xyz"[i] + " = " + Num(x(i)) +
             " uu is outside the arena mesh (" + "xyz"[i] + " in [" + Num(box.lo(i)) + ", " +
             Num(box.hi(i)) + "] uu): no wall or floor holds the ball there";
    }
  return "";
}

const Arena::VertexBox* PredictArenaBox(const ModelInfo& model, const std::string& data_root) {
  if (model.kind != EpisodeKind::kBall) return nullptr;
  return &BallArena(data_root.empty() ? ResolveDataRoot("") : data_root).Box();
}

std::string InitialStateProblem(const InitialState& state, bool car, int* part,
                                const Arena::VertexBox* box, const StartRule* rule) {
  const StateProblem p = FindStateProblem(state, car, box, rule);
  *part = p.part;
  return p.message;
}

std::string ModelStartProblem(const ModelInfo& model, const InitialState& state,
                              const std::string& data_root, int* part) {
  *part = 0;
  const std::string root = data_root.empty() ? ResolveDataRoot("") : data_root;
  const std::string where = "position " + PositionText(state.x) + " uu";
  const StartNeeds needs_of_model = FindDescriptor(model.name).start;
  if (needs_of_model == StartNeeds::kBallInArena) {
    const Arena& arena = BallArena(root);
    const std::string needs =
        ": the ball model needs a ball inside the arena, its centre at least " +
        Num(kBallStartMinMeshDistanceUu) + " uu from the mesh (radius " + Num(game::kBallRadius) +
        " uu; recorded bounces overlap it by up to 9.5)";
    const Contact c = arena.Collide(state.x, kBallStartMinMeshDistanceUu);
    // Mid-bounce a tick moves the ball |v . n| / tick rate along the contact's normal, so a
    // ball that fast is a state the game (and the model's own step) produces that much closer
    // to the mesh: Ball.step's ticks at 6000 uu/s come 43.8 uu from the floor, and
    // Ball.from_array takes them back.
    // (At most the ball's top speed: a faster start is refused as implausible, but not here.)
    const double tick_uu =
        c.hit ? std::min(std::abs(state.v.dot(c.normal)), game::kBallMaxSpeed) / game::kTickRateHz
              : 0.0;
    if (c.hit && c.penetration > tick_uu)
      return where + " is " + Num(kBallStartMinMeshDistanceUu - c.penetration) +
             " uu from the arena mesh" + needs +
             (tick_uu > 0.0 ? ", less the " + Num(tick_uu) +
                                  " uu it moves along the mesh's normal in a tick at this velocity"
                            : "");
    // Behind a wall (e.g. beyond a corner curve, within the box of the mesh's vertices).
    if (BehindMesh(arena, state.x))
      return where + " is outside the arena mesh" + needs;
    return "";
  }
  const std::string& name = model.name;
  if (needs_of_model == StartNeeds::kAny) {
    // Under the floor, beyond a wall or above the ceiling no surface holds the car: it fell or
    // flew for ever (z -133405 uu after 60 s from z = -100).
    if (BehindMesh(PitchArena(root), state.x))
      return where + " is outside the arena mesh: the " + name +
             " model needs a car inside the arena (under the floor or behind a wall nothing "
             "holds it)";
    return "";
  }
  // The one-row episode a prediction starts from, classified as a replay classifies a row.
  Episode ep = PredictionEpisode(EpisodeKind::kCar, state, {}, 1.0 / game::kTickRateHz, 1);
  ep.rows.resize(1);
  ep.step_dt_s.clear();
  ep.step_ticks.clear();
  Sample& row = ep.rows[0];
  // The wall model's rows have the recorded flag set; the surface test below decides.
  if (needs_of_model == StartNeeds::kOnSurface) row.on_ground = true;
  const Regime regime = ClassifyRows(name, ep, root)[0];
  const double tilt_deg = Degrees(row.theta(2, 2));
  if (needs_of_model == StartNeeds::kOnSurface) {
    const Arena& arena = PitchArena(root);
    const SurfaceCoeffs<double> c = SurfaceCoeffs<double>();
    const Eigen::Vector3d up = row.theta.col(2);
    if (regime == Regime::kCovered && IsOnSurface(c, arena, row.x, up)) return "";
    const SurfaceUnder under = FindSurface(arena, row.x, c.surface_reach);
    const std::string needs =
        ": the " + name + " model needs a car on a surface (the arena mesh within " +
        Num(kWallDriveReachUu) + " uu of the centre, the up axis within " +
        Num(Degrees(c.wheels_min_cos)) + " degrees of the surface's normal)";
    if (!under.found || under.distance > c.drive_reach)
      return where + " has no surface within " + Num(c.drive_reach) + " uu" + needs;
    *part = 3;
    return where + ": the up axis is " + Num(Degrees(up.dot(under.normal))) +
           " degrees from the surface's normal" + needs;
  }
  if (regime == Regime::kCovered) return "";
  if (needs_of_model == StartNeeds::kClearOfMesh)
    return where + " is " + (regime == Regime::kOutsideArena ? "outside the arena mesh" :
                             regime == Regime::kOnGround     ? "on the floor"
                                                             : "within reach of the arena mesh") +
           ": the " + name + " model needs a car clear of the mesh (centre more than " +
           Num(kCarSurfaceReachUu) + " uu from it)";
  const bool height_ok =
      std::abs(row.x.z() - game::kCarRestHeight) <= kGroundHeightBandUu;
  if (height_ok) *part = 3;
  return where + ", up axis " + Num(tilt_deg) + " degrees from vertical: the " + name +
         " model needs a car on the floor (z within " + Num(kGroundHeightBandUu) + " uu of " +
         Num(game::kCarRestHeight) + " uu, up axis within " +
         Num(Degrees(kGroundUprightMinCos)) + " degree of vertical)";
}

bool PredictOptions::Check(std::string* why) const {
  const ModelInfo* m = LookUpModel(model);
  if (m == nullptr) return *why = "unknown model '" + model + "'", false;
  const bool car = m->kind == EpisodeKind::kCar;
  if (state.empty() == states_path.empty())
    return *why = "give the initial state by exactly one of --state and --states", false;
  if (!orientation.empty() && !car)
    return *why = "--orientation: the " + model + " model has no orientation", false;
  if (!orientation.empty() && state.empty())
    return *why = "--orientation goes with --state (a --states file has pitch,yaw,roll)", false;
  if (!controls_path.empty() && !car)
    return *why = "--controls: the " + model + " model takes no controls", false;
  *why = PredictSpanProblem(*m, duration_s, dt_s, "--duration", "--dt");
  if (!why->empty()) return false;
  if (!state.empty()) {
    const InitialState s = StateFromOptions(*this, why);
    if (!why->empty()) return false;
    const StateProblem p = FindStateProblem(s, car);
    if (!p.message.empty())
      return *why = (p.part == 3 ? "--orientation: " : "--state: ") + p.message, false;
  }
  return true;
}

std::vector<InitialState> ReadStates(const std::string& path, bool car,
                                     const Arena::VertexBox* box, const StartRule* rule) {
  const std::string ext = fs::path(path).extension().string();
  RequireReadableFile(path);
  if (ext == ".json") return ReadStatesJson(path, car, box, rule);
  if (ext == ".csv") return ReadStatesCsv(path, car, box, rule);
  throw InputError(path, 0, 0, "states file must be .json or .csv");
}

std::string AnalogInputProblem(double v) {
  if (v >= -1.0 && v <= 1.0) return "";
  return Num(v) + " is outside [-1, 1]";
}

bool ControlRowFromValues(const double values[9], bool timed,
                          const std::vector<TimedInput>& previous, double dt_s, TimedInput* out,
                          int* column, std::string* why) {
  const double* v = values;
  for (int c = 0; c < 9; ++c) {
    if (!std::isfinite(v[c]) && (c > 0 || timed))
      return *column = c, *why = std::string(kControlColumns[c]) + " is not a finite number", false;
  }
  for (int c = 1; c <= 5; ++c)
    if (const std::string range = AnalogInputProblem(v[c]); !range.empty())
      return *column = c, *why = std::string(kControlColumns[c]) + " " + range, false;
  for (int c = 6; c <= 8; ++c)
    if (v[c] != 0.0 && v[c] != 1.0)
      return *column = c,
             *why = std::string(kControlColumns[c]) + " " + Num(v[c]) + " must be 0 or 1", false;
  TimedInput t;
  t.t_s = timed ? v[0] : static_cast<double>(previous.size()) * dt_s;
  if (timed && t.t_s < 0.0) return *column = 0, *why = "t_s must not be negative", false;
  if (timed && !previous.empty() && t.t_s <= previous.back().t_s)
    return *column = 0, *why = "t_s does not increase", false;
  t.input = CarInputs::FromColumns(&v[1]);
  *out = t;
  return true;
}

std::vector<TimedInput> ReadControls(const std::string& path, double dt_s) {
  static constexpr std::array<const char*, 9> kNames = {
      kControlColumns[0], kControlColumns[1], kControlColumns[2],
      kControlColumns[3], kControlColumns[4], kControlColumns[5],
      kControlColumns[6], kControlColumns[7], kControlColumns[8]};
  std::vector<TimedInput> out;
  ReadNamedCsv<9>(
      path, kNames, std::make_index_sequence<9>(), [](const std::vector<std::string>&) {},
      [&](int line, const std::array<char*, 9>& cells, const std::vector<std::string>& header) {
        double v[9] = {};
        for (int c = 0; c < 9; ++c)
          if (cells[c] != nullptr)
            v[c] = CellNumber(path, line, ColumnOf(header, kNames[c]), cells[c]);
        TimedInput t;
        int column = 0;
        std::string why;
        if (!ControlRowFromValues(v, cells[0] != nullptr, out, dt_s, &t, &column, &why))
          throw InputError(path, line, ColumnOf(header, kNames[column]), why);
        out.push_back(t);
      });
  if (out.empty()) throw InputError(path, 0, 0, "no controls (a header but no rows)");
  return out;
}

Episode PredictionEpisode(EpisodeKind kind, const InitialState& state,
                          const std::vector<TimedInput>& controls, double dt_s, int steps) {
  RLFIT_CHECK(steps >= 1 && dt_s > 0.0, "a prediction needs at least one row of positive length");
  Episode ep;
  ep.path = "(predict)";
  ep.name = "predict.csv";
  ep.kind = kind;
  // The ball's state is a physics tick's: row 0 on a tick (the tick clock's origin 0, so the
  // rollout starts from the state itself, not from a blend of two ticks around it).
  if (kind == EpisodeKind::kBall) ep.clock_origin_rows = 0.0;
  ep.rows.resize(steps + 1);
  ep.step_dt_s.assign(steps, dt_s);
  ep.step_ticks.assign(steps, SubstepsForRow(dt_s, game::kTickRateHz));
  Sample& first = ep.rows[0];
  first.x = state.x;
  first.v = state.v;
  first.omega = state.omega;
  if (kind == EpisodeKind::kCar) {
    first.theta = EulerToMatrix(state.euler(0), state.euler(1), state.euler(2));
    // The boost amount it starts with (a full tank unless given); boost drains in a
    // prediction (Episode::unlimited_boost is false).
    first.boost_amount = state.boost;
    // A car resting on the floor as the ground model's rows do (GroundRegime's height band and
    // upright test) starts with its wheels on the ground: the jump model reads this flag for
    // its start (a press takes off); the other car models do not read it.
    first.on_ground = std::abs(first.x.z() - game::kCarRestHeight) <= kGroundHeightBandUu &&
                      first.theta(2, 2) >= kGroundUprightMinCos;
  }
  std::size_t next = 0;  // first control not yet in force
  CarInputs held;        // no input before the first control row
  for (int k = 0; k <= steps; ++k) {
    Sample& row = ep.rows[k];
    row.source_row = k + 1;
    // A car's rows are each dt_s after the last (accumulated), so that a tick's end, t_k + dt_s
    // in ForEachRowTick, is the next row's time to the bit: a control switching at a row acts
    // on whole ticks, as the Python Car's step applies it (k dt_s may fall an ulp short and lend
    // the tick before a sliver of the next input). The ball keeps k dt_s (its tick clock).
    // Outputs print k dt_s (PredictTrajectories).
    row.t_s = kind == EpisodeKind::kCar && k > 0 ? ep.rows[k - 1].t_s + dt_s : k * dt_s;
    while (next < controls.size() && controls[next].t_s <= row.t_s + kRowTimeSlackS)
      held = controls[next++].input;
    row.input = held;
  }
  return ep;
}

std::vector<Trajectory> RunPredict(const PredictOptions& options) {
  std::string why;
  if (!options.Check(&why)) throw InputError("(options)", 0, 0, why);
  const ModelInfo& model = FindModel(options.model);
  const bool car = model.kind == EpisodeKind::kCar;
  const double dt = options.dt_s == 0.0 ? DefaultPredictDt(model) : options.dt_s;
  const int steps = PredictSteps(options.duration_s, dt);
  // A states file that cannot be read is named before the mesh is looked for.
  if (!options.states_path.empty()) RequireReadableFile(options.states_path);
  const Arena::VertexBox* box = PredictArenaBox(model, options.data_root);
  // The root resolved once, not per state.
  const StartRule rule{&model, options.data_root.empty() ? ResolveDataRoot("") : options.data_root};
  std::vector<InitialState> states;
  if (options.states_path.empty()) {
    // options.Check has parsed and checked it but for the arena (read here).
    states.push_back(StateFromOptions(options, &why));
    int part = 0;
    why = InitialStateProblem(states.back(), car, &part, box, &rule);
    if (!why.empty())
      throw InputError("(options)", 0, 0, (part == 3 ? "--orientation: " : "--state: ") + why);
  } else {
    states = ReadStates(options.states_path, car, box, &rule);
  }
  if (static_cast<double>(states.size()) * (steps + 1) > kMaxPredictRows)
    throw InputError("(options)", 0, 0,
                     std::to_string(states.size()) + " states x " + std::to_string(steps + 1) +
                         " rows is more than " + std::to_string(kMaxPredictRows) +
                         " output rows: shorten --duration or split --states");
  const std::vector<TimedInput> controls = options.controls_path.empty()
                                               ? std::vector<TimedInput>{}
                                               : ReadControls(options.controls_path, dt);
  const CoeffFile coeffs = PredictionCoefficients(
      model, LoadCoefficients(model, options.coeffs), options.coeffs, options.recording_drift,
      options.recording_input_delay);
  const std::unique_ptr<Predictor> predictor = model.make_predictor(coeffs, options.data_root);

  return PredictTrajectories(model, *predictor, states, controls, dt, steps, 1);
}

std::vector<Trajectory> PredictTrajectories(const ModelInfo& model, const Predictor& predictor,
                                            const std::vector<InitialState>& states,
                                            const std::vector<TimedInput>& controls, double dt_s,
                                            int steps, int threads) {
  std::vector<Trajectory> out(states.size());
  ParallelFor(static_cast<int>(states.size()), threads, [&](int i) {
    const Episode ep = PredictionEpisode(model.kind, states[i], controls, dt_s, steps);
    Trajectory& t = out[i];
    t.state_index = i + 1;
    t.t_s.reserve(ep.rows.size());
    for (int k = 0; k <= steps; ++k) t.t_s.push_back(k * dt_s);
    t.rows = predictor.Rollout(ep, 0, steps);
  });
  return out;
}

std::string TrajectoriesCsv(const std::vector<Trajectory>& trajectories, bool orientation,
                            bool state_column) {
  std::string out = state_column ? "state," : "";
  out += "source_row,t_s,x,y,z,vx,vy,vz,wx,wy,wz";
  if (orientation) out += ",pitch,yaw,roll";
  out += "\n";
  // Each row is built in `line` (shortest exact text, -0 as 0: number_text.h), then appended.
  constexpr int kCells = 14;
  char line[2 * 12 + kCells * (1 + kShortestChars) + 1];
  for (const Trajectory& t : trajectories) {
    for (std::size_t k = 0; k < t.rows.size(); ++k) {
      const PredictedState& p = t.rows[k];
      char* w = line;
      if (state_column) {
        w = std::to_chars(w, w + 12, t.state_index).ptr;
        *w++ = ',';
      }
      w = std::to_chars(w, w + 12, k + 1).ptr;
      auto cell = [&w](double v) {
        *w++ = ',';
        w = WriteShortest(w, v);
      };
      cell(t.t_s[k]);
      for (const Eigen::Vector3d* v : {&p.x, &p.v, &p.omega})
        for (int i = 0; i < 3; ++i) cell((*v)(i));
      if (orientation) {
        const Eigen::Vector3d e = MatrixToEuler(p.theta);
        for (int i = 0; i < 3; ++i) cell(e(i));
      }
      *w++ = '\n';
      out.append(line, w);
    }
  }
  return out;
}

void WritePredictOutput(const PredictOptions& options, const std::vector<Trajectory>& trajectories,
                        std::ostream& out) {
  const ModelInfo& model = FindModel(options.model);
  const std::string csv =
      TrajectoriesCsv(trajectories, model.has_orientation, !options.states_path.empty());
  if (options.out_path.empty())
    out << csv;
  else
    WriteFileAtomic(options.out_path, csv);
}

}  // namespace rlfit
