// Replay: open-loop and windowed rollouts over covered stretches, the error report, its files.
#include "src/replay/replay.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include "src/common/error.h"
#include "src/common/number_text.h"
#include "src/common/progress.h"
#include "src/common/resources.h"
#include "src/io/episode_writer.h"
#include "src/io/files.h"
#include "src/io/recording.h"
#include "src/replay/coeff_choice.h"
#include "src/report/plots.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;

constexpr const char* kAloneLabel = "covered but alone (nothing to predict)";
const char* const kSplits[] = {"heldout", "unseen", "train"};

std::string HorizonLabel(double h) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%gs", h);
  return buf;
}

std::string Fmt(double v) {
  char buf[32];
  if (std::abs(v) >= 1000) std::snprintf(buf, sizeof(buf), "%.0f", v);
  else if (std::abs(v) >= 10) std::snprintf(buf, sizeof(buf), "%.1f", v);
  else std::snprintf(buf, sizeof(buf), "%.3f", v);
  return buf;
}

// The report's horizons: numeric ones, the "last covered row", and the curve grid.
struct Grid {
  std::vector<double> horizons_s;  // numeric report horizons
  int labels = 0;                  // horizons_s.size() + 1 ("last")
  std::vector<double> curve_s;     // curve_step_s apart up to the longest report horizon
};

// The first row of `pred` that is diverged, or pred.size().
int FirstDiverged(const std::vector<PredictedState>& pred) {
  for (std::size_t j = 0; j < pred.size(); ++j)
    if (IsDiverged(pred[j])) return static_cast<int>(j);
  return static_cast<int>(pred.size());
}

// Error of the prediction `pred` (starting at row `first`) at row `row`.
ErrorPoint PointAt(const Episode& ep, const std::vector<PredictedState>& pred, int first,
                   int diverged, int row, bool no_angle) {
  ErrorPoint p;
  if (row - first >= diverged) {
    p.diverged = true;
    return p;
  }
  p.error = CompareState(pred[row - first], ep.rows[row]);
  if (no_angle) p.error.angle_deg = std::nan("");
  return p;
}

// Open-loop figures of one prediction over the stretch [a, b]: per horizon label and on the
// curve grid, horizons measured from a.
void StretchFigures(const Episode& ep, int a, int b, const std::vector<PredictedState>& pred,
                    const Grid& grid, bool no_angle,
                    std::vector<std::optional<ErrorPoint>>* labels,
                    std::vector<std::optional<ErrorPoint>>* curve) {
  const int diverged = FirstDiverged(pred);
  labels->assign(grid.labels, std::nullopt);
  for (int h = 0; h < grid.labels; ++h) {
    const int row = h + 1 < grid.labels ? RowAtHorizon(ep, a, grid.horizons_s[h]) : b;
    if (row >= 0 && row <= b) (*labels)[h] = PointAt(ep, pred, a, diverged, row, no_angle);
  }
  curve->assign(grid.curve_s.size(), std::nullopt);
  for (std::size_t c = 0; c < grid.curve_s.size(); ++c) {
    const int row = RowAtHorizon(ep, a, grid.curve_s[c]);
    if (row >= 0 && row <= b) (*curve)[c] = PointAt(ep, pred, a, diverged, row, no_angle);
  }
}

// Whether `ep` starts where its file's rows start (the first part of a cut recording, or the
// whole of it): an earlier model's prediction of the recording is one from there.
bool StartsItsFile(const Episode& ep) {
  return !ep.rows.empty() && ep.rows.front().source_row == ep.file_first_row;
}

// The recording's reference prediction (Episode::reference_path: a dataset manifest's or
// --reference's) as predicted states on the episode's rows (merged source rows dropped), or
// nullopt with one warning line when it cannot be compared.
std::optional<std::vector<PredictedState>> LoadShipped(const Episode& ep,
                                                       const std::string& program,
                                                       std::ostream& warnings = std::cerr) {
  const std::string* path = &ep.reference_path;
  if (path->empty() || ep.rows.empty() || !StartsItsFile(ep)) return std::nullopt;
  auto warn = [&](const std::string& why) {
    warnings << program << ": warning: " << *path << ": " << why << "; compared without it\n";
    return std::nullopt;
  };
  BaselinePrediction b;
  try {
    b = ReadBaselinePrediction(*path);
  } catch (const InputError& e) {
    std::string why = e.what();
    if (why.rfind(*path + ": ", 0) == 0) why = why.substr(path->size() + 2);
    return warn(why);
  }
  // One prediction row per source row of the recording (through its last row).
  const int first = ep.file_first_row;
  const int span = ep.file_last_row - first + 1;
  if (static_cast<int>(b.x.size()) != span)
    return warn(std::to_string(b.x.size()) + " rows, but its episode has " +
                std::to_string(span));
  std::vector<PredictedState> out(ep.rows.size());
  for (int k = 0; k < ep.size(); ++k) {
    const int i = ep.rows[k].source_row - first;
    if (!b.x[i].allFinite() || !b.v[i].allFinite() || !b.omega[i].allFinite())
      return warn("row " + std::to_string(i + 1) + " is not finite");
    out[k] = {b.x[i], b.v[i], b.omega[i], Eigen::Matrix3d::Identity()};
  }
  return out;
}

// The windowed restarts of `ep`: (start, end) rows, a start at the row nearest each multiple
// of window_s past row 0 (as RowAtHorizon(ep, 0, w * window_s) finds it) that lies in a covered
// stretch (stretch_end[row] > row), rolled out `longest` seconds or to the end of its stretch.
// The rows are found by walking forward from the previous restart, so the restarts of an
// episode cost time linear in its length; a row is restarted at most once (a window shorter than
// a row restarts at every row, never twice at one).
std::vector<std::pair<int, int>> RestartWindows(const Episode& ep,
                                                const std::vector<int>& stretch_end,
                                                double window_s, double longest) {
  std::vector<std::pair<int, int>> windows;
  const int n = ep.size();
  const int last = n - 1;
  int k = 0;        // the first row at or after the target: only moves forward
  int previous = -1;
  for (long w = 0;; ++w) {
    const double target = ep.rows[0].t_s + static_cast<double>(w) * window_s;
    while (k < n && ep.rows[k].t_s < target) ++k;
    if (k >= n) break;  // past the last row (RowAtHorizon: the last row or none, no restart)
    const int start = k > 0 && target - ep.rows[k - 1].t_s < ep.rows[k].t_s - target ? k - 1 : k;
    if (start >= last) break;
    if (start == previous) continue;
    previous = start;
    const int end_of_stretch = stretch_end[start];
    if (end_of_stretch <= start) continue;
    int end = RowAtHorizon(ep, start, longest);
    if (end < 0 || end > end_of_stretch) end = end_of_stretch;
    windows.emplace_back(start, end);
  }
  return windows;
}

void ReplayOne(const Episode& ep, const std::vector<Regime>& regimes, const Predictor& predictor,
               const Grid& grid, double window_s, bool keep, EpisodeReport* r,
               std::vector<std::vector<ErrorSample>>* curve) {
  const int n = ep.size();
  const auto stretches = CoveredStretches(regimes);
  std::vector<int> stretch_end(n, -1);
  for (const auto& [a, b] : stretches) {
    for (int k = a; k <= b; ++k) stretch_end[k] = b;
    r->rows_scored += b - a + 1;
  }
  for (int k = 0; k < n; ++k) {
    if (regimes[k] != Regime::kCovered) ++r->rows_left_out[RegimeLabel(regimes[k])];
    else if (stretch_end[k] < 0) ++r->rows_left_out[kAloneLabel];
  }
  r->regimes = regimes;

  // Open loop: once over each covered stretch; the first one gives the episode's figures.
  r->open_loop.assign(grid.labels, std::nullopt);
  r->curve_open_loop.assign(grid.curve_s.size(), std::nullopt);
  predictor.RolloutEach(ep, stretches, [&](std::size_t i, std::vector<PredictedState> pred) {
    const auto [a, b] = stretches[i];
    const int diverged = FirstDiverged(pred);
    if (diverged < static_cast<int>(pred.size())) {
      const double t = ep.rows[a + diverged].t_s;
      if (!r->diverged_at_s || t < *r->diverged_at_s) r->diverged_at_s = t;
    }
    if (i == 0) {
      StretchFigures(ep, a, b, pred, grid, false, &r->open_loop, &r->curve_open_loop);
      r->departure_row = DepartureRow(ep, a, pred);
      if (r->departure_row >= 0) r->departure_t_s = ep.rows[r->departure_row].t_s;
    }
    if (keep) r->predicted.push_back({a, diverged, std::move(pred)});
  });

  // Windowed: restarts every window_s on the episode's clock, at covered rows only, each
  // rolled out to the longest report horizon or the end of its stretch.
  const double longest = grid.horizons_s.empty() ? 0.0 : grid.horizons_s.back();
  r->windowed.assign(grid.horizons_s.size(), {});
  r->curve_windowed.assign(grid.curve_s.size(), {});
  const std::vector<std::pair<int, int>> windows =
      RestartWindows(ep, stretch_end, window_s, longest);
  predictor.RolloutEach(ep, windows, [&](std::size_t i, std::vector<PredictedState> pred) {
    const auto [start, end] = windows[i];
    const int diverged = FirstDiverged(pred);
    for (std::size_t h = 0; h < grid.horizons_s.size(); ++h) {
      const int row = RowAtHorizon(ep, start, grid.horizons_s[h]);
      if (row >= 0 && row <= end)
        r->windowed[h].push_back(PointAt(ep, pred, start, diverged, row, false));
    }
    for (std::size_t c = 0; c < grid.curve_s.size(); ++c) {
      const int row = RowAtHorizon(ep, start, grid.curve_s[c]);
      if (row < 0 || row > end) continue;
      const ErrorPoint p = PointAt(ep, pred, start, diverged, row, false);
      r->curve_windowed[c].push_back(p);
      if (!p.diverged) (*curve)[c].push_back(p.error);
    }
  });
}

bool InSplit(const EpisodeReport& e, const std::string& split) {
  return split == "all" || e.split == split;
}

// Accumulates figures of one quantity: numbers, and how many diverged.
struct Collector {
  std::vector<double> values;
  int diverged = 0;
  void Add(const ErrorPoint& p, const Quantity& q) {
    if (p.diverged) {
      ++diverged;
      return;
    }
    const double v = p.error.*q.member;
    if (std::isfinite(v)) values.push_back(v);
  }
  void Add(const std::optional<ErrorPoint>& p, const Quantity& q) {
    if (p) Add(*p, q);
  }
  Stats Done() {
    Stats s = Summarize(std::move(values));
    s.diverged = diverged;
    return s;
  }
};

nlohmann::json StatsRecord(const Stats& s, bool with_max) {
  nlohmann::json j{{"n", s.n}, {"diverged", s.diverged}};
  j["median"] = s.n > 0 ? nlohmann::json(s.median) : nullptr;
  j["p90"] = s.n > 0 ? nlohmann::json(s.p90) : nullptr;
  if (with_max) j["max"] = s.n > 0 ? nlohmann::json(s.max) : nullptr;
  return j;
}

std::string StatsCell(const Stats& s, double Stats::*member) {
  return s.n > 0 ? Fmt(s.*member) : "n/a";
}

std::string ReferenceLabel(const std::string& kind) {
  if (kind == "shipped_predictions") return "earlier model: shipped prediction_*.csv";
  if (kind == "seed_coefficients") return "earlier model: seed notes' coefficients";
  return "no earlier model (this run uses the seed notes' coefficients)";
}

// Path of `p` relative to `root` when it lies under it, else its normalized absolute path.
std::string RelativeKey(const std::string& p, const std::string& root) {
  std::error_code ec;
  const fs::path abs = fs::weakly_canonical(fs::absolute(p), ec);
  if (!root.empty()) {
    const fs::path r = fs::weakly_canonical(fs::absolute(root), ec);
    const fs::path rel = abs.lexically_relative(r);
    if (!rel.empty() && rel.native().rfind("..", 0) != 0) return rel.generic_string();
  }
  return abs.generic_string();
}

// Whether `list` names the episode `full` (its path, "#name" for a segment) or `key` (the same
// relative to the data root); with `file_only`, whether it names any episode of that file (the
// entries' "#name" dropped): a part of a file the fit read whole, which the reader now cuts.
bool Listed(const nlohmann::json& list, const std::string& full, const std::string& key,
            bool file_only = false) {
  if (!list.is_array()) return false;
  for (const nlohmann::json& entry : list) {
    if (!entry.is_string()) continue;
    std::string s = entry.get<std::string>();
    if (file_only) s = s.substr(0, s.find('#'));
    if (s == full || s == key) return true;
    if (s.size() > key.size() && s.compare(s.size() - key.size(), key.size(), key) == 0 &&
        s[s.size() - key.size() - 1] == '/')
      return true;
  }
  return false;
}

// "1104 on the ground, 90 touching a surface"
std::string LeftOutText(const std::map<std::string, int>& counts) {
  std::string s;
  for (const auto& [label, n] : counts)
    if (n > 0) s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + label;
  return s;
}

// One line per check of ModelInfo::checks: "check <name>: <agree> of <rows> rows agree
// (<pct>%); <n> <kind>, ...", or "check <name>: <rows> rows; <n> <kind>, ..." for a check that
// only counts rows by kind (no "agree" entry); "" when there is none.
std::string ChecksText(const std::map<std::string, int>& checks) {
  std::map<std::string, std::map<std::string, int>> by_check;
  for (const auto& [key, n] : checks) {
    const std::size_t dot = key.rfind('.');
    by_check[key.substr(0, dot)][dot == std::string::npos ? "" : key.substr(dot + 1)] = n;
  }
  std::string out;
  for (auto& [name, counts] : by_check) {
    const bool compares = counts.count("agree") > 0;  // else a count of rows by kind
    const int rows = counts["rows"], agree = counts["agree"];
    char buf[160];
    if (compares)
      std::snprintf(buf, sizeof(buf), "check %s: %d of %d rows agree (%.2f%%)", name.c_str(),
                    agree, rows, rows > 0 ? 100.0 * agree / rows : 0.0);
    else
      std::snprintf(buf, sizeof(buf), "check %s: %d rows", name.c_str(), rows);
    out += buf;
    for (const auto& [kind, n] : counts)
      if (kind != "rows" && kind != "agree") out += "; " + std::to_string(n) + " " + kind;
    out += "\n";
  }
  return out;
}

// Every file written by replay goes through here (one folder, one name, its contents).
}  // namespace

bool ShippedPredictionUsable(const Episode& ep, const std::string& program,
                             std::ostream& warnings) {
  return LoadShipped(ep, program, warnings).has_value();
}

int DepartureRow(const Episode& ep, int first, const std::vector<PredictedState>& pred) {
  int run = 0;
  const int n = static_cast<int>(pred.size());
  for (int i = 0; i < n; ++i) {
    const bool off =
        IsDiverged(pred[i]) || (pred[i].v - ep.rows[first + i].v).norm() > kDepartureDvUuS;
    run = off ? run + 1 : 0;
    if (run == kDepartureRows || (off && i == n - 1)) return first + i - run + 1;
  }
  return -1;
}

bool IsDiverged(const PredictedState& s) {
  if (!s.x.allFinite() || !s.v.allFinite() || !s.omega.allFinite() || !s.theta.allFinite())
    return true;
  return s.x.cwiseAbs().maxCoeff() > kDivergedPositionUu || s.v.norm() > kDivergedSpeedUuS ||
         s.omega.norm() > kDivergedOmegaRadS;
}

bool ReplayOptions::Check(std::string* why) const {
  if (!(window_s > 0.0)) return *why = "--window must be positive", false;
  if (!(window_s >= kMinWindowS))
    return *why = "--window must be at least 1/120 s (" + MessageNumber(kMinWindowS) +
                  " s, a physics tick), got " + MessageNumber(window_s),
           false;
  if (!(curve_step_s > 0.0)) return *why = "curve step must be positive", false;
  if (horizons_s.size() > static_cast<std::size_t>(kMaxHorizons))
    return *why = "--horizons: at most " + std::to_string(kMaxHorizons) + " horizons, got " +
                  std::to_string(horizons_s.size()),
           false;
  for (double h : horizons_s)
    if (!(h > 0.0 && h <= kMaxHorizonS))
      return *why = "--horizons must be in (0, " + HorizonLabel(kMaxHorizonS) + "], got " +
                    HorizonLabel(h),
             false;
  if (std::adjacent_find(horizons_s.begin(), horizons_s.end(), std::greater_equal<double>()) !=
      horizons_s.end())
    return *why = "--horizons must be increasing (each horizon once)", false;
  return true;
}

std::string SplitOf(const Episode& ep, const nlohmann::json& provenance,
                    const std::string& data_root) {
  if (!provenance.is_object()) return "unseen";
  // A fit's provenance lists its episodes' fingerprints (content, whatever the file is called
  // or where it lies); an older one only their paths.
  const std::string fingerprint = FingerprintText(ep.fingerprint);
  if (provenance.contains("heldout_fingerprints") || provenance.contains("train_fingerprints")) {
    auto in = [&](const char* key) {
      if (!provenance.contains(key) || !provenance[key].is_array()) return false;
      for (const nlohmann::json& f : provenance[key])
        if (f.is_string() && f.get<std::string>() == fingerprint) return true;
      return false;
    };
    if (in("heldout_fingerprints")) return "heldout";
    if (in("train_fingerprints")) return "train";
    return "unseen";
  }
  const std::string suffix = ep.segment >= 0 ? "#" + ep.name : "";
  const std::string full = ep.path + suffix;
  const std::string key = RelativeKey(ep.path, data_root) + suffix;
  if (provenance.contains("heldout_episodes") && Listed(provenance["heldout_episodes"], full, key))
    return "heldout";
  if (provenance.contains("train_episodes") && Listed(provenance["train_episodes"], full, key))
    return "train";
  // A segment the provenance does not name, of a file it does (cut since at a gap of dropped
  // frames): the side of that file.
  if (ep.segment >= 0) {
    const std::string file_key = RelativeKey(ep.path, data_root);
    if (provenance.contains("heldout_episodes") &&
        Listed(provenance["heldout_episodes"], ep.path, file_key, true))
      return "heldout";
    if (provenance.contains("train_episodes") &&
        Listed(provenance["train_episodes"], ep.path, file_key, true))
      return "train";
  }
  return "unseen";
}

ReplayReport ReplayEpisodes(const std::vector<Episode>& episodes, const Predictor& predictor,
                            const ModelInfo& model, const ReplayOptions& given,
                            const ReplayExtras& extras) {
  ReplayOptions options = given;
  if (options.horizons_s.empty()) options.horizons_s = model.horizons_s;
  ReplayReport report;
  report.model = model.name;
  report.has_orientation = model.has_orientation;
  report.horizons_s = options.horizons_s;
  for (double h : options.horizons_s) report.horizon_labels.push_back(HorizonLabel(h));
  report.horizon_labels.push_back("last");
  report.window_s = options.window_s;
  report.curve_step_s = options.curve_step_s;
  report.coefficients_source = !extras.coefficients_source.empty() ? extras.coefficients_source
                                : options.coeffs_path.empty()
                                    ? "coefficients given by the caller"
                                    : DescribeCoefficients(model.name, options.coeffs_path);
  RLFIT_CHECK(extras.regimes.empty() || extras.regimes.size() == episodes.size(),
              "one regime vector per episode");

  Grid grid;
  grid.horizons_s = options.horizons_s;
  grid.labels = static_cast<int>(options.horizons_s.size()) + 1;
  const double longest = options.horizons_s.empty() ? 0.0 : options.horizons_s.back();
  for (int k = 1; k * options.curve_step_s <= longest + 1e-9; ++k)
    grid.curve_s.push_back(k * options.curve_step_s);
  report.curve_horizons_s = grid.curve_s;
  report.curve.resize(grid.curve_s.size());

  std::vector<std::vector<Regime>> regimes = extras.regimes;
  if (regimes.empty())
    for (const Episode& ep : episodes)
      regimes.push_back(ClassifyRows(model.name, ep, options.data_root));

  // The earlier model: shipped predictions when every scored episode has a usable one
  // (predicted from row 0, so its first covered stretch must start there). Each is read
  // again when its episode is replayed, so that they are not all held at once.
  if (!extras.reference_kind.empty()) {
    report.reference_kind = extras.reference_kind;
  } else {
    bool all_shipped = true;
    int scored = 0;
    for (std::size_t i = 0; i < episodes.size(); ++i) {
      const auto stretches = CoveredStretches(regimes[i]);
      const bool usable = LoadShipped(episodes[i], options.program).has_value();
      if (stretches.empty() || !StartsItsFile(episodes[i])) continue;
      ++scored;
      if (!usable || stretches.front().first != 0) all_shipped = false;
    }
    if (scored > 0 && all_shipped) report.reference_kind = "shipped_predictions";
    else if (extras.reference != nullptr) report.reference_kind = "seed_coefficients";
    else report.reference_kind = "none";
  }
  report.reference_label = ReferenceLabel(report.reference_kind);

  Progress progress("replay " + model.name, static_cast<int>(episodes.size()), options.quiet);
  for (std::size_t i = 0; i < episodes.size(); ++i) {
    const Episode& ep = episodes[i];
    RLFIT_CHECK(static_cast<int>(regimes[i].size()) == ep.size(), "one regime per row");
    // A file's notes, once (its episodes follow one another).
    if (i == 0 || episodes[i - 1].path != ep.path)
      for (const std::string& note : ep.notes) report.notes.push_back({ep.path, note});
    EpisodeReport r;
    r.name = ep.name;
    r.path = ep.path;
    r.split = SplitOf(ep, extras.provenance, options.data_root);
    r.rows = ep.size();
    r.duration_s = ep.duration_s();
    ReplayOne(ep, regimes[i], predictor, grid, options.window_s, options.keep_predictions, &r,
              &report.curve);
    if (r.departure_row >= 0 && model.situation)
      r.departure_situation = model.situation(ep, r.departure_row, options.data_root);
    if (model.checks)
      r.checks = model.checks(ep, regimes[i], predictor, options.window_s, options.data_root);
    if (model.row_labels && options.keep_predictions)
      r.covered_labels = model.row_labels(ep, options.data_root);

    const auto stretches = CoveredStretches(regimes[i]);
    // Later parts of a cut recording have no shipped prediction from their own start.
    const bool comparable =
        report.reference_kind != "shipped_predictions" || StartsItsFile(ep);
    if (!stretches.empty() && report.reference_kind != "none" && comparable) {
      const auto [a, b] = stretches.front();
      if (report.reference_kind == "shipped_predictions") {
        const std::optional<std::vector<PredictedState>> shipped =
            LoadShipped(ep, options.program);
        RLFIT_CHECK(shipped.has_value(), "a shipped prediction for every scored episode");
        std::vector<PredictedState> pred(shipped->begin() + a, shipped->begin() + b + 1);
        StretchFigures(ep, a, b, pred, grid, true, &r.reference, &r.curve_reference);
        if (options.keep_predictions)
          for (const PredictedState& s : *shipped) r.reference_x.push_back(s.x);
      } else {
        StretchFigures(ep, a, b, extras.reference->Rollout(ep, a, b), grid, false, &r.reference,
                       &r.curve_reference);
      }
      r.has_reference = true;
    }
    report.episodes.push_back(std::move(r));
    progress.Tick();
  }
  return report;
}

std::map<std::string, int> ReplayReport::Checks(const std::string& split) const {
  std::map<std::string, int> sum;
  for (const EpisodeReport& e : episodes)
    if (InSplit(e, split))
      for (const auto& [key, n] : e.checks) sum[key] += n;
  return sum;
}

const PredictedState* EpisodeReport::PredictedAt(int row) const {
  auto it = std::upper_bound(predicted.begin(), predicted.end(), row,
                             [](int k, const PredictedStretch& p) { return k < p.first; });
  if (it == predicted.begin()) return nullptr;
  --it;
  return row - it->first < it->valid ? &it->states[row - it->first] : nullptr;
}

int ReplayReport::EpisodesIn(const std::string& split) const {
  int n = 0;
  for (const EpisodeReport& e : episodes) n += InSplit(e, split) ? 1 : 0;
  return n;
}

int ReplayReport::EpisodesWithReference() const {
  int n = 0;
  for (const EpisodeReport& e : episodes) n += e.has_reference ? 1 : 0;
  return n;
}

int ReplayReport::EpisodesDiverged() const {
  int n = 0;
  for (const EpisodeReport& e : episodes) n += e.diverged_at_s ? 1 : 0;
  return n;
}

Stats ReplayReport::OpenLoop(const Quantity& q, int horizon, const std::string& split) const {
  Collector c;
  for (const EpisodeReport& e : episodes)
    if (InSplit(e, split) && horizon < static_cast<int>(e.open_loop.size()))
      c.Add(e.open_loop[horizon], q);
  return c.Done();
}

Stats ReplayReport::OpenLoopWithReference(const Quantity& q, int horizon,
                                          const std::string& split) const {
  Collector c;
  for (const EpisodeReport& e : episodes)
    if (InSplit(e, split) && e.has_reference) c.Add(e.open_loop[horizon], q);
  return c.Done();
}

Stats ReplayReport::Windowed(const Quantity& q, int horizon, const std::string& split) const {
  Collector c;
  if (horizon < static_cast<int>(horizons_s.size()))
    for (const EpisodeReport& e : episodes)
      if (InSplit(e, split))
        for (const ErrorPoint& p : e.windowed[horizon]) c.Add(p, q);
  return c.Done();
}

Stats ReplayReport::Reference(const Quantity& q, int horizon, const std::string& split) const {
  Collector c;
  for (const EpisodeReport& e : episodes)
    if (InSplit(e, split) && e.has_reference) c.Add(e.reference[horizon], q);
  return c.Done();
}

nlohmann::json ReplayReport::ToJson() const {
  const auto& quantities = Quantities(has_orientation);
  nlohmann::json j;
  j["schema_version"] = kReplaySchemaVersion;
  j["tool"] = "rlsim replay";
  j["model"] = model;
  j["units"] = {{"dx", "uu"},        {"dv", "uu/s"},    {"domega", "rad/s"},
                {"angle_deg", "deg"}, {"horizon_s", "s"}, {"duration_s", "s"}};
  j["quantities"] = nlohmann::json::array();
  for (const Quantity& q : quantities) j["quantities"].push_back(q.key);
  j["horizons_s"] = horizons_s;
  j["window_s"] = window_s;
  j["curve_step_s"] = curve_step_s;
  j["coefficients_source"] = coefficients_source;
  j["reference"] = {{"kind", reference_kind}, {"label", reference_label}};
  j["skipped"] = nlohmann::json::array();
  for (const SkippedInput& s : skipped) j["skipped"].push_back({{"path", s.path}, {"reason", s.reason}});
  // Files --keep-going passed over, with the reason each could not be read.
  j["unreadable"] = nlohmann::json::array();
  for (const SkippedInput& s : unreadable)
    j["unreadable"].push_back({{"path", s.path}, {"reason", s.reason}});
  j["notes"] = nlohmann::json::array();
  for (const SkippedInput& s : notes) j["notes"].push_back({{"path", s.path}, {"note", s.reason}});

  if (!Checks().empty()) j["checks"] = Checks();

  const int labels = static_cast<int>(horizon_labels.size());
  auto horizon_json = [&](int h) {
    return h < static_cast<int>(horizons_s.size()) ? nlohmann::json(horizons_s[h]) : nullptr;
  };
  nlohmann::json eps = nlohmann::json::array();
  nlohmann::json errors = nlohmann::json::array();
  // An episode's records name it by its output name: its own name, unless another folder holds
  // one of the same name (a record named by the name alone could not be told from the other's).
  const std::vector<std::string> outputs = ReplayOutputNames(episodes);
  auto record = [&](const nlohmann::json& episode, const std::string& split, const char* mode,
                    const Quantity& q, int h, const Stats& s) {
    nlohmann::json rec{{"episode", episode}, {"split", split}, {"mode", mode},
                       {"quantity", q.key}, {"horizon_s", horizon_json(h)}};
    rec.update(StatsRecord(s, true));
    errors.push_back(rec);
  };
  auto one = [](const std::optional<ErrorPoint>& p, const Quantity& q) {
    Collector c;
    c.Add(p, q);
    return c.Done();
  };
  for (std::size_t i = 0; i < episodes.size(); ++i) {
    const EpisodeReport& e = episodes[i];
    const std::string& output = outputs[i];
    nlohmann::json left_out = nlohmann::json::object();
    for (const auto& [label, n] : e.rows_left_out) left_out[label] = n;
    eps.push_back({{"name", e.name}, {"path", e.path}, {"output", output}, {"split", e.split},
                   {"rows", e.rows}, {"rows_scored", e.rows_scored}, {"rows_left_out", left_out},
                   {"duration_s", e.duration_s},
                   {"diverged_at_s", e.diverged_at_s ? nlohmann::json(*e.diverged_at_s) : nullptr},
                   {"has_reference", e.has_reference},
                   {"departure", e.departure_row < 0
                                     ? nlohmann::json(nullptr)
                                     : nlohmann::json{{"row", e.departure_row},
                                                      {"t_s", e.departure_t_s},
                                                      {"situation", e.departure_situation}}}});
    if (!e.checks.empty()) eps.back()["checks"] = e.checks;
    for (const Quantity& q : quantities)
      for (int h = 0; h < labels; ++h) {
        record(output, e.split, "open_loop", q, h, one(e.open_loop[h], q));
        if (h < static_cast<int>(horizons_s.size())) {
          Collector c;
          for (const ErrorPoint& p : e.windowed[h]) c.Add(p, q);
          record(output, e.split, "windowed", q, h, c.Done());
        }
        if (e.has_reference) record(output, e.split, "reference", q, h, one(e.reference[h], q));
      }
  }
  j["episodes"] = eps;

  std::vector<std::string> splits = {"all"};
  for (const char* s : kSplits)
    if (EpisodesIn(s) > 0) splits.push_back(s);
  nlohmann::json curve_json = nlohmann::json::array();
  for (const std::string& split : splits) {
    for (const Quantity& q : quantities)
      for (int h = 0; h < labels; ++h) {
        record(nullptr, split, "open_loop", q, h, OpenLoop(q, h, split));
        if (h < static_cast<int>(horizons_s.size()))
          record(nullptr, split, "windowed", q, h, Windowed(q, h, split));
        if (reference_kind != "none") record(nullptr, split, "reference", q, h, Reference(q, h, split));
      }
    for (const char* mode : {"windowed", "open_loop", "reference"}) {
      if (std::string(mode) == "reference" && reference_kind == "none") continue;
      for (const Quantity& q : quantities)
        for (std::size_t c = 0; c < curve_horizons_s.size(); ++c) {
          Collector col;
          for (const EpisodeReport& e : episodes) {
            if (!InSplit(e, split)) continue;
            if (std::string(mode) == "windowed") {
              for (const ErrorPoint& p : e.curve_windowed[c]) col.Add(p, q);
            } else if (std::string(mode) == "open_loop") {
              col.Add(e.curve_open_loop[c], q);
            } else if (e.has_reference) {
              col.Add(e.curve_reference[c], q);
            }
          }
          nlohmann::json rec{{"split", split}, {"mode", mode}, {"quantity", q.key},
                             {"horizon_s", curve_horizons_s[c]}};
          rec.update(StatsRecord(col.Done(), false));
          curve_json.push_back(rec);
        }
    }
  }
  j["errors"] = errors;
  j["curve"] = curve_json;
  return j;
}

nlohmann::json AggregateJson(const ReplayReport& report) {
  nlohmann::json agg;
  for (const Quantity& q : Quantities(report.has_orientation))
    for (std::size_t h = 0; h < report.horizon_labels.size(); ++h) {
      const std::string& label = report.horizon_labels[h];
      agg["open_loop"][q.key][label] = StatsRecord(report.OpenLoop(q, h), true);
      if (h < report.horizons_s.size())
        agg["windowed"][q.key][label] = StatsRecord(report.Windowed(q, h), true);
    }
  return agg;
}

std::string ReplayReport::Table() const {
  const auto& quantities = Quantities(has_orientation);
  const std::vector<std::string> outputs = ReplayOutputNames(episodes);  // unique, as the JSON's
  const int numeric = static_cast<int>(horizons_s.size());
  std::ostringstream out;
  char line[512];
  auto header = [&](const std::string& title) {
    out << title << "\n";
    std::snprintf(line, sizeof(line), "  %-12s %-6s  %8s  %8s  %8s  %5s\n", "quantity",
                  "horizon", "median", "p90", "max", "n");
    out << line;
  };
  auto row = [&](const Quantity& q, const std::string& label, const Stats& s) {
    std::snprintf(line, sizeof(line), "  %-12s %-6s  %8s  %8s  %8s  %5d", q.label, label.c_str(),
                  StatsCell(s, &Stats::median).c_str(), StatsCell(s, &Stats::p90).c_str(),
                  StatsCell(s, &Stats::max).c_str(), s.n);
    out << line;
    if (s.diverged > 0) out << "  (+" << s.diverged << " diverged)";
    out << "\n";
  };

  int rows = 0, scored = 0;
  std::map<std::string, int> left_out;
  for (const EpisodeReport& e : episodes) {
    rows += e.rows;
    scored += e.rows_scored;
    for (const auto& [label, n] : e.rows_left_out) left_out[label] += n;
  }
  out << "model " << model << ": " << episodes.size() << " episodes (";
  bool first = true;
  for (const char* s : kSplits) {
    if (EpisodesIn(s) == 0) continue;
    out << (first ? "" : ", ") << EpisodesIn(s) << " " << (std::string(s) == "heldout" ? "held-out" : s);
    first = false;
  }
  out << "); coefficients: " << coefficients_source << "\n";
  out << "rows scored: " << scored << " of " << rows;
  if (!left_out.empty()) out << "; left out: " << LeftOutText(left_out);
  out << "\n";
  for (const SkippedInput& s : skipped) out << "skipped " << s.path << ": " << s.reason << "\n";
  for (const SkippedInput& s : unreadable)
    out << "unreadable " << s.path << ": " << s.reason << "\n";
  for (const SkippedInput& s : notes) out << "note " << s.path << ": " << s.reason << "\n";
  out << "diverged (open loop): " << EpisodesDiverged() << " of " << episodes.size()
      << " episodes\n";
  out << "reference: " << reference_label << "\n";
  out << ChecksText(Checks());

  for (const char* split : kSplits) {
    const int n = EpisodesIn(split);
    if (n == 0) continue;
    const std::string s = split;
    const std::string title = s == "heldout" ? "held-out episodes (not fitted on)"
                              : s == "unseen" ? "unseen episodes (not in the fit's provenance)"
                                              : "training episodes (fitted on: not a test)";
    out << "\n== " << title << ": " << n << " ==\n";
    header("open loop from the first covered row (per-episode errors; median, p90, max over "
           "episodes)");
    for (const Quantity& q : quantities)
      for (std::size_t h = 0; h < horizon_labels.size(); ++h)
        row(q, horizon_labels[h], OpenLoop(q, h, s));
    int restarts = 0;
    for (const EpisodeReport& e : episodes)
      if (InSplit(e, s) && numeric > 0) restarts += static_cast<int>(e.windowed[0].size());
    std::snprintf(line, sizeof(line),
                  "windowed: restart from the recorded state every %g s at covered rows (%d "
                  "restarts reach %s)",
                  window_s, restarts, numeric > 0 ? horizon_labels[0].c_str() : "-");
    header(line);
    for (const Quantity& q : quantities)
      for (int h = 0; h < numeric; ++h) row(q, horizon_labels[h], Windowed(q, h, s));
    if (reference_kind != "none") {
      out << "against the " << reference_label << " (open loop, medians)\n";
      std::snprintf(line, sizeof(line), "  %-12s %-6s  %10s  %10s  %7s\n", "quantity", "horizon",
                    "this model", "earlier", "ratio");
      out << line;
      for (const Quantity& q : quantities) {
        if (reference_kind == "shipped_predictions" && q.member == &ErrorSample::angle_deg)
          continue;  // the prediction files carry no orientation
        for (std::size_t h = 0; h < horizon_labels.size(); ++h) {
          const Stats m = OpenLoopWithReference(q, h, s), b = Reference(q, h, s);
          const std::string ratio =
              m.n > 0 && b.n > 0 && b.median > 0 ? Fmt(m.median / b.median) : "n/a";
          std::snprintf(line, sizeof(line), "  %-12s %-6s  %10s  %10s  %7s\n", q.label,
                        horizon_labels[h].c_str(), StatsCell(m, &Stats::median).c_str(),
                        StatsCell(b, &Stats::median).c_str(), ratio.c_str());
          out << line;
        }
      }
    }
  }

  // The worst episodes by open-loop |dx| at the last row, with where the prediction departs.
  std::vector<const EpisodeReport*> ranked;
  const int last_label = static_cast<int>(horizon_labels.size()) - 1;
  for (const EpisodeReport& e : episodes)
    if (last_label >= 0 && last_label < static_cast<int>(e.open_loop.size()) &&
        e.open_loop[last_label])
      ranked.push_back(&e);
  auto badness = [&](const EpisodeReport* e) {
    const ErrorPoint& p = *e->open_loop[last_label];
    return p.diverged ? std::numeric_limits<double>::infinity() : p.error.dx;
  };
  std::stable_sort(ranked.begin(), ranked.end(), [&](const EpisodeReport* a,
                                                     const EpisodeReport* b) {
    return badness(a) > badness(b);
  });
  if (ranked.size() > static_cast<std::size_t>(kWorstListed)) ranked.resize(kWorstListed);
  if (!ranked.empty()) {
    std::snprintf(line, sizeof(line),
                  "\nworst episodes (open loop |dx| at the last row; departs: first row of %d "
                  "with |dv| > %g uu/s)\n",
                  kDepartureRows, kDepartureDvUuS);
    out << line;
    std::snprintf(line, sizeof(line), "  %-30s %-8s %10s %10s  %s\n", "episode", "split",
                  "|dx| last", "departs s", "situation there");
    out << line;
    for (const EpisodeReport* e : ranked) {
      const ErrorPoint& p = *e->open_loop[last_label];
      const std::string departs = e->departure_row < 0 ? "never" : Fmt(e->departure_t_s);
      std::snprintf(line, sizeof(line), "  %-30s %-8s %10s %10s  %s\n",
                    outputs[static_cast<std::size_t>(e - episodes.data())].c_str(),
                    e->split.c_str(), p.diverged ? "diverged" : Fmt(p.error.dx).c_str(),
                    departs.c_str(),
                    e->departure_situation.empty() ? "-" : e->departure_situation.c_str());
      out << line;
    }
  }

  out << "\nper episode, open loop from the first covered row (|dx| uu / |dw| rad/s"
      << (has_orientation ? " / angle deg" : "") << ")\n";
  std::snprintf(line, sizeof(line), "  %-30s %-8s", "episode", "split");
  out << line;
  for (const std::string& l : horizon_labels) {
    std::snprintf(line, sizeof(line), " %22s", l.c_str());
    out << line;
  }
  out << "\n";
  for (std::size_t i = 0; i < episodes.size(); ++i) {
    const EpisodeReport& e = episodes[i];
    std::snprintf(line, sizeof(line), "  %-30s %-8s", outputs[i].c_str(), e.split.c_str());
    out << line;
    for (const auto& p : e.open_loop) {
      std::string cell = "n/a";
      if (p && p->diverged) {
        cell = "diverged";
      } else if (p) {
        cell = Fmt(p->error.dx) + " / " + Fmt(p->error.domega);
        if (has_orientation) cell += " / " + Fmt(p->error.angle_deg);
      }
      std::snprintf(line, sizeof(line), " %22s", cell.c_str());
      out << line;
    }
    if (e.diverged_at_s) {
      std::snprintf(line, sizeof(line), "  diverged at %.2f s", *e.diverged_at_s);
      out << line;
    }
    out << "\n";
  }
  bool any_left_out = false;
  for (const EpisodeReport& e : episodes) {
    if (e.rows_left_out.empty()) continue;
    if (!any_left_out) out << "rows left out per episode (not covered by the " << model << " model)\n";
    any_left_out = true;
    std::snprintf(line, sizeof(line), "  %-30s %5d of %5d: ", e.name.c_str(),
                  e.rows - e.rows_scored, e.rows);
    out << line << LeftOutText(e.rows_left_out) << "\n";
  }
  return out.str();
}

std::vector<Episode> LoadEpisodesFor(const ModelInfo& model, const std::vector<std::string>& paths,
                                     const std::string& data_root,
                                     std::vector<SkippedInput>* skipped, const ReadOptions& read,
                                     std::vector<SkippedInput>* unreadable) {
  std::vector<Episode> episodes = ReadRecordingFiles(
      RecordingFilesFor(model, paths, data_root, skipped, unreadable), read, 0, unreadable);
  if (unreadable != nullptr) SetAsideOtherKinds(model, &episodes, unreadable);
  CheckEpisodeKinds(model, episodes);
  return episodes;
}

void SetAsideOtherKinds(const ModelInfo& model, std::vector<Episode>* episodes,
                        std::vector<SkippedInput>* unreadable) {
  std::vector<Episode> kept;
  std::string last_refused;
  for (Episode& ep : *episodes) {
    if (ep.kind == model.kind) {
      kept.push_back(std::move(ep));
    } else if (ep.path != last_refused) {
      unreadable->push_back({ep.path, KindMismatch(model, ep)});
      last_refused = ep.path;
    }
  }
  *episodes = std::move(kept);
}

std::string KindMismatch(const ModelInfo& model, const Episode& ep) {
  return std::string("is a ") + (ep.kind == EpisodeKind::kBall ? "ball" : "car") +
         " recording; model " + model.name + " replays " +
         (model.kind == EpisodeKind::kBall ? "ball" : "car") + " recordings";
}

void CheckEpisodeKinds(const ModelInfo& model, const std::vector<Episode>& episodes) {
  for (const Episode& ep : episodes)
    if (ep.kind != model.kind) throw InputError(ep.path, 0, 0, KindMismatch(model, ep));
}

std::vector<std::string> RecordingFilesFor(const ModelInfo& model,
                                           const std::vector<std::string>& paths,
                                           const std::string& data_root,
                                           std::vector<SkippedInput>* skipped,
                                           std::vector<SkippedInput>* unreadable) {
  std::vector<std::string> resolved;
  if (paths.empty()) {
    if (data_root.empty())
      throw InputError("(no data)", 0, 0,
                       "no recordings given and " + MissingDataRootMessage());
    resolved = DefaultRecordings(model.name, data_root);
  } else {
    for (const std::string& p : paths) resolved.push_back(ResolveUnderRoot(p, data_root));
  }
  if (skipped != nullptr)
    for (const std::string& p : resolved) {
      std::error_code ec;
      if (!fs::is_directory(p, ec)) continue;
      std::vector<std::string> subs;
      for (fs::directory_iterator it(p, ec); !ec && it != fs::directory_iterator();
           it.increment(ec))
        if (it->is_directory(ec)) subs.push_back(it->path().string());
      std::sort(subs.begin(), subs.end());
      for (const std::string& s : subs)
        skipped->push_back({s, "sub-folder: not searched (name it to replay it)"});
    }
  return ExpandRecordingPaths(resolved, skipped, unreadable);
}

std::vector<std::string> ReplayOutputNames(const std::vector<EpisodeReport>& episodes) {
  std::map<std::string, int> count;
  for (const EpisodeReport& e : episodes) ++count[e.name];
  std::set<std::string> used = {"replay_summary.json", "summary.txt", "index.html", "plots",
                                ".rlfit-files"};
  std::vector<std::string> names;
  for (const EpisodeReport& e : episodes) {
    const std::string name =
        count[e.name] == 1 ? e.name
                           : fs::path(e.path).parent_path().filename().string() + "__" + e.name;
    std::string unique = name;
    for (int n = 2; used.count(unique) != 0; ++n) unique = std::to_string(n) + "__" + name;
    used.insert(unique);
    names.push_back(unique);
  }
  return names;
}

std::string TrajectoryCsv(const Episode& ep, const EpisodeReport& r, bool orientation) {
  std::string out =
      "source_row,t_s,covered,regime,x,y,z,vx,vy,vz,wx,wy,wz,rec_x,rec_y,rec_z,rec_vx,"
      "rec_vy,rec_vz,rec_wx,rec_wy,rec_wz";
  if (orientation) out += ",pitch,yaw,roll,rec_pitch,rec_yaw,rec_roll,angle_err_deg";
  const bool with_ref = !r.reference_x.empty();
  if (with_ref) out += ",ref_x,ref_y,ref_z";
  out += "\n";
  // Shortest text that reads back to the same double (number_text.h): the file holds the
  // prediction exactly.
  auto num = [&](double v) { AppendShortest(&out, v); };
  auto vec = [&](const Eigen::Vector3d& v) {
    for (int i = 0; i < 3; ++i) {
      out += ',';
      num(v(i));
    }
  };
  auto empty = [&](int n) { out.append(n, ','); };
  std::size_t merged = 0;
  const auto& extra = ep.merged_source_rows;
  for (int k = 0; k < ep.size(); ++k) {
    const Sample& s = ep.rows[k];
    const int next_source =
        k + 1 < ep.size() ? ep.rows[k + 1].source_row : std::numeric_limits<int>::max();
    // This row, then the source rows merged into it (exact repeats of it).
    std::vector<int> sources = {s.source_row};
    while (merged < extra.size() && extra[merged] < next_source) {
      if (extra[merged] > s.source_row) sources.push_back(extra[merged]);
      ++merged;
    }
    const PredictedState* p = r.PredictedAt(k);
    const Regime regime = r.regimes.empty() ? Regime::kCovered : r.regimes[k];
    // A label holding a comma ("on a wall, curve or ramp") is quoted (RFC 4180).
    const std::string label = regime == Regime::kCovered && !r.covered_labels.empty()
                                  ? r.covered_labels[k]
                                  : std::string(RegimeLabel(regime));
    const bool quote = label.find(',') != std::string::npos;
    for (int source : sources) {
      out += std::to_string(source);
      out += ',';
      num(s.t_s);
      out += regime == Regime::kCovered ? ",1," : ",0,";
      if (quote) out += '"';
      out += label;
      if (quote) out += '"';
      if (p) {
        vec(p->x);
        vec(p->v);
        vec(p->omega);
      } else {
        empty(9);
      }
      vec(s.x);
      vec(s.v);
      vec(s.omega);
      if (orientation) {
        if (p) vec(MatrixToEuler(p->theta));
        else empty(3);
        vec(MatrixToEuler(s.theta));
        if (p) {
          out += ',';
          num(CompareState(*p, s).angle_deg);
        } else {
          empty(1);
        }
      }
      if (with_ref) vec(r.reference_x[k]);
      out += '\n';
    }
  }
  return out;
}

void WriteReplayOutputs(const ReplayReport& report, const std::vector<Episode>& episodes,
                        const CoeffFile& coeffs, const ReplayOptions& options) {
  StagedDir dir(options.out_dir, options.force);  // replaces out_dir as a whole at the end
  RLFIT_CHECK(episodes.size() == report.episodes.size(), "one episode per report");
  const std::vector<std::string> names = ReplayOutputNames(report.episodes);
  for (std::size_t i = 0; i < names.size(); ++i)
    dir.WriteFile(names[i], TrajectoryCsv(episodes[i], report.episodes[i], report.has_orientation));
  WriteReplaySummaries(report, coeffs, options, &dir);
  dir.Commit();
}

void WriteReplaySummaries(const ReplayReport& report, const CoeffFile& coeffs,
                          const ReplayOptions& options, StagedDir* staged) {
  StagedDir& dir = *staged;
  nlohmann::json j = report.ToJson();
  j["coefficients"] = CoeffFileToJson(coeffs, *FindModel(report.model).layout);
  j["options"] = {{"paths", options.paths},       {"data_root", options.data_root},
                  {"coeffs", options.coeffs_path}, {"horizons_s", report.horizons_s},
                  {"window_s", report.window_s},   {"curve_step_s", report.curve_step_s},
                  {"keep_going", options.keep_going}};
  if (!options.facts.Empty()) j["options"]["facts"] = RecordingFactsJson(options.facts);
  j["git_revision"] = GitRevision();
  dir.WriteFile("replay_summary.json", DumpJson(j, 1) + "\n");
  dir.WriteFile("summary.txt", report.Table());
  // The page is drawn into the staged folder too: a failing plot script leaves the previous
  // outputs in place, not new tables without their page.
  if (options.plots)
    RunPlotScript(PlotScriptPath("plot_replay.py"), {dir.dir(), "--shown-as", options.out_dir});
}

void SelectCovered(const std::string& model, std::vector<Episode>* episodes,
                   std::vector<std::vector<Regime>>* regimes, bool single_file,
                   const std::string& program, std::ostream& warnings,
                   std::vector<SkippedInput>* skipped) {
  RLFIT_CHECK(episodes->size() == regimes->size(), "one regime vector per episode");
  std::map<std::string, std::map<std::string, int>> left_out_by_file;
  std::map<std::string, bool> covered_by_file;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < episodes->size(); ++i) {
    const std::string& path = (*episodes)[i].path;
    if (!covered_by_file.count(path)) files.push_back(path);
    bool& covered = covered_by_file[path];
    covered = covered || !CoveredStretches((*regimes)[i]).empty();
    for (Regime g : (*regimes)[i])
      ++left_out_by_file[path][g == Regime::kCovered ? kAloneLabel : RegimeLabel(g)];
  }
  for (const std::string& file : files) {
    if (covered_by_file[file]) continue;
    const std::string reason = "no row the " + model + " model covers (" +
                               LeftOutText(left_out_by_file[file]) + ")";
    if (single_file) throw InputError(file, 0, 0, reason);
    warnings << program << ": skipped " << file << ": " << reason << "\n";
    skipped->push_back({file, reason});
  }
  std::vector<Episode> kept;
  std::vector<std::vector<Regime>> kept_regimes;
  for (std::size_t i = 0; i < episodes->size(); ++i) {
    if (!covered_by_file[(*episodes)[i].path]) continue;
    kept.push_back(std::move((*episodes)[i]));
    kept_regimes.push_back(std::move((*regimes)[i]));
  }
  if (kept.empty())
    throw InputError(files.empty() ? "(no recordings)" : files.front(), 0, 0,
                     "no row the " + model + " model covers in any input (" +
                         std::to_string(files.size()) + " files skipped)");
  *episodes = std::move(kept);
  *regimes = std::move(kept_regimes);
}

namespace {

// Whether the command names exactly one file (SelectCovered refuses it when nothing is covered).
bool NamesOneFile(const ReplayOptions& options) {
  return options.paths.size() == 1 &&
         fs::is_regular_file(ResolveUnderRoot(options.paths[0], options.data_root));
}

void WarnSkipped(const ReplayOptions& options, const std::vector<SkippedInput>& skipped,
                 std::ostream& warnings) {
  for (const SkippedInput& s : skipped)
    warnings << options.program << ": skipped " << s.path << ": " << s.reason << "\n";
}

void WarnUnreadable(const ReplayOptions& options, const std::vector<SkippedInput>& unreadable,
                    std::ostream& warnings) {
  for (const SkippedInput& s : unreadable)
    warnings << options.program << ": unreadable " << s.path << ": " << s.reason << "\n";
}

// How the replay reads its recordings (the command line's facts).
ReadOptions ReadOptionsOf(const ReplayOptions& options) {
  ReadOptions read;
  read.facts = options.facts;
  return read;
}

// The seed coefficients' predictor as the reference (none when the coefficients are the
// seed's), and what the report says of the coefficients. Returns the reference's owner.
std::unique_ptr<Predictor> SetUpReference(const ModelInfo& model, const CoeffFile& coeffs,
                                          const ReplayOptions& options, ReplayExtras* extras) {
  std::unique_ptr<Predictor> seed;
  if (options.coeffs_path != kSeedCoeffs) {
    seed = model.make_predictor(LoadCoefficients(model, kSeedCoeffs), options.data_root);
    extras->reference = seed.get();
  }
  extras->provenance = coeffs.provenance;
  extras->coefficients_source = DescribeCoefficients(model.name, options.coeffs_path);
  return seed;
}

// RunReplay without per-row outputs, one recording file at a time: read, classify, replay,
// keep the per-episode figures, drop the rows. Peak memory is one file plus the figures, not
// the whole corpus. Two passes over the files: the first classifies every row (kept: one
// label per row), decides which files are covered (SelectCovered) and which reference every
// scored episode can be compared with; the second replays. The report is the one
// ReplayEpisodes gives on all episodes at once (tested).
ReplayReport StreamReplay(const ReplayOptions& options, std::ostream& warnings) {
  const ModelInfo& model = FindModel(options.model);
  const CoeffFile coeffs = LoadCoefficients(model, options.coeffs_path);
  std::vector<SkippedInput> skipped;
  std::vector<SkippedInput> unreadable;
  std::vector<SkippedInput>* bad = options.keep_going ? &unreadable : nullptr;
  const std::vector<std::string> files =
      RecordingFilesFor(model, options.paths, options.data_root, &skipped, bad);
  WarnSkipped(options, skipped, warnings);
  const std::unique_ptr<Predictor> predictor = model.make_predictor(coeffs, options.data_root);
  ReplayExtras extras;
  const std::unique_ptr<Predictor> seed = SetUpReference(model, coeffs, options, &extras);
  const ReadOptions read = ReadOptionsOf(options);

  std::vector<Episode> outlines;  // path, name, kind and where the file starts only
  std::vector<std::vector<Regime>> regimes;
  std::vector<bool> shipped_usable;
  std::vector<std::string> shipped_warnings;  // printed for the episodes replayed
  // Every file is read before any is refused for its kind, as LoadEpisodesFor does.
  for (const std::string& file : files) {
    std::vector<Episode> episodes;
    try {
      episodes = ReadRecording(file, read);
    } catch (const InputError& e) {
      if (!options.keep_going) throw;
      unreadable.push_back({file, PlaceAndMessage(e)});
      continue;
    }
    if (options.keep_going && !episodes.empty() && episodes.front().kind != model.kind) {
      unreadable.push_back({file, KindMismatch(model, episodes.front())});
      continue;
    }
    for (Episode& ep : episodes) {
      const bool kind = ep.kind == model.kind;
      regimes.push_back(kind ? ClassifyRows(model.name, ep, options.data_root)
                             : std::vector<Regime>());
      std::ostringstream warnings;
      shipped_usable.push_back(kind && LoadShipped(ep, options.program, warnings).has_value());
      shipped_warnings.push_back(warnings.str());
      Episode outline;
      outline.path = ep.path;
      outline.name = ep.name;
      outline.kind = ep.kind;
      outline.file_first_row = ep.file_first_row;
      outline.rows.push_back(ep.rows.front());
      outlines.push_back(std::move(outline));
    }
  }
  CheckEpisodeKinds(model, outlines);
  RequireSomethingRead(outlines.size(), unreadable, "replay");
  std::vector<std::pair<std::string, std::string>> keys;  // (path, name) of every episode
  for (const Episode& ep : outlines) keys.emplace_back(ep.path, ep.name);
  std::map<std::pair<std::string, std::string>, bool> usable;
  std::map<std::pair<std::string, std::string>, std::string> warned;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    usable[keys[i]] = shipped_usable[i];
    warned[keys[i]] = shipped_warnings[i];
  }
  SelectCovered(model.name, &outlines, &regimes, NamesOneFile(options), options.program,
                warnings, &skipped);
  for (const Episode& ep : outlines) warnings << warned[{ep.path, ep.name}];

  bool all_shipped = true;
  for (std::size_t i = 0; i < outlines.size(); ++i) {
    const auto stretches = CoveredStretches(regimes[i]);
    // SelectCovered kept at least one scored episode; later parts of a cut recording have no
    // shipped prediction from their start and do not decide.
    if (stretches.empty() || !StartsItsFile(outlines[i])) continue;
    if (!usable[{outlines[i].path, outlines[i].name}] || stretches.front().first != 0)
      all_shipped = false;
  }
  extras.reference_kind = all_shipped                      ? "shipped_predictions"
                          : extras.reference != nullptr ? "seed_coefficients"
                                                        : "none";

  ReplayOptions quiet = options;
  quiet.quiet = true;
  quiet.keep_predictions = false;
  ReplayReport report;
  Progress progress("replay " + model.name, static_cast<int>(outlines.size()), options.quiet);
  std::size_t next = 0;  // index into outlines / regimes
  for (const std::string& file : files) {
    if (next == outlines.size()) break;
    if (outlines[next].path != file) continue;  // skipped by SelectCovered, or no episode
    std::vector<Episode> episodes = ReadRecording(file, read);
    extras.regimes.clear();
    for (const Episode& ep : episodes) {
      RLFIT_CHECK(next < outlines.size() && outlines[next].name == ep.name,
                  "the same episodes on the second reading of " + file);
      extras.regimes.push_back(std::move(regimes[next++]));
    }
    ReplayReport part = ReplayEpisodes(episodes, *predictor, model, quiet, extras);
    if (report.model.empty()) {
      report = std::move(part);
    } else {
      for (EpisodeReport& e : part.episodes) report.episodes.push_back(std::move(e));
      for (SkippedInput& n : part.notes) report.notes.push_back(std::move(n));
      for (std::size_t c = 0; c < part.curve.size(); ++c)
        report.curve[c].insert(report.curve[c].end(), part.curve[c].begin(),
                               part.curve[c].end());
    }
    for (std::size_t i = 0; i < episodes.size(); ++i) progress.Tick();
  }
  report.skipped = skipped;
  report.unreadable = unreadable;
  report.keep_going = options.keep_going;
  WarnUnreadable(options, unreadable, warnings);
  return report;
}

}  // namespace

ReplayReport ReplayFiles(const ReplayOptions& options, std::ostream& warnings,
                         std::vector<Episode>* episodes, CoeffFile* coeffs) {
  const ModelInfo& model = FindModel(options.model);
  *coeffs = LoadCoefficients(model, options.coeffs_path);
  std::vector<SkippedInput> skipped, unreadable;
  *episodes = LoadEpisodesFor(model, options.paths, options.data_root, &skipped,
                              ReadOptionsOf(options),
                              options.keep_going ? &unreadable : nullptr);
  WarnSkipped(options, skipped, warnings);
  RequireSomethingRead(episodes->size(), unreadable, "replay");
  ReplayExtras extras;
  for (const Episode& ep : *episodes)
    extras.regimes.push_back(ClassifyRows(model.name, ep, options.data_root));
  SelectCovered(model.name, episodes, &extras.regimes, NamesOneFile(options), options.program,
                warnings, &skipped);

  const std::unique_ptr<Predictor> predictor = model.make_predictor(*coeffs, options.data_root);
  const std::unique_ptr<Predictor> seed = SetUpReference(model, *coeffs, options, &extras);
  ReplayReport report = ReplayEpisodes(*episodes, *predictor, model, options, extras);
  report.skipped = skipped;
  report.unreadable = unreadable;
  report.keep_going = options.keep_going;
  WarnUnreadable(options, unreadable, warnings);
  return report;
}

ReplayReport RunReplay(const ReplayOptions& options, std::ostream& out) {
  if (options.out_dir.empty() && options.stream) {
    ReplayReport report = StreamReplay(options, std::cerr);
    out << report.Table();
    return report;
  }
  ReplayOptions effective = options;
  effective.keep_predictions = !options.out_dir.empty();
  std::vector<Episode> episodes;
  CoeffFile coeffs;
  ReplayReport report = ReplayFiles(effective, std::cerr, &episodes, &coeffs);
  out << report.Table();
  if (!options.out_dir.empty()) WriteReplayOutputs(report, episodes, coeffs, options);
  return report;
}

}  // namespace rlfit
