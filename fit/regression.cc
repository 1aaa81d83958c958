// Baselines in results/ and the regression check against them.
#include "fit/regression.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <ostream>
#include <thread>

#include "src/common/error.h"
#include "src/common/resources.h"
#include "src/io/files.h"
#include "src/replay/predictor.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;

std::string ModelDir(const RegressionOptions& o, const std::string& model) {
  return (fs::path(o.results_dir) / model).string();
}

// The replay every baseline is measured with: the model's default data, default options.
ReplayReport ReplayDefault(const ModelInfo& model, const CoeffFile& coeffs,
                           const std::string& data_root, bool quiet) {
  ReplayOptions replay;
  replay.model = model.name;
  replay.data_root = data_root;
  replay.quiet = quiet;
  const std::vector<Episode> episodes = LoadEpisodesFor(model, {}, data_root);
  ReplayExtras extras;
  extras.provenance = coeffs.provenance;  // train / held-out splits of the table
  extras.coefficients_source = "committed fit (results/" + model.name + "/coeffs.json)";
  return ReplayEpisodes(episodes, *model.make_predictor(coeffs, data_root), model, replay,
                        extras);
}

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
  EnsureDirectory(dir);
  const std::string revision = GitRevision();  // before this writes into the tree
  const FitResult r = RunFit(fit, out);
  CoeffFile coeffs = r.coeffs;
  coeffs.provenance["data_root"] = "(datasets root)";  // machine-independent
  WriteCoeffFile(dir + "/coeffs.json", coeffs, *model.layout);
  const ReplayReport report = ReplayDefault(model, coeffs, options.data_root, options.quiet);
  nlohmann::json baseline;
  baseline["schema_version"] = kBaselineSchemaVersion;
  baseline["model"] = model.name;
  baseline["data"] = model.default_paths;
  baseline["episodes"] = report.episodes.size();
  baseline["git_revision"] = revision;
  baseline["coefficients"] = "coeffs.json";
  baseline["metrics"] = GuardedMetrics(report);
  WriteFileAtomic(dir + "/baseline.json", baseline.dump(1) + "\n");
  WriteFileAtomic(dir + "/summary.txt", report.Table());
  out << "recorded " << dir << "/{coeffs.json,baseline.json,summary.txt}\n";
}

std::vector<std::string> RunRegressionCheck(const RegressionOptions& options, std::ostream& out) {
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
    if (RequireKey(baselines.back(), "schema_version", baseline_path).get<int>() !=
        kBaselineSchemaVersion)
      throw InputError(baseline_path, 0, 0, "unsupported schema_version");
    committed.push_back(ReadCoeffFile(dir + "/coeffs.json", name, *model.layout));
  }

  // 1. The replays with the committed coefficients, one model per thread on every core (each
  // replay is single-threaded; they share nothing but the read-only arena). Their progress
  // lines would interleave, so they run quietly when more than one runs at a time.
  std::vector<nlohmann::json> replayed(models.size());
  {
    const int workers = std::min<int>(SolverOptions::DefaultThreads(), models.size());
    std::atomic<std::size_t> next{0};
    std::vector<std::exception_ptr> errors(models.size());
    auto work = [&] {
      for (std::size_t i = next++; i < models.size(); i = next++) {
        try {
          replayed[i] = GuardedMetrics(ReplayDefault(FindModel(models[i]), committed[i],
                                                     options.data_root,
                                                     options.quiet || workers > 1));
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
    };
    std::vector<std::thread> threads;
    for (int t = 1; t < workers; ++t) threads.emplace_back(work);
    work();
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);  // the first model's error, in the given order
  }

  std::vector<std::string> failures;
  for (std::size_t m = 0; m < models.size(); ++m) {
    const std::string& name = models[m];
    const ModelInfo& model = FindModel(name);
    const std::string dir = ModelDir(options, name);
    const std::string baseline_path = dir + "/baseline.json";
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

    // 2. A refit with the committed options must reproduce the committed coefficients.
    if (options.refit) {
      FitOptions fit;
      fit.model = name;
      fit.data_root = options.data_root;
      fit.quiet = true;
      const std::vector<Episode> all = LoadEpisodesFor(model, {}, options.data_root);
      std::vector<Episode> train, heldout;
      SplitEpisodes(all, fit.holdout_every, &train, &heldout);
      CoeffFile start = DefaultCoeffs(name, *model.layout);
      if (options.warm_refit) {
        start = coeffs;
        fit.init_coeffs = dir + "/coeffs.json";
        fit.last_pass_only = true;
      }
      const FitResult r = FitEpisodes(train, {}, start, fit);
      double largest_move = 0.0;  // in committed standard errors
      for (int i = 0; i < model.layout->size(); ++i) {
        const double committed = coeffs.values[i];
        // No standard error (none recorded, or null: the fit could not determine it): the
        // refit must then reproduce the committed value to round-off, never pass unchecked.
        const double sigma = coeffs.std_errors.empty() || !std::isfinite(coeffs.std_errors[i])
                                 ? 0.0
                                 : coeffs.std_errors[i];
        const double allowed = options.refit_sigmas * sigma + 1e-6 * std::abs(committed);
        if (sigma > 0.0)
          largest_move = std::max(largest_move, std::abs(r.coeffs.values[i] - committed) / sigma);
        if (std::abs(r.coeffs.values[i] - committed) > allowed)
          failures.push_back(name + " refit " + model.layout->names[i] + ": " +
                             Num(r.coeffs.values[i]) + " differs from committed " +
                             Num(committed) + " by more than " + Num(allowed));
      }
      out << "check " << name << ": refit from "
          << (options.warm_refit ? "the committed coefficients" : "the seed values")
          << " compared on " << model.layout->size() << " coefficients (largest move "
          << Num(largest_move) << " standard errors; " << r.coeffs.fit_report["iterations"]
          << " iterations, " << Num(r.seconds) << " s: "
          << r.coeffs.fit_report["termination"].get<std::string>() << ")\n";
    }
  }
  return failures;
}

}  // namespace rlfit
