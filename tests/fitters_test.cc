// Tests of the fit layer's fitters against the model registry: every model that declares a
// fit has one fitter under its name, every fitter belongs to such a model, and the tools' help
// on the fits' defaults names every one; the fits assume the timing the seed coefficients carry.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "fit/fitters.h"
#include "src/common/error.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/registry.h"
#include "tests/fit_test_util.h"  // doctest's CHECK, not glog's

namespace rlfit {
namespace {

namespace fs = std::filesystem;

TEST_CASE("fitters: exactly the registered models that declare a fit have one") {
  std::set<std::string> fitted;
  for (const FitterInfo& f : Fitters()) {
    INFO(f.model);
    CHECK(fitted.insert(f.model).second);
    const ModelDescriptor* d = nullptr;
    CHECK_NOTHROW(d = &FindDescriptor(f.model));
    if (d != nullptr) CHECK(d->has_fit);
    CHECK(f.add_residuals != nullptr);
  }
  for (const ModelDescriptor& d : Registry()) {
    INFO(d.replay.name);
    CHECK(fitted.count(d.replay.name) == (d.has_fit ? 1u : 0u));
    if (d.has_fit) CHECK(FindFitter(d.replay.name).model == d.replay.name);
    else CHECK_THROWS_AS(FindFitter(d.replay.name), InputError);
  }
}

TEST_CASE("fitters: listed in the registry's order, a fitter for each fit/models/<name>_fit.cc") {
  std::vector<std::string> fitted_in_order;
  for (const ModelDescriptor& d : Registry())
    if (d.has_fit) fitted_in_order.push_back(d.replay.name);
  std::vector<std::string> fitters;
  for (const FitterInfo& f : Fitters()) fitters.push_back(f.model);
  CHECK(fitters == fitted_in_order);
  std::set<std::string> files, folder_fitters;
  const std::string folder = std::string(RLFIT_SOURCE_DIR) + "/fit/models";
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = "_fit.cc";
    if (file.size() > suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
      files.insert(file.substr(0, file.size() - suffix.size()));
  }
  CHECK(files.count("powerslide") == 1);
  for (const FitterInfo& f : FolderFitters()) folder_fitters.insert(f.model);
  CHECK(folder_fitters == files);
}

TEST_CASE("fitters: the help on the default loss names every fitted model once") {
  const std::string loss = DefaultLossText();
  const std::string scale = DefaultLossScaleText();
  for (const FitterInfo& f : Fitters()) {
    INFO(f.model);
    const std::string in_list[] = {"(" + f.model + ",", "(" + f.model + ")", " " + f.model + ",",
                                   " " + f.model + ")"};
    int in_loss = 0, in_scale = 0;
    for (const std::string& s : in_list) {
      for (std::size_t at = loss.find(s); at != std::string::npos; at = loss.find(s, at + 1))
        ++in_loss;
      for (std::size_t at = scale.find(s); at != std::string::npos; at = scale.find(s, at + 1))
        ++in_scale;
    }
    CHECK(in_loss == 1);
    CHECK(in_scale == 1);
    CHECK(loss.find(f.defaults.loss + " (") != std::string::npos);
  }
}

TEST_CASE("fitters: a fit assumes its model's timing, the one `--coeffs seed` runs at") {
  for (const ModelDescriptor& d : Registry()) {
    if (!d.has_fit) continue;
    INFO(d.replay.name);
    FitOptions options;
    options.model = d.replay.name;
    options.integration.input_delay_s = 0.02;  // replaced: no timing option was given
    options.integration.tick_phase = 0.5;
    const FitOptions with = WithModelDefaults(options);
    const CoeffFile seed = LoadCoefficients(d.replay, kSeedCoeffs);
    CHECK(with.integration.input_delay_s == d.timing.input_delay_s);
    CHECK(with.integration.tick_phase == d.timing.tick_phase);
    CHECK(seed.integration.input_delay_s == d.timing.input_delay_s);
    CHECK(seed.integration.tick_phase == d.timing.tick_phase);
    options.model_timing = false;  // --input-delay or --tick-phase given: kept as given
    CHECK(WithModelDefaults(options).integration.input_delay_s == 0.02);
    CHECK(WithModelDefaults(options).integration.tick_phase == 0.5);
  }
  // The aerial's own timing (decision 0124); the car, fitted at phase 0, has Integration's.
  CHECK(FindDescriptor("aerial").timing.tick_phase == 0.15);
  CHECK(FindDescriptor("aerial").timing.input_delay_s == 0.01635);
  CHECK(FindDescriptor("car").timing.tick_phase == Integration{}.tick_phase);
}

}  // namespace
}  // namespace rlfit
