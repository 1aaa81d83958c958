// Baselines in results/ and the regression check against them.
#include "fit/regression.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <ostream>
#include <thread>

#include "src/common/error.h"
#include "src/common/resources.h"
#include "src/io/files.h"
#include "src/io/recording.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/predictor.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;

std::string ModelDir(const RegressionOptions& o, const std::string& model) {
  return (fs::path(o.results_dir) / model).string();
}

// The replay every baseline is measured with: the model's default data, default options.
ReplayReport ReplayDefault(const ModelInfo& model, const CoeffFile& coeffs,
                           const std::vector<Episode>& episodes, const std::string& data_root,
                           bool quiet) {
  ReplayOptions replay;
  replay.model = model.name;
  replay.data_root = data_root;
  replay.quiet = quiet;
  ReplayExtras extras;
  extras.provenance = coeffs.provenance;  // train / held-out splits of the table
  extras.coefficients_source = "committed fit (results/" + model.name + "/coeffs.json)";
  return ReplayEpisodes(episodes, *model.make_predictor(coeffs, data_root), model, replay,
                        extras);
}

// The models' default recordings for one check, each file read once however many jobs use
// it (a model's replay and refit; jump and car share freestyling.txt), each model's list
// assembled once and freed when its last job is done. Thread-safe: the first job to ask reads,
// the others wait for it.
class EpisodeCache {
 public:
  // `uses[name]`: how many jobs will ask for model `name`'s episodes.
  EpisodeCache(std::string data_root, const std::map<std::string, int>& uses)
      : data_root_(std::move(data_root)) {
    for (const auto& [name, count] : uses) {
      models_[name].uses = count;
      for (const std::string& file : RecordingFilesFor(FindModel(name), {}, data_root_))
        ++files_[file].uses;
    }
  }

  // The episodes LoadEpisodesFor(model, {}, data_root) gives; valid until Done(model) was
  // called once per use.
  const std::vector<Episode>& For(const ModelInfo& model) {
    std::promise<std::vector<Episode>> promise;
    const auto [future, first] = Slot(&models_.at(model.name), &promise);
    if (first) {
      try {
        std::vector<Episode> episodes;
        for (const std::string& file : RecordingFilesFor(model, {}, data_root_)) {
          Entry& entry = files_.at(file);
          std::promise<std::vector<Episode>> file_promise;
          const auto [read, first_read] = Slot(&entry, &file_promise);
          if (first_read) {
            try {
              file_promise.set_value(ReadRecording(file));
            } catch (...) {
              file_promise.set_exception(std::current_exception());
            }
          }
          const std::vector<Episode>& episodes_of_file = read.get();
          episodes.insert(episodes.end(), episodes_of_file.begin(), episodes_of_file.end());
          Release(&entry);  // this model's list holds its copy
        }
        CheckEpisodeKinds(model, episodes);
        promise.set_value(std::move(episodes));
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
    }
    return future.get();
  }

  // One job of `model` is done with its episodes.
  void Done(const ModelInfo& model) { Release(&models_.at(model.name)); }

 private:
  struct Entry {
    int uses = 0;
    bool started = false;
    std::shared_future<std::vector<Episode>> episodes;
  };

  // The entry's future, and whether the caller is the first (and must fulfil `promise`).
  std::pair<std::shared_future<std::vector<Episode>>, bool> Slot(
      Entry* entry, std::promise<std::vector<Episode>>* promise) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const bool first = !entry->started;
    if (first) {
      entry->started = true;
      entry->episodes = promise->get_future().share();
    }
    return {entry->episodes, first};
  }

  void Release(Entry* entry) {
    std::shared_future<std::vector<Episode>> last;  // freed outside the lock
    const std::lock_guard<std::mutex> lock(mutex_);
    if (--entry->uses == 0) last = std::move(entry->episodes);
  }

  std::string data_root_;
  std::mutex mutex_;
  // Built in the constructor; only the entries change afterwards (under mutex_).
  std::map<std::string, Entry> models_, files_;
};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

}  // namespace

bool RegressionOptions::Check(std::string* why) const {
  if (!(relative_tolerance >= 0.0) || !(absolute_tolerance >= 0.0))
    return *why = "tolerances must be >= 0", false;
  if (!(refit_sigmas > 0.0)) return *why = "--refit-sigmas must be positive", false;
  if (threads < 0) return *why = "--threads must be at least 1", false;
  return true;
}

nlohmann::json GuardedMetrics(const ReplayReport& report) {
  nlohmann::json m = nlohmann::json::object();
  for (const Quantity& q : Quantities(report.has_orientation)) {
    for (std::size_t h = 0; h < report.horizon_labels.size(); ++h) {
      const std::string key = std::string(q.key) + "." + report.horizon_labels[h];
      // A horizon no episode reaches has no statistics: not guarded (and a baseline that
      // had it reports it as "no longer reported").
      const Stats open = report.OpenLoop(q, h);
      if (open.n > 0) {
        m["open_loop." + key + ".median"] = open.median;
        m["open_loop." + key + ".p90"] = open.p90;
      }
      if (h < report.horizons_s.size()) {
        const Stats w = report.Windowed(q, h);
        if (w.n > 0) {
          m["windowed." + key + ".median"] = w.median;
          m["windowed." + key + ".p90"] = w.p90;
        }
      }
    }
  }
  return m;
}

namespace {

// Refuses, naming the file and the key, a baseline the check could not compare against: another
// schema, another model's baseline, no metric at all (a check over nothing passes), or a metric
// that is not a finite number (null, "0.5").
void CheckBaselineJson(const nlohmann::json& baseline, const std::string& path,
                       const std::string& model) {
  const nlohmann::json& version = RequireKey(baseline, "schema_version", path);
  if (!version.is_number_integer() || version.get<long long>() != kBaselineSchemaVersion)
    throw InputError(path, 0, 0,
                     "unsupported schema_version " + version.dump() + " (this check reads " +
                         std::to_string(kBaselineSchemaVersion) + ")");
  const nlohmann::json& of = RequireKey(baseline, "model", path);
  if (!of.is_string() || of.get<std::string>() != model)
    throw InputError(path, 0, 0,
                     "\"model\" is " + of.dump() + ": the baseline of another model, checked as " +
                         model + "'s");
  const nlohmann::json& metrics = RequireKey(baseline, "metrics", path);
  if (!metrics.is_object() || metrics.empty())
    throw InputError(path, 0, 0, "\"metrics\" must be a non-empty object of error metrics");
  for (const auto& [key, value] : metrics.items())
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      throw InputError(path, 0, 0,
                       "metrics.\"" + key + "\" is " + value.dump() + ", not a finite number");
}

}  // namespace

void RecordBaseline(const std::string& model_name, const RegressionOptions& options,
                    std::ostream& out) {
  const ModelInfo& model = FindModel(model_name);
  if (options.data_root.empty())
    throw InputError("(data)", 0, 0, MissingDataRootMessage());
  FitOptions fit;
  fit.model = model.name;
  fit.data_root = options.data_root;
  fit.quiet = options.quiet;
  const std::string dir = ModelDir(options, model.name);
  EnsureDirectory(options.results_dir);
  const std::string revision = GitRevision();  // before this writes into the tree
  CoeffFile coeffs;
  std::string kept_text;  // --keep-coeffs: the committed file, byte for byte
  if (options.keep_coeffs) {
    coeffs = ReadCoeffFile(dir + "/coeffs.json", model.name, *model.layout);
    std::ifstream in(dir + "/coeffs.json", std::ios::binary);
    kept_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    coeffs = RunFit(fit, out).coeffs;
    coeffs.provenance["data_root"] = "(datasets root)";  // machine-independent
  }
  // The three files are one result: staged beside results/MODEL and swapped in together, so an
  // interrupted or failed baseline leaves the earlier three as they were (never new
  // coefficients beside the old baseline).
  StagedDir staged(dir, options.force);
  if (options.keep_coeffs) WriteFileAtomic(staged.Path("coeffs.json"), kept_text);
  else WriteCoeffFile(staged.Path("coeffs.json"), coeffs, *model.layout);
  const ReplayReport report = ReplayDefault(
      model, coeffs, LoadEpisodesFor(model, {}, options.data_root), options.data_root,
      options.quiet);
  nlohmann::json baseline;
  baseline["schema_version"] = kBaselineSchemaVersion;
  baseline["model"] = model.name;
  baseline["data"] = DefaultRecordings(model.name, options.data_root, /*relative=*/true);
  baseline["episodes"] = report.episodes.size();
  baseline["git_revision"] = revision;
  baseline["coefficients"] = "coeffs.json";
  baseline["metrics"] = GuardedMetrics(report);
  WriteFileAtomic(staged.Path("baseline.json"), DumpJson(baseline, 1) + "\n");
  WriteFileAtomic(staged.Path("summary.txt"), report.Table());
  staged.Commit();
  out << "recorded " << dir << "/{coeffs.json,baseline.json,summary.txt}\n";
}

std::vector<std::string> RunRegressionCheck(const RegressionOptions& options, std::ostream& out) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> models = options.models;
  if (models.empty())
    for (const ModelInfo& m : Models())
      if (fs::is_regular_file(ModelDir(options, m.name) + "/baseline.json"))
        models.push_back(m.name);
  if (models.empty())
    throw InputError(options.results_dir, 0, 0, "no results/<model>/baseline.json to check");
  if (options.data_root.empty())
    throw InputError("(data)", 0, 0, MissingDataRootMessage());

  // Every file is read (and refused) before any work starts.
  std::vector<nlohmann::json> baselines;
  std::vector<CoeffFile> committed;
  for (const std::string& name : models) {
    const ModelInfo& model = FindModel(name);
    const std::string dir = ModelDir(options, name);
    const std::string baseline_path = dir + "/baseline.json";
    baselines.push_back(ReadJsonFile(baseline_path));
    CheckBaselineJson(baselines.back(), baseline_path, name);
    committed.push_back(ReadCoeffFile(dir + "/coeffs.json", name, *model.layout));
  }

  // The jobs: a replay with the committed coefficients per model and (options.refit) a refit
  // per model, all independent. They run on a pool of one worker per core (at most --threads),
  // longest first (the
  // refits by the seconds their committed fit took, then the replays), so the two long refits
  // overlap and the short jobs fill the cores around their serial parts (building the
  // problem, the covariance). Each refit evaluates its residuals on every core as `rlfit fit`
  // does; each replay is single-threaded. Progress lines would interleave: the jobs run quietly
  // and each reports on stderr when it ends.
  const std::size_t n = models.size();
  std::vector<nlohmann::json> replayed(n);
  std::vector<FitResult> refits(n);
  std::vector<double> replay_s(n, 0.0), refit_s(n, 0.0), load_s(n, 0.0);
  struct Job {
    std::size_t model;
    bool refit;
    double expected_s;
  };
  std::vector<Job> jobs;
  for (std::size_t m = 0; m < n; ++m) {
    if (options.refit) {
      const nlohmann::json& report = committed[m].fit_report;
      const double seconds = report.is_object() && report.contains("seconds") &&
                                     report["seconds"].is_number()
                                 ? report["seconds"].get<double>()
                                 : 0.0;
      jobs.push_back({m, true, seconds});
    }
    jobs.push_back({m, false, -1.0});
  }
  std::map<std::string, int> uses;
  for (const Job& job : jobs) ++uses[models[job.model]];
  EpisodeCache cache(options.data_root, uses);
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const Job& a, const Job& b) { return a.expected_s > b.expected_s; });
  const int workers = std::min<int>(
      options.threads > 0 ? options.threads : SolverOptions::DefaultThreads(),
      static_cast<int>(jobs.size()));
  std::mutex progress_mutex;
  int done = 0;
  auto run = [&](const Job& job) {
    const std::size_t m = job.model;
    const ModelInfo& model = FindModel(models[m]);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<Episode>& all = cache.For(model);
    const auto loaded = std::chrono::steady_clock::now();
    if (!job.refit) {
      // The episodes the committed fit knew (trained on or held out), so that recordings the
      // root holds beyond them (the public dataset's held-back quarter, one's own) do not
      // move the figures its baseline was recorded on; all of them if it names none.
      std::vector<Episode> known;
      for (const Episode& ep : all)
        if (SplitOf(ep, committed[m].provenance, options.data_root) != "unseen")
          known.push_back(ep);
      replayed[m] = GuardedMetrics(ReplayDefault(model, committed[m], known.empty() ? all : known,
                                                 options.data_root, /*quiet=*/true));
    } else {
      FitOptions fit;
      fit.model = model.name;
      fit.data_root = options.data_root;
      fit.quiet = true;
      fit.standard_errors = false;  // only the values are compared
      if (options.threads > 0) fit.solver.threads = std::max(1, options.threads / workers);
      // The episodes the committed fit was trained on (its provenance), so that the refit
      // solves the problem the committed fit solved, whatever the split rule has become since;
      // a provenance that names none of them: the split `rlfit fit` makes.
      std::vector<Episode> train, heldout;
      for (const Episode& ep : all)
        if (SplitOf(ep, committed[m].provenance, options.data_root) == "train")
          train.push_back(ep);
      if (train.empty()) SplitEpisodes(all, fit.holdout_every, &train, &heldout);
      CoeffFile start_coeffs = SeedCoeffs(model);
      if (options.warm_refit) {
        start_coeffs = committed[m];
        fit.init_coeffs = ModelDir(options, model.name) + "/coeffs.json";
        fit.last_pass_only = true;
      }
      refits[m] = FitEpisodes(train, {}, start_coeffs, fit);
    }
    cache.Done(model);
    const auto end = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(end - loaded).count();
    load_s[m] += std::chrono::duration<double>(loaded - start).count();
    (job.refit ? refit_s : replay_s)[m] = seconds;
    const std::lock_guard<std::mutex> lock(progress_mutex);
    ++done;
    if (!options.quiet)
      std::cerr << "check: " << done << "/" << jobs.size() << " " << model.name
                << (job.refit ? " refit" : " replay") << " done in " << Num(seconds) << " s\n";
  };
  {
    std::atomic<std::size_t> next{0};
    std::vector<std::exception_ptr> errors(jobs.size());
    auto work = [&] {
      for (std::size_t i = next++; i < jobs.size(); i = next++) {
        try {
          run(jobs[i]);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
    };
    std::vector<std::thread> threads;
    for (int t = 1; t < workers; ++t) threads.emplace_back(work);
    work();
    for (std::thread& t : threads) t.join();
    // The first error in the models' order (a replay's before its model's refit).
    std::exception_ptr first;
    std::size_t first_rank = std::numeric_limits<std::size_t>::max();
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (errors[i] && 2 * jobs[i].model + jobs[i].refit < first_rank) {
        first = errors[i];
        first_rank = 2 * jobs[i].model + jobs[i].refit;
      }
    if (first) std::rethrow_exception(first);
  }

  // The comparisons, in the models' order.
  std::vector<std::string> failures;
  for (std::size_t m = 0; m < n; ++m) {
    const std::string& name = models[m];
    const ModelInfo& model = FindModel(name);
    const std::string baseline_path = ModelDir(options, name) + "/baseline.json";
    const nlohmann::json& baseline = baselines[m];
    const CoeffFile& coeffs = committed[m];
    const nlohmann::json& now = replayed[m];
    const nlohmann::json& then = RequireKey(baseline, "metrics", baseline_path);
    int checked = 0;
    for (const auto& [key, value] : then.items()) {
      if (!now.contains(key)) {
        failures.push_back(name + " " + key + ": no longer reported (baseline " +
                           Num(value.get<double>()) + ")");
        continue;
      }
      const double base = value.get<double>(), current = now[key].get<double>();
      const double limit = base * (1.0 + options.relative_tolerance) + options.absolute_tolerance;
      ++checked;
      if (current > limit)
        failures.push_back(name + " " + key + ": " + Num(current) + " is worse than baseline " +
                           Num(base) + " (limit " + Num(limit) + ")");
    }
    out << "check " << name << ": " << checked << " error metrics against " << baseline_path
        << "\n";

    // A refit with the committed options must reproduce the committed coefficients.
    if (options.refit) {
      const FitResult& r = refits[m];
      double largest_move = 0.0;  // in committed standard errors
      for (int i = 0; i < model.layout->size(); ++i) {
        const double committed_value = coeffs.values[i];
        // No standard error (none recorded, or null: the fit could not determine it): the
        // refit must then reproduce the committed value to round-off, never pass unchecked.
        const double sigma = coeffs.std_errors.empty() || !std::isfinite(coeffs.std_errors[i])
                                 ? 0.0
                                 : coeffs.std_errors[i];
        const double allowed = options.refit_sigmas * sigma + 1e-6 * std::abs(committed_value);
        if (sigma > 0.0)
          largest_move =
              std::max(largest_move, std::abs(r.coeffs.values[i] - committed_value) / sigma);
        if (std::abs(r.coeffs.values[i] - committed_value) > allowed)
          failures.push_back(name + " refit " + model.layout->names[i] + ": " +
                             Num(r.coeffs.values[i]) + " differs from committed " +
                             Num(committed_value) + " by more than " + Num(allowed));
      }
      out << "check " << name << ": refit from "
          << (options.warm_refit ? "the committed coefficients" : "the seed values")
          << " compared on " << model.layout->size() << " coefficients (largest move "
          << Num(largest_move) << " standard errors; " << r.coeffs.fit_report["iterations"]
          << " iterations: " << r.coeffs.fit_report["termination"].get<std::string>() << ")\n";
    }
  }
  // Where the time went (wall seconds of each job, jobs running side by side).
  for (std::size_t m = 0; m < n; ++m)
    out << "check " << models[m] << ": time: load " << Num(load_s[m]) << " s, replay "
        << Num(replay_s[m]) << " s" << (options.refit ? ", refit " + Num(refit_s[m]) + " s" : "")
        << "\n";
  out << "check: " << Num(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                              .count())
      << " s in all, " << jobs.size() << " jobs on "
      << workers << " workers\n";
  return failures;
}

}  // namespace rlfit
