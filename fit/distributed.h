// Replay, fit and cross-validation over shards of recording files evaluated elsewhere (the
// workers of rlfit.dask, python/rlfit/dask.py): the client side here plans the shards, sends each
// a task through a ShardMap and reduces the answers; RunShardTask is what a worker runs. Only
// coefficients, per-episode records and per-episode sums cross between them; each worker reads
// its own files by path. The design: README "Corpora too big for one machine".
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fit/fit.h"
#include "src/replay/replay.h"

namespace rlfit {

// Runs `task` once per payload (one per shard, each a CBOR byte string) wherever it likes and
// returns RunShardTask's answers in the payloads' order. rlfit.dask maps them over a Dask
// cluster; a plain loop calling RunShardTask runs them in this process.
using ShardMap = std::function<std::vector<std::string>(const std::string& task,
                                                        const std::vector<std::string>& payloads)>;

// A worker's side: the answer to one task (CBOR). Never throws: an InputError (a bad file) or
// an internal error is an answer too, which the client rethrows, the first shard's first, so a
// bad file is reported as reading the files in order reports it. Tasks:
//  - "outline": read the shard's files; per episode its name, path, kind, time span, and
//    (on request) whether the model covers it and whether a shipped prediction can be compared;
//    for replay also the files SelectCovered skips, with their warning lines;
//  - "replay": ReplayEpisodes on groups of the shard's episodes, each with its coefficients,
//    trajectory CSVs written into a staged folder; per-episode records back;
//  - "sums": the fit's cost, gradient and Gauss-Newton matrix per training episode at the
//    given coefficients (EpisodeSums, the latter two as a QR factor); the shard's residual blocks stay built in the worker
//    process between calls (rebuilt from the files after a worker is lost).
std::string RunShardTask(const std::string& task, const std::string& payload);

// The fit's residuals of one shard's training episodes, as `rlfit fit` builds them (the model's
// AddResidualsFn, robust loss, held coefficients), summed per episode at any coefficients:
//   F_g = sum_w rho_w / 2,  g_g = sum_w J_w^T r_w,  H_g = sum_w J_w^T J_w
// over the rollout windows w of episode g, with r_w and J_w each window's residuals and
// Jacobian as the solver sees them (ReducedCost, the loss's correction applied; over the
// varying coefficients' tangent space), g_g and H_g held as a QR factor (Sums). Each window is
// evaluated by Ceres' own Problem::EvaluateResidualBlock, so its numbers are the ones `rlfit
// fit` sums; an episode's windows are stacked in order by one thread, so the results do not
// depend on the thread count.
class EpisodeSums {
 public:
  // `options` after WithModelDefaults, its smoothing set for the pass; `start` the pass's
  // starting coefficients (some models read them while building, e.g. the ball's contact rows).
  EpisodeSums(std::vector<Episode> episodes, const FitOptions& options,
              const std::vector<double>& start);
  // Per episode with windows: F_g; and with Jacobians the thin QR of its stacked windows,
  // J_g = Q R: t = (Q^T r)'s first p entries and R, so that R^T R = H_g and R^T t = g_g (the
  // square root of the Gauss-Newton matrix rather than H_g: forming H squares the condition
  // number; RemoteEpisodeCost in distributed.cc).
  struct Sums {
    std::vector<double> cost;       // per episode with windows
    std::vector<double> projected;  // per episode p values, t
    std::vector<double> root;       // per episode p x p, R, row-major upper triangular
  };
  // At `values` (every coefficient, layout order); t and R only with `jacobians`. InputError
  // when a window cannot be evaluated (not finite).
  Sums Evaluate(const std::vector<double>& values, bool jacobians, int threads);
  int tangent_size() const { return p_; }
  // Per episode of the constructor's list: rollout windows and residuals before reduction.
  const std::vector<int>& windows() const { return windows_; }
  const std::vector<int>& residuals() const { return residuals_; }
  // The layout's parameter blocks the residuals use (indices into layout.blocks).
  const std::vector<int>& blocks() const { return blocks_; }

 private:
  std::vector<Episode> episodes_;
  std::vector<double> params_;
  std::unique_ptr<ceres::Problem> problem_;
  std::vector<ceres::ResidualBlockId> ids_;
  std::vector<int> block_episodes_;
  std::vector<int> windows_, residuals_, blocks_;
  int p_ = 0;
  bool has_manifold_ = false;
  std::mutex mutex_;
};

// Sharding: the files in `shards` contiguous groups (fewer when there are fewer files) of
// about equal size in bytes, in order.
std::vector<std::vector<std::string>> ShardFiles(const std::vector<std::string>& files,
                                                 int shards);

struct DistributedOptions {
  int shards = 2;          // groups of files (ShardFiles); one task per group and map
  int worker_threads = 1;  // threads each task evaluates its shard with
  bool Check(std::string* why) const;
};

// `rlsim replay` over the shards: the same table on `out`, warnings on `warnings`, and with
// options.out_dir the same files (the trajectory CSVs written by the workers into the staged
// folder, which must be on a file system they share).
ReplayReport DistributedReplay(const ReplayOptions& options, const DistributedOptions& dist,
                               const ShardMap& map, std::ostream& out, std::ostream& warnings);

// `rlfit fit` over the shards: the same solver (FitEpisodes: Ceres on this side) on one residual
// block per training episode whose cost, gradient and Gauss-Newton matrix are the workers'
// sums (each Ceres evaluation at new coefficients is one map); the same report on `out` and the
// same coefficients file (options.out_path).
FitResult DistributedFit(const FitOptions& options, const DistributedOptions& dist,
                         const ShardMap& map, std::ostream& out);

// `rlfit crossval` over the shards: the folds fitted as DistributedFit (one after another, each
// over every shard), then one replay map with each episode's fold coefficients.
ReplayReport DistributedCrossValidation(const FitOptions& options, int folds,
                                        const std::string& out_dir,
                                        const DistributedOptions& dist, const ShardMap& map,
                                        std::ostream& out);

}  // namespace rlfit
