// The coefficients JSON that `rlfit fit` writes and `rlsim replay --coeffs` reads.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/models/model.h"

namespace rlfit {

inline constexpr int kCoeffSchemaVersion = 1;

struct CoeffFile {
  std::string model;                 // "aerial", "ball", "ground"
  std::vector<double> values;        // flat, in the model's CoeffLayout order
  std::vector<double> std_errors;    // same order; empty when not fitted
  Integration integration;
  nlohmann::json provenance = nlohmann::json::object();  // data, options, git revision
  nlohmann::json fit_report = nlohmann::json::object();  // costs, timings, held-out errors
};

// Strict read: schema version, model name and every coefficient of `layout` must be present.
CoeffFile ReadCoeffFile(const std::string& path, const std::string& model,
                        const CoeffLayout& layout);

// The seed note's coefficients for a model, with default integration settings.
CoeffFile DefaultCoeffs(const std::string& model, const CoeffLayout& layout);

nlohmann::json CoeffFileToJson(const CoeffFile& file, const CoeffLayout& layout);

// Atomic write of CoeffFileToJson.
void WriteCoeffFile(const std::string& path, const CoeffFile& file, const CoeffLayout& layout);

}  // namespace rlfit
