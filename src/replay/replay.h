// `rlsim replay`: runs recorded episodes through a model, open loop from row 0 and from
// windowed restarts, and reports prediction error per horizon, quantity and episode.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/io/coeff_file.h"
#include "src/io/episode.h"
#include "src/replay/metrics.h"
#include "src/replay/predictor.h"

namespace rlfit {

struct ReplayOptions {
  std::string model = "aerial";        // model name (see Models())
  std::vector<std::string> paths;      // files or folders; empty = the model's default data
  std::string data_root;               // datasets root (see ResolveDataRoot)
  std::string coeffs_path;             // coefficients JSON; empty = the seed note's values
  std::string out_dir;                 // output folder (created); empty = write nothing
  std::vector<double> horizons_s;      // reported horizons, s (plus "last"); empty = model's
  double window_s = 0.5;               // spacing of windowed restarts, s
  double curve_step_s = 0.1;           // spacing of the error-vs-horizon curve, s
  bool quiet = false;                  // no progress on stderr
  bool force = false;                  // replace an out_dir rlfit did not write (StagedDir)

  bool Check(std::string* why) const;
};

struct EpisodeReport {
  std::string name;           // output file name
  std::string path;           // source recording
  int rows = 0;
  double duration_s = 0.0;
  // Per reported horizon (ReplayReport::horizon_labels order); nullopt if too short.
  std::vector<std::optional<ErrorSample>> open_loop;
  std::vector<std::optional<ErrorSample>> baseline;  // empty: no prediction_*.csv beside it
  std::vector<std::vector<ErrorSample>> windowed;    // per horizon, one per restart
  std::vector<ErrorSample> open_loop_rows;            // open-loop error at every row
  std::vector<PredictedState> trajectory;             // open-loop prediction, every row
};

struct ReplayReport {
  std::string model;
  bool has_orientation = true;
  std::vector<double> horizons_s;           // reported horizons; the last entry is "last row"
  std::vector<std::string> horizon_labels;  // "0.5s", "1s", "2s", "last"
  double window_s = 0.5;
  double curve_step_s = 0.1;
  std::vector<EpisodeReport> episodes;
  // Windowed errors on a horizon grid (curve_step_s apart): every restart of every episode.
  std::vector<double> curve_horizons_s;
  std::vector<std::vector<ErrorSample>> curve;

  nlohmann::json ToJson() const;   // per-episode and aggregate statistics
  std::string Table() const;       // the human-readable report
  // Aggregate of one quantity at one reported horizon: open loop, windowed or baseline.
  Stats OpenLoop(const Quantity& q, int horizon, bool only_with_baseline = false) const;
  Stats Windowed(const Quantity& q, int horizon) const;
  Stats Baseline(const Quantity& q, int horizon) const;
  int EpisodesWithBaseline() const;
};

// Replays `episodes` (no file I/O). Used by `rlsim replay` and by `rlfit` for held-out
// validation.
ReplayReport ReplayEpisodes(const std::vector<Episode>& episodes, const Predictor& predictor,
                            const ModelInfo& model, const ReplayOptions& options);

// Reads the episodes named by the options (or the model's defaults under the data root).
std::vector<Episode> LoadEpisodesFor(const ModelInfo& model, const std::vector<std::string>& paths,
                                     const std::string& data_root);

// Writes the replay outputs into options.out_dir: one predicted trajectory CSV per episode,
// replay_summary.json and summary.txt.
void WriteReplayOutputs(const ReplayReport& report, const std::vector<Episode>& episodes,
                        const CoeffFile& coeffs, const ReplayOptions& options);

// The whole command: load, replay, print the table on `out`, write outputs.
ReplayReport RunReplay(const ReplayOptions& options, std::ostream& out);

}  // namespace rlfit
