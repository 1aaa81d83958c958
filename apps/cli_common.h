// Shared wiring of the two command-line tools: data-root option and the one place where
// errors become one line on stderr and a non-zero exit.
#pragma once

#include <exception>
#include <functional>
#include <iostream>

#include <CLI/CLI.hpp>

#include "src/common/error.h"

namespace rlfit {

// Runs a command body; InputError and other failures print one line and return non-zero.
inline int RunGuarded(const char* tool, const std::function<void()>& body) {
  try {
    body();
    return 0;
  } catch (const InputError& e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << tool << ": internal error: " << e.what() << "\n";
    return 3;
  }
}

// --data: the datasets root, falling back to $RLFIT_DATA and DataRootCandidates().
inline void AddDataOption(CLI::App* app, std::string* data_root) {
  app->add_option("--data", *data_root,
                  "datasets root (default: $RLFIT_DATA, else ../shared/datasets/lobot, data/lobot, "
                  "~/.local/share/rlfit/lobot)")
      ->check(CLI::ExistingDirectory);
}

}  // namespace rlfit
