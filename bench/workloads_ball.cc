// The ball's workloads (bench/workloads.h): the random in-arena starts, chained steps and whole
// 6 s predictions.
#include <random>

#include "bench/workloads.h"
#include "src/io/arena_file.h"

namespace rlfit {
namespace bench {

const BallScene& GetBallScene() {
  static const BallScene scene = [] {
    BallScene s;
    s.arena = &BallArena(DataRootOrThrow());
    s.coeffs = BallCoeffs<double>::FromArray(BallLayout().defaults.data());
    Eigen::Vector3f lo = s.arena->triangles()[0].p[0], hi = lo;
    for (const Triangle& t : s.arena->triangles())
      for (const auto& p : t.p) {
        lo = lo.cwiseMin(p);
        hi = hi.cwiseMax(p);
      }
    std::mt19937_64 rng(20261123);
    std::uniform_real_distribution<double> u(0.0, 1.0), sym(-1.0, 1.0);
    while (static_cast<int>(s.random_starts.size()) < kBallRandomStarts) {
      BallState<double> b;
      b.x = Eigen::Vector3d(lo.x() + u(rng) * (hi.x() - lo.x()),
                            lo.y() + u(rng) * (hi.y() - lo.y()),
                            lo.z() + u(rng) * (hi.z() - lo.z()));
      b.v = Eigen::Vector3d(sym(rng), sym(rng), sym(rng)) * 2000.0;
      b.omega = Eigen::Vector3d(sym(rng), sym(rng), sym(rng)) * 3.0;
      if (s.arena->Contains(b.x) && !s.arena->Collide(b.x, s.coeffs.contact_radius).hit)
        s.random_starts.push_back(b);
    }
    return s;
  }();
  return scene;
}

namespace {

// A prediction's step: StepBall with the chain's clearance (it keeps the drag factor).
RLFIT_ALWAYS_INLINE BallState<double> ChainStep(const BallScene& s, const BallState<double>& b,
                                                BallClearance* clearance) {
  return StepBall(s.coeffs, b, kBallTickS, *s.arena, clearance);
}

// The plain step: StepBall for double with the drag factor taken once, as a row's ticks do.
RLFIT_ALWAYS_INLINE BallState<double> PlainStep(const BallScene& s, const BallState<double>& b,
                                                double drag_factor) {
  return StepBall(s.coeffs, b, kBallTickS, *s.arena, drag_factor);
}

template <bool kSkip>
double BallSteps(const BallScene& s, long n) {
  BallState<double> b = s.random_starts[0];
  BallClearance clearance;
  const double drag_factor = BallDragFactor(s.coeffs, kBallTickS);
  double sink = 0.0;
  std::size_t start = 0;
  for (long k = 0, tick = 0; k < n; ++k) {
    if constexpr (kSkip)
      b = ChainStep(s, b, &clearance);
    else
      b = PlainStep(s, b, drag_factor);
    if (++tick == kBallTicks6s) {
      sink += b.x.z();
      tick = 0;
      if (++start == s.random_starts.size()) start = 0;
      b = s.random_starts[start];
      clearance = {};
    }
  }
  return sink + b.x.z();
}

}  // namespace

double RunBallSteps(const BallScene& s, long n, bool skip) {
  return skip ? BallSteps<true>(s, n) : BallSteps<false>(s, n);
}

double RunPredictions(const BallScene& s, long n, bool whole) {
  std::vector<BallState<double>> out(kBallTicks6s);
  double sink = 0.0;
  for (long k = 0; k < n; ++k) {
    const BallState<double>& start = s.random_starts[k % s.random_starts.size()];
    if (whole) {
      PredictBall(s.coeffs, start, kBallTickS, kBallTicks6s, *s.arena, out.data());
    } else {
      BallState<double> b = start;
      BallClearance clearance;
      for (int t = 0; t < kBallTicks6s; ++t) out[t] = b = ChainStep(s, b, &clearance);
    }
    for (const BallState<double>& b : out) sink += b.x.z();
  }
  return sink;
}

}  // namespace bench
}  // namespace rlfit
