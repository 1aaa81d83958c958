// Where the tools find the files they ship with (plot scripts, committed coefficients in
// results/): one lookup relative to the running executable, so the binaries hold no source
// path and can be installed and moved.
#pragma once

#include <string>
#include <vector>

namespace rlfit {

// The folder holding the shipped resources (scripts/, results/, data/), first of:
//   $RLFIT_HOME                    when set and not empty (a checkout or a share/rlfit folder:
//                                  both have scripts/ and results/ at their top);
//   <exe dir>/share/rlfit          the build tree (CMake links scripts/ and results/ there to
//                                  the source folders at configure time);
//   <exe dir>/../share/rlfit       the installed layout (<prefix>/bin/rlsim).
// The executable is /proc/self/exe. When neither folder exists the installed one is returned
// (a missing file then names where it was expected).
std::string ResourceRoot();

// For code loaded into another program (the Python module, whose executable is python3):
// use `root` instead of the folders beside the executable ($RLFIT_HOME still comes first).
// Call before the first lookup; "" restores the executable-relative lookup.
void SetResourceRoot(const std::string& root);

// Absolute path of a shipped resource given relative to the project's layout, e.g.
// "scripts/plot_replay.py" or "results/aerial/coeffs.json": ResourceRoot() + "/" + relative.
// The file may not exist.
std::string ResourcePath(const std::string& relative);

// Where the recordings (the datasets root, layout of Lobot's assets/) are looked for when
// neither --data nor $RLFIT_DATA names them, in order (see ResolveDataRoot):
//   ./../shared/datasets/lobot     the offline copy beside a checkout (working directory);
//   ./data/lobot                   a checkout's download folder (scripts/fetch_datasets.sh);
//   ResourcePath("data/lobot")     build tree: the one of those two beside the checkout it was
//                                  configured from; installed: a copy under share/rlfit;
//   UserDataRoot()                 an installed fetch_datasets.sh downloads there.
std::vector<std::string> DataRootCandidates();

// $XDG_DATA_HOME/rlfit/lobot, else $HOME/.local/share/rlfit/lobot ("" without either).
std::string UserDataRoot();

// The reason given when no datasets root exists: every place looked, the fetch command and how
// to name a root (SetDataRootArgument).
std::string MissingDataRootMessage();

// How MissingDataRootMessage tells the user to name a datasets root: "--data DIR" (the tools)
// unless a front end says otherwise (the Python module: "data_root=DIR"). Call before any
// lookup, as SetResourceRoot.
void SetDataRootArgument(const std::string& argument);

}  // namespace rlfit
