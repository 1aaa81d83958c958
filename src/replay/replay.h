// `rlsim replay`: runs recorded episodes through a model over the rows the model covers (open
// loop from the start of each covered stretch, and from windowed restarts out to the longest
// report horizon) and reports prediction error per horizon, quantity, episode and split.
#pragma once

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/io/coeff_file.h"
#include "src/io/episode.h"
#include "src/io/recording.h"
#include "src/replay/metrics.h"
#include "src/replay/predictor.h"
#include "src/replay/regime.h"

namespace rlfit {

class StagedDir;

inline constexpr int kReplaySchemaVersion = 2;

// Longest report horizon, s: the longest recording lasts ~140 s (data.txt), and the error
// curve has a point every curve_step_s up to the longest horizon (1e9 s: hours).
inline constexpr double kMaxHorizonS = 600.0;
// Most report horizons: each is a column of every table and a value per restart and episode
// (a few thousand took gigabytes and a 390 MB summary); the curve already has a point every
// curve_step_s.
inline constexpr int kMaxHorizons = 32;
// Shortest restart spacing, s: one physics tick (constants.h kTickRateHz), the shortest row
// of any recording (freefalling's 120 Hz). A window shorter than a row restarts at every row.
inline constexpr double kMinWindowS = 1.0 / 120.0;

struct ReplayOptions {
  std::string model = "aerial";        // model name (see Models())
  std::vector<std::string> paths;      // files or folders; empty = the model's default data
  std::string data_root;               // datasets root (see ResolveDataRoot)
  // Coefficients (see LoadCoefficients): "" = the committed fit results/<model>/coeffs.json,
  // "seed" = the seed notes' values, else a coefficients JSON. Outside RunReplay only the
  // description in the outputs (DescribeCoefficients).
  std::string coeffs_path;
  std::string out_dir;                 // output folder (created); empty = write nothing
  std::vector<double> horizons_s;      // reported horizons, s (plus "last"); empty = model's;
                                       // at most kMaxHorizons, increasing
  double window_s = 0.5;               // spacing of windowed restarts, s (>= kMinWindowS)
  double curve_step_s = 0.1;           // spacing of the error-vs-horizon curve, s
  bool quiet = false;                  // no progress on stderr
  // Without out_dir, RunReplay reads and replays one file at a time (peak memory: one file);
  // false reads them all first (the reference the tests compare the streamed report with).
  bool stream = true;
  bool force = false;                  // replace an out_dir rlfit did not write (StagedDir)
  bool plots = false;                  // also draw OUT/index.html (scripts/plot_replay.py)
  bool keep_predictions = true;        // keep open-loop rollouts for TrajectoryCsv (memory)
  // Facts about the recordings from the command line (--reference, --handbrake-unrecorded,
  // --clock-origin), over their dataset manifest's.
  RecordingFacts facts;
  // --keep-going: a file that cannot be read (or is of the other kind) is named with its
  // reason in the report (ReplayReport::unreadable) and the rest are replayed; without it the
  // first such file ends the replay with its error and nothing written.
  bool keep_going = false;
  std::string program = "rlsim";       // prefix of warning lines on stderr

  bool Check(std::string* why) const;
};

// A rollout is "diverged" from the first row whose state is not finite or beyond these.
inline constexpr double kDivergedPositionUu = 1e5;   // |x| component, uu (arena ~ 1e4)
inline constexpr double kDivergedSpeedUuS = 1e5;     // |v|, uu/s (car max 2300, ball 6000)
inline constexpr double kDivergedOmegaRadS = 1e3;    // |omega|, rad/s (game max 5.5-6)
bool IsDiverged(const PredictedState& s);

// Where an open-loop prediction departs from its recording: the first row from which the
// velocity error |dv| stays above kDepartureDvUuS for kDepartureRows rows (or to the end of
// the stretch). A bounce that the model places a tick off (a recorded row blends the states
// before and after the game's bounce tick) gives a few rows of large |dv| that then vanish;
// 4 rows (~66 ms) lets those pass. 20 uu/s: ~40x the median open-loop |dv| at 0.5 s.
inline constexpr double kDepartureDvUuS = 20.0;
inline constexpr int kDepartureRows = 4;
// The departure row of `pred` (states of rows first..), -1 if it never departs.
int DepartureRow(const Episode& ep, int first, const std::vector<PredictedState>& pred);
// Worst episodes listed in the table (by open-loop |dx| at the last row).
inline constexpr int kWorstListed = 10;

// One error figure of one episode: a number, or "diverged" (the rollout diverged at or before
// the row it is read at, so there is no number).
struct ErrorPoint {
  bool diverged = false;
  ErrorSample error;
};

struct EpisodeReport {
  std::string name;           // episode name (e.g. "episode_00.csv", "driving_seg02.csv")
  std::string path;           // source recording
  std::string split = "unseen";  // "train" / "heldout" (listed in the coefficients), "unseen"
  int rows = 0;
  int rows_scored = 0;        // rows inside covered stretches
  std::map<std::string, int> rows_left_out;  // per RegimeLabel (and lone covered rows)
  double duration_s = 0.0;
  std::optional<double> diverged_at_s;  // episode time of the first diverged open-loop row
  // Where the open-loop prediction of the first stretch departs (DepartureRow), -1 if never,
  // and what the recorded object was doing there (ModelInfo::situation; empty if none).
  int departure_row = -1;
  double departure_t_s = 0.0;  // episode time of departure_row
  std::string departure_situation;
  std::map<std::string, int> checks;  // ModelInfo::checks; empty if the model has none
  bool has_reference = false;
  std::vector<Regime> regimes;          // per row
  // Per row, what the model does where it covers the row (ModelInfo::row_labels; kept with
  // the predictions); empty: "covered".
  std::vector<std::string> covered_labels;
  // Per horizon label (ReplayReport::horizon_labels) from the first covered stretch; nullopt
  // where the stretch is too short (or there is none).
  std::vector<std::optional<ErrorPoint>> open_loop;
  std::vector<std::optional<ErrorPoint>> reference;   // empty: no reference for this episode
  std::vector<std::vector<ErrorPoint>> windowed;      // per numeric horizon, one per restart
  // On ReplayReport::curve_horizons_s: windowed (one per restart), open loop and reference
  // (from the first covered stretch).
  std::vector<std::vector<ErrorPoint>> curve_windowed;
  std::vector<std::optional<ErrorPoint>> curve_open_loop, curve_reference;
  // The open-loop rollout of each covered stretch (kept when options.keep_predictions), for
  // the trajectory CSV; and the shipped reference position per row where there is one.
  struct PredictedStretch {
    int first = 0;   // episode row of states[0]
    int valid = 0;   // states before the rollout diverged
    std::vector<PredictedState> states;
  };
  std::vector<PredictedStretch> predicted;
  std::vector<Eigen::Vector3d> reference_x;  // empty unless the reference is shipped
  // The prediction at episode row `row`; null where not covered, alone, or diverged.
  const PredictedState* PredictedAt(int row) const;
};

struct ReplayReport {
  std::string model;
  bool has_orientation = true;
  std::vector<double> horizons_s;           // numeric report horizons; labels add "last"
  std::vector<std::string> horizon_labels;  // "0.5s", "1s", "2s", "last"
  double window_s = 0.5;
  double curve_step_s = 0.1;
  std::string coefficients_source;          // DescribeCoefficients
  std::string reference_kind = "none";      // "shipped_predictions", "seed_coefficients", "none"
  std::string reference_label;
  std::vector<SkippedInput> skipped;
  // --keep-going: the inputs that could not be read, with their one-line reasons.
  std::vector<SkippedInput> unreadable;
  bool keep_going = false;
  // What the reader noted about a file (Episode::notes: cuts at gaps of dropped frames, parts
  // left out, columns not read, a missing handbrake column), one entry per note.
  std::vector<SkippedInput> notes;
  std::vector<EpisodeReport> episodes;
  // The error-vs-horizon grid: curve_step_s apart up to the longest report horizon.
  std::vector<double> curve_horizons_s;
  // Windowed errors on that grid over every restart of every episode (diverged excluded).
  std::vector<std::vector<ErrorSample>> curve;

  nlohmann::json ToJson() const;   // schema 2 (see README "Output format"), no provenance
  std::string Table() const;       // the human-readable report
  // Aggregates of one quantity at one horizon label over the episodes of `split` ("all",
  // "train", "heldout", "unseen"). Stats::n counts numbers; Stats::diverged the others.
  Stats OpenLoop(const Quantity& q, int horizon, const std::string& split = "all") const;
  Stats Windowed(const Quantity& q, int horizon, const std::string& split = "all") const;
  Stats Reference(const Quantity& q, int horizon, const std::string& split = "all") const;
  // Open loop over the episodes that have a reference (what the verdict compares).
  Stats OpenLoopWithReference(const Quantity& q, int horizon, const std::string& split) const;
  int EpisodesIn(const std::string& split) const;
  int EpisodesWithReference() const;
  int EpisodesDiverged() const;
  // ModelInfo::checks summed over the episodes of `split`.
  std::map<std::string, int> Checks(const std::string& split = "all") const;
};

// What ReplayEpisodes needs beyond the predictor; every field has a default.
struct ReplayExtras {
  // The earlier model replayed the same way when not every scored episode has a shipped
  // prediction_*.csv; null = no such reference.
  const Predictor* reference = nullptr;
  // Provenance of the coefficients (train_episodes / heldout_episodes give the splits).
  nlohmann::json provenance;
  // DescribeCoefficients; empty = from options.coeffs_path when set, else "given by caller".
  std::string coefficients_source;
  // Per episode; empty = ClassifyRows(model, episode, options.data_root).
  std::vector<std::vector<Regime>> regimes;
  // The reference the caller decided over a larger set of episodes (a streamed replay);
  // empty = decided here (shipped predictions when every scored episode has a usable one).
  std::string reference_kind;
};

// Replays `episodes` (no file output). Used by `rlsim replay` and by `rlfit` for held-out
// validation.
ReplayReport ReplayEpisodes(const std::vector<Episode>& episodes, const Predictor& predictor,
                            const ModelInfo& model, const ReplayOptions& options,
                            const ReplayExtras& extras = {});

// The old nested aggregate block {open_loop|windowed: {quantity: {label: stats}}} over all
// episodes, for the fit report's held-out figures.
nlohmann::json AggregateJson(const ReplayReport& report);

// "train", "heldout" or "unseen" for `ep` given coefficient provenance: by its fingerprint
// (Episode::fingerprint: the recording's content, whatever its name or place) when the
// provenance lists them (train_fingerprints, heldout_fingerprints); in an older provenance by
// path (entries are the source path, plus "#<episode name>" for segments; matched by path
// relative to the data root so that a fit recorded on another machine still applies).
std::string SplitOf(const Episode& ep, const nlohmann::json& provenance,
                    const std::string& data_root);

// The recording files LoadEpisodesFor reads, in its order (the same `skipped`): the paths
// resolved under the data root, or the model's default recordings its dataset manifest names
// (DefaultRecordings); see ExpandRecordingPaths for `skipped` and `unreadable`.
std::vector<std::string> RecordingFilesFor(const ModelInfo& model,
                                           const std::vector<std::string>& paths,
                                           const std::string& data_root,
                                           std::vector<SkippedInput>* skipped = nullptr,
                                           std::vector<SkippedInput>* unreadable = nullptr);
// Why `ep` cannot be replayed by `model` ("is a ball recording; model aerial replays car
// recordings").
std::string KindMismatch(const ModelInfo& model, const Episode& ep);
// --keep-going's rule for a file of the other kind: one more input that cannot be used. Moves
// the episodes not of the model's kind out of `episodes` and names each such file once in
// `unreadable` with KindMismatch.
void SetAsideOtherKinds(const ModelInfo& model, std::vector<Episode>* episodes,
                        std::vector<SkippedInput>* unreadable);
// InputError naming the first episode that is not of the model's kind (ball or car).
void CheckEpisodeKinds(const ModelInfo& model, const std::vector<Episode>& episodes);
// Reads the episodes named by the paths (or the model's defaults under the data root).
// Folders are searched for recordings directly inside them; their sub-folders are not
// searched and are listed in `skipped` when given. With `unreadable` (--keep-going), a file
// that cannot be read or is of the other kind is listed there with its reason and the rest
// are read; without, the first such file is an InputError.
std::vector<Episode> LoadEpisodesFor(const ModelInfo& model, const std::vector<std::string>& paths,
                                     const std::string& data_root,
                                     std::vector<SkippedInput>* skipped = nullptr,
                                     const ReadOptions& read = {},
                                     std::vector<SkippedInput>* unreadable = nullptr);

// Keeps the episodes of files with at least one covered stretch (with their regimes). A file
// with none is an InputError when `single_file` (the only input), else skipped: one line on
// `warnings` and an entry in `skipped`. InputError when nothing at all is covered.
void SelectCovered(const std::string& model, std::vector<Episode>* episodes,
                   std::vector<std::vector<Regime>>* regimes, bool single_file,
                   const std::string& program, std::ostream& warnings,
                   std::vector<SkippedInput>* skipped);

// Whether `ep` has a shipped prediction_*.csv the replay can compare with (the reference
// "shipped_predictions" needs one for every scored episode); one warning line on `warnings`
// (prefixed by `program`) when there is one it cannot use.
bool ShippedPredictionUsable(const Episode& ep, const std::string& program,
                             std::ostream& warnings);

// The output name of each episode's trajectory CSV: its own name, prefixed by its folder
// ("folder__name") when two would collide, and numbered ("2__folder__name") when that still
// collides or names a file of the output folder itself (replay_summary.json, ...).
std::vector<std::string> ReplayOutputNames(const std::vector<EpisodeReport>& episodes);

// The predicted trajectory CSV of one episode (one row per source row of its span).
std::string TrajectoryCsv(const Episode& ep, const EpisodeReport& r, bool orientation);

// Writes the replay outputs into options.out_dir: one predicted trajectory CSV per episode,
// replay_summary.json and summary.txt.
void WriteReplayOutputs(const ReplayReport& report, const std::vector<Episode>& episodes,
                        const CoeffFile& coeffs, const ReplayOptions& options);

// The outputs of WriteReplayOutputs but the trajectory CSVs (replay_summary.json, summary.txt
// and with options.plots the page) into `dir`, not committed: the distributed replay's
// workers write the CSVs (named by ReplayOutputNames) into the same staged folder.
void WriteReplaySummaries(const ReplayReport& report, const CoeffFile& coeffs,
                          const ReplayOptions& options, StagedDir* dir);

// The replay itself, without table or files: loads the coefficients (into *coeffs) and the
// episodes, classifies their rows, skips what nothing covers (one line each on `warnings`),
// replays the rest (into *episodes, aligned with the report's) and keeps the open-loop
// predictions when options.keep_predictions. RunReplay and the Python module call it.
ReplayReport ReplayFiles(const ReplayOptions& options, std::ostream& warnings,
                         std::vector<Episode>* episodes, CoeffFile* coeffs);

// The whole command: ReplayFiles, then the table on `out` and the outputs in options.out_dir
// (predictions are kept only when there is an out_dir).
ReplayReport RunReplay(const ReplayOptions& options, std::ostream& out);

}  // namespace rlfit
