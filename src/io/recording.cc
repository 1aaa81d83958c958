// Recording reader: fast-cpp-csv-parser splits rows, ParseNumber converts cells, then a
// validation pass checks values and infers how many physics ticks each row spans.
#include "src/io/recording.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <utility>

#include "src/io/csv_parser.h"

#include "src/common/constants.h"
#include "src/common/error.h"
#include "src/common/resources.h"
#include "src/common/rotation.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;

using Row = std::vector<double>;

// Converts one cell; accepts Mathematica exponents ("-9.*^-6") as written by the .txt files.
double ParseNumber(const std::string& path, int row, int column, const char* text) {
  std::string cell(text);
  const auto mathematica = cell.find("*^");
  if (mathematica != std::string::npos) cell.replace(mathematica, 2, "e");
  if (cell.empty()) throw InputError(path, row, column, "empty cell, expected a number");
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(cell.c_str(), &end);
  if (end == cell.c_str() || *end != '\0')
    throw InputError(path, row, column, "'" + cell + "' is not a number");
  if (!std::isfinite(value) || errno == ERANGE)
    throw InputError(path, row, column, "'" + cell + "' is not a finite number");
  return value;
}

template <unsigned N>
using Reader = io::CSVReader<N, io::trim_chars<' ', '\t', '{', '}', '\r'>,
                             io::no_quote_escape<','>, io::throw_on_overflow,
                             io::no_comment>;

template <unsigned N, std::size_t... I>
bool ReadCells(Reader<N>& reader, std::array<char*, N>& cells, std::index_sequence<I...>) {
  return reader.read_row(cells[I]...);
}

template <unsigned N, std::size_t... I>
void SetHeader(Reader<N>& reader, std::index_sequence<I...>) {
  reader.set_header(("c" + std::to_string(I + 1))...);
}

// Reads every row of an N-column file as numbers.
template <unsigned N>
std::vector<Row> ReadTable(const std::string& path) {
  std::vector<Row> rows;
  try {
    Reader<N> reader(path);
    SetHeader<N>(reader, std::make_index_sequence<N>());
    std::array<char*, N> cells{};
    while (ReadCells<N>(reader, cells, std::make_index_sequence<N>())) {
      const int line = static_cast<int>(reader.get_file_line());
      Row row(N);
      for (std::size_t c = 0; c < N; ++c)
        row[c] = ParseNumber(path, line, static_cast<int>(c + 1), cells[c]);
      rows.push_back(std::move(row));
    }
  } catch (const io::error::too_few_columns& e) {
    throw InputError(path, e.file_line, 0,
                     "too few columns, expected " + std::to_string(N) + " like the first row");
  } catch (const io::error::too_many_columns& e) {
    throw InputError(path, e.file_line, static_cast<int>(N + 1),
                     "too many columns, expected " + std::to_string(N) + " like the first row");
  } catch (const io::error::base& e) {
    throw InputError(path, 0, 0, e.what());
  }
  return rows;
}

// Number of comma-separated cells on the first line (0 for an empty file).
int CountColumns(const std::string& path) {
  try {
    io::LineReader lines(path);
    const char* line = lines.next_line();
    if (line == nullptr) return 0;
    std::string text(line);
    if (text.find_first_not_of(" \t\r{}") == std::string::npos) return 0;
    return 1 + static_cast<int>(std::count(text.begin(), text.end(), ','));
  } catch (const io::error::can_not_open_file&) {
    throw InputError(path, 0, 0, "cannot open file");
  }
}

Sample CarSampleFromRow(const Row& r, int offset, int source_row) {
  Sample s;
  s.source_row = source_row;
  const double* c = r.data() + offset;
  s.x = {c[0], c[1], c[2]};
  s.v = {c[3], c[4], c[5]};
  s.theta = EulerToMatrix(c[6] * game::kRadiansPerUnrealUnit, c[7] * game::kRadiansPerUnrealUnit,
                          c[8] * game::kRadiansPerUnrealUnit);
  s.omega = {c[9], c[10], c[11]};
  s.supersonic = c[12] != 0.0;
  s.jumped = c[13] != 0.0;
  s.double_jumped = c[14] != 0.0;
  s.on_ground = c[15] != 0.0;
  s.boost_amount = c[16];
  s.input.throttle = c[17];
  s.input.steer = c[18];
  s.input.pitch = c[19];
  s.input.yaw = c[20];
  s.input.roll = c[21];
  s.input.jump = c[22] != 0.0;
  s.input.boost = c[23] != 0.0;
  s.input.handbrake = c[24] != 0.0;
  return s;
}

Sample BallSampleFromRow(const Row& r, int source_row) {
  Sample s;
  s.source_row = source_row;
  s.x = {r[1], r[2], r[3]};
  s.v = {r[4], r[5], r[6]};
  s.theta = EulerToMatrix(r[7] * game::kRadiansPerUnrealUnit, r[8] * game::kRadiansPerUnrealUnit,
                          r[9] * game::kRadiansPerUnrealUnit);
  s.omega = {r[10], r[11], r[12]};
  return s;
}

// Plausibility of recorded values; the limits are generous multiples of the game's caps.
void ValidateSample(const std::string& path, const Sample& s, bool car) {
  const double max_speed = car ? 2.0 * game::kCarMaxSpeed : 2.0 * game::kBallMaxSpeed;
  const double max_omega = 2.0 * (car ? game::kCarMaxOmega : game::kBallMaxOmega);
  const int v_col = car ? 4 : 5, w_col = car ? 10 : 11;
  if (s.v.norm() > max_speed)
    throw InputError(path, s.source_row, v_col,
                     "speed " + std::to_string(s.v.norm()) + " uu/s is implausible");
  if (s.omega.norm() > max_omega)
    throw InputError(path, s.source_row, w_col,
                     "angular speed " + std::to_string(s.omega.norm()) + " rad/s is implausible");
  if (car) {
    const double analog[] = {s.input.throttle, s.input.steer, s.input.pitch, s.input.yaw,
                             s.input.roll};
    for (int i = 0; i < 5; ++i)
      if (std::abs(analog[i]) > 1.0 + 1e-6)
        throw InputError(path, s.source_row, 18 + i, "input outside [-1, 1]");
  }
}

// Row duration estimated from position and velocity: the dt that best explains
// x[k+1] - x[k] = dt (v[k] + v[k+1]) / 2; negative when the car is (almost) still.
double EstimateStepFromMotion(const Sample& a, const Sample& b) {
  const Eigen::Vector3d v_avg = 0.5 * (a.v + b.v);
  const double speed2 = v_avg.squaredNorm();
  if (speed2 < 100.0 * 100.0) return -1.0;
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

// Appends `rows` to `out` as continuous episodes, cutting at teleports and dropping
// stretches shorter than the minimum.
void EmitSegments(const std::string& path, EpisodeKind kind, std::vector<Sample> rows,
                  std::vector<double> dt, std::vector<int> ticks, const ReadOptions& options,
                  std::vector<Episode>* out, bool allow_split) {
  const std::string file_name = fs::path(path).filename().string();
  std::vector<std::pair<int, int>> ranges;  // [begin, end) row ranges
  int begin = 0;
  for (int k = 0; k + 1 < static_cast<int>(rows.size()); ++k) {
    const Eigen::Vector3d predicted = rows[k].x + dt[k] * 0.5 * (rows[k].v + rows[k + 1].v);
    const bool jump = dt[k] <= 0.0 || (predicted - rows[k + 1].x).norm() > options.max_teleport_uu;
    if (jump) {
      if (!allow_split)
        throw InputError(path, rows[k + 1].source_row, 1,
                         "position jumps " +
                             std::to_string((predicted - rows[k + 1].x).norm()) +
                             " uu from the velocity prediction: not a continuous episode");
      ranges.push_back({begin, k + 1});
      begin = k + 1;
    }
  }
  ranges.push_back({begin, static_cast<int>(rows.size())});

  const bool segmented = ranges.size() > 1;
  int index = 0;
  for (const auto& [b, e] : ranges) {
    if (e - b < (allow_split ? options.min_segment_rows : 2)) {
      if (!allow_split)
        throw InputError(path, 0, 0, "empty episode (" + std::to_string(e - b) + " rows)");
      continue;
    }
    Episode ep;
    ep.path = path;
    ep.kind = kind;
    ep.name = file_name;
    if (segmented || fs::path(path).extension() == ".txt") {
      char suffix[32];
      std::snprintf(suffix, sizeof(suffix), "_seg%02d.csv", index);
      ep.name = fs::path(path).stem().string() + suffix;
    }
    ++index;
    ep.rows.assign(rows.begin() + b, rows.begin() + e);
    ep.step_dt_s.assign(dt.begin() + b, dt.begin() + e - 1);
    ep.step_ticks.assign(ticks.begin() + b, ticks.begin() + e - 1);
    // Times are derived from the integer tick count, not accumulated from float steps,
    // except for .txt recordings whose steps come from the game clock (see caller).
    double t = 0.0;
    ep.rows[0].t_s = 0.0;
    for (int k = 0; k + 1 < ep.size(); ++k) {
      t += ep.step_dt_s[k];
      ep.rows[k + 1].t_s = t;
    }
    out->push_back(std::move(ep));
  }
  if (out->empty())
    throw InputError(path, 0, 0, "empty episode: no continuous stretch of at least " +
                                     std::to_string(options.min_segment_rows) + " rows");
}

std::vector<Episode> ReadCarFile(const std::string& path, const std::vector<Row>& table,
                                 bool timed, const ReadOptions& options) {
  const bool txt = fs::path(path).extension() == ".txt";
  std::vector<Sample> rows;
  std::vector<double> game_time;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Row& r = table[i];
    Sample s = CarSampleFromRow(r, timed ? 1 : 0, static_cast<int>(i + 1));
    // Frames before the car spawns carry unwrapped yaw (81920, 90112): not car states.
    if (std::abs(r[timed ? 8 : 7]) > 32768.0) continue;
    ValidateSample(path, s, true);
    // A repeated frame (zero game-time step, identical state) carries no information.
    if (!rows.empty() && SameState(rows.back(), s) &&
        (!timed || r[0] <= game_time.back())) {
      continue;
    }
    rows.push_back(s);
    if (timed) game_time.push_back(r[0]);
  }
  if (rows.size() < 2)
    throw InputError(path, 0, 0, "empty episode (" + std::to_string(rows.size()) + " rows)");

  const int n = static_cast<int>(rows.size());
  std::vector<double> dt(n - 1);
  std::vector<int> ticks(n - 1);
  if (timed) {
    // Game clock: a step outside (0, max_step_s] is a pause and cuts the recording.
    for (int k = 0; k + 1 < n; ++k) {
      const double step = game_time[k + 1] - game_time[k];
      const bool plausible = step > 0.0 && step <= options.max_step_s;
      dt[k] = plausible ? step : 0.0;
      ticks[k] = plausible ? std::max(1, static_cast<int>(std::lround(step * game::kTickRateHz)))
                           : 0;
    }
  } else {
    std::vector<double> estimates;
    for (int k = 0; k + 1 < n; ++k) {
      const double e = EstimateStepFromMotion(rows[k], rows[k + 1]);
      if (e > 0.0) estimates.push_back(e);
    }
    const double median = Median(estimates);
    const double tick = 1.0 / game::kTickRateHz;
    const double row61 = 1.0 / game::kEpisodeRowRateHz;
    if (estimates.size() < 3 || std::abs(median - row61) < 0.15 * row61) {
      // ~61 Hz episode rows (also the assumption for recordings with too little motion).
      std::fill(dt.begin(), dt.end(), row61);
      std::fill(ticks.begin(), ticks.end(), 2);
    } else if (std::abs(median - tick) < 0.15 * tick) {
      // 120 Hz rows; some rows span two ticks: count them from the motion.
      for (int k = 0; k + 1 < n; ++k) {
        const double e = EstimateStepFromMotion(rows[k], rows[k + 1]);
        ticks[k] = e > 0.0 ? std::clamp(static_cast<int>(std::lround(e / tick)), 1, 4) : 1;
        dt[k] = ticks[k] * tick;
      }
    } else {
      throw InputError(path, 0, 0,
                       "cannot infer the row timing: median step from motion is " +
                           std::to_string(median) + " s, neither 1/61 s nor 1/120 s");
    }
  }
  std::vector<Episode> out;
  EmitSegments(path, EpisodeKind::kCar, std::move(rows), std::move(dt), std::move(ticks),
               options, &out, txt);
  // A 301-row 61 Hz slice named episode_NN.csv: place it on the recording's row clock.
  static const std::regex slice_name(R"(episode_(\d+)\.csv)");
  std::smatch m;
  const std::string file_name = fs::path(path).filename().string();
  if (!timed && !txt && out.size() == 1 && out[0].size() == 301 && out[0].step_ticks[0] == 2 &&
      std::regex_match(file_name, m, slice_name)) {
    out[0].clock_origin_rows = 300.0 * std::stoi(m[1].str());
  }
  return out;
}

std::vector<Episode> ReadBallFile(const std::string& path, const std::vector<Row>& table,
                                  const ReadOptions& options) {
  // The time column is quantised to 2^-12 s; it only tells how many ~1/61 s rows a step
  // spans (0 for a duplicated row, 2 for a skipped one).
  const double row61 = 1.0 / game::kEpisodeRowRateHz;
  std::vector<Sample> rows;
  std::vector<double> dt;
  std::vector<int> ticks;
  double last_t = 0.0;
  for (std::size_t i = 0; i < table.size(); ++i) {
    Sample s = BallSampleFromRow(table[i], static_cast<int>(i + 1));
    ValidateSample(path, s, false);
    if (!rows.empty()) {
      const long periods = std::lround((table[i][0] - last_t) / row61);
      if (periods <= 0) {
        if (SameState(rows.back(), s)) continue;  // duplicated row
        throw InputError(path, s.source_row, 1, "time does not increase");
      }
      dt.push_back(periods * row61);
      ticks.push_back(static_cast<int>(std::lround(periods * row61 * game::kTickRateHz)));
    }
    last_t = table[i][0];
    rows.push_back(s);
  }
  if (rows.size() < 2)
    throw InputError(path, 0, 0, "empty episode (" + std::to_string(rows.size()) + " rows)");
  std::vector<Episode> out;
  EmitSegments(path, EpisodeKind::kBall, std::move(rows), std::move(dt), std::move(ticks),
               options, &out, false);
  return out;
}

bool IsRecordingFile(const fs::path& p) {
  const std::string name = p.filename().string();
  if (name.rfind("prediction_", 0) == 0) return false;
  return (p.extension() == ".csv" &&
          (name.rfind("episode_", 0) == 0 || name.rfind("freefalling_", 0) == 0)) ||
         p.extension() == ".txt";
}

}  // namespace

std::vector<Episode> ReadRecording(const std::string& path, const ReadOptions& options) {
  if (!fs::is_regular_file(path)) throw InputError(path, 0, 0, "no such file");
  const int columns = CountColumns(path);
  switch (columns) {
    case 0:
      throw InputError(path, 1, 0, "empty file");
    case 13:
      return ReadBallFile(path, ReadTable<13>(path), options);
    case 25:
      return ReadCarFile(path, ReadTable<25>(path), false, options);
    case 26:
      return ReadCarFile(path, ReadTable<26>(path), true, options);
    default:
      throw InputError(path, 1, 0,
                       std::to_string(columns) +
                           " columns: expected 13 (ball), 25 (car) or 26 (timed car)");
  }
}

std::vector<std::string> ExpandRecordingPaths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (fs::is_directory(p)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(p))
        if (entry.is_regular_file() && IsRecordingFile(entry.path()))
          found.push_back(entry.path().string());
      if (found.empty()) throw InputError(p, 0, 0, "folder holds no recordings");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      throw InputError(p, 0, 0, "no such file or folder");
    }
  }
  return files;
}

std::vector<Episode> ReadRecordings(const std::vector<std::string>& paths,
                                    const ReadOptions& options) {
  std::vector<Episode> episodes;
  for (const std::string& file : ExpandRecordingPaths(paths)) {
    std::vector<Episode> some = ReadRecording(file, options);
    for (Episode& e : some) episodes.push_back(std::move(e));
  }
  return episodes;
}

BaselinePrediction ReadBaselinePrediction(const std::string& path) {
  if (!fs::is_regular_file(path)) throw InputError(path, 0, 0, "no such file");
  const int columns = CountColumns(path);
  if (columns != 9)
    throw InputError(path, 1, 0, std::to_string(columns) + " columns: expected 9");
  BaselinePrediction out;
  out.path = path;
  for (const Row& r : ReadTable<9>(path)) {
    out.x.emplace_back(r[0], r[1], r[2]);
    out.v.emplace_back(r[3], r[4], r[5]);
    out.omega.emplace_back(r[6], r[7], r[8]);
  }
  return out;
}

std::optional<std::string> FindBaselineFor(const std::string& episode_path) {
  const fs::path p(episode_path);
  const std::string name = p.filename().string();
  if (name.rfind("episode_", 0) != 0) return std::nullopt;
  const fs::path candidate = p.parent_path() / ("prediction_" + name.substr(8));
  if (fs::is_regular_file(candidate)) return candidate.string();
  return std::nullopt;
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
  if (fs::exists(path) || data_root.empty() || fs::path(path).is_absolute()) return path;
  const fs::path joined = fs::path(data_root) / path;
  return fs::exists(joined) ? joined.string() : path;
}

}  // namespace rlfit
