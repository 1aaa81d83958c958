// Coefficients JSON: named values with standard errors, integration settings, provenance.
#include "src/io/coeff_file.h"

#include "src/common/error.h"
#include "src/io/files.h"

namespace rlfit {

CoeffFile ReadCoeffFile(const std::string& path, const std::string& model,
                        const CoeffLayout& layout) {
  const nlohmann::json j = ReadJsonFile(path);
  try {
    const int version = RequireKey(j, "schema_version", path).get<int>();
    if (version != kCoeffSchemaVersion)
      throw InputError(path, 0, 0, "schema_version " + std::to_string(version) +
                                       " is not supported (expected " +
                                       std::to_string(kCoeffSchemaVersion) + ")");
    CoeffFile file;
    file.model = RequireKey(j, "model", path).get<std::string>();
    if (file.model != model)
      throw InputError(path, 0, 0, "coefficients are for model \"" + file.model +
                                       "\", not \"" + model + "\"");
    const nlohmann::json& values = RequireKey(j, "coefficients", path);
    for (const std::string& name : layout.names)
      file.values.push_back(RequireKey(values, name, path).get<double>());
    if (j.contains("std_errors")) {
      for (const std::string& name : layout.names)
        file.std_errors.push_back(RequireKey(j["std_errors"], name, path).get<double>());
    }
    const nlohmann::json& integ = RequireKey(j, "integration", path);
    file.integration.tick_rate_hz = RequireKey(integ, "tick_rate_hz", path).get<double>();
    file.integration.input_delay_s = RequireKey(integ, "input_delay_s", path).get<double>();
    file.integration.tick_aligned_inputs =
        RequireKey(integ, "tick_aligned_inputs", path).get<bool>();
    file.integration.ticks_per_clock_row =
        RequireKey(integ, "ticks_per_clock_row", path).get<double>();
    file.integration.rotate_with_new_omega =
        RequireKey(integ, "rotation_update", path).get<std::string>() == "new_omega";
    if (j.contains("provenance")) file.provenance = j["provenance"];
    if (j.contains("fit_report")) file.fit_report = j["fit_report"];
    return file;
  } catch (const nlohmann::json::type_error& e) {
    throw InputError(path, 0, 0, std::string("wrong type: ") + e.what());
  }
}

CoeffFile DefaultCoeffs(const std::string& model, const CoeffLayout& layout) {
  CoeffFile file;
  file.model = model;
  file.values = layout.defaults;
  file.provenance = {{"source", "seed note defaults"}};
  return file;
}

nlohmann::json CoeffFileToJson(const CoeffFile& file, const CoeffLayout& layout) {
  RLFIT_CHECK(static_cast<int>(file.values.size()) == layout.size(), "coefficient count");
  nlohmann::json j;
  j["schema_version"] = kCoeffSchemaVersion;
  j["model"] = file.model;
  nlohmann::json values, errors, defaults, units;
  for (int i = 0; i < layout.size(); ++i) {
    values[layout.names[i]] = file.values[i];
    defaults[layout.names[i]] = layout.defaults[i];
    units[layout.names[i]] = layout.units[i];
    if (!file.std_errors.empty()) errors[layout.names[i]] = file.std_errors[i];
  }
  j["coefficients"] = values;
  if (!file.std_errors.empty()) j["std_errors"] = errors;
  j["defaults"] = defaults;
  j["units"] = units;
  j["integration"] = {{"tick_rate_hz", file.integration.tick_rate_hz},
                      {"input_delay_s", file.integration.input_delay_s},
                      {"tick_aligned_inputs", file.integration.tick_aligned_inputs},
                      {"ticks_per_clock_row", file.integration.ticks_per_clock_row},
                      {"rotation_update",
                       file.integration.rotate_with_new_omega ? "new_omega" : "average_omega"}};
  j["provenance"] = file.provenance;
  j["fit_report"] = file.fit_report;
  return j;
}

void WriteCoeffFile(const std::string& path, const CoeffFile& file, const CoeffLayout& layout) {
  WriteFileAtomic(path, CoeffFileToJson(file, layout).dump(2) + "\n");
}

}  // namespace rlfit
