// rlsim: replays recorded episodes through a model and reports prediction error.
#include <iostream>

#include <CLI/CLI.hpp>

#include "apps/cli_common.h"
#include "src/io/recording.h"
#include "src/replay/replay.h"
#include "src/replay/synth.h"
#include "src/report/plots.h"

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
                     "coefficients JSON written by rlfit, or 'seed' for the seed notes' values "
                     "(default: the committed fit, results/MODEL/coeffs.json); a missing file is "
                     "an input error (exit 2)");
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

  CLI11_PARSE(app, argc, argv);
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
