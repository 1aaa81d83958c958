// Benchmarks of one 120 Hz car step: the aerial model (random stick, throttle and boost inputs,
// tumbling random starts), the ground model (random steer, throttle and boost) and the whole car
// step on the pitch's flat floor (StepCar). Each step feeds the next; a chain restarts from the
// next random start every 720 ticks (6 s). `--callgrind_aerial=N` / `--callgrind_ground=N` /
// `--callgrind_car_floor=N` instead run N steps for instruction counts (bench/workloads.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "src/models/aerial.h"
#include "src/models/ground.h"
#include "bench/workloads.h"

namespace rlfit {
namespace {

using bench::kCarInputs;
using bench::kCarStarts;
using bench::kCarTicksPerChain;
constexpr double kTickS = bench::kCarTickS;
using Scene = bench::CarScene;
const Scene& GetScene() { return bench::GetCarScene(); }

// Steps chains of `step(state, controls)`, restarting every kTicksPerChain ticks.
template <typename Step>
void RunChains(benchmark::State& state, const std::vector<CarState<double>>& starts,
               const std::vector<Controls>& inputs, const Step& step) {
  CarState<double> s = starts[0];
  int tick = 0, start = 0, input = 0;
  for (auto _ : state) {
    s = step(s, inputs[input]);
    benchmark::DoNotOptimize(s);
    input = (input + 1) & (kCarInputs - 1);
    if (++tick == kCarTicksPerChain) {
      tick = 0;
      start = (start + 1) % kCarStarts;
      s = starts[start];
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AerialStep(benchmark::State& state) {
  const Scene& sc = GetScene();
  RunChains(state, sc.air_starts, sc.air_inputs, [&](const CarState<double>& s, const Controls& u) {
    return StepAerial(sc.aerial, s, u, kTickS, true);
  });
}
BENCHMARK(BM_AerialStep);

// With non-zero orientation drift (the fitted rates), as replay with results/aerial runs it.
void BM_AerialStepDrift(benchmark::State& state) {
  const Scene& sc = GetScene();
  RunChains(state, sc.air_starts, sc.air_inputs, [&](const CarState<double>& s, const Controls& u) {
    return StepAerial(sc.aerial_drift, s, u, kTickS, true);
  });
}
BENCHMARK(BM_AerialStepDrift);

void BM_GroundStep(benchmark::State& state) {
  const Scene& sc = GetScene();
  RunChains(state, sc.ground_starts, sc.ground_inputs,
            [&](const CarState<double>& s, const Controls& u) {
              return StepGround(sc.ground, s, u, kTickS, true);
            });
}
BENCHMARK(BM_GroundStep);

}  // namespace
}  // namespace rlfit

// Runs N steps of a chain (bench/workloads.h) and prints the checksum, for callgrind: N and 2N
// steps differ by N steps' worth of instructions, set-up cancelling out.
template <class Run>
int Print(long n, const Run& run) {
  const double checksum = run(n);
  std::printf("%ld steps, checksum %.17g\n", n, checksum);
  return 0;
}

int main(int argc, char** argv) {
  const auto& sc = rlfit::bench::GetCarScene();
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--callgrind_aerial=", 19) == 0)
      return Print(std::atol(argv[i] + 19),
                   [&](long n) { return rlfit::bench::RunAerialSteps(sc, n, false); });
    if (std::strncmp(argv[i], "--callgrind_aerial_drift=", 25) == 0)
      return Print(std::atol(argv[i] + 25),
                   [&](long n) { return rlfit::bench::RunAerialSteps(sc, n, true); });
    if (std::strncmp(argv[i], "--callgrind_ground=", 19) == 0)
      return Print(std::atol(argv[i] + 19),
                   [&](long n) { return rlfit::bench::RunGroundSteps(sc, n); });
    if (std::strncmp(argv[i], "--callgrind_car_floor=", 22) == 0)
      return Print(std::atol(argv[i] + 22), [&](long n) {
        return rlfit::bench::RunCarFloorSteps(rlfit::bench::GetCarFloorScene(), n);
      });
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
