// libFuzzer target: which file names are recordings, the episode_NN.csv slice number, and
// the folder search (ExpandRecordingPaths) on a temporary folder holding one file with the
// fuzzed name. The pure functions and the search must agree; only InputError may escape.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "fuzz/fuzz_check.h"
#include "src/common/error.h"
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

// Checks the slice number against the name it came from.
void CheckSliceNumber(const std::string& name) {
  const auto slice = rlfit::EpisodeSliceNumber(name);
  if (!slice) return;
  FUZZ_CHECK(*slice >= 0);
  FUZZ_CHECK(rlfit::IsRecordingFileName(name));
  FUZZ_CHECK(name.size() > 12 && name.compare(0, 8, "episode_") == 0 &&
             name.compare(name.size() - 4, 4, ".csv") == 0);
  const std::string digits = name.substr(8, name.size() - 12);
  const std::size_t first = digits.find_first_not_of('0');
  const std::string value = first == std::string::npos ? "0" : digits.substr(first);
  FUZZ_CHECK(value == std::to_string(*slice));
}

bool UsableFileName(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find('/') == std::string::npos && name.find('\0') == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, std::size_t size) {
  const std::string name(reinterpret_cast<const char*>(bytes), size);
  const bool recording = rlfit::IsRecordingFileName(name);
  CheckSliceNumber(name);
  if (!UsableFileName(name)) return 0;

  static const TempFolder folder;
  const std::string path = folder.path() + "/" + name;
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  FUZZ_CHECK(fd >= 0);
  ::close(fd);
  try {
    const auto files = rlfit::ExpandRecordingPaths({folder.path()});
    FUZZ_CHECK(recording && files.size() == 1 && files[0] == path);
  } catch (const rlfit::InputError&) {
    FUZZ_CHECK(!recording);  // "folder holds no recordings"
  }
  const auto files = rlfit::ExpandRecordingPaths({path});  // a file stands for itself
  FUZZ_CHECK(files.size() == 1 && files[0] == path);
  FUZZ_CHECK(!rlfit::FindBaselineFor(path).has_value());  // no prediction_ file beside it
  try {
    rlfit::ReadRecording(path);  // an empty file
    FUZZ_CHECK(false);
  } catch (const rlfit::InputError&) {
  }
  FUZZ_CHECK(::unlink(path.c_str()) == 0);
  return 0;
}
