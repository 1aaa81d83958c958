// Lobot side by side with this project's hot paths (issue 38's peer table), one binary, one
// compiler and flags, the same inputs: the arena query, the ball step with collision, the aerial
// and the ground car step. This project's side runs the performance guard's own workloads
// (bench/workloads.h: the same scenes, loops and counts as bench/perf_guard's arena_query,
// ball_step, aerial_step, ground_step); Lobot's side (bench/lobot/lobot_paths.cc) runs the same
// starts and inputs, converted to its floats, chained the same way.
//   --speed N: CPU time (this thread's) per operation, the median of 5 rounds of 2N operations,
//     the two alternating within a round, and Lobot / rlfit of the medians.
//   --callgrind N: under `valgrind --tool=callgrind --instr-atstart=no` (scripts/lobot_compare.sh
//     runs it), each side runs N then 2N operations, one dump each named
//     "lobot_compare PATH SIDE OPS"; one operation is (I(2N) - I(N)) / N (the set-up cancels).
#include <time.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "bench/lobot/lobot_paths.h"
#include "bench/workloads.h"

namespace {

namespace lc = lobot_compare;
namespace rb = rlfit::bench;

struct Path {
  const char* name;
  const char* unit_of_work;
  std::function<double(long)> rlfit, lobot;
};

lc::CarStart ToLobot(const rlfit::CarState<double>& s) {
  lc::CarStart out;
  for (int i = 0; i < 3; ++i) {
    out.x[i] = static_cast<float>(s.x(i));
    out.v[i] = static_cast<float>(s.v(i));
    out.w[i] = static_cast<float>(s.omega(i));
    for (int j = 0; j < 3; ++j) out.o[3 * i + j] = static_cast<float>(s.theta(i, j));
  }
  return out;
}

lc::CarInput ToLobot(const rlfit::Controls& u) {
  return {static_cast<float>(u.steer), static_cast<float>(u.roll), static_cast<float>(u.pitch),
          static_cast<float>(u.yaw),   static_cast<float>(u.throttle), u.boost > 0.5};
}

double CpuNs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

std::vector<Path> MakePaths() {
  const rb::ArenaScene& arena = rb::GetArenaScene();
  const rb::BallScene& ball = rb::GetBallScene();
  const rb::CarScene& car = rb::GetCarScene();
  std::vector<float> centers;
  for (const Eigen::Vector3d& c : arena.centers)
    for (int i = 0; i < 3; ++i) centers.push_back(static_cast<float>(c(i)));
  std::vector<lc::BallStart> balls;
  for (const rlfit::BallState<double>& b : ball.random_starts) {
    lc::BallStart s;
    for (int i = 0; i < 3; ++i) {
      s.x[i] = static_cast<float>(b.x(i));
      s.v[i] = static_cast<float>(b.v(i));
      s.w[i] = static_cast<float>(b.omega(i));
    }
    balls.push_back(s);
  }
  std::vector<lc::CarStart> air, ground;
  for (const auto& s : car.air_starts) air.push_back(ToLobot(s));
  for (const auto& s : car.ground_starts) ground.push_back(ToLobot(s));
  std::vector<lc::CarInput> air_in, ground_in;
  for (const auto& u : car.air_inputs) air_in.push_back(ToLobot(u));
  for (const auto& u : car.ground_inputs) ground_in.push_back(ToLobot(u));
  const float ball_dt = static_cast<float>(rb::kBallTickS);
  const float car_dt = static_cast<float>(rb::kCarTickS);
  const float radius = static_cast<float>(rb::kQueryRadius);
  lc::Warm();
  return {
      {"arena_query", "ball-sized sphere against the pitch mesh, in-arena centres",
       [](long n) {
         const rb::ArenaScene& a = rb::GetArenaScene();
         return rb::RunArenaQueries(a, a.centers, n, true);
       },
       [centers, radius](long n) { return lc::ArenaQueries(centers, radius, n); }},
      {"ball_step", "1/120 s with collision, chained 720 ticks from random in-arena starts",
       [](long n) { return rb::RunBallSteps(rb::GetBallScene(), n, true); },
       [balls, ball_dt](long n) { return lc::BallSteps(balls, rb::kBallTicks6s, ball_dt, n); }},
      {"aerial_step", "random inputs from tumbling starts, chained 720 ticks",
       [](long n) { return rb::RunAerialSteps(rb::GetCarScene(), n, false); },
       [air, air_in, car_dt](long n) {
         return lc::AerialSteps(air, air_in, rb::kCarTicksPerChain, car_dt, n);
       }},
      {"ground_step", "random steer/throttle/boost from random floor starts, chained 720 ticks",
       [](long n) { return rb::RunGroundSteps(rb::GetCarScene(), n); },
       [ground, ground_in, car_dt](long n) {
         return lc::GroundSteps(ground, ground_in, rb::kCarTicksPerChain, car_dt, n);
       }},
  };
}

void RunCallgrind(const std::vector<Path>& paths, long n) {
  double checksum = 0.0;
  for (const Path& p : paths)
    for (const auto& [side, run] : {std::pair<const char*, const std::function<double(long)>*>{
                                        "rlfit", &p.rlfit},
                                    {"Lobot", &p.lobot}}) {
      checksum += (*run)(rb::kBallTicks6s);  // first calls' one-time costs, uninstrumented
      CALLGRIND_START_INSTRUMENTATION;
      for (const long ops : {n, 2 * n}) {
        const std::string label = std::string("lobot_compare ") + p.name + " " + side + " " +
                                  std::to_string(ops);
        CALLGRIND_ZERO_STATS;
        checksum += (*run)(ops);
        CALLGRIND_DUMP_STATS_AT(label.c_str());
      }
      CALLGRIND_STOP_INSTRUMENTATION;
    }
  std::printf("callgrind: dumps written (checksum %.6g)\n", checksum);
}

void RunSpeed(const std::vector<Path>& paths, long n) {
  constexpr int kRounds = 5;
  double checksum = 0.0;
  std::printf("CPU time per operation (this thread's), median of %d rounds of %ld operations, "
              "rlfit and Lobot alternating; GCC %s\n\n",
              kRounds, 2 * n, __VERSION__);
  std::printf("| path | rlfit ns | Lobot ns | Lobot / rlfit | rounds rlfit faster |\n"
              "|---|---|---|---|---|\n");
  for (const Path& p : paths) {
    checksum += p.rlfit(rb::kBallTicks6s) + p.lobot(rb::kBallTicks6s);
    std::vector<double> ns[2];
    int rlfit_faster = 0;
    for (int round = 0; round < kRounds; ++round) {
      double t[2];
      for (int side = 0; side < 2; ++side) {
        const double t0 = CpuNs();
        checksum += side == 0 ? p.rlfit(2 * n) : p.lobot(2 * n);
        t[side] = (CpuNs() - t0) / (2.0 * n);
        ns[side].push_back(t[side]);
      }
      rlfit_faster += t[0] < t[1];
    }
    for (std::vector<double>& v : ns) std::sort(v.begin(), v.end());
    std::printf("| %s | %.1f | %.1f | %.2f | %d of %d |\n", p.name, ns[0][kRounds / 2],
                ns[1][kRounds / 2], ns[1][kRounds / 2] / ns[0][kRounds / 2], rlfit_faster,
                kRounds);
    std::fflush(stdout);
  }
  std::printf("\n(checksum %.6g)\n", checksum);
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "lobot_compare: error: %s (usage: lobot_compare --speed N | --callgrind N, "
               "N operations from 1 to 100000000)\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return Usage("expected one mode and a count");
  const std::string mode = argv[1];
  if (mode != "--speed" && mode != "--callgrind")
    return Usage(("unknown mode '" + mode + "'").c_str());
  char* end = nullptr;
  const long n = std::strtol(argv[2], &end, 10);
  if (end == argv[2] || *end != '\0' || n < 1 || n > 100000000)
    return Usage(("bad count '" + std::string(argv[2]) + "'").c_str());
  if (mode == "--callgrind" && !RUNNING_ON_VALGRIND)
    return Usage("--callgrind runs under valgrind --tool=callgrind --instr-atstart=no "
                 "(scripts/lobot_compare.sh --callgrind N does it)");
  try {
    const std::vector<Path> paths = MakePaths();
    if (mode == "--speed")
      RunSpeed(paths, n);
    else
      RunCallgrind(paths, n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lobot_compare: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
