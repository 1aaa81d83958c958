// Runs RocketSim (ZealanL/RocketSim, MIT; built from ../shared/refs by
// scripts/rocketsim_compare.sh, never part of this project's build) on the recordings, with the
// scoring of `rlsim replay`: the same episodes, the same covered rows and the same report
// (ReplayEpisodes), RocketSim standing in for the model's predictor. A tool run by hand for the
// side-by-side table of decision 0082 and docs/models/car.md, not a test.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <Eigen/Geometry>
#include <nlohmann/json.hpp>
#include <valgrind/callgrind.h>

#include "RocketSim.h"
#include "src/common/error.h"
#include "src/io/arena_file.h"
#include "src/io/recording.h"
#include "src/models/car.h"
#include "src/models/arena.h"
#include "src/models/powerslide/powerslide.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/episode_steps.h"
#include "src/replay/metrics.h"
#include "src/replay/predictor.h"
#include "src/replay/regime.h"
#include "src/replay/replay.h"

namespace {

using rlfit::Episode;
using rlfit::PredictedState;
using rlfit::Sample;

constexpr double kTickS = 1.0 / 120.0;  // RocketSim's tick (the game's 120 Hz)
constexpr float kUuPerBt = 50.0f;       // RocketSim's Bullet units: 1 bt = 50 uu

// The 8 triangles of meshes/pitch.dat that RocketSim adds itself as planes (the floor z = 0,
// the flat ceiling, the side walls |x| = 4096): a second copy would double their contacts.
bool IsRocketSimPlane(const rlfit::Triangle& t) {
  bool floor = true, ceiling = true, side = true;
  float zmin = 1e30f, zmax = -1e30f;
  for (const Eigen::Vector3f& p : t.p) {
    floor = floor && p.z() == 0.0f;
    ceiling = ceiling && p.z() > 2000.0f;
    side = side && std::abs(p.x()) == 4096.0f && p.x() == t.p[0].x();
    zmin = std::min(zmin, p.z());
    zmax = std::max(zmax, p.z());
  }
  return floor || (ceiling && zmax - zmin < 0.01f) || side;
}

// The recordings' mesh in RocketSim's collision-mesh layout (CollisionMeshFile: int32 triangle
// count, int32 vertex count, 3 int32 indices per triangle, 3 float32 per vertex in Bullet
// units; equal vertices shared), less RocketSim's own planes.
std::vector<std::uint8_t> MeshFileBytes(const std::vector<rlfit::Triangle>& triangles) {
  std::map<std::array<float, 3>, int32_t> index;
  std::vector<std::array<float, 3>> vertices;
  std::vector<std::array<int32_t, 3>> faces;
  int dropped = 0;
  for (const rlfit::Triangle& t : triangles) {
    if (IsRocketSimPlane(t)) {
      ++dropped;
      continue;
    }
    std::array<int32_t, 3> face;
    for (int i = 0; i < 3; ++i) {
      const std::array<float, 3> q = {t.p[i].x() / kUuPerBt, t.p[i].y() / kUuPerBt,
                                      t.p[i].z() / kUuPerBt};
      auto [it, fresh] = index.emplace(q, static_cast<int32_t>(vertices.size()));
      if (fresh) vertices.push_back(q);
      face[i] = it->second;
    }
    faces.push_back(face);
  }
  RLFIT_CHECK(dropped == 8, "meshes/pitch.dat holds RocketSim's 8 plane triangles");
  std::vector<std::uint8_t> out;
  auto put = [&out](const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  };
  const int32_t counts[2] = {static_cast<int32_t>(faces.size()),
                             static_cast<int32_t>(vertices.size())};
  put(counts, sizeof(counts));
  for (const auto& f : faces) put(f.data(), sizeof(f));
  for (const auto& v : vertices) put(v.data(), sizeof(v));
  return out;
}

// What drives the handbrake of the car sets.
enum class Handbrake { kRecorded, kHeld, kInferred };

struct Options {
  double delay_ticks = 1.0;  // a row's input acts from the first tick starting at or after
                             // its time + delay_ticks / 120 s
  Handbrake powerslide_handbrake = Handbrake::kHeld;
};

RocketSim::Vec ToVec(const Eigen::Vector3d& v) {
  return RocketSim::Vec(static_cast<float>(v.x()), static_cast<float>(v.y()),
                        static_cast<float>(v.z()));
}
Eigen::Vector3d FromVec(const RocketSim::Vec& v) { return Eigen::Vector3d(v.x, v.y, v.z); }

// Our orientation (columns forward, left, up; the datasets' frame) is RocketSim's RotMat
// (forward, "right", up): RocketSim calls the +y axis of an unturned car "right" (the game's
// left-handed naming), which is the datasets' left.
RocketSim::RotMat ToRotMat(const Eigen::Matrix3d& theta) {
  return RocketSim::RotMat(ToVec(theta.col(0)), ToVec(theta.col(1)), ToVec(theta.col(2)));
}
Eigen::Matrix3d FromRotMat(const RocketSim::RotMat& m) {
  Eigen::Matrix3d out;
  out.col(0) = FromVec(m.forward);
  out.col(1) = FromVec(m.right);
  out.col(2) = FromVec(m.up);
  return out;
}

// A recorded row's time on the rollout's tick clock: rows are blends of the ticks around them
// (the ball's tick clock, NOTES issue 12); tick 0 is the start row's own state.
PredictedState Blend(const PredictedState& a, const PredictedState& b, double w) {
  PredictedState out;
  out.x = a.x + (b.x - a.x) * w;
  out.v = a.v + (b.v - a.v) * w;
  out.omega = a.omega + (b.omega - a.omega) * w;
  const Eigen::Quaterniond qa(a.theta), qb(b.theta);
  out.theta = qa.slerp(w, qb).toRotationMatrix();
  return out;
}

// The rows start..end from states ticks[i] (i ticks after the start row's time).
std::vector<PredictedState> RowsFromTicks(const Episode& ep, int start, int end,
                                          const std::vector<PredictedState>& ticks) {
  std::vector<PredictedState> out;
  for (int k = start; k <= end; ++k) {
    const double u = (ep.rows[k].t_s - ep.rows[start].t_s) / kTickS;
    const int i = std::min(static_cast<int>(std::floor(u + 1e-9)),
                           static_cast<int>(ticks.size()) - 2);
    out.push_back(Blend(ticks[i], ticks[i + 1], u - i));
  }
  return out;
}

// The recorded row whose input acts during the tick starting at episode time t_s: the last row
// j with t_j + delay <= t_s (row 0 before any).
int ActingRow(const Episode& ep, double t_s, double delay_s) {
  int j = 0;
  while (j + 1 < ep.size() && ep.rows[j + 1].t_s + delay_s <= t_s + 1e-9) ++j;
  return j;
}

// One arena per thread and kind (Bullet worlds are not shared): the car sets' holds one Octane,
// the ball's no car.
RocketSim::Arena* ArenaForThread(bool with_car) {
  thread_local std::unique_ptr<RocketSim::Arena> arenas[2];
  std::unique_ptr<RocketSim::Arena>& arena = arenas[with_car ? 1 : 0];
  if (!arena) {
    arena.reset(RocketSim::Arena::Create(RocketSim::GameMode::SOCCAR));
    RocketSim::MutatorConfig m = arena->GetMutatorConfig();
    m.boostUsedPerSecond = 0.0f;  // the recordings' boost never runs out (datasets README)
    arena->SetMutatorConfig(m);
    if (with_car) arena->AddCar(RocketSim::Team::BLUE, RocketSim::CAR_CONFIG_OCTANE);
  }
  return arena.get();
}

// Keeps the arena's ball out of a car rollout's way: at rest in the floor corner farthest from
// the car (over 5000 uu away wherever the car is).
void ParkBall(RocketSim::Arena* arena, const RocketSim::Vec& car) {
  RocketSim::BallState b;
  b.pos = RocketSim::Vec(car.x > 0 ? -3000.0f : 3000.0f, car.y > 0 ? -4000.0f : 4000.0f, 93.15f);
  b.vel = RocketSim::Vec(0, 0, -0.01f);  // not asleep (a sleeping ball ignores SetState)
  arena->ball->SetState(b);
}

class RocketSimCar : public rlfit::Predictor {
 public:
  RocketSimCar(Options options, Handbrake handbrake) : options_(options), handbrake_(handbrake) {}

  std::vector<PredictedState> Rollout(const Episode& ep, int start, int end) const override {
    RocketSim::Arena* arena = ArenaForThread(true);
    RocketSim::Car* car = *arena->GetCars().begin();

    std::vector<double> inferred;
    double inferred_start_level = -1.0;  // the level the vehicle infers at row 0 (decision 0141)
    if (handbrake_ == Handbrake::kInferred)  // the vehicle's switch (decisions 0129, 0140)
      inferred = rlfit::VehicleActingHandbrake(ep, &inferred_start_level);
    const double delay_s = options_.delay_ticks * kTickS;
    auto controls_at = [&](double t_s) {
      const int j = ActingRow(ep, t_s, delay_s);
      const rlfit::CarInputs& in = ep.rows[j].input;
      RocketSim::CarControls c;
      c.throttle = static_cast<float>(in.throttle);
      c.steer = static_cast<float>(in.steer);
      c.pitch = static_cast<float>(in.pitch);
      c.yaw = static_cast<float>(in.yaw);
      c.roll = static_cast<float>(in.roll);
      c.jump = in.jump;
      c.boost = in.boost;
      c.handbrake = handbrake_ == Handbrake::kHeld       ? true
                    : handbrake_ == Handbrake::kInferred && !inferred.empty() ? inferred[j] > 0.5
                                                         : in.handbrake;
      return c;
    };

    const Sample& s0 = ep.rows[start];
    RocketSim::CarState cs;
    cs.pos = ToVec(s0.x);
    cs.vel = ToVec(s0.v);
    cs.angVel = ToVec(s0.omega);
    cs.rotMat = ToRotMat(s0.theta);
    cs.isOnGround = s0.on_ground;
    cs.hasJumped = s0.jumped;
    cs.hasDoubleJumped = s0.double_jumped;
    cs.boost = 100.0f;
    // The handbrake level ramped over the inputs before the start (held since before row 0 if
    // row 0's is, or from the level the vehicle inferred there), at the game's rates, as the
    // car's state carries it.
    const double t0 = ep.rows[0].t_s, t_start = ep.rows[start].t_s;
    double level = inferred_start_level >= 0.0 ? inferred_start_level
                                               : (controls_at(t0).handbrake ? 1.0 : 0.0);
    for (double t = t0; t + 1e-9 < t_start; t += kTickS)
      level = std::clamp(level + (controls_at(t).handbrake ? 5.0 : -2.0) * kTickS, 0.0, 1.0);
    cs.handbrakeVal = static_cast<float>(level);
    const RocketSim::CarControls first = controls_at(t_start);
    cs.lastControls = controls_at(t_start - kTickS);
    cs.isBoosting = first.boost;
    cs.boostingTime = first.boost ? 1.0f : 0.0f;
    car->SetState(cs);

    const double span = ep.rows[end].t_s - t_start;
    const int n = static_cast<int>(std::ceil(span / kTickS - 1e-9)) + 1;
    std::vector<PredictedState> ticks;
    ticks.reserve(n + 1);
    ticks.push_back({s0.x, s0.v, s0.omega, s0.theta});
    for (int i = 0; i < n; ++i) {
      ParkBall(arena, car->GetState().pos);
      car->controls = controls_at(t_start + i * kTickS);
      arena->Step(1);
      const RocketSim::CarState st = car->GetState();
      ticks.push_back({FromVec(st.pos), FromVec(st.vel), FromVec(st.angVel),
                       FromRotMat(st.rotMat)});
    }
    return RowsFromTicks(ep, start, end, ticks);
  }

 private:
  Options options_;
  Handbrake handbrake_;
};

class RocketSimBall : public rlfit::Predictor {
 public:
  std::vector<PredictedState> Rollout(const Episode& ep, int start, int end) const override {
    RocketSim::Arena* arena = ArenaForThread(false);
    const Sample& s0 = ep.rows[start];
    RocketSim::BallState b;
    b.pos = ToVec(s0.x);
    b.vel = ToVec(s0.v);
    if (b.vel.x == 0 && b.vel.y == 0 && b.vel.z == 0) b.vel.z = -0.01f;  // else Bullet sleeps
    b.angVel = ToVec(s0.omega);
    arena->ball->SetState(b);
    const double span = ep.rows[end].t_s - s0.t_s;
    const int n = static_cast<int>(std::ceil(span / kTickS - 1e-9)) + 1;
    std::vector<PredictedState> ticks;
    ticks.push_back({s0.x, s0.v, s0.omega, Eigen::Matrix3d::Identity()});
    for (int i = 0; i < n; ++i) {
      arena->Step(1);
      const RocketSim::BallState st = arena->ball->GetState();
      ticks.push_back(
          {FromVec(st.pos), FromVec(st.vel), FromVec(st.angVel), Eigen::Matrix3d::Identity()});
    }
    return RowsFromTicks(ep, start, end, ticks);
  }
};

// One comparison set: the model whose default recordings and covered rows it takes.
struct Set {
  std::string name;   // table label
  std::string model;  // rlfit model: recordings, row labels, horizons
  Handbrake handbrake = Handbrake::kRecorded;
};

// The cases a bot author would try first (issue 36), run in RocketSim for the side-by-side
// figures in docs/models/car.md: a jump held 0.5 s from rest (peak and the tick the wheels
// touch again), and throttle with boost along +y from the centre for 10 s (boost drains at the
// game's rate; RocketSim also picks up boost pads, which the project does not model).
void RunScenarios() {
  RocketSim::Arena* arena = RocketSim::Arena::Create(RocketSim::GameMode::SOCCAR);
  RocketSim::Car* car = arena->AddCar(RocketSim::Team::BLUE, RocketSim::CAR_CONFIG_OCTANE);
  RocketSim::CarState cs;
  cs.pos = RocketSim::Vec(0, 0, 17.01f);
  cs.rotMat = RocketSim::RotMat::GetIdentity();
  cs.isOnGround = true;
  car->SetState(cs);
  ParkBall(arena, cs.pos);
  car->controls = RocketSim::CarControls();
  arena->Step(120);  // settle on the suspension
  double peak = 0.0, peak_s = 0.0, landed_s = -1.0;
  bool left = false;
  for (int i = 1; i <= 360; ++i) {
    RocketSim::CarControls c;
    c.jump = i <= 60;
    car->controls = c;
    arena->Step(1);
    const RocketSim::CarState st = car->GetState();
    if (st.pos.z > peak) peak = st.pos.z, peak_s = i * kTickS;
    left = left || !st.isOnGround;
    if (left && st.isOnGround && landed_s < 0.0) landed_s = i * kTickS;
  }
  std::printf("jump held 0.5 s from rest: peak z %.2f uu at %.3f s, wheels on the ground again "
              "at %.3f s\n", peak, peak_s, landed_s);
  cs = RocketSim::CarState();
  cs.pos = RocketSim::Vec(0, 0, 17.01f);
  cs.rotMat = ToRotMat(rlfit::EulerToMatrix(0.0, M_PI / 2, 0.0));
  cs.isOnGround = true;
  cs.boost = 100.0f;
  car->SetState(cs);
  std::printf("throttle and boost along +y from the centre:\n");
  for (int i = 1; i <= 1200; ++i) {
    RocketSim::CarControls c;
    c.throttle = 1.0f;
    c.boost = true;
    car->controls = c;
    arena->Step(1);
    const RocketSim::CarState st = car->GetState();
    if (i % 60 == 0)
      std::printf("  t %5.2f s  x %6.0f %6.0f %6.0f  |v| %5.0f  boost %5.1f\n", i * kTickS,
                  st.pos.x, st.pos.y, st.pos.z, st.vel.Length(), st.boost);
  }
  delete arena;
}

// The whole car step on the open floor, side by side (issue 38's peer table): the same starts
// and inputs for both simulators, in one binary built with one compiler and flags. rlfit: StepCar
// with the car model's defaults on the pitch mesh (what `rlsim predict car` and the Python step
// run; bench/perf_guard's car_step_floor, whose starts and chains this copies). RocketSim: one
// Arena::Step(1) of a soccar arena holding the car and the ball parked in a corner (a bot steps
// the whole arena; the parked ball's share is in it). Starts: upright at rest, |x| <= 1600,
// |y| <= 2000 uu, heading and speed (up to 1500 uu/s) random; inputs: random steer and
// throttle, boost a quarter of the ticks; chains of 120 ticks, so both cars stay on the floor.
// Instructions: run under `valgrind --tool=callgrind --instr-atstart=no`; each simulator runs
// N then 2N ticks, each run one dump named "speed NAME TICKS", and one tick is
// (I(2N) - I(N)) / N (the set-up cancels). CPU time: outside callgrind, the median of 5 rounds
// of 2N ticks each, the two simulators alternating within a round.
struct SpeedStart {
  Eigen::Vector3d x, v;
  double yaw = 0.0;
};

void RunSpeed(const std::string& data_root, long n) {
  constexpr int kChainTicks = 120, kStarts = 64, kInputs = 4096;
  std::mt19937_64 rng(20261129);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<SpeedStart> starts(kStarts);
  for (SpeedStart& st : starts) {
    st.yaw = 3.1 * u(rng);
    st.x = Eigen::Vector3d(1600.0 * u(rng), 2000.0 * u(rng), rlfit::game::kCarRestHeight);
    st.v = rlfit::EulerToMatrix(0.0, st.yaw, 0.0).col(0) * (1500.0 * u(rng));
  }
  std::vector<rlfit::Controls> inputs(kInputs);
  for (rlfit::Controls& c : inputs) {
    c.steer = u(rng);
    c.throttle = u(rng);
    c.boost = u(rng) > 0.5 ? 1.0 : 0.0;
  }

  const rlfit::Arena& mesh = rlfit::PitchArena(data_root);
  const rlfit::CarCoeffs<double> coeffs =
      rlfit::CarCoeffs<double>::FromArray(rlfit::CarLayout().defaults.data());
  auto rlfit_start = [&](int i) {
    rlfit::CarModelState<double> s;
    s.body.x = starts[i].x;
    s.body.v = starts[i].v;
    s.body.omega.setZero();
    s.body.theta = rlfit::EulerToMatrix(0.0, starts[i].yaw, 0.0);
    s.unlimited_boost = true;
    return s;
  };
  auto run_rlfit = [&](long ticks) {
    rlfit::CarModelState<double> s = rlfit_start(0);
    double sum = 0.0;
    for (long k = 0, start = 0; k < ticks; ++k) {
      s = rlfit::StepCar(coeffs, mesh, s, inputs[k % kInputs], kTickS, true);
      if ((k + 1) % kChainTicks == 0) {
        sum += s.body.x.sum();
        start = (start + 1) % kStarts;
        s = rlfit_start(static_cast<int>(start));
      }
    }
    return sum + s.body.x.sum();
  };

  RocketSim::Arena* arena = RocketSim::Arena::Create(RocketSim::GameMode::SOCCAR);
  RocketSim::Car* car = arena->AddCar(RocketSim::Team::BLUE, RocketSim::CAR_CONFIG_OCTANE);
  auto rocketsim_start = [&](int i) {
    RocketSim::CarState cs;
    cs.pos = ToVec(starts[i].x);
    cs.pos.z = 17.01f;  // RocketSim's rest height on the suspension
    cs.vel = ToVec(starts[i].v);
    cs.rotMat = ToRotMat(rlfit::EulerToMatrix(0.0, starts[i].yaw, 0.0));
    cs.isOnGround = true;
    cs.boost = 100.0f;
    car->SetState(cs);
    ParkBall(arena, cs.pos);
  };
  auto run_rocketsim = [&](long ticks) {
    rocketsim_start(0);
    double sum = 0.0;
    for (long k = 0, start = 0; k < ticks; ++k) {
      const rlfit::Controls& in = inputs[k % kInputs];
      RocketSim::CarControls c;
      c.steer = static_cast<float>(in.steer);
      c.throttle = static_cast<float>(in.throttle);
      c.boost = in.boost > 0.5;
      car->controls = c;
      arena->Step(1);
      if ((k + 1) % kChainTicks == 0) {
        sum += car->GetState().pos.x;
        start = (start + 1) % kStarts;
        rocketsim_start(static_cast<int>(start));
      }
    }
    return sum + car->GetState().pos.x;
  };

  double checksum = 0.0;
  const std::vector<std::pair<const char*, std::function<double(long)>>> runs = {
      {"rlfit_car_step_floor", run_rlfit}, {"rocketsim_arena_step_car_floor", run_rocketsim}};
  for (const auto& [name, run] : runs) {
    checksum += run(kChainTicks);  // first calls' one-time costs, uninstrumented
    CALLGRIND_START_INSTRUMENTATION;
    for (const long ticks : {n, 2 * n}) {
      const std::string label = std::string("speed ") + name + " " + std::to_string(ticks);
      CALLGRIND_ZERO_STATS;
      checksum += run(ticks);
      CALLGRIND_DUMP_STATS_AT(label.c_str());
    }
    CALLGRIND_STOP_INSTRUMENTATION;
  }
  if (RUNNING_ON_VALGRIND) {
    std::printf("speed: dumps written (checksum %.6g)\n", checksum);
    delete arena;
    return;
  }
  std::vector<double> ns[2];
  for (int round = 0; round < 5; ++round)
    for (int i = 0; i < 2; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      checksum += runs[i].second(2 * n);
      const auto t1 = std::chrono::steady_clock::now();
      ns[i].push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * n));
    }
  for (int i = 0; i < 2; ++i) {
    std::sort(ns[i].begin(), ns[i].end());
    std::printf("%-32s %9.1f ns a tick (median of 5 rounds of %ld ticks)\n", runs[i].first,
                ns[i][2], 2 * n);
  }
  std::printf("ratio RocketSim / rlfit: %.2f (checksum %.6g)\n", ns[1][2] / ns[0][2], checksum);
  delete arena;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"RocketSim on the recordings, scored as `rlsim replay` scores a model"};
  std::string data_root, json_out;
  Options options;
  std::vector<std::string> sets = {"ground", "wall", "powerslide", "aerial", "ball"};
  std::string handbrake = "held";
  bool quiet = false, scenarios = false;
  long speed_ticks = 0;
  app.add_flag("--scenarios", scenarios,
               "run the bot author's cases (a 0.5 s jump, 10 s of throttle and boost) instead");
  app.add_option("--speed", speed_ticks,
                 "time the whole car step on the floor against RocketSim's arena step over N "
                 "and 2N ticks (under callgrind: instructions) instead")
      ->check(CLI::Range(1L, 100000000L));
  app.add_option("--data", data_root, "datasets root (default: as rlsim looks it up)");
  app.add_option("--delay-ticks", options.delay_ticks,
                 "a row's input acts from the first tick at or after its time + this many "
                 "120 Hz ticks")
      ->check(CLI::Range(0.0, 12.0));
  app.add_option("--sets", sets, "sets to run")
      ->delimiter(',')
      ->check(CLI::IsMember({"ground", "wall", "powerslide", "aerial", "ball"}));
  app.add_option("--powerslide-handbrake", handbrake,
                 "the powerslide set's handbrake: held all episode, or the project's inferred "
                 "switch (the vehicle's: VehicleActingHandbrake)")
      ->check(CLI::IsMember({"held", "inferred"}));
  app.add_option("--json", json_out, "also write the figures as JSON here");
  app.add_flag("--quiet", quiet, "no RocketSim log");
  CLI11_PARSE(app, argc, argv);
  options.powerslide_handbrake = handbrake == "held" ? Handbrake::kHeld : Handbrake::kInferred;

  try {
    const std::string root = rlfit::ResolveDataRoot(data_root);
    const std::vector<rlfit::Triangle> mesh =
        rlfit::LoadArenaTriangles(root + "/meshes/pitch.dat");
    RocketSim::InitFromMem({{RocketSim::GameMode::SOCCAR, {MeshFileBytes(mesh)}}}, quiet);
    if (scenarios) {
      RunScenarios();
      return 0;
    }
    if (speed_ticks > 0) {
      RunSpeed(root, speed_ticks);
      return 0;
    }

    nlohmann::json out = nlohmann::json::object();
    out["delay_ticks"] = options.delay_ticks;
    out["powerslide_handbrake"] = handbrake;
    std::printf("RocketSim, input delay %g ticks, rows blended between ticks; open loop from the "
                "first covered row; median / p90 / max over episodes\n",
                options.delay_ticks);
    std::printf("| set | episodes | |dx| 0.5 s | |dx| 1 s | |dx| 2 s | |dw| 0.5 s | |dw| 1 s | "
                "|dx| 5 s | |dx| last |\n|---|---|---|---|---|---|---|---|---|\n");
    for (const std::string& name : sets) {
      Set set{name, name};
      if (name == "powerslide") set.handbrake = options.powerslide_handbrake;
      // The model's checks judge the model's own predictor (the powerslide's casts it): none.
      rlfit::ModelInfo model = rlfit::FindModel(set.model);
      model.checks = nullptr;
      std::vector<rlfit::Episode> episodes = rlfit::LoadEpisodesFor(model, {}, root);
      std::vector<std::vector<rlfit::Regime>> regimes;
      for (const rlfit::Episode& ep : episodes)
        regimes.push_back(rlfit::ClassifyRows(model.name, ep, root));
      std::vector<rlfit::SkippedInput> skipped;
      std::ostringstream warnings;
      rlfit::SelectCovered(model.name, &episodes, &regimes, false, "rocketsim_compare", warnings,
                           &skipped);
      std::unique_ptr<rlfit::Predictor> predictor;
      if (name == "ball")
        predictor = std::make_unique<RocketSimBall>();
      else
        predictor = std::make_unique<RocketSimCar>(options, set.handbrake);
      rlfit::ReplayOptions ropt;
      ropt.model = model.name;
      ropt.data_root = root;
      ropt.quiet = true;
      ropt.keep_predictions = false;
      // Only the open loop is reported: windowed restarts 2 s apart keep the work small.
      ropt.window_s = 2.0;
      ropt.horizons_s = name == "ball" ? std::vector<double>{0.5, 1.0, 2.0, 5.0}
                                       : std::vector<double>{0.5, 1.0, 2.0};
      rlfit::ReplayExtras extras;
      extras.regimes = regimes;
      extras.coefficients_source = "RocketSim";
      const rlfit::ReplayReport report =
          rlfit::ReplayEpisodes(episodes, *predictor, model, ropt, extras);
      const auto& q = rlfit::Quantities(model.has_orientation);
      auto stats = [&](const char* key, const std::string& label) -> nlohmann::json {
        for (const rlfit::Quantity& quantity : q) {
          if (std::strcmp(quantity.key, key) != 0) continue;
          for (std::size_t h = 0; h < report.horizon_labels.size(); ++h)
            if (report.horizon_labels[h] == label) {
              const rlfit::Stats s = report.OpenLoop(quantity, static_cast<int>(h));
              if (s.n == 0) return nullptr;
              return {{"median", s.median}, {"p90", s.p90}, {"max", s.max}, {"n", s.n}};
            }
        }
        return nullptr;
      };
      nlohmann::json figures = {{"episodes", report.episodes.size()}};
      const std::vector<std::pair<std::string, std::string>> wanted = {
          {"dx", "0.5s"}, {"dx", "1s"}, {"dx", "2s"}, {"domega", "0.5s"},
          {"domega", "1s"}, {"dx", "5s"}, {"dx", "last"}};
      std::string row = "| " + name + " | " + std::to_string(report.episodes.size()) + " |";
      for (const auto& [key, label] : wanted) {
        const nlohmann::json s = stats(key.c_str(), label);
        figures[key + "_" + label] = s;
        char cell[96] = " - |";
        if (!s.is_null())
          std::snprintf(cell, sizeof(cell), " %.4g / %.4g / %.4g |", s["median"].get<double>(),
                        s["p90"].get<double>(), s["max"].get<double>());
        row += cell;
      }
      std::printf("%s\n", row.c_str());
      std::fflush(stdout);
      out[name] = figures;
    }
    if (!json_out.empty()) {
      std::FILE* f = std::fopen(json_out.c_str(), "w");
      if (f == nullptr) throw rlfit::InputError(json_out, 0, 0, "cannot write");
      const std::string text = out.dump(2) + "\n";
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    }
  } catch (const rlfit::InputError& e) {
    std::fprintf(stderr, "rocketsim_compare: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rocketsim_compare: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
