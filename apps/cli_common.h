// Shared wiring of the two command-line tools: parsing with one-line usage errors, readable
// validators, --version, the model and paths arguments, the data-root and --force options, the
// input files a command reads (for the output checks), and the one place where errors become
// one line on stderr and an exit code: 0 ok, 1 check failed, 2 bad input or usage, 3 internal
// error.
#pragma once

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "src/common/error.h"
#include "src/common/number_text.h"
#include "src/io/files.h"
#include "src/io/recording.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/predictor.h"
#include "src/replay/replay.h"

#ifndef RLFIT_VERSION
#error "RLFIT_VERSION must be defined by the build (CMakeLists.txt: project VERSION)"
#endif

namespace rlfit {

// Exit codes of both tools.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;  // rlfit check: a metric regressed
inline constexpr int kExitBadInput = 2;     // bad input or usage
inline constexpr int kExitInternal = 3;     // a bug (or out of memory)

// A message as one line: control characters (a newline or tab in a file name) are written as
// \n, \t or \xHH, so an error is always one line on stderr.
inline std::string OneLine(const std::string& text) {
  std::string line;
  line.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      line += "\\n";
    } else if (c == '\t') {
      line += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", byte);
      line += hex;
    } else {
      line += c;
    }
  }
  return line;
}

// Call first in main(): a standard descriptor the caller closed (`rlsim ... >&-`) is opened
// read-only on /dev/null, so the first file the tool opens (an output's temporary) cannot
// become descriptor 1 and receive what is printed, and a write to it fails (EBADF), which
// FinishStdout reports.
inline void GuardStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", O_RDONLY);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

// Call last in main(): flushes stdout and, when anything printed there was lost (a full disk,
// `> /dev/full`, a closed descriptor), says so in one line and turns a success into exit code
// 2 (the table or trajectory the user asked for is incomplete). A broken pipe (`| head -1`)
// never gets here: SIGPIPE ends the tool quietly, removing its temporaries.
inline int FinishStdout(const char* tool, int code) {
  errno = 0;
  std::cout.flush();
  const bool lost = !std::cout.good() | (std::fflush(stdout) != 0) | (std::ferror(stdout) != 0);
  int err = errno;
  if (!lost) return code;
  // The write that failed may lie far back (errno since overwritten): an empty write to the
  // same descriptor says why again (ENOSPC on /dev/full, EBADF on a closed stdout).
  if (err == 0 && ::write(STDOUT_FILENO, "", 0) < 0) err = errno;
  if (code == kExitOk || code == kExitCheckFailed)
    std::cerr << tool << ": error: writing standard output failed"
              << (err != 0 ? std::string(": ") + std::strerror(err) : std::string())
              << "; what was printed is incomplete\n";
  return code == kExitOk ? kExitBadInput : code;
}

// Runs a command body and maps what it throws to one line on stderr and an exit code:
// InputError and filesystem errors (a path problem) 2, everything else 3.
inline int RunGuarded(const char* tool, const std::function<void()>& body) {
  try {
    body();
    return kExitOk;
  } catch (const InputError& e) {
    std::cerr << tool << ": error: " << OneLine(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::filesystem::filesystem_error& e) {
    std::string where = e.path1().string();
    if (!e.path2().empty()) where += ", " + e.path2().string();
    std::cerr << tool << ": error: "
              << OneLine((where.empty() ? "" : where + ": ") + e.code().message()) << "\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << tool << ": internal error: out of memory\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << tool << ": internal error: " << OneLine(e.what()) << "\n";
    return kExitInternal;
  } catch (...) {
    std::cerr << tool << ": internal error: unknown exception\n";
    return kExitInternal;
  }
}

// Adds --version ("TOOL 0.8.0") to the top-level app.
inline void AddVersionFlag(CLI::App* app, const char* tool) {
  app->set_version_flag("--version", std::string(tool) + " " + RLFIT_VERSION,
                        "print the version and exit");
}

// "unknown option '--x' for 'TOOL SUB'" for the first word of argv after the subcommand that
// looks like a long option (--name or --name=value, before a bare "--") and that the
// subcommand does not define; "" when there is none.
inline std::string UnknownOption(CLI::App* app, const char* tool, int argc, char** argv) {
  if (argc < 2) return "";
  CLI::App* sub = nullptr;
  for (CLI::App* s : app->get_subcommands([](CLI::App*) { return true; }))
    if (s->get_name() == argv[1]) sub = s;
  if (sub == nullptr) return "";
  for (int i = 2; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.size() < 3 || word.compare(0, 2, "--") != 0) continue;
    const std::string name = word.substr(0, word.find('='));
    if (sub->get_option_no_throw(name) == nullptr)
      return "unknown option '" + name + "' for '" + std::string(tool) + " " + sub->get_name() +
             "'";
  }
  return "";
}

// CLI11's message for a missing subcommand or positional, with what would be accepted there:
// "A subcommand is required" names the commands (`known`), "model is required" the models,
// another missing positional ("template is required") its help text.
inline std::string WithWhatIsAccepted(CLI::App* app, const std::string& message,
                                      const std::string& known, int argc, char** argv) {
  if (message == "A subcommand is required") return "a command is required: one of " + known;
  const std::string required = " is required";
  if (message.size() <= required.size() ||
      message.compare(message.size() - required.size(), required.size(), required) != 0 ||
      argc < 2)
    return message;
  const std::string name = message.substr(0, message.size() - required.size());
  if (name == "model") {
    std::string models;
    for (const std::string& m : ModelNames()) models += (models.empty() ? "" : ", ") + m;
    return message + ": one of " + models;
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() != argv[1]) continue;
    if (const CLI::Option* o = sub->get_option_no_throw(name);
        o != nullptr && !o->get_description().empty())
      return message + ": " + o->get_description();
  }
  return message;
}

// Parses argv. Returns -1 to go on, else the exit code: 0 after --help or --version (printed
// on stdout; every subcommand takes --version too), 2 after a usage error, printed as one line
// "TOOL: error: MESSAGE (see --help)"; a first word that is no subcommand is named as such.
inline int ParseCommandLine(CLI::App* app, const char* tool, int argc, char** argv) {
  std::string known;
  bool first_is_command = false;
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    sub->set_version_flag("--version", std::string(tool) + " " + RLFIT_VERSION,
                          "print the version and exit");
    known += (known.empty() ? "" : ", ") + sub->get_name();
    first_is_command = first_is_command || (argc > 1 && sub->get_name() == argv[1]);
  }
  try {
    app->parse(argc, argv);
    return -1;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app->exit(e);  // --help, --version
    if (argc > 1 && argv[1][0] != '-' && !first_is_command) {
      std::cerr << tool << ": error: unknown command '" << OneLine(argv[1]) << "' (known: "
                << known << ") (see --help)\n";
      return kExitBadInput;
    }
    // An option the subcommand does not have is named first: CLI11 may have handed the value
    // that follows it to a positional (`rlfit check --bogus 2`: "models: 2 not in {...}").
    if (const std::string unknown = UnknownOption(app, tool, argc, argv); !unknown.empty()) {
      std::cerr << tool << ": error: " << OneLine(unknown) << " (see --help)\n";
      return kExitBadInput;
    }
    std::string message = e.what();
    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
      message.pop_back();
    for (char& c : message)
      if (c == '\n') c = ' ';
    std::cerr << tool << ": error: " << OneLine(WithWhatIsAccepted(app, message, known, argc, argv))
              << " (see --help)\n";
    return kExitBadInput;
  }
}

// --- validators with readable messages (CLI11 prefixes the option name) -----------------

namespace cli_detail {

inline bool ParseNumber(const std::string& text, double* value) {
  try {
    std::size_t used = 0;
    *value = std::stod(text, &used);
    return used == text.size() && std::isfinite(*value);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace cli_detail

// A finite number > 0.
inline CLI::Validator Positive() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0.0;
        if (!cli_detail::ParseNumber(s, &v)) return "'" + s + "' is not a number";
        if (!(v > 0.0)) return "must be > 0, got " + s;
        return "";
      },
      "> 0", "Positive");
}

// A finite number >= 0.
inline CLI::Validator NonNegative() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0.0;
        if (!cli_detail::ParseNumber(s, &v)) return "'" + s + "' is not a number";
        if (!(v >= 0.0)) return "must be >= 0, got " + s;
        return "";
      },
      ">= 0", "NonNegative");
}

// A finite number in [lo, hi].
inline CLI::Validator Between(double lo, double hi) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "[%g, %g]", lo, hi);
  const std::string range = buffer;
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        double v = 0.0;
        if (!cli_detail::ParseNumber(s, &v)) return "'" + s + "' is not a number";
        if (!(v >= lo && v <= hi)) return "must be in " + range + ", got " + s;
        return "";
      },
      range, "Between");
}

// A switch given as 0 or 1 (also true/false): CLI11 reads any other number as true
// (`--tick-aligned 2` was a quiet 1).
inline CLI::Validator ZeroOrOne() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        for (const char* ok : {"0", "1", "true", "false"})
          if (s == ok) return "";
        return "must be 0 or 1, got " + s;
      },
      "0|1", "ZeroOrOne");
}

// A path that is not empty: an option given as "" (e.g. an unset shell variable) would
// otherwise read as "not given" and the command would quietly skip the output or input.
inline CLI::Validator NonEmptyPath() {
  return CLI::Validator(
      [](std::string& s) -> std::string { return s.empty() ? "an empty path" : ""; }, "PATH",
      "NonEmptyPath");
}

// An existing regular file.
inline CLI::Validator ExistingFileOf(const std::string& what) {
  return CLI::Validator(
      [what](std::string& s) -> std::string {
        std::error_code ec;
        if (std::filesystem::is_regular_file(s, ec)) return "";
        if (std::filesystem::exists(s, ec)) return s + " is not a file";
        return what + " not found: " + s;
      },
      "FILE", "ExistingFileOf");
}

// --coeffs: the word "seed" or an existing coefficients file.
inline CLI::Validator CoeffsSpec() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s == kSeedCoeffs) return "";
        std::error_code ec;
        if (std::filesystem::is_regular_file(s, ec)) return "";
        // A folder (or device) exists: say what it is rather than "not an existing file".
        const std::string kind = NotAFileKind(s);
        if (!kind.empty())
          return "'" + s + "' is " + kind + ", not a coefficients file (or 'seed')";
        return "'" + s + "' is neither 'seed' nor an existing coefficients file";
      },
      "FILE|seed", "CoeffsSpec");
}

// Each model's default report horizons, grouped: "0.5,1,2 (aerial, ground, ...); ...".
inline std::string DefaultHorizonsText() {
  std::vector<std::pair<std::string, std::string>> groups;  // horizons, models
  for (const std::string& name : ModelNames()) {
    std::string horizons;
    for (const double h : FindModel(name).horizons_s)
      horizons += (horizons.empty() ? "" : ",") + MessageNumber(h);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == horizons; });
    if (it == groups.end()) {
      groups.emplace_back(horizons, name);
    } else {
      it->second += ", " + name;
    }
  }
  std::string text;
  for (const auto& [horizons, models] : groups)
    text += (text.empty() ? "" : "; ") + horizons + " (" + models + ")";
  return text;
}

// Horizons: comma-separated or repeated (--horizons 0.5,1,2 or --horizons 0.5 --horizons 1),
// so the option never swallows a positional path that follows it.
inline CLI::Option* AddHorizonsOption(CLI::App* cmd, std::vector<double>* horizons_s,
                                      const std::string& help) {
  return cmd
      ->add_option("--horizons", *horizons_s,
                   help + " (at most " + MessageNumber(kMaxHorizonS) +
                       "; default: the model's, " + DefaultHorizonsText() +
                       "); comma-separated, e.g. --horizons 0.5,1,2")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(Positive());
}

// --data: the datasets root, falling back to $RLFIT_DATA and DataRootCandidates().
inline void AddDataOption(CLI::App* app, std::string* data_root) {
  app->add_option("--data", *data_root,
                  "datasets root (default: the first that exists of $RLFIT_DATA, "
                  "../shared/datasets/lobot and data/lobot from the working directory, the "
                  "checkout's data/lobot (from a build tree), ${XDG_DATA_HOME:-~/.local/share}/"
                  "rlfit/lobot)")
      ->check(CLI::ExistingDirectory);
}

// The positional MODEL, one of ModelNames(); `help` says what the command does with it.
inline void AddModelArgument(CLI::App* app, std::string* model, const std::string& help) {
  app->add_option("model", *model, help)->required()->check(CLI::IsMember(ModelNames()));
}

// The positional PATHS: the recordings, resolved as LoadEpisodesFor does.
inline void AddPathsArgument(CLI::App* app, std::vector<std::string>* paths) {
  app->add_option("paths", *paths,
                  "recordings: files or folders (default: the model's datasets); relative paths "
                  "are also looked up under the datasets root");
}

// --force: replace an existing output that rlfit did not write.
inline void AddForceFlag(CLI::App* app, bool* force) {
  app->add_flag("--force", *force,
                "replace an existing output that rlfit did not write, or an rlfit output of "
                "another kind (a non-empty folder is replaced as a whole; never one holding "
                "recordings)");
}

// The files a command on `model` reads: the recordings named by `paths` (files or folders,
// resolved as LoadEpisodesFor does; the model's default data under `data_root` when empty),
// their reference predictions (dataset manifest or --reference), and the arena mesh of the data
// root. Missing or empty paths throw the same InputError the command would (with --keep-going
// the command names them and goes on: so does this).
inline std::vector<std::string> InputFilesFor(const std::string& model,
                                              const std::vector<std::string>& paths,
                                              const std::string& data_root,
                                              const RecordingFacts& facts = {},
                                              bool keep_going = false) {
  namespace fs = std::filesystem;
  std::vector<std::string> resolved;
  if (paths.empty()) {
    if (!data_root.empty()) resolved = DefaultRecordings(model, data_root);
  } else {
    for (const std::string& p : paths) resolved.push_back(ResolveUnderRoot(p, data_root));
  }
  std::vector<SkippedInput> unreadable;
  std::vector<std::string> files =
      ExpandRecordingPaths(resolved, nullptr, keep_going ? &unreadable : nullptr);
  const std::size_t recordings = files.size();
  for (std::size_t i = 0; i < recordings; ++i) {
    const FileFacts f = FactsForRecording(files[i], facts);
    if (!f.reference.empty()) files.push_back(f.reference);
  }
  if (!data_root.empty()) files.push_back((fs::path(data_root) / "meshes" / "pitch.dat").string());
  return files;
}

// The options every command that reads recordings has: --keep-going, and the facts about
// the recordings their dataset manifest would declare (README "Your own recordings").
inline void AddRecordingOptions(CLI::App* app, RecordingFacts* facts, bool* keep_going) {
  app->add_flag("--keep-going", *keep_going,
                "a recording that cannot be read is named with its reason (stdout, summary, "
                "page) and the rest are used; without it the first one is an error");
  app->add_option("--reference", facts->reference_dir,
                  "folder of an earlier model's predictions to compare with: recording F's is "
                  "DIR/F's file name (9 columns x,y,z,vx,vy,vz,wx,wy,wz, a row per row of F)")
      ->check(CLI::ExistingDirectory);
  app->add_flag("--handbrake-unrecorded", facts->handbrake_unrecorded,
                "the recordings' handbrake column holds no presses although the handbrake was "
                "used: infer it from the motion (powerslide)");
  app->add_option("--clock-origin", facts->clock_origin_rows,
                  "row of the recording's 61 Hz row clock that row 0 of each recording sits on "
                  "(the phase of the inputs on the physics ticks; default: unknown)")
      ->check(CLI::Range(0.0, 1e9));
}

// The coefficients file a --coeffs value reads, if any ("" = the committed fit).
inline std::vector<std::string> CoeffsInputFiles(const std::string& model,
                                                 const std::string& spec) {
  if (spec == kSeedCoeffs) return {};
  return {spec.empty() ? CommittedCoeffsPath(model) : spec};
}

}  // namespace rlfit
