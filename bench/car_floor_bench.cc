// car_bench's benchmark of the whole car step on the flat floor (StepCar, wheel contact from the
// pitch mesh; needs the datasets), in its own unit: StepCar's instantiation beside StepGround's
// changes how GCC inlines the ground step (bench/workloads.h).
#include <benchmark/benchmark.h>

#include "bench/workloads.h"

namespace rlfit {
namespace {

void BM_CarStepFloor(benchmark::State& state) {
  const bench::CarFloorScene& sc = bench::GetCarFloorScene();
  const std::vector<Controls>& inputs = bench::GetCarScene().ground_inputs;
  CarModelState<double> s = sc.starts[0];
  int tick = 0, start = 0, input = 0;
  for (auto _ : state) {
    s = StepCar(sc.coeffs, *sc.arena, s, inputs[input], bench::kCarTickS, true);
    benchmark::DoNotOptimize(s);
    input = (input + 1) & (bench::kCarInputs - 1);
    if (++tick == bench::kCarTicksPerChain) {
      tick = 0;
      start = (start + 1) % bench::kCarStarts;
      s = sc.starts[start];
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CarStepFloor);

}  // namespace
}  // namespace rlfit
