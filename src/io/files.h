// File output with provenance and without loss: atomic writes (a fresh temporary file,
// fsync, rename), staged output folders replaced as a whole, the checks every output target
// passes before any work, cleanup of temporaries on SIGINT/SIGTERM, the git revision of the
// source tree, and strict JSON reading.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
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
// Past `ulimit -f`, SIGXFSZ is ignored so that a write fails with EFBIG and is reported as a
// full disk is (one line naming the file, its temporary removed).
void InstallCleanupHandlers();

// Makes std::terminate (an exception escaping a noexcept function, such as std::bad_alloc from a
// destructor under memory pressure) print one line "PROGRAM: internal error: out of memory"
// (or "unhandled exception"), remove the live temporaries and staged folders, and exit with
// `exit_status`, instead of abort()'s core dump and a staging folder left behind.
void InstallTerminateHandler(const char* program, int exit_status);

// An output folder written as a whole. Files go into a fresh sibling temporary folder
// (mkdtemp, removed on a signal once InstallCleanupHandlers() ran); Commit() lists them in the
// folder's manifest (.rlfit-files), syncs them to disk and replaces `final_dir` by the folder.
// If `final_dir` does not exist it is renamed into place; if it is empty or an earlier rlfit
// output (IsRlfitOutputFolder) holding only what its manifest lists, it is exchanged with the
// new one and removed, so no file of an earlier run survives; a non-empty folder that is not
// ours, or ours with a file the user added, is replaced only with `force`, else the
// constructor throws InputError (before anything is written). The destructor removes an
// uncommitted temporary folder.
class StagedDir {
 public:
  StagedDir(const std::string& final_dir, bool force);
  ~StagedDir();
  StagedDir(const StagedDir&) = delete;
  StagedDir& operator=(const StagedDir&) = delete;

  // Where to write the output file `name` (relative to the folder) before Commit().
  std::string Path(const std::string& name) const;
  // Writes the new file `name` of the folder (InputError naming it by the folder's final name
  // when it cannot). Not synced one by one: Commit() syncs the whole folder before it becomes
  // the output, and until then the folder is only a temporary.
  void WriteFile(const std::string& name, const std::string& contents) const;
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
// (IsRlfitOutputFolder) or holds a file its manifest does not list (see StagedDir) unless
// `force`; and a parent folder that does not exist or is not
// writable. `out` empty: nothing to check. Call right after parsing, before any reading.
void CheckOutputTarget(const std::string& out, OutputKind kind,
                       const std::vector<std::string>& inputs, bool force);

// Refuses, with InputError naming `out` unless `force`, to write `model`'s coefficients
// (`rlfit fit --out`) over an existing coefficients file of another model, or over the
// coeffs.json of a regression baseline (a baseline.json beside it, as in results/MODEL/:
// it would then describe other coefficients; `rlfit baseline` writes the two together).
void CheckCoeffsTarget(const std::string& out, const std::string& model, bool force);

// Refuses, with InputError naming it, a `rlfit baseline --results` folder that holds
// recordings or an arena mesh (a datasets root), even with --force.
void CheckResultsFolder(const std::string& results_dir);

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

// The entries an output folder's manifest (.rlfit-files, written by StagedDir::Commit) lists:
// paths relative to `dir`, '/'-separated, with backslash and newline escaped as "\\\\" and "\\n".
// False when `dir` has no readable manifest (not an rlfit output, or one written before rlfit
// kept it).
bool ReadOutputFolderListing(const std::string& dir, std::set<std::string>* listed);

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

// Parses the JSON `text` of the file `name` strictly, the one policy of every JSON input
// (coefficients, baselines, --states): a syntax error names line and column, a duplicate key
// is refused naming it (nlohmann would keep the last one silently), and so is nesting deeper
// than 64 levels. Every failure is an InputError naming `name`.
nlohmann::json ParseStrictJson(const std::string& name, const std::string& text);

// Reads a JSON file through ParseStrictJson; InputError on a file RequireReadableFile refuses.
nlohmann::json ReadJsonFile(const std::string& path);

// Strict member access: InputError naming the file and key when `key` is missing.
const nlohmann::json& RequireKey(const nlohmann::json& object, const std::string& key,
                                 const std::string& file);

// `git describe --always --dirty` of the source tree when the tools were built, or "unknown".
std::string GitRevision();

// Creates the folder (and parents); InputError if it cannot.
void EnsureDirectory(const std::string& dir);

}  // namespace rlfit
