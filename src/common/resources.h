// Where the tools find the files they ship with (plot scripts, committed coefficients in
// results/): one lookup, so the binaries can be installed and moved.
#pragma once

#include <string>

namespace rlfit {

// Absolute path of a shipped resource given relative to the project's layout, e.g.
// "scripts/plot_replay.py" or "results/aerial/coeffs.json". The file may not exist.
std::string ResourcePath(const std::string& relative);

}  // namespace rlfit
