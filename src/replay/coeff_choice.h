// Which coefficients a command runs with: by default the committed fit in
// results/<model>/coeffs.json (the best the project has), "seed" for the seed notes' values,
// or a coefficients JSON written by `rlfit fit`.
#pragma once

#include <string>
#include <vector>

#include "src/io/coeff_file.h"
#include "src/models/ground.h"
#include "src/replay/predictor.h"

namespace rlfit {

// The value of --coeffs that selects the seed notes' coefficients.
inline constexpr const char* kSeedCoeffs = "seed";

// results/<model>/coeffs.json among the shipped resources.
std::string CommittedCoeffsPath(const std::string& model);

// The seed notes' coefficients of `model` (DefaultCoeffs) at the model's input timing
// (ModelDescriptor::timing, src/replay/registry.h): what `--coeffs seed` runs and a fit starts
// from unless given --init.
CoeffFile SeedCoeffs(const ModelInfo& model);

// spec "" = CommittedCoeffsPath(model.name), "seed" = SeedCoeffs, else a file path.
// InputError when the file is missing or invalid.
CoeffFile LoadCoefficients(const ModelInfo& model, const std::string& spec);

// One line saying which coefficients `spec` selects, for tables and JSON provenance, e.g.
// "committed fit (results/aerial/coeffs.json)", "seed notes", "fit.json".
std::string DescribeCoefficients(const std::string& model, const std::string& spec);

// Coefficients block of the recordings' Euler-rate drift (src/models/aerial.h; "aerial." +
// this in the car's layout): how the aerial recordings' floored Euler integers lag their own
// angular velocity, a fact of those recordings, not of the car (a still car turns by it:
// yaw 1.5708 -> 1.5344 in 2 s with the committed aerial fit).
inline constexpr const char* kRecordingDriftBlock = "orientation_drift";

// `file` (loaded from `spec`, see LoadCoefficients) as a prediction from given states runs it
// (`rlsim predict`, the Python Model's predict, rollout and step, the Car object); replay and
// fit run the file as it is. Two facts of the recordings are left out unless kept:
//  - the kRecordingDriftBlock coefficients are set to 0 unless `recording_drift`;
//  - the recordings' input delay (a recorded control acts 15.1 ms later, plus half a tick
//    off the row clock: Integration::input_delay_s) is set to 0, with switches exactly at a
//    control row's time, unless `recording_input_delay`: a control row given at a tick's
//    start acts on that tick, as a simulator's controls do (RocketSim's car.controls, the
//    Python Car's step).
// InputError naming the file and integration.tick_rate_hz when that is not the game's tick
// rate (game::kTickRateHz): a prediction's rows are whole ticks of the game, and the car
// models' rows of 1/120 s take one step whatever the rate below 180 Hz, so another rate
// would be ignored or half-applied; replay and fit split recorded rows by it.
CoeffFile PredictionCoefficients(const ModelInfo& model, CoeffFile file, const std::string& spec,
                                 bool recording_drift, bool recording_input_delay);

// The committed ground fit, results/ground/coeffs.json (InputError when missing or invalid).
GroundCoeffs<double> CommittedGroundCoeffs();

// The committed fits of the models `layout` runs on (CoeffLayout::runs_on), in its order: what
// a fit holds fixed beneath its own coefficients, and so what its file carries (runs_on).
std::vector<std::vector<double>> CommittedRunsOn(const CoeffLayout& layout);

// The ground coefficients a wall or powerslide `file` (of `layout`, which runs on "ground")
// drives with: the ones it carries (runs_on.ground, what it was fitted with), else the committed
// ground fit (the seed notes' file, or a file written before files carried them).
GroundCoeffs<double> GroundBeneath(const CoeffFile& file, const CoeffLayout& layout);

}  // namespace rlfit
