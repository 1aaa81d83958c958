// Tests of the regression guard: a baseline passes its own check, and a deliberately
// worsened coefficient makes the check fail with the metric named.
#include <sstream>

#include "fit/regression.h"
#include "src/io/coeff_file.h"
#include "src/io/files.h"
#include "src/models/aerial.h"
#include "tests/fit_test_util.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

TEST_CASE("a worsened coefficient fails the regression check, naming the metric" *
          doctest::skip(testing::NoData())) {
  RegressionOptions options;
  options.data_root = testing::DataRoot();
  testing::TempDir results;
  options.results_dir = results.path();
  options.quiet = true;
  std::ostringstream log;
  RecordBaseline("aerial", options, log);

  // The recorded baseline passes its own check, refit included.
  CHECK(RunRegressionCheck(options, log).empty());

  // Pitch torque 5% too weak: several error metrics get worse than their baselines.
  const std::string coeffs_path = results.path() + "/aerial/coeffs.json";
  CoeffFile coeffs = ReadCoeffFile(coeffs_path, "aerial", AerialLayout());
  coeffs.values[AerialCoeffs<double>::kTp] *= 0.95;
  WriteCoeffFile(coeffs_path, coeffs, AerialLayout());
  options.refit = false;
  const std::vector<std::string> failures = RunRegressionCheck(options, log);
  REQUIRE(!failures.empty());
  bool named = false;
  for (const std::string& f : failures)
    named = named || (f.find("aerial open_loop.domega.") != std::string::npos &&
                      f.find("worse than baseline") != std::string::npos);
  CHECK(named);

  // ... and the refit no longer reproduces the committed (worsened) coefficient.
  options.refit = true;
  bool refit_named = false;
  for (const std::string& f : RunRegressionCheck(options, log))
    refit_named = refit_named || f.find("refit T_p") != std::string::npos;
  CHECK(refit_named);
}

TEST_CASE("a missing baseline is an input error") {
  RegressionOptions options;
  testing::TempDir results;
  options.results_dir = results.path();
  options.data_root = "/nonexistent";
  std::ostringstream log;
  CHECK_THROWS_AS(RunRegressionCheck(options, log), InputError);
}

}  // namespace
}  // namespace rlfit
