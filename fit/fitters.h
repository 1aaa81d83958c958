// The fit layer's table of fitters, keyed by the names of the model registry
// (src/replay/registry.h): a model whose descriptor declares a fit has exactly one here.
#pragma once

#include <string>
#include <vector>

#include "fit/fit.h"

namespace rlfit {

// Every fitter, one per model that has a fit, in the registry's order (FindFitter looks a name
// up here).
const std::vector<FitterInfo>& Fitters();

// The fitters of the models in folders of their own, each from fit/models/<name>_fit.cc
// (FitterInfo <Name>Fitter()); defined in a file CMake generates (cmake/model_folders.cmake).
std::vector<FitterInfo> FolderFitters();

// A default of the fits as help text, models grouped by value:
// "huber (aerial, ground, ...), cauchy (ball)" for the loss, "3 (...), 0.3 (ball)" for its scale.
std::string DefaultLossText();
std::string DefaultLossScaleText();

}  // namespace rlfit
