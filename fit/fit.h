// `rlfit fit`: least-squares refit of a model's coefficients through multi-step rollouts
// of the same step functions replay runs, with standard errors and held-out validation.
// "What to fit" (FitSelection) is kept apart from "how to solve" (SolverOptions).
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <ceres/ceres.h>

#include "src/io/coeff_file.h"
#include "src/io/episode.h"
#include "src/replay/replay.h"

namespace rlfit {

// What to fit: which parameter blocks stay at their starting values.
struct FitSelection {
  std::vector<std::string> constant_blocks;  // block names, e.g. "air_damping"
  bool Check(const CoeffLayout& layout, std::string* why) const;
};

// How to solve.
struct SolverOptions {
  std::string loss = "huber";  // "huber", "cauchy" or "none" (plain least squares)
  double loss_scale = 3.0;     // robust-loss threshold, in per-residual sigmas (see fit.cc)
  int max_iterations = 50;
  int threads = 2;
  bool Check(std::string* why) const;
};

struct FitOptions {
  std::string model = "aerial";
  std::vector<std::string> paths;     // training+validation recordings; empty = model default
  std::string data_root;
  std::string init_coeffs;            // starting coefficients JSON; empty = seed note values
  std::string out_path;               // coefficients JSON to write; empty = none
  double window_s = 1.0;              // length of each rollout residual, s
  double stride_s = 0.1;              // spacing of rollout starts, s
  int holdout_every = 4;              // every k-th episode (k-1, 2k-1, ...) is held out; 0 = none
  Integration integration;            // row -> physics ticks, input delay
  FitSelection selection;
  SolverOptions solver;
  ReplayOptions replay;               // horizons / windows of the held-out report
  bool quiet = false;
  bool Check(std::string* why) const;
};

// One model's residuals: adds rollout residual blocks over `episodes` to `problem`, using
// params + block.offset as the parameter blocks (in the model's layout). Returns the number
// of residual blocks added.
using AddResidualsFn = std::function<int(ceres::Problem* problem, double* params,
                                         const std::vector<Episode>& episodes,
                                         const FitOptions& options)>;

struct FitterInfo {
  std::string model;
  AddResidualsFn add_residuals;
};
const FitterInfo& FindFitter(const std::string& model);

struct FitResult {
  CoeffFile coeffs;                 // fitted values, standard errors, provenance, report
  double cost_initial = 0.0;
  double cost_final = 0.0;
  int residual_blocks = 0;
  double seconds = 0.0;
  std::vector<std::string> train, heldout;  // episode names
  ReplayReport heldout_before;      // held-out replay with the starting coefficients
  ReplayReport heldout_after;       // ... and with the fitted ones
  std::string solver_summary;
};

// Fits on `train`, validates on `heldout`. No file output.
FitResult FitEpisodes(const std::vector<Episode>& train, const std::vector<Episode>& heldout,
                      const CoeffFile& init, const FitOptions& options);

// Splits episodes by index: every `every`-th (index % every == every - 1) is held out.
void SplitEpisodes(const std::vector<Episode>& all, int every, std::vector<Episode>* train,
                   std::vector<Episode>* heldout);

// The whole `rlfit fit` command: load, split, fit, print the report, write the JSON.
FitResult RunFit(const FitOptions& options, std::ostream& out);

// `rlfit crossval`: K folds by episode; every episode is replayed with coefficients fitted on
// the other folds. Prints and (if out_dir) writes the combined held-out replay report.
ReplayReport RunCrossValidation(const FitOptions& options, int folds, const std::string& out_dir,
                                std::ostream& out);

}  // namespace rlfit
