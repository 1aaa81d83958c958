// Atomic file writes, strict JSON reads and provenance helpers.
#include "src/io/files.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unistd.h>

#include "src/common/error.h"

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
  const std::string cmd = "git -C '" + std::string(RLFIT_SOURCE_DIR) +
                          "' describe --always --dirty --abbrev=12 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return "unknown";
  char buffer[128] = {0};
  std::string out;
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) out += buffer;
  ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.empty() ? "unknown" : out;
}

void EnsureDirectory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw InputError(dir, 0, 0, "cannot create folder");
}

}  // namespace rlfit
