// The fit driver: builds the Ceres problem from a model's residuals, solves, estimates
// standard errors, and validates on held-out episodes with the replay machinery.
#include "fit/fit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <future>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>

#include <Eigen/Dense>
#include <glog/logging.h>

#include "fit/aerial_fit.h"
#include "fit/jump_fit.h"
#include "fit/ground_fit.h"
#include "fit/vehicle_fit.h"
#include "fit/ball_fit.h"
#include "fit/wall_fit.h"
#include "fit/car_fit.h"
#include "fit/fit_common.h"
#include "fit/fitters.h"
#include "src/common/constants.h"
#include "src/replay/coeff_choice.h"
#include "src/common/error.h"
#include "src/common/number_text.h"
#include "src/common/progress.h"
#include "src/io/arena_file.h"
#include "src/io/coeff_file.h"
#include "src/io/files.h"
#include "src/io/recording.h"
#include "src/replay/predictor.h"
#include "src/replay/registry.h"

namespace rlfit {
namespace {

// A model's default loss. The table below takes it from this function rather than from a
// braced {"huber", 3.0}: GCC 12 at -O3 warned -Wmaybe-uninitialized (14 lines) on the
// SolverOptions::loss string of each braced member, on the exception path that destroys a
// partly built table (a false positive of its analysis of aggregate-initialisation cleanups;
// a member initialised from a call's result is seen as whole).
SolverOptions DefaultLoss(const char* loss, double loss_scale) {
  SolverOptions options;
  options.loss = loss;
  options.loss_scale = loss_scale;
  return options;
}

}  // namespace

// The fit layer's half of the registry (fit/fitters.h): each fitter under its model's
// registered name (src/replay/registry.h; a test checks the two agree): those below and those of
// the models in folders of their own (FolderFitters: fit/models/<name>_fit.cc, listed by CMake),
// in the registry's order.
const std::vector<FitterInfo>& Fitters() {
  static const std::vector<FitterInfo> fitters = [] {
    std::vector<FitterInfo> all = {
        // Huber at 3 sigmas: the car fits have few gross outliers.
        {"aerial", AddAerialResiduals, DefaultLoss("huber", 3.0)},
        {"ground", AddGroundResiduals, DefaultLoss("huber", 3.0)},
        {"vehicle", AddVehicleResiduals, DefaultLoss("huber", 3.0)},
        {"jump", AddJumpResiduals, DefaultLoss("huber", 3.0)},
        {"wall", AddWallResiduals, DefaultLoss("huber", 3.0)},
        // Cauchy at 0.3 sigmas: 1% of the ball's 1 s windows (a bounce off an edge sending the
        // prediction elsewhere, an unscreened touch) hold 77% of the squared error at the
        // defaults, while the median window's error is ~0.12 sigma per residual; the knee sits
        // near 6x the median window's cost. With Huber at 3, those windows pulled drag to -0.026
        // (free flight says -0.0304) and worsened every held-out horizon.
        // Two passes: the first differentiates over steps that span many contact-tick jumps and
        // finds the trend, the second over steps 10x smaller to settle (ball_fit.h).
        // The ball's arena (BallArena: read and its grid built, ~0.5 s of one core) beside the
        // recordings.
        // Held by default at their measured values (`--free NAME` fits one anyway):
        //  - drag at ln(0.97) /s (game::kBallDrag: the free-flight decay measured on the
        //    recordings, -0.03045 /s, and Bullet's linear damping of 0.03): fitted, it settles
        //    0.3% stronger (-0.03055) to trade against the rolling and the contacts, and held it
        //    predicts better held out over eight crossval protocols (NOTES, "Drag held");
        //  - contact_radius at 93.1504 uu and recovery at 0.797 (game::kBallContactRadiusMeasured,
        //    game::kBallPenetrationRecoveryMeasured: the contact boundary and the push-out's slope
        //    measured per floor bounce, NOTES push30): fitted, every fold moves them a little
        //    (42 folds: 93.155-93.178 uu, 0.761-0.802) and the tail reshuffles with them; held,
        //    five of the six crossval figures win over the nine protocols and none loses, the
        //    last-row p90 by -4.5 uu (NOTES, hold34).
        {"ball", AddBallResiduals, DefaultLoss("cauchy", 0.3), {1.0, 0.1},
         [](const FitOptions& options) { BallArena(options.data_root); },
         {{"drag", game::kBallDrag},
          {"contact_radius", game::kBallContactRadiusMeasured},
          {"recovery", game::kBallPenetrationRecoveryMeasured}}},
        // The car: the aerial and ground sub-models through the switch, Huber as both of them.
        {"car", AddCarResiduals, DefaultLoss("huber", 3.0)},
    };
    for (FitterInfo& f : FolderFitters()) all.push_back(std::move(f));
    // A fitter of no registered model goes last (tests/fitters_test.cc refuses it).
    auto place = [](const FitterInfo& f) {
      const ModelDescriptor* d = LookUpDescriptor(f.model);
      return d == nullptr ? std::numeric_limits<int>::max() : d->order;
    };
    std::stable_sort(all.begin(), all.end(), [&place](const FitterInfo& a, const FitterInfo& b) {
      return place(a) < place(b);
    });
    return all;
  }();
  return fitters;
}

namespace {

// Ceres logs each non-finite residual block as a warning of several kB (glog, to stderr since
// nothing initialises it) and a failed solve again as an error. FitEpisodes reports a failure
// once, as the one error line of the tool, so Ceres' own logging is kept to fatal errors.
// Once per process: `rlfit check` runs several fits at a time, and glog's flag is a plain int.
void QuietCeresLogging() {
  static std::once_flag once;
  std::call_once(once, [] {
    FLAGS_minloglevel = std::max<int>(FLAGS_minloglevel, google::GLOG_FATAL);
  });
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

// Ends the solve once a successful step moved every varying coefficient by less than
// `sigmas` of its standard error (SolverOptions::step_sigmas). Needs
// Solver::Options::update_state_every_iteration so the parameters are current.
class StepInSigmasCallback : public ceres::IterationCallback {
 public:
  // `params` the solver's parameter array; `scale` one standard error per entry, only those of
  // `varying` entries that are finite and positive count.
  StepInSigmasCallback(const std::vector<double>* params, std::vector<int> varying,
                       std::vector<double> scale, double sigmas)
      : params_(params), varying_(std::move(varying)), scale_(std::move(scale)),
        sigmas_(sigmas), previous_(*params) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& it) override {
    if (it.iteration == 0 || !it.step_is_successful) return ceres::SOLVER_CONTINUE;
    double largest = 0.0;
    for (int i : varying_)
      largest = std::max(largest, std::abs((*params_)[i] - previous_[i]) / scale_[i]);
    previous_ = *params_;
    last_step_sigmas_ = largest;

    if (largest < sigmas_) {
      stopped_ = true;
      return ceres::SOLVER_TERMINATE_SUCCESSFULLY;
    }
    return ceres::SOLVER_CONTINUE;
  }
  bool stopped() const { return stopped_; }
  double last_step_sigmas() const { return last_step_sigmas_; }

 private:
  const std::vector<double>* params_;
  std::vector<int> varying_;
  std::vector<double> scale_;
  double sigmas_;
  std::vector<double> previous_;
  bool stopped_ = false;
  double last_step_sigmas_ = 0.0;
};

std::vector<std::string> Names(const std::vector<Episode>& episodes) {
  std::vector<std::string> names;
  for (const Episode& e : episodes) names.push_back(e.path + (e.segment >= 0 ? "#" + e.name : ""));
  return names;
}

std::vector<std::string> Fingerprints(const std::vector<Episode>& episodes) {
  std::vector<std::string> out;
  for (const Episode& e : episodes) out.push_back(FingerprintText(e.fingerprint));
  return out;
}


// A number in a message or table: 6 significant digits, as %g.
std::string Num(double v) { return MessageNumber(v, 6); }

nlohmann::json HeldoutJson(const ReplayReport& r) {
  return {{"episodes", r.episodes.size()}, {"aggregate", AggregateJson(r)}};
}

// A median for the held-out table: "n/a" where no figure exists (no held-out episode has a
// covered row reaching that horizon), not the empty Stats' 0.
std::string Median(const Stats& s) { return s.n > 0 ? Num(s.median) : "n/a"; }

void PrintComparison(const ReplayReport& before, const ReplayReport& after, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof(line), "  %-12s %-6s  %12s  %12s  %12s  %12s\n", "quantity",
                "horizon", "open: start", "open: fitted", "wind: start", "wind: fitted");
  out << line;
  for (const Quantity& q : Quantities(after.has_orientation))
    for (std::size_t h = 0; h < after.horizon_labels.size(); ++h) {
      const bool windowed = h < after.horizons_s.size();
      std::snprintf(line, sizeof(line), "  %-12s %-6s  %12s  %12s  %12s  %12s\n", q.label,
                    after.horizon_labels[h].c_str(), Median(before.OpenLoop(q, h)).c_str(),
                    Median(after.OpenLoop(q, h)).c_str(),
                    windowed ? Median(before.Windowed(q, h)).c_str() : "-",
                    windowed ? Median(after.Windowed(q, h)).c_str() : "-");
      out << line;
    }
}

// The episodes of `model`'s fit (LoadEpisodesFor), with the fitter's `prepare` (FitterInfo)
// running beside the reading. Errors as LoadEpisodesFor's alone: prepare's are dropped here.
// With --keep-going the files that cannot be read go to `unreadable`.
std::vector<Episode> LoadForFit(const ModelInfo& model, const FitOptions& options,
                                std::vector<SkippedInput>* unreadable) {
  std::future<void> prepared;
  for (const FitterInfo& fitter : Fitters())
    if (fitter.model == model.name && fitter.prepare)
      prepared = std::async(std::launch::async, [&fitter, &options] {
        try {
          fitter.prepare(options);
        } catch (...) {
          // Met again where the fit needs it (see FitterInfo::prepare).
        }
      });
  // (An exception from the reading waits for `prepared` in its destructor.)
  ReadOptions read;
  read.facts = options.facts;
  std::vector<SkippedInput> skipped;
  std::vector<Episode> all = LoadEpisodesFor(model, options.paths, options.data_root, &skipped,
                                             read, options.keep_going ? unreadable : nullptr);
  if (prepared.valid()) prepared.get();
  for (const SkippedInput& s : skipped)
    std::cerr << "rlfit: skipped " << s.path << ": " << s.reason << "\n";
  RequireSomethingRead(all.size(), *unreadable, "fit on");
  for (const SkippedInput& u : *unreadable)
    std::cerr << "rlfit: unreadable " << u.path << ": " << u.reason << "\n";
  return all;
}

}  // namespace

StandardErrors ComputeStandardErrors(ceres::Problem* problem, std::vector<double>* params,
                                     const CoeffLayout& layout, double final_cost,
                                     const std::vector<int>& block_episodes, int threads) {
  QuietCeresLogging();
  StandardErrors out;
  out.robust.assign(layout.size(), 0.0);
  out.iid.assign(layout.size(), 0.0);
  std::vector<double*> varying;
  // The coefficient (flat index) of each column of the Jacobian and the covariance: the varying
  // blocks' tangent coordinates, in order. A block with a manifold (only SubsetManifold, from
  // FitSelection) has one column per coefficient it leaves free.
  std::vector<int> coeff_of;
  for (const ParamBlock& b : layout.blocks) {
    double* ptr = params->data() + b.offset;
    if (!problem->HasParameterBlock(ptr) || problem->IsParameterBlockConstant(ptr)) continue;
    varying.push_back(ptr);
    const ceres::Manifold* manifold = problem->GetManifold(ptr);
    if (manifold == nullptr) {
      for (int i = 0; i < b.size; ++i) coeff_of.push_back(b.offset + i);
      continue;
    }
    RLFIT_CHECK(manifold->AmbientSize() == b.size, "manifold of a parameter block");
    const int tangent = manifold->TangentSize();
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> plus(b.size, tangent);
    RLFIT_CHECK(manifold->PlusJacobian(ptr, plus.data()), "manifold's plus Jacobian");
    for (int j = 0; j < tangent; ++j) {
      int row = -1;
      for (int i = 0; i < b.size; ++i)
        if (plus(i, j) != 0.0) {
          RLFIT_CHECK(row < 0 && plus(i, j) == 1.0, "a manifold that only holds coordinates");
          row = i;
        }
      RLFIT_CHECK(row >= 0, "a manifold that only holds coordinates");
      coeff_of.push_back(b.offset + row);
    }
  }
  const int p = static_cast<int>(coeff_of.size());
  if (varying.empty()) return out;
  // From here on a varying coefficient's errors are NaN until they are known.
  auto unknown = [&](const std::string& note) {
    for (int k : coeff_of) out.robust[k] = out.iid[k] = std::nan("");
    out.note = note;
    return out;
  };
  if (!std::isfinite(final_cost))
    return unknown("the final cost is not finite: no standard errors");

  // Per episode: s_g = J_g^T r_g, summed into sum_g s_g s_g^T. Evaluated before
  // ceres::Covariance, which must never see a non-finite Jacobian (its SVD crashes on one).
  std::vector<ceres::ResidualBlockId> ids;
  problem->GetResidualBlocks(&ids);
  RLFIT_CHECK(ids.size() == block_episodes.size(), "one episode per residual block");
  std::map<int, std::vector<ceres::ResidualBlockId>> by_episode;
  for (std::size_t i = 0; i < ids.size(); ++i) by_episode[block_episodes[i]].push_back(ids[i]);
  Eigen::MatrixXd meat = Eigen::MatrixXd::Zero(p, p);
  Eigen::VectorXd column_size = Eigen::VectorXd::Zero(p);  // sum |J_ij| over rows i
  for (const auto& [episode, episode_ids] : by_episode) {
    ceres::Problem::EvaluateOptions eval;
    eval.parameter_blocks = varying;
    eval.residual_blocks = episode_ids;
    eval.num_threads = threads;
    std::vector<double> residuals;
    ceres::CRSMatrix jacobian;
    if (!problem->Evaluate(eval, nullptr, &residuals, nullptr, &jacobian))
      return unknown("the Jacobian at the fitted coefficients could not be evaluated (not "
                     "finite): no standard errors");
    Eigen::VectorXd score = Eigen::VectorXd::Zero(p);
    for (int r = 0; r < jacobian.num_rows; ++r)
      for (int k = jacobian.rows[r]; k < jacobian.rows[r + 1]; ++k) {
        if (!std::isfinite(jacobian.values[k]) || !std::isfinite(residuals[r]))
          return unknown("the Jacobian at the fitted coefficients is not finite: no standard "
                         "errors");
        score(jacobian.cols[k]) += jacobian.values[k] * residuals[r];
        column_size(jacobian.cols[k]) += std::abs(jacobian.values[k]);
      }
    meat += score * score.transpose();
  }
  if (!meat.allFinite())
    return unknown("the episodes' gradients are not finite: no standard errors");
  // A coefficient the residuals do not depend on sits in the pseudo-inverse's null space, where
  // it reports a variance of 0: it is not known to be exact, it is not known at all.
  std::string undetermined;
  for (int row = 0; row < p; ++row)
    if (!(column_size(row) > 0.0))
      undetermined += (undetermined.empty() ? "" : ", ") + layout.names[coeff_of[row]];
  const std::string undetermined_note =
      undetermined.empty() ? "" : "the residuals do not determine " + undetermined;
  if (!(column_size.array() > 0.0).any())  // nothing to invert
    return unknown(undetermined_note + ": no standard errors");

  const std::vector<const double*> varying_const(varying.begin(), varying.end());
  ceres::Covariance::Options copts;
  copts.algorithm_type = ceres::DENSE_SVD;
  copts.null_space_rank = -1;  // pseudo-inverse: unobservable directions do not abort
  copts.num_threads = threads;
  ceres::Covariance covariance(copts);
  Eigen::MatrixXd c(p, p);
  const std::string also = undetermined.empty() ? "" : " (" + undetermined_note + ")";
  if (!covariance.Compute(varying_const, problem) ||
      !covariance.GetCovarianceMatrixInTangentSpace(varying_const, c.data()))
    return unknown("the covariance could not be computed" + also + ": no standard errors");
  if (!c.allFinite())
    return unknown("the covariance is not finite" + also + ": no standard errors");
  const int m = FullResidualCount(*problem);  // before the windows' reduction
  const double chi2 = m > p ? 2.0 * final_cost / (m - p) : 1.0;

  out.clusters = static_cast<int>(by_episode.size());
  const double g = out.clusters;
  const Eigen::MatrixXd robust = c * meat * c * (g > 1 ? g / (g - 1) : 1.0);
  for (int row = 0; row < p; ++row) {
    const int k = coeff_of[row];
    if (!(column_size(row) > 0.0) || !(c(row, row) > 0.0)) {  // see `undetermined`
      out.iid[k] = out.robust[k] = std::nan("");
      if (column_size(row) > 0.0)  // in J's null space although the residuals depend on it
        undetermined += (undetermined.empty() ? "" : ", ") + layout.names[k];
      continue;
    }
    out.iid[k] = std::sqrt(c(row, row) * chi2);
    out.robust[k] = std::sqrt(std::max(0.0, robust(row, row)));
  }
  if (!undetermined.empty())
    out.note = "the residuals do not determine " + undetermined + ": no standard error";
  if (out.clusters < p)
    out.note += std::string(out.note.empty() ? "" : "; ") + "fewer training episodes (" +
                std::to_string(out.clusters) + ") than fitted coefficients (" +
                std::to_string(p) + "): the cluster-robust errors are rough";
  return out;
}

bool FitSelection::Check(const CoeffLayout& layout, std::string* why) const {
  // freed's names are checked by WithModelDefaults, against the model's held_by_default.
  for (const std::string& name : freed)
    if (std::find(held.begin(), held.end(), name) != held.end())
      return *why = "--hold and --free both name \"" + name + "\"", false;
  for (const std::string& name : held) {
    bool known = std::find(layout.names.begin(), layout.names.end(), name) != layout.names.end();
    for (const ParamBlock& b : layout.blocks) known = known || b.name == name;
    if (known) continue;
    auto list = [](const auto& items, auto name_of) {
      std::string text;
      for (const auto& item : items) text += (text.empty() ? "" : ", ") + name_of(item);
      return text;
    };
    return *why = "--hold: unknown parameter block or coefficient \"" + name +
                  "\" (this model's blocks: " +
                  list(layout.blocks, [](const ParamBlock& b) { return b.name; }) +
                  "; coefficients: " +
                  list(layout.names, [](const std::string& n) { return n; }) + ")",
           false;
  }
  return true;
}

std::vector<bool> FitSelection::HeldMask(const CoeffLayout& layout) const {
  std::vector<bool> mask(static_cast<std::size_t>(layout.size()), false);
  for (const std::string& name : held) {
    bool block = false;
    for (const ParamBlock& b : layout.blocks)
      if (b.name == name) {
        block = true;
        for (int i = b.offset; i < b.offset + b.size; ++i) mask[static_cast<std::size_t>(i)] = true;
      }
    if (block) continue;  // a block's name wins over a coefficient's
    for (int i = 0; i < layout.size(); ++i)
      if (layout.names[i] == name) mask[static_cast<std::size_t>(i)] = true;
  }
  return mask;
}

bool SolverOptions::Check(std::string* why) const {
  if (!loss.empty() && loss != "huber" && loss != "cauchy" && loss != "none")
    return *why = "--loss must be huber, cauchy or none", false;
  if (!(loss_scale >= 0.0)) return *why = "--loss-scale must be positive", false;
  // Plain squares have no threshold: a scale given with them would be dropped without a word.
  if (loss == "none" && loss_scale > 0.0)
    return *why = "--loss-scale has no meaning with --loss none (plain squares): drop one", false;
  if (max_iterations < 1) return *why = "--max-iterations must be at least 1", false;
  if (threads < 1) return *why = "--threads must be at least 1", false;
  if (!(step_sigmas >= 0.0)) return *why = "--step-sigmas must be >= 0", false;
  return true;
}

bool FitOptions::Check(std::string* why) const {
  if (!(window_s > 0.0)) return *why = "--window must be positive", false;
  if (!(stride_s >= kMinStrideS))
    return *why = "--stride must be at least " + Num(kMinStrideS) + " s, got " + Num(stride_s), false;
  if (holdout_every < 0 || holdout_every == 1)
    return *why = "--holdout-every must be 0 (none) or at least 2", false;
  if (tail_set < 0) return *why = "--tail-set must be 0 (one fold's size) or positive", false;
  std::string integ_why;
  if (!integration.Check(&integ_why))
    return *why = "integration settings (--tick-rate, --input-delay): " + integ_why, false;
  return solver.Check(why) && replay.Check(why);
}

namespace {
// The coefficients one --hold name covers (a block's, or one coefficient), as HeldMask reads it.
std::vector<bool> NameMask(const std::string& name, const CoeffLayout& layout) {
  FitSelection one;
  one.held = {name};
  return one.HeldMask(layout);
}
}  // namespace

FitOptions WithModelDefaults(const FitOptions& options) {
  FitOptions out = options;
  const FitterInfo& fitter = FindFitter(options.model);
  const SolverOptions& d = fitter.defaults;
  if (out.solver.loss.empty()) out.solver.loss = d.loss;
  if (out.solver.loss_scale == 0.0) out.solver.loss_scale = d.loss_scale;
  if (out.model_timing) {
    const Integration& timing = FindDescriptor(options.model).timing;
    out.integration.input_delay_s = timing.input_delay_s;
    out.integration.tick_phase = timing.tick_phase;
  }
  const std::vector<FitSelection::HeldValue>& by_default = fitter.held_by_default;
  auto named = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const std::string& name : out.selection.freed)
    if (std::none_of(by_default.begin(), by_default.end(),
                     [&](const FitSelection::HeldValue& h) { return h.name == name; })) {
      std::string list;
      for (const FitSelection::HeldValue& h : by_default)
        list += (list.empty() ? "" : ", ") + h.name;
      throw InputError("(options)", 0, 0,
                       "--free " + name + ": the " + options.model +
                           " fit does not hold it by default (held by default: " +
                           (list.empty() ? "none" : list) + ")");
    }
  // A name whose coefficients --hold already holds (by their own names or their block's, as
  // `--hold geometry`) stays at the start's value.
  const CoeffLayout& layout = *FindModel(options.model).layout;
  const std::vector<bool> held = out.selection.HeldMask(layout);
  for (const FitSelection::HeldValue& h : by_default) {
    const std::vector<bool> mask = NameMask(h.name, layout);
    bool already = true;
    for (std::size_t i = 0; i < mask.size(); ++i) already = already && (!mask[i] || held[i]);
    if (!named(out.selection.freed, h.name) && !already) {
      out.selection.held.push_back(h.name);
      out.selection.held_at.push_back(h);
    }
  }
  return out;
}

CoeffFile WithHeldValues(const CoeffFile& start, const FitSelection& selection,
                         const CoeffLayout& layout) {
  CoeffFile out = start;
  for (const FitSelection::HeldValue& h : selection.held_at) {
    const std::vector<bool> mask = NameMask(h.name, layout);
    for (std::size_t i = 0; i < mask.size() && i < out.values.size(); ++i)
      if (mask[i]) out.values[i] = h.value;
  }
  return out;
}

namespace {

// Models grouped by the text of a default of their fit: "a (m1, m2), b (m3)".
std::string GroupedByDefault(const std::function<std::string(const SolverOptions&)>& value) {
  std::vector<std::pair<std::string, std::string>> groups;  // value, models
  for (const FitterInfo& f : Fitters()) {
    const std::string v = value(f.defaults);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == v; });
    if (it == groups.end()) groups.emplace_back(v, f.model);
    else it->second += ", " + f.model;
  }
  std::string text;
  for (const auto& [v, models] : groups)
    text += (text.empty() ? "" : ", ") + v + " (" + models + ")";
  return text;
}

}  // namespace

std::string DefaultLossText() {
  return GroupedByDefault([](const SolverOptions& o) { return o.loss; });
}

std::string DefaultLossScaleText() {
  return GroupedByDefault([](const SolverOptions& o) { return MessageNumber(o.loss_scale); });
}

const FitterInfo& FindFitter(const std::string& model) {
  for (const FitterInfo& f : Fitters())
    if (f.model == model) return f;
  throw InputError(model, 0, 0, "model has no fit");
}

std::vector<int> FileIndices(const std::vector<Episode>& all) {
  std::vector<int> out(all.size());
  int file = -1;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i == 0 || all[i].path.empty() || all[i].path != all[i - 1].path) ++file;
    out[i] = file;
  }
  return out;
}

void SplitEpisodes(const std::vector<Episode>& all, int every, std::vector<Episode>* train,
                   std::vector<Episode>* heldout) {
  const std::vector<int> file = FileIndices(all);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (every > 0 && file[i] % every == every - 1) heldout->push_back(all[i]);
    else train->push_back(all[i]);
  }
}

void SplitEpisodes(std::vector<Episode>&& all, int every, std::vector<Episode>* train,
                   std::vector<Episode>* heldout) {
  const std::vector<int> file = FileIndices(all);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (every > 0 && file[i] % every == every - 1)
      heldout->push_back(std::move(all[i]));
    else
      train->push_back(std::move(all[i]));
  }
  all.clear();
}

void HoldCoefficients(ceres::Problem* problem, double* params, const CoeffLayout& layout,
                      const std::vector<bool>& held) {
  for (const ParamBlock& b : layout.blocks) {
    double* block = params + b.offset;
    if (!problem->HasParameterBlock(block) || problem->IsParameterBlockConstant(block)) continue;
    std::vector<int> held_here;
    for (int i = 0; i < b.size; ++i)
      if (held[static_cast<std::size_t>(b.offset + i)]) held_here.push_back(i);
    if (static_cast<int>(held_here.size()) == b.size)
      problem->SetParameterBlockConstant(block);
    else if (!held_here.empty())
      problem->SetManifold(block, new ceres::SubsetManifold(b.size, held_here));
  }
}

void CheckSelection(const FitOptions& options, const CoeffLayout& layout) {
  std::string why;
  if (!options.selection.Check(layout, &why)) throw InputError("(options)", 0, 0, why);
}

FitResult FitEpisodes(const std::vector<Episode>& train, const std::vector<Episode>& heldout,
                      const CoeffFile& requested_init, const FitOptions& requested) {
  return FitEpisodes(train, heldout, requested_init, requested,
                     FindFitter(requested.model).add_residuals);
}

FitResult FitEpisodes(const std::vector<Episode>& train, const std::vector<Episode>& heldout,
                      const CoeffFile& requested_init, const FitOptions& requested,
                      const AddResidualsFn& add_residuals) {
  QuietCeresLogging();
  const FitOptions options = WithModelDefaults(requested);
  const auto t0 = std::chrono::steady_clock::now();
  const ModelInfo& model = FindModel(options.model);
  const CoeffLayout& layout = *model.layout;
  CheckSelection(options, layout);
  const CoeffFile init = WithHeldValues(requested_init, options.selection, layout);
  const std::vector<bool> held = options.selection.HeldMask(layout);

  // Who the errors name: the fit and where it started.
  const std::string fit_name = "fit " + model.name + " from " +
                               (options.init_coeffs.empty() ? std::string("the seed coefficients")
                                                            : options.init_coeffs);
  std::string why;
  if (!options.integration.Check(&why)) throw InputError(fit_name, 0, 0, "integration." + why);
  RLFIT_CHECK(static_cast<int>(init.values.size()) == layout.size(), "coefficient count");
  for (int i = 0; i < layout.size(); ++i)
    if (!layout.Bound(i).Contains(init.values[i]))
      throw InputError(fit_name, 0, 0,
                       "starting value of " + layout.names[i] + " " + Num(init.values[i]) +
                           " is outside its bounds [" + Num(layout.Bound(i).lower) + ", " +
                           Num(layout.Bound(i).upper) + "] " + layout.units[i]);

  FitResult result;
  std::vector<double> params = init.values;
  const FitterInfo& fitter = FindFitter(options.model);
  // One solve per smoothing pass, each starting where the previous one ended (a single pass
  // for the models whose derivative is exact). The last pass's problem gives the errors.
  std::unique_ptr<ceres::Problem> problem;
  std::vector<int> block_episodes;
  ceres::Solver::Summary summary;
  int iterations = 0;
  const std::size_t first_pass = options.last_pass_only ? fitter.smoothing_passes.size() - 1 : 0;
  Progress progress("fit " + model.name + ", iterations",
                    options.solver.max_iterations *
                        static_cast<int>(fitter.smoothing_passes.size() - first_pass),
                    options.quiet);
  // The step scale of SolverOptions::step_sigmas: the starting file's standard errors if it
  // has them, else (from the second pass on) the previous pass's.
  std::vector<double> step_scale;
  if (init.std_errors.size() == init.values.size()) step_scale = init.std_errors;
  std::string stop_notes;
  for (std::size_t pass = first_pass; pass < fitter.smoothing_passes.size(); ++pass) {
    FitOptions pass_options = options;
    pass_options.smoothing = fitter.smoothing_passes[pass];
    pass_options.quiet = options.quiet || pass > 0;
    problem = std::make_unique<ceres::Problem>();
    block_episodes.clear();
    result.residual_blocks = add_residuals(problem.get(), params.data(), train,
                                                  pass_options, &block_episodes);
    if (result.residual_blocks == 0) {
      // Why, for a stranger: most often every episode is shorter than one window.
      const auto span = [](const Episode& e) {
        return e.rows.empty() ? 0.0 : e.rows.back().t_s - e.rows.front().t_s;
      };
      const Episode* longest = nullptr;
      for (const Episode& e : train)
        if (longest == nullptr || span(e) > span(*longest)) longest = &e;
      std::string why = "no usable rollout windows for model " + model.name + " in " +
                        std::to_string(train.size()) + " training episode" +
                        (train.size() == 1 ? "" : "s");
      if (longest != nullptr)
        why += " (the longest, " + longest->name + ", " + Num(span(*longest)) +
               " s; a window needs --window " + Num(options.window_s) +
               " s of rows the model covers)";
      throw InputError("(training data)", 0, 0, why);
    }
    HoldCoefficients(problem.get(), params.data(), layout, held);
    // Every varying coefficient stays within its bounds, so a fit never writes a file that the
    // reader (replay) would refuse.
    for (const ParamBlock& b : layout.blocks) {
      double* block = params.data() + b.offset;
      if (!problem->HasParameterBlock(block) || problem->IsParameterBlockConstant(block)) continue;
      for (int i = 0; i < b.size; ++i) {
        const CoeffBound bound = layout.Bound(b.offset + i);
        if (std::isfinite(bound.lower)) problem->SetParameterLowerBound(block, i, bound.lower);
        if (std::isfinite(bound.upper)) problem->SetParameterUpperBound(block, i, bound.upper);
      }
    }

    ceres::Solver::Options solver;
    solver.linear_solver_type = ceres::DENSE_QR;
    solver.max_num_iterations = options.solver.max_iterations;
    solver.num_threads = options.solver.threads;
    solver.logging_type = ceres::SILENT;
    // No projected line search after each trust-region step. Ceres runs one on every step of a
    // problem with bounds (all of ours) and it evaluates the gradient, i.e. every rollout's
    // Jacobian, at its trial points: a rejected step cost ~14 s instead of ~0.4 s on the ball
    // fit (15 perturbed rollouts per window instead of one). The bounds still hold: Ceres
    // projects every candidate point onto them (ParameterBlock::Plus).
    solver.max_num_line_search_step_size_iterations = 0;
    // Progress on stderr: solver iterations done out of the maximum, and elapsed time.
    ProgressCallback callback(&progress);
    solver.callbacks.push_back(&callback);
    std::unique_ptr<StepInSigmasCallback> step_stop;
    if (options.solver.step_sigmas > 0.0 && !step_scale.empty()) {
      std::vector<int> scaled;
      for (const ParamBlock& b : layout.blocks) {
        double* block = params.data() + b.offset;
        if (!problem->HasParameterBlock(block) || problem->IsParameterBlockConstant(block))
          continue;
        for (int i = b.offset; i < b.offset + b.size; ++i)
          if (!held[static_cast<std::size_t>(i)] && std::isfinite(step_scale[i]) &&
              step_scale[i] > 0.0)
            scaled.push_back(i);
      }
      if (!scaled.empty()) {
        step_stop = std::make_unique<StepInSigmasCallback>(&params, scaled, step_scale,
                                                           options.solver.step_sigmas);
        solver.update_state_every_iteration = true;
        solver.callbacks.push_back(step_stop.get());
      }
    }
    ceres::Solve(solver, problem.get(), &summary);
    if (step_stop && step_stop->stopped()) {
      summary.message = "Step below " + Num(options.solver.step_sigmas) +
                        " standard errors: largest move " + Num(step_stop->last_step_sigmas()) +
                        " standard errors.";
      stop_notes += (stop_notes.empty() ? "" : "; ") + summary.message;
    }
    // A failed solve ends the fit: no standard errors, no held-out replay, nothing written.
    bool params_finite = true;
    for (double v : params) params_finite = params_finite && std::isfinite(v);
    if (summary.termination_type == ceres::FAILURE ||
        summary.termination_type == ceres::USER_FAILURE || !std::isfinite(summary.final_cost) ||
        !params_finite) {
      std::string message = summary.message;
      std::replace(message.begin(), message.end(), '\n', ' ');
      const std::string where =
          fitter.smoothing_passes.size() > 1 ? " (pass " + std::to_string(pass + 1) + ")" : "";
      const std::string start = std::isfinite(summary.initial_cost)
                                    ? ""
                                    : " (the cost at the starting coefficients is not finite)";
      throw InputError(fit_name, 0, 0,
                       "the solver failed" + where + ": " +
                           (message.empty() ? std::string("non-finite cost") : message) + start +
                           "; no coefficients written");
    }
    if (pass == first_pass) result.cost_initial = summary.initial_cost;
    iterations += static_cast<int>(summary.iterations.size());
    result.solver_summary += (pass > first_pass ? "\n  " : "") +
                             (fitter.smoothing_passes.size() > 1
                                  ? "pass " + std::to_string(pass + 1) + " (smoothing " +
                                        Num(fitter.smoothing_passes[pass]) + "): "
                                  : std::string()) +
                             summary.BriefReport() +
                             (step_stop && step_stop->stopped() ? " (" + summary.message + ")"
                                                                : std::string());
    // The next pass's step scale: this pass's standard errors at its end (the cost functions
    // keep the last Jacobian, so this is mostly the covariance of a p x p problem).
    if (pass + 1 < fitter.smoothing_passes.size() && step_scale.empty() &&
        options.solver.step_sigmas > 0.0)
      step_scale = ComputeStandardErrors(problem.get(), &params, layout, summary.final_cost,
                                         block_episodes, options.solver.threads)
                       .robust;
  }
  result.cost_final = summary.final_cost;
  // The coefficients are the starting ones, whatever the solver says (its count of successful
  // steps includes the evaluation at the start).
  result.stopped_at_start = params == init.values;
  if (result.stopped_at_start)
    result.solver_summary = "stopped at its start: " + result.solver_summary;

  result.coeffs = init;
  result.coeffs.model = model.name;
  result.coeffs.values = params;
  result.coeffs.integration = options.integration;
  // What it ran on: the fitters hold the committed fits of the models beneath fixed
  // (fit/wall_fit.cc, fit/powerslide_fit.cc), and the file says so.
  result.coeffs.runs_on = CommittedRunsOn(layout);

  CoeffFile start = init;
  start.integration = options.integration;
  result.train = Names(train);
  result.heldout = Names(heldout);
  result.train_fingerprints = Fingerprints(train);
  result.heldout_fingerprints = Fingerprints(heldout);
  ReplayOptions replay = options.replay;
  replay.quiet = true;
  // The two held-out replays (each single-threaded) do not need the standard errors (replay
  // reads the values and the integration): with two threads or more they run beside the
  // covariance, each on its own thread (the same tables either way).
  const CoeffFile fitted = result.coeffs;
  auto replay_with = [&](const CoeffFile& coeffs) {
    return ReplayEpisodes(heldout, *model.make_predictor(coeffs, options.data_root), model,
                          replay);
  };
  const bool beside = !heldout.empty() && options.solver.threads > 1;
  std::future<ReplayReport> before, after;
  if (beside) {
    before = std::async(std::launch::async, replay_with, std::cref(start));
    after = std::async(std::launch::async, replay_with, std::cref(fitted));
  }
  StandardErrors errors;
  if (options.standard_errors) {
    errors = ComputeStandardErrors(problem.get(), &params, layout, summary.final_cost,
                                   block_episodes, options.solver.threads);
  } else {
    errors.robust.assign(layout.size(), std::nan(""));
    errors.iid = errors.robust;
    errors.note = "standard errors not computed (FitOptions::standard_errors is off)";
  }
  result.coeffs.std_errors = errors.robust;
  // An error beyond kMaxStdErrorWidths of its bounds says nothing, and the reader refuses it:
  // written as null (not determined), with a note.
  for (int i = 0; i < layout.size(); ++i) {
    double& e = result.coeffs.std_errors[static_cast<std::size_t>(i)];
    if (!StdErrorAboveCap(e, layout.Bound(i))) continue;
    errors.note += (errors.note.empty() ? "" : "; ") + layout.names[i] + ": standard error " +
                   Num(e) + " is more than " + Num(kMaxStdErrorWidths) +
                   " widths of its bounds, written as null";
    e = std::nan("");
  }
  if (beside) {
    result.heldout_before = before.get();
    result.heldout_after = after.get();
  } else if (!heldout.empty()) {
    result.heldout_before = replay_with(start);
    result.heldout_after = replay_with(fitted);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // --hold's names as given, blocks and single coefficients apart.
  std::vector<std::string> constant_blocks, constant_coefficients;
  for (const std::string& name : options.selection.held) {
    const bool block = std::any_of(layout.blocks.begin(), layout.blocks.end(),
                                   [&](const ParamBlock& b) { return b.name == name; });
    (block ? constant_blocks : constant_coefficients).push_back(name);
  }
  result.coeffs.provenance = {
      {"git_revision", GitRevision()},
      {"data_root", options.data_root},
      {"paths", options.paths},
      {"train_episodes", result.train},
      {"heldout_episodes", result.heldout},
      {"train_fingerprints", result.train_fingerprints},
      {"heldout_fingerprints", result.heldout_fingerprints},
      {"options",
       {{"window_s", options.window_s}, {"stride_s", options.stride_s},
        {"holdout_every", options.holdout_every}, {"loss", options.solver.loss},
        {"loss_scale", options.solver.loss_scale},
        {"max_iterations", options.solver.max_iterations},
        {"step_sigmas", options.solver.step_sigmas}, {"constant_blocks", constant_blocks},
        {"constant_coefficients", constant_coefficients}}},
      {"init", options.init_coeffs.empty() ? "seed defaults" : options.init_coeffs}};
  result.coeffs.fit_report = {{"cost_initial", result.cost_initial},
                              {"cost_final", result.cost_final},
                              {"iterations", iterations},
                              {"residual_blocks", result.residual_blocks},
                              {"residuals", FullResidualCount(*problem)},
                              {"seconds", result.seconds},
                              {"termination", (result.stopped_at_start
                                                   ? "stopped at its start: "
                                                   : "") + summary.message}};
  // Varying coefficients that ended on a bound: their standard errors ignore the bound.
  nlohmann::json at_bounds = nlohmann::json::object();
  for (const ParamBlock& b : layout.blocks) {
    double* block = params.data() + b.offset;
    if (!problem->HasParameterBlock(block) || problem->IsParameterBlockConstant(block)) continue;
    for (int i = b.offset; i < b.offset + b.size; ++i) {
      if (held[static_cast<std::size_t>(i)]) continue;
      const CoeffBound bound = layout.Bound(i);
      if (params[i] <= bound.lower) at_bounds[layout.names[i]] = bound.lower;
      if (params[i] >= bound.upper) at_bounds[layout.names[i]] = bound.upper;
    }
  }
  result.at_bounds.clear();
  for (auto it = at_bounds.begin(); it != at_bounds.end(); ++it)
    result.at_bounds.push_back(it.key());
  if (!at_bounds.empty()) result.coeffs.fit_report["at_bounds"] = at_bounds;
  result.coeffs.fit_report["std_errors"] =
      "cluster-robust by episode (" + std::to_string(errors.clusters) +
      " episodes), sandwich around ceres::Covariance; std_errors_iid: ceres::Covariance scaled "
      "by the reduced chi-square, as if every residual were independent";
  nlohmann::json iid = nlohmann::json::object();
  for (int i = 0; i < layout.size(); ++i)
    iid[layout.names[i]] =
        std::isnan(errors.iid[i]) ? nlohmann::json() : nlohmann::json(errors.iid[i]);
  result.coeffs.fit_report["std_errors_iid"] = iid;
  if (!errors.note.empty()) result.coeffs.fit_report["covariance_note"] = errors.note;
  if (!heldout.empty()) {
    result.coeffs.fit_report["heldout_before"] = HeldoutJson(result.heldout_before);
    result.coeffs.fit_report["heldout_after"] = HeldoutJson(result.heldout_after);
  }
  return result;
}

CoeffFile StartingCoeffs(const FitOptions& options, const ModelInfo& model) {
  return WithHeldValues(options.init_coeffs.empty()
                            ? SeedCoeffs(model)
                            : ReadCoeffFile(options.init_coeffs, model.name, *model.layout),
                        options.selection, *model.layout);
}

void PrintFitReport(const FitOptions& options, const CoeffFile& init, const FitResult& r,
                    const std::vector<SkippedInput>& unreadable, std::ostream& out) {
  out << "fit " << options.model << ": " << r.train.size() << " training episodes, "
      << r.heldout.size() << " held out, " << r.residual_blocks << " rollout windows of " << options.window_s
      << " s\n";
  for (const SkippedInput& u : unreadable)
    out << "  unreadable " << u.path << ": " << u.reason << "\n";
  out << "  " << r.solver_summary << "\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  cost %.6g -> %.6g in %.2f s\n", r.cost_initial,
                r.cost_final, r.seconds);
  out << line;
  std::snprintf(line, sizeof(line), "  %-20s %14s %14s %14s %12s  %s\n", "coefficient",
                "seed default", "start", "fitted", "std error", "unit");
  out << line;
  const CoeffLayout& layout = *FindModel(options.model).layout;
  const std::vector<bool> held = options.selection.HeldMask(layout);
  for (int i = 0; i < layout.size(); ++i) {
    char error[32] = "n/a";  // NaN: not determined (see the note below)
    if (held[static_cast<std::size_t>(i)])
      std::snprintf(error, sizeof(error), "held");  // written as 0 (exact by choice)
    else if (!std::isnan(r.coeffs.std_errors[i]))
      std::snprintf(error, sizeof(error), "%.3g", r.coeffs.std_errors[i]);
    std::snprintf(line, sizeof(line), "  %-20s %14.6g %14.6g %14.6g %12s  %s\n",
                  layout.names[i].c_str(), layout.defaults[i], init.values[i], r.coeffs.values[i],
                  error, layout.units[i].c_str());
    out << line;
  }
  if (r.coeffs.fit_report.contains("covariance_note"))
    out << "  standard errors: " << r.coeffs.fit_report["covariance_note"].get<std::string>()
        << "\n";
  for (const std::string& name : r.at_bounds)
    out << "  " << name << " ended on its bound "
        << Num(r.coeffs.fit_report.at("at_bounds").at(name).get<double>())
        << " (its standard error ignores the bound)\n";
  if (!r.heldout.empty()) {
    out << "held-out episodes (" << r.heldout.size()
        << "), median error with the starting vs the fitted coefficients:\n";
    PrintComparison(r.heldout_before, r.heldout_after, out);
  }
}

FitResult RunFit(const FitOptions& requested, std::ostream& out) {
  const FitOptions options = WithModelDefaults(requested);
  const ModelInfo& model = FindModel(options.model);
  const CoeffLayout& layout = *model.layout;
  CheckSelection(options, layout);
  const CoeffFile init = StartingCoeffs(options, model);
  std::vector<Episode> train, heldout;
  std::vector<SkippedInput> unreadable;
  SplitEpisodes(LoadForFit(model, options, &unreadable), options.holdout_every, &train,
                &heldout);
  if (train.empty()) throw InputError("(data)", 0, 0, "no training episodes after the split");

  FitResult r = FitEpisodes(train, heldout, init, options);
  if (options.keep_going) {
    nlohmann::json list = nlohmann::json::array();
    for (const SkippedInput& u : unreadable)
      list.push_back({{"path", u.path}, {"reason", u.reason}});
    r.coeffs.provenance["unreadable"] = list;
  }
  PrintFitReport(options, init, r, unreadable, out);
  if (!options.out_path.empty()) {
    WriteCoeffFile(options.out_path, r.coeffs, layout);
    out << "wrote " << options.out_path << "\n";
  }
  return r;
}

std::vector<TailRow> CrossvalTail(const ReplayReport& combined, const std::vector<int>& fold_sizes,
                                  int set_size) {
  std::size_t total = 0;
  int largest = 0;
  for (int n : fold_sizes) {
    RLFIT_CHECK(n >= 0, "CrossvalTail: negative fold size");
    total += static_cast<std::size_t>(n);
    largest = std::max(largest, n);
  }
  RLFIT_CHECK(total == combined.episodes.size(),
              "CrossvalTail: fold sizes do not add up to the report's episodes");
  if (set_size <= 0) set_size = largest;
  // An episode's figure at label h: a number, +infinity if diverged, none if not reached.
  auto figures = [&](const Quantity& q, std::size_t h, std::size_t begin, std::size_t end) {
    std::vector<double> v;
    for (std::size_t i = begin; i < end; ++i) {
      const EpisodeReport& e = combined.episodes[i];
      if (h >= e.open_loop.size() || !e.open_loop[h]) continue;
      v.push_back(e.open_loop[h]->diverged ? std::numeric_limits<double>::infinity()
                                           : e.open_loop[h]->error.*q.member);
    }
    return v;
  };
  std::vector<TailRow> rows;
  for (const Quantity& q : Quantities(combined.has_orientation))
    for (std::size_t h = 0; h < combined.horizon_labels.size(); ++h) {
      TailRow row;
      row.quantity = q.key;
      row.label = q.label;
      row.horizon = combined.horizon_labels[h];
      const std::vector<double> all = figures(q, h, 0, total);
      if (all.empty()) continue;
      row.p90 = Summarize(all).p90;
      std::size_t begin = 0;
      for (int n : fold_sizes) {
        const std::vector<double> fold = figures(q, h, begin, begin + n);
        begin += static_cast<std::size_t>(n);
        if (!fold.empty()) row.fold_p90.push_back(Summarize(fold).p90);
      }
      row.spread = BootstrapP90(all, set_size);
      rows.push_back(row);
    }
  return rows;
}

namespace {
// A tail figure: the replay table's precision; a diverged (+infinity) one as "diverged".
std::string TailNum(double v) {
  if (!std::isfinite(v)) return "diverged";
  char buf[32];
  std::snprintf(buf, sizeof(buf), std::abs(v) >= 1000 ? "%.0f" : std::abs(v) >= 10 ? "%.1f" : "%.3f",
                v);
  return buf;
}
// JSON has no infinity: a diverged figure is null.
nlohmann::json TailValue(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }
}  // namespace

nlohmann::json TailJson(const std::vector<TailRow>& rows) {
  nlohmann::json list = nlohmann::json::array();
  for (const TailRow& r : rows) {
    nlohmann::json folds = nlohmann::json::array();
    for (double v : r.fold_p90) folds.push_back(TailValue(v));
    list.push_back({{"quantity", r.quantity},
                    {"horizon", r.horizon},
                    {"p90", TailValue(r.p90)},
                    {"fold_p90", folds},
                    {"new_set_size", r.spread.set_size},
                    {"new_set_p90_p5", TailValue(r.spread.p5)},
                    {"new_set_p90_p50", TailValue(r.spread.p50)},
                    {"new_set_p90_p95", TailValue(r.spread.p95)},
                    {"bootstrap_draws", kBootstrapDraws}});
  }
  return list;
}

void PrintCrossValidation(const FitOptions& options, int folds, std::size_t episodes,
                          double seconds, const std::vector<std::vector<double>>& values,
                          const ReplayReport& combined_start, const ReplayReport& combined,
                          const std::vector<TailRow>& tail, std::ostream& out) {
  out << "cross-validation of " << options.model << ": " << folds << " folds over " << episodes
      << " episodes; every episode replayed with coefficients fitted without it ("
      << Num(seconds) << " s of fitting)\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  %-20s %14s %14s %14s  %s\n", "coefficient", "seed default",
                "fold mean", "fold spread", "unit");
  out << line;
  const CoeffLayout& layout = *FindModel(options.model).layout;
  const std::vector<bool> held = options.selection.HeldMask(layout);
  for (int i = 0; i < layout.size(); ++i) {
    double mean = 0.0, var = 0.0;
    for (const auto& v : values) mean += v[i] / values.size();
    for (const auto& v : values) var += (v[i] - mean) * (v[i] - mean) / std::max<std::size_t>(1, values.size() - 1);
    char spread[32] = "held";
    if (!held[static_cast<std::size_t>(i)])
      std::snprintf(spread, sizeof(spread), "%.3g", std::sqrt(var));
    std::snprintf(line, sizeof(line), "  %-20s %14.6g %14.6g %14s  %s\n", layout.names[i].c_str(),
                  layout.defaults[i], mean, spread, layout.units[i].c_str());
    out << line;
  }
  out << "held-out error, seed coefficients vs fitted on the other folds (medians):\n";
  PrintComparison(combined_start, combined, out);
  out << combined.Table();
  if (tail.empty()) return;
  const int set_size = tail.front().spread.set_size;
  out << "tail: the p90 over episodes rests on their worst tenth and moves from set to set.\n"
         "p90 over all held-out episodes, the folds' p90s (lowest, highest), and the p90 a new\n"
         "set of " << set_size << " episodes like these may show (bootstrap over episodes, "
      << kBootstrapDraws << " sets: 5%, 50%, 95%;\nthe 95% bounds a new set's p90; --tail-set "
         "for another size)\n";
  std::snprintf(line, sizeof(line), "  %-12s %-6s  %9s  %9s  %9s  %9s  %9s  %9s\n", "quantity",
                "horizon", "p90", "fold low", "fold high", "new 5%", "new 50%", "new 95%");
  out << line;
  for (const TailRow& r : tail) {
    const auto [low, high] = std::minmax_element(r.fold_p90.begin(), r.fold_p90.end());
    const bool any = !r.fold_p90.empty();
    std::snprintf(line, sizeof(line), "  %-12s %-6s  %9s  %9s  %9s  %9s  %9s  %9s\n",
                  r.label.c_str(), r.horizon.c_str(), TailNum(r.p90).c_str(),
                  any ? TailNum(*low).c_str() : "n/a", any ? TailNum(*high).c_str() : "n/a",
                  TailNum(r.spread.p5).c_str(), TailNum(r.spread.p50).c_str(),
                  TailNum(r.spread.p95).c_str());
    out << line;
  }
}

ReplayReport RunCrossValidation(const FitOptions& requested, int folds, const std::string& out_dir,
                                std::ostream& out) {
  if (folds < 2) throw InputError("(options)", 0, 0, "--folds must be at least 2");
  const FitOptions options = WithModelDefaults(requested);
  const ModelInfo& model = FindModel(options.model);
  const CoeffLayout& layout = *model.layout;
  CheckSelection(options, layout);
  const CoeffFile init = StartingCoeffs(options, model);
  std::vector<SkippedInput> unreadable;
  const std::vector<Episode> all = LoadForFit(model, options, &unreadable);
  // Folds by file: training and validation never share one.
  const std::vector<int> file_of = FileIndices(all);
  const int files = all.empty() ? 0 : file_of.back() + 1;
  if (files < folds)
    throw InputError("--folds", 0, 0,
                     std::to_string(folds) + " folds but the recordings are only " +
                         std::to_string(files) + " files (" + std::to_string(all.size()) +
                         " episodes; a fold needs a file)");

  ReplayReport combined, combined_start;
  std::vector<Episode> ordered;
  nlohmann::json fold_coeffs = nlohmann::json::array();
  std::vector<std::vector<double>> values;
  std::vector<int> fold_sizes;
  Progress progress("crossval " + model.name, folds, options.quiet);
  double seconds = 0.0;
  for (int f = 0; f < folds; ++f) {
    std::vector<Episode> train, test;
    for (std::size_t i = 0; i < all.size(); ++i)
      (file_of[i] % folds == f ? test : train).push_back(all[i]);
    FitOptions fold_options = options;
    fold_options.quiet = true;  // the folds show progress, not each fit
    FitResult r;
    try {
      r = FitEpisodes(train, test, init, fold_options);
    } catch (const InputError& e) {
      // Name the fold: its training episodes are not the whole input.
      throw InputError(e.file(), e.row(), e.column(),
                       "fold " + std::to_string(f + 1) + " of " + std::to_string(folds) +
                           " (held out: " + test.front().name +
                           (test.size() > 1 ? " and " + std::to_string(test.size() - 1) + " more"
                                            : std::string()) +
                           "): " + e.message());
    }
    seconds += r.seconds;
    values.push_back(r.coeffs.values);
    fold_coeffs.push_back(CoeffFileToJson(r.coeffs, layout)["coefficients"]);
    auto append = [](ReplayReport* into, const ReplayReport& from) {
      if (into->episodes.empty() && into->model.empty()) {
        *into = from;
        return;
      }
      for (const EpisodeReport& e : from.episodes) into->episodes.push_back(e);
      for (const SkippedInput& n : from.notes) into->notes.push_back(n);
      if (from.curve.size() > into->curve.size()) {
        into->curve.resize(from.curve.size());
        into->curve_horizons_s = from.curve_horizons_s;
      }
      for (std::size_t c = 0; c < from.curve.size(); ++c)
        into->curve[c].insert(into->curve[c].end(), from.curve[c].begin(), from.curve[c].end());
    };
    append(&combined, r.heldout_after);
    append(&combined_start, r.heldout_before);
    fold_sizes.push_back(static_cast<int>(r.heldout_after.episodes.size()));
    for (const Episode& e : test) ordered.push_back(e);
    progress.Tick();
  }

  combined.unreadable = unreadable;
  combined.keep_going = options.keep_going;
  const std::vector<TailRow> tail = CrossvalTail(combined, fold_sizes, options.tail_set);
  PrintCrossValidation(options, folds, all.size(), seconds, values, combined_start, combined,
                       tail, out);
  if (!out_dir.empty()) {
    CoeffFile record = init;
    record.provenance = {
        {"crossval_folds", folds},
        {"fold_coefficients", fold_coeffs},
        {"tail", TailJson(tail)},
        {"git_revision", GitRevision()}};
    ReplayOptions replay = options.replay;
    replay.out_dir = out_dir;
    replay.paths = options.paths;
    replay.data_root = options.data_root;
    replay.facts = options.facts;
    replay.keep_going = options.keep_going;
    replay.coeffs_path = "(cross-validation: see coefficients.provenance.fold_coefficients)";
    WriteReplayOutputs(combined, ordered, record, replay);
  }
  return combined;
}

}  // namespace rlfit
