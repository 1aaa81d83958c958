// Tests of the plot-script launcher (src/report/plots.h): arguments arrive intact and every
// failure (missing script, non-zero exit, killed by a signal) becomes an InputError.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "src/common/error.h"
#include "src/report/plots.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;

// A fresh folder under the system temp dir, removed when the test ends.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string templ = (fs::temp_directory_path() / "rlfit_plots_test.XXXXXX").string();
    path = mkdtemp(templ.data());
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path Write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return path / name;
  }
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_CASE("RunPlotScript passes each argument as one argv entry, untouched by a shell") {
  if (!fs::exists(kPlotPython)) return;  // nothing to launch on this machine
  TempDir dir;
  const fs::path script = dir.Write(
      "echo_args.py", "import sys\nopen(sys.argv[1], 'w').write('|'.join(sys.argv[2:]))\n");
  const std::string out = (dir.path / "args.txt").string();
  RunPlotScript(script.string(), {out, "a b", "$HOME", "it's"});
  CHECK(Slurp(out) == "a b|$HOME|it's");
}

TEST_CASE("RunPlotScript turns a failing script into an InputError naming the exit status") {
  if (!fs::exists(kPlotPython)) return;
  TempDir dir;
  const fs::path script = dir.Write("fail.py", "import sys\nsys.exit(3)\n");
  try {
    RunPlotScript(script.string(), {});
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("exit status 3") != std::string::npos);
    CHECK(e.file() == script.string());
  }
  const fs::path killed =
      dir.Write("killed.py", "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n");
  CHECK_THROWS_AS(RunPlotScript(killed.string(), {}), InputError);
}

TEST_CASE("RunPlotScript reports a missing script without starting anything") {
  CHECK_THROWS_AS(RunPlotScript("/nonexistent/plot_nothing.py", {}), InputError);
}

TEST_CASE("PlotScriptPath points into the source tree's scripts folder") {
  CHECK(fs::exists(PlotScriptPath("plot_replay.py")));
  CHECK(fs::exists(PlotScriptPath("plot_fit.py")));
}

}  // namespace
}  // namespace rlfit
