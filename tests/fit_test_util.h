// doctest next to Ceres: glog (pulled in by Ceres) defines CHECK too. Include this after the
// Ceres headers so CHECK is doctest's in the test bodies.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <ceres/ceres.h>
#include <ceres/gradient_checker.h>

#include <doctest/doctest.h>

#include "fit/fit.h"
#include "src/replay/episode_steps.h"

#undef CHECK
#define CHECK DOCTEST_CHECK

namespace rlfit::testing {

// An inference of an unrecorded handbrake (InferHandbrake, InferVehicleHandbrake) run on `ep`
// with its handbrake column blanked: `infer(blank)` must agree with the handbrake acting on
// each step of `ep` (ControlsOver at `integ`) on more than `min_share` of the steps; the
// handbrake must act on more than `min_on` of them.
template <typename Infer>
void CheckInferredHandbrake(const Episode& ep, const Integration& integ, Infer infer,
                            double min_share, int min_on) {
  std::vector<double> acting(ep.size(), 0.0);
  for (int k = 0; k + 1 < ep.size(); ++k)
    acting[k] = ControlsOver(ep, ep.rows[k].t_s, ep.rows[k + 1].t_s, integ).handbrake;
  Episode blank = ep;
  for (Sample& s : blank.rows) s.input.handbrake = false;
  const std::vector<double> inferred = infer(blank);
  REQUIRE(inferred.size() == acting.size());
  int agree = 0, on = 0;
  for (int k = 0; k + 1 < ep.size(); ++k) {
    agree += (inferred[k] > 0.5) == (acting[k] > 0.5);
    on += acting[k] > 0.5;
  }
  INFO("agree " << agree << " of " << ep.size() - 1 << ", handbrake on " << on);
  REQUIRE(on > min_on);
  CHECK(static_cast<double>(agree) / (ep.size() - 1) > min_share);
}

// Compares autodiff with Ceres' numeric Jacobian of `cost` at `blocks`, block by block: each
// block's worst absolute error must be at most `block_relative_precision` times its largest
// entry (entries near zero make the checker's per-entry relative error meaningless in
// rollouts). With `require_nonzero_blocks`, every block must also have a non-zero entry.
inline void CheckJacobianBlocks(const ceres::CostFunction& cost, const double* const* blocks,
                                const ceres::NumericDiffOptions& numeric,
                                double block_relative_precision, bool require_nonzero_blocks) {
  const std::vector<const ceres::Manifold*>* no_manifolds = nullptr;
  ceres::GradientChecker checker(&cost, no_manifolds, numeric);
  ceres::GradientChecker::ProbeResults results;
  checker.Probe(blocks, 1.0, &results);
  REQUIRE(results.return_value);
  for (std::size_t b = 0; b < results.jacobians.size(); ++b) {
    const double scale = results.numeric_jacobians[b].cwiseAbs().maxCoeff();
    const double error =
        (results.jacobians[b] - results.numeric_jacobians[b]).cwiseAbs().maxCoeff();
    INFO("block " << b << " scale " << scale << " error " << error);
    if (require_nonzero_blocks) CHECK(scale > 0.0);
    CHECK(error <= block_relative_precision * scale);
  }
}

// A round trip's start: `truth` with every value scaled by a factor drawn uniformly from
// [1 - spread, 1 + spread] (std::mt19937 seeded with `seed`).
inline CoeffFile Jittered(CoeffFile truth, double spread, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(1.0 - spread, 1.0 + spread);
  for (double& v : truth.values) v *= jitter(rng);
  return truth;
}

// The options of the synthetic round trips of the car fits: 0.5 s windows every 0.25 s, quiet,
// up to 100 iterations.
inline FitOptions RoundTripOptions(const std::string& model) {
  FitOptions options;
  options.model = model;
  options.quiet = true;
  options.window_s = 0.5;
  options.stride_s = 0.25;
  options.solver.max_iterations = 100;
  return options;
}

// Every fitted coefficient within `relative` (of |truth|) of the truth; a failure names the
// coefficient, its start and its fitted value.
inline void CheckRecovered(const std::vector<std::string>& names, const CoeffFile& start,
                           const CoeffFile& fitted, const CoeffFile& truth, double relative) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(names[i] << " start " << start.values[i] << " fitted " << fitted.values[i]);
    CHECK(std::abs(fitted.values[i] - truth.values[i]) < relative * std::abs(truth.values[i]));
  }
}

}  // namespace rlfit::testing
