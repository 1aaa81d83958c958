// The regression guard over results/: committed coefficients per model (with the data,
// options and git revision that produced them) and the replay errors they reach. `rlfit
// baseline` records them; `rlfit check` replays with the committed coefficients and fails,
// naming the metric and both values, when an error got worse than its baseline by more than
// the tolerance, or when a refit does not reproduce the committed coefficients.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fit/fit.h"
#include "src/common/resources.h"

namespace rlfit {

inline constexpr int kBaselineSchemaVersion = 1;

struct RegressionOptions {
  // results/<model>/...: the shipped results/ (in the build tree the checkout's, through
  // <build>/share/rlfit/results; installed, <prefix>/share/rlfit/results).
  std::string results_dir = ResourcePath("results");
  std::vector<std::string> models;  // empty: every model with a results/<model>/ folder
  std::string data_root;            // datasets root (see ResolveDataRoot)
  // An error metric fails when current > baseline * (1 + relative) + absolute. Replay is
  // deterministic, so any excess is a change of code or data; 2% leaves room for compiler
  // and library differences in floating point.
  double relative_tolerance = 0.02;
  double absolute_tolerance = 1e-6;
  // A refit must land within this many standard errors of each committed coefficient (the
  // standard errors are lower bounds, see fit.cc; plus 1e-6 relative for round-off).
  double refit_sigmas = 3.0;
  bool refit = true;   // also refit and compare coefficients
  // false (the default, and the ctest): the refit starts from the seed values with every
  // smoothing pass, as `rlfit fit`, and must land on the committed coefficients.
  // true (--warm-refit, ~6x faster): it starts from the committed coefficients and runs the
  // model's last smoothing pass (FitOptions::last_pass_only), stopping on a step below
  // SolverOptions::step_sigmas of the committed standard errors. Weaker: on the rugged ball
  // cost and in the ground fit's flat directions the solver barely moves from a start a few
  // standard errors off (restitution +5 sigma: moved 0.02 sigma; ground throttle_accel +5
  // sigma: 0.09), so a wrong committed coefficient is caught by the replay metrics or not at
  // all; a changed model that moves the optimum far is still caught.
  bool warm_refit = false;
  // rlfit check --threads: 0 (the default) runs one job per core and each refit's solver on
  // every core; N > 0 runs at most N jobs at once and each refit on max(1, N / jobs at once)
  // threads, so the check uses about N threads.
  int threads = 0;
  // rlfit baseline --force: replace a results/MODEL folder that rlfit did not write (StagedDir).
  bool force = false;
  // rlfit baseline --keep-coeffs: no refit; record the metrics the committed coefficients
  // reach on the data as the tools read it now (after a change of the reading, not of a
  // model), coeffs.json kept byte for byte.
  bool keep_coeffs = false;
  bool quiet = false;
  bool Check(std::string* why) const;
};

// The metrics a baseline guards, flattened: "open_loop.dx.2s.median" -> value.
nlohmann::json GuardedMetrics(const ReplayReport& report);

// Fits `model` on its default data with default options (options.keep_coeffs: takes the
// committed coefficients instead), replays it with the result, and writes
// results/<model>/coeffs.json, baseline.json and summary.txt, staged and swapped in as one
// folder (StagedDir) only once all three are written.
void RecordBaseline(const std::string& model, const RegressionOptions& options, std::ostream& out);

// Runs the checks; returns the failures (one line each), printing progress to `out`.
std::vector<std::string> RunRegressionCheck(const RegressionOptions& options, std::ostream& out);

}  // namespace rlfit
