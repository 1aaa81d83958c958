// The Lobot side of scripts/lobot_compare.sh: its hot paths as plain loops over plain data
// (bench/lobot/lobot_paths.cc holds them, the only unit that sees Lobot's headers), so that the
// driver feeds them the same starts and inputs as this project's workloads (bench/workloads.h).
#pragma once

#include <vector>

namespace lobot_compare {

// A car's state: position, velocity, angular velocity, orientation (o[3 * i + j] is row i,
// column j; column 0 the forward axis, as both projects have it).
struct CarStart {
  float x[3], v[3], w[3], o[9];
};
// A tick's input: as Lobot's Input (no jump, no handbrake).
struct CarInput {
  float steer, roll, pitch, yaw, throttle;
  bool boost;
};
struct BallStart {
  float x[3], v[3], w[3];
};

// Each runs `n` operations chained as the project's workload of the same name does (chains of
// `chain` ticks from the next start, inputs cycled) and returns a checksum of the states.
// Ground: Car::step on the ground (Car::driving). Aerial: Car::step in the air
// (Car::aerial_control, unlimited boost). Ball: Ball::step (its own Pitch, the mesh compiled
// into Lobot). Both at dt = `dt`.
double GroundSteps(const std::vector<CarStart>& starts, const std::vector<CarInput>& inputs,
                   int chain, float dt, long n);
double AerialSteps(const std::vector<CarStart>& starts, const std::vector<CarInput>& inputs,
                   int chain, float dt, long n);
double BallSteps(const std::vector<BallStart>& starts, int chain, float dt, long n);
// The arena query: Pitch::in_contact_with of a sphere of `radius` at the next centre (cycling),
// and on a hit Pitch::last_contact_info (the contact's point and normal, what this project's
// Arena::Collide returns with it). Returns the sum of the normals' z.
double ArenaQueries(const std::vector<float>& centers_xyz, float radius, long n);

// Builds the Pitch (and the Car's static one) outside the measured runs.
void Warm();

}  // namespace lobot_compare
