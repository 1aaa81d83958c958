// Benchmarks of the ball model with arena collision: one 120 Hz step of real predictions (each
// step feeds the next) from random in-arena starts, a whole 6 s prediction from those starts and
// from recorded first rows, the tools' replay Predictor over a 6 s episode, and (for comparison
// with earlier figures) one step over a precomputed list of prediction states. The predictions
// carry a BallClearance from tick to tick as a prediction loop does (the *NoSkip variants do
// not). `--callgrind_steps=N` instead runs N steps of the chained predictions for instruction
// counts under callgrind (`--callgrind_steps_noskip=N` without the clearance,
// `--callgrind_list_steps=N` the precomputed list, `--callgrind_predictor=N` N Predictor
// rollouts).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "src/io/recording.h"
#include "src/models/ball.h"
#include "src/replay/episode_steps.h"
#include "src/replay/predict.h"
#include "src/replay/predictor.h"
#include "bench/workloads.h"

namespace rlfit {
namespace {

using bench::GetBallScene;
using bench::kBallTicks6s;
using bench::kBallTickS;
constexpr double kTickS = kBallTickS;
constexpr int kTicks6s = kBallTicks6s;
constexpr int kRows6s = 366;  // rows of 1/60.96 s in 6 s (rlsim predict's default spacing)
constexpr int kStarts = 64;  // recorded episodes the predictions start from

// The random-start predictions of bench/workloads.h (BallScene), with what the benchmarks also
// report: the recorded starts, the states of their predictions, and two fractions of ticks.
struct Scene : bench::BallScene {
  std::vector<BallState<double>> starts;  // first rows of recorded episodes
  std::vector<BallState<double>> states;  // every tick of their 6 s predictions
  double contact_fraction = 0.0;  // of the ticks of the random-start predictions
  double lookup_fraction = 0.0;   // of the same ticks, those a BallClearance does not skip
};

const Scene& GetScene() {
  static const Scene scene = [] {
    Scene s;
    static_cast<bench::BallScene&>(s) = GetBallScene();
    const std::string root = bench::DataRootOrThrow();
    const std::vector<std::string> files =
        ExpandRecordingPaths({root + "/ball_trajectories"});
    for (int i = 0; i < kStarts && i < static_cast<int>(files.size()); ++i)
      s.starts.push_back(FromSample<BallState<double>>(ReadRecording(files[i]).front().rows[0]));
    long contacts = 0;
    for (const BallState<double>& start : s.random_starts) {
      BallState<double> b = start;
      for (int t = 0; t < kTicks6s; ++t) {
        contacts += s.arena->Collide(b.x, s.coeffs.contact_radius).hit;
        b = StepBall(s.coeffs, b, kTickS, *s.arena);
      }
    }
    s.contact_fraction = static_cast<double>(contacts) / (s.random_starts.size() * kTicks6s);
    long lookups = 0;
    for (const BallState<double>& start : s.random_starts) {
      BallState<double> b = start;
      BallClearance clearance;
      for (int t = 0; t < kTicks6s; ++t) {
        lookups += clearance.ticks == 0;
        b = StepBall(s.coeffs, b, kTickS, *s.arena, &clearance);
      }
    }
    s.lookup_fraction = static_cast<double>(lookups) / (s.random_starts.size() * kTicks6s);
    for (const BallState<double>& start : s.starts) {
      BallState<double> b = start;
      for (int t = 0; t < kTicks6s; ++t) {
        s.states.push_back(b);
        b = StepBall(s.coeffs, b, kTickS, *s.arena);
      }
    }
    return s;
  }();
  return scene;
}

// One StepBall of a prediction, with (kSkip) or without the clearance a prediction loop carries
// from tick to tick (BallClearance: the arena lookups of ticks that cannot reach the mesh are
// skipped; the states are the same bit for bit).
template <bool kSkip>
RLFIT_ALWAYS_INLINE BallState<double> PredictionStep(const Scene& s, const BallState<double>& b,
                                                     BallClearance* clearance) {
  if (kSkip) return StepBall(s.coeffs, b, kTickS, *s.arena, clearance);
  return StepBall(s.coeffs, b, kTickS, *s.arena);
}

// One step with collision in a real prediction: each step feeds the next, and the chain
// restarts from the next random start every 720 ticks (6 s).
template <bool kSkip>
void BM_BallStep(benchmark::State& state) {
  const Scene& s = GetScene();
  BallState<double> b = s.random_starts[0];
  BallClearance clearance;
  int tick = 0;
  std::size_t start = 0;
  for (auto _ : state) {
    b = PredictionStep<kSkip>(s, b, &clearance);
    benchmark::DoNotOptimize(b);
    if (++tick == kTicks6s) {
      tick = 0;
      if (++start == s.random_starts.size()) start = 0;
      b = s.random_starts[start];
      clearance = {};
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["contact_fraction"] = s.contact_fraction;
  if (kSkip) state.counters["lookup_fraction"] = s.lookup_fraction;
}
BENCHMARK(BM_BallStep<true>)->Name("BM_BallStep");
BENCHMARK(BM_BallStep<false>)->Name("BM_BallStepNoSkip");

// A 6 s prediction (720 ticks, every state written out) from a random in-arena start, as a
// caller runs it: PredictBall.
void BM_Prediction6s(benchmark::State& state) {
  const Scene& s = GetScene();
  std::vector<BallState<double>> out(kTicks6s);
  std::size_t i = 0;
  for (auto _ : state) {
    PredictBall(s.coeffs, s.random_starts[i], kTickS, kTicks6s, *s.arena, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    if (++i == s.random_starts.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations() * kTicks6s);
}
BENCHMARK(BM_Prediction6s)->Unit(benchmark::kMicrosecond);

// The same predictions as 720 chained StepBall calls, with (kSkip) or without a BallClearance
// (until 2026-11-25 the BM_Prediction6s figure, with the clearance).
template <bool kSkip>
void BM_Prediction6sSteps(benchmark::State& state) {
  const Scene& s = GetScene();
  std::size_t i = 0;
  for (auto _ : state) {
    BallState<double> b = s.random_starts[i];
    BallClearance clearance;
    for (int t = 0; t < kTicks6s; ++t) b = PredictionStep<kSkip>(s, b, &clearance);
    benchmark::DoNotOptimize(b);
    if (++i == s.random_starts.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations() * kTicks6s);
}
BENCHMARK(BM_Prediction6sSteps<true>)->Name("BM_Prediction6sSteps")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Prediction6sSteps<false>)
    ->Name("BM_Prediction6sNoSkip")
    ->Unit(benchmark::kMicrosecond);

// A 6 s prediction from a recorded first row (mostly slow balls near the floor).
void BM_Prediction6sRecorded(benchmark::State& state) {
  const Scene& s = GetScene();
  std::size_t i = 0;
  for (auto _ : state) {
    BallState<double> b = s.starts[i];
    BallClearance clearance;
    for (int t = 0; t < kTicks6s; ++t) b = PredictionStep<true>(s, b, &clearance);
    benchmark::DoNotOptimize(b);
    if (++i == s.starts.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations() * kTicks6s);
}
BENCHMARK(BM_Prediction6sRecorded)->Unit(benchmark::kMicrosecond);

// The earlier figure: one step from each state of the recorded-start predictions in turn (no
// step depends on the one before, so it is easier than a real prediction).
void BM_BallStepList(benchmark::State& state) {
  const Scene& s = GetScene();
  std::size_t i = 0;
  for (auto _ : state) {
    BallState<double> next = StepBall(s.coeffs, s.states[i], kTickS, *s.arena);
    benchmark::DoNotOptimize(next);
    if (++i == s.states.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BallStepList);

// The tools' path (rlsim predict and replay, Python's predict and predict_batch): the ball's
// replay Predictor rolling out a constructed 6 s episode of 366 rows of 1/60.96 s (each 2 ticks
// of 1/122 s, 732 ticks) from a random in-arena start, every row's state kept. It runs the rows
// through PredictBall (see BallPredictor in src/replay/models.cc); the rest is the episode's
// PredictedState rows.
struct PredictorScene {
  std::unique_ptr<Predictor> predictor;
  std::vector<Episode> episodes;  // one per random start
};

const PredictorScene& GetPredictorScene() {
  static const PredictorScene scene = [] {
    const Scene& s = GetScene();
    PredictorScene p;
    CoeffFile file;
    file.model = "ball";
    file.values = BallLayout().defaults;
    p.predictor = FindModel("ball").make_predictor(file, ResolveDataRoot(""));
    for (const BallState<double>& start : s.random_starts) {
      InitialState state;
      state.x = start.x;
      state.v = start.v;
      state.omega = start.omega;
      p.episodes.push_back(PredictionEpisode(EpisodeKind::kBall, state, {},
                                             1.0 / game::kEpisodeRowRateHz, kRows6s));
    }
    return p;
  }();
  return scene;
}

void BM_Predictor6s(benchmark::State& state) {
  const PredictorScene& p = GetPredictorScene();
  std::size_t i = 0;
  for (auto _ : state) {
    std::vector<PredictedState> rows = p.predictor->Rollout(p.episodes[i], 0, kRows6s);
    benchmark::DoNotOptimize(rows.data());
    benchmark::ClobberMemory();
    if (++i == p.episodes.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations() * kRows6s);
}
BENCHMARK(BM_Predictor6s)->Unit(benchmark::kMicrosecond);

// N rollouts of BM_Predictor6s, cycling through the starts, for callgrind
// (`--toggle-collect='*RunPredictorRollouts*'`); the checksum sums every row's z.
__attribute__((noinline)) int RunPredictorRollouts(const PredictorScene& p, long n) {
  double sink = 0.0;
  for (long k = 0; k < n; ++k)
    for (const PredictedState& row :
         p.predictor->Rollout(p.episodes[k % p.episodes.size()], 0, kRows6s))
      sink += row.x.z();
  std::printf("%ld rollouts, checksum %.17g\n", n, sink);
  return 0;
}

}  // namespace
}  // namespace rlfit

// Runs `run(n)` and prints its checksum (the callgrind modes' output).
template <class Run>
int Print(const char* what, long n, const Run& run) {
  const double checksum = run(n);
  std::printf("%ld %s, checksum %.17g\n", n, what, checksum);
  return 0;
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    using rlfit::bench::GetBallScene;
    if (std::strncmp(argv[i], "--callgrind_steps=", 18) == 0)
      return Print("steps", std::atol(argv[i] + 18), [](long n) {
        return rlfit::bench::RunBallSteps(GetBallScene(), n, true);
      });
    if (std::strncmp(argv[i], "--callgrind_predictions=", 24) == 0)
      return Print("predictions", std::atol(argv[i] + 24), [](long n) {
        return rlfit::bench::RunPredictions(GetBallScene(), n, true);
      });
    if (std::strncmp(argv[i], "--callgrind_prediction_steps=", 29) == 0)
      return Print("predictions", std::atol(argv[i] + 29), [](long n) {
        return rlfit::bench::RunPredictions(GetBallScene(), n, false);
      });
    if (std::strncmp(argv[i], "--callgrind_predictor=", 22) == 0)
      return rlfit::RunPredictorRollouts(rlfit::GetPredictorScene(), std::atol(argv[i] + 22));
    if (std::strncmp(argv[i], "--callgrind_steps_noskip=", 25) == 0)
      return Print("steps", std::atol(argv[i] + 25), [](long n) {
        return rlfit::bench::RunBallSteps(GetBallScene(), n, false);
      });
    if (std::strncmp(argv[i], "--callgrind_list_steps=", 23) == 0) {
      const long n = std::atol(argv[i] + 23);
      const auto& s = rlfit::GetScene();
      double sink = 0.0;
      for (long k = 0; k < n; ++k)
        sink += rlfit::StepBall(s.coeffs, s.states[k % s.states.size()], rlfit::kTickS, *s.arena)
                    .x.z();
      std::printf("%ld steps, checksum %.17g\n", n, sink);
      return 0;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  rlfit::GetPredictorScene();  // load, sample and predict before timing
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
