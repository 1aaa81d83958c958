// Dataset manifests: strict reading, the search above a recording (a folder's own manifest, or a
// shipped one matched to the folder by the content of its identifying files), pattern matching,
// and the facts a manifest and the command line give one recording.
#include "src/io/dataset_manifest.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "src/common/error.h"
#include "src/common/resources.h"
#include "src/io/files.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;

// A slice origin beyond this many rows (hours of 61 Hz rows) is not a slice number but digits
// that happen to match; the clock is then unknown.
constexpr double kMaxOriginRows = 1e9;

// Splits a '/'-separated path into its components.
std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const std::size_t end = std::min(path.find('/', begin), path.size());
    out.push_back(path.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

// Glob match of one component: `*` any run of characters, `{n}` one or more digits (captured).
bool MatchComponent(const char* p, const char* s, std::string* digits) {
  for (;; ++p, ++s) {
    if (*p == '\0') return *s == '\0';
    if (*p == '*') {
      for (const char* rest = s;; ++rest) {
        if (MatchComponent(p + 1, rest, digits)) return true;
        if (*rest == '\0') return false;
      }
    }
    if (std::strncmp(p, "{n}", 3) == 0) {
      const char* end = s;
      while (*end >= '0' && *end <= '9') ++end;
      // The longest run first; a pattern holds one {n}, so backtracking over it is short.
      for (const char* stop = end; stop > s; --stop) {
        if (MatchComponent(p + 3, stop, digits)) {
          if (digits != nullptr) *digits = std::string(s, stop);
          return true;
        }
      }
      return false;
    }
    if (*p != *s) return false;
  }
}

// InputError unless `pattern` is a relative '/'-path without empty, "." or ".." components and
// with at most one {n}.
void CheckPattern(const std::string& file, const std::string& key, const std::string& pattern) {
  auto fail = [&](const std::string& why) {
    throw InputError(file, 0, 0, key + ": pattern \"" + pattern + "\" " + why);
  };
  if (pattern.empty() || pattern[0] == '/')
    fail("must be a path relative to the manifest's folder");
  for (const std::string& c : Components(pattern))
    if (c.empty() || c == "." || c == "..") fail("has an empty, '.' or '..' component");
  std::size_t count = 0;
  for (std::size_t at = pattern.find("{n}"); at != std::string::npos;
       at = pattern.find("{n}", at + 3))
    ++count;
  if (count > 1) fail("holds {n} more than once");
}

bool HasDigits(const std::string& pattern) { return pattern.find("{n}") != std::string::npos; }

// Strict access: the value of `key` when present, checked to be of the kind `is` tests.
const nlohmann::json* Optional(const nlohmann::json& j, const std::string& key,
                               bool (nlohmann::json::*is)() const noexcept, const char* kind,
                               const std::string& file) {
  if (!j.contains(key)) return nullptr;
  const nlohmann::json& v = j.at(key);
  if (!(v.*is)()) throw InputError(file, 0, 0, "\"" + key + "\" must be " + kind);
  return &v;
}

std::string StringOf(const nlohmann::json& v, const std::string& what, const std::string& file) {
  if (!v.is_string()) throw InputError(file, 0, 0, what + " must be a string");
  return v.get<std::string>();
}

void OnlyKeys(const nlohmann::json& j, const std::set<std::string>& known, const std::string& what,
              const std::string& file) {
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key()))
      throw InputError(file, 0, 0, what + ": unknown key \"" + it.key() + "\"");
}

std::vector<std::string> PatternList(const nlohmann::json& v, const std::string& key,
                                     const std::string& file) {
  if (!v.is_array()) throw InputError(file, 0, 0, "\"" + key + "\" must be a list of paths");
  std::vector<std::string> out;
  for (const nlohmann::json& e : v) {
    out.push_back(StringOf(e, key + " entry", file));
    CheckPattern(file, key, out.back());
  }
  return out;
}

double NumberOf(const nlohmann::json& j, const std::string& key, const std::string& what,
                const std::string& file) {
  const nlohmann::json& v = RequireKey(j, key, file);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0.0)
    throw InputError(file, 0, 0, what + ": \"" + key + "\" must be a number >= 0");
  return v.get<double>();
}

// The manifests shipped with the tools (read once).
const std::vector<DatasetManifest>& ShippedManifests() {
  static const std::vector<DatasetManifest> shipped = [] {
    std::vector<DatasetManifest> out;
    std::error_code ec;
    const fs::path dir = ResourcePath(kShippedManifestsDir);
    std::vector<std::string> files;
    for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
      if (it->path().extension() == ".json" && it->is_regular_file(ec))
        files.push_back(it->path().string());
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) out.push_back(ReadDatasetManifest(f, ""));
    return out;
  }();
  return shipped;
}

// Whether `dir` holds every identify file of `m` with its size and hash.
bool Identifies(const DatasetManifest& m, const fs::path& dir) {
  if (m.identify.empty()) return false;
  for (const DatasetManifest::Identify& id : m.identify) {
    std::error_code ec;
    const fs::path p = dir / id.path;
    if (!fs::is_regular_file(p, ec) || fs::file_size(p, ec) != id.bytes || ec) return false;
    if (HashFileFnv1a64(p.string()) != id.fnv1a64) return false;
  }
  return true;
}

// The manifest of folder `dir` itself (its own file, or a shipped one it matches); null if none.
std::shared_ptr<const DatasetManifest> ManifestOfFolder(const fs::path& dir) {
  std::error_code ec;
  const fs::path own = dir / kManifestFileName;
  if (fs::exists(fs::symlink_status(own, ec)))
    return std::make_shared<const DatasetManifest>(
        ReadDatasetManifest(own.string(), dir.string()));
  for (const DatasetManifest& m : ShippedManifests())
    if (Identifies(m, dir)) {
      auto found = std::make_shared<DatasetManifest>(m);
      found->root = dir.string();
      return found;
    }
  return nullptr;
}

// The absolute, lexically normal spelling of `p` (no trailing separator).
fs::path Absolute(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec).lexically_normal();
  if (!a.has_filename() && a.has_parent_path() && a != a.root_path()) a = a.parent_path();
  return a;
}

// The nearest manifest at or above `start` (a folder), and the folder's cache.
std::shared_ptr<const DatasetManifest> SearchUp(const fs::path& start) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const DatasetManifest>> cache;
  std::vector<std::string> visited;
  std::shared_ptr<const DatasetManifest> found;
  for (fs::path dir = start;; dir = dir.parent_path()) {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      const auto it = cache.find(dir.string());
      if (it != cache.end()) {
        found = it->second;
        break;
      }
    }
    visited.push_back(dir.string());
    found = ManifestOfFolder(dir);
    if (found || dir == dir.root_path() || !dir.has_parent_path() || dir.parent_path() == dir)
      break;
  }
  const std::lock_guard<std::mutex> lock(mutex);
  for (const std::string& d : visited) cache[d] = found;
  return found;
}

// The manifest of `path` and the path relative to its root ("" when there is none).
std::shared_ptr<const DatasetManifest> ManifestAndRelative(const std::string& path,
                                                           std::string* relative) {
  std::error_code ec;
  for (const fs::path& p : {Absolute(path), fs::weakly_canonical(Absolute(path), ec)}) {
    if (p.empty()) continue;
    const fs::path start = fs::is_directory(p, ec) ? p : p.parent_path();
    std::shared_ptr<const DatasetManifest> m = SearchUp(start);
    if (!m) continue;
    const fs::path rel = p.lexically_relative(Absolute(m->root));
    if (rel.empty() || *rel.begin() == "..") continue;
    *relative = rel.generic_string();
    return m;
  }
  return nullptr;
}

}  // namespace

nlohmann::json RecordingFactsJson(const RecordingFacts& facts) {
  nlohmann::json j = nlohmann::json::object();
  if (!facts.reference_dir.empty()) j["reference_dir"] = facts.reference_dir;
  if (facts.handbrake_unrecorded) j["handbrake_unrecorded"] = true;
  if (!std::isnan(facts.clock_origin_rows)) j["clock_origin_rows"] = facts.clock_origin_rows;
  return j;
}

RecordingFacts RecordingFactsFromJson(const nlohmann::json& j) {
  RecordingFacts facts;
  if (!j.is_object()) return facts;
  facts.reference_dir = j.value("reference_dir", std::string());
  facts.handbrake_unrecorded = j.value("handbrake_unrecorded", false);
  const auto origin = j.find("clock_origin_rows");
  if (origin != j.end() && origin->is_number()) facts.clock_origin_rows = origin->get<double>();
  return facts;
}

bool RecordingFacts::Empty() const {
  return reference_dir.empty() && !handbrake_unrecorded && std::isnan(clock_origin_rows);
}

bool RecordingFacts::Check(std::string* why) const {
  if (!std::isnan(clock_origin_rows) &&
      !(std::isfinite(clock_origin_rows) && clock_origin_rows >= 0.0 &&
        clock_origin_rows <= kMaxOriginRows)) {
    *why = "--clock-origin must be a number of rows in [0, 1e9]";
    return false;
  }
  return true;
}

std::uint64_t HashFileFnv1a64(const std::string& path) {
  RequireReadableFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot open");
  std::uint64_t h = 0xcbf29ce484222325ULL;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof(buf));
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

bool MatchManifestPattern(const std::string& pattern, const std::string& relative,
                          std::string* digits) {
  const std::vector<std::string> p = Components(pattern), r = Components(relative);
  if (p.size() != r.size()) return false;
  std::string found;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (!MatchComponent(p[i].c_str(), r[i].c_str(), &found)) return false;
  if (digits != nullptr && HasDigits(pattern)) *digits = found;
  return true;
}

DatasetManifest ReadDatasetManifest(const std::string& file, const std::string& root) {
  const nlohmann::json j = ReadJsonFile(file);
  if (!j.is_object()) throw InputError(file, 0, 0, "a dataset manifest is a JSON object");
  OnlyKeys(j,
           {"schema_version", "name", "identify", "default_data", "handbrake_unrecorded",
            "clock_slices", "references"},
           "dataset manifest", file);
  const nlohmann::json& version = RequireKey(j, "schema_version", file);
  if (!version.is_number_integer() || version.get<long long>() != kManifestSchemaVersion)
    throw InputError(file, 0, 0, "schema_version must be the integer 1");
  DatasetManifest m;
  m.file = file;
  m.root = root;
  if (const auto* v = Optional(j, "name", &nlohmann::json::is_string, "a string", file))
    m.name = v->get<std::string>();
  if (const auto* v = Optional(j, "identify", &nlohmann::json::is_array, "a list", file))
    for (const nlohmann::json& e : *v) {
      if (!e.is_object()) throw InputError(file, 0, 0, "identify: entries are objects");
      OnlyKeys(e, {"path", "bytes", "fnv1a64"}, "identify", file);
      DatasetManifest::Identify id;
      id.path = StringOf(RequireKey(e, "path", file), "identify path", file);
      CheckPattern(file, "identify", id.path);
      const nlohmann::json& bytes = RequireKey(e, "bytes", file);
      if (!bytes.is_number_unsigned())
        throw InputError(file, 0, 0, "identify: \"bytes\" must be a whole number");
      id.bytes = bytes.get<std::uintmax_t>();
      const std::string hash = StringOf(RequireKey(e, "fnv1a64", file), "identify fnv1a64", file);
      char* end = nullptr;
      id.fnv1a64 = std::strtoull(hash.c_str(), &end, 16);
      if (hash.size() != 16 || end != hash.c_str() + 16)
        throw InputError(file, 0, 0, "identify: \"fnv1a64\" must be 16 hexadecimal digits");
      m.identify.push_back(id);
    }
  if (const auto* v =
          Optional(j, "default_data", &nlohmann::json::is_object, "an object", file))
    for (auto it = v->begin(); it != v->end(); ++it)
      m.default_data[it.key()] = PatternList(it.value(), "default_data." + it.key(), file);
  if (const auto* v = Optional(j, "handbrake_unrecorded", &nlohmann::json::is_array, "a list",
                               file))
    m.handbrake_unrecorded = PatternList(*v, "handbrake_unrecorded", file);
  if (const auto* v = Optional(j, "clock_slices", &nlohmann::json::is_array, "a list", file))
    for (const nlohmann::json& e : *v) {
      if (!e.is_object()) throw InputError(file, 0, 0, "clock_slices: entries are objects");
      OnlyKeys(e, {"recordings", "origin_rows", "rows_per_n"}, "clock_slices", file);
      DatasetManifest::ClockSlices c;
      c.recordings = StringOf(RequireKey(e, "recordings", file), "clock_slices recordings", file);
      CheckPattern(file, "clock_slices", c.recordings);
      c.origin_rows = NumberOf(e, "origin_rows", "clock_slices", file);
      c.rows_per_n = e.contains("rows_per_n") ? NumberOf(e, "rows_per_n", "clock_slices", file)
                                               : 0.0;
      if (c.rows_per_n > 0.0 && !HasDigits(c.recordings))
        throw InputError(file, 0, 0, "clock_slices: rows_per_n needs {n} in \"recordings\"");
      m.clock_slices.push_back(c);
    }
  if (const auto* v = Optional(j, "references", &nlohmann::json::is_array, "a list", file))
    for (const nlohmann::json& e : *v) {
      if (!e.is_object()) throw InputError(file, 0, 0, "references: entries are objects");
      OnlyKeys(e, {"recordings", "reference"}, "references", file);
      DatasetManifest::References r;
      r.recordings = StringOf(RequireKey(e, "recordings", file), "references recordings", file);
      r.reference = StringOf(RequireKey(e, "reference", file), "references reference", file);
      CheckPattern(file, "references", r.recordings);
      CheckPattern(file, "references", r.reference);
      if (HasDigits(r.recordings) != HasDigits(r.reference))
        throw InputError(file, 0, 0,
                         "references: {n} must be in both \"recordings\" and \"reference\"");
      m.references.push_back(r);
    }
  return m;
}

std::shared_ptr<const DatasetManifest> FindDatasetManifest(const std::string& path) {
  std::string relative;
  return ManifestAndRelative(path, &relative);
}

FileFacts FactsForRecording(const std::string& recording, const RecordingFacts& given) {
  FileFacts facts;
  std::string rel;
  if (const auto m = ManifestAndRelative(recording, &rel)) {
    bool any = false;
    for (const std::string& p : m->handbrake_unrecorded)
      if (MatchManifestPattern(p, rel)) facts.handbrake_unrecorded = any = true;
    for (const DatasetManifest::ClockSlices& c : m->clock_slices) {
      std::string digits;
      if (!MatchManifestPattern(c.recordings, rel, &digits)) continue;
      const double n = digits.empty() ? 0.0 : std::strtod(digits.c_str(), nullptr);
      const double origin = c.origin_rows + c.rows_per_n * n;
      if (origin <= kMaxOriginRows) {
        facts.clock_origin_rows = origin;
        any = true;
      }
      break;
    }
    for (const DatasetManifest::References& r : m->references) {
      std::string digits;
      if (!MatchManifestPattern(r.recordings, rel, &digits)) continue;
      std::string target = r.reference;
      if (const std::size_t at = target.find("{n}"); at != std::string::npos)
        target.replace(at, 3, digits);
      const fs::path p = fs::path(m->root) / target;
      std::error_code ec;
      if (fs::is_regular_file(p, ec)) {
        facts.reference = p.string();
        any = true;
      }
      break;
    }
    if (any) facts.source = "dataset manifest " + m->file;
  }
  if (given.Empty()) return facts;
  bool any = false;
  if (!given.reference_dir.empty()) {
    const fs::path p = fs::path(given.reference_dir) / fs::path(recording).filename();
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      facts.reference = p.string();
      any = true;
    }
  }
  if (given.handbrake_unrecorded) facts.handbrake_unrecorded = any = true;
  if (!std::isnan(given.clock_origin_rows)) {
    facts.clock_origin_rows = given.clock_origin_rows;
    any = true;
  }
  if (any) facts.source += std::string(facts.source.empty() ? "" : " and ") + "command line";
  return facts;
}

std::vector<std::string> DefaultRecordings(const std::string& model,
                                           const std::string& data_root, bool relative) {
  const auto m = FindDatasetManifest(data_root);
  const std::string how =
      "name the recordings, or give the root a dataset manifest " + std::string(kManifestFileName) +
      " whose default_data lists the " + model + " model's (README \"Dataset manifests\")";
  if (!m)
    throw InputError(data_root, 0, 0,
                     "no recordings given and no dataset manifest (none in the folder or above "
                     "it, and none of the tools' own in " +
                         ResourcePath(kShippedManifestsDir) + " describes it): " + how);
  const auto it = m->default_data.find(model);
  if (it == m->default_data.end())
    throw InputError(m->file, 0, 0,
                     "no recordings given and the dataset manifest names none for the " + model +
                         " model: " + how);
  std::vector<std::string> out;
  for (const std::string& p : it->second)
    out.push_back(relative ? p : (fs::path(m->root) / p).string());
  return out;
}

bool IsDeclaredReference(const std::string& file) {
  std::string rel;
  const auto m = ManifestAndRelative(file, &rel);
  if (!m) return false;
  for (const DatasetManifest::References& r : m->references)
    if (MatchManifestPattern(r.reference, rel)) return true;
  return false;
}

}  // namespace rlfit
