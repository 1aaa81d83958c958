// The references' workloads (bench/workloads.h): the same loops as workloads_ball.cc,
// workloads_car.cc and workloads_arena.cc through the reference steps and queries (the ball's
// and the aerial step's templates, the arena's BVH), in their own unit, so that a fast path's
// figure and its reference's are measured on the same work (bench/README.md, "Fast paths").
#include "bench/workloads.h"

namespace rlfit {
namespace bench {

double RunBallStepsReference(const BallScene& s, long n) {
  BallState<double> b = s.random_starts[0];
  double sink = 0.0;
  std::size_t start = 0;
  const double drag_factor = BallDragFactor(s.coeffs, kBallTickS);  // once, as a row's ticks
  for (long k = 0, tick = 0; k < n; ++k) {
    b = StepBall<double>(s.coeffs, b, kBallTickS, *s.arena, drag_factor);
    if (++tick == kBallTicks6s) {
      sink += b.x.z();
      tick = 0;
      if (++start == s.random_starts.size()) start = 0;
      b = s.random_starts[start];
    }
  }
  return sink + b.x.z();
}

double RunAerialStepsReference(const CarScene& sc, long steps) {
  return CarChains(steps, sc.air_starts, sc.air_inputs,
                   [&](const CarState<double>& s, const Controls& u) {
                     return StepAerial<double>(sc.aerial, s, u, kCarTickS, true);
                   });
}

}  // namespace bench
}  // namespace rlfit
