// Bindings of the bot author's objects (Ball, Car, Controls) into the extension rlfit._rlfit.
#pragma once

#include <pybind11/pybind11.h>

namespace rlfit {

// Adds Ball, Car and Controls to `m` (python/sim_objects.cc).
void BindSimObjects(pybind11::module_& m);

}  // namespace rlfit
