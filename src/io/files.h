// File output with provenance: atomic writes (temporary name, then rename), the git
// revision of the source tree, and strict JSON reading.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace rlfit {

// Writes `contents` to `path` through a temporary file in the same folder and a rename, so an
// interrupted run never leaves a half-written file. Throws InputError if it cannot.
void WriteFileAtomic(const std::string& path, const std::string& contents);

// Reads a JSON file; InputError on a missing file or a syntax error.
nlohmann::json ReadJsonFile(const std::string& path);

// Strict member access: InputError naming the file and key when `key` is missing.
const nlohmann::json& RequireKey(const nlohmann::json& object, const std::string& key,
                                 const std::string& file);

// `git describe --always --dirty` of the source tree when the tools were built, or "unknown".
std::string GitRevision();

// Creates the folder (and parents); InputError if it cannot.
void EnsureDirectory(const std::string& dir);

}  // namespace rlfit
