// Atomic file writes, staged output folders, output-target checks, signal cleanup of
// temporaries, strict JSON reads and provenance helpers.
#include "src/io/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <exception>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <pthread.h>
#include <set>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "src/common/error.h"
#include "src/io/recording.h"
#include "git_revision.h"

namespace rlfit {

namespace fs = std::filesystem;

namespace {

// --- the registry of live temporaries, read by the signal handler -----------------------
// Fixed storage and lock-free atomics only: the handler must not allocate or lock.

constexpr int kMaxTemps = 32;
constexpr int kMaxTempPath = 4096;
enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };

struct TempSlot {
  std::atomic<int> state{kFree};
  bool is_dir = false;
  char path[kMaxTempPath] = {0};
};
TempSlot g_temps[kMaxTemps];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

// Registers an absolute path; returns its slot, or -1 when the registry is full (the
// temporary is then still removed on failure, only not on a signal).
int RegisterTemp(const std::string& path, bool is_dir) {
  if (path.size() + 1 > static_cast<std::size_t>(kMaxTempPath)) return -1;
  for (int i = 0; i < kMaxTemps; ++i) {
    int expected = kFree;
    if (g_temps[i].state.compare_exchange_strong(expected, kFilling)) {
      std::memcpy(g_temps[i].path, path.c_str(), path.size() + 1);
      g_temps[i].is_dir = is_dir;
      g_temps[i].state.store(kLive, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void UnregisterTemp(int slot) {
  if (slot >= 0) g_temps[slot].state.store(kFree, std::memory_order_release);
}

// The layout of the entries getdents64 returns.
struct Dirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// Removes `name` under `parent_fd`, a file or a whole folder, with async-signal-safe calls only
// (openat, getdents64, unlinkat, close, lseek).
void RemoveTreeSignalSafe(int parent_fd, const char* name, int depth) {
  if (::unlinkat(parent_fd, name, 0) == 0 || depth > 16) return;
  const int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buffer[2048];
  // Removing entries while reading may skip some: rescan until a pass removes nothing.
  for (int pass = 0; pass < 64; ++pass) {
    bool removed = false;
    ::lseek(fd, 0, SEEK_SET);
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buffer, sizeof(buffer));
      if (n <= 0) break;
      for (long offset = 0; offset < n;) {
        const Dirent64* entry = reinterpret_cast<const Dirent64*>(buffer + offset);
        offset += entry->d_reclen;
        const char* entry_name = entry->d_name;
        if (std::strcmp(entry_name, ".") == 0 || std::strcmp(entry_name, "..") == 0) continue;
        RemoveTreeSignalSafe(fd, entry_name, depth + 1);
        removed = true;
      }
    }
    if (!removed) break;
  }
  ::close(fd);
  ::unlinkat(parent_fd, name, AT_REMOVEDIR);
}

extern "C" void RemoveTempsAndReraise(int sig) {
  const int saved_errno = errno;
  for (TempSlot& slot : g_temps) {
    if (slot.state.load(std::memory_order_acquire) != kLive) continue;
    if (slot.is_dir)
      RemoveTreeSignalSafe(AT_FDCWD, slot.path, 0);
    else
      ::unlink(slot.path);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);  // blocked until this handler returns, then the default action
  errno = saved_errno;
}

// The program and exit status of the terminate handler (InstallTerminateHandler).
const char* g_terminate_program = "rlfit";
int g_terminate_status = 1;

void WriteStderrSignalSafe(const char* text) {
  for (std::size_t left = std::strlen(text); left > 0;) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

// std::terminate's last words: one line, the live temporaries removed, the tools' exit status
// for an internal error. Allocates nothing of its own (it runs when memory may be exhausted).
[[noreturn]] void TerminateCleanly() {
  bool out_of_memory = false;
  if (const std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    } catch (...) {
    }
  }
  WriteStderrSignalSafe(g_terminate_program);
  WriteStderrSignalSafe(out_of_memory ? ": internal error: out of memory\n"
                                      : ": internal error: unhandled exception (terminate)\n");
  for (TempSlot& slot : g_temps) {
    if (slot.state.load(std::memory_order_acquire) != kLive) continue;
    if (slot.is_dir)
      RemoveTreeSignalSafe(AT_FDCWD, slot.path, 0);
    else
      ::unlink(slot.path);
  }
  ::_exit(g_terminate_status);
}

// A registered temporary that is removed unless released.
class TempGuard {
 public:
  TempGuard(std::string path, bool is_dir)
      : path_(std::move(path)), is_dir_(is_dir), slot_(RegisterTemp(path_, is_dir)) {}
  ~TempGuard() {
    if (!released_) {
      std::error_code ignored;
      if (is_dir_)
        fs::remove_all(path_, ignored);
      else
        fs::remove(path_, ignored);
    }
    UnregisterTemp(slot_);
  }
  TempGuard(const TempGuard&) = delete;
  TempGuard& operator=(const TempGuard&) = delete;
  void Release() { released_ = true; }

 private:
  std::string path_;
  bool is_dir_;
  int slot_;
  bool released_ = false;
};

std::string Errno(int err) { return std::strerror(err); }

mode_t CurrentUmask() {
  static const mode_t mask = [] {
    const mode_t m = ::umask(022);
    ::umask(m);
    return m;
  }();
  return mask;
}

// "a folder", "a character device", ... for a file type that is not a regular file.
std::string TypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

bool IsSpecial(mode_t mode) {
  return S_ISCHR(mode) || S_ISBLK(mode) || S_ISFIFO(mode) || S_ISSOCK(mode);
}

// Absolute, normalized, without a trailing separator.
fs::path Normalize(const std::string& path) {
  fs::path p = fs::absolute(path).lexically_normal();
  if (p.filename().empty() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

fs::path ParentOf(const fs::path& normalized) {
  return normalized.has_parent_path() ? normalized.parent_path() : fs::path(".");
}

// Deepest nesting accepted; the files we write nest 5 levels (fit_report.heldout_*).
constexpr int kMaxJsonDepth = 64;

// The 1-based line and column of byte offset `byte` (nlohmann counts bytes read, 1-based).
void LineAndColumn(const std::string& text, std::size_t byte, int* line, int* column) {
  *line = 1;
  *column = 1;
  const std::size_t end = std::min(text.size(), byte > 0 ? byte - 1 : 0);
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++*line;
      *column = 1;
    } else {
      ++*column;
    }
  }
}

// The signals whose handler removes this process's temporaries before the default action.
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

// Holds the cleanup signals back for its scope, in which a temporary is created and
// registered: a signal between the two would leave a temporary the handler does not know about.
class CleanupSignalsHeld {
 public:
  CleanupSignalsHeld() {
    sigset_t held;
    sigemptyset(&held);
    for (int sig : kCleanupSignals) sigaddset(&held, sig);
    ::pthread_sigmask(SIG_BLOCK, &held, &previous_);
  }
  ~CleanupSignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  CleanupSignalsHeld(const CleanupSignalsHeld&) = delete;
  CleanupSignalsHeld& operator=(const CleanupSignalsHeld&) = delete;

 private:
  sigset_t previous_;
};

// `path` as the user named it, for messages: a file inside a staged output folder
// (.NAME.rlfit-tmp.PID.XXXXXX/FILE, see TempTemplate) is named NAME/FILE.
std::string UserPath(const std::string& path) {
  const std::string marker = ".rlfit-tmp.";
  fs::path named;
  for (const fs::path& part : fs::path(path)) {
    std::string s = part.string();
    const std::size_t at = s.rfind(marker);
    if (s.size() > 1 && s[0] == '.' && at != std::string::npos && at > 1) s = s.substr(1, at - 1);
    named /= s;
  }
  return named.string();
}

// The start of the temporary names beside `target`: hidden, then the target's name.
std::string TempPrefix(const fs::path& target, const char* kind) {
  std::string name = target.filename().string();
  if (name.size() > 180) name.resize(180);  // stay under NAME_MAX with the suffix
  return "." + name + "." + kind + ".";
}

// A temporary name beside `target`: TempPrefix, the writer's process id (so a later run can
// tell a temporary whose writer died), and the mkstemp/mkdtemp suffix.
std::string TempTemplate(const fs::path& target, const char* kind) {
  return (ParentOf(target) /
          (TempPrefix(target, kind) + std::to_string(::getpid()) + ".XXXXXX"))
      .string();
}

// Removes the temporaries of `kind` beside `target` that a writer killed with SIGKILL (or a
// crash, or a power cut) left: names TempPrefix + PID + "." + 6 characters whose process no
// longer exists. A live writer's (any other PID that exists) are left alone.
void RemoveStaleTemps(const fs::path& target, const char* kind) {
  const std::string prefix = TempPrefix(target, kind);
  std::error_code ec;
  for (fs::directory_iterator it(ParentOf(target), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());  // PID.XXXXXX
    const std::size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || dot > 9 || rest.size() != dot + 7) continue;
    if (rest.find_first_not_of("0123456789") != dot) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(rest.substr(0, dot)));
    if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

void FsyncDir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // some file systems refuse (EINVAL): the rename is still done
  ::close(fd);
}

bool FolderIsEmpty(const fs::path& dir) {
  std::error_code ec;
  return fs::directory_iterator(dir, ec) == fs::directory_iterator() && !ec;
}

// The manifest StagedDir::Commit writes into every output folder: the entries it wrote, so
// that a later write into the folder can tell a file the user added there (ForeignEntryIn).
constexpr const char* kManifestName = ".rlfit-files";
constexpr const char* kManifestHeader =
    "# rlfit: the files of this output folder; a later write replaces them, and anything else "
    "here stops it unless --force\n";

// A relative path on one line of the manifest: backslash and newline escaped.
std::string ManifestLine(const std::string& relative) {
  std::string line;
  for (char c : relative) {
    if (c == '\\') line += "\\\\";
    else if (c == '\n') line += "\\n";
    else line += c;
  }
  return line;
}

// Every entry below `dir` (files and folders, symbolic links not followed) as manifest lines.
std::vector<std::string> ManifestLinesOf(const fs::path& dir) {
  std::vector<std::string> lines;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string relative = it->path().lexically_relative(dir).string();
    if (relative != kManifestName) lines.push_back(ManifestLine(relative));
  }
  if (ec) throw InputError(UserPath(dir.string()), 0, 0, "cannot list the output: " + ec.message());
  return lines;
}

// The first entry below the rlfit output folder `dir` that its manifest does not list (a file
// the user put there), as a path relative to `dir`; "" when there is none or the folder has no
// manifest (written before rlfit kept one: nothing tells its files apart).
std::string ForeignEntryIn(const fs::path& dir) {
  std::set<std::string> listed;
  if (!ReadOutputFolderListing(dir.string(), &listed)) return "";
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string relative = it->path().lexically_relative(dir).string();
    if (relative != kManifestName && !listed.count(ManifestLine(relative))) return relative;
  }
  return "";
}

// Refuses (unless `force`) to replace the existing folder `dir`, named `out` in messages, when
// it is not empty and not an rlfit output, or an rlfit output holding a file rlfit did not write.
void RequireReplaceableFolder(const std::string& out, const fs::path& dir, bool force) {
  if (force || FolderIsEmpty(dir)) return;
  if (!IsRlfitOutputFolder(dir.string()))
    throw InputError(out, 0, 0,
                     "is a non-empty folder that rlfit did not write; pass --force to replace "
                     "it as a whole");
  const std::string foreign = ForeignEntryIn(dir);
  if (!foreign.empty())
    throw InputError(out, 0, 0,
                     "is an earlier rlfit output that now also holds " + foreign +
                         ", which rlfit did not write; move it out, or pass --force to replace "
                         "the folder as a whole");
}

// Is `inner` `outer` itself or inside it (both canonical)?
bool IsWithin(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin();
  auto i = inner.begin();
  for (; o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

fs::path Canonical(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? Normalize(path) : p;
}

// Creates and removes a temporary entry in `dir`: the real test that the output can be
// written there (access() says yes to root on read-only or immutable places).
void ProbeWritable(const std::string& out, const fs::path& dir) {
  std::string probe = (dir / ".rlfit-probe.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    const int err = errno;
    throw InputError(out, 0, 0, "cannot write in folder " + dir.string() + ": " + Errno(err));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

// The first recording (a .csv or .txt file whose start reads as one: NotARecordingReason) or
// arena mesh (pitch.dat) found in `dir` or its sub-folders (not in an rlfit output folder,
// whose trajectories are named as the recordings were; symbolic links not followed; at most
// 100000 entries looked at), as a path relative to `dir`; "" when there is none.
std::string FindRecordingIn(const fs::path& dir) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (int seen = 0; !ec && it != fs::recursive_directory_iterator() && seen < 100000;
       it.increment(ec), ++seen) {
    const std::string name = it->path().filename().string();
    const std::string extension = it->path().extension().string();
    std::error_code type_ec;
    if (it->is_directory(type_ec)) {
      // An earlier replay's output (its trajectories are named as the recordings were).
      if (IsRlfitOutputFolder(it->path().string())) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(type_ec)) continue;
    const bool recording = (extension == ".csv" || extension == ".txt") &&
                           NotARecordingReason(it->path().string()).empty();
    if (recording || name == "pitch.dat") return it->path().lexically_relative(dir).string();
  }
  return "";
}

// Refuses (unless the caller's --force) to replace the non-empty existing file `out` with an
// output of `kind`: only an rlfit output of the same kind is replaced.
void RequireReplaceableFile(const std::string& out, OutputKind kind) {
  const RlfitFileKind found = RlfitOutputFileKind(out);
  if (found == RlfitFileKind::kNone)
    throw InputError(out, 0, 0, "exists and is not an rlfit output; pass --force to replace it");
  const char* found_name = found == RlfitFileKind::kCoeffs       ? "an rlfit coefficients file"
                           : found == RlfitFileKind::kTrajectory ? "an rlfit predicted trajectory"
                                                                 : "an rlfit summary JSON";
  const char* wanted = nullptr;
  if (kind == OutputKind::kCoeffsFile && found != RlfitFileKind::kCoeffs)
    wanted = "a coefficients file";
  else if (kind == OutputKind::kTrajectoryFile && found != RlfitFileKind::kTrajectory)
    wanted = "a predicted trajectory";
  else if (kind == OutputKind::kRecordingFile)
    wanted = "an episode in the recordings' format";
  if (wanted != nullptr)
    throw InputError(out, 0, 0,
                     std::string("is ") + found_name + ", and this output is " + wanted +
                         "; pass --force to replace it");
}

}  // namespace

void InstallCleanupHandlers() {
  // Past `ulimit -f` a write fails with EFBIG, reported with the file's name and the temporary
  // removed as for a full disk; SIGXFSZ's default action would end the process without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  for (int sig : kCleanupSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = RemoveTempsAndReraise;
    sigemptyset(&action.sa_mask);
    for (int blocked : kCleanupSignals) sigaddset(&action.sa_mask, blocked);
    action.sa_flags = 0;
    ::sigaction(sig, &action, nullptr);
  }
}

void InstallTerminateHandler(const char* program, int exit_status) {
  g_terminate_program = program;
  g_terminate_status = exit_status;
  std::set_terminate(TerminateCleanly);
}

void WriteFileAtomic(const std::string& path, const std::string& contents) {
  fs::path target = Normalize(path);
  struct stat st {};
  bool exists = ::lstat(target.c_str(), &st) == 0;
  if (exists && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path real = fs::canonical(target, ec);
    if (ec)
      throw InputError(UserPath(path), 0, 0, "is a symbolic link to nothing; not replacing it");
    target = real;
    exists = ::lstat(target.c_str(), &st) == 0;
  }
  if (exists && !S_ISREG(st.st_mode))
    throw InputError(UserPath(path), 0, 0, "is " + TypeName(st.st_mode) + "; not replacing it");
  const mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~CurrentUmask());

  RemoveStaleTemps(target, "tmp");
  std::string tmp = TempTemplate(target, "tmp");
  int fd = -1, create_errno = 0;
  std::optional<TempGuard> guard;
  {
    const CleanupSignalsHeld held;
    fd = ::mkstemp(tmp.data());
    create_errno = errno;
    if (fd >= 0) guard.emplace(tmp, false);
  }
  if (fd < 0)
    throw InputError(UserPath(path), 0, 0,
                     "cannot create a file in " + ParentOf(target).string() + ": " +
                         Errno(create_errno));
  auto fail = [&](const std::string& what) {
    const int err = errno;
    ::close(fd);
    throw InputError(UserPath(path), 0, 0, what + ": " + Errno(err));
  };
  const char* data = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write failed");
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, mode) != 0) fail("cannot set permissions");
  if (::fsync(fd) != 0) fail("fsync failed");
  if (::close(fd) != 0) {
    const int err = errno;
    throw InputError(UserPath(path), 0, 0, "write failed: " + Errno(err));
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    throw InputError(UserPath(path), 0, 0,
                     "cannot rename the temporary file into place: " + Errno(err));
  }
  guard->Release();
  FsyncDir(ParentOf(target));
}

StagedDir::StagedDir(const std::string& final_dir, bool force) : force_(force) {
  fs::path target = Normalize(final_dir);
  struct stat st {};
  if (::lstat(target.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      const fs::path real = fs::canonical(target, ec);
      if (ec) throw InputError(final_dir, 0, 0, "is a symbolic link to nothing");
      target = real;
      ::lstat(target.c_str(), &st);
    }
    if (!S_ISDIR(st.st_mode))
      throw InputError(final_dir, 0, 0,
                       "is " + TypeName(st.st_mode) + ", not a folder; not replacing it");
    RequireReplaceableFolder(final_dir, target, force_);
  }
  if (target == target.root_path())
    throw InputError(final_dir, 0, 0, "is the root folder; not replacing it");
  final_dir_ = target.string();
  RemoveStaleTemps(target, "rlfit-tmp");
  // A writer killed between Commit's two renames left the earlier output only in its
  // "rlfit-old" folder: remove those only once the target exists again (never lose a file).
  std::error_code exists_ec;
  if (fs::exists(target, exists_ec)) RemoveStaleTemps(target, "rlfit-old");
  std::string tmp = TempTemplate(target, "rlfit-tmp");
  const CleanupSignalsHeld held;
  if (::mkdtemp(tmp.data()) == nullptr) {
    const int err = errno;
    throw InputError(final_dir, 0, 0,
                     "cannot create a folder in " + ParentOf(target).string() + ": " + Errno(err));
  }
  temp_dir_ = tmp;
  slot_ = RegisterTemp(temp_dir_, true);
  ::chmod(tmp.c_str(), 0777 & ~CurrentUmask());
}

StagedDir::~StagedDir() {
  if (!committed_) {
    std::error_code ignored;
    fs::remove_all(temp_dir_, ignored);
  }
  UnregisterTemp(slot_);
}

std::string StagedDir::Path(const std::string& name) const {
  return (fs::path(temp_dir_) / name).string();
}

void StagedDir::WriteFile(const std::string& name, const std::string& contents) const {
  const std::string path = Path(name);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    throw InputError(UserPath(path), 0, 0, "cannot create: " + Errno(err));
  }
  const char* data = contents.data();
  for (std::size_t left = contents.size(); left > 0;) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      throw InputError(UserPath(path), 0, 0, "write failed: " + Errno(err));
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    throw InputError(UserPath(path), 0, 0, "write failed: " + Errno(err));
  }
}

void StagedDir::Commit() {
  RLFIT_CHECK(!committed_, "StagedDir committed twice");
  std::string manifest = kManifestHeader;
  for (const std::string& line : ManifestLinesOf(temp_dir_)) manifest += line + "\n";
  WriteFile(kManifestName, manifest);
  // Everything staged reaches the disk before the rename makes it the output: one syncfs of
  // the folder's file system rather than an fsync per file (10,000 trajectories: one journal
  // commit instead of 10,000). A failure to write back (EIO, ENOSPC) stops the commit.
  const int dir_fd = ::open(temp_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0 || ::syncfs(dir_fd) != 0) {
    const int err = errno;
    if (dir_fd >= 0) ::close(dir_fd);
    throw InputError(final_dir_, 0, 0, "cannot write the output to disk: " + Errno(err));
  }
  ::close(dir_fd);
  const fs::path target(final_dir_);
  const fs::path parent = ParentOf(target);
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0) {
    if (::rename(temp_dir_.c_str(), target.c_str()) != 0) {
      const int err = errno;
      throw InputError(final_dir_, 0, 0, "cannot move the output folder into place: " + Errno(err));
    }
    committed_ = true;
    FsyncDir(parent);
    return;
  }
  // Checked again: something may have appeared since the constructor.
  if (!S_ISDIR(st.st_mode))
    throw InputError(final_dir_, 0, 0, "is " + TypeName(st.st_mode) + "; not replacing it");
  RequireReplaceableFolder(final_dir_, target, force_);
  // An atomic exchange where the file system has one; the temporary name then holds the old
  // folder (still registered, so a signal from here on removes only the old one).
  std::string old_dir;
  if (::renameat2(AT_FDCWD, temp_dir_.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    old_dir = temp_dir_;
  } else if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {
    // Move the old folder aside (onto an empty folder made for it), then the new one in.
    std::string aside = TempTemplate(target, "rlfit-old");
    if (::mkdtemp(aside.data()) == nullptr || ::rename(target.c_str(), aside.c_str()) != 0) {
      const int err = errno;
      ::rmdir(aside.c_str());
      throw InputError(final_dir_, 0, 0, "cannot move the earlier output aside: " + Errno(err));
    }
    if (::rename(temp_dir_.c_str(), target.c_str()) != 0) {
      const int err = errno;
      ::rename(aside.c_str(), target.c_str());
      throw InputError(final_dir_, 0, 0, "cannot move the output folder into place: " + Errno(err));
    }
    UnregisterTemp(slot_);
    slot_ = RegisterTemp(aside, true);
    old_dir = aside;
  } else {
    const int err = errno;
    throw InputError(final_dir_, 0, 0, "cannot replace the earlier output: " + Errno(err));
  }
  committed_ = true;
  FsyncDir(parent);
  std::error_code ignored;
  fs::remove_all(old_dir, ignored);
}

RlfitFileKind RlfitOutputFileKind(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return RlfitFileKind::kNone;
  char first = 0;
  while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
  }
  if (!in) return RlfitFileKind::kNone;
  if (first == '{') {
    in.seekg(0);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("schema_version")) return RlfitFileKind::kNone;
    const bool coeffs = j.contains("coefficients") && j["coefficients"].is_object() &&
                        j.contains("integration") && j["integration"].is_object();
    return coeffs ? RlfitFileKind::kCoeffs : RlfitFileKind::kOtherJson;
  }
  std::string line;
  in.seekg(0);
  std::getline(in, line);
  for (const char* header : {"source_row,t_s,", "state,source_row,t_s,", "row,t_s,"})
    if (line.rfind(header, 0) == 0) return RlfitFileKind::kTrajectory;
  return RlfitFileKind::kNone;
}

bool IsRlfitOutputFile(const std::string& path) {
  return RlfitOutputFileKind(path) != RlfitFileKind::kNone;
}

bool ReadOutputFolderListing(const std::string& dir, std::set<std::string>* listed) {
  std::ifstream in(fs::path(dir) / kManifestName, std::ios::binary);
  if (!in) return false;
  listed->clear();
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') listed->insert(line);
  return true;
}

bool IsRlfitOutputFolder(const std::string& dir) {
  const fs::path d(dir);
  std::error_code ec;
  auto file = [&](const char* name) { return fs::is_regular_file(d / name, ec); };
  return file("replay_summary.json") || file("baseline.json") ||
         (file("coefficients.json") && file("index.html"));
}

void CheckOutputTarget(const std::string& out, OutputKind kind,
                       const std::vector<std::string>& inputs, bool force) {
  if (out.empty()) return;
  const bool folder = kind == OutputKind::kFolder;
  const fs::path target = Canonical(out);
  struct stat st {};
  const bool exists = ::stat(out.c_str(), &st) == 0;  // follows a symbolic link
  const int stat_errno = errno;
  struct stat link_st {};
  // A link whose target is missing or in a loop would be refused by the write, after the work.
  if (!exists && ::lstat(out.c_str(), &link_st) == 0 && S_ISLNK(link_st.st_mode)) {
    std::error_code ec;
    const fs::path to = fs::read_symlink(out, ec);
    throw InputError(out, 0, 0,
                     std::string(stat_errno == ELOOP ? "is a symbolic link in a loop"
                                                     : "is a symbolic link to nothing") +
                         (ec ? std::string() : " (" + to.string() + ")") +
                         "; not writing through it: remove it or name another output");
  }

  for (const std::string& input : inputs) {
    struct stat in_st {};
    const fs::path in_path = Canonical(input);
    const bool same = (exists && ::stat(input.c_str(), &in_st) == 0 && in_st.st_dev == st.st_dev &&
                       in_st.st_ino == st.st_ino) ||
                      in_path == target;
    if (same)
      throw InputError(out, 0, 0,
                       "is also an input of this command (" + input + "); choose another output");
    if (folder && IsWithin(in_path, target))
      throw InputError(out, 0, 0,
                       "holds an input of this command (" + input +
                           "); the output folder is replaced as a whole: choose another");
  }

  if (exists) {
    if (IsSpecial(st.st_mode))
      throw InputError(out, 0, 0,
                       "is " + TypeName(st.st_mode) + ", not a " + (folder ? "folder" : "file") +
                           "; not replacing it");
    if (!folder) {
      if (S_ISDIR(st.st_mode))
        throw InputError(out, 0, 0, "is a folder; this output is a file (give its name)");
      if (!force && st.st_size > 0) RequireReplaceableFile(out, kind);
    } else {
      if (!S_ISDIR(st.st_mode)) throw InputError(out, 0, 0, "is a file; this output is a folder");
      std::error_code ec;
      const fs::path cwd = fs::current_path(ec);
      if (!ec && IsWithin(Canonical(cwd.string()), target))
        throw InputError(out, 0, 0,
                         "is the current folder or holds it; the output folder is replaced as "
                         "a whole: choose another");
      if (!FolderIsEmpty(target) && !IsRlfitOutputFolder(target.string())) {
        // Recordings are never replaced, not even with --force: the folder would go as a whole.
        const std::string recording = FindRecordingIn(target);
        if (!recording.empty())
          throw InputError(out, 0, 0,
                           "holds recordings (" + recording +
                               "); the output folder is replaced as a whole, and --force does "
                               "not replace recordings: choose another");
      }
      RequireReplaceableFolder(out, target, force);
    }
  }

  const fs::path parent = ParentOf(target);
  if (parent == target) throw InputError(out, 0, 0, "is the root folder; not replacing it");
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    throw InputError(out, 0, 0,
                     "parent folder " + parent.string() +
                         (fs::exists(parent, ec) ? " is not a folder" : " does not exist"));
  // A name the file system cannot hold would fail only at the end, after all the work.
  const long name_max = ::pathconf(parent.c_str(), _PC_NAME_MAX);
  const std::size_t name_bytes = target.filename().string().size();
  if (name_max > 0 && name_bytes > static_cast<std::size_t>(name_max))
    throw InputError(out, 0, 0,
                     "file name too long: " + std::to_string(name_bytes) +
                         " bytes, this file system allows at most " + std::to_string(name_max));
  ProbeWritable(out, parent);
}

void CheckCoeffsTarget(const std::string& out, const std::string& model, bool force) {
  if (out.empty() || force || RlfitOutputFileKind(out) != RlfitFileKind::kCoeffs) return;
  std::ifstream in(out, std::ios::binary);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  const std::string of =
      j.is_object() && j.contains("model") && j["model"].is_string() ? j["model"].get<std::string>()
                                                                    : "";
  if (of != model)
    throw InputError(out, 0, 0,
                     "holds the coefficients of model " + (of.empty() ? "(unnamed)" : of) +
                         ", and this fit is " + model +
                         "'s; name another file, or pass --force to replace them");
  std::error_code ec;
  const fs::path baseline = ParentOf(Canonical(out)) / "baseline.json";
  if (fs::is_regular_file(baseline, ec))
    throw InputError(out, 0, 0,
                     "is the coefficients of the regression baseline beside it (" +
                         baseline.string() +
                         "), which would then describe other coefficients; `rlfit baseline " +
                         model + "` rewrites both, or pass --force");
}

void CheckResultsFolder(const std::string& results_dir) {
  std::error_code ec;
  if (!fs::is_directory(results_dir, ec)) return;
  const std::string recording = FindRecordingIn(Canonical(results_dir));
  if (!recording.empty())
    throw InputError(results_dir, 0, 0,
                     "holds recordings (" + recording +
                         "); --results names the folder of the results/MODEL/ folders, not a "
                         "datasets folder: choose another");
}

void RequireReadableFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw InputError(path, 0, 0, err == ENOENT ? "no such file" : Errno(err));
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const int err = errno;
  ::close(fd);
  if (!stat_ok) throw InputError(path, 0, 0, Errno(err));
  if (!S_ISREG(st.st_mode))
    throw InputError(path, 0, 0, "is " + TypeName(st.st_mode) + ", not a file");
}

std::string NotAFileKind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  return TypeName(st.st_mode);
}

std::string DumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Parses `text`, refusing duplicate keys (nlohmann keeps the last one silently) and nesting
// deeper than kMaxJsonDepth. Every failure is an InputError naming `name`.
nlohmann::json ParseStrictJson(const std::string& name, const std::string& text) {
  using nlohmann::json;
  struct Frame {
    std::string path;  // "" for the top level, else e.g. "coefficients"
    bool object;
    std::set<std::string> keys;
  };
  std::vector<Frame> frames;
  std::string last_key;
  auto child_path = [&]() -> std::string {
    if (frames.empty()) return "";
    const Frame& f = frames.back();
    if (!f.object) return f.path + "[]";
    return f.path.empty() ? last_key : f.path + "." + last_key;
  };
  const json::parser_callback_t callback = [&](int depth, json::parse_event_t event,
                                               json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth)
          throw InputError(name, 0, 0, "JSON nested deeper than " +
                                           std::to_string(kMaxJsonDepth) + " levels");
        frames.push_back({child_path(), event == json::parse_event_t::object_start, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames.empty()) frames.pop_back();
        break;
      case json::parse_event_t::key:
        last_key = parsed.is_string() ? parsed.get<std::string>() : parsed.dump();
        if (!frames.empty() && !frames.back().keys.insert(last_key).second)
          throw InputError(name, 0, 0, "duplicate key \"" + child_path() + "\"");
        break;
      case json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    return json::parse(text, callback);
  } catch (const json::parse_error& e) {
    int line = 0, column = 0;
    LineAndColumn(text, e.byte, &line, &column);
    throw InputError(name, line, column, std::string("invalid JSON: ") + e.what());
  } catch (const json::exception& e) {  // out_of_range.406: a number beyond double (1e999)
    throw InputError(name, 0, 0, std::string("invalid JSON: ") + e.what());
  }
}

nlohmann::json ReadJsonFile(const std::string& path) {
  RequireReadableFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot open: " + Errno(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, 0, 0, "cannot read file");
  return ParseStrictJson(path, text.str());
}

const nlohmann::json& RequireKey(const nlohmann::json& object, const std::string& key,
                                 const std::string& file) {
  if (!object.is_object() || !object.contains(key))
    throw InputError(file, 0, 0, "missing key \"" + key + "\"");
  return object.at(key);
}

std::string GitRevision() {
  // RLFIT_GIT_REVISION comes from git_revision.h, which the build regenerates on every build
  // (cmake/git_revision.cmake): the revision is recorded without reading the source tree.
  return RLFIT_GIT_REVISION;
}

void EnsureDirectory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw InputError(dir, 0, 0, "cannot create folder");
}

}  // namespace rlfit
