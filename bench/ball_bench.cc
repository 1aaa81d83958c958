// Benchmarks of the ball model with arena collision: one 120 Hz step over the states of
// 6 s predictions started from recorded ball episodes, and a whole 6 s prediction.
// `--callgrind_steps=N` instead runs N steps for instruction counts under callgrind.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "src/io/recording.h"
#include "src/models/ball.h"

namespace rlfit {
namespace {

constexpr double kTickS = 1.0 / 120.0;
constexpr int kTicks6s = 720;
constexpr int kStarts = 64;  // recorded episodes the predictions start from

struct Scene {
  const Arena* arena = nullptr;
  BallCoeffs<double> coeffs;
  std::vector<BallState<double>> starts;  // first rows of recorded episodes
  std::vector<BallState<double>> states;  // every tick of their 6 s predictions
};

const Scene& GetScene() {
  static const Scene scene = [] {
    const std::string root = ResolveDataRoot("");
    if (root.empty())
      throw std::runtime_error("datasets not found: set RLFIT_DATA to the lobot folder");
    Scene s;
    s.arena = &PitchArena(root);
    s.coeffs = BallCoeffs<double>::FromArray(BallLayout().defaults.data());
    const std::vector<std::string> files =
        ExpandRecordingPaths({root + "/ball_trajectories"});
    for (int i = 0; i < kStarts && i < static_cast<int>(files.size()); ++i)
      s.starts.push_back(BallState<double>::FromSample(ReadRecording(files[i]).front().rows[0]));
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

// One step with collision, cycling through the states of the predictions (airborne,
// bouncing and rolling in the proportions real episodes have).
void BM_BallStep(benchmark::State& state) {
  const Scene& s = GetScene();
  std::size_t i = 0;
  for (auto _ : state) {
    BallState<double> next = StepBall(s.coeffs, s.states[i], kTickS, *s.arena);
    benchmark::DoNotOptimize(next);
    if (++i == s.states.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BallStep);

// A 6 s prediction (720 ticks) from a recorded first row.
void BM_Prediction6s(benchmark::State& state) {
  const Scene& s = GetScene();
  std::size_t i = 0;
  for (auto _ : state) {
    BallState<double> b = s.starts[i];
    for (int t = 0; t < kTicks6s; ++t) b = StepBall(s.coeffs, b, kTickS, *s.arena);
    benchmark::DoNotOptimize(b);
    if (++i == s.starts.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations() * kTicks6s);
}
BENCHMARK(BM_Prediction6s)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace rlfit

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--callgrind_steps=", 18) == 0) {
      const long n = std::atol(argv[i] + 18);
      const auto& s = rlfit::GetScene();
      double sink = 0.0;
      for (long k = 0; k < n; ++k)
        sink += rlfit::StepBall(s.coeffs, s.states[k % s.states.size()], rlfit::kTickS, *s.arena)
                    .x.z();
      std::printf("%ld steps, checksum %g\n", n, sink);
      return 0;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
