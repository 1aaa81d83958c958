// The aerial and ground steps' workloads (bench/workloads.h): random starts and inputs, chains.
#include <random>

#include "bench/workloads.h"

namespace rlfit {
namespace bench {

const CarScene& GetCarScene() {
  static const CarScene scene = [] {
    CarScene s;
    s.aerial = AerialCoeffs<double>::FromArray(AerialLayout().defaults.data());
    s.aerial_drift = s.aerial;
    s.aerial_drift.drift = Vec3<double>(-0.0320, -0.0144, -0.0182);
    s.ground = GroundCoeffs<double>::FromArray(GroundLayout().defaults.data());
    std::mt19937_64 rng(20261123);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    auto random_vec = [&](double scale) -> Vec3<double> {
      return Vec3<double>(u(rng), u(rng), u(rng)) * scale;
    };
    for (int i = 0; i < kCarStarts; ++i) {
      CarState<double> a;
      a.x = Vec3<double>(4000.0 * u(rng), 5000.0 * u(rng), 1000.0 + 800.0 * u(rng));
      a.v = random_vec(1300.0);
      a.omega = random_vec(3.1);
      a.theta = EulerToMatrix(1.5 * u(rng), 3.1 * u(rng), 3.1 * u(rng));
      s.air_starts.push_back(a);
      CarState<double> g;
      const double yaw = 3.1 * u(rng);
      g.x = Vec3<double>(4000.0 * u(rng), 5000.0 * u(rng), game::kCarRestHeight);
      g.theta = EulerToMatrix(0.0, yaw, 0.0);
      g.v = g.theta.col(0) * (1500.0 * u(rng)) + g.theta.col(1) * (200.0 * u(rng));
      g.v(2) = 0.0;
      g.omega = Vec3<double>(0.0, 0.0, 2.0 * u(rng));
      s.ground_starts.push_back(g);
    }
    for (int i = 0; i < kCarInputs; ++i) {
      Controls a;
      a.pitch = u(rng);
      a.yaw = u(rng);
      a.roll = u(rng);
      a.throttle = u(rng);
      a.boost = u(rng) > 0.0 ? 1.0 : 0.0;
      s.air_inputs.push_back(a);
      Controls g;
      g.steer = u(rng);
      g.throttle = u(rng);
      g.boost = u(rng) > 0.5 ? 1.0 : 0.0;
      s.ground_inputs.push_back(g);
    }
    return s;
  }();
  return scene;
}

double RunAerialSteps(const CarScene& sc, long steps, bool drift) {
  const AerialCoeffs<double>& c = drift ? sc.aerial_drift : sc.aerial;
  return CarChains(steps, sc.air_starts, sc.air_inputs,
                   [&](const CarState<double>& s, const Controls& u) {
                     return StepAerial(c, s, u, kCarTickS, true);
                   });
}

double RunGroundSteps(const CarScene& sc, long steps) {
  // The decay factors once, as the ticks of a replayed row share them (GroundRowDecay).
  const GroundDecay<double> decay = GroundDecayFactors(sc.ground, kCarTickS);
  return CarChains(steps, sc.ground_starts, sc.ground_inputs,
                   [&](const CarState<double>& s, const Controls& u) {
                     return StepGround(sc.ground, s, u, kCarTickS, decay, true);
                   });
}

}  // namespace bench
}  // namespace rlfit
