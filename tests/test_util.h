// Helpers shared by the tests: temporary files and the datasets root.
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "src/io/recording.h"

namespace rlfit::testing {

// True in the sanitizer build (scripts/sanitize.sh): tests that sample many random cases draw
// fewer there, where every memory access is checked and runs 20-50x slower; the same checks run.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// A fresh temporary folder, removed when the object goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("rlfit_test_" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `contents` into a file of this folder and returns its path.
  std::string Write(const std::string& name, const std::string& contents) const {
    const std::string p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << contents;
    return p;
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// The datasets root, or "" when the recordings are not on this machine.
inline std::string DataRoot() { return ResolveDataRoot(""); }

// True when the recordings are not on this machine: the cases that read them are then skipped,
// and doctest's summary counts them as skipped, never as passed
// (`TEST_CASE("..." * doctest::skip(testing::NoData()))`). Called while the cases register.
inline bool NoData() {
  try {
    return DataRoot().empty();
  } catch (const std::exception&) {
    return true;  // RLFIT_DATA names no folder: the cases' own reading would say so
  }
}

// The repository's own datasets/ folder.
inline std::string RepoDatasets() { return std::string(RLFIT_SOURCE_DIR) + "/datasets"; }

}  // namespace rlfit::testing
