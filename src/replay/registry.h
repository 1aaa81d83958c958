// The model registry: one descriptor per model, registered once (in its folder,
// src/models/<name>/<name>_model.cc, or for the models not yet moved there src/replay/models.cc).
// Every list of models (the tools' choices and help, the Python module, the tests, results/,
// the regression check) is read from it; the fit layer keys its fitters by the same names
// (fit/fitters.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/io/episode.h"
#include "src/models/arena.h"
#include "src/replay/predictor.h"
#include "src/replay/regime.h"

namespace rlfit {

// The arena mesh a model's row classification (ClassifyRows) reads.
enum class ArenaUse {
  kNone,          // none: the flat floor is a plane (ground, vehicle, powerslide)
  kPitchOrFloor,  // the pitch mesh; without a datasets root, the floor plane z = 0 alone
  kPitch,         // the pitch mesh; without a datasets root, the error of PitchArena
  kBall,          // the ball's arena (BallArena: the ceiling where it bounces)
};

// What a model's coefficients file carries beyond its layout's values and the integration
// settings every file has (src/io/coeff_file.cc writes and checks it).
enum class CoeffFileExtras {
  kNone,
  kBallClock,  // integration.clock: the clock the ball's coefficients were fitted on
};

// Per-row regimes of `ep` under the model (ClassifyRows, src/replay/regime.h, for what each
// label means): `ep` is of the model's kind (checked before); `arena` is null for
// ArenaUse::kNone, else the mesh the caller chose.
using RegimeClassifier =
    std::function<std::vector<Regime>(const Episode& ep, const Arena* arena)>;

// The starting states `rlsim predict` and the Python Model accept (ModelStartProblem,
// src/replay/predict.h, words the refusal).
enum class StartNeeds {
  kAny,           // any legal state inside the arena mesh (the car switches regimes; the
                  // jump starts anywhere)
  kBallInArena,   // a ball inside the arena mesh, clear of it
  kOnFloor,       // a car resting upright on the flat floor
  kOnSurface,     // a car on a surface of the mesh (floor, ramps, walls, ceiling)
  kClearOfMesh,   // a car in the air, clear of the mesh
};

struct ModelDescriptor {
  // The replay side: name, one-line description, the kind of recording it reads, the
  // coefficient layout, the default horizons and the predictor (ModelInfo, predictor.h).
  ModelInfo replay;
  RegimeClassifier classify;  // which rows it covers
  ArenaUse arena;             // the mesh `classify` is given
  bool has_fit;               // `rlfit fit` fits it (fit/fitters.h holds the fitter)
  CoeffFileExtras coeff_extras;
  std::string docs;           // the model's page, relative to the checkout
  // results/<name>/ holds its committed fit (coeffs.json) and regression baseline.
  bool has_results;
  StartNeeds start;  // what a prediction may start from
  // Its place in every list of models (ascending; unique): the help texts and outputs list
  // the models in this order. Today's keys: aerial 10, ball 20, ground 30, vehicle 40, jump 50,
  // wall 60, powerslide 70, car 80; a new model picks a free key where it should be listed.
  int order;
  // The model's input timing: its input_delay_s and tick_phase (the other settings are
  // Integration's defaults). The seed notes' coefficients carry it (SeedCoeffs,
  // src/replay/coeff_choice.h: `--coeffs seed` of replay and predict, the Python binding) and
  // the fit assumes it unless told otherwise (WithModelDefaults, fit/fit.h); a fitted file
  // carries the timing it was fitted with. Integration's defaults (0.0151 s, phase 0) for every
  // model but the aerial (0.01635 s, phase 0.15: decision 0124).
  Integration timing = {};
};

// Every model, in the order the tools list them (ModelDescriptor::order).
const std::vector<ModelDescriptor>& Registry();
// The descriptors of the models in folders of their own, each from its registration
// src/models/<name>/<name>_model.cc (ModelDescriptor Describe<Name>()); defined in a file CMake
// generates from the folders (cmake/model_folders.cmake), in no particular order.
std::vector<ModelDescriptor> FolderModelDescriptors();
// The model called `name`, null when none is registered under it.
const ModelDescriptor* LookUpDescriptor(const std::string& name);
// The model called `name`; InputError listing the registered names otherwise.
const ModelDescriptor& FindDescriptor(const std::string& name);
// The registered names, comma-separated: "aerial, ball, ...".
std::string RegisteredNamesText();

}  // namespace rlfit
