// Tests of the output layer: atomic writes, staged output folders, the output-target checks
// and the removal of temporaries when a writer is killed.
#include "src/io/files.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "src/common/error.h"
#include "src/common/resources.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The message of the InputError `f` throws ("" if none).
template <typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("MissingDataRootMessage names the front end's way to give a root") {
  const std::string tools = MissingDataRootMessage();
  CHECK(tools.find("no datasets root found (looked at --data, $RLFIT_DATA") == 0);
  CHECK(tools.size() > 19);
  CHECK(tools.compare(tools.size() - 19, 19, " or pass --data DIR") == 0);
  SetDataRootArgument("data_root=DIR");
  const std::string python = MissingDataRootMessage();
  SetDataRootArgument("--data DIR");
  CHECK(python.find("no datasets root found (looked at data_root=, $RLFIT_DATA") == 0);
  CHECK(python.find("--data") == std::string::npos);
  CHECK(python.compare(python.size() - 22, 22, " or pass data_root=DIR") == 0);
}

TEST_CASE("WriteFileAtomic replaces a file, keeps its mode and leaves no temporary") {
  TempDir dir;
  const std::string path = dir.Write("a.json", "old");
  ::chmod(path.c_str(), 0640);
  WriteFileAtomic(path, "new contents");
  CHECK(Slurp(path) == "new contents");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  CHECK(Entries(dir.path()) == std::set<std::string>{"a.json"});

  // A symbolic link is written through; the link stays a link.
  fs::create_symlink("a.json", dir.path() + "/link.json");
  WriteFileAtomic(dir.path() + "/link.json", "through the link");
  CHECK(fs::is_symlink(dir.path() + "/link.json"));
  CHECK(Slurp(path) == "through the link");
}

TEST_CASE("WriteFileAtomic refuses a folder, a device and a FIFO, and a missing folder") {
  TempDir dir;
  fs::create_directory(dir.path() + "/sub");
  CHECK(Contains(ErrorOf([&] { WriteFileAtomic(dir.path() + "/sub", "x"); }), "is a folder"));
  CHECK(fs::is_directory(dir.path() + "/sub"));
  const std::string fifo = dir.path() + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(Contains(ErrorOf([&] { WriteFileAtomic(fifo, "x"); }), "is a FIFO"));
  CHECK(fs::is_fifo(fifo));
  // /dev/null is a character device: never renamed over (as root that would replace it).
  CHECK(Contains(ErrorOf([] { WriteFileAtomic("/dev/null", "x"); }), "character device"));
  CHECK(fs::is_character_file("/dev/null"));
  CHECK_THROWS_AS(WriteFileAtomic(dir.path() + "/no/such/dir/a.txt", "x"), InputError);
  CHECK(Entries(dir.path()) == std::set<std::string>{"sub", "fifo"});
}

TEST_CASE("StagedDir writes a new folder and replaces an earlier output as a whole") {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  {
    StagedDir staged(out, false);
    CHECK(!fs::exists(out));  // nothing visible before Commit()
    WriteFileAtomic(staged.Path("episode_01.csv"), "row,t_s\n");
    WriteFileAtomic(staged.Path("replay_summary.json"), "{\"schema_version\": 1}\n");
    staged.Commit();
  }
  CHECK(Entries(out) ==
        std::set<std::string>{".rlfit-files", "episode_01.csv", "replay_summary.json"});
  {
    StagedDir staged(out, false);
    WriteFileAtomic(staged.Path("episode_02.csv"), "row,t_s\n");
    WriteFileAtomic(staged.Path("replay_summary.json"), "{\"schema_version\": 1}\n");
    CHECK(fs::exists(out + "/episode_01.csv"));  // the earlier output until the commit
    staged.Commit();
  }
  // No file of the first run survives, and no temporary folder is left beside.
  CHECK(Entries(out) ==
        std::set<std::string>{".rlfit-files", "episode_02.csv", "replay_summary.json"});
  CHECK(Entries(dir.path()) == std::set<std::string>{"out"});

  // An empty folder is replaced too.
  const std::string empty = dir.path() + "/empty";
  fs::create_directory(empty);
  {
    StagedDir staged(empty, false);
    WriteFileAtomic(staged.Path("summary.txt"), "x");
    staged.Commit();
  }
  CHECK(Entries(empty) == std::set<std::string>{".rlfit-files", "summary.txt"});
}

TEST_CASE("StagedDir removes an uncommitted folder and refuses a foreign one without force") {
  TempDir dir;
  {
    StagedDir staged(dir.path() + "/out", false);
    WriteFileAtomic(staged.Path("a.csv"), "x");
  }  // e.g. an exception before Commit()
  CHECK(Entries(dir.path()).empty());

  const std::string foreign = dir.path() + "/mine";
  fs::create_directory(foreign);
  dir.Write("mine/notes.txt", "my notes");
  CHECK(Contains(ErrorOf([&] { StagedDir staged(foreign, false); }), "--force"));
  CHECK(Entries(dir.path()) == std::set<std::string>{"mine"});
  CHECK(Slurp(foreign + "/notes.txt") == "my notes");
  {
    StagedDir staged(foreign, true);
    WriteFileAtomic(staged.Path("summary.txt"), "x");
    staged.Commit();
  }
  CHECK(Entries(foreign) == std::set<std::string>{".rlfit-files", "summary.txt"});

  const std::string file = dir.Write("plain.txt", "x");
  CHECK(Contains(ErrorOf([&] { StagedDir staged(file, true); }), "not a folder"));
}

// A file the user added to an earlier output folder is not in the folder's manifest: the next
// write into the folder is refused without --force (it was replaced as a whole, the file lost).
TEST_CASE("StagedDir keeps a file the user added to an earlier output unless forced") {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  auto write = [&](bool force) {
    StagedDir staged(out, force);
    staged.WriteFile("replay_summary.json", "{\"schema_version\": 2}\n");
    fs::create_directory(staged.Path("plots"));
    staged.WriteFile("plots/a.png", "png");
    staged.Commit();
  };
  write(false);
  CHECK(Slurp(out + "/.rlfit-files").find("plots/a.png\n") != std::string::npos);
  write(false);  // its own files only: replaced
  dir.Write("out/plots/notes.txt", "my notes");
  const std::string why = ErrorOf([&] { write(false); });
  CHECK(Contains(why, "now also holds plots/notes.txt, which rlfit did not write"));
  CHECK(Contains(ErrorOf([&] { CheckOutputTarget(out, OutputKind::kFolder, {}, false); }),
                 "plots/notes.txt"));
  CHECK(Slurp(out + "/plots/notes.txt") == "my notes");
  CHECK(Entries(dir.path()) == std::set<std::string>{"out"});  // no staging left
  write(true);
  CHECK(!fs::exists(out + "/plots/notes.txt"));
}

// std::terminate (an exception escaping a noexcept function: std::bad_alloc from a JSON
// destructor under `ulimit -v` ended in abort(), exit 134, and left the staging folder) prints
// one line, removes the staged folder and exits with the status given.
TEST_CASE("InstallTerminateHandler: one line, no staging folder, the exit status given") {
  TempDir dir;
  const std::string err = dir.path() + "/stderr.txt";
  fs::create_directory(dir.path() + "/work");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::freopen(err.c_str(), "w", stderr);
    InstallTerminateHandler("rlsim", 3);
    StagedDir staged(dir.path() + "/work/out", false);
    staged.WriteFile("episode_01.csv", "row,t_s\n");
    const std::function<void()> allocate = [] { throw std::bad_alloc(); };
    [&]() noexcept { allocate(); }();  // as a destructor that allocates
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  CHECK(Slurp(err) == "rlsim: internal error: out of memory\n");
  CHECK(Entries(dir.path() + "/work").empty());
}

TEST_CASE("CheckOutputTarget refuses what would destroy an input or fail late") {
  TempDir dir;
  fs::create_directory(dir.path() + "/data");
  const std::string recording = dir.Write("data/episode_00.csv", "1,2,3\n");
  const std::vector<std::string> inputs = {recording};
  const auto check = [&](const std::string& out, OutputKind kind, bool force = false) {
    return ErrorOf([&] { CheckOutputTarget(out, kind, inputs, force); });
  };
  const std::string data = dir.path() + "/data";

  // Fine: nothing given, a new file or folder, an earlier rlfit output.
  CHECK(check("", OutputKind::kFile) == "");
  CHECK(check(dir.path() + "/coeffs.json", OutputKind::kFile) == "");
  CHECK(check(dir.path() + "/out", OutputKind::kFolder) == "");
  const std::string earlier =
      dir.Write("fit.json", "{\"schema_version\": 1, \"model\": \"aerial\"}");
  CHECK(check(earlier, OutputKind::kFile) == "");
  fs::create_directory(dir.path() + "/replayed");
  dir.Write("replayed/replay_summary.json", "{}");
  dir.Write("replayed/episode_00.csv", "row,t_s\n");
  CHECK(check(dir.path() + "/replayed", OutputKind::kFolder) == "");

  // The input itself, by another spelling, through a link, or a folder holding it.
  CHECK(Contains(check(recording, OutputKind::kFile), "is also an input"));
  CHECK(Contains(check(data + "/../data/episode_00.csv", OutputKind::kFile), "is also an input"));
  fs::create_hard_link(recording, dir.path() + "/hard.csv");
  CHECK(Contains(check(dir.path() + "/hard.csv", OutputKind::kFile, true), "is also an input"));
  CHECK(Contains(check(data, OutputKind::kFolder, true), "holds an input"));
  CHECK(Contains(check(dir.path(), OutputKind::kFolder, true), "holds an input"));

  // Devices, folders for files, files for folders.
  CHECK(Contains(check("/dev/null", OutputKind::kFile, true), "character device"));
  CHECK(Contains(check(data, OutputKind::kFile), "is a folder"));
  CHECK(Contains(check(earlier, OutputKind::kFolder), "is a file"));

  // Something that is not ours: only with force.
  const std::string notes = dir.Write("notes.txt", "keep me");
  CHECK(Contains(check(notes, OutputKind::kFile), "--force"));
  CHECK(check(notes, OutputKind::kFile, true) == "");
  fs::create_directory(dir.path() + "/mine");
  dir.Write("mine/notes.txt", "keep me");
  CHECK(Contains(check(dir.path() + "/mine", OutputKind::kFolder), "--force"));
  CHECK(check(dir.path() + "/mine", OutputKind::kFolder, true) == "");

  // An output replaces only an earlier rlfit output of its own kind (without force).
  const std::string coeffs = dir.Write(
      "c.json", "{\"schema_version\": 1, \"coefficients\": {}, \"integration\": {}}");
  const std::string trajectory = dir.Write("t.csv", "source_row,t_s,x\n1,0,0\n");
  CHECK(check(coeffs, OutputKind::kCoeffsFile) == "");
  CHECK(check(trajectory, OutputKind::kTrajectoryFile) == "");
  CHECK(Contains(check(coeffs, OutputKind::kTrajectoryFile), "is an rlfit coefficients file"));
  CHECK(Contains(check(trajectory, OutputKind::kCoeffsFile), "is an rlfit predicted trajectory"));
  CHECK(Contains(check(earlier, OutputKind::kCoeffsFile), "is an rlfit summary JSON"));
  CHECK(Contains(check(trajectory, OutputKind::kRecordingFile), "--force"));
  CHECK(check(coeffs, OutputKind::kTrajectoryFile, true) == "");

  // A symbolic link to nothing or in a loop: refused even with force (the write would be).
  fs::create_symlink("missing/c.json", dir.path() + "/dangling.json");
  CHECK(Contains(check(dir.path() + "/dangling.json", OutputKind::kCoeffsFile, true),
                 "symbolic link to nothing (missing/c.json)"));
  fs::create_symlink("loop_b", dir.path() + "/loop_a");
  fs::create_symlink("loop_a", dir.path() + "/loop_b");
  CHECK(Contains(check(dir.path() + "/loop_a", OutputKind::kFolder, true), "in a loop"));

  // A folder holding recordings (not inputs) is not replaced, not even with force; an earlier
  // replay output inside a folder (trajectories named as recordings) does not count.
  // What a file holds decides, not its name: a named-column recording under any name is one,
  // a three-column episode_00.csv is not.
  fs::create_directories(dir.path() + "/recs/sub");
  dir.Write("recs/sub/drive.csv", "t,x,y,z,vx,vy,vz,wx,wy,wz\n0,0,0,93,0,0,0,0,0,0\n");
  CHECK(Contains(check(dir.path() + "/recs", OutputKind::kFolder, true),
                 "holds recordings (sub/drive.csv)"));
  fs::create_directories(dir.path() + "/notes");
  dir.Write("notes/episode_00.csv", "1,2,3\n");
  dir.Write("notes/todo.txt", "replay the ball\n");
  CHECK(check(dir.path() + "/notes", OutputKind::kFolder, true) == "");
  fs::create_directories(dir.path() + "/outs/replay");
  dir.Write("outs/replay/replay_summary.json", "{}");
  dir.Write("outs/replay/episode_00.csv", "source_row,t_s\n");
  CHECK(check(dir.path() + "/outs", OutputKind::kFolder, true) == "");

  // A parent that does not exist or is not a folder.
  CHECK(Contains(check(dir.path() + "/no/such/coeffs.json", OutputKind::kFile), "does not exist"));
  CHECK(Contains(check(notes + "/coeffs.json", OutputKind::kFile), "is not a folder"));
  CHECK(Contains(check(dir.path() + "/no/such/out", OutputKind::kFolder), "does not exist"));
  // A parent where nothing can be created (sysfs refuses even root).
  CHECK(Contains(check("/sys/rlfit_test.json", OutputKind::kFile), "cannot write in folder"));
  // The probe leaves nothing behind.
  CHECK(!Contains(Slurp(notes), "probe"));
  for (const std::string& name : Entries(dir.path())) CHECK(!Contains(name, "probe"));
}

TEST_CASE("IsRlfitOutputFile and IsRlfitOutputFolder recognise rlfit's outputs only") {
  TempDir dir;
  CHECK(IsRlfitOutputFile(dir.Write("c.json", "{\"schema_version\": 2}")));
  CHECK(IsRlfitOutputFile(dir.Write("t.csv", "row,t_s,x,y,z\n0,0,1,2,3\n")));
  CHECK(RlfitOutputFileKind(dir.Write("p.csv", "source_row,t_s,x\n1,0,0\n")) ==
        RlfitFileKind::kTrajectory);
  CHECK(RlfitOutputFileKind(dir.Write("s.csv", "state,source_row,t_s,x\n1,1,0,0\n")) ==
        RlfitFileKind::kTrajectory);
  CHECK(RlfitOutputFileKind(dir.Write(
            "k.json", "{\"schema_version\": 1, \"coefficients\": {}, \"integration\": {}}")) ==
        RlfitFileKind::kCoeffs);
  CHECK(RlfitOutputFileKind(dir.Write("r.json", "{\"schema_version\": 1, \"coefficients\": {}}")) ==
        RlfitFileKind::kOtherJson);
  CHECK(RlfitOutputFileKind(dir.Write("x.csv", "x,source_row,t_s\n")) == RlfitFileKind::kNone);
  CHECK(!IsRlfitOutputFile(dir.Write("other.json", "{\"a\": 1}")));
  CHECK(!IsRlfitOutputFile(dir.Write("broken.json", "{")));
  CHECK(!IsRlfitOutputFile(dir.Write("episode.csv", "1,2,3\n")));
  CHECK(!IsRlfitOutputFolder(dir.path()));
  dir.Write("baseline.json", "{}");
  CHECK(IsRlfitOutputFolder(dir.path()));
}

// Does `dir` (or a folder in it) hold a temporary of WriteFileAtomic?
bool HoldsTempFile(const std::string& dir) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (Contains(it->path().filename().string(), ".tmp.")) return true;
  return false;
}

// A failed check in KillWriter's polls and retries (see there).
void Must(bool ok, const char* what) {
  if (!ok) FAIL(what);
}

// Forks a child that writes a large file through WriteFileAtomic (into a StagedDir when
// `staged`), kills it with `sig` once its temporary file exists, and returns what is left in
// `dir`. A child that finishes its write before the poll sees the temporary (a fast disk, a
// parent descheduled for the few milliseconds the write takes: CI of stop 22) is not a
// failure of the code under test: its output is removed and another child tried, up to 20.
// The checks of the polls and the retries fail through Must, not REQUIRE: how many polls and
// attempts run depends on the machine's timing, and a REQUIRE in them made the test binary's
// assertion count vary from run to run, hiding a change in what the suite checks.
std::set<std::string> KillWriter(const std::string& dir, bool staged, int sig) {
  const std::set<std::string> before = Entries(dir);
  auto remove_output = [&] {  // what a finished write left
    Must(!HoldsTempFile(dir), "a finished write left a temporary");
    for (const std::string& name : Entries(dir))
      if (before.count(name) == 0) fs::remove_all(fs::path(dir) / name);
  };
  for (int attempt = 0; attempt < 20; ++attempt) {
    const pid_t child = ::fork();
    Must(child >= 0, "fork failed");
    if (child == 0) {
      try {
        InstallCleanupHandlers();
        std::unique_ptr<StagedDir> folder;
        std::string target = dir + "/out.json";
        if (staged) {
          folder = std::make_unique<StagedDir>(dir + "/out", false);
          WriteFileAtomic(folder->Path("first.csv"), "row,t_s\n");
          target = folder->Path("second.csv");
        }
        WriteFileAtomic(target, std::string(64u << 20, 'x'));  // 64 MiB and an fsync
      } catch (const std::exception& e) {
        std::fprintf(stderr, "KillWriter's child: %s\n", e.what());  // for the REQUIRE below
        ::_exit(1);
      }
      ::_exit(0);
    }
    // Poll (1 ms) until the temporary file exists or the child has ended. Up to 120 s: under
    // a sanitizer on a loaded machine the child has taken over 10 s to get there (CI of stop 17).
    int status = 0;
    bool seen = false;
    bool ended = false;
    for (int i = 0; i < 120000 && !seen && !ended; ++i) {
      seen = HoldsTempFile(dir);
      if (seen) break;
      const pid_t done = ::waitpid(child, &status, WNOHANG);
      Must(done >= 0, "waitpid failed");
      ended = done == child;
      if (!ended) ::usleep(1000);
    }
    if (ended) {
      // The write finished (or failed) unseen: it must have left only its output.
      Must(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the unseen write failed");
      remove_output();
      continue;
    }
    Must(seen, "no temporary seen in 120 s");
    ::kill(child, sig);
    Must(::waitpid(child, &status, 0) == child, "waitpid on the killed writer failed");
    // The write may have ended between the poll and the kill (CI of stop 22: the temporary was
    // seen, then renamed into place): the child exited, or was killed after its rename. Then
    // this attempt tested nothing: try again.
    if ((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
        (!staged && fs::exists(fs::path(dir) / "out.json"))) {
      remove_output();
      continue;
    }
    CHECK(WIFSIGNALED(status));  // re-raised with the default action
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == sig);
    return Entries(dir);
  }
  FAIL("20 writers finished before their temporary was seen");
  return {};
}

TEST_CASE("a writer killed by SIGTERM or SIGINT mid-write leaves no temporary") {
  {
    TempDir dir;
    dir.Write("keep.txt", "x");
    CHECK(KillWriter(dir.path(), false, SIGTERM) == std::set<std::string>{"keep.txt"});
  }
  {
    TempDir dir;
    CHECK(KillWriter(dir.path(), true, SIGINT).empty());
  }
}

TEST_CASE("the next write removes what a writer killed by SIGKILL left, not a live writer's") {
  TempDir dir;
  // SIGKILL runs no handler: the staged folder (with its half-written file) stays behind.
  const std::set<std::string> left = KillWriter(dir.path(), true, SIGKILL);
  REQUIRE(left.size() == 1);
  const std::string dead_temp = *left.begin();
  CHECK(Contains(dead_temp, ".out.rlfit-tmp."));
  // A temporary of a writer still running (this test's parent) beside it.
  const std::string live = ".out.rlfit-tmp." + std::to_string(::getppid()) + ".AbCdEf";
  fs::create_directory(dir.path() + "/" + live);
  {
    StagedDir staged(dir.path() + "/out", false);
    WriteFileAtomic(staged.Path("summary.txt"), "x");
    staged.Commit();
  }
  CHECK(Entries(dir.path()) == std::set<std::string>{"out", live});

  // The same for a single file.
  TempDir files;
  REQUIRE(KillWriter(files.path(), false, SIGKILL).size() == 1);
  WriteFileAtomic(files.path() + "/out.json", "{}");
  CHECK(Entries(files.path()) == std::set<std::string>{"out.json"});
}

}  // namespace
}  // namespace rlfit
