// The powerslide's start state, handbrake source and the inference of an unrecorded handbrake.
#include "src/models/powerslide.h"

#include <array>
#include <cmath>
#include <string>

namespace rlfit {
namespace {

// The flat-floor test of the ground model's regime (src/replay/regime.h: on_ground, within
// 1 uu of the rest height, up axis within 1 degree of vertical).
bool OnFlatFloor(const Sample& s) {
  return s.on_ground && std::abs(s.x.z() - game::kCarRestHeight) <= 1.0 &&
         s.theta(2, 2) >= 0.99984769515639127;
}

}  // namespace

PowerslideState<double> PowerslideStartState(const Episode& ep, int start,
                                             const Integration& integ, const double* acting) {
  PowerslideState<double> s;
  s.body = CarState<double>::FromSample(ep.rows[start]);
  if (acting != nullptr) {
    s.handbrake = acting[start];
  } else if (start + 1 < ep.size()) {
    s.handbrake = ControlsOver(ep, ep.rows[start].t_s, ep.rows[start + 1].t_s, integ).handbrake;
  }
  return s;
}

std::vector<double> InferHandbrake(const GroundCoeffs<double>& g,
                                   const PowerslideCoeffs<double>& c, const Episode& ep,
                                   const Integration& integ, const HandbrakeInference& opt) {
  const int n = ep.size();
  std::vector<double> out(n, 0.0);
  if (n < 2) return out;
  const std::array<std::vector<double>, 2> held = {std::vector<double>(n, 0.0),
                                                   std::vector<double>(n, 1.0)};
  // cost[k][h]: one-row error of step k -> k+1 in state h.
  std::vector<std::array<double, 2>> cost(n - 1);
  for (int k = 0; k + 1 < n; ++k) {
    cost[k] = {0.0, 0.0};
    if (!OnFlatFloor(ep.rows[k]) || !OnFlatFloor(ep.rows[k + 1])) continue;
    const Sample& rec = ep.rows[k + 1];
    for (int h = 0; h < 2; ++h) {
      PowerslideState<double> s;
      s.body = CarState<double>::FromSample(ep.rows[k]);
      s.handbrake = h;
      s = AdvancePowerslideRow(g, c, s, ep, k, integ, held[h].data());
      const double dw = (s.body.omega(2) - rec.omega(2)) / opt.omega_scale_rad_s;
      const double dvx = (s.body.v(0) - rec.v(0)) / opt.v_scale_uu_s;
      const double dvy = (s.body.v(1) - rec.v(1)) / opt.v_scale_uu_s;
      cost[k][h] = dw * dw + dvx * dvx + dvy * dvy;
    }
  }
  // Viterbi: best[k][h] the least total cost of steps 0..k ending in state h.
  std::vector<std::array<double, 2>> best(n - 1);
  std::vector<std::array<int, 2>> from(n - 1);
  best[0] = cost[0];
  from[0] = {0, 1};
  for (int k = 1; k + 1 < n; ++k) {
    for (int h = 0; h < 2; ++h) {
      const double stay = best[k - 1][h];
      const double move = best[k - 1][1 - h] + opt.switch_penalty;
      from[k][h] = stay <= move ? h : 1 - h;
      best[k][h] = std::min(stay, move) + cost[k][h];
    }
  }
  int h = best[n - 2][0] <= best[n - 2][1] ? 0 : 1;
  for (int k = n - 2; k >= 0; --k) {
    out[k] = h;
    h = from[k][h];
  }
  out[n - 1] = out[n - 2];
  return out;
}

HandbrakeSource ChooseHandbrakeSource(const Episode& ep) {
  for (const Sample& s : ep.rows)
    if (s.input.handbrake) return HandbrakeSource::kRecorded;
  const bool unrecorded = ep.path.find("ground_driving_handbrake") != std::string::npos;
  return unrecorded ? HandbrakeSource::kInferred : HandbrakeSource::kRecorded;
}

std::vector<bool> LargeRearSlip(const Episode& ep, double min_slip_uu_s) {
  std::vector<bool> out(ep.size(), false);
  for (int k = 0; k < ep.size(); ++k) {
    const Sample& s = ep.rows[k];
    const double n = std::hypot(s.theta(0, 0), s.theta(1, 0));
    const double lx = -s.theta(1, 0) / n, ly = s.theta(0, 0) / n;
    const double v_l = s.v(0) * lx + s.v(1) * ly;
    out[k] = std::abs(v_l - kCarRearAxleUu * s.omega(2)) > min_slip_uu_s;
  }
  return out;
}

}  // namespace rlfit
