// Dataset manifests: what the layout of a folder of recordings implies beyond their rows (each
// model's default recordings, shipped reference predictions, slices of one recording clock, a
// handbrake that was not recorded), declared in a small JSON file beside the data, or given on
// the command line for anyone's files. The code keys no behaviour on a file's or folder's name:
// names matter only where a manifest or the command line says so.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace rlfit {

// The manifest's file name in the folder it describes (scripts/fetch_datasets.sh installs the
// shipped one there).
inline constexpr const char* kManifestFileName = "rlfit_dataset.json";
inline constexpr int kManifestSchemaVersion = 1;
// Where the tools' resources hold manifests for datasets whose folder has none (the read-only
// offline copy of the Lobot recordings): ResourcePath(kShippedManifestsDir)/*.json, each
// applied to a folder holding its `identify` files with their sizes and hashes.
inline constexpr const char* kShippedManifestsDir = "datasets/manifests";

// Facts about recordings given on the command line (--reference, --handbrake-unrecorded,
// --clock-origin); they apply to every file read and take precedence over a manifest's.
struct RecordingFacts {
  // The earlier model's prediction of recording F is reference_dir/<F's file name> (9 columns
  // x, y, z, vx, vy, vz, wx, wy, wz, one row per row of F); "" = none.
  std::string reference_dir;
  bool handbrake_unrecorded = false;  // the handbrake column holds no presses although used
  // Where row 0 of each recording sits on its 61 Hz row clock, rows (Episode::clock_origin_rows);
  // NaN = unknown.
  double clock_origin_rows = std::numeric_limits<double>::quiet_NaN();

  bool Empty() const;
  // False (with the reason) unless clock_origin_rows is NaN or finite and >= 0.
  bool Check(std::string* why) const;
};
// The facts as a summary's options record them and the distributed engine's payloads carry
// them: an object with the keys of the facts given (reference_dir, handbrake_unrecorded,
// clock_origin_rows); and back (a missing key, or null, is the fact not given).
nlohmann::json RecordingFactsJson(const RecordingFacts& facts);
RecordingFacts RecordingFactsFromJson(const nlohmann::json& j);

// A manifest as read (README "Data", "Dataset manifests"). Paths and patterns are relative to
// `root` with '/' separators; in a pattern `*` stands for any characters within one path
// component and `{n}` for one or more ASCII digits (one `{n}` at most).
struct DatasetManifest {
  std::string file;  // the manifest's path
  std::string root;  // the folder its paths are relative to
  std::string name;  // what the dataset is
  // Model name -> its default recordings (files or folders) when a command names none.
  std::map<std::string, std::vector<std::string>> default_data;
  // Recordings whose handbrake column holds no presses although the handbrake was used.
  std::vector<std::string> handbrake_unrecorded;
  // Recordings that are slices of one recording clock: a file matching `recordings` with digits
  // n starts at row origin_rows + rows_per_n * n of it.
  struct ClockSlices {
    std::string recordings;
    double origin_rows = 0.0;
    double rows_per_n = 0.0;
  };
  std::vector<ClockSlices> clock_slices;
  // Shipped predictions: the recording matching `recordings` is predicted by the file
  // `reference` names, with the same digits for {n}; such files are not recordings.
  struct References {
    std::string recordings;
    std::string reference;
  };
  std::vector<References> references;
  // For a shipped manifest: files (relative to the root) with their size and FNV-1a 64 hash
  // that identify the dataset's folder.
  struct Identify {
    std::string path;
    std::uintmax_t bytes = 0;
    std::uint64_t fnv1a64 = 0;
  };
  std::vector<Identify> identify;
};

// Reads a manifest strictly: known keys only, each of its type, schema_version 1, valid
// patterns; anything else is an InputError naming the file. `root` is the folder it describes.
DatasetManifest ReadDatasetManifest(const std::string& file, const std::string& root);

// The manifest that applies to `path` (a recording or a folder): the nearest folder at or above
// it that holds kManifestFileName, or else the identify files of a shipped manifest; null when
// there is none. Read once per folder (thread-safe); a malformed manifest is an InputError.
std::shared_ptr<const DatasetManifest> FindDatasetManifest(const std::string& path);

// `relative` (a path relative to the manifest root) matches `pattern`; *digits receives the
// digits {n} matched (unchanged when the pattern has none). Pure.
bool MatchManifestPattern(const std::string& pattern, const std::string& relative,
                          std::string* digits = nullptr);

// What the manifest and the command line say of one recording file.
struct FileFacts {
  bool handbrake_unrecorded = false;
  double clock_origin_rows = std::numeric_limits<double>::quiet_NaN();
  std::string reference;  // the reference prediction's path ("" = none, or it does not exist)
  std::string source;     // "dataset manifest FILE", "command line", both, or ""
};
FileFacts FactsForRecording(const std::string& recording, const RecordingFacts& given);

// The recordings a command that names none reads for `model`: the paths the dataset manifest of
// `data_root` lists for it (default_data), under the root. InputError when the root has no
// manifest or it names none for the model.
// `relative`: the paths as the manifest lists them, relative to its root.
std::vector<std::string> DefaultRecordings(const std::string& model, const std::string& data_root,
                                           bool relative = false);

// Whether `file` is a reference prediction its folder's manifest declares (not a recording).
bool IsDeclaredReference(const std::string& file);

// FNV-1a 64 of a file's bytes (InputError when it cannot be read).
std::uint64_t HashFileFnv1a64(const std::string& path);

}  // namespace rlfit
