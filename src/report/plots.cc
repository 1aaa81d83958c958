// Launching the plot scripts: posix_spawn of /usr/bin/python3 with an argv (no shell).
#include "src/report/plots.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "src/common/error.h"
#include "src/common/resources.h"

extern char** environ;

namespace rlfit {

std::string PlotScriptPath(const std::string& name) {
  return ResourcePath("scripts/" + name);
}

void RunPlotScript(const std::string& script, const std::vector<std::string>& args) {
  if (access(script.c_str(), R_OK) != 0)
    throw InputError(script, 0, 0, "plot script not found: " + std::string(std::strerror(errno)));
  if (access(kPlotPython, X_OK) != 0)
    throw InputError(kPlotPython, 0, 0,
                     "cannot run the plot interpreter (" + std::string(std::strerror(errno)) +
                         "); install python3 and python3-matplotlib");
  std::vector<std::string> argv_strings = {kPlotPython, script};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  // The child writes to the same stdout/stderr: flush ours so the order stays readable.
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = 0;
  const int spawn_error = posix_spawn(&pid, kPlotPython, nullptr, nullptr, argv.data(), environ);
  if (spawn_error != 0)
    throw InputError(kPlotPython, 0, 0,
                     "cannot start " + script + ": " + std::strerror(spawn_error));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw InputError(script, 0, 0, std::string("waiting for the plot script: ") +
                                         std::strerror(errno));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  const std::string how = WIFEXITED(status)
                              ? "exit status " + std::to_string(WEXITSTATUS(status))
                              : "signal " + std::to_string(WTERMSIG(status));
  throw InputError(script, 0, 0,
                   "plot script failed (" + how + "; its own message, if any, is above)");
}

}  // namespace rlfit
