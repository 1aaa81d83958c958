// The fit layer's table of fitters, keyed by the names of the model registry
// (src/replay/registry.h): a model whose descriptor declares a fit has exactly one here.
#pragma once

#include <string>
#include <vector>

#include "fit/fit.h"

namespace rlfit {

// Every fitter, one per model that has a fit (FindFitter looks a name up here).
const std::vector<FitterInfo>& Fitters();

// A default of the fits as help text, models grouped by value:
// "huber (aerial, ground, ...), cauchy (ball)" for the loss, "3 (...), 0.3 (ball)" for its scale.
std::string DefaultLossText();
std::string DefaultLossScaleText();

}  // namespace rlfit
