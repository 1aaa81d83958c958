// Which coefficients a command runs with: by default the committed fit in
// results/<model>/coeffs.json (the best the project has), "seed" for the seed notes' values,
// or a coefficients JSON written by `rlfit fit`.
#pragma once

#include <string>

#include "src/io/coeff_file.h"
#include "src/models/ground.h"
#include "src/replay/predictor.h"

namespace rlfit {

// The value of --coeffs that selects the seed notes' coefficients.
inline constexpr const char* kSeedCoeffs = "seed";

// results/<model>/coeffs.json among the shipped resources.
std::string CommittedCoeffsPath(const std::string& model);

// spec "" = CommittedCoeffsPath(model.name), "seed" = DefaultCoeffs, else a file path.
// InputError when the file is missing or invalid.
CoeffFile LoadCoefficients(const ModelInfo& model, const std::string& spec);

// One line saying which coefficients `spec` selects, for tables and JSON provenance, e.g.
// "committed fit (results/aerial/coeffs.json)", "seed notes", "fit.json".
std::string DescribeCoefficients(const std::string& model, const std::string& spec);

// The ground coefficients the wall (surface) model runs with: the committed ground fit,
// results/ground/coeffs.json (InputError when missing or invalid).
GroundCoeffs<double> CommittedGroundCoeffs();

}  // namespace rlfit
