// Coefficient selection shared by replay and predict.
#include "src/replay/coeff_choice.h"

#include "src/common/resources.h"

namespace rlfit {

std::string CommittedCoeffsPath(const std::string& model) {
  return ResourcePath("results/" + model + "/coeffs.json");
}

CoeffFile LoadCoefficients(const ModelInfo& model, const std::string& spec) {
  if (spec == kSeedCoeffs) return DefaultCoeffs(model.name, *model.layout);
  const std::string path = spec.empty() ? CommittedCoeffsPath(model.name) : spec;
  return ReadCoeffFile(path, model.name, *model.layout);
}

std::string DescribeCoefficients(const std::string& model, const std::string& spec) {
  if (spec == kSeedCoeffs) return "seed notes";
  if (spec.empty()) return "committed fit (results/" + model + "/coeffs.json)";
  return spec;
}

GroundCoeffs<double> CommittedGroundCoeffs() {
  const CoeffFile file = LoadCoefficients(FindModel("ground"), "");
  return GroundCoeffs<double>::FromArray(file.values.data());
}

}  // namespace rlfit
