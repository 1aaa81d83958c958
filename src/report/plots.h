// Runs rlfit's matplotlib report scripts (scripts/plot_*.py) from the command-line tools,
// with Debian's /usr/bin/python3, and turns their failure into one InputError.
#pragma once

#include <string>
#include <vector>

namespace rlfit {

// The interpreter the plot scripts run with: Debian's python3, which has
// python3-matplotlib (a python3 earlier on PATH, such as pyenv's, may lack it).
inline constexpr const char* kPlotPython = "/usr/bin/python3";

// Absolute path of a shipped plot script, ResourcePath("scripts/" + name), e.g. "plot_replay.py".
std::string PlotScriptPath(const std::string& name);

// Runs `kPlotPython script args...` (no shell; stdout and stderr are inherited) and waits
// for it. Throws InputError when the script or the interpreter is missing, cannot be
// started, or exits non-zero (the script prints its own reason on stderr first).
void RunPlotScript(const std::string& script, const std::vector<std::string>& args);

}  // namespace rlfit
