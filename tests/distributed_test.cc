// Tests of fit/distributed.h without Dask: the shard tasks run in this process through a plain
// loop, so the sanitizer job checks the client's and the workers' code too (python/tests/
// test_dask.py runs the same on a LocalCluster).
#include <sstream>

#include "fit/distributed.h"
#include "src/common/error.h"
#include "tests/fit_test_util.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

// Every task run here, one after another, and counted.
struct LocalMap {
  int maps = 0;
  ShardMap Map() {
    return [this](const std::string& task, const std::vector<std::string>& payloads) {
      ++maps;
      std::vector<std::string> answers;
      for (const std::string& p : payloads) answers.push_back(RunShardTask(task, p));
      return answers;
    };
  }
};

std::string SyntheticAerial() { return testing::RepoDatasets() + "/synthetic/aerial"; }

// The distributed fit's coefficients agree with the single-machine fit's to round-off
// (fit/distributed.h: the same windows' numbers, other summation orders and QR); 1e-6 is the
// issue's target.
constexpr double kRelative = 1e-6;

TEST_CASE("distributed fit gives rlfit fit's coefficients, standard errors and report" *
          doctest::skip(testing::NoData())) {
  FitOptions o;
  o.data_root = testing::DataRoot();
  o.model = "aerial";
  o.paths = {SyntheticAerial()};
  o.holdout_every = 0;
  o.quiet = true;
  o.solver.threads = 1;
  std::ostringstream single_out, dist_out;
  const FitResult single = RunFit(o, single_out);
  LocalMap local;
  DistributedOptions dist;
  dist.shards = 2;
  const FitResult d = DistributedFit(o, dist, local.Map(), dist_out);
  CHECK(local.maps > 3);  // outline, then one per solver evaluation
  REQUIRE(d.coeffs.values.size() == single.coeffs.values.size());
  for (std::size_t i = 0; i < d.coeffs.values.size(); ++i) {
    const double a = single.coeffs.values[i], b = d.coeffs.values[i];
    CHECK(std::abs(a - b) <= kRelative * std::abs(a));
    const double ea = single.coeffs.std_errors[i], eb = d.coeffs.std_errors[i];
    if (std::isnan(ea)) CHECK(std::isnan(eb));  // not determined by these two episodes
    else CHECK(std::abs(ea - eb) <= kRelative * std::abs(ea));
  }
  CHECK(d.residual_blocks == single.residual_blocks);
  CHECK(d.coeffs.fit_report["residuals"] == single.coeffs.fit_report["residuals"]);
  CHECK(d.coeffs.fit_report["iterations"] == single.coeffs.fit_report["iterations"]);
  CHECK(std::abs(d.cost_final - single.cost_final) <= kRelative * single.cost_final);
  CHECK(d.train == single.train);
}

TEST_CASE("distributed replay gives rlsim replay's table; a bad file its error" *
          doctest::skip(testing::NoData())) {
  ReplayOptions o;
  o.data_root = testing::DataRoot();
  o.model = "aerial";
  o.paths = {SyntheticAerial()};
  o.quiet = true;
  std::ostringstream single_out, dist_out, warnings;
  const ReplayReport single = RunReplay(o, single_out);
  LocalMap local;
  DistributedOptions dist;
  dist.shards = 2;
  const ReplayReport d = DistributedReplay(o, dist, local.Map(), dist_out, warnings);
  CHECK(dist_out.str() == single_out.str());
  CHECK(d.ToJson() == single.ToJson());

  testing::TempDir tmp;
  const std::string bad = tmp.Write("episode_01.csv", "1,2,3\n");
  o.paths = {SyntheticAerial() + "/episode_9000.csv", bad};
  std::string expected;
  try {
    RunReplay(o, single_out);
  } catch (const InputError& e) {
    expected = e.what();
  }
  REQUIRE(!expected.empty());
  CHECK_THROWS_WITH_AS(DistributedReplay(o, dist, local.Map(), dist_out, warnings),
                       expected.c_str(), InputError);
}

}  // namespace
}  // namespace rlfit
