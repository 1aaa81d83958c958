// Reading recordings: one reader for every format (the datasets' 13-column ball, 25-column car,
// 26-column timed car, {...}-wrapped .txt, and the named-column format for anyone's
// recordings), a validation pass, row-timing inference, cuts at gaps of dropped frames, and the
// search for data on disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/common/error.h"
#include "src/io/dataset_manifest.h"
#include "src/io/episode.h"

namespace rlfit {

struct ReadOptions {
  // Shortest continuous stretch kept as an episode, rows. Shorter ones (pre-spawn frames,
  // a few rows between two pauses or two gaps of dropped frames) are dropped.
  int min_segment_rows = 30;
  // A timed recording's row whose game-time step exceeds this starts a new segment (pause), s.
  double max_step_s = 0.05;
  // A timed recording's row whose position jumps further than this from the velocity
  // prediction starts a new segment (teleport, restart), uu; in a ball recording it is an error.
  double max_teleport_uu = 60.0;
  // Facts from the command line (--reference, --handbrake-unrecorded, --clock-origin), applied
  // by ReadRecording to every file over its dataset manifest's.
  RecordingFacts facts;

  // False (with the reason) unless every field is in its range: min_segment_rows >= 2,
  // max_step_s in (0, 1], max_teleport_uu > 0, facts valid.
  bool Check(std::string* why) const;
};

// An input not read: a file that is not a recording, a file given twice, a sub-folder, or
// (--keep-going) a file that cannot be read, with the one-line reason.
struct SkippedInput {
  std::string path;
  std::string reason;
};

// With --keep-going, inputs of which nothing at all could be read are still an error (one
// wording for every tool): InputError naming the first unreadable file, with how many there
// were and what was left undone ("replay", "fit on"). No-op when something was read.
void RequireSomethingRead(std::size_t read, const std::vector<SkippedInput>& unreadable,
                          const std::string& what);

// Episode::fingerprint as 16 hexadecimal digits (as provenance lists it).
std::string FingerprintText(std::uint64_t fingerprint);

// An InputError's place and message without its file ("row 3, column 2: ..."): the reason
// listed beside the file it names.
std::string PlaceAndMessage(const InputError& e);

// Reads one recording file; a file with pauses, restarts or gaps of dropped frames yields
// several episodes. Throws InputError naming file, row and column on any malformed or
// implausible value. Loads the file once (never blocking: a FIFO or device is refused as "not a
// regular file"), calls ParseRecording, then gives its episodes the facts its dataset manifest
// and options.facts declare (reference prediction, an unrecorded handbrake, the clock origin of
// a slice: FactsForRecording).
std::vector<Episode> ReadRecording(const std::string& path, const ReadOptions& options = {});

// Parses a recording held in memory: `data[0, size)` is the file's contents, `name` its path
// (used in errors and episode names only). Rows are converted and validated as they are read.
//
// What is accepted, and what is an InputError (at the row and column it names):
// - The first non-blank line picks the format: a header of column names (README "Your own
//   recordings": the named-column format, any order, unknown columns ignored and named in
//   Episode::notes), or 13 columns (ball), 25 (car) or 26 (game time + car). Blank lines
//   (spaces, tabs) are skipped anywhere; Sample::source_row stays the 1-based line of the file.
// - Car rows with |yaw| > 32768 (frames before the car spawns) are skipped before the first
//   car row, and in a timed recording after the game clock broke (went back or paused);
//   anywhere else they are an error at the yaw column.
// - A row that exactly repeats the previous state is merged into it and listed in
//   Episode::merged_source_rows.
// - Positions must lie within twice the arena's extent, speeds within twice the game's caps.
// - Ball rows: a step of under kMinGapRows periods of ~1/61 s by the time column is one row; a
//   longer step (dropped frames), or a step of under half a row (a time stamp repeated, or a
//   little ahead or back) with a new state, cuts the recording there (Episode::notes says where and why; parts
//   shorter than min_segment_rows are left out); time going back further is "rows out of
//   order"; a position jump off the velocity prediction is an error at the x column.
// - Untimed car rows (25 columns, or named without `t`): a step along which a moving car covers
//   kMinGapRows rows or more of its velocity (at 120 Hz: kMaxTicksPerStep120 + 0.5 ticks or
//   more), its path within what the car can turn and speed up or slow down over that time
//   (kMaxCarAccelUuS2), is a gap of dropped frames and cuts the recording; under
//   kMaxOutOfOrderRows is "rows out of order"; a position off the velocity prediction by more
//   than kMaxCarRowJumpUu is an error.
//   At 120 Hz a step spans 1 to 4 ticks.
// - Timed car rows: a zero time step with a new state (a stale time stamp) cuts the recording
//   there, as a ball's does; a step back with the car within max_teleport_uu of where it was
//   is "rows out of order"; a step back beyond it (restart), beyond max_step_s (pause), or a
//   teleport starts a new segment, with a note saying where and why.
std::vector<Episode> ParseRecording(const std::string& name, const char* data, std::size_t size,
                                    const ReadOptions& options = {});

// A step of this many ~1/61 s rows or more is a gap of dropped frames, at which the recording
// is cut: by the ball's time column, or by how far a moving 61 Hz car travels along its
// velocity. Measured: the 258 visible ball episodes step 1 row (2^-12 s quantum) but for two
// hitches of 1.49 and 1.16 rows (episodes 270, 332), whose extra time shows in the motion one
// row later than in the time stamps; public ball episode 343 repeats one time stamp on rows
// 335-337 and steps 4.82 rows to row 338. Moving car steps (>= kMovingSpeedUuS) cover 0.93 to
// 1.14 rows but for two gaps of 2.31 and 2.32 rows, each after a repeated (stale) row
// (spiral_forward_100.txt row 3496, driving.txt row 16127). A gap is cut, not stepped through:
// the rows on both sides lie on a 61 Hz row clock blended between the game's 120 Hz ticks, and
// a gap moves that clock by a fraction of a row (0.16 to 0.49 row in the hitches, 4.82 rows in
// 343, 2.31 where 2 were expected), so no whole number of ticks crosses it and the tick phase
// after it is unknown: each part is replayed from its own recorded state (NOTES "Dropped
// frames"). 120 Hz rows are physics ticks, and a step of 2-4 of them is stepped through.
inline constexpr double kMinGapRows = 1.5;
// Most ticks a 120 Hz car step is stepped through; a moving car covering 4.5 ticks of its
// velocity or more in one step is a gap of dropped frames, cut as at 61 Hz (a car slower than
// kMovingSpeedUuS shows no gap: its step is counted from the motion, 1 to 4 ticks).
inline constexpr int kMaxTicksPerStep120 = 4;

// A car step covering less than this many rows along its velocity while moving is "rows out of
// order" (a swapped pair covers -1 row, a reversed file -1 on every step, a row repeated later
// -(rows between)); the recordings' moving steps cover 0.93 rows or more.
inline constexpr double kMaxOutOfOrderRows = 0.5;
// Speed above which a car step's travel along its velocity measures its length, uu/s.
inline constexpr double kMovingSpeedUuS = 100.0;

// Largest position error of an untimed car row against the trapezoid x + dt (v + v') / 2 from
// the row before, uu. Measured over the 85,785 steps of the 61 Hz car recordings: at most 1.87
// uu (wall_driving/episode_30.csv row 148), p99.9 below 1 uu, apart from the two gaps of
// dropped frames (9.98 and 19.12 uu, cut); the 120 Hz freefalling rows at most 0.06. A car
// stopping dead from its top speed (2300 uu/s) within one 1/61 s row misses the trapezoid by
// 2300 / 60.96 / 2 = 18.9 uu, so 25 uu admits any real row while a row repeated 50 rows later
// is refused down to 31 uu/s (faster moving rows out of order are refused by
// kMaxOutOfOrderRows first). Was 60 (then, as for timed recordings, a teleport).
inline constexpr double kMaxCarRowJumpUu = 25.0;
// Largest acceleration a car keeps up on a surface over a gap of dropped frames, uu/s²: how far
// its path across the gap may stray from the line of its mean velocity (with the change of
// velocity and kMaxCarRowJumpUu; a step off by more is a jump, an error). Measured row to row
// over the 61 Hz car_control episodes: ground_driving_no_handbrake p99.9 4,810 (max 5,454),
// ground_driving_handbrake 4,542 (4,548), aerial 1,072; wall_driving's p99 9,215 lasts a row
// or two (landings, the curve's seams). 20 rows dropped in a powerslide's S-bend (its velocity
// the same on both sides within 41 uu/s, its path 64 uu off that line) are within it.
inline constexpr double kMaxCarAccelUuS2 = 6000.0;

// Largest median distance of a ball episode's steps from a whole number of rows, in rows: a
// recording at 120 Hz (0.51 row a step) or 40 Hz (1.52) is refused. The recordings' median is
// 0.003 row (p90 0.012; the 2^-12 s time quantum is 0.015 row); a quarter row is far from both.
inline constexpr double kMaxBallMedianOffRows = 0.25;

// The text of a file the tools read as rows of numbers (a recording; predict's --states and
// --controls CSVs), with the recording reader's checks of the file itself: a regular file
// (opened without blocking), text (no NUL or control bytes, not UTF-16 or compressed), lines
// ended by LF or CRLF, and a last row ended by a newline (a file cut short may end inside a
// number: "...,0.5" read as "...,0."). InputError naming the file, row and column otherwise.
std::string LoadRowText(const std::string& path);

// Why the file at `path` is not a recording ("" when its first non-blank line reads as one: a
// header naming x, y and z, or 13, 25 or 26 numbers): kNoRowsReason, "its first line is
// neither ...", ... Reads only the start of the file; errors reading it are reasons too. A
// folder's file of kNoRowsReason is listed all the same (ExpandRecordingPaths): a recording cut
// to nothing, which reading refuses.
inline constexpr const char* kNoRowsReason = "empty file (no rows)";
std::string NotARecordingReason(const std::string& path);

// Reads every recording in `paths` (see ExpandRecordingPaths), in that order.
std::vector<Episode> ReadRecordings(const std::vector<std::string>& paths,
                                    const ReadOptions& options = {});

// ReadRecording of each file, concatenated in the files' order, the files read by up to
// `threads` threads (0: one per core; each file is parsed whole by one thread, so the episodes
// are the same as when read one after another). If any file fails, throws the InputError of
// the first failing file in the list: the error reading them in order gives. With `unreadable`
// (--keep-going) every file is read and each one that fails is listed there with its error
// (file, row, column, reason) instead.
std::vector<Episode> ReadRecordingFiles(const std::vector<std::string>& files,
                                        const ReadOptions& options = {}, int threads = 0,
                                        std::vector<SkippedInput>* unreadable = nullptr);

// Lists the recording files the paths stand for, in order: a file stands for itself; a folder
// for every .csv and .txt file directly in it (sorted by name) whose start reads as a recording
// (NotARecordingReason), less the reference predictions its dataset manifest declares. A file
// met twice (the same device and inode: given twice, a folder and a file in it, another
// spelling, a hard link) is listed once. Into `skipped` (when given): every other file of a
// folder and why (not a recording, not .csv/.txt), and every repeat. InputError for a path that
// does not exist or cannot be listed, and for a folder with no recording; with `unreadable`
// (--keep-going) such a path is listed there instead.
std::vector<std::string> ExpandRecordingPaths(const std::vector<std::string>& paths,
                                              std::vector<SkippedInput>* skipped = nullptr,
                                              std::vector<SkippedInput>* unreadable = nullptr);

// Reads a 9-column prediction_*.csv (x, y, z, vx, vy, vz, wx, wy, wz).
BaselinePrediction ReadBaselinePrediction(const std::string& path);
// The same, from memory (see ParseRecording).
BaselinePrediction ParseBaselinePrediction(const std::string& name, const char* data,
                                           std::size_t size);

// The datasets root: `cli_value` if given, else $RLFIT_DATA, else the first existing folder of
// DataRootCandidates() (src/common/resources.h: ../shared/datasets/lobot, data/lobot, the
// build tree's or installed share/rlfit/data/lobot, ~/.local/share/rlfit/lobot). Empty if
// none exists (MissingDataRootMessage() says where it looked).
std::string ResolveDataRoot(const std::string& cli_value);

// A path as given if it exists, else joined to `data_root` if that exists; else as given.
std::string ResolveUnderRoot(const std::string& path, const std::string& data_root);

}  // namespace rlfit
