// Benchmarks of one 120 Hz car step: the aerial model (random stick, throttle and boost inputs,
// tumbling random starts) and the ground model (random steer, throttle and boost). Each step
// feeds the next; a chain restarts from the next random start every 720 ticks (6 s).
// `--callgrind_aerial=N` / `--callgrind_ground=N` instead run N steps for instruction counts.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "src/models/aerial.h"
#include "src/models/ground.h"

namespace rlfit {
namespace {

constexpr double kTickS = 1.0 / 120.0;
constexpr int kTicksPerChain = 720;
constexpr int kStarts = 64;
constexpr int kInputs = 1 << 12;  // random inputs cycled through; a power of two
constexpr unsigned kSeed = 20261123;

struct Scene {
  AerialCoeffs<double> aerial;        // game defaults (orientation drift 0)
  AerialCoeffs<double> aerial_drift;  // the same with the fitted drift rates (NOTES.md)
  GroundCoeffs<double> ground;        // game defaults
  std::vector<CarState<double>> air_starts, ground_starts;
  std::vector<Controls> air_inputs, ground_inputs;
};

const Scene& GetScene() {
  static const Scene scene = [] {
    Scene s;
    s.aerial = AerialCoeffs<double>::FromArray(AerialLayout().defaults.data());
    s.aerial_drift = s.aerial;
    s.aerial_drift.drift = Vec3<double>(-0.0320, -0.0144, -0.0182);
    s.ground = GroundCoeffs<double>::FromArray(GroundLayout().defaults.data());
    std::mt19937_64 rng(kSeed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    auto random_vec = [&](double scale) -> Vec3<double> {
      return Vec3<double>(u(rng), u(rng), u(rng)) * scale;
    };
    for (int i = 0; i < kStarts; ++i) {
      // In the air: anywhere, any orientation, speed and spin below the caps.
      CarState<double> a;
      a.x = Vec3<double>(4000.0 * u(rng), 5000.0 * u(rng), 1000.0 + 800.0 * u(rng));
      a.v = random_vec(1300.0);
      a.omega = random_vec(3.1);
      a.theta = EulerToMatrix(1.5 * u(rng), 3.1 * u(rng), 3.1 * u(rng));
      s.air_starts.push_back(a);
      // On the ground: resting height, flat, any heading, rolling forward or backward.
      CarState<double> g;
      const double yaw = 3.1 * u(rng);
      g.x = Vec3<double>(4000.0 * u(rng), 5000.0 * u(rng), game::kCarRestHeight);
      g.theta = EulerToMatrix(0.0, yaw, 0.0);
      g.v = g.theta.col(0) * (1500.0 * u(rng)) + g.theta.col(1) * (200.0 * u(rng));
      g.v(2) = 0.0;
      g.omega = Vec3<double>(0.0, 0.0, 2.0 * u(rng));
      s.ground_starts.push_back(g);
    }
    for (int i = 0; i < kInputs; ++i) {
      Controls a;
      a.pitch = u(rng);
      a.yaw = u(rng);
      a.roll = u(rng);
      a.throttle = u(rng);
      a.boost = u(rng) > 0.0 ? 1.0 : 0.0;
      s.air_inputs.push_back(a);
      Controls g;
      g.steer = u(rng);
      g.throttle = u(rng);
      g.boost = u(rng) > 0.5 ? 1.0 : 0.0;
      s.ground_inputs.push_back(g);
    }
    return s;
  }();
  return scene;
}

// Steps chains of `step(state, controls)`, restarting every kTicksPerChain ticks.
template <typename Step>
void RunChains(benchmark::State& state, const std::vector<CarState<double>>& starts,
               const std::vector<Controls>& inputs, const Step& step) {
  CarState<double> s = starts[0];
  int tick = 0, start = 0, input = 0;
  for (auto _ : state) {
    s = step(s, inputs[input]);
    benchmark::DoNotOptimize(s);
    input = (input + 1) & (kInputs - 1);
    if (++tick == kTicksPerChain) {
      tick = 0;
      start = (start + 1) % kStarts;
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

// N steps of the same chains, outside Google Benchmark, for callgrind: N and 2N steps differ
// by N steps' worth of instructions, set-up cancelling out.
template <typename Step>
int RunCallgrind(long steps, const std::vector<CarState<double>>& starts,
                 const std::vector<Controls>& inputs, const Step& step) {
  CarState<double> s = starts[0];
  double sum = 0.0;
  int tick = 0, start = 0, input = 0;
  for (long k = 0; k < steps; ++k) {
    s = step(s, inputs[input]);
    input = (input + 1) & (kInputs - 1);
    if (++tick == kTicksPerChain) {
      sum += s.x.sum() + s.theta.sum();
      tick = 0;
      start = (start + 1) % kStarts;
      s = starts[start];
    }
  }
  std::printf("%ld steps, checksum %.17g\n", steps, sum + s.x.sum() + s.theta.sum());
  return 0;
}

}  // namespace
}  // namespace rlfit

int main(int argc, char** argv) {
  using rlfit::CarState;
  using rlfit::Controls;
  const auto& sc = rlfit::GetScene();
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--callgrind_aerial=", 19) == 0)
      return rlfit::RunCallgrind(std::atol(argv[i] + 19), sc.air_starts, sc.air_inputs,
                                 [&](const CarState<double>& s, const Controls& u) {
                                   return rlfit::StepAerial(sc.aerial, s, u, rlfit::kTickS, true);
                                 });
    if (std::strncmp(argv[i], "--callgrind_aerial_drift=", 25) == 0)
      return rlfit::RunCallgrind(std::atol(argv[i] + 25), sc.air_starts, sc.air_inputs,
                                 [&](const CarState<double>& s, const Controls& u) {
                                   return rlfit::StepAerial(sc.aerial_drift, s, u, rlfit::kTickS,
                                                            true);
                                 });
    if (std::strncmp(argv[i], "--callgrind_ground=", 19) == 0)
      return rlfit::RunCallgrind(std::atol(argv[i] + 19), sc.ground_starts, sc.ground_inputs,
                                 [&](const CarState<double>& s, const Controls& u) {
                                   return rlfit::StepGround(sc.ground, s, u, rlfit::kTickS, true);
                                 });
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
