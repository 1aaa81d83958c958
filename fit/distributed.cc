// Replay, fit and cross-validation over shards of files: the workers' tasks and the client's
// plans and reductions (fit/distributed.h). Messages are CBOR (nlohmann); arrays of doubles
// travel as raw bytes.
#include "fit/distributed.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

#include <Eigen/Dense>

#include "fit/fit_common.h"
#include "src/common/error.h"
#include "src/common/parallel.h"
#include "src/common/progress.h"
#include "src/io/files.h"
#include "src/io/recording.h"
#include "src/replay/coeff_choice.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Pack(const json& j) {
  const std::vector<std::uint8_t> bytes = json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

json Unpack(const std::string& bytes) { return json::from_cbor(bytes); }

json Binary(const std::vector<double>& v) {
  std::vector<std::uint8_t> bytes(v.size() * sizeof(double));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return json::binary(std::move(bytes));
}

std::vector<double> Doubles(const json& j) {
  const std::vector<std::uint8_t>& bytes = j.get_binary();
  RLFIT_CHECK(bytes.size() % sizeof(double) == 0, "an array of doubles in a message");
  std::vector<double> v(bytes.size() / sizeof(double));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

// An answer that is an error, and back.
std::string ErrorAnswer(const char* kind, const std::string& file, int row, int column,
                        const std::string& message) {
  return Pack({{"error",
                {{"kind", kind}, {"file", file}, {"row", row}, {"column", column},
                 {"message", message}}}});
}

// The answers as JSON; the first error in shard order is thrown as what it was.
std::vector<json> Answers(const std::vector<std::string>& answers, std::size_t expected) {
  RLFIT_CHECK(answers.size() == expected, "one answer per shard");
  std::vector<json> out;
  for (const std::string& a : answers) {
    json j = Unpack(a);
    if (j.contains("error")) {
      const json& e = j["error"];
      if (e["kind"] == "input")
        throw InputError(e["file"].get<std::string>(), e["row"].get<int>(),
                         e["column"].get<int>(), e["message"].get<std::string>());
      throw InternalError("a worker: " + e["message"].get<std::string>());
    }
    out.push_back(std::move(j));
  }
  return out;
}

// --- replay records -------------------------------------------------------------------------

json PointJson(const ErrorPoint& p) {
  return json::array({p.diverged, p.error.dx, p.error.dv, p.error.domega, p.error.angle_deg});
}
ErrorPoint PointFrom(const json& j) {
  ErrorPoint p;
  p.diverged = j[0].get<bool>();
  p.error = {j[1].get<double>(), j[2].get<double>(), j[3].get<double>(), j[4].get<double>()};
  return p;
}
json OptionalsJson(const std::vector<std::optional<ErrorPoint>>& v) {
  json a = json::array();
  for (const auto& p : v) a.push_back(p ? PointJson(*p) : json(nullptr));
  return a;
}
std::vector<std::optional<ErrorPoint>> OptionalsFrom(const json& j) {
  std::vector<std::optional<ErrorPoint>> v;
  for (const json& p : j) v.push_back(p.is_null() ? std::nullopt : std::optional(PointFrom(p)));
  return v;
}
json PointsJson(const std::vector<std::vector<ErrorPoint>>& v) {
  json a = json::array();
  for (const auto& row : v) {
    json r = json::array();
    for (const ErrorPoint& p : row) r.push_back(PointJson(p));
    a.push_back(r);
  }
  return a;
}
std::vector<std::vector<ErrorPoint>> PointsFrom(const json& j) {
  std::vector<std::vector<ErrorPoint>> v;
  for (const json& row : j) {
    v.emplace_back();
    for (const json& p : row) v.back().push_back(PointFrom(p));
  }
  return v;
}

// Everything of an EpisodeReport the tables and summaries read (not its per-row predictions,
// which stay with the worker that wrote the trajectory CSV).
json EpisodeJson(const EpisodeReport& e) {
  return {{"name", e.name},
          {"path", e.path},
          {"split", e.split},
          {"rows", e.rows},
          {"rows_scored", e.rows_scored},
          {"rows_left_out", e.rows_left_out},
          {"duration_s", e.duration_s},
          {"diverged_at_s", e.diverged_at_s ? json(*e.diverged_at_s) : json(nullptr)},
          {"departure_row", e.departure_row},
          {"departure_t_s", e.departure_t_s},
          {"departure_situation", e.departure_situation},
          {"checks", e.checks},
          {"has_reference", e.has_reference},
          {"open_loop", OptionalsJson(e.open_loop)},
          {"reference", OptionalsJson(e.reference)},
          {"windowed", PointsJson(e.windowed)},
          {"curve_windowed", PointsJson(e.curve_windowed)},
          {"curve_open_loop", OptionalsJson(e.curve_open_loop)},
          {"curve_reference", OptionalsJson(e.curve_reference)}};
}

EpisodeReport EpisodeFrom(const json& j) {
  EpisodeReport e;
  e.name = j["name"];
  e.path = j["path"];
  e.split = j["split"];
  e.rows = j["rows"];
  e.rows_scored = j["rows_scored"];
  e.rows_left_out = j["rows_left_out"].get<std::map<std::string, int>>();
  e.duration_s = j["duration_s"];
  if (!j["diverged_at_s"].is_null()) e.diverged_at_s = j["diverged_at_s"].get<double>();
  e.departure_row = j["departure_row"];
  e.departure_t_s = j["departure_t_s"];
  e.departure_situation = j["departure_situation"];
  e.checks = j["checks"].get<std::map<std::string, int>>();
  e.has_reference = j["has_reference"];
  e.open_loop = OptionalsFrom(j["open_loop"]);
  e.reference = OptionalsFrom(j["reference"]);
  e.windowed = PointsFrom(j["windowed"]);
  e.curve_windowed = PointsFrom(j["curve_windowed"]);
  e.curve_open_loop = OptionalsFrom(j["curve_open_loop"]);
  e.curve_reference = OptionalsFrom(j["curve_reference"]);
  return e;
}

json ReportJson(const ReplayReport& r) {
  json curve = json::array();
  for (const auto& samples : r.curve) {
    json c = json::array();
    for (const ErrorSample& s : samples) c.push_back({s.dx, s.dv, s.domega, s.angle_deg});
    curve.push_back(c);
  }
  json episodes = json::array();
  for (const EpisodeReport& e : r.episodes) episodes.push_back(EpisodeJson(e));
  return {{"model", r.model},
          {"has_orientation", r.has_orientation},
          {"horizons_s", r.horizons_s},
          {"horizon_labels", r.horizon_labels},
          {"window_s", r.window_s},
          {"curve_step_s", r.curve_step_s},
          {"coefficients_source", r.coefficients_source},
          {"reference_kind", r.reference_kind},
          {"reference_label", r.reference_label},
          {"curve_horizons_s", r.curve_horizons_s},
          {"curve", curve},
          {"episodes", episodes}};
}

ReplayReport ReportFrom(const json& j) {
  ReplayReport r;
  r.model = j["model"];
  r.has_orientation = j["has_orientation"];
  r.horizons_s = j["horizons_s"].get<std::vector<double>>();
  r.horizon_labels = j["horizon_labels"].get<std::vector<std::string>>();
  r.window_s = j["window_s"];
  r.curve_step_s = j["curve_step_s"];
  r.coefficients_source = j["coefficients_source"];
  r.reference_kind = j["reference_kind"];
  r.reference_label = j["reference_label"];
  r.curve_horizons_s = j["curve_horizons_s"].get<std::vector<double>>();
  for (const json& c : j["curve"]) {
    r.curve.emplace_back();
    for (const json& s : c)
      r.curve.back().push_back({s[0].get<double>(), s[1].get<double>(), s[2].get<double>(),
                                s[3].get<double>()});
  }
  for (const json& e : j["episodes"]) r.episodes.push_back(EpisodeFrom(e));
  return r;
}

// `part`'s episodes and curve samples after `into`'s (the first part gives the header), as the
// streamed replay and cross-validation put reports together.
void Append(ReplayReport* into, ReplayReport&& part) {
  if (into->model.empty()) {
    *into = std::move(part);
    return;
  }
  for (EpisodeReport& e : part.episodes) into->episodes.push_back(std::move(e));
  if (part.curve.size() > into->curve.size()) {
    into->curve.resize(part.curve.size());
    into->curve_horizons_s = part.curve_horizons_s;
  }
  for (std::size_t c = 0; c < part.curve.size(); ++c)
    into->curve[c].insert(into->curve[c].end(), part.curve[c].begin(), part.curve[c].end());
}

CoeffFile CoeffsFrom(const json& text, const ModelInfo& model) {
  return ParseCoeffFile("(coefficients sent by the client)", text.get<std::string>(), model.name,
                        *model.layout);
}

std::string CoeffsText(const CoeffFile& c, const ModelInfo& model) {
  return DumpJson(CoeffFileToJson(c, *model.layout), -1);
}

// --- worker tasks ---------------------------------------------------------------------------

// How a shard's files are read: with the command line's facts (--reference,
// --handbrake-unrecorded, --clock-origin) the payload carries, as the tools read them.
ReadOptions ShardReadOptions(const json& p) {
  ReadOptions read;
  if (p.contains("facts")) read.facts = RecordingFactsFromJson(p["facts"]);
  return read;
}

std::vector<Episode> ReadShard(const json& p) {
  return ReadRecordingFiles(p["files"].get<std::vector<std::string>>(), ShardReadOptions(p),
                            p.value("threads", 1));
}

// The shard's episodes as the tools read them with --keep-going (LoadEpisodesFor's rule): a
// file that cannot be read, or holds recordings of another kind than the model's, is listed in
// `unreadable` (in the shard's file order) with its reason and contributes no episode.
std::vector<Episode> ReadShardKeepingGoing(const json& p, const ModelInfo& model,
                                           std::vector<SkippedInput>* unreadable) {
  const std::vector<std::string> files = p["files"].get<std::vector<std::string>>();
  std::vector<SkippedInput> failed;
  std::vector<Episode> episodes =
      ReadRecordingFiles(files, ShardReadOptions(p), p.value("threads", 1), &failed);
  SetAsideOtherKinds(model, &episodes, &failed);
  // Named in the shard's file order, as the tools name them.
  std::map<std::string, std::string> reason;
  for (const SkippedInput& f : failed) reason.emplace(f.path, f.reason);
  for (const std::string& f : files)
    if (reason.count(f)) unreadable->push_back({f, reason[f]});
  return episodes;
}

json OutlineTask(const json& p) {
  const ModelInfo& model = FindModel(p["model"]);
  const std::string data_root = p["data_root"];
  const std::string program = p["program"];
  const bool classify = p["classify"], select = p["select"];
  std::vector<SkippedInput> unreadable;
  const std::vector<Episode> episodes = p.value("keep_going", false)
                                            ? ReadShardKeepingGoing(p, model, &unreadable)
                                            : ReadShard(p);
  json eps = json::array();
  std::vector<std::vector<Regime>> regimes(episodes.size());
  bool kinds = true;
  for (std::size_t i = 0; i < episodes.size(); ++i) {
    const Episode& ep = episodes[i];
    json e = {{"name", ep.name},
              {"path", ep.path},
              {"kind", ep.kind == EpisodeKind::kBall ? "ball" : "car"},
              {"t0", ep.rows.empty() ? 0.0 : ep.rows.front().t_s},
              {"t1", ep.rows.empty() ? 0.0 : ep.rows.back().t_s},
              {"kept", true},
              {"first", -1},
              {"usable", false},
              {"shipped_warning", ""},
              {"segment", ep.segment},
              {"fingerprint", ep.fingerprint}};
    kinds = kinds && ep.kind == model.kind;
    if (classify && ep.kind == model.kind) {
      regimes[i] = ClassifyRows(model.name, ep, data_root);
      const auto stretches = CoveredStretches(regimes[i]);
      if (!stretches.empty()) e["first"] = stretches.front().first;
      std::ostringstream w;
      e["usable"] = ShippedPredictionUsable(ep, program, w);
      e["shipped_warning"] = w.str();
    }
    eps.push_back(e);
  }
  std::ostringstream skip_lines;
  std::vector<SkippedInput> skipped;
  if (select && kinds) {
    // SelectCovered file by file (a file's episodes are never split between shards); "nothing
    // covered in any input" is the client's to decide, over every shard.
    const bool single_file = p["single_file"];
    for (std::size_t a = 0; a < episodes.size();) {
      std::size_t b = a;
      while (b < episodes.size() && episodes[b].path == episodes[a].path) ++b;
      std::vector<Episode> outlines;
      std::vector<std::vector<Regime>> file_regimes;
      for (std::size_t i = a; i < b; ++i) {
        Episode o;
        o.path = episodes[i].path;
        o.name = episodes[i].name;
        outlines.push_back(std::move(o));
        file_regimes.push_back(regimes[i]);
      }
      bool kept = true;
      try {
        SelectCovered(model.name, &outlines, &file_regimes, single_file, program, skip_lines,
                      &skipped);
      } catch (const InputError&) {
        if (single_file) throw;
        kept = false;  // its warning line and `skipped` entry are written
      }
      for (std::size_t i = a; i < b; ++i) eps[i]["kept"] = kept;
      a = b;
    }
  }
  json skipped_json = json::array(), unreadable_json = json::array();
  for (const SkippedInput& s : skipped) skipped_json.push_back({s.path, s.reason});
  for (const SkippedInput& u : unreadable) unreadable_json.push_back({u.path, u.reason});
  return {{"episodes", eps},
          {"skip_lines", skip_lines.str()},
          {"skipped", skipped_json},
          {"unreadable", unreadable_json}};
}

json ReplayTask(const json& p) {
  const ModelInfo& model = FindModel(p["model"]);
  const std::string data_root = p["data_root"];
  const int threads = p.value("threads", 1);
  const std::string stage_dir = p["stage_dir"];
  const std::vector<Episode> episodes = ReadShard(p);
  std::unique_ptr<Predictor> seed;
  json groups = json::array();
  for (const json& g : p["groups"]) {
    const CoeffFile coeffs = CoeffsFrom(g["coeffs"], model);
    const std::unique_ptr<Predictor> predictor = model.make_predictor(coeffs, data_root);
    ReplayExtras extras;
    if (g["reference_seed"].get<bool>()) {
      if (!seed) seed = model.make_predictor(LoadCoefficients(model, kSeedCoeffs), data_root);
      extras.reference = seed.get();
    }
    if (g["provenance"].get<bool>()) extras.provenance = coeffs.provenance;
    extras.coefficients_source = g["coefficients_source"];
    extras.reference_kind = g["reference_kind"];
    const std::vector<int> picked = g["episodes"].get<std::vector<int>>();
    const json& names = g["names"];
    ReplayOptions o;
    o.model = model.name;
    o.data_root = data_root;
    o.horizons_s = p["horizons_s"].get<std::vector<double>>();
    o.window_s = p["window_s"];
    o.curve_step_s = p["curve_step_s"];
    o.program = p["program"];
    o.quiet = true;
    o.keep_predictions = !names.is_null();
    // One episode per job: ReplayEpisodes of one episode is its part of the report (the
    // reference is decided by the client), and the parts go together in order.
    std::vector<ReplayReport> parts(picked.size());
    ParallelFor(static_cast<int>(picked.size()), threads, [&](int i) {
      const Episode& ep = episodes.at(static_cast<std::size_t>(picked[i]));
      parts[i] = ReplayEpisodes({ep}, *predictor, model, o, extras);
      if (!names.is_null())
        WriteFileAtomic((fs::path(stage_dir) / names[i].get<std::string>()).string(),
                        TrajectoryCsv(ep, parts[i].episodes[0], parts[i].has_orientation));
      parts[i].episodes[0].predicted.clear();
      parts[i].episodes[0].reference_x.clear();
    });
    ReplayReport report;
    for (ReplayReport& part : parts) Append(&report, std::move(part));
    groups.push_back(ReportJson(report));
  }
  return {{"groups", groups}};
}

// The FitOptions a "sums" build names (the client's, after WithModelDefaults) and its start.
FitOptions BuildOptions(const json& b, std::vector<double>* start) {
  const ModelInfo& model = FindModel(b["model"]);
  const CoeffFile c = CoeffsFrom(b["start"], model);
  FitOptions o;
  o.model = model.name;
  o.data_root = b["data_root"];
  o.window_s = b["window_s"];
  o.stride_s = b["stride_s"];
  o.integration = c.integration;
  o.solver.loss = b["loss"];
  o.solver.loss_scale = b["loss_scale"];
  o.selection.held = b["held"].get<std::vector<std::string>>();
  o.smoothing = b["smoothing"];
  o.quiet = true;
  *start = c.values;
  return o;
}

// The EpisodeSums this process built for the client's current pass (its "generation": one per
// FitEpisodes pass, fold included), by their description: a shard stays built between the
// solver's steps, a process holding several shards (more shards than workers, or a lost
// worker's) keeps each, and the first build of a new pass drops the previous pass's, so a
// worker holds one pass's windows at a time.
std::shared_ptr<EpisodeSums> CachedSums(const json& build, int threads) {
  static std::mutex mutex;
  static std::vector<std::pair<std::string, std::shared_ptr<EpisodeSums>>> cache;
  static std::string generation;
  const std::string key = Pack(build);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [k, sums] : cache)
      if (k == key) return sums;
    if (build["generation"] != generation) {
      cache.clear();
      generation = build["generation"];
    }
  }
  std::vector<double> start;
  const FitOptions options = BuildOptions(build, &start);
  json shard = build;
  shard["threads"] = threads;
  std::vector<Episode> all = ReadShard(shard);
  std::vector<Episode> picked;
  for (int i : build["episodes"].get<std::vector<int>>())
    picked.push_back(std::move(all.at(static_cast<std::size_t>(i))));
  auto sums = std::make_shared<EpisodeSums>(std::move(picked), options, start);
  const std::lock_guard<std::mutex> lock(mutex);
  if (build["generation"] == generation) cache.emplace_back(key, sums);
  return sums;
}

json SumsTask(const json& p) {
  const int threads = p.value("threads", 1);
  const std::shared_ptr<EpisodeSums> sums = CachedSums(p["build"], threads);
  json a = {{"windows", sums->windows()},
            {"residuals", sums->residuals()},
            {"blocks", sums->blocks()},
            {"p", sums->tangent_size()}};
  try {
    EpisodeSums::Sums s = sums->Evaluate(Doubles(p["values"]), p["jacobians"], threads);
    a["ok"] = true;
    a["cost"] = Binary(s.cost);
    a["projected"] = Binary(s.projected);
    a["root"] = Binary(s.root);
  } catch (const InputError&) {
    a["ok"] = false;  // a window could not be evaluated: Ceres is told so (see RemoteEpisodeCost)
  }
  return a;
}

// --- the client's side of the fit -----------------------------------------------------------

// The per-episode sums of every training episode with windows, at the last coefficients asked
// for with and without Jacobians; a request at new coefficients is one map over the shards.
class RemoteSums {
 public:
  using Fetch = std::function<bool(const std::vector<double>& values, bool jacobians,
                                   EpisodeSums::Sums* sums)>;
  RemoteSums(Fetch fetch, std::vector<double> base, int p)
      : fetch_(std::move(fetch)), base_(std::move(base)), p_(p) {}
  const std::vector<double>& base() const { return base_; }
  int p() const { return p_; }
  void Seed(const std::vector<double>& values, EpisodeSums::Sums sums) {
    jacobian_ = {values, true, std::move(sums)};
  }
  // false when the workers could not evaluate a window there.
  bool At(const std::vector<double>& values, bool jacobians, const EpisodeSums::Sums** out) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry* e : {&jacobian_, &cost_})
      if (e->valid && e->values == values && (!jacobians || e == &jacobian_)) {
        *out = &e->sums;
        return e->ok;
      }
    Entry& e = jacobians ? jacobian_ : cost_;
    e.values = values;
    e.ok = fetch_(values, jacobians, &e.sums);
    e.valid = true;
    *out = &e.sums;
    return e.ok;
  }

 private:
  struct Entry {
    std::vector<double> values;
    bool valid = false;
    EpisodeSums::Sums sums;
    bool ok = true;
  };
  Fetch fetch_;
  std::vector<double> base_;
  int p_;
  std::mutex mutex_;
  Entry jacobian_, cost_;
};

// One training episode as one residual block of p + 1 residuals: the episode's windows in the
// ReducedCost form (fit/fit_common.h), one level up. The workers send the episode's cost F, the
// R of the thin QR J_g = Q R of its stacked window Jacobians and t = (Q^T r)'s first p entries
// (r, J as the solver sees them: each window reduced, the loss's correction applied), and
//   J' = (R; 0),   r' = (t, sqrt(2 F - |t|^2)),
// so that J'^T J' = H (the Gauss-Newton matrix sum_w J_w^T J_w), J'^T r' = g (the gradient
// sum_w J_w^T r_w) and |r'|^2 / 2 = F: the Levenberg-Marquardt step, Jacobi scaling, covariance
// and episode scores of FitEpisodes are the ones of the episode's windows, up to round-off.
// R rather than H: forming H squares the condition number, and the ground fit's coefficients
// span six decades (kappa ~1e-3, accelerations ~1e3), where an eigen-decomposition of H lost
// directions and the fit took another path (measured: cost 38870 vs rlfit fit's 38507).
// 2 F >= |t|^2 holds for the fits' losses (none, Huber, Cauchy: rho'' <= 0, so Ceres scales
// each window's r and J by sqrt(rho'), rho' s <= rho(s), and |t| <= |r|). Cost-only requests
// get r' = (sqrt(2 F), 0, ...).
class RemoteEpisodeCost : public ceres::CostFunction, public StandsForResiduals {
 public:
  struct Block {
    int offset = 0;            // in the coefficient vector
    int size = 0;
    std::vector<int> tangent;  // per coordinate: its column among the p, -1 where held
  };
  RemoteEpisodeCost(std::shared_ptr<RemoteSums> sums, int episode, int inner_residuals,
                    std::vector<Block> blocks)
      : sums_(std::move(sums)), episode_(episode), inner_(inner_residuals),
        blocks_(std::move(blocks)) {
    for (const Block& b : blocks_) mutable_parameter_block_sizes()->push_back(b.size);
    set_num_residuals(sums_->p() + 1);
  }
  int inner_residuals() const override { return inner_; }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    std::vector<double> values = sums_->base();
    for (std::size_t b = 0; b < blocks_.size(); ++b)
      std::copy(parameters[b], parameters[b] + blocks_[b].size,
                values.begin() + blocks_[b].offset);
    const EpisodeSums::Sums* s = nullptr;
    if (!sums_->At(values, jacobians != nullptr, &s)) return false;
    const int p = sums_->p();
    const double cost = s->cost[episode_];
    std::fill(residuals, residuals + p + 1, 0.0);
    if (jacobians == nullptr) {
      residuals[0] = std::sqrt(2.0 * cost);
      return true;
    }
    const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>
        upper(s->root.data() + std::size_t(episode_) * p * p, p, p);  // J'
    const Eigen::Map<const Eigen::VectorXd> top(s->projected.data() + std::size_t(episode_) * p,
                                                p);
    for (int i = 0; i < p; ++i) residuals[i] = top(i);
    residuals[p] = std::sqrt(std::max(0.0, 2.0 * cost - top.squaredNorm()));
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      if (jacobians[b] == nullptr) continue;
      const Block& block = blocks_[b];
      for (int i = 0; i <= p; ++i)
        for (int k = 0; k < block.size; ++k)
          jacobians[b][i * block.size + k] =
              i < p && block.tangent[k] >= 0 ? upper(i, block.tangent[k]) : 0.0;
    }
    return true;
  }

 private:
  std::shared_ptr<RemoteSums> sums_;
  int episode_;
  int inner_;
  std::vector<Block> blocks_;
};

// What the client knows of every episode (the "outline" task), in file order.
struct Outline {
  std::string name, path, kind;
  double t0 = 0.0, t1 = 0.0;
  bool kept = true;
  int first = -1;  // first covered row, -1 none (classified episodes only)
  bool usable = false;
  std::string shipped_warning;
  int segment = -1;              // Episode::segment
  std::uint64_t fingerprint = 0;  // Episode::fingerprint
};

// The shards and their episodes, read once by "outline" tasks.
struct Corpus {
  std::vector<std::vector<std::string>> shards;
  std::vector<int> shard_of, local;  // per episode
  std::vector<Outline> episodes;
  std::string skip_lines;
  std::vector<SkippedInput> skipped;
  std::vector<SkippedInput> unreadable;  // with --keep-going; their files left out of `shards`
};

json ShardPayload(const Corpus& c, std::size_t s, const std::string& model,
                  const std::string& data_root, const RecordingFacts& facts, int threads) {
  return {{"model", model},
          {"files", c.shards[s]},
          {"data_root", data_root},
          {"facts", RecordingFactsJson(facts)},
          {"threads", threads}};
}

Corpus ReadOutlines(const ModelInfo& model, const std::vector<std::string>& files,
                    const std::string& data_root, const RecordingFacts& facts,
                    const std::string& program, bool classify, bool select, bool single_file,
                    bool keep_going, const DistributedOptions& dist, const ShardMap& map) {
  Corpus c;
  c.shards = ShardFiles(files, dist.shards);
  std::vector<std::string> payloads;
  for (std::size_t s = 0; s < c.shards.size(); ++s) {
    json p = ShardPayload(c, s, model.name, data_root, facts, dist.worker_threads);
    p["program"] = program;
    p["classify"] = classify;
    p["select"] = select;
    p["single_file"] = single_file;
    p["keep_going"] = keep_going;
    payloads.push_back(Pack(p));
  }
  const std::vector<json> answers = Answers(map("outline", payloads), payloads.size());
  std::vector<Episode> kinds;  // for CheckEpisodeKinds
  for (std::size_t s = 0; s < answers.size(); ++s) {
    int local = 0;
    for (const json& e : answers[s]["episodes"]) {
      Outline o;
      o.name = e["name"];
      o.path = e["path"];
      o.kind = e["kind"];
      o.t0 = e["t0"];
      o.t1 = e["t1"];
      o.kept = e["kept"];
      o.first = e["first"];
      o.usable = e["usable"];
      o.shipped_warning = e["shipped_warning"];
      o.segment = e["segment"];
      o.fingerprint = e["fingerprint"];
      Episode k;
      k.path = o.path;
      k.name = o.name;
      k.kind = o.kind == "ball" ? EpisodeKind::kBall : EpisodeKind::kCar;
      kinds.push_back(std::move(k));
      c.episodes.push_back(std::move(o));
      c.shard_of.push_back(static_cast<int>(s));
      c.local.push_back(local++);
    }
    c.skip_lines += answers[s]["skip_lines"].get<std::string>();
    for (const json& k : answers[s]["skipped"])
      c.skipped.push_back({k[0].get<std::string>(), k[1].get<std::string>()});
    for (const json& u : answers[s]["unreadable"]) {
      const std::string path = u[0];
      c.unreadable.push_back({path, u[1].get<std::string>()});
      // Later tasks read the shard again: without it, the same episodes in the same order.
      std::vector<std::string>& shard = c.shards[s];
      shard.erase(std::remove(shard.begin(), shard.end(), path), shard.end());
    }
  }
  CheckEpisodeKinds(model, kinds);
  return c;
}

// Episode placeholders for FitEpisodes' names and messages: path, name and the first and last
// rows' times.
std::vector<Episode> Placeholders(const Corpus& c, const std::vector<int>& picked) {
  std::vector<Episode> out;
  for (int i : picked) {
    const Outline& o = c.episodes[i];
    Episode e;
    e.path = o.path;
    e.name = o.name;
    e.segment = o.segment;
    e.fingerprint = o.fingerprint;
    e.rows.resize(2);
    e.rows[0].t_s = o.t0;
    e.rows[1].t_s = o.t1;
    out.push_back(std::move(e));
  }
  return out;
}

// FitEpisodes' residuals for the training episodes `train` (indices into c.episodes): one
// RemoteEpisodeCost per episode with windows, over the shards' EpisodeSums.
AddResidualsFn RemoteResiduals(const Corpus& c, const std::vector<int>& train,
                               const ModelInfo& model, const DistributedOptions& dist,
                               const ShardMap& map) {
  return [&c, train, &model, dist, map](ceres::Problem* problem, double* params,
                                        const std::vector<Episode>&,
                                        const FitOptions& options,
                                        std::vector<int>* block_episodes) {
    const CoeffLayout& layout = *model.layout;
    const std::vector<double> start(params, params + layout.size());
    CoeffFile start_file = SeedCoeffs(model);
    start_file.values = start;
    start_file.integration = options.integration;
    // Per shard, its training episodes (local indices) and their place in `train`.
    std::vector<std::vector<int>> local(c.shards.size()), place(c.shards.size());
    for (std::size_t t = 0; t < train.size(); ++t) {
      local[c.shard_of[train[t]]].push_back(c.local[train[t]]);
      place[c.shard_of[train[t]]].push_back(static_cast<int>(t));
    }
    // This pass's builds, told apart from any earlier pass's or another client's.
    static std::atomic<long> passes{0};
    const std::string generation =
        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "." +
        std::to_string(++passes);
    std::vector<std::size_t> used;
    std::vector<json> builds;
    for (std::size_t s = 0; s < c.shards.size(); ++s) {
      if (local[s].empty()) continue;
      used.push_back(s);
      builds.push_back({{"model", model.name},
                        {"files", c.shards[s]},
                        {"data_root", options.data_root},
                        {"facts", RecordingFactsJson(options.facts)},
                        {"episodes", local[s]},
                        {"window_s", options.window_s},
                        {"stride_s", options.stride_s},
                        {"loss", options.solver.loss},
                        {"loss_scale", options.solver.loss_scale},
                        {"held", options.selection.held},
                        {"smoothing", options.smoothing},
                        {"start", CoeffsText(start_file, model)},
                        {"generation", generation}});
    }
    // Which training episodes have windows, in order: the client's blocks.
    std::vector<int> windows(train.size(), 0), residuals(train.size(), 0);
    int p = -1;
    std::vector<bool> present(layout.blocks.size(), false);
    auto request = [&, builds, used](const std::vector<double>& values, bool jacobians) {
      std::vector<std::string> payloads;
      for (const json& b : builds)
        payloads.push_back(Pack({{"build", b},
                                 {"values", Binary(values)},
                                 {"jacobians", jacobians},
                                 {"threads", dist.worker_threads}}));
      return Answers(map("sums", payloads), payloads.size());
    };
    const std::vector<json> first = request(start, true);
    for (std::size_t k = 0; k < used.size(); ++k) {
      const std::vector<int> w = first[k]["windows"], r = first[k]["residuals"];
      for (std::size_t i = 0; i < w.size(); ++i) {
        windows[place[used[k]][i]] = w[i];
        residuals[place[used[k]][i]] = r[i];
      }
      for (int b : first[k]["blocks"].get<std::vector<int>>()) present[b] = true;
      if (!first[k]["blocks"].empty()) {
        RLFIT_CHECK(p < 0 || p == first[k]["p"].get<int>(), "one tangent size over the shards");
        p = first[k]["p"];
      }
    }
    int total = 0;
    for (int w : windows) total += w;
    if (total == 0) return 0;  // FitEpisodes says why
    // Gathers the shards' answers into the client's episode order (shards in order, each's
    // episodes with windows in order: the order of `train`).
    auto gather = [p](const std::vector<json>& answers, EpisodeSums::Sums* sums) {
      *sums = {};
      for (const json& a : answers) {
        if (!a["ok"].get<bool>()) return false;
        for (auto [key, into] : {std::pair{"cost", &sums->cost},
                                 std::pair{"projected", &sums->projected},
                                 std::pair{"root", &sums->root}}) {
          const std::vector<double> v = Doubles(a[key]);
          into->insert(into->end(), v.begin(), v.end());
        }
      }
      RLFIT_CHECK(sums->projected.empty() || sums->projected.size() == sums->cost.size() * p,
                  "p projected residuals per episode");
      return true;
    };
    auto fetch = [request, gather](const std::vector<double>& values, bool jacobians,
                                   EpisodeSums::Sums* sums) {
      return gather(request(values, jacobians), sums);
    };
    auto store = std::make_shared<RemoteSums>(fetch, start, p);
    EpisodeSums::Sums seeded;
    if (gather(first, &seeded)) store->Seed(start, std::move(seeded));
    // The blocks the shards' residuals use, their coordinates' tangent columns (held: -1).
    const std::vector<bool> held = options.selection.HeldMask(layout);
    std::vector<RemoteEpisodeCost::Block> blocks;
    std::vector<double*> pointers;
    int column = 0;
    for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
      if (!present[b]) continue;
      const ParamBlock& pb = layout.blocks[b];
      RemoteEpisodeCost::Block block{pb.offset, pb.size, {}};
      bool all_held = true;
      for (int i = 0; i < pb.size; ++i) all_held = all_held && held[pb.offset + i];
      for (int i = 0; i < pb.size; ++i)
        block.tangent.push_back(all_held || held[pb.offset + i] ? -1 : column++);
      blocks.push_back(std::move(block));
      pointers.push_back(params + pb.offset);
    }
    RLFIT_CHECK(column == p, "the client's tangent columns are the workers'");
    int with_windows = 0;
    for (std::size_t t = 0; t < train.size(); ++t) {
      if (windows[t] == 0) continue;
      problem->AddResidualBlock(new RemoteEpisodeCost(store, with_windows++, residuals[t], blocks),
                                nullptr, pointers);
      block_episodes->push_back(static_cast<int>(t));
    }
    return total;
  };
}

// Groups of episodes replayed with one set of coefficients each (the "replay" task).
struct ReplayGroup {
  CoeffFile coeffs;
  std::string coefficients_source;
  std::string reference_kind = "none";
  bool reference_seed = false;
  bool provenance = false;         // the splits from the coefficients' provenance (replay)
  std::vector<int> episodes;       // indices into the corpus, in order
  std::vector<std::string> names;  // trajectory CSV names; empty = none written
};

std::vector<ReplayReport> MapReplay(const Corpus& c, const ModelInfo& model,
                                    const std::string& data_root, const ReplayOptions& options,
                                    const std::string& stage_dir,
                                    const std::vector<ReplayGroup>& groups,
                                    const DistributedOptions& dist, const ShardMap& map) {
  std::vector<std::string> payloads;
  std::vector<std::vector<int>> groups_of(c.shards.size());  // per used shard, its groups
  std::vector<std::size_t> used;
  for (std::size_t s = 0; s < c.shards.size(); ++s) {
    json gs = json::array();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      std::vector<int> local;
      json names = groups[g].names.empty() ? json(nullptr) : json::array();
      for (std::size_t i = 0; i < groups[g].episodes.size(); ++i) {
        const int e = groups[g].episodes[i];
        if (c.shard_of[e] != static_cast<int>(s)) continue;
        local.push_back(c.local[e]);
        if (!names.is_null()) names.push_back(groups[g].names[i]);
      }
      if (local.empty()) continue;
      groups_of[s].push_back(static_cast<int>(g));
      gs.push_back({{"coeffs", CoeffsText(groups[g].coeffs, model)},
                    {"coefficients_source", groups[g].coefficients_source},
                    {"reference_kind", groups[g].reference_kind},
                    {"reference_seed", groups[g].reference_seed},
                    {"provenance", groups[g].provenance},
                    {"episodes", local},
                    {"names", names}});
    }
    if (gs.empty()) continue;
    json p = ShardPayload(c, s, model.name, data_root, options.facts, dist.worker_threads);
    p["program"] = options.program;
    p["horizons_s"] = options.horizons_s;
    p["window_s"] = options.window_s;
    p["curve_step_s"] = options.curve_step_s;
    p["stage_dir"] = stage_dir;
    p["groups"] = gs;
    payloads.push_back(Pack(p));
    used.push_back(s);
  }
  const std::vector<json> answers = Answers(map("replay", payloads), payloads.size());
  std::vector<ReplayReport> reports(groups.size());
  for (std::size_t k = 0; k < used.size(); ++k) {
    const json& gs = answers[k]["groups"];
    for (std::size_t j = 0; j < gs.size(); ++j)
      Append(&reports[groups_of[used[k]][j]], ReportFrom(gs[j]));
  }
  return reports;
}

// ReplayOutputNames of the episodes `picked`.
std::vector<std::string> OutputNamesOf(const Corpus& c, const std::vector<int>& picked) {
  std::vector<EpisodeReport> outlines;
  for (int i : picked) {
    EpisodeReport r;
    r.name = c.episodes[i].name;
    r.path = c.episodes[i].path;
    outlines.push_back(std::move(r));
  }
  return ReplayOutputNames(outlines);
}

// "shipped_predictions" when every scored episode of `picked` has a usable shipped prediction
// from its first row, else `otherwise` (ReplayEpisodes' rule).
std::string ReferenceKind(const Corpus& c, const std::vector<int>& picked,
                          const std::string& otherwise) {
  int scored = 0;
  bool all = true;
  for (int i : picked) {
    const Outline& o = c.episodes[i];
    if (o.first < 0) continue;
    ++scored;
    all = all && o.usable && o.first == 0;
  }
  return scored > 0 && all ? "shipped_predictions" : otherwise;
}

// As fit.cc names episodes in the provenance: the path, with "#name" for a segment.
std::string ProvenanceName(const Outline& o) {
  return o.path + (o.segment >= 0 ? "#" + o.name : "");
}

// FileIndices of the corpus' episodes: the same file number for the episodes of one file.
std::vector<int> FileIndicesOf(const Corpus& c) {
  std::vector<Episode> paths(c.episodes.size());
  for (std::size_t i = 0; i < paths.size(); ++i) paths[i].path = c.episodes[i].path;
  return FileIndices(paths);
}

// The fit of `train` (FitEpisodes on the workers' sums) with its held-out replays of `heldout`
// (by the workers), as FitEpisodes fills them.
FitResult FitRemote(const Corpus& c, const std::vector<int>& train,
                    const std::vector<int>& heldout, const CoeffFile& init,
                    const FitOptions& options, const DistributedOptions& dist,
                    const ShardMap& map) {
  const auto t0 = std::chrono::steady_clock::now();
  const ModelInfo& model = FindModel(options.model);
  FitOptions client = options;
  client.solver.threads = 1;  // the client's blocks are cheap; the workers do the work
  FitResult r = FitEpisodes(Placeholders(c, train), {}, init, client,
                            RemoteResiduals(c, train, model, dist, map));
  if (!heldout.empty()) {
    CoeffFile start = init;
    start.integration = options.integration;
    const CoeffFile fitted = r.coeffs;
    ReplayOptions replay = options.replay;
    replay.quiet = true;
    replay.facts = options.facts;  // the workers read their shards again
    // The held-out figures read open loop and windowed errors only: no reference needed.
    std::vector<ReplayGroup> groups(2);
    groups[0].coeffs = start;
    groups[1].coeffs = fitted;
    for (ReplayGroup& g : groups) {
      g.coefficients_source = "coefficients given by the caller";
      g.episodes = heldout;
    }
    std::vector<ReplayReport> reports =
        MapReplay(c, model, options.data_root, replay, "", groups, dist, map);
    r.heldout_before = std::move(reports[0]);
    r.heldout_after = std::move(reports[1]);
    r.heldout.clear();
    r.heldout_fingerprints.clear();
    for (int i : heldout) {
      r.heldout.push_back(ProvenanceName(c.episodes[i]));
      r.heldout_fingerprints.push_back(FingerprintText(c.episodes[i].fingerprint));
    }
    r.coeffs.provenance["heldout_episodes"] = r.heldout;
    r.coeffs.provenance["heldout_fingerprints"] = r.heldout_fingerprints;
    for (const auto& [key, report] :
         {std::pair<const char*, const ReplayReport*>{"heldout_before", &r.heldout_before},
          {"heldout_after", &r.heldout_after}})
      r.coeffs.fit_report[key] = {{"episodes", report->episodes.size()},
                                  {"aggregate", AggregateJson(*report)}};
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.coeffs.fit_report["seconds"] = r.seconds;
  return r;
}

}  // namespace

// --- worker side ----------------------------------------------------------------------------

EpisodeSums::EpisodeSums(std::vector<Episode> episodes, const FitOptions& options,
                         const std::vector<double>& start)
    : episodes_(std::move(episodes)), params_(start),
      problem_(std::make_unique<ceres::Problem>()) {
  const ModelInfo& model = FindModel(options.model);
  const CoeffLayout& layout = *model.layout;
  RLFIT_CHECK(static_cast<int>(params_.size()) == layout.size(), "coefficient count");
  FindFitter(options.model).add_residuals(problem_.get(), params_.data(), episodes_, options,
                                          &block_episodes_);
  HoldCoefficients(problem_.get(), params_.data(), layout, options.selection.HeldMask(layout));
  problem_->GetResidualBlocks(&ids_);
  RLFIT_CHECK(ids_.size() == block_episodes_.size(), "one episode per residual block");
  RLFIT_CHECK(std::is_sorted(block_episodes_.begin(), block_episodes_.end()),
              "an episode's residual blocks one after another");
  windows_.assign(episodes_.size(), 0);
  residuals_.assign(episodes_.size(), 0);
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    const ceres::CostFunction* cost = problem_->GetCostFunctionForResidualBlock(ids_[i]);
    const auto* reduced = dynamic_cast<const StandsForResiduals*>(cost);
    ++windows_[block_episodes_[i]];
    residuals_[block_episodes_[i]] +=
        reduced != nullptr ? reduced->inner_residuals() : cost->num_residuals();
  }
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    double* block = params_.data() + layout.blocks[b].offset;
    if (!problem_->HasParameterBlock(block)) continue;
    blocks_.push_back(static_cast<int>(b));
    if (problem_->IsParameterBlockConstant(block)) continue;
    p_ += problem_->ParameterBlockTangentSize(block);
    has_manifold_ = has_manifold_ || problem_->GetManifold(block) != nullptr;
  }
}

EpisodeSums::Sums EpisodeSums::Evaluate(const std::vector<double>& values, bool jacobians,
                                        int threads) {
  const std::lock_guard<std::mutex> lock(mutex_);
  RLFIT_CHECK(values.size() == params_.size(), "coefficient count");
  std::copy(values.begin(), values.end(), params_.begin());  // the problem's blocks point here
  // The tangent column of each varying block's first coordinate, by its pointer.
  std::map<const double*, int> column;
  int next = 0;
  for (std::size_t b = 0; b < params_.size(); ++b) {
    const double* ptr = params_.data() + b;
    if (!problem_->HasParameterBlock(ptr) || problem_->IsParameterBlockConstant(ptr)) continue;
    column[ptr] = next;
    next += problem_->ParameterBlockTangentSize(ptr);
  }
  RLFIT_CHECK(next == p_, "tangent size");
  // Episodes with windows, in order, and their blocks' range.
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t i = 0; i < ids_.size();) {
    std::size_t j = i;
    while (j < ids_.size() && block_episodes_[j] == block_episodes_[i]) ++j;
    ranges.emplace_back(i, j);
    i = j;
  }
  const int p = p_;
  Sums s;
  s.cost.assign(ranges.size(), 0.0);
  if (jacobians) {
    s.projected.assign(ranges.size() * p, 0.0);
    s.root.assign(ranges.size() * p * p, 0.0);
  }
  std::vector<char> failed(ranges.size(), 0);
  // Problem::EvaluateResidualBlock sets each parameter block's state, which with a manifold
  // rewrites its plus-Jacobian: with a SubsetManifold (a held coefficient) one thread.
  ParallelFor(static_cast<int>(ranges.size()), has_manifold_ ? 1 : threads, [&](int e) {
    // The episode's windows' Jacobian rows and residuals, stacked for one QR at the end.
    Eigen::Index height = 0;
    if (jacobians)
      for (std::size_t i = ranges[e].first; i < ranges[e].second; ++i)
        height += problem_->GetCostFunctionForResidualBlock(ids_[i])->num_residuals();
    Eigen::MatrixXd stacked = Eigen::MatrixXd::Zero(height, p);
    Eigen::VectorXd stacked_r = Eigen::VectorXd::Zero(height);
    Eigen::Index filled = 0;
    std::vector<double*> blocks;
    std::vector<double> r;
    std::vector<std::vector<double>> jac;
    std::vector<double*> jac_pointers;
    for (std::size_t i = ranges[e].first; i < ranges[e].second; ++i) {
      const ceres::ResidualBlockId id = ids_[i];
      const int m = problem_->GetCostFunctionForResidualBlock(id)->num_residuals();
      problem_->GetParameterBlocksForResidualBlock(id, &blocks);
      r.resize(m);
      jac.assign(blocks.size(), {});
      jac_pointers.assign(blocks.size(), nullptr);
      if (jacobians)
        for (std::size_t b = 0; b < blocks.size(); ++b)
          if (!problem_->IsParameterBlockConstant(blocks[b])) {
            jac[b].resize(std::size_t(m) * problem_->ParameterBlockTangentSize(blocks[b]));
            jac_pointers[b] = jac[b].data();
          }
      double cost = 0.0;
      if (!problem_->EvaluateResidualBlock(id, true, &cost, r.data(),
                                           jacobians ? jac_pointers.data() : nullptr)) {
        failed[e] = 1;
        return;
      }
      s.cost[e] += cost;
      if (!jacobians) continue;
      // This window's Jacobian over the p tangent columns, below the previous windows'.
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        if (jac_pointers[b] == nullptr) continue;
        const int t = problem_->ParameterBlockTangentSize(blocks[b]);
        const int c0 = column.at(blocks[b]);
        for (int row = 0; row < m; ++row)
          for (int k = 0; k < t; ++k)
            stacked(filled + row, c0 + k) = jac[b][std::size_t(row) * t + k];
      }
      stacked_r.segment(filled, m) = Eigen::Map<const Eigen::VectorXd>(r.data(), m);
      filled += m;
    }
    if (!jacobians || p == 0) return;
    // J_g = Q R: R's p x p upper triangle and (Q^T r)'s first p entries (rows past the
    // stack's height, when it has fewer than p, stay 0).
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(stacked);
    const Eigen::VectorXd qtr = qr.householderQ().adjoint() * stacked_r;
    const Eigen::Index k = std::min<Eigen::Index>(p, stacked.rows());
    Eigen::Map<Eigen::VectorXd> top(s.projected.data() + std::size_t(e) * p, p);
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> root(
        s.root.data() + std::size_t(e) * p * p, p, p);
    top.head(k) = qtr.head(k);
    root.topRows(k) = qr.matrixQR().topRows(k).triangularView<Eigen::Upper>();
  });
  if (std::find(failed.begin(), failed.end(), 1) != failed.end())
    throw InputError("(fit)", 0, 0, "a rollout window could not be evaluated");
  return s;
}

std::string RunShardTask(const std::string& task, const std::string& payload) {
  try {
    const json p = Unpack(payload);
    json answer;
    if (task == "outline") answer = OutlineTask(p);
    else if (task == "replay") answer = ReplayTask(p);
    else if (task == "sums") answer = SumsTask(p);
    else throw InternalError("unknown shard task " + task);
    return Pack(answer);
  } catch (const InputError& e) {
    return ErrorAnswer("input", e.file(), e.row(), e.column(), e.message());
  } catch (const std::exception& e) {
    return ErrorAnswer("internal", "", 0, 0, e.what());
  }
}

std::vector<std::vector<std::string>> ShardFiles(const std::vector<std::string>& files,
                                                 int shards) {
  const std::size_t n = std::min<std::size_t>(files.size(), std::max(1, shards));
  std::vector<double> size(files.size());
  double total = 0.0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    const auto bytes = fs::file_size(files[i], ec);
    size[i] = ec ? 1.0 : static_cast<double>(bytes) + 1.0;
    total += size[i];
  }
  std::vector<std::vector<std::string>> out(n);
  double before = 0.0;
  for (std::size_t i = 0, s = 0; i < files.size(); ++i) {
    // Move on when this shard has its share and every later shard can still get a file.
    while (s + 1 < n && !out[s].empty() &&
           (before + size[i] / 2 > total * (s + 1) / n || files.size() - i <= n - 1 - s))
      ++s;
    out[s].push_back(files[i]);
    before += size[i];
  }
  return out;
}

bool DistributedOptions::Check(std::string* why) const {
  if (shards < 1) return *why = "--shards must be at least 1", false;
  if (worker_threads < 1) return *why = "--worker-threads must be at least 1", false;
  return true;
}

// --- client side ----------------------------------------------------------------------------

namespace {

// The corpus of a fit or crossval: the recordings' outlines, with --keep-going the files that
// could not be read in `unreadable` (path expansion's, then the workers').
Corpus ReadFitCorpus(const ModelInfo& model, const FitOptions& options, bool classify,
                     const DistributedOptions& dist, const ShardMap& map,
                     std::vector<SkippedInput>* unreadable) {
  const std::vector<std::string> files =
      RecordingFilesFor(model, options.paths, options.data_root, nullptr,
                        options.keep_going ? unreadable : nullptr);
  Corpus c = ReadOutlines(model, files, options.data_root, options.facts, "rlfit", classify,
                          false, false, options.keep_going, dist, map);
  unreadable->insert(unreadable->end(), c.unreadable.begin(), c.unreadable.end());
  RequireSomethingRead(c.episodes.size(), *unreadable, "fit on");
  return c;
}

}  // namespace

ReplayReport DistributedReplay(const ReplayOptions& options, const DistributedOptions& dist,
                               const ShardMap& map, std::ostream& out, std::ostream& warnings) {
  const ModelInfo& model = FindModel(options.model);
  const CoeffFile coeffs = LoadCoefficients(model, options.coeffs_path);
  std::vector<SkippedInput> skipped, unreadable;
  const std::vector<std::string> files = RecordingFilesFor(
      model, options.paths, options.data_root, &skipped, options.keep_going ? &unreadable : nullptr);
  for (const SkippedInput& s : skipped)
    warnings << options.program << ": skipped " << s.path << ": " << s.reason << "\n";
  const bool single_file =
      options.paths.size() == 1 &&
      fs::is_regular_file(ResolveUnderRoot(options.paths[0], options.data_root));
  Corpus c = ReadOutlines(model, files, options.data_root, options.facts, options.program, true,
                          true, single_file, options.keep_going, dist, map);
  unreadable.insert(unreadable.end(), c.unreadable.begin(), c.unreadable.end());
  RequireSomethingRead(c.episodes.size(), unreadable, "replay");
  warnings << c.skip_lines;
  skipped.insert(skipped.end(), c.skipped.begin(), c.skipped.end());
  std::vector<int> kept;
  std::vector<std::string> with_episodes;  // files with episodes, in order
  for (std::size_t i = 0; i < c.episodes.size(); ++i) {
    if (with_episodes.empty() || with_episodes.back() != c.episodes[i].path)
      with_episodes.push_back(c.episodes[i].path);
    if (c.episodes[i].kept) kept.push_back(static_cast<int>(i));
  }
  if (kept.empty())
    throw InputError(with_episodes.empty() ? "(no recordings)" : with_episodes.front(), 0, 0,
                     "no row the " + model.name + " model covers in any input (" +
                         std::to_string(with_episodes.size()) + " files skipped)");
  for (int i : kept) warnings << c.episodes[i].shipped_warning;

  ReplayGroup group;
  group.coeffs = coeffs;
  group.coefficients_source = DescribeCoefficients(model.name, options.coeffs_path);
  group.reference_seed = options.coeffs_path != kSeedCoeffs;
  group.provenance = true;
  group.reference_kind =
      ReferenceKind(c, kept, group.reference_seed ? "seed_coefficients" : "none");
  group.episodes = kept;
  std::unique_ptr<StagedDir> staged;
  if (!options.out_dir.empty()) {
    staged = std::make_unique<StagedDir>(options.out_dir, options.force);
    group.names = OutputNamesOf(c, kept);
  }
  ReplayReport report = std::move(MapReplay(c, model, options.data_root, options,
                                            staged ? staged->dir() : "", {group}, dist, map)[0]);
  report.skipped = skipped;
  report.unreadable = unreadable;
  report.keep_going = options.keep_going;
  out << report.Table();
  if (staged) {
    WriteReplaySummaries(report, coeffs, options, staged.get());
    staged->Commit();
  }
  for (const SkippedInput& u : unreadable)
    warnings << options.program << ": unreadable " << u.path << ": " << u.reason << "\n";
  return report;
}

FitResult DistributedFit(const FitOptions& requested, const DistributedOptions& dist,
                         const ShardMap& map, std::ostream& out) {
  const FitOptions options = WithModelDefaults(requested);
  const ModelInfo& model = FindModel(options.model);
  CheckSelection(options, *model.layout);
  const CoeffFile init = StartingCoeffs(options, model);
  std::vector<SkippedInput> unreadable;
  const Corpus c = ReadFitCorpus(model, options, false, dist, map, &unreadable);
  // SplitEpisodes' rule: by file, so that training and validation never share one.
  std::vector<int> train, heldout;
  const int every = options.holdout_every;
  const std::vector<int> file_of = FileIndicesOf(c);
  for (std::size_t i = 0; i < c.episodes.size(); ++i)
    (every > 0 && file_of[i] % every == every - 1 ? heldout : train)
        .push_back(static_cast<int>(i));
  if (train.empty()) throw InputError("(data)", 0, 0, "no training episodes after the split");
  FitResult r = FitRemote(c, train, heldout, init, options, dist, map);
  if (options.keep_going) {
    json list = json::array();
    for (const SkippedInput& u : unreadable) list.push_back({{"path", u.path}, {"reason", u.reason}});
    r.coeffs.provenance["unreadable"] = list;
  }
  PrintFitReport(options, init, r, unreadable, out);
  if (!options.out_path.empty()) {
    WriteCoeffFile(options.out_path, r.coeffs, *model.layout);
    out << "wrote " << options.out_path << "\n";
  }
  return r;
}

ReplayReport DistributedCrossValidation(const FitOptions& requested, int folds,
                                        const std::string& out_dir,
                                        const DistributedOptions& dist, const ShardMap& map,
                                        std::ostream& out) {
  if (folds < 2) throw InputError("(options)", 0, 0, "--folds must be at least 2");
  const FitOptions options = WithModelDefaults(requested);
  const ModelInfo& model = FindModel(options.model);
  const CoeffLayout& layout = *model.layout;
  CheckSelection(options, layout);
  const CoeffFile init = StartingCoeffs(options, model);
  std::vector<SkippedInput> unreadable;
  const Corpus c = ReadFitCorpus(model, options, true, dist, map, &unreadable);
  const int n = static_cast<int>(c.episodes.size());
  // RunCrossValidation's folds: by file, training and validation never share one.
  const std::vector<int> file_of = FileIndicesOf(c);
  const int files = n == 0 ? 0 : file_of.back() + 1;
  if (files < folds)
    throw InputError("--folds", 0, 0,
                     std::to_string(folds) + " folds but the recordings are only " +
                         std::to_string(files) + " files (" + std::to_string(n) +
                         " episodes; a fold needs a file)");
  std::vector<std::vector<double>> values;
  json fold_coeffs = json::array();
  double seconds = 0.0;
  std::vector<ReplayGroup> after, before;
  std::vector<int> ordered;
  Progress progress("crossval " + model.name, folds, options.quiet);
  for (int f = 0; f < folds; ++f) {
    std::vector<int> train, test;
    for (int i = 0; i < n; ++i) (file_of[i] % folds == f ? test : train).push_back(i);
    FitOptions fold_options = options;
    fold_options.quiet = true;
    FitResult r;
    try {
      r = FitRemote(c, train, {}, init, fold_options, dist, map);
    } catch (const InputError& e) {
      throw InputError(e.file(), e.row(), e.column(),
                       "fold " + std::to_string(f + 1) + " of " + std::to_string(folds) +
                           " (held out: " + c.episodes[test.front()].name +
                           (test.size() > 1 ? " and " + std::to_string(test.size() - 1) + " more"
                                            : std::string()) +
                           "): " + e.message());
    }
    seconds += r.seconds;
    values.push_back(r.coeffs.values);
    fold_coeffs.push_back(CoeffFileToJson(r.coeffs, layout)["coefficients"]);
    // FitEpisodes' held-out replays: its own reference decision, over the fold's episodes.
    ReplayGroup g;
    g.coeffs = r.coeffs;
    g.coefficients_source = "coefficients given by the caller";
    g.reference_kind = ReferenceKind(c, test, "none");
    g.episodes = test;
    after.push_back(g);
    g.coeffs = init;
    g.coeffs.integration = options.integration;
    before.push_back(g);
    ordered.insert(ordered.end(), test.begin(), test.end());
    progress.Tick();
  }
  std::unique_ptr<StagedDir> staged;
  if (!out_dir.empty()) {
    staged = std::make_unique<StagedDir>(out_dir, options.replay.force);
    const std::vector<std::string> names = OutputNamesOf(c, ordered);
    std::size_t k = 0;
    for (ReplayGroup& g : after)
      for (std::size_t i = 0; i < g.episodes.size(); ++i) g.names.push_back(names[k++]);
  }
  std::vector<ReplayGroup> groups = after;
  groups.insert(groups.end(), before.begin(), before.end());
  ReplayOptions replay = options.replay;
  replay.quiet = true;
  replay.facts = options.facts;  // the workers read their shards again
  std::vector<ReplayReport> reports = MapReplay(c, model, options.data_root, replay,
                                                staged ? staged->dir() : "", groups, dist, map);
  ReplayReport combined, combined_start;
  std::vector<int> fold_sizes;
  for (int f = 0; f < folds; ++f) {
    fold_sizes.push_back(static_cast<int>(reports[f].episodes.size()));
    Append(&combined, std::move(reports[f]));
    Append(&combined_start, std::move(reports[folds + f]));
  }
  combined.unreadable = unreadable;
  combined.keep_going = options.keep_going;
  const std::vector<TailRow> tail = CrossvalTail(combined, fold_sizes, options.tail_set);
  PrintCrossValidation(options, folds, c.episodes.size(), seconds, values, combined_start,
                       combined, tail, out);
  if (staged) {
    CoeffFile record = init;
    record.provenance = {
        {"crossval_folds", folds},
        {"fold_coefficients", fold_coeffs},
        {"tail", TailJson(tail)},
        {"git_revision", GitRevision()}};
    ReplayOptions o = options.replay;
    o.out_dir = out_dir;
    o.paths = options.paths;
    o.data_root = options.data_root;
    o.facts = options.facts;
    o.keep_going = options.keep_going;
    o.coeffs_path = "(cross-validation: see coefficients.provenance.fold_coefficients)";
    WriteReplaySummaries(combined, record, o, staged.get());
    staged->Commit();
  }
  return combined;
}

}  // namespace rlfit
