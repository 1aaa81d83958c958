// The whole car step's workload on the flat floor (bench/workloads.h): StepCar on the pitch.
#include "bench/workloads.h"
#include "src/io/arena_file.h"

namespace rlfit {
namespace bench {

const CarFloorScene& GetCarFloorScene() {
  static const CarFloorScene scene = [] {
    CarFloorScene s;
    s.arena = &PitchArena(DataRootOrThrow());
    s.coeffs = CarCoeffs<double>::FromArray(CarLayout().defaults.data());
    for (const CarState<double>& g : GetCarScene().ground_starts) {
      CarModelState<double> m;
      m.body = g;
      m.body.x.x() *= kCarFloorStartScale;  // the middle of the floor: see kCarFloorStartScale
      m.body.x.y() *= kCarFloorStartScale;
      m.unlimited_boost = true;  // the recordings' inputs, from recordings with unlimited boost
      s.starts.push_back(m);
    }
    return s;
  }();
  return scene;
}

double RunCarFloorSteps(const CarFloorScene& sc, long steps) {
  const std::vector<Controls>& inputs = GetCarScene().ground_inputs;
  CarModelState<double> s = sc.starts[0];
  double sum = 0.0;
  int tick = 0, start = 0, input = 0;
  for (long k = 0; k < steps; ++k) {
    s = StepCar(sc.coeffs, *sc.arena, s, inputs[input], kCarTickS, true);
    input = (input + 1) & (kCarInputs - 1);
    if (++tick == kCarFloorTicksPerChain) {
      sum += s.body.x.sum() + s.body.theta.sum();
      tick = 0;
      start = (start + 1) % kCarStarts;
      s = sc.starts[start];
    }
  }
  return sum + s.body.x.sum() + s.body.theta.sum();
}

}  // namespace bench
}  // namespace rlfit
