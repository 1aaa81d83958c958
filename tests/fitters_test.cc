// Tests of the fit layer's fitters against the model registry: every model that declares a
// fit has one fitter under its name, every fitter belongs to such a model, and the tools' help
// on the fits' defaults names every one.
#include <set>
#include <string>

#include "fit/fitters.h"
#include "src/common/error.h"
#include "src/replay/registry.h"
#include "tests/fit_test_util.h"  // doctest's CHECK, not glog's

namespace rlfit {
namespace {

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

}  // namespace
}  // namespace rlfit
