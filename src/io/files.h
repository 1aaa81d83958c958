// File output with provenance and without loss: atomic writes (a fresh temporary file,
// fsync, rename), staged output folders replaced as a whole, the checks every output target
// passes before any work, cleanup of temporaries on SIGINT/SIGTERM, the git revision of the
// source tree, and strict JSON reading.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rlfit {

// Writes `contents` to `path` without ever leaving a half-written or lost file: a temporary
// file made by mkstemp (O_EXCL, unique name) in the target's folder, written, fsync'd, renamed
// over the target, then the folder fsync'd. A symbolic link is followed (the link stays). The
// temporary is removed on any failure and, once InstallCleanupHandlers() ran, on the signals it
// handles. Replaces only a regular file: InputError for a folder, device, FIFO or socket, and
// when the folder is missing or not writable (messages name a file of a staged folder by the
// folder's final name).
void WriteFileAtomic(const std::string& path, const std::string& contents);

// Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGPIPE (stdout piped into a reader that
// quit, `| head -1`) that remove the live temporary files and folders (of WriteFileAtomic and
// StagedDir) and then re-raise the signal with its default action. Call once from each tool's main(); a signal the parent set to "ignore" stays ignored.
void InstallCleanupHandlers();

// An output folder written as a whole. Files go into a fresh sibling temporary folder
// (mkdtemp, removed on a signal once InstallCleanupHandlers() ran); Commit() replaces
// `final_dir` by it. If `final_dir` does not exist it is renamed into place; if it is empty or
// an earlier rlfit output (IsRlfitOutputFolder) it is exchanged with the new one and removed,
// so no file of an earlier run survives; a non-empty folder that is not ours is replaced only
// with `force`, else the constructor throws InputError (before anything is written). The
// destructor removes an uncommitted temporary folder.
class StagedDir {
 public:
  StagedDir(const std::string& final_dir, bool force);
  ~StagedDir();
  StagedDir(const StagedDir&) = delete;
  StagedDir& operator=(const StagedDir&) = delete;

  // Where to write the output file `name` (relative to the folder) before Commit().
  std::string Path(const std::string& name) const;
  // The temporary folder itself (for a program that fills it, e.g. a plot script).
  const std::string& dir() const { return temp_dir_; }
  // The folder Commit() replaces.
  const std::string& final_dir() const { return final_dir_; }
  // Moves the staged folder into place (see above). InputError if it cannot.
  void Commit();

 private:
  std::string final_dir_;
  std::string temp_dir_;
  bool force_;
  bool committed_ = false;
  int slot_ = -1;  // in the signal-cleanup registry
};

// What an output option names, and so which existing file it may replace without --force.
enum class OutputKind {
  kFile,            // any file rlfit writes: replaces an earlier rlfit output file of any kind
  kCoeffsFile,      // `rlfit fit --out`: replaces only an earlier coefficients file
  kTrajectoryFile,  // `rlsim predict --out`: replaces only an earlier predicted trajectory
  kRecordingFile,   // `rlsim synth --out`: an episode in the recordings' format, which cannot
                    // be told from a real recording: replaces no non-empty file
  kFolder,          // an output folder, replaced as a whole (StagedDir)
};

// Refuses, with InputError naming `out`, an output target that would destroy something or fail
// only after the work: one of `inputs` (same device and inode, or same canonical path); a
// device, FIFO or socket; a symbolic link to nothing or in a loop; for the file kinds an
// existing folder, or an existing non-empty file that is not an rlfit output of the kind
// `kind` replaces (RlfitOutputFileKind) unless `force`; for kFolder an existing file, a folder
// that holds an input or the current folder, or a non-empty folder that is not an rlfit output
// (IsRlfitOutputFolder) unless `force`; and a parent folder that does not exist or is not
// writable. `out` empty: nothing to check. Call right after parsing, before any reading.
void CheckOutputTarget(const std::string& out, OutputKind kind,
                       const std::vector<std::string>& inputs, bool force);

// Which rlfit output a file is, by its contents.
enum class RlfitFileKind {
  kNone,          // not an rlfit output (or unreadable)
  kCoeffs,        // coefficients JSON: "schema_version", "coefficients" and "integration"
                  // objects (a replay summary has "coefficients" but no "integration")
  kTrajectory,    // predicted-trajectory CSV: header "source_row,t_s,...",
                  // "state,source_row,t_s,..." or the older "row,t_s,..."
  kOtherJson,     // another JSON rlfit writes: "schema_version" (replay summary, baseline)
};
RlfitFileKind RlfitOutputFileKind(const std::string& path);

// A file rlfit wrote: RlfitOutputFileKind is not kNone.
bool IsRlfitOutputFile(const std::string& path);

// A folder rlfit wrote: it holds replay_summary.json (rlsim replay, rlfit crossval),
// baseline.json (rlfit baseline), or coefficients.json and index.html (rlfit fit --plots).
bool IsRlfitOutputFolder(const std::string& dir);

// Refuses, with InputError naming `path` and the reason (no such file, permission denied, a
// folder, a FIFO, ...), a path that is not a readable regular file. Opens without blocking, so
// a FIFO with no writer is refused instead of hanging. Call before a reader opens the file.
void RequireReadableFile(const std::string& path);

// What `path` is ("a folder", "a FIFO", "a character device", ...) when it exists and is not a
// regular file (symbolic links followed); "" when it is one or cannot be examined.
std::string NotAFileKind(const std::string& path);

// The JSON text of `j` (indented by `indent`, -1 for one line). Strings that are not UTF-8 (a
// file name in another encoding) get U+FFFD for their stray bytes instead of failing the
// dump after all the work.
std::string DumpJson(const nlohmann::json& j, int indent);

// Reads a JSON file; InputError on a file RequireReadableFile refuses or a syntax error.
nlohmann::json ReadJsonFile(const std::string& path);

// Strict member access: InputError naming the file and key when `key` is missing.
const nlohmann::json& RequireKey(const nlohmann::json& object, const std::string& key,
                                 const std::string& file);

// `git describe --always --dirty` of the source tree when the tools were built, or "unknown".
std::string GitRevision();

// Creates the folder (and parents); InputError if it cannot.
void EnsureDirectory(const std::string& dir);

}  // namespace rlfit
