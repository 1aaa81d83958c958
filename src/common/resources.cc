// Shipped-resource lookup relative to the running executable (/proc/self/exe).
#include "src/common/resources.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace rlfit {
namespace {

namespace fs = std::filesystem;

// The resource folder next to the executable; found once (the executable does not move
// while it runs).
const fs::path& ExecutableResourceRoot() {
  static const fs::path root = [] {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    const fs::path exe_dir = ec ? fs::current_path(ec) : exe.parent_path();
    const fs::path build_tree = exe_dir / "share" / "rlfit";
    const fs::path installed = (exe_dir / ".." / "share" / "rlfit").lexically_normal();
    if (fs::is_directory(build_tree, ec)) return build_tree;
    return installed;
  }();
  return root;
}

std::string& ResourceRootOverride() {
  static std::string root;
  return root;
}

}  // namespace

std::string ResourceRoot() {
  if (const char* home = std::getenv("RLFIT_HOME"); home != nullptr && *home != '\0')
    return fs::absolute(home).lexically_normal().string();
  if (!ResourceRootOverride().empty()) return ResourceRootOverride();
  return ExecutableResourceRoot().string();
}

void SetResourceRoot(const std::string& root) {
  ResourceRootOverride() = root.empty() ? root : fs::absolute(root).lexically_normal().string();
}

std::string ResourcePath(const std::string& relative) {
  return (fs::path(ResourceRoot()) / relative).string();
}

std::vector<std::string> DataRootCandidates() {
  std::vector<std::string> out = {"../shared/datasets/lobot", "data/lobot",
                                  ResourcePath("data/lobot")};
  if (const std::string user = UserDataRoot(); !user.empty()) out.push_back(user);
  return out;
}

std::string UserDataRoot() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && *xdg == '/')
    return (fs::path(xdg) / "rlfit" / "lobot").string();
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return (fs::path(home) / ".local" / "share" / "rlfit" / "lobot").string();
  return "";
}

namespace {

std::string& DataRootArgument() {
  static std::string argument = "--data DIR";
  return argument;
}

}  // namespace

void SetDataRootArgument(const std::string& argument) { DataRootArgument() = argument; }

std::string MissingDataRootMessage() {
  // The argument without its placeholder: "--data", "data_root=".
  std::string given = DataRootArgument();
  if (given.size() > 3 && given.compare(given.size() - 3, 3, "DIR") == 0)
    given.erase(given.size() - 3);
  while (!given.empty() && given.back() == ' ') given.pop_back();
  std::string looked = given + ", $RLFIT_DATA";
  std::error_code ec;
  for (const std::string& candidate : DataRootCandidates())
    looked += ", " + fs::absolute(candidate, ec).lexically_normal().string();
  const fs::path fetch = fs::weakly_canonical(ResourcePath("scripts/fetch_datasets.sh"), ec);
  return "no datasets root found (looked at " + looked + "); download the recordings with " +
         (ec ? ResourcePath("scripts/fetch_datasets.sh") : fetch.string()) +
         " or pass " + DataRootArgument();
}

}  // namespace rlfit
