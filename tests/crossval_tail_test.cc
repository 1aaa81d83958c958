// The crossval's tail table (CrossvalTail): p90 over all held-out episodes, per fold, and the
// bootstrap spread of a new set's p90, on a hand-made report.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/common/error.h"
#include "tests/fit_test_util.h"  // after Ceres: CHECK is doctest's, not glog's

namespace rlfit {
namespace {

// A report of episodes with one open-loop |dx| each at the only label, "last".
ReplayReport LastRowReport(const std::vector<double>& dx) {
  ReplayReport r;
  r.model = "ball";
  r.has_orientation = false;
  r.horizon_labels = {"last"};
  for (double v : dx) {
    EpisodeReport e;
    ErrorPoint p;
    p.diverged = std::isinf(v);
    p.error.dx = v;
    e.open_loop = {p};
    r.episodes.push_back(e);
  }
  return r;
}

TEST_CASE("crossval tail: p90 over all, per fold, and a new set's spread") {
  // Fold 1: 1..10 (p90 9.1); fold 2: 10 x 100 (p90 100); all 20: p90 at position 17.1.
  std::vector<double> dx;
  for (int i = 1; i <= 10; ++i) dx.push_back(i);
  for (int i = 0; i < 10; ++i) dx.push_back(100);
  const std::vector<TailRow> rows = CrossvalTail(LastRowReport(dx), {10, 10}, 0);
  const auto dx_row = std::find_if(rows.begin(), rows.end(),
                                   [](const TailRow& r) { return r.quantity == "dx"; });
  REQUIRE(dx_row != rows.end());
  CHECK(dx_row->horizon == "last");
  CHECK(dx_row->p90 == doctest::Approx(100.0));
  REQUIRE(dx_row->fold_p90.size() == 2);
  CHECK(dx_row->fold_p90[0] == doctest::Approx(9.1));
  CHECK(dx_row->fold_p90[1] == doctest::Approx(100.0));
  // Set size 0: the largest fold's (10); half the figures are 100, so a set of 10 has its
  // p90 at 100 unless 9 or more of its 10 draws are small (P ~ 1%).
  CHECK(dx_row->spread.set_size == 10);
  CHECK(dx_row->spread.p50 == doctest::Approx(100.0));
  CHECK(CrossvalTail(LastRowReport(dx), {10, 10}, 40).front().spread.set_size == 40);
  // A diverged episode counts as the worst figure, printed and written as such.
  const std::vector<TailRow> diverged =
      CrossvalTail(LastRowReport({1, 2, std::numeric_limits<double>::infinity()}), {3}, 0);
  CHECK(std::isinf(diverged.front().spread.p95));
  CHECK(TailJson(diverged).front()["new_set_p90_p95"].is_null());
  // Fold sizes that do not cover the report are a caller's bug.
  CHECK_THROWS_AS(CrossvalTail(LastRowReport(dx), {10, 9}, 0), InternalError);
}

}  // namespace
}  // namespace rlfit
