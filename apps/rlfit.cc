// rlfit: refits model coefficients on recordings (Ceres least squares) and cross-validates.
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include "apps/cli_common.h"
#include "fit/fit.h"
#include "fit/regression.h"
#include "src/io/recording.h"
#include "src/replay/predictor.h"
#include "src/report/plots.h"

namespace {

// Options shared by `fit` and `crossval`, bound straight into FitOptions.
void AddFitOptions(CLI::App* cmd, rlfit::FitOptions* o) {
  cmd->add_option("model", o->model, "model to fit")
      ->required()
      ->check(CLI::IsMember(rlfit::ModelNames()));
  cmd->add_option("paths", o->paths,
                  "recordings: files or folders (default: the model's datasets); relative paths "
                  "are also looked up under the datasets root");
  cmd->add_option("--init", o->init_coeffs, "starting coefficients JSON (default: seed notes)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--window", o->window_s, "length of each rollout residual, s")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--stride", o->stride_s, "spacing of rollout starts, s")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--tick-rate", o->integration.tick_rate_hz,
                  "physics steps per second; a row of dt seconds takes round(dt * rate) steps")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--input-delay", o->integration.input_delay_s,
                  "seconds between a recorded input and the time it acts from")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--tick-aligned", o->integration.tick_aligned_inputs,
                  "1 = inputs take effect at the next physics tick when the episode's clock is "
                  "known, 0 = exactly at row time + delay")
      ->capture_default_str();
  cmd->add_option("--rotation", o->integration.rotate_with_new_omega,
                  "orientation update: 1 = by the new angular velocity (semi-implicit), 0 = by "
                  "the average of old and new (note 000)")
      ->capture_default_str();
  cmd->add_option("--hold", o->selection.constant_blocks,
                  "parameter blocks held at their starting values (e.g. air_damping)");
  cmd->add_option("--loss", o->solver.loss,
                  "robust loss (default: huber for aerial and ground, cauchy for ball)")
      ->check(CLI::IsMember({"huber", "cauchy", "none"}));
  cmd->add_option("--loss-scale", o->solver.loss_scale,
                  "robust-loss threshold, in sigmas (default: 3 for aerial and ground, 0.3 for "
                  "ball)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-iterations", o->solver.max_iterations, "solver iterations")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--threads", o->solver.threads, "solver threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--horizons", o->replay.horizons_s,
                  "horizons of the held-out replay report, s (plus the last row)")
      ->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
  rlfit::AddDataOption(cmd, &o->data_root);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rlfit: refit rlfit's model coefficients on Rocket League recordings"};
  app.require_subcommand(1);

  rlfit::FitOptions fit_options;
  CLI::App* fit = app.add_subcommand(
      "fit", "fit coefficients by least squares on rollouts; validate on held-out episodes");
  AddFitOptions(fit, &fit_options);
  fit->add_option("--out", fit_options.out_path, "coefficients JSON to write");
  std::string fit_plots;
  fit->add_option("--plots", fit_plots,
                  "folder for the fit's report page: each coefficient with its error bar "
                  "beside its default (needs --out)")
      ->needs(fit->get_option("--out"));
  fit->add_option("--holdout-every", fit_options.holdout_every,
                  "hold out every k-th episode for validation (0: none)")
      ->capture_default_str();

  rlfit::FitOptions cv_options;
  int folds = 4;
  std::string cv_out;
  CLI::App* cv = app.add_subcommand(
      "crossval", "k-fold by episode: replay every episode with coefficients fitted without it");
  AddFitOptions(cv, &cv_options);
  cv->add_option("--folds", folds, "number of folds")->capture_default_str()->check(CLI::Range(2, 1000));
  cv->add_option("--out", cv_out, "output folder for the combined held-out replay report");

  rlfit::RegressionOptions regression;
  std::string baseline_model;
  CLI::App* baseline = app.add_subcommand(
      "baseline", "fit MODEL on its default data and record coefficients and replay errors in "
                  "results/MODEL/ (the regression baselines)");
  baseline->add_option("model", baseline_model, "model")->required()->check(
      CLI::IsMember(rlfit::ModelNames()));
  baseline->add_option("--results", regression.results_dir, "results folder")
      ->capture_default_str();
  baseline->add_flag("--quiet", regression.quiet, "no progress on stderr");
  rlfit::AddDataOption(baseline, &regression.data_root);

  CLI::App* check = app.add_subcommand(
      "check", "replay the datasets with the committed coefficients in results/ and fail when "
               "an error metric is worse than its baseline, or a refit differs");
  check->add_option("models", regression.models, "models to check (default: all in results/)")
      ->check(CLI::IsMember(rlfit::ModelNames()));
  check->add_option("--results", regression.results_dir, "results folder")
      ->capture_default_str()
      ->check(CLI::ExistingDirectory);
  check->add_option("--tolerance", regression.relative_tolerance,
                    "relative tolerance on each error metric")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  check->add_option("--refit-sigmas", regression.refit_sigmas,
                    "a refit must land within this many standard errors")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  bool no_refit = false;
  check->add_flag("--no-refit", no_refit, "only replay, do not refit");
  check->add_flag("--quiet", regression.quiet, "no progress on stderr");
  rlfit::AddDataOption(check, &regression.data_root);

  CLI11_PARSE(app, argc, argv);
  if (baseline->parsed() || check->parsed()) {
    int failed = 0;
    const int rc = rlfit::RunGuarded("rlfit", [&] {
      std::string why;
      if (!regression.Check(&why)) throw rlfit::InputError("(options)", 0, 0, why);
      regression.refit = !no_refit;
      regression.data_root = rlfit::ResolveDataRoot(regression.data_root);
      if (baseline->parsed()) {
        rlfit::RecordBaseline(baseline_model, regression, std::cout);
        return;
      }
      const std::vector<std::string> failures = rlfit::RunRegressionCheck(regression, std::cout);
      for (const std::string& f : failures) std::cerr << "rlfit: regression: " << f << "\n";
      failed = static_cast<int>(failures.size());
      std::cout << (failed == 0 ? "regression check passed\n"
                                : "regression check FAILED: " + std::to_string(failed) +
                                      " metric(s) worse than baseline\n");
    });
    return rc != 0 ? rc : (failed > 0 ? 1 : 0);
  }
  return rlfit::RunGuarded("rlfit", [&] {
    rlfit::FitOptions& o = fit->parsed() ? fit_options : cv_options;
    std::string why;
    if (!o.Check(&why)) throw rlfit::InputError("(options)", 0, 0, why);
    o.data_root = rlfit::ResolveDataRoot(o.data_root);
    if (fit->parsed()) {
      rlfit::RunFit(o, std::cout);
      if (!fit_plots.empty())
        rlfit::RunPlotScript(rlfit::PlotScriptPath("plot_fit.py"), {o.out_path, fit_plots});
    }
    else rlfit::RunCrossValidation(o, folds, cv_out, std::cout);
  });
}
