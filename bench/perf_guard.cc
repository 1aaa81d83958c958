// The performance guard's program: runs each hot path's workload (bench/workloads.h, the same
// loops as the benchmark programs' callgrind modes) N and 2N times under callgrind's client
// requests, so that scripts/perf_guard.py can take the instructions of one operation as
// (I(2N) - I(N)) / N, the set-up cancelling out. Run by that script under
//   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=DIR/cg.out perf_guard
// (the set-up runs uninstrumented; each run is one dump, "perf_guard NAME N"). Outside callgrind
// the requests do nothing and the program only prints the checksums.
//   perf_guard [--only NAME,...]   run the workloads (all by default)
//   perf_guard --describe          print the build and the workloads as JSON, run nothing
// Exits 77 (skipped, for ctest) when the datasets are not found.
// Two programs come from this file: perf_guard, the hot paths (models only), and perf_guard_fit
// (built with RLFIT_GUARD_FIT), the fit's evaluation, which needs the Ceres fit library. Kept
// apart so that measuring a model's hot path does not wait for the fit sources to rebuild.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <valgrind/callgrind.h>

#include "bench/workloads.h"
#ifdef RLFIT_GUARD_FIT
#include "bench/workloads_fit.h"
#endif
#include "src/io/recording.h"

#ifndef RLFIT_GUARD_BUILD
#define RLFIT_GUARD_BUILD "unknown"
#endif

namespace {

using namespace rlfit::bench;

struct Workload {
  const char* name;
  long n;            // the guard runs N and 2N operations
  const char* unit;  // what one operation is
  const char* what;
  std::function<double(long)> run;  // n operations (the scene built on first use)
};

#ifndef RLFIT_GUARD_FIT
std::vector<Workload> Workloads() {
  return {
      {"arena_query", 100000, "query",
       "Arena::Collide of a ball-sized sphere (92.75 uu) on pitch.dat, cycling through 8192 "
       "in-arena centres (82.5% in an empty grid cell, 5.1% listed without contact, 12.4% "
       "touching), with the loop",
       [](long n) { return RunArenaQueries(GetArenaScene(), GetArenaScene().centers, n, true); }},
      {"ball_step", 100000, "step",
       "one 120 Hz StepBall with a BallClearance in chained predictions from 256 random "
       "in-arena starts, restarted every 720 ticks (steps 100,001-200,000 of the chains), with "
       "the loop",
       [](long n) { return RunBallSteps(GetBallScene(), n, true); }},
      {"ball_prediction_6s", 256, "prediction",
       "one PredictBall of 720 ticks (6 s) from the next of the 256 random in-arena starts, "
       "every state written and its z summed",
       [](long n) { return RunPredictions(GetBallScene(), n, true); }},
      {"aerial_step", 100000, "step",
       "one StepAerial (default coefficients, drift 0) with random stick, throttle and boost "
       "from 64 random tumbling starts, chained, restarted every 720 ticks, with the loop",
       [](long n) { return RunAerialSteps(GetCarScene(), n, false); }},
      {"ground_step", 100000, "step",
       "one StepGround (default coefficients) with random steer, throttle and boost from 64 "
       "random starts on the floor, chained, restarted every 720 ticks, with the loop",
       [](long n) { return RunGroundSteps(GetCarScene(), n); }},
      {"car_step_floor", 10000, "step",
       "one StepCar (the car model's layout defaults; regime switch, wheel contact, floor step) "
       "on the open floor of the pitch mesh: the ground steps' starts pulled to the middle "
       "(x, y scaled by 0.4) and inputs, chained, restarted every 120 ticks, with the loop",
       [](long n) { return RunCarFloorSteps(GetCarFloorScene(), n); }},
      // The fast paths' references, on the same work (bench/README.md, "Fast paths").
      {"arena_query_bvh", 100000, "query",
       "arena_query through Arena::CollideBvh (the BVH alone, no grid), with the loop",
       [](long n) { return RunArenaQueries(GetArenaScene(), GetArenaScene().centers, n, false); }},
      {"ball_step_plain", 100000, "step",
       "ball_step through StepBall for double without a BallClearance (every tick asks the "
       "grid), with the loop",
       [](long n) { return RunBallSteps(GetBallScene(), n, false); }},
      {"ball_step_template", 100000, "step",
       "ball_step through the reference, the template StepBall<double> (the fits' step on "
       "double), with the loop",
       [](long n) { return RunBallStepsReference(GetBallScene(), n); }},
      {"ball_prediction_6s_steps", 256, "prediction",
       "ball_prediction_6s as 720 chained StepBall calls with a BallClearance (no PredictBall "
       "free runs)",
       [](long n) { return RunPredictions(GetBallScene(), n, false); }},
      {"aerial_step_template", 100000, "step",
       "aerial_step through the reference, the template StepAerial<double> (the SSE2 path's "
       "reference), with the loop",
       [](long n) { return RunAerialStepsReference(GetCarScene(), n); }},
  };
}
#else
std::vector<Workload> Workloads() {
  return {
      {"fit_ground_evaluation", 1, "evaluation",
       "residuals and Jacobian of the ground fit's rollout windows over the first 601 rows "
       "of its first training episode (one Levenberg-Marquardt iteration's evaluation on that "
       "part), one thread",
       [](long n) {
         static GroundFitScene scene;
         return scene.Evaluate(n);
       }},
  };
}
#endif

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void Describe(const std::vector<Workload>& workloads) {
  std::printf("{\"build\": %s, \"workloads\": [", JsonString(RLFIT_GUARD_BUILD).c_str());
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const Workload& w = workloads[i];
    std::printf("%s\n  {\"name\": %s, \"n\": %ld, \"unit\": %s, \"what\": %s}", i ? "," : "",
                JsonString(w.name).c_str(), w.n, JsonString(w.unit).c_str(),
                JsonString(w.what).c_str());
  }
  std::printf("]}\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Workload> workloads = Workloads();
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--describe")) {
      Describe(workloads);
      return 0;
    }
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      std::string list = argv[++i];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        only.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
      continue;
    }
    std::fprintf(stderr, "usage: perf_guard [--describe] [--only NAME,...]\n");
    return 2;
  }
  if (rlfit::ResolveDataRoot("").empty()) {
    std::fprintf(stderr, "perf_guard: skipped: datasets not found (RLFIT_DATA)\n");
    return 77;
  }
  try {
    for (const Workload& w : workloads) {
      if (!only.empty() && std::find(only.begin(), only.end(), w.name) == only.end()) continue;
      w.run(0);  // builds the scene, uninstrumented (one-time costs cancel in I(2N) - I(N))
      CALLGRIND_START_INSTRUMENTATION;
      for (const long n : {w.n, 2 * w.n}) {
        const std::string label = std::string("perf_guard ") + w.name + " " + std::to_string(n);
        CALLGRIND_ZERO_STATS;
        const double checksum = w.run(n);
        CALLGRIND_DUMP_STATS_AT(label.c_str());
        std::printf("%s %ld checksum %.17g\n", w.name, n, checksum);
      }
      CALLGRIND_STOP_INSTRUMENTATION;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perf_guard: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
