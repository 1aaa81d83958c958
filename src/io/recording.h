// Reading recordings: one reader for every format of the datasets (13-column ball,
// 25-column car, 26-column timed car, {...}-wrapped .txt), a validation pass, row-timing
// inference, and the search for data on disk.
#pragma once

#include <cstddef>
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

  // False (with the reason) unless every field is in its range: min_segment_rows >= 2,
  // max_step_s in (0, 1], max_teleport_uu > 0.
  bool Check(std::string* why) const;
};

// Reads one recording file; a file with pauses or teleports yields several episodes.
// Throws InputError naming file, row and column on any malformed or implausible value.
// Loads the file once (never blocking: a FIFO or device is refused as "not a regular file")
// and calls ParseRecording.
std::vector<Episode> ReadRecording(const std::string& path, const ReadOptions& options = {});

// Parses a recording held in memory: `data[0, size)` is the file's contents, `name` its path
// (used in errors, for the format rules that depend on the extension, and for the
// episode_NN.csv clock origin). Rows are converted and validated as they are read.
//
// What is accepted, and what is an InputError (at the row and column it names):
// - The column count of the first non-blank line picks the format: 13 (ball), 25 (car) or,
//   for .txt files only, 26 (game time + car). Blank lines (spaces, tabs) are skipped
//   anywhere; Sample::source_row stays the 1-based line of the file.
// - Car rows with |yaw| > 32768 (frames before the car spawns) are skipped before the first
//   car row, and in a timed .txt after the game clock broke (went back or paused); anywhere
//   else they are an error at the yaw column.
// - A row that exactly repeats the previous state is merged into it and listed in
//   Episode::merged_source_rows.
// - Positions must lie within twice the arena's extent, speeds within twice the game's caps.
// - Ball rows: each step spans 1 to kMaxBallStepRows periods of ~1/61 s by the time column;
//   more is "time jumps by X s", a step under half a period with a new state is "time does
//   not increase"; a position jump off the velocity prediction is an error at the x column.
// - Timed .txt rows: a zero time step with a new state is "time does not increase"; a step
//   back (restart) or beyond max_step_s (pause) or a teleport starts a new segment.
std::vector<Episode> ParseRecording(const std::string& name, const char* data, std::size_t size,
                                    const ReadOptions& options = {});

// Longest step between two ball rows, in ~1/61 s row periods: 1 is the normal step, 2 a
// skipped row (ball episode 343 has one near row 336); the recordings have no longer gaps,
// so 4 (three rows missing in a row) is generous. A longer gap is not a continuous episode.
inline constexpr int kMaxBallStepRows = 4;

// Largest median distance of a ball episode's steps from a whole number of rows, in rows: a
// recording at 120 Hz (0.51 row a step) or 40 Hz (1.52) is refused. The recordings' median is
// 0.003 row (p90 0.012; the 2^-12 s time quantum is 0.015 row); a quarter row is far from both.
inline constexpr double kMaxBallMedianOffRows = 0.25;

// True for the file names a folder search takes as recordings: episode_*.csv,
// freefalling_*.csv and *.txt, never prediction_*. Pure (looks at the name only).
bool IsRecordingFileName(const std::string& file_name);

// The slice number NN of a file named episode_NN.csv (NN: one or more ASCII digits), if the
// name has that form and NN fits an int; nullopt otherwise (then the clock is unknown).
std::optional<int> EpisodeSliceNumber(const std::string& file_name);

// Reads every recording in `paths` (files, or folders searched for episode_*.csv,
// freefalling_*.csv and *.txt; prediction_*.csv is skipped), in sorted order.
std::vector<Episode> ReadRecordings(const std::vector<std::string>& paths,
                                    const ReadOptions& options = {});

// ReadRecording of each file, concatenated in the files' order, the files read by up to
// `threads` threads (0: one per core; each file is parsed whole by one thread, so the episodes
// are the same as when read one after another). If any file fails, throws the InputError of
// the first failing file in the list: the error reading them in order gives.
std::vector<Episode> ReadRecordingFiles(const std::vector<std::string>& files,
                                        const ReadOptions& options = {}, int threads = 0);

// Lists the recording files a path stands for (see ReadRecordings).
std::vector<std::string> ExpandRecordingPaths(const std::vector<std::string>& paths);

// Reads a 9-column prediction_*.csv (x, y, z, vx, vy, vz, wx, wy, wz).
BaselinePrediction ReadBaselinePrediction(const std::string& path);
// The same, from memory (see ParseRecording).
BaselinePrediction ParseBaselinePrediction(const std::string& name, const char* data,
                                           std::size_t size);

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
