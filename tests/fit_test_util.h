// doctest next to Ceres: glog (pulled in by Ceres) defines CHECK too. Include this after the
// Ceres headers so CHECK is doctest's in the test bodies.
#pragma once

#include <ceres/ceres.h>
#include <ceres/gradient_checker.h>

#include <doctest/doctest.h>

#undef CHECK
#define CHECK DOCTEST_CHECK

namespace rlfit::testing {

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

}  // namespace rlfit::testing
