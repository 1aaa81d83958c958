// The Lobot side of scripts/lobot_compare.sh (bench/lobot/lobot_paths.h): Lobot's Car, Ball and
// Pitch, compiled from its own source folder, driven over the starts and inputs it is given.
#include "bench/lobot/lobot_paths.h"

#include <algorithm>

#include "Ball.h"
#include "Car.h"
#include "pitch.h"

namespace lobot_compare {
namespace {

vec3 V(const float* p) { return vec3{p[0], p[1], p[2]}; }

void Load(Car& car, const CarStart& s, bool ground) {
  car.x = V(s.x);
  car.v = V(s.v);
  car.w = V(s.w);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) car.o(i, j) = s.o[3 * i + j];
  car.on_ground = ground;
  car.boost = 1 << 30;  // unlimited, as the project's aerial workload
}

double Sum(const Car& car) {
  double sum = 0.0;
  for (int i = 0; i < 3; ++i) {
    sum += car.x[i];
    for (int j = 0; j < 3; ++j) sum += car.o(i, j);
  }
  return sum;
}

Pitch& QueryPitch() {
  static Pitch pitch;
  return pitch;
}

Ball& TheBall() {
  static Ball ball;
  return ball;
}

double CarSteps(const std::vector<CarStart>& starts, const std::vector<CarInput>& inputs,
                int chain, float dt, long n, bool ground) {
  Car car;
  Load(car, starts[0], ground);
  // The loop of this project's side (CarChains, bench/workloads.h): runs that neither end a
  // chain nor wrap the inputs, one pointer a step, so both sides pay the same loop.
  const CarInput* const first = inputs.data();
  const CarInput* const last = first + inputs.size();
  const CarInput* u = first;
  double sum = 0.0;
  std::size_t start = 0;
  long chain_left = chain;
  while (n > 0) {
    const long run = std::min(std::min(n, chain_left), static_cast<long>(last - u));
    for (const CarInput* const end = u + run; u != end; ++u) {
      Input in;
      in.steer = u->steer;
      in.roll = u->roll;
      in.pitch = u->pitch;
      in.yaw = u->yaw;
      in.throttle = u->throttle;
      in.jump = false;
      in.boost = u->boost;
      in.slide = false;
      car.step(in, dt);
    }
    n -= run;
    chain_left -= run;
    if (u == last) u = first;
    if (chain_left == 0) {
      sum += Sum(car);
      chain_left = chain;
      if (++start == starts.size()) start = 0;
      Load(car, starts[start], ground);
    }
  }
  return sum + Sum(car);
}

}  // namespace

void Warm() {
  QueryPitch();
  TheBall();
}

double GroundSteps(const std::vector<CarStart>& starts, const std::vector<CarInput>& inputs,
                   int chain, float dt, long n) {
  return CarSteps(starts, inputs, chain, dt, n, true);
}

double AerialSteps(const std::vector<CarStart>& starts, const std::vector<CarInput>& inputs,
                   int chain, float dt, long n) {
  return CarSteps(starts, inputs, chain, dt, n, false);
}

double BallSteps(const std::vector<BallStart>& starts, int chain, float dt, long n) {
  Ball& ball = TheBall();
  auto load = [&](const BallStart& s) {
    ball.x = V(s.x);
    ball.v = V(s.v);
    ball.w = V(s.w);
  };
  load(starts[0]);
  double sum = 0.0;
  std::size_t start = 0;
  for (long k = 0, tick = 0; k < n; ++k) {
    ball.step(dt);
    if (++tick == chain) {
      sum += ball.x[2];
      tick = 0;
      if (++start == starts.size()) start = 0;
      load(starts[start]);
    }
  }
  return sum + ball.x[2];
}

double ArenaQueries(const std::vector<float>& centers_xyz, float radius, long n) {
  Pitch& pitch = QueryPitch();
  const std::size_t count = centers_xyz.size() / 3;
  double sum = 0.0;
  std::size_t i = 0;
  for (long q = 0; q < n; ++q) {
    if (pitch.in_contact_with(sphere{V(&centers_xyz[3 * i]), radius}))
      sum += pitch.last_contact_info().direction[2];
    if (++i == count) i = 0;
  }
  return sum;
}

}  // namespace lobot_compare
