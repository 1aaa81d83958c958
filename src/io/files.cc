// Atomic file writes, strict JSON reads and provenance helpers.
#include "src/io/files.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unistd.h>

#include "src/common/error.h"
#include "git_revision.h"

namespace rlfit {

namespace fs = std::filesystem;

void WriteFileAtomic(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, 0, 0, "cannot write file");
    out << contents;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw InputError(path, 0, 0, "write failed");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(path, 0, 0, "cannot rename temporary file into place");
  }
}

nlohmann::json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, 0, "no such file");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, 0, static_cast<int>(e.byte), std::string("invalid JSON: ") + e.what());
  }
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
