// Coefficient selection shared by replay and predict.
#include "src/replay/coeff_choice.h"

#include "src/common/constants.h"
#include "src/common/error.h"
#include "src/common/number_text.h"
#include "src/common/resources.h"
#include "src/replay/registry.h"

namespace rlfit {

std::string CommittedCoeffsPath(const std::string& model) {
  return ResourcePath("results/" + model + "/coeffs.json");
}

CoeffFile SeedCoeffs(const ModelInfo& model) {
  CoeffFile file = DefaultCoeffs(model.name, *model.layout);
  const Integration& timing = FindDescriptor(model.name).timing;
  file.integration.input_delay_s = timing.input_delay_s;
  file.integration.tick_phase = timing.tick_phase;
  return file;
}

CoeffFile LoadCoefficients(const ModelInfo& model, const std::string& spec) {
  if (spec == kSeedCoeffs) return SeedCoeffs(model);
  const std::string path = spec.empty() ? CommittedCoeffsPath(model.name) : spec;
  return ReadCoeffFile(path, model.name, *model.layout);
}

std::string DescribeCoefficients(const std::string& model, const std::string& spec) {
  if (spec == kSeedCoeffs) return "seed notes";
  if (spec.empty()) return "committed fit (results/" + model + "/coeffs.json)";
  return spec;
}

CoeffFile PredictionCoefficients(const ModelInfo& model, CoeffFile file, const std::string& spec,
                                 bool recording_drift, bool recording_input_delay) {
  if (file.integration.tick_rate_hz != game::kTickRateHz)
    throw InputError(spec.empty() ? CommittedCoeffsPath(model.name) : spec, 0, 0,
                     "integration.tick_rate_hz = " +
                         MessageNumber(file.integration.tick_rate_hz, 6) +
                         " Hz: predict runs the game's tick, " +
                         MessageNumber(game::kTickRateHz, 6) +
                         " Hz (only replay and fit split recorded rows at another rate)");
  if (!recording_input_delay) {
    file.integration.input_delay_s = 0.0;
    file.integration.tick_aligned_inputs = false;
  }
  if (recording_drift) return file;
  const std::string block = kRecordingDriftBlock;
  for (const ParamBlock& b : model.layout->blocks) {
    const bool drift = b.name == block || (b.name.size() > block.size() &&
                                           b.name.compare(b.name.size() - block.size() - 1,
                                                          std::string::npos, "." + block) == 0);
    if (!drift) continue;
    for (int i = b.offset; i < b.offset + b.size; ++i) file.values[i] = 0.0;
  }
  return file;
}

GroundCoeffs<double> CommittedGroundCoeffs() {
  const CoeffFile file = LoadCoefficients(FindModel("ground"), "");
  return GroundCoeffs<double>::FromArray(file.values.data());
}

std::vector<std::vector<double>> CommittedRunsOn(const CoeffLayout& layout) {
  std::vector<std::vector<double>> out;
  for (const CoeffLayout::RunsOn& on : layout.runs_on)
    out.push_back(LoadCoefficients(FindModel(on.model), "").values);
  return out;
}

GroundCoeffs<double> GroundBeneath(const CoeffFile& file, const CoeffLayout& layout) {
  for (std::size_t m = 0; m < file.runs_on.size(); ++m)
    if (layout.runs_on[m].model == "ground")
      return GroundCoeffs<double>::FromArray(file.runs_on[m].data());
  return CommittedGroundCoeffs();
}

}  // namespace rlfit
