// rlfit: refits model coefficients on recordings (Ceres least squares) and cross-validates.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "apps/cli_common.h"
#include "fit/fit.h"
#include "fit/fitters.h"
#include "fit/regression.h"
#include "src/io/files.h"
#include "src/io/recording.h"
#include "src/replay/predictor.h"
#include "src/replay/registry.h"
#include "src/report/plots.h"

namespace {

// The default of one input-timing setting for the help text, read from the fitted models'
// descriptors (ModelDescriptor::timing): "0.01635 for aerial, 0.0151 for the others".
std::string TimingDefaultText(double rlfit::Integration::*setting) {
  const rlfit::Integration plain;
  std::string text;
  for (const rlfit::ModelDescriptor& d : rlfit::Registry()) {
    if (!d.has_fit) continue;
    const double v = d.timing.*setting;
    if (v != plain.*setting) text += rlfit::MessageNumber(v) + " for " + d.replay.name + ", ";
  }
  return text + rlfit::MessageNumber(plain.*setting) +
         (text.empty() ? " for every model" : " for the others");
}

// Options shared by `fit` and `crossval`, bound straight into FitOptions.
void AddFitOptions(CLI::App* cmd, rlfit::FitOptions* o) {
  rlfit::AddModelArgument(cmd, &o->model, "model to fit");
  rlfit::AddPathsArgument(cmd, &o->paths);
  cmd->add_option("--init", o->init_coeffs,
                  "starting coefficients JSON, or 'seed' for the seed notes' values (the "
                  "default)")
      ->check(rlfit::CoeffsSpec());
  cmd->add_option("--window", o->window_s, "length of each rollout residual, s")
      ->capture_default_str()
      ->check(rlfit::Positive());
  cmd->add_option("--stride", o->stride_s,
                  "spacing of rollout starts, s (at least " +
                      rlfit::MessageNumber(rlfit::kMinStrideS) + ")")
      ->capture_default_str()
      ->check(rlfit::Positive());
  cmd->add_option("--tick-rate", o->integration.tick_rate_hz,
                  "physics steps per second, Hz; a row of dt seconds takes round(dt * rate) steps")
      ->capture_default_str()
      ->check(rlfit::Between(rlfit::kMinTickRateHz, rlfit::kMaxTickRateHz));
  cmd->add_option("--input-delay", o->integration.input_delay_s,
                  "seconds between a recorded input and the time it acts from (default: the "
                  "model's, " + TimingDefaultText(&rlfit::Integration::input_delay_s) + ")")
      ->check(rlfit::Between(0.0, rlfit::kMaxInputDelayS))
      ->each([o](const std::string&) { o->model_timing = false; });
  cmd->add_option("--tick-phase", o->integration.tick_phase,
                  "where the physics ticks fall on the recording's clock, in ticks: tick i at "
                  "clock row (i + phase) / ticks per clock row (default: the model's, " +
                      TimingDefaultText(&rlfit::Integration::tick_phase) +
                      "); with only one of --input-delay and --tick-phase given, the other is " +
                      rlfit::MessageNumber(rlfit::Integration{}.input_delay_s) + " / " +
                      rlfit::MessageNumber(rlfit::Integration{}.tick_phase))
      ->check(rlfit::Between(0.0, 0.999999))
      ->each([o](const std::string&) { o->model_timing = false; });
  cmd->add_option("--tick-aligned", o->integration.tick_aligned_inputs,
                  "1 = inputs take effect at the next physics tick when the episode's clock is "
                  "known, 0 = exactly at row time + delay")
      ->capture_default_str()
      ->check(rlfit::ZeroOrOne());
  cmd->add_option("--rotation", o->integration.rotate_with_new_omega,
                  "orientation update: 1 = by the new angular velocity (semi-implicit), 0 = by "
                  "the average of old and new (note 000)")
      ->capture_default_str()
      ->check(rlfit::ZeroOrOne());
  cmd->add_option("--hold", o->selection.held,
                  "parameter blocks or single coefficients held at their starting values (the "
                  "seed's or --init's), the rest fitted; comma-separated or repeated, e.g. "
                  "--hold drag,recovery (the model's names: an unknown one lists them)")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--free", o->selection.freed,
                  "fit what the model holds by default, from the start's value: the ball's drag, "
                  "contact_radius and recovery, held at the measured ln(0.97) /s, 93.1504 uu and "
                  "0.797 whatever the start (comma-separated or repeated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--loss", o->solver.loss,
                  "robust loss (default: the model's, " + rlfit::DefaultLossText() + ")")
      ->check(CLI::IsMember({"huber", "cauchy", "none"}));
  cmd->add_option("--loss-scale", o->solver.loss_scale,
                  "robust-loss threshold, in sigmas (default: the model's, " +
                      rlfit::DefaultLossScaleText() + ")")
      ->check(rlfit::Positive());
  cmd->add_option("--max-iterations", o->solver.max_iterations, "solver iterations")
      ->capture_default_str()
      ->check(rlfit::Between(1, 10000));
  cmd->add_option("--step-sigmas", o->solver.step_sigmas,
                  "stop when a step moves no coefficient by this many standard errors (those of "
                  "--init, else of the previous smoothing pass; 0: Ceres' tolerances only)")
      ->capture_default_str()
      ->check(rlfit::NonNegative());
  cmd->add_option("--threads", o->solver.threads, "threads evaluating the rollouts (default: every core)")
      ->capture_default_str()
      ->check(rlfit::Between(1, 64));
  rlfit::AddHorizonsOption(cmd, &o->replay.horizons_s,
                           "horizons of the held-out replay report, s (plus the last row)");
  cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
  rlfit::AddDataOption(cmd, &o->data_root);
  rlfit::AddRecordingOptions(cmd, &o->facts, &o->keep_going);
}

constexpr const char* kTool = "rlfit";

// A subcommand: its CLI11 node and the body run when it was given (returns the exit code).
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

// The files a fit or crossval reads: recordings, arena mesh, --init.
std::vector<std::string> FitInputs(const rlfit::FitOptions& o) {
  std::vector<std::string> inputs =
      rlfit::InputFilesFor(o.model, o.paths, o.data_root, o.facts, o.keep_going);
  if (!o.init_coeffs.empty()) inputs.push_back(o.init_coeffs);
  return inputs;
}

void CheckFitOptions(rlfit::FitOptions* o) {
  std::string why;
  if (!o->Check(&why)) throw rlfit::InputError("(options)", 0, 0, why);
  if (o->init_coeffs == rlfit::kSeedCoeffs) o->init_coeffs.clear();  // as --coeffs seed
  o->data_root = rlfit::ResolveDataRoot(o->data_root);
}

Command AddFit(CLI::App* app) {
  struct Args {
    rlfit::FitOptions options;
    std::string plots;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* fit = app->add_subcommand(
      "fit", "fit coefficients by least squares on rollouts; validate on held-out episodes");
  AddFitOptions(fit, &args->options);
  fit->add_option("--out", args->options.out_path, "coefficients JSON to write")
      ->check(rlfit::NonEmptyPath());
  fit->add_option("--plots", args->plots,
                  "folder for the fit's report page, replaced as a whole: each coefficient "
                  "with its error bar beside its default (needs --out)")
      ->needs(fit->get_option("--out"))
      ->check(rlfit::NonEmptyPath());
  rlfit::AddForceFlag(fit, &args->force);
  fit->add_option("--holdout-every", args->options.holdout_every,
                  "hold out every k-th recording file (all its episodes) for validation (0: "
                  "none)")
      ->capture_default_str()
      ->check(rlfit::NonNegative());

  return {
      fit, [args] {
        return rlfit::RunGuarded(kTool, [&] {
          rlfit::FitOptions& o = args->options;
          CheckFitOptions(&o);
          const std::vector<std::string> inputs = FitInputs(o);
          rlfit::CheckOutputTarget(o.out_path, rlfit::OutputKind::kCoeffsFile, inputs,
                                   args->force);
          rlfit::CheckCoeffsTarget(o.out_path, o.model, args->force);
          if (!args->plots.empty()) {
            namespace fs = std::filesystem;
            const fs::path out = fs::weakly_canonical(fs::absolute(o.out_path));
            const fs::path plots = fs::weakly_canonical(fs::absolute(args->plots));
            const auto [p, q] = std::mismatch(plots.begin(), plots.end(), out.begin(), out.end());
            if (p == plots.end())
              throw rlfit::InputError(o.out_path, 0, 0,
                                      "lies inside the --plots folder, which is replaced as "
                                      "a whole: choose another --out or --plots");
            rlfit::CheckOutputTarget(args->plots, rlfit::OutputKind::kFolder, inputs, args->force);
          }
          rlfit::RunFit(o, std::cout);
          if (!args->plots.empty()) {
            rlfit::StagedDir staged(args->plots, args->force);
            rlfit::RunPlotScript(rlfit::PlotScriptPath("plot_fit.py"),
                                 {o.out_path, staged.dir(), "--shown-as", staged.final_dir()});
            staged.Commit();
          }
        });
      }};
}

Command AddCrossval(CLI::App* app) {
  struct Args {
    rlfit::FitOptions options;
    int folds = 4;
    std::string out;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cv = app->add_subcommand(
      "crossval",
      "k-fold by recording file: replay every episode with coefficients fitted without it");
  AddFitOptions(cv, &args->options);
  cv->add_option("--folds", args->folds, "number of folds")
      ->capture_default_str()
      ->check(rlfit::Between(2, 1000));
  cv->add_option("--tail-set", args->options.tail_set,
                 "episodes in the new set whose p90 the tail table predicts (bootstrap over "
                 "episodes; 0 = one fold's)")
      ->capture_default_str()
      ->check(rlfit::Between(0, 100000));
  cv->add_option("--out", args->out,
                 "output folder for the combined held-out replay report, replaced as a whole")
      ->check(rlfit::NonEmptyPath());
  rlfit::AddForceFlag(cv, &args->force);

  return {cv, [args] {
            return rlfit::RunGuarded(kTool, [&] {
              rlfit::FitOptions& o = args->options;
              CheckFitOptions(&o);
              rlfit::CheckOutputTarget(args->out, rlfit::OutputKind::kFolder, FitInputs(o),
                                       args->force);
              o.replay.force = args->force;  // WriteReplayOutputs' StagedDir
              rlfit::RunCrossValidation(o, args->folds, args->out, std::cout);
            });
          }};
}

Command AddBaseline(CLI::App* app) {
  struct Args {
    rlfit::RegressionOptions regression;
    std::string model;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* baseline = app->add_subcommand(
      "baseline",
      "fit MODEL on its default data and record coefficients and replay errors in "
      "results/MODEL/ (the regression baselines)");
  rlfit::AddModelArgument(baseline, &args->model, "model");
  baseline->add_option("--results", args->regression.results_dir, "results folder")
      ->capture_default_str()
      ->check(rlfit::NonEmptyPath());
  rlfit::AddForceFlag(baseline, &args->force);
  baseline->add_flag("--keep-coeffs", args->regression.keep_coeffs,
                     "no refit: record the metrics the committed coefficients reach on the data "
                     "as read now (after a change of the reading, not of the model)");
  baseline->add_flag("--quiet", args->regression.quiet, "no progress on stderr");
  rlfit::AddDataOption(baseline, &args->regression.data_root);

  return {baseline, [args] {
            return rlfit::RunGuarded(kTool, [&] {
              rlfit::RegressionOptions& r = args->regression;
              std::string why;
              if (!r.Check(&why)) throw rlfit::InputError("(options)", 0, 0, why);
              r.data_root = rlfit::ResolveDataRoot(r.data_root);
              rlfit::CheckResultsFolder(r.results_dir);
              // results/MODEL/, or the results folder itself when it is still to be made.
              namespace fs = std::filesystem;
              std::error_code ec;
              const std::string target = fs::is_directory(r.results_dir, ec)
                                             ? (fs::path(r.results_dir) / args->model).string()
                                             : r.results_dir;
              rlfit::CheckOutputTarget(target, rlfit::OutputKind::kFolder,
                                       rlfit::InputFilesFor(args->model, {}, r.data_root),
                                       args->force);
              r.force = args->force;
              rlfit::RecordBaseline(args->model, r, std::cout);
            });
          }};
}

Command AddCheck(CLI::App* app) {
  struct Args {
    rlfit::RegressionOptions regression;
    bool no_refit = false;
  };
  auto args = std::make_shared<Args>();
  rlfit::RegressionOptions& regression = args->regression;
  CLI::App* check = app->add_subcommand(
      "check",
      "replay the datasets with the committed coefficients in results/ and fail when "
      "an error metric is worse than its baseline, or a refit differs (exit code 1)");
  check->add_option("models", regression.models, "models to check (default: all in results/)")
      ->check(CLI::IsMember(rlfit::ModelNames()));
  check->add_option("--results", regression.results_dir, "results folder")
      ->capture_default_str()
      ->check(CLI::ExistingDirectory);
  check
      ->add_option("--tolerance", regression.relative_tolerance,
                   "relative tolerance on each error metric")
      ->capture_default_str()
      ->check(rlfit::NonNegative());
  check
      ->add_option("--refit-sigmas", regression.refit_sigmas,
                   "a refit must land within this many standard errors")
      ->capture_default_str()
      ->check(rlfit::Positive());
  check
      ->add_option("--threads", regression.threads,
                   "threads: at most this many replay and refit jobs at once, each refit "
                   "solving on its share (default: every core, each refit on every core)")
      ->check(rlfit::Between(1, 64));
  check->add_flag("--no-refit", args->no_refit, "only replay, do not refit");
  check->add_flag("--warm-refit", regression.warm_refit,
                  "refit from the committed coefficients, last smoothing pass only, until a step "
                  "moves no coefficient by 0.1 standard error (~5x faster, weaker: a wrong "
                  "committed coefficient may pass the refit; default: from the seed values, as "
                  "`rlfit fit`)");
  check->add_flag("--quiet", regression.quiet, "no progress on stderr");
  rlfit::AddDataOption(check, &regression.data_root);

  return {check, [args] {
            int failed = 0;
            const int rc = rlfit::RunGuarded(kTool, [&] {
              rlfit::RegressionOptions& r = args->regression;
              std::string why;
              if (!r.Check(&why)) throw rlfit::InputError("(options)", 0, 0, why);
              r.refit = !args->no_refit;
              r.data_root = rlfit::ResolveDataRoot(r.data_root);
              const std::vector<std::string> failures = rlfit::RunRegressionCheck(r, std::cout);
              for (const std::string& f : failures) std::cerr << "rlfit: regression: " << f << "\n";
              failed = static_cast<int>(failures.size());
              std::cout << (failed == 0 ? "regression check passed\n"
                                        : "regression check FAILED: " + std::to_string(failed) +
                                              " metric(s) worse than baseline\n");
            });
            if (rc != rlfit::kExitOk) return rc;
            return failed > 0 ? rlfit::kExitCheckFailed : rlfit::kExitOk;
          }};
}

}  // namespace

int main(int argc, char** argv) {
  rlfit::GuardStandardDescriptors();
  rlfit::InstallCleanupHandlers();
  rlfit::InstallTerminateHandler(kTool, rlfit::kExitInternal);
  CLI::App app{"rlfit: refit rlfit's model coefficients on Rocket League recordings"};
  app.require_subcommand(1);
  rlfit::AddVersionFlag(&app, kTool);
  const std::vector<Command> commands = {AddFit(&app), AddCrossval(&app), AddBaseline(&app),
                                         AddCheck(&app)};

  if (const int code = rlfit::ParseCommandLine(&app, kTool, argc, argv); code >= 0)
    return rlfit::FinishStdout(kTool, code);
  for (const Command& command : commands)
    if (command.app->parsed()) return rlfit::FinishStdout(kTool, command.run());
  return rlfit::kExitInternal;  // require_subcommand(1) makes this unreachable
}
