// Replay: open-loop and windowed rollouts, the error report, and its files.
#include "src/replay/replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <ostream>
#include <sstream>

#include "src/common/error.h"
#include "src/common/progress.h"
#include "src/common/resources.h"
#include "src/io/files.h"
#include "src/io/recording.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;

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

nlohmann::json StatsJson(const Stats& s) {
  return {{"n", s.n}, {"median", s.median}, {"p90", s.p90}, {"max", s.max}};
}

nlohmann::json SampleJson(const std::optional<ErrorSample>& e, bool orientation) {
  if (!e) return nullptr;
  nlohmann::json j;
  for (const Quantity& q : Quantities(orientation)) j[q.key] = (*e).*q.member;
  return j;
}

// Output names: the episode's own name, prefixed by its folder when two would collide.
std::vector<std::string> OutputNames(const std::vector<EpisodeReport>& episodes) {
  std::map<std::string, int> count;
  for (const EpisodeReport& e : episodes) ++count[e.name];
  std::vector<std::string> names;
  for (const EpisodeReport& e : episodes) {
    if (count[e.name] == 1) names.push_back(e.name);
    else names.push_back(fs::path(e.path).parent_path().filename().string() + "__" + e.name);
  }
  return names;
}

std::string TrajectoryCsv(const Episode& ep, const EpisodeReport& r, bool orientation) {
  std::ostringstream out;
  out.precision(9);
  out << "row,t_s,x,y,z,vx,vy,vz,wx,wy,wz,rec_x,rec_y,rec_z,rec_vx,rec_vy,rec_vz,rec_wx,rec_wy,"
         "rec_wz";
  if (orientation) out << ",angle_err_deg";
  out << "\n";
  for (int k = 0; k < static_cast<int>(r.trajectory.size()); ++k) {
    const PredictedState& p = r.trajectory[k];
    const Sample& s = ep.rows[k];
    out << k << "," << s.t_s;
    for (const Eigen::Vector3d* v : {&p.x, &p.v, &p.omega, &s.x, &s.v, &s.omega})
      out << "," << (*v)(0) << "," << (*v)(1) << "," << (*v)(2);
    if (orientation) out << "," << r.open_loop_rows[k].angle_deg;
    out << "\n";
  }
  return out.str();
}

}  // namespace

bool ReplayOptions::Check(std::string* why) const {
  if (window_s <= 0.0) return *why = "--window must be positive", false;
  if (curve_step_s <= 0.0) return *why = "curve step must be positive", false;
  for (double h : horizons_s)
    if (!(h > 0.0)) return *why = "horizons must be positive", false;
  if (!std::is_sorted(horizons_s.begin(), horizons_s.end()))
    return *why = "horizons must be increasing", false;
  return true;
}

ReplayReport ReplayEpisodes(const std::vector<Episode>& episodes, const Predictor& predictor,
                            const ModelInfo& model, const ReplayOptions& given) {
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
  const int n_horizons = static_cast<int>(report.horizon_labels.size());

  double longest = 0.0;
  for (const Episode& ep : episodes) longest = std::max(longest, ep.duration_s());
  for (double h = options.curve_step_s; h <= longest + 1e-9; h += options.curve_step_s)
    report.curve_horizons_s.push_back(h);
  report.curve.resize(report.curve_horizons_s.size());

  Progress progress("replay " + model.name, static_cast<int>(episodes.size()), options.quiet);
  for (const Episode& ep : episodes) {
    EpisodeReport r;
    r.name = ep.name;
    r.path = ep.path;
    r.rows = ep.size();
    r.duration_s = ep.duration_s();
    const int last = ep.size() - 1;

    // Open loop from row 0.
    r.trajectory = predictor.Rollout(ep, 0, last);
    for (int k = 0; k <= last; ++k) r.open_loop_rows.push_back(CompareState(r.trajectory[k], ep.rows[k]));
    for (int h = 0; h < n_horizons; ++h) {
      const int row = h + 1 < n_horizons ? RowAtHorizon(ep, 0, options.horizons_s[h]) : last;
      if (row >= 0) r.open_loop.push_back(r.open_loop_rows[row]);
      else r.open_loop.push_back(std::nullopt);
    }

    // The earlier model's prediction shipped beside the episode, compared the same way.
    if (const auto baseline_path = FindBaselineFor(ep.path)) {
      const BaselinePrediction b = ReadBaselinePrediction(*baseline_path);
      if (static_cast<int>(b.x.size()) != ep.size())
        throw InputError(*baseline_path, 0, 0,
                         std::to_string(b.x.size()) + " rows, but its episode has " +
                             std::to_string(ep.size()));
      for (int h = 0; h < n_horizons; ++h) {
        const int row = h + 1 < n_horizons ? RowAtHorizon(ep, 0, options.horizons_s[h]) : last;
        if (row < 0) {
          r.baseline.push_back(std::nullopt);
          continue;
        }
        ErrorSample e;
        e.dx = (b.x[row] - ep.rows[row].x).norm();
        e.dv = (b.v[row] - ep.rows[row].v).norm();
        e.domega = (b.omega[row] - ep.rows[row].omega).norm();
        e.angle_deg = std::nan("");  // the prediction files carry no orientation
        r.baseline.push_back(e);
      }
    }

    // Windowed restarts from the recorded state every window_s seconds, each run to the end.
    r.windowed.resize(options.horizons_s.size());
    for (int w = 0;; ++w) {
      const int start = RowAtHorizon(ep, 0, w * options.window_s);
      if (w > 0 && (start <= 0 || start >= last)) break;
      const std::vector<PredictedState> pred = predictor.Rollout(ep, start, last);
      auto error_at = [&](double h, ErrorSample* e) {
        const int row = RowAtHorizon(ep, start, h);
        if (row < 0) return false;
        *e = CompareState(pred[row - start], ep.rows[row]);
        return true;
      };
      ErrorSample e;
      for (std::size_t h = 0; h < options.horizons_s.size(); ++h)
        if (error_at(options.horizons_s[h], &e)) r.windowed[h].push_back(e);
      for (std::size_t c = 0; c < report.curve_horizons_s.size(); ++c)
        if (error_at(report.curve_horizons_s[c], &e)) report.curve[c].push_back(e);
    }
    report.episodes.push_back(std::move(r));
    progress.Tick();
  }
  return report;
}

int ReplayReport::EpisodesWithBaseline() const {
  int n = 0;
  for (const EpisodeReport& e : episodes) n += e.baseline.empty() ? 0 : 1;
  return n;
}

Stats ReplayReport::OpenLoop(const Quantity& q, int horizon, bool only_with_baseline) const {
  std::vector<double> v;
  for (const EpisodeReport& e : episodes) {
    if (only_with_baseline && e.baseline.empty()) continue;
    if (e.open_loop[horizon]) v.push_back((*e.open_loop[horizon]).*q.member);
  }
  return Summarize(v);
}

Stats ReplayReport::Windowed(const Quantity& q, int horizon) const {
  std::vector<double> v;
  if (horizon >= static_cast<int>(horizons_s.size())) return Summarize(v);
  for (const EpisodeReport& e : episodes)
    for (const ErrorSample& s : e.windowed[horizon]) v.push_back(s.*q.member);
  return Summarize(v);
}

Stats ReplayReport::Baseline(const Quantity& q, int horizon) const {
  std::vector<double> v;
  for (const EpisodeReport& e : episodes)
    if (!e.baseline.empty() && e.baseline[horizon] && std::isfinite((*e.baseline[horizon]).*q.member))
      v.push_back((*e.baseline[horizon]).*q.member);
  return Summarize(v);
}

nlohmann::json ReplayReport::ToJson() const {
  const auto& quantities = Quantities(has_orientation);
  nlohmann::json j;
  j["model"] = model;
  j["horizons"] = horizon_labels;
  j["window_s"] = window_s;
  nlohmann::json eps = nlohmann::json::array();
  for (const EpisodeReport& e : episodes) {
    nlohmann::json je{{"name", e.name}, {"path", e.path}, {"rows", e.rows},
                      {"duration_s", e.duration_s}};
    for (std::size_t h = 0; h < horizon_labels.size(); ++h) {
      je["open_loop"][horizon_labels[h]] = SampleJson(e.open_loop[h], has_orientation);
      if (!e.baseline.empty())
        je["baseline"][horizon_labels[h]] = SampleJson(e.baseline[h], false);
      if (h < horizons_s.size()) {
        std::vector<double> v;
        for (const Quantity& q : quantities) {
          v.clear();
          for (const ErrorSample& s : e.windowed[h]) v.push_back(s.*q.member);
          je["windowed"][horizon_labels[h]][q.key] = StatsJson(Summarize(v));
        }
      }
    }
    eps.push_back(je);
  }
  j["episodes"] = eps;

  nlohmann::json agg;
  const int with_baseline = EpisodesWithBaseline();
  for (const Quantity& q : quantities) {
    for (std::size_t h = 0; h < horizon_labels.size(); ++h) {
      const std::string& label = horizon_labels[h];
      agg["open_loop"][q.key][label] = StatsJson(OpenLoop(q, h));
      if (h < horizons_s.size()) agg["windowed"][q.key][label] = StatsJson(Windowed(q, h));
      if (with_baseline > 0 && q.member != &ErrorSample::angle_deg) {
        const Stats model_stats = OpenLoop(q, h, true);
        const Stats base = Baseline(q, h);
        agg["baseline"][q.key][label] = StatsJson(base);
        agg["open_loop_on_baseline_episodes"][q.key][label] = StatsJson(model_stats);
        agg["ratio_to_baseline_median"][q.key][label] =
            base.median > 0 ? model_stats.median / base.median : 0.0;
      }
    }
  }
  agg["episodes_with_baseline"] = with_baseline;
  j["aggregate"] = agg;

  nlohmann::json curve_json;
  curve_json["horizon_s"] = curve_horizons_s;
  for (const Quantity& q : quantities) {
    nlohmann::json med = nlohmann::json::array(), p90 = nlohmann::json::array();
    for (const auto& samples : curve) {
      std::vector<double> v;
      for (const ErrorSample& s : samples) v.push_back(s.*q.member);
      const Stats st = Summarize(v);
      med.push_back(st.median);
      p90.push_back(st.p90);
    }
    curve_json[q.key] = {{"median", med}, {"p90", p90}};
  }
  j["windowed_curve"] = curve_json;
  return j;
}

std::string ReplayReport::Table() const {
  const auto& quantities = Quantities(has_orientation);
  std::ostringstream out;
  int windows = 0;
  for (const EpisodeReport& e : episodes) windows += e.windowed.empty() ? 0 : e.windowed[0].size();
  char line[512];
  auto header = [&](const char* title) {
    out << title << "\n";
    std::snprintf(line, sizeof(line), "  %-12s %-6s", "quantity", "horizon");
    out << line << "  " << "  median       p90       max      n\n";
  };
  auto row = [&](const Quantity& q, const std::string& label, const Stats& s) {
    std::snprintf(line, sizeof(line), "  %-12s %-6s  %8s  %8s  %8s  %5d\n", q.label,
                  label.c_str(), Fmt(s.median).c_str(), Fmt(s.p90).c_str(), Fmt(s.max).c_str(),
                  s.n);
    out << line;
  };
  out << "model " << model << ": " << episodes.size() << " episodes\n";
  header("open loop from row 0 (per-episode errors; median, p90, max over episodes)");
  for (const Quantity& q : quantities)
    for (std::size_t h = 0; h < horizon_labels.size(); ++h) row(q, horizon_labels[h], OpenLoop(q, h));
  std::snprintf(line, sizeof(line), "windowed: restart from the recorded state every %g s (%d restarts)",
                window_s, windows);
  header(line);
  for (const Quantity& q : quantities)
    for (std::size_t h = 0; h < horizons_s.size(); ++h) row(q, horizon_labels[h], Windowed(q, h));

  if (EpisodesWithBaseline() > 0) {
    out << "against the shipped prediction_*.csv (open loop, " << EpisodesWithBaseline()
        << " episodes; medians)\n";
    std::snprintf(line, sizeof(line), "  %-12s %-6s  %10s  %10s  %7s\n", "quantity", "horizon",
                  "this model", "baseline", "ratio");
    out << line;
    for (const Quantity& q : Quantities(false))
      for (std::size_t h = 0; h < horizon_labels.size(); ++h) {
        const Stats m = OpenLoop(q, h, true), b = Baseline(q, h);
        std::snprintf(line, sizeof(line), "  %-12s %-6s  %10s  %10s  %7.3f\n", q.label,
                      horizon_labels[h].c_str(), Fmt(m.median).c_str(), Fmt(b.median).c_str(),
                      b.median > 0 ? m.median / b.median : 0.0);
        out << line;
      }
  }

  out << "per episode, open loop (|dx| uu / |dw| rad/s"
      << (has_orientation ? " / angle deg" : "") << ")\n";
  std::snprintf(line, sizeof(line), "  %-26s", "episode");
  out << line;
  for (const std::string& l : horizon_labels) {
    std::snprintf(line, sizeof(line), " %22s", l.c_str());
    out << line;
  }
  out << "\n";
  for (const EpisodeReport& e : episodes) {
    std::snprintf(line, sizeof(line), "  %-26s", e.name.c_str());
    out << line;
    for (const auto& s : e.open_loop) {
      std::string cell = "-";
      if (s) {
        cell = Fmt(s->dx) + " / " + Fmt(s->domega);
        if (has_orientation) cell += " / " + Fmt(s->angle_deg);
      }
      std::snprintf(line, sizeof(line), " %22s", cell.c_str());
      out << line;
    }
    out << "\n";
  }
  return out.str();
}

std::vector<Episode> LoadEpisodesFor(const ModelInfo& model, const std::vector<std::string>& paths,
                                     const std::string& data_root) {
  std::vector<std::string> resolved;
  if (paths.empty()) {
    if (data_root.empty())
      throw InputError("(no data)", 0, 0,
                       "no recordings given and " + MissingDataRootMessage());
    for (const std::string& p : model.default_paths)
      resolved.push_back((fs::path(data_root) / p).string());
  } else {
    for (const std::string& p : paths) resolved.push_back(ResolveUnderRoot(p, data_root));
  }
  std::vector<Episode> episodes = ReadRecordings(resolved);
  for (const Episode& ep : episodes)
    if (ep.kind != model.kind)
      throw InputError(ep.path, 0, 0,
                       std::string("is a ") + (ep.kind == EpisodeKind::kBall ? "ball" : "car") +
                           " recording; model " + model.name + " replays " +
                           (model.kind == EpisodeKind::kBall ? "ball" : "car") + " recordings");
  return episodes;
}

void WriteReplayOutputs(const ReplayReport& report, const std::vector<Episode>& episodes,
                        const CoeffFile& coeffs, const ReplayOptions& options) {
  EnsureDirectory(options.out_dir);
  const std::vector<std::string> names = OutputNames(report.episodes);
  nlohmann::json j = report.ToJson();
  for (std::size_t i = 0; i < names.size(); ++i) {
    WriteFileAtomic((fs::path(options.out_dir) / names[i]).string(),
                    TrajectoryCsv(episodes[i], report.episodes[i], report.has_orientation));
    j["episodes"][i]["output"] = names[i];
  }
  j["schema_version"] = 1;
  j["coefficients"] = CoeffFileToJson(coeffs, *FindModel(report.model).layout);
  j["coefficients_path"] = options.coeffs_path.empty() ? "(seed defaults)" : options.coeffs_path;
  j["options"] = {{"paths", options.paths}, {"data_root", options.data_root},
                  {"horizons_s", report.horizons_s}, {"window_s", options.window_s}};
  j["git_revision"] = GitRevision();
  WriteFileAtomic((fs::path(options.out_dir) / "replay_summary.json").string(), j.dump(1) + "\n");
  WriteFileAtomic((fs::path(options.out_dir) / "summary.txt").string(), report.Table());
}

ReplayReport RunReplay(const ReplayOptions& options, std::ostream& out) {
  const ModelInfo& model = FindModel(options.model);
  const CoeffFile coeffs = options.coeffs_path.empty()
                               ? DefaultCoeffs(model.name, *model.layout)
                               : ReadCoeffFile(options.coeffs_path, model.name, *model.layout);
  const std::vector<Episode> episodes = LoadEpisodesFor(model, options.paths, options.data_root);
  const std::unique_ptr<Predictor> predictor = model.make_predictor(coeffs, options.data_root);
  ReplayReport report = ReplayEpisodes(episodes, *predictor, model, options);
  out << report.Table();
  if (!options.out_dir.empty()) WriteReplayOutputs(report, episodes, coeffs, options);
  return report;
}

}  // namespace rlfit
