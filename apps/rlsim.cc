// rlsim: replays recorded episodes through a model and reports prediction error.
#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "apps/cli_common.h"
#include "src/io/files.h"
#include "src/io/recording.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/predict.h"
#include "src/replay/replay.h"
#include "src/replay/synth.h"
#include "src/report/plots.h"

namespace {

constexpr const char* kTool = "rlsim";

// A subcommand: its CLI11 node and the body run when it was given.
struct Command {
  CLI::App* app;
  std::function<void()> run;
};

Command AddReplay(CLI::App* app) {
  struct Args {
    rlfit::ReplayOptions options;
    bool plots = false;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  rlfit::ReplayOptions& options = args->options;
  CLI::App* replay = app->add_subcommand(
      "replay", "predict recorded episodes open loop and from windowed restarts; report error");
  rlfit::AddModelArgument(replay, &options.model, "model to replay");
  rlfit::AddPathsArgument(replay, &options.paths);
  replay
      ->add_option("--coeffs", options.coeffs_path,
                   "coefficients JSON written by rlfit (default: the committed fit "
                   "results/<model>/coeffs.json; 'seed' for the seed notes' values)")
      ->check(rlfit::CoeffsSpec());
  replay->add_option("--out", options.out_dir,
                     "output folder, replaced as a whole: predicted trajectories, "
                     "replay_summary.json, summary.txt")
      ->check(rlfit::NonEmptyPath());
  rlfit::AddForceFlag(replay, &args->force);
  rlfit::AddHorizonsOption(replay, &options.horizons_s, "reported horizons in seconds");
  replay->add_option("--window", options.window_s, "spacing of windowed restarts, s")
      ->capture_default_str()
      ->check(rlfit::Positive());
  replay->add_flag("--quiet", options.quiet, "no progress on stderr");
  replay
      ->add_flag("--plots", args->plots,
                 "also draw figures and OUT/index.html (scripts/plot_replay.py, matplotlib)")
      ->needs("--out");
  rlfit::AddDataOption(replay, &options.data_root);
  rlfit::AddRecordingOptions(replay, &options.facts, &options.keep_going);

  return {replay, [args] {
            rlfit::ReplayOptions& o = args->options;
            o.force = args->force;
            std::string why;
            if (!o.Check(&why)) throw rlfit::InputError("(options)", 0, 0, why);
            o.data_root = rlfit::ResolveDataRoot(o.data_root);
            if (!o.out_dir.empty()) {
              std::vector<std::string> inputs =
                  rlfit::InputFilesFor(o.model, o.paths, o.data_root, o.facts, o.keep_going);
              for (const std::string& f : rlfit::CoeffsInputFiles(o.model, o.coeffs_path))
                inputs.push_back(f);
              rlfit::CheckOutputTarget(o.out_dir, rlfit::OutputKind::kFolder, inputs, o.force);
            }
            o.plots = args->plots;
            rlfit::RunReplay(o, std::cout);
          }};
}

Command AddSynth(CLI::App* app) {
  struct Args {
    std::string model, template_path, out, coeffs, data;
    int rows = 0;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* synth = app->add_subcommand(
      "synth",
      "write a synthetic episode: a recording's timing, inputs and first state, with "
      "the later states predicted by the model");
  rlfit::AddModelArgument(synth, &args->model, "model");
  synth
      ->add_option("template", args->template_path,
                   "recorded episode to take timing and inputs from")
      ->required();
  synth->add_option("--out", args->out, "CSV to write (recording format)")
      ->required()
      ->check(rlfit::NonEmptyPath());
  rlfit::AddForceFlag(synth, &args->force);
  synth->add_option("--rows", args->rows, "keep only the first N rows (0: all)")
      ->check(rlfit::NonNegative());
  synth
      ->add_option("--coeffs", args->coeffs,
                   "coefficients JSON (default: the seed notes' values, also 'seed')")
      ->check(rlfit::CoeffsSpec());
  rlfit::AddDataOption(synth, &args->data);

  return {
      synth, [args] {
        const rlfit::ModelInfo& model = rlfit::FindModel(args->model);
        const std::string root = rlfit::ResolveDataRoot(args->data);
        const std::string coeffs_spec = args->coeffs.empty() ? rlfit::kSeedCoeffs : args->coeffs;
        std::vector<std::string> inputs =
            rlfit::InputFilesFor(model.name, {args->template_path}, root);
        for (const std::string& f : rlfit::CoeffsInputFiles(model.name, coeffs_spec))
          inputs.push_back(f);
        rlfit::CheckOutputTarget(args->out, rlfit::OutputKind::kRecordingFile, inputs,
                                 args->force);
        const rlfit::CoeffFile coeffs = rlfit::LoadCoefficients(model, coeffs_spec);
        const std::vector<rlfit::Episode> recorded =
            rlfit::LoadEpisodesFor(model, {args->template_path}, root);
        rlfit::WriteEpisodeCsv(
            args->out,
            rlfit::Resimulate(recorded.front(), *model.make_predictor(coeffs, root), args->rows));
      }};
}


// `rlsim predict`: options bound straight into PredictOptions (checked by RunPredict).
Command AddPredict(CLI::App* app) {
  struct Args {
    rlfit::PredictOptions options;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  rlfit::PredictOptions* o = &args->options;
  CLI::App* predict = app->add_subcommand(
      "predict", "run a model from given initial states (and car controls) for a duration; "
                 "write the predicted trajectory CSV");
  rlfit::AddModelArgument(predict, &o->model, "model to run");
  predict->add_option("--state", o->state,
                      "initial state x,y,z,vx,vy,vz[,wx,wy,wz]: uu, uu/s, rad/s (world frame)");
  predict->add_option("--orientation", o->orientation,
                      "car orientation pitch,yaw,roll in radians, the datasets' Euler angles "
                      "(default 0,0,0)");
  predict->add_option("--states", o->states_path,
                      "initial states instead of --state: .json (an object or a list of "
                      "{\"x\":[3],\"v\":[3],\"omega\":[3],\"euler\":[3]}) or .csv (header "
                      "x,y,z,vx,vy,vz[,wx,wy,wz][,pitch,yaw,roll]); output gets a state column")
      ->check(rlfit::NonEmptyPath());
  predict->add_option("--controls", o->controls_path,
                      "car inputs CSV: header with any of t_s,throttle,steer,pitch,yaw,roll,jump,"
                      "boost,handbrake (missing = 0); a row holds from its t_s (else its row "
                      "time) until the next, acting after the model's input delay as recorded "
                      "inputs do")
      ->check(rlfit::NonEmptyPath());
  predict
      ->add_option("--duration", o->duration_s,
                   "predicted time, s (at most " +
                       rlfit::MessageNumber(rlfit::kMaxPredictDurationS) + ")")
      ->capture_default_str();
  predict->add_option("--dt", o->dt_s,
                      "output row spacing, s (default 1/120 for the car, one recording row "
                      "1/60.96 for the ball)")
      ->check(rlfit::Positive());
  predict->add_option("--coeffs", o->coeffs,
                      "coefficients JSON written by rlfit, or 'seed' (default: the committed "
                      "fit in results/MODEL/coeffs.json)")
      ->check(rlfit::CoeffsSpec());
  predict->add_option("--out", o->out_path, "CSV to write (default: stdout)")
      ->check(rlfit::NonEmptyPath());
  predict->add_flag("--recording-drift", o->recording_drift,
                    "keep the aerial recordings' Euler-rate drift (coefficients *drift_*), "
                    "which replay and fit use; by default a prediction leaves it out");
  predict->add_flag("--recording-input-delay", o->recording_input_delay,
                    "act on each control row 15.1 ms after its time (plus half a tick), the "
                    "recordings' measured input delay, as replay does; by default a control row "
                    "acts from its own time, so a row at a tick's start acts on that tick");
  rlfit::AddDataOption(predict, &o->data_root);
  rlfit::AddForceFlag(predict, &args->force);
  return {predict, [args] {
            const rlfit::PredictOptions& o = args->options;
            if (!o.out_path.empty()) {
              std::vector<std::string> inputs =
                  rlfit::CoeffsInputFiles(o.model, o.coeffs);
              for (const std::string* f : {&o.states_path, &o.controls_path})
                if (!f->empty()) inputs.push_back(*f);
              rlfit::CheckOutputTarget(o.out_path, rlfit::OutputKind::kTrajectoryFile, inputs,
                                       args->force);
            }
            rlfit::WritePredictOutput(o, rlfit::RunPredict(o), std::cout);
          }};
}

}  // namespace

int main(int argc, char** argv) {
  rlfit::GuardStandardDescriptors();
  rlfit::InstallCleanupHandlers();
  rlfit::InstallTerminateHandler(kTool, rlfit::kExitInternal);
  CLI::App app{"rlsim: replay Rocket League recordings through rlfit's models"};
  app.require_subcommand(1);
  rlfit::AddVersionFlag(&app, kTool);
  const std::vector<Command> commands = {AddReplay(&app), AddSynth(&app), AddPredict(&app)};

  if (const int code = rlfit::ParseCommandLine(&app, kTool, argc, argv); code >= 0)
    return rlfit::FinishStdout(kTool, code);
  for (const Command& command : commands)
    if (command.app->parsed())
      return rlfit::FinishStdout(kTool, rlfit::RunGuarded(kTool, command.run));
  return rlfit::kExitInternal;  // require_subcommand(1) makes this unreachable
}
