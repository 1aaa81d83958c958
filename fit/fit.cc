// The fit driver: builds the Ceres problem from a model's residuals, solves, estimates
// standard errors, and validates on held-out episodes with the replay machinery.
#include "fit/fit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "fit/aerial_fit.h"
#include "fit/ground_fit.h"
#include "fit/ball_fit.h"
#include "src/common/error.h"
#include "src/common/progress.h"
#include "src/io/files.h"
#include "src/replay/predictor.h"

namespace rlfit {
namespace {

const std::vector<FitterInfo>& Fitters() {
  static const std::vector<FitterInfo> fitters = {
      {"aerial", AddAerialResiduals},
      {"ground", AddGroundResiduals},
      {"ball", AddBallResiduals},
  };
  return fitters;
}

// Ticks a Progress once per solver iteration.
class ProgressCallback : public ceres::IterationCallback {
 public:
  explicit ProgressCallback(Progress* progress) : progress_(progress) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary&) override {
    progress_->Tick();
    return ceres::SOLVER_CONTINUE;
  }

 private:
  Progress* progress_;
};

std::vector<std::string> Names(const std::vector<Episode>& episodes) {
  std::vector<std::string> names;
  for (const Episode& e : episodes) names.push_back(e.path + (e.name.find("_seg") != std::string::npos ? "#" + e.name : ""));
  return names;
}

// Standard errors from the Ceres covariance of the varying blocks, scaled by the reduced
// chi-square 2 F / (m - p) so they do not depend on the guessed residual scales. They assume
// independent residuals; rollout residuals are serially correlated, so read them as lower
// bounds (the cross-validation spread is the honest check).
std::vector<double> StandardErrors(ceres::Problem* problem, std::vector<double>* params,
                                   const CoeffLayout& layout, double final_cost,
                                   std::string* note) {
  std::vector<double> errors(layout.size(), 0.0);
  std::vector<const double*> varying;
  int p = 0;
  for (const ParamBlock& b : layout.blocks) {
    const double* ptr = params->data() + b.offset;
    if (problem->HasParameterBlock(ptr) && !problem->IsParameterBlockConstant(ptr)) {
      varying.push_back(ptr);
      p += b.size;
    }
  }
  if (varying.empty()) return errors;
  ceres::Covariance::Options copts;
  copts.algorithm_type = ceres::DENSE_SVD;
  copts.null_space_rank = -1;  // pseudo-inverse: unobservable directions do not abort
  ceres::Covariance covariance(copts);
  std::vector<std::pair<const double*, const double*>> pairs;
  for (const double* b : varying) pairs.emplace_back(b, b);
  if (!covariance.Compute(pairs, problem)) {
    *note = "covariance could not be computed; standard errors are 0";
    return errors;
  }
  const int m = problem->NumResiduals();
  const double chi2 = m > p ? 2.0 * final_cost / (m - p) : 1.0;
  for (const ParamBlock& b : layout.blocks) {
    const double* ptr = params->data() + b.offset;
    if (std::find(varying.begin(), varying.end(), ptr) == varying.end()) continue;
    std::vector<double> cov(b.size * b.size);
    covariance.GetCovarianceBlock(ptr, ptr, cov.data());
    for (int i = 0; i < b.size; ++i)
      errors[b.offset + i] = std::sqrt(std::max(0.0, cov[i * b.size + i] * chi2));
  }
  return errors;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

nlohmann::json HeldoutJson(const ReplayReport& r) {
  nlohmann::json j = r.ToJson();
  return {{"episodes", j["episodes"].size()}, {"aggregate", j["aggregate"]}};
}

void PrintComparison(const ReplayReport& before, const ReplayReport& after, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof(line), "  %-12s %-6s  %12s  %12s  %12s  %12s\n", "quantity",
                "horizon", "open: start", "open: fitted", "wind: start", "wind: fitted");
  out << line;
  for (const Quantity& q : Quantities(after.has_orientation))
    for (std::size_t h = 0; h < after.horizon_labels.size(); ++h) {
      const bool windowed = h < after.horizons_s.size();
      std::snprintf(line, sizeof(line), "  %-12s %-6s  %12s  %12s  %12s  %12s\n", q.label,
                    after.horizon_labels[h].c_str(), Num(before.OpenLoop(q, h).median).c_str(),
                    Num(after.OpenLoop(q, h).median).c_str(),
                    windowed ? Num(before.Windowed(q, h).median).c_str() : "-",
                    windowed ? Num(after.Windowed(q, h).median).c_str() : "-");
      out << line;
    }
}

}  // namespace

bool FitSelection::Check(const CoeffLayout& layout, std::string* why) const {
  for (const std::string& name : constant_blocks) {
    bool known = false;
    for (const ParamBlock& b : layout.blocks) known = known || b.name == name;
    if (!known) return *why = "unknown parameter block \"" + name + "\"", false;
  }
  return true;
}

bool SolverOptions::Check(std::string* why) const {
  if (loss != "huber" && loss != "cauchy" && loss != "none")
    return *why = "--loss must be huber, cauchy or none", false;
  if (!(loss_scale > 0.0)) return *why = "--loss-scale must be positive", false;
  if (max_iterations < 1) return *why = "--max-iterations must be at least 1", false;
  if (threads < 1) return *why = "--threads must be at least 1", false;
  return true;
}

bool FitOptions::Check(std::string* why) const {
  if (!(window_s > 0.0)) return *why = "--window must be positive", false;
  if (!(stride_s > 0.0)) return *why = "--stride must be positive", false;
  if (holdout_every < 0 || holdout_every == 1)
    return *why = "--holdout-every must be 0 (none) or at least 2", false;
  if (!(integration.tick_rate_hz > 0.0)) return *why = "--tick-rate must be positive", false;
  if (integration.input_delay_s < 0) return *why = "--input-delay must be >= 0", false;
  return solver.Check(why) && replay.Check(why);
}

const FitterInfo& FindFitter(const std::string& model) {
  for (const FitterInfo& f : Fitters())
    if (f.model == model) return f;
  throw InputError(model, 0, 0, "model has no fit");
}

void SplitEpisodes(const std::vector<Episode>& all, int every, std::vector<Episode>* train,
                   std::vector<Episode>* heldout) {
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (every > 0 && static_cast<int>(i % every) == every - 1) heldout->push_back(all[i]);
    else train->push_back(all[i]);
  }
}

FitResult FitEpisodes(const std::vector<Episode>& train, const std::vector<Episode>& heldout,
                      const CoeffFile& init, const FitOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const ModelInfo& model = FindModel(options.model);
  const CoeffLayout& layout = *model.layout;
  std::string why;
  if (!options.selection.Check(layout, &why)) throw InputError("(options)", 0, 0, why);

  FitResult result;
  std::vector<double> params = init.values;
  ceres::Problem problem;
  result.residual_blocks =
      FindFitter(options.model).add_residuals(&problem, params.data(), train, options);
  if (result.residual_blocks == 0)
    throw InputError("(training data)", 0, 0, "no usable rollout windows for model " + model.name);
  for (const std::string& name : options.selection.constant_blocks)
    for (const ParamBlock& b : layout.blocks)
      if (b.name == name && problem.HasParameterBlock(params.data() + b.offset))
        problem.SetParameterBlockConstant(params.data() + b.offset);

  ceres::Solver::Options solver;
  solver.linear_solver_type = ceres::DENSE_QR;
  solver.max_num_iterations = options.solver.max_iterations;
  solver.num_threads = options.solver.threads;
  solver.logging_type = ceres::SILENT;
  // Progress on stderr: solver iterations done out of the maximum, and elapsed time.
  Progress progress("fit " + model.name + " (" + std::to_string(result.residual_blocks) +
                        " windows), iterations",
                    options.solver.max_iterations, options.quiet);
  ProgressCallback callback(&progress);
  solver.callbacks.push_back(&callback);
  ceres::Solver::Summary summary;
  ceres::Solve(solver, &problem, &summary);
  result.cost_initial = summary.initial_cost;
  result.cost_final = summary.final_cost;
  result.solver_summary = summary.BriefReport();

  std::string covariance_note;
  result.coeffs = init;
  result.coeffs.model = model.name;
  result.coeffs.values = params;
  result.coeffs.std_errors =
      StandardErrors(&problem, &params, layout, summary.final_cost, &covariance_note);
  result.coeffs.integration = options.integration;

  CoeffFile start = init;
  start.integration = options.integration;
  result.train = Names(train);
  result.heldout = Names(heldout);
  ReplayOptions replay = options.replay;
  replay.quiet = true;
  if (!heldout.empty()) {
    result.heldout_before = ReplayEpisodes(heldout, *model.make_predictor(start, options.data_root), model, replay);
    result.heldout_after =
        ReplayEpisodes(heldout, *model.make_predictor(result.coeffs, options.data_root), model, replay);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<std::string> constant = options.selection.constant_blocks;
  result.coeffs.provenance = {
      {"git_revision", GitRevision()},
      {"data_root", options.data_root},
      {"paths", options.paths},
      {"train_episodes", result.train},
      {"heldout_episodes", result.heldout},
      {"options",
       {{"window_s", options.window_s}, {"stride_s", options.stride_s},
        {"holdout_every", options.holdout_every}, {"loss", options.solver.loss},
        {"loss_scale", options.solver.loss_scale},
        {"max_iterations", options.solver.max_iterations}, {"constant_blocks", constant}}},
      {"init", options.init_coeffs.empty() ? "seed defaults" : options.init_coeffs}};
  result.coeffs.fit_report = {{"cost_initial", result.cost_initial},
                              {"cost_final", result.cost_final},
                              {"iterations", summary.iterations.size()},
                              {"residual_blocks", result.residual_blocks},
                              {"residuals", problem.NumResiduals()},
                              {"seconds", result.seconds},
                              {"termination", summary.message}};
  if (!covariance_note.empty()) result.coeffs.fit_report["covariance_note"] = covariance_note;
  if (!heldout.empty()) {
    result.coeffs.fit_report["heldout_before"] = HeldoutJson(result.heldout_before);
    result.coeffs.fit_report["heldout_after"] = HeldoutJson(result.heldout_after);
  }
  return result;
}

// The starting coefficients: --init, else the seed notes' values.
CoeffFile StartingCoeffs(const FitOptions& options, const ModelInfo& model) {
  return options.init_coeffs.empty()
             ? DefaultCoeffs(model.name, *model.layout)
             : ReadCoeffFile(options.init_coeffs, model.name, *model.layout);
}

FitResult RunFit(const FitOptions& options, std::ostream& out) {
  const ModelInfo& model = FindModel(options.model);
  const CoeffLayout& layout = *model.layout;
  const CoeffFile init = StartingCoeffs(options, model);
  const std::vector<Episode> all = LoadEpisodesFor(model, options.paths, options.data_root);
  std::vector<Episode> train, heldout;
  SplitEpisodes(all, options.holdout_every, &train, &heldout);
  if (train.empty()) throw InputError("(data)", 0, 0, "no training episodes after the split");

  const FitResult r = FitEpisodes(train, heldout, init, options);
  out << "fit " << model.name << ": " << train.size() << " training episodes, " << heldout.size()
      << " held out, " << r.residual_blocks << " rollout windows of " << options.window_s
      << " s\n";
  out << "  " << r.solver_summary << "\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  cost %.6g -> %.6g in %.2f s\n", r.cost_initial,
                r.cost_final, r.seconds);
  out << line;
  std::snprintf(line, sizeof(line), "  %-20s %14s %14s %14s %12s  %s\n", "coefficient",
                "seed default", "start", "fitted", "std error", "unit");
  out << line;
  for (int i = 0; i < layout.size(); ++i) {
    std::snprintf(line, sizeof(line), "  %-20s %14.6g %14.6g %14.6g %12.3g  %s\n",
                  layout.names[i].c_str(), layout.defaults[i], init.values[i], r.coeffs.values[i],
                  r.coeffs.std_errors[i], layout.units[i].c_str());
    out << line;
  }
  if (!heldout.empty()) {
    out << "held-out episodes (" << heldout.size()
        << "), median error with the starting vs the fitted coefficients:\n";
    PrintComparison(r.heldout_before, r.heldout_after, out);
  }
  if (!options.out_path.empty()) {
    WriteCoeffFile(options.out_path, r.coeffs, layout);
    out << "wrote " << options.out_path << "\n";
  }
  return r;
}

ReplayReport RunCrossValidation(const FitOptions& options, int folds, const std::string& out_dir,
                                std::ostream& out) {
  if (folds < 2) throw InputError("(options)", 0, 0, "--folds must be at least 2");
  const ModelInfo& model = FindModel(options.model);
  const CoeffLayout& layout = *model.layout;
  const CoeffFile init = StartingCoeffs(options, model);
  const std::vector<Episode> all = LoadEpisodesFor(model, options.paths, options.data_root);
  if (static_cast<int>(all.size()) < folds)
    throw InputError("(data)", 0, 0, "fewer episodes than folds");

  ReplayReport combined, combined_start;
  std::vector<Episode> ordered;
  nlohmann::json fold_coeffs = nlohmann::json::array();
  std::vector<std::vector<double>> values;
  Progress progress("crossval " + model.name, folds, options.quiet);
  double seconds = 0.0;
  for (int f = 0; f < folds; ++f) {
    std::vector<Episode> train, test;
    for (std::size_t i = 0; i < all.size(); ++i)
      (static_cast<int>(i % folds) == f ? test : train).push_back(all[i]);
    FitOptions fold_options = options;
    fold_options.quiet = true;  // the folds show progress, not each fit
    const FitResult r = FitEpisodes(train, test, init, fold_options);
    seconds += r.seconds;
    values.push_back(r.coeffs.values);
    fold_coeffs.push_back(CoeffFileToJson(r.coeffs, layout)["coefficients"]);
    auto append = [](ReplayReport* into, const ReplayReport& from) {
      if (into->episodes.empty() && into->model.empty()) {
        *into = from;
        return;
      }
      for (const EpisodeReport& e : from.episodes) into->episodes.push_back(e);
      if (from.curve.size() > into->curve.size()) {
        into->curve.resize(from.curve.size());
        into->curve_horizons_s = from.curve_horizons_s;
      }
      for (std::size_t c = 0; c < from.curve.size(); ++c)
        into->curve[c].insert(into->curve[c].end(), from.curve[c].begin(), from.curve[c].end());
    };
    append(&combined, r.heldout_after);
    append(&combined_start, r.heldout_before);
    for (const Episode& e : test) ordered.push_back(e);
    progress.Tick();
  }

  out << "cross-validation of " << model.name << ": " << folds << " folds over " << all.size()
      << " episodes; every episode replayed with coefficients fitted without it ("
      << Num(seconds) << " s of fitting)\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  %-20s %14s %14s %14s  %s\n", "coefficient", "seed default",
                "fold mean", "fold spread", "unit");
  out << line;
  for (int i = 0; i < layout.size(); ++i) {
    double mean = 0.0, var = 0.0;
    for (const auto& v : values) mean += v[i] / values.size();
    for (const auto& v : values) var += (v[i] - mean) * (v[i] - mean) / std::max<std::size_t>(1, values.size() - 1);
    std::snprintf(line, sizeof(line), "  %-20s %14.6g %14.6g %14.3g  %s\n", layout.names[i].c_str(),
                  layout.defaults[i], mean, std::sqrt(var), layout.units[i].c_str());
    out << line;
  }
  out << "held-out error, seed coefficients vs fitted on the other folds (medians):\n";
  PrintComparison(combined_start, combined, out);
  out << combined.Table();
  if (!out_dir.empty()) {
    CoeffFile record = init;
    record.provenance = {{"crossval_folds", folds}, {"fold_coefficients", fold_coeffs},
                         {"git_revision", GitRevision()}};
    ReplayOptions replay = options.replay;
    replay.out_dir = out_dir;
    replay.paths = options.paths;
    replay.data_root = options.data_root;
    replay.coeffs_path = "(cross-validation: see coefficients.provenance.fold_coefficients)";
    WriteReplayOutputs(combined, ordered, record, replay);
  }
  return combined;
}

}  // namespace rlfit
