// Batch ball prediction, the C++ side of the Python module's figure (bench/predict_bench.py):
// 1,000 six-second trajectories at the default row spacing (1/60.96 s, 366 rows) through
// PredictTrajectories, the function `rlfit.Model.predict_batch` calls, with the committed ball
// coefficients. Start states: the first row of every episode of ball_trajectories (the reader's
// order), repeated up to 1,000, exactly as bench/predict_bench.py builds them.
#include <benchmark/benchmark.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "src/io/recording.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/predict.h"

namespace rlfit {
namespace {

constexpr int kTrajectories = 1000;
constexpr double kDurationS = 6.0;

struct Batch {
  const ModelInfo* model = nullptr;
  std::unique_ptr<Predictor> predictor;
  std::vector<InitialState> states;
  double dt_s = 0.0;
  int steps = 0;
};

const Batch& GetBatch() {
  static const Batch batch = [] {
    const std::string root = ResolveDataRoot("");
    if (root.empty())
      throw std::runtime_error("datasets not found: set RLFIT_DATA to the lobot folder");
    Batch b;
    b.model = &FindModel("ball");
    b.predictor = b.model->make_predictor(LoadCoefficients(*b.model, ""), root);
    std::vector<InitialState> starts;
    for (const Episode& ep : ReadRecordings({root + "/ball_trajectories"})) {
      InitialState s;
      s.x = ep.rows[0].x;
      s.v = ep.rows[0].v;
      s.omega = ep.rows[0].omega;
      starts.push_back(s);
    }
    for (int i = 0; i < kTrajectories; ++i) b.states.push_back(starts[i % starts.size()]);
    b.dt_s = DefaultPredictDt(*b.model);
    b.steps = PredictSteps(kDurationS, b.dt_s);
    return b;
  }();
  return batch;
}

// 1,000 trajectories per iteration on state.range(0) threads (0 = every core). Wall time.
void BM_BallBatch1000x6s(benchmark::State& state) {
  const Batch& b = GetBatch();
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    std::vector<Trajectory> t =
        PredictTrajectories(*b.model, *b.predictor, b.states, {}, b.dt_s, b.steps, threads);
    benchmark::DoNotOptimize(t.data());
  }
  state.counters["per_trajectory"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kTrajectories,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["rows"] = b.steps + 1;
}
BENCHMARK(BM_BallBatch1000x6s)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace rlfit

BENCHMARK_MAIN();
