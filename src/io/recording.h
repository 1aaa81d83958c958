// Reading recordings: one reader for every format of the datasets (13-column ball,
// 25-column car, 26-column timed car, {...}-wrapped .txt), a validation pass, row-timing
// inference, and the search for data on disk.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/io/episode.h"

namespace rlfit {

struct ReadOptions {
  // Shortest continuous stretch kept as an episode, rows. Shorter ones (pre-spawn frames,
  // a few rows between two pauses) are dropped.
  int min_segment_rows = 30;
  // A .txt row whose game-time step exceeds this starts a new segment (pause), s.
  double max_step_s = 0.05;
  // A row whose position jumps further than this from the velocity prediction starts a new
  // segment (teleport), uu.
  double max_teleport_uu = 60.0;
};

// Reads one recording file; a file with pauses or teleports yields several episodes.
// Throws InputError naming file, row and column on any malformed or non-finite value.
std::vector<Episode> ReadRecording(const std::string& path, const ReadOptions& options = {});

// Reads every recording in `paths` (files, or folders searched for episode_*.csv,
// freefalling_*.csv and *.txt; prediction_*.csv is skipped), in sorted order.
std::vector<Episode> ReadRecordings(const std::vector<std::string>& paths,
                                    const ReadOptions& options = {});

// Lists the recording files a path stands for (see ReadRecordings).
std::vector<std::string> ExpandRecordingPaths(const std::vector<std::string>& paths);

// Reads a 9-column prediction_*.csv (x, y, z, vx, vy, vz, wx, wy, wz).
BaselinePrediction ReadBaselinePrediction(const std::string& path);

// The prediction_NN.csv shipped beside episode_NN.csv, if there is one.
std::optional<std::string> FindBaselineFor(const std::string& episode_path);

// The datasets root: `cli_value` if given, else $RLFIT_DATA, else the first existing folder of
// DataRootCandidates() (src/common/resources.h: ../shared/datasets/lobot, data/lobot, the
// build tree's or installed share/rlfit/data/lobot, ~/.local/share/rlfit/lobot). Empty if
// none exists (MissingDataRootMessage() says where it looked).
std::string ResolveDataRoot(const std::string& cli_value);

// A path as given if it exists, else joined to `data_root` if that exists; else as given.
std::string ResolveUnderRoot(const std::string& path, const std::string& data_root);

}  // namespace rlfit
