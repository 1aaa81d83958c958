// The fit's workload for the performance guard: one evaluation of the ground fit's residuals and
// Jacobian over the rollout windows of the first kGroundFitRows rows of its first training
// episode (what a Levenberg-Marquardt iteration of `rlfit fit ground` evaluates, on a part of the
// data so that the guard's three evaluations take seconds under callgrind), on one thread.
#pragma once

#include <memory>
#include <vector>

#include "src/io/episode.h"

namespace rlfit {
namespace bench {

inline constexpr int kGroundFitEpisodes = 1;
inline constexpr int kGroundFitRows = 601;  // 10 s of 61 Hz rows

class GroundFitScene {
 public:
  GroundFitScene();  // loads the ground episodes (the datasets) and builds the problem
  ~GroundFitScene();
  // `n` evaluations, each at a new point (the coefficients' defaults moved by 1e-9 relative per
  // evaluation so far: the reduced blocks answer a repeated point from their cache). Returns the
  // sum of the costs.
  double Evaluate(long n);
  int windows() const { return windows_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<Episode> episodes_;  // the problem's residuals point into them
  int windows_ = 0;
};

}  // namespace bench
}  // namespace rlfit
