// libFuzzer target: file names meet no rule of the code but a dataset manifest's patterns. The
// pattern matcher against the fuzzed name (a name matches itself, `*` and `{n}` as documented),
// and the folder search (ExpandRecordingPaths) on a temporary folder holding one empty file
// with the fuzzed name: with a recording's extension it is listed (a recording cut to nothing,
// which reading refuses), with any other name it is no recording (named as skipped, the folder
// "holds no recordings"), and given as a path it stands for itself. Only InputError may escape.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "src/common/error.h"
#include "src/io/dataset_manifest.h"
#include "src/io/recording.h"

namespace {

// A temporary folder for the whole run, removed at exit.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "path_fuzz_XXXXXX").string();
    FUZZ_CHECK(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The pattern rules of a dataset manifest, checked on one name.
void CheckPatterns(const std::string& name) {
  if (name.find('\0') != std::string::npos) return;
  const bool plain = name.find('*') == std::string::npos && name.find("{n}") == std::string::npos;
  if (plain) FUZZ_CHECK(rlfit::MatchManifestPattern(name, name));
  const bool slash = name.find('/') != std::string::npos;
  FUZZ_CHECK(rlfit::MatchManifestPattern("*", name) == !slash);
  std::string digits;
  const bool all_digits =
      !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
  FUZZ_CHECK(rlfit::MatchManifestPattern("{n}", name, &digits) == all_digits);
  if (all_digits) FUZZ_CHECK(digits == name);
  if (rlfit::MatchManifestPattern("episode_{n}.csv", name, &digits))
    FUZZ_CHECK(name == "episode_" + digits + ".csv");
}

bool UsableFileName(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find('/') == std::string::npos && name.find('\0') == std::string::npos &&
         name != rlfit::kManifestFileName;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, std::size_t size) {
  const std::string name(reinterpret_cast<const char*>(bytes), size);
  CheckPatterns(name);
  if (!UsableFileName(name)) return 0;

  static const TempFolder folder;
  const std::string path = folder.path() + "/" + name;
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  FUZZ_CHECK(fd >= 0);
  ::close(fd);
  std::vector<rlfit::SkippedInput> skipped, unreadable;
  // An empty file with a recording's extension (.csv or .txt, any case) is a recording cut to
  // nothing: a folder lists it, so that reading it fails. Any other empty file is no
  // recording, whatever it is called.
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".csv" || extension == ".txt") {
    const auto listed = rlfit::ExpandRecordingPaths({folder.path()}, &skipped, &unreadable);
    FUZZ_CHECK(listed.size() == 1 && listed[0] == path && skipped.empty() && unreadable.empty());
  } else {
    try {
      rlfit::ExpandRecordingPaths({folder.path()}, &skipped);
      FUZZ_CHECK(false);
    } catch (const rlfit::InputError& e) {
      FUZZ_CHECK(e.file() == folder.path());
    }
    FUZZ_CHECK(skipped.size() == 1 && skipped[0].path == path);
    const auto none = rlfit::ExpandRecordingPaths({folder.path()}, nullptr, &unreadable);
    FUZZ_CHECK(none.empty() && unreadable.size() == 1 && unreadable[0].path == folder.path());
  }
  const auto files = rlfit::ExpandRecordingPaths({path});  // a file stands for itself
  FUZZ_CHECK(files.size() == 1 && files[0] == path);
  try {
    rlfit::ReadRecording(path);  // an empty file
    FUZZ_CHECK(false);
  } catch (const rlfit::InputError&) {
  }
  FUZZ_CHECK(::unlink(path.c_str()) == 0);
  return 0;
}
