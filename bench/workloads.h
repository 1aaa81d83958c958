// The hot paths' workloads, shared by the benchmark programs (arena_bench, ball_bench,
// car_bench) and the performance guard (perf_guard): the scenes (fixed seeds) and the loops that
// run N operations of each, so that a figure of the guard and of a program's callgrind mode are
// the same work, instruction for instruction. Each loop returns a checksum of the states. The
// loops live in their own units (bench/workloads_*.cc), one per model, so that what else a
// program compiles does not change how GCC inlines a step into its loop (a unit that also
// instantiates StepCar leaves RotateAboutZ out of StepGround: +19 instructions a ground step).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "src/models/aerial.h"
#include "src/models/arena.h"
#include "src/models/ball.h"
#include "src/models/car.h"
#include "src/models/ground.h"

namespace rlfit {
namespace bench {

// The datasets root (RLFIT_DATA, ../shared/datasets/lobot, ...), or a runtime_error.
std::string DataRootOrThrow();

// ---- The arena query (bench/workloads_arena.cc) -----------------------------------------

// Radius of the queried spheres, uu: the ball's (the brief's 92.75).
inline constexpr double kQueryRadius = 92.75;
// Distinct spheres cycled through; a power of two.
inline constexpr int kQuerySpheres = 1 << 13;

struct ArenaScene {
  Arena arena;  // pitch.dat as it is
  std::vector<Eigen::Vector3d> centers;  // kQuerySpheres in-arena centres
  std::vector<Eigen::Vector3d> empty, listed, touching;  // the three kinds of sphere
};

// Centres uniform in the mesh's bounding box, kept when Arena::Contains puts them inside the
// arena (about 80% are). Fixed seed, so every run queries the same spheres: 82.5% in an empty
// grid cell, 5.1% in a listed cell touching nothing, 12.4% touching the mesh.
const ArenaScene& GetArenaScene();

// One arena query: Arena::Collide (grid) or Arena::CollideBvh (!grid) of the next sphere of
// `set`, cycling; `queries` of them. Returns the sum of the penetrations.
double RunArenaQueries(const ArenaScene& scene, const std::vector<Eigen::Vector3d>& set,
                       long queries, bool grid);

// ---- The ball (bench/workloads_ball.cc) -------------------------------------------------

inline constexpr double kBallTickS = 1.0 / 120.0;
inline constexpr int kBallTicks6s = 720;
inline constexpr int kBallRandomStarts = 256;

struct BallScene {
  const Arena* arena = nullptr;  // BallArena: the ceiling at 2048
  BallCoeffs<double> coeffs;     // the layout's defaults
  // Starts uniform in the mesh's bounding box, kept when Arena::Contains puts the centre inside
  // the arena and the ball touches nothing; velocity uniform in [-2000, 2000]^3 uu/s, angular
  // velocity in [-3, 3]^3 rad/s. Fixed seed. Predictions from them fall, bounce off floor,
  // walls and ceiling, and roll.
  std::vector<BallState<double>> random_starts;
};
const BallScene& GetBallScene();

// One ball step: `n` chained StepBall calls, each feeding the next, with (skip) or without the
// BallClearance a prediction loop carries (the same states bit for bit), restarting from the
// next random start every 720 ticks (6 s). Returns the sum of the last z of each chain.
double RunBallSteps(const BallScene& s, long n, bool skip);

// RunBallSteps(s, n, false) through the reference step, the template StepBall<double>
// (bench/workloads_reference.cc).
double RunBallStepsReference(const BallScene& s, long n);

// One 6 s prediction: `n` of them, cycling through the random starts, through PredictBall
// (whole) or as 720 chained StepBall calls with a BallClearance; every state written out and its
// z summed (the checksum, the same for both). Callgrind: `--toggle-collect='*RunPredictions*'`
// counts only these.
double RunPredictions(const BallScene& s, long n, bool whole);

// ---- The car's steps (bench/workloads_car.cc, workloads_car_floor.cc) --------------------

inline constexpr double kCarTickS = 1.0 / 120.0;
inline constexpr int kCarTicksPerChain = 720;
inline constexpr int kCarStarts = 64;
inline constexpr int kCarInputs = 1 << 12;  // random inputs cycled through; a power of two

// s.x.sum() and s.theta.sum() element by element, in the order Eigen's SSE2 packets sum them (the
// checksums unchanged). Eigen's packets read theta[2..5] as pairs across its columns, and GCC then
// kept those four doubles in memory in every step of a chain (decision 0101).
inline double CarPositionSum(const CarState<double>& s) { return (s.x(0) + s.x(1)) + s.x(2); }
inline double CarOrientationSum(const CarState<double>& s) {
  const double* t = s.theta.data();
  return (((t[0] + t[2]) + (t[4] + t[6])) + ((t[1] + t[3]) + (t[5] + t[7]))) + t[8];
}

// `steps` chained calls of step(state, controls), restarting from the next start every
// kCarTicksPerChain ticks, inputs[0..kCarInputs) cycled through; returns the sum of CarPositionSum
// and CarOrientationSum over the chains' ends. The steps go in runs that neither end a chain nor
// wrap the inputs, so a step's own loop is one pointer against its run's end: the same steps on
// the same inputs as one counter each for the step, the tick and the input, 8 instructions a
// step fewer (decision 0117). The aerial and ground workloads and the aerial reference share it.
template <typename Step>
double CarChains(long steps, const std::vector<CarState<double>>& starts,
                 const std::vector<Controls>& inputs, const Step& step) {
  CarState<double> s = starts[0];
  double sum = 0.0;
  int start = 0;
  long chain_left = kCarTicksPerChain;
  const Controls* const first = inputs.data();
  const Controls* const last = first + kCarInputs;
  const Controls* u = first;
  while (steps > 0) {
    const long run = std::min(std::min(steps, chain_left), static_cast<long>(last - u));
    const Controls* const end = u + run;  // run >= 1; a do-while: GCC 12 then keeps 1.1 fewer
                                          // moves a step than with a for loop
    do {
      s = step(s, *u);
    } while (++u != end);
    steps -= run;
    chain_left -= run;
    if (u == last) u = first;
    if (chain_left == 0) {
      sum += CarPositionSum(s) + CarOrientationSum(s);
      chain_left = kCarTicksPerChain;
      start = (start + 1) % kCarStarts;
      s = starts[start];
    }
  }
  return sum + CarPositionSum(s) + CarOrientationSum(s);
}

struct CarScene {
  AerialCoeffs<double> aerial;        // game defaults (orientation drift 0)
  AerialCoeffs<double> aerial_drift;  // the same with the fitted drift rates (decision 0004)
  GroundCoeffs<double> ground;        // game defaults
  // In the air: anywhere, any orientation, speed and spin below the caps. On the ground: resting
  // height, flat, any heading, rolling forward or backward.
  std::vector<CarState<double>> air_starts, ground_starts;
  // Air: random pitch/yaw/roll/throttle in [-1, 1], boost half the time. Ground: random steer
  // and throttle, boost a quarter of the time.
  std::vector<Controls> air_inputs, ground_inputs;
};
const CarScene& GetCarScene();

// One aerial step (StepAerial, with the fitted drift when `drift`) or one ground step
// (StepGround): `steps` chained steps, the inputs cycled, restarting from the next start every
// 720 ticks. Returns the sum of each chain's end position and orientation entries.
double RunAerialSteps(const CarScene& s, long steps, bool drift);
double RunGroundSteps(const CarScene& s, long steps);
// RunAerialSteps(s, steps, false) through the template StepAerial<double>, the reference of
// the SSE2 path (bench/workloads_reference.cc).
double RunAerialStepsReference(const CarScene& s, long steps);

// The whole car step on the flat floor (StepCar, what `rlsim predict car` and the Python step
// run: the regime switch, wheel contact, the floor step): the car model's layout defaults, the
// ground starts and inputs above (no jump, no handbrake), on PitchArena. The starts are pulled
// toward the centre (x, y scaled by kCarFloorStartScale: |x| <= 1600, |y| <= 2000 uu) and each
// chain runs kCarFloorTicksPerChain ticks, so the car stays on the open floor (at most ~2000 uu
// in a second): with the ground steps' own starts (up to 4000, 5000) and 720-tick chains, 44% of
// the work was the surface step on the walls and curves the cars drove onto.
inline constexpr double kCarFloorStartScale = 0.4;
inline constexpr int kCarFloorTicksPerChain = 120;
struct CarFloorScene {
  const Arena* arena = nullptr;
  CarCoeffs<double> coeffs;
  std::vector<CarModelState<double>> starts;
};
const CarFloorScene& GetCarFloorScene();
double RunCarFloorSteps(const CarFloorScene& s, long steps);

}  // namespace bench
}  // namespace rlfit
