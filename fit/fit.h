// `rlfit fit`: least-squares refit of a model's coefficients through multi-step rollouts
// of the same step functions replay runs, with standard errors and held-out validation.
// "What to fit" (FitSelection) is kept apart from "how to solve" (SolverOptions).
#pragma once

#include <algorithm>
#include <functional>
#include <iosfwd>
#include <string>
#include <thread>
#include <vector>

#include <ceres/ceres.h>

#include "src/io/coeff_file.h"
#include "src/io/episode.h"
#include "src/replay/replay.h"

namespace rlfit {

// What to fit: which coefficients stay at their starting values.
struct FitSelection {
  // Names of the layout's parameter blocks ("air_damping": every coefficient of the block) or
  // of single coefficients ("recovery": that one, while the rest of its block is fitted through
  // a ceres::SubsetManifold), mixed. A name that is both (the ball's "drag") is the block.
  std::vector<std::string> held;
  // Names the model holds by default (FitterInfo::held_by_default) that are fitted anyway.
  std::vector<std::string> freed;
  // Held names whose starting value is replaced by `value` (every coefficient of a block):
  // the model's held-by-default ones, at their measured values (WithModelDefaults adds them).
  // A name held by `held` alone stays at its starting value (the seed's or --init's).
  struct HeldValue {
    std::string name;
    double value;
  };
  std::vector<HeldValue> held_at;
  // false with `why` listing the model's blocks and coefficients when a name is neither, or
  // when a name is both held and freed.
  bool Check(const CoeffLayout& layout, std::string* why) const;
  // Per coefficient of `layout` (flat order): true where held by its block's name or its own.
  // Unknown names are ignored (Check refuses them).
  std::vector<bool> HeldMask(const CoeffLayout& layout) const;
};

// How to solve.
struct SolverOptions {
  std::string loss;         // "huber", "cauchy" or "none" (plain squares); "" = model default
  double loss_scale = 0.0;  // robust-loss threshold, in per-residual sigmas; 0 = model default
  int max_iterations = 50;
  // A successful step that moves every varying coefficient by less than this many of its
  // standard errors ends the solve (converged: a fraction of the statistical uncertainty is
  // left). The standard errors are the starting coefficients' (CoeffFile::std_errors, e.g.
  // --init results/ball/coeffs.json) or, from the second smoothing pass on, the previous
  // pass's; none known (a single-pass fit from the seed values): only Ceres' own tolerances.
  // 0 = off.
  double step_sigmas = 0.1;
  // Threads that evaluate the residual blocks (and the covariance): every core by default.
  int threads = DefaultThreads();
  static int DefaultThreads() {
    return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 64u));
  }
  bool Check(std::string* why) const;
};

// Smallest spacing of rollout starts, s: below a physics tick (1/120 s) starts only repeat
// rows, and RolloutWindows walks the grid of starts one lookup per stride (1e-9 s: hours).
inline constexpr double kMinStrideS = 1e-3;

struct FitOptions {
  std::string model = "aerial";
  std::vector<std::string> paths;     // training+validation recordings; empty = model default
  std::string data_root;
  RecordingFacts facts;               // --reference, --handbrake-unrecorded, --clock-origin
  // --keep-going: unreadable recordings are named (stdout, provenance) and the rest are used.
  bool keep_going = false;
  std::string init_coeffs;            // starting coefficients JSON; empty = seed note values
  std::string out_path;               // coefficients JSON to write; empty = none
  double window_s = 1.0;              // length of each rollout residual, s
  double stride_s = 0.1;              // spacing of rollout starts, s
  // Every k-th recording file (k-1, 2k-1, ... in the order read) is held out, all its episodes
  // with it; 0 = none.
  int holdout_every = 4;
  Integration integration;            // row -> physics ticks, input delay
  // The input timing (integration.input_delay_s and tick_phase) is the model's
  // (ModelDescriptor::timing, src/replay/registry.h; set by WithModelDefaults) unless this is
  // false: --input-delay or --tick-phase given, both then as given (the other at Integration's
  // default).
  bool model_timing = true;
  FitSelection selection;
  SolverOptions solver;
  ReplayOptions replay;               // horizons / windows of the held-out report
  // Scale of the steps over which a model with a piecewise-smooth cost differentiates it (the
  // ball: SmoothedBallRolloutCost); FitEpisodes sets it per pass (FitterInfo::smoothing_passes).
  double smoothing = 1.0;
  // Only the model's last smoothing pass, from `init`: for a start that is already a converged
  // fit (the regression check refits from the committed coefficients).
  bool last_pass_only = false;
  // false: the fitted values only, without their standard errors (FitResult's std_errors all
  // NaN). The final ComputeStandardErrors evaluates every window's Jacobian twice more (once
  // per episode for the sandwich, once in ceres::Covariance); the regression check compares
  // values only. The errors between smoothing passes (their step scale) are still computed.
  bool standard_errors = true;
  bool quiet = false;
  // `rlfit crossval`: the size of the new set of episodes whose p90 the tail table predicts
  // (CrossvalTail); 0 = the size of one fold.
  int tail_set = 0;
  bool Check(std::string* why) const;
};

// One model's residuals: adds rollout residual blocks over `episodes` to `problem`, using
// params + block.offset as the parameter blocks (in the model's layout), and appends the index
// (into `episodes`) of each block's episode to `block_episodes`, in the order the blocks are
// added (the standard errors treat each episode as one independent cluster). Returns the number
// of residual blocks added.
using AddResidualsFn = std::function<int(ceres::Problem* problem, double* params,
                                         const std::vector<Episode>& episodes,
                                         const FitOptions& options,
                                         std::vector<int>* block_episodes)>;

struct FitterInfo {
  std::string model;
  AddResidualsFn add_residuals;
  SolverOptions defaults;  // the loss this model's fit uses unless told otherwise
  // Scales of the derivative's smoothing steps, one solve per entry (see FitOptions::smoothing).
  std::vector<double> smoothing_passes = {1.0};
  // Work of the fit that does not depend on the recordings (the ball's arena mesh and grid),
  // run beside their reading (RunFit, RunCrossValidation); may be empty. A warm-up only: an
  // error in it is not reported there, the residuals' own call meets it again in its turn.
  std::function<void(const FitOptions& options)> prepare = nullptr;
  // Blocks or coefficients held at a measured value unless FitSelection::freed names them:
  // quantities measured directly, which the fit would otherwise trade against others (the
  // ball's drag, contact_radius and recovery, see fit.cc). Whatever the start (the seed or
  // --init), the fit holds them at this value; freed, it fits them from the start's value.
  std::vector<FitSelection::HeldValue> held_by_default = {};
};
const FitterInfo& FindFitter(const std::string& model);

// `options` with the model's default loss wherever it leaves them open ("" / 0), its input
// timing unless options.model_timing is false, and its
// held_by_default names added to selection.held and (with their values) selection.held_at
// unless selection.freed or selection.held already names them (once: applying it again
// changes nothing; a name held by --hold stays at its starting value). InputError when freed
// names something the model does not hold by default.
FitOptions WithModelDefaults(const FitOptions& options);

// `start` with selection.held_at's values in place of its own (a block's name sets each of its
// coefficients); the starting point of every fit (FitEpisodes, and the start that RunFit prints
// and crossval records). Unknown names are ignored (FitSelection::Check refuses them).
CoeffFile WithHeldValues(const CoeffFile& start, const FitSelection& selection,
                         const CoeffLayout& layout);

struct FitResult {
  CoeffFile coeffs;                 // fitted values, standard errors, provenance, report
  double cost_initial = 0.0;
  double cost_final = 0.0;
  int residual_blocks = 0;
  double seconds = 0.0;
  std::vector<std::string> train, heldout;  // episode names
  std::vector<std::string> train_fingerprints, heldout_fingerprints;  // FingerprintText
  ReplayReport heldout_before;      // held-out replay with the starting coefficients
  ReplayReport heldout_after;       // ... and with the fitted ones
  std::string solver_summary;     // "stopped at its start: ..." when no step succeeded
  bool stopped_at_start = false;  // no successful solver step: values are the starting ones
  std::vector<std::string> at_bounds;  // varying coefficients that ended on a bound
};

// Standard errors of the varying coefficients.
//  iid:    C * chi2, C = (J^T J)^+ from ceres::Covariance and chi2 = 2 F / (m - p) the reduced
//          chi-square: right if every residual were an independent sample, which rollout
//          residuals are not (one trajectory, overlapping windows).
//  robust: cluster-robust by episode (the sandwich estimator), C (sum_g s_g s_g^T) C G/(G-1)
//          with s_g = J_g^T r_g the gradient of episode g's windows (residuals and Jacobian as
//          the solver sees them, robust loss applied) and G the number of episodes. It assumes
//          only that episodes are independent; on the recordings it is 5-30x the iid figure.
//          On the aerial fit it matches the cross-validation fold spread; on the ball it is
//          ~10x smaller than the fold spread, because where the ball fit lands on its rugged
//          cost also depends on where it starts (decision 0005). These are the reported errors.
struct StandardErrors {
  std::vector<double> robust, iid;
  int clusters = 0;
  std::string note;
};

// Over the problem's varying coefficients (params + block.offset in `layout`): those of its
// varying parameter blocks less the coordinates a ceres::SubsetManifold holds (the errors are
// computed in the blocks' tangent spaces); the others get 0. block_episodes[i] is the cluster of the i-th residual block added to the problem.
// A varying coefficient whose error cannot be determined gets NaN (written as null, printed
// "n/a") and `note` says why: all of them when the final cost, the Jacobian or the covariance
// is not finite (ceres::Covariance is then never called), one of them when the residuals do not
// depend on it (the pseudo-inverse would report 0). Never 0 for a varying coefficient by failure.
// Call only after a successful solve (FitEpisodes throws on a failed one).
StandardErrors ComputeStandardErrors(ceres::Problem* problem, std::vector<double>* params,
                                     const CoeffLayout& layout, double final_cost,
                                     const std::vector<int>& block_episodes, int threads);

// Fits on `train`, validates on `heldout`. No file output. Every varying coefficient is kept
// within its CoeffLayout bounds (InputError if `init` starts outside them or the integration
// settings are out of range). A solve that fails (Ceres FAILURE / USER_FAILURE, a non-finite
// cost or coefficient) throws InputError with the solver's message, before any standard error.
FitResult FitEpisodes(const std::vector<Episode>& train, const std::vector<Episode>& heldout,
                      const CoeffFile& init, const FitOptions& options);

// The same with the residuals added by `add_residuals` instead of the model's own
// (FitterInfo::add_residuals): the distributed fit (fit/distributed.h) adds one block per
// training episode whose sums come from the workers; `train` then holds the episodes' names,
// paths and first and last rows only.
FitResult FitEpisodes(const std::vector<Episode>& train, const std::vector<Episode>& heldout,
                      const CoeffFile& init, const FitOptions& options,
                      const AddResidualsFn& add_residuals);

// The starting coefficients of a fit: --init, else the seed notes' values, with the
// held-by-default ones at their measured values (`options` after WithModelDefaults).
CoeffFile StartingCoeffs(const FitOptions& options, const ModelInfo& model);
// Holds the coefficients `held` marks (FitSelection::HeldMask) in `problem`, whose parameter
// blocks are params + block.offset: a whole block constant, some of a block's coefficients
// through a ceres::SubsetManifold (the problem owns it).
void HoldCoefficients(ceres::Problem* problem, double* params, const CoeffLayout& layout,
                      const std::vector<bool>& held);
// InputError when --hold names something the model does not have, before any file is read.
void CheckSelection(const FitOptions& options, const CoeffLayout& layout);

// What `rlfit fit` prints after the fit (`options` after WithModelDefaults, `init` the start).
// `unreadable`: the files --keep-going passed over, named before the solver's summary.
void PrintFitReport(const FitOptions& options, const CoeffFile& init, const FitResult& r,
                    const std::vector<SkippedInput>& unreadable, std::ostream& out);
// One row of the crossval's tail table: a quantity's open-loop figure at one horizon label,
// over the held-out episodes of `combined` (diverged ones as +infinity).
struct TailRow {
  std::string quantity;          // Quantity::key
  std::string label;             // Quantity::label
  std::string horizon;           // horizon label ("0.5s", ..., "last")
  double p90 = 0.0;              // over every held-out episode
  std::vector<double> fold_p90;  // per fold, over its own held-out episodes
  P90Spread spread;              // BootstrapP90 over every held-out episode
};
// The tail table: for each quantity and horizon label of `combined` (the folds' held-out
// reports one after another, `fold_sizes` episodes each), the p90 over all, the p90 of each
// fold, and what the p90 of `set_size` new episodes may come out at (BootstrapP90; 0 = the
// size of the largest fold). A p90 from one set of episodes under-predicts another set's
// roughly as often as it over-predicts, and by a lot where the tail is made of few episodes:
// the spread's 95% is the figure that bounds a new set's p90 (decisions/0106).
std::vector<TailRow> CrossvalTail(const ReplayReport& combined, const std::vector<int>& fold_sizes,
                                  int set_size);
nlohmann::json TailJson(const std::vector<TailRow>& rows);

// What `rlfit crossval` prints: the folds' coefficients (mean and spread of `values`, one per
// fold), the held-out comparison, the combined replay table and the tail table (`tail`,
// CrossvalTail of `combined`; the caller also records it with TailJson).
void PrintCrossValidation(const FitOptions& options, int folds, std::size_t episodes,
                          double seconds, const std::vector<std::vector<double>>& values,
                          const ReplayReport& combined_start, const ReplayReport& combined,
                          const std::vector<TailRow>& tail, std::ostream& out);

// Splits episodes by recording file, so that training and validation never share a file: the
// episodes of the `every`-th file (file index % every == every - 1; a file's episodes follow
// one another, each file given once) are held out.
void SplitEpisodes(const std::vector<Episode>& all, int every, std::vector<Episode>* train,
                   std::vector<Episode>* heldout);
// The file index of each episode of `all` (consecutive episodes of one path share one).
std::vector<int> FileIndices(const std::vector<Episode>& all);
// The same, moving the episodes out of `all` instead of copying them.
void SplitEpisodes(std::vector<Episode>&& all, int every, std::vector<Episode>* train,
                   std::vector<Episode>* heldout);

// The whole `rlfit fit` command: load, split, fit, print the report, write the JSON.
FitResult RunFit(const FitOptions& options, std::ostream& out);

// `rlfit crossval`: K folds by recording file (file i in fold i % K, all its episodes with
// it); every episode is replayed with coefficients fitted on the other folds. Prints and (if out_dir) writes the combined held-out replay report.
ReplayReport RunCrossValidation(const FitOptions& options, int folds, const std::string& out_dir,
                                std::ostream& out);

}  // namespace rlfit
