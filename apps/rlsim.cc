// rlsim: replays recorded episodes through a model and reports prediction error.
#include <iostream>

#include <CLI/CLI.hpp>

#include "apps/cli_common.h"
#include "src/io/recording.h"
#include "src/replay/predict.h"
#include "src/replay/replay.h"
#include "src/replay/synth.h"
#include "src/report/plots.h"

namespace {

// `rlsim predict`: options bound straight into PredictOptions (checked by RunPredict).
CLI::App* AddPredictCommand(CLI::App* app, rlfit::PredictOptions* o) {
  CLI::App* predict = app->add_subcommand(
      "predict", "run a model from given initial states (and car controls) for a duration; "
                 "write the predicted trajectory CSV");
  predict->add_option("model", o->model, "model to run")
      ->required()
      ->check(CLI::IsMember(rlfit::ModelNames()));
  predict->add_option("--state", o->state,
                      "initial state x,y,z,vx,vy,vz[,wx,wy,wz]: uu, uu/s, rad/s (world frame)");
  predict->add_option("--orientation", o->orientation,
                      "car orientation pitch,yaw,roll in radians, the datasets' Euler angles "
                      "(default 0,0,0)");
  predict->add_option("--states", o->states_path,
                      "initial states instead of --state: .json (an object or a list of "
                      "{\"x\":[3],\"v\":[3],\"omega\":[3],\"euler\":[3]}) or .csv (header "
                      "x,y,z,vx,vy,vz[,wx,wy,wz][,pitch,yaw,roll]); output gets a state column");
  predict->add_option("--controls", o->controls_path,
                      "car inputs CSV: header with any of t_s,throttle,steer,pitch,yaw,roll,jump,"
                      "boost,handbrake (missing = 0); a row holds from its t_s (else its row "
                      "time) until the next, acting after the model's input delay as recorded "
                      "inputs do");
  predict->add_option("--duration", o->duration_s, "predicted time, s (at most 600)")
      ->capture_default_str();
  predict->add_option("--dt", o->dt_s,
                      "output row spacing, s (default 1/120 for the car, one recording row "
                      "1/60.96 for the ball)");
  predict->add_option("--coeffs", o->coeffs,
                      "coefficients JSON written by rlfit, or 'seed' (default: the committed "
                      "fit in results/MODEL/coeffs.json)");
  predict->add_option("--out", o->out_path, "CSV to write (default: stdout)");
  rlfit::AddDataOption(predict, &o->data_root);
  return predict;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rlsim: replay Rocket League recordings through rlfit's models"};
  app.require_subcommand(1);
  rlfit::ReplayOptions options;
  CLI::App* replay = app.add_subcommand(
      "replay", "predict recorded episodes open loop and from windowed restarts; report error");
  replay->add_option("model", options.model, "model to replay")
      ->required()
      ->check(CLI::IsMember(rlfit::ModelNames()));
  replay->add_option("paths", options.paths,
                     "recordings: files or folders (default: the model's datasets); relative "
                     "paths are also looked up under the datasets root");
  replay->add_option("--coeffs", options.coeffs_path,
                     "coefficients JSON written by rlfit (default: the seed notes' values)")
      ->check(CLI::ExistingFile);
  replay->add_option("--out", options.out_dir,
                     "output folder: predicted trajectories, replay_summary.json, summary.txt");
  replay->add_option("--horizons", options.horizons_s, "reported horizons in seconds")
      ->capture_default_str();
  replay->add_option("--window", options.window_s, "spacing of windowed restarts, s")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  replay->add_flag("--quiet", options.quiet, "no progress on stderr");
  bool plots = false;
  replay->add_flag("--plots", plots,
                   "also draw figures and OUT/index.html (scripts/plot_replay.py, matplotlib)")
      ->needs("--out");
  rlfit::AddDataOption(replay, &options.data_root);

  std::string synth_model, synth_template, synth_out, synth_coeffs, synth_data;
  int synth_rows = 0;
  CLI::App* synth = app.add_subcommand(
      "synth", "write a synthetic episode: a recording's timing, inputs and first state, with "
               "the later states predicted by the model");
  synth->add_option("model", synth_model, "model")->required()->check(
      CLI::IsMember(rlfit::ModelNames()));
  synth->add_option("template", synth_template, "recorded episode to take timing and inputs from")
      ->required();
  synth->add_option("--out", synth_out, "CSV to write (recording format)")->required();
  synth->add_option("--rows", synth_rows, "keep only the first N rows (0: all)")
      ->check(CLI::NonNegativeNumber);
  synth->add_option("--coeffs", synth_coeffs, "coefficients JSON (default: seed notes)")
      ->check(CLI::ExistingFile);
  rlfit::AddDataOption(synth, &synth_data);

  rlfit::PredictOptions predict_options;
  CLI::App* predict = AddPredictCommand(&app, &predict_options);

  CLI11_PARSE(app, argc, argv);
  if (predict->parsed()) {
    return rlfit::RunGuarded("rlsim", [&] {
      rlfit::WritePredictOutput(predict_options, rlfit::RunPredict(predict_options), std::cout);
    });
  }
  if (synth->parsed()) {
    return rlfit::RunGuarded("rlsim", [&] {
      const rlfit::ModelInfo& model = rlfit::FindModel(synth_model);
      const std::string root = rlfit::ResolveDataRoot(synth_data);
      const rlfit::CoeffFile coeffs =
          synth_coeffs.empty() ? rlfit::DefaultCoeffs(model.name, *model.layout)
                               : rlfit::ReadCoeffFile(synth_coeffs, model.name, *model.layout);
      const std::vector<rlfit::Episode> recorded =
          rlfit::LoadEpisodesFor(model, {synth_template}, root);
      rlfit::WriteEpisodeCsv(synth_out, rlfit::Resimulate(recorded.front(),
                                                          *model.make_predictor(coeffs, root),
                                                          synth_rows));
    });
  }
  return rlfit::RunGuarded("rlsim", [&] {
    std::string why;
    if (!options.Check(&why)) throw rlfit::InputError("(options)", 0, 0, why);
    options.data_root = rlfit::ResolveDataRoot(options.data_root);
    rlfit::RunReplay(options, std::cout);
    if (plots) rlfit::RunPlotScript(rlfit::PlotScriptPath("plot_replay.py"), {options.out_dir});
  });
}
