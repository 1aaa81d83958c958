// The powerslide's and the vehicle's start states on a recording, the handbrake source and the
// inferences of an unrecorded handbrake (declared in src/replay/episode_steps.h).
#include "src/replay/episode_steps.h"

#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "src/replay/coeff_choice.h"

namespace rlfit {
namespace {

// The grid of start levels InferVehicleHandbrake tries: 0, 1/20, ..., 1 (from one to the next
// the level falls in 3 ticks at the game's rate of 2 /s, kVehicleHandbrakeFallRate).
constexpr int kStartLevelSteps = 20;

// The flat-floor test of the ground model's regime (src/replay/regime.h: on_ground, within
// 1 uu of the rest height, up axis within 1 degree of vertical).
bool OnFlatFloor(const Sample& s) {
  return s.on_ground && std::abs(s.x.z() - game::kCarRestHeight) <= 1.0 &&
         s.theta(2, 2) >= 0.99984769515639127;
}

// The powerslide's handbrake level at rows 0..last of `ep` (last < ep.size()): ramped over the
// rows from the handbrake acting on the first step (held since before the episode). The level
// depends on the inputs alone.
std::vector<double> PowerslideLevelsTo(const Episode& ep, int last, const Integration& integ,
                                       const double* acting) {
  std::vector<double> levels(last + 1, 0.0);
  PowerslideCoeffs<double> ramp{};  // only the (fixed) ramp rates are read
  auto acting_over = [&](int k, double t0, double t1) {
    return acting != nullptr ? acting[k] : ControlsOver(ep, t0, t1, integ).handbrake;
  };
  double level = 0.0;
  if (ep.size() > 1) level = acting_over(0, ep.rows[0].t_s, ep.rows[1].t_s);
  levels[0] = level;
  for (int k = 0; k < last && k + 1 < ep.size(); ++k) {
    const double dt_row = ep.step_dt_s[k];
    const int n = SubstepsForRow(dt_row, integ.tick_rate_hz);
    const double h = dt_row / n;
    for (int i = 0; i < n; ++i) {
      const double t0 = ep.rows[k].t_s + i * h;
      level = NextHandbrakeLevel(ramp, level, acting_over(k, t0, t0 + h), h);
    }
    levels[k + 1] = level;
  }
  return levels;
}

// The vehicle's handbrake level at rows 0..last of `ep` (last < ep.size()): ramped tick by tick
// (NextVehicleHandbrake) from `start_level` at row 0 or, where that is negative, from the switch
// acting on the first step (0 or 1).
std::vector<double> VehicleLevelsTo(const Episode& ep, int last, const Integration& integ,
                                    const double* acting, double start_level = -1.0) {
  std::vector<double> levels(last + 1, 0.0);
  const VehicleCoeffs<double> rates{};  // only the (fixed) ramp rates are read
  double level = 0.0;
  if (start_level >= 0.0) {
    level = start_level;
  } else if (ep.size() > 1) {
    const double first = acting != nullptr
                             ? acting[0]
                             : ControlsOver(ep, ep.rows[0].t_s, ep.rows[1].t_s, integ).handbrake;
    level = first > 0.5 ? 1.0 : 0.0;
  }
  levels[0] = level;
  for (int k = 0; k < last && k + 1 < ep.size(); ++k) {
    ForEachRowTick(ep, k, integ, [&](const Controls& u, double h) {
      level = NextVehicleHandbrake(rates, level, acting != nullptr ? acting[k] : u.handbrake, h);
    });
    levels[k + 1] = level;
  }
  return levels;
}

// The scaled squared error of a one-row prediction `predicted` of row k + 1 of `ep` (the
// inference's cost of a state on step k -> k + 1); 0 off the flat floor at either end.
double OneRowCost(const CarState<double>& predicted, const Episode& ep, int k,
                  const HandbrakeInference& opt) {
  if (!OnFlatFloor(ep.rows[k]) || !OnFlatFloor(ep.rows[k + 1])) return 0.0;
  const Sample& rec = ep.rows[k + 1];
  const double dw = (predicted.omega(2) - rec.omega(2)) / opt.omega_scale_rad_s;
  const double dvx = (predicted.v(0) - rec.v(0)) / opt.v_scale_uu_s;
  const double dvy = (predicted.v(1) - rec.v(1)) / opt.v_scale_uu_s;
  return dw * dw + dvx * dvx + dvy * dvy;
}

// The two-state switch (0 or 1) on each step of `ep` of least total cost, by Viterbi:
// step_cost(k, acting, level, &level_after) is the cost of step k -> k+1 in state h, `acting`
// the handbrake released (h = 0) or held (h = 1) on every step (row-aligned, as the Advance*Row
// steps read it), from handbrake level `level`, and writes the level after it; a switch costs
// opt.switch_penalty. best[k][h] is
// the least total cost of steps 0..k ending in state h, level[k][h] the level after step k along
// that path (the level ramps, so a state's step depends on the path into it: it is carried along
// the best one). Both states start from `start_level` at row 0 or, where it is negative, each
// from its own (0 or 1). Row-aligned; the last entry repeats the one before. The least total
// cost into `total` when given.
template <typename StepCost>
std::vector<double> ViterbiSwitch(const Episode& ep, const HandbrakeInference& opt,
                                  StepCost step_cost, double start_level = -1.0,
                                  double* total = nullptr) {
  const int n = ep.size();
  std::vector<double> out(n, 0.0);
  if (total != nullptr) *total = 0.0;
  if (n < 2) return out;
  const std::array<std::vector<double>, 2> held = {std::vector<double>(n, 0.0),
                                                   std::vector<double>(n, 1.0)};
  std::vector<std::array<double, 2>> best(n - 1), level(n - 1);
  std::vector<std::array<int, 2>> from(n - 1);
  for (int h = 0; h < 2; ++h) {
    best[0][h] = step_cost(0, held[h].data(), start_level >= 0.0 ? start_level : h, &level[0][h]);
    from[0][h] = h;
  }
  for (int k = 1; k + 1 < n; ++k) {
    for (int h = 0; h < 2; ++h) {
      double total[2], after[2];
      for (int p = 0; p < 2; ++p)
        total[p] = best[k - 1][p] + (p == h ? 0.0 : opt.switch_penalty) +
                   step_cost(k, held[h].data(), level[k - 1][p], &after[p]);
      const int p = total[h] <= total[1 - h] ? h : 1 - h;
      from[k][h] = p;
      best[k][h] = total[p];
      level[k][h] = after[p];
    }
  }
  int h = best[n - 2][0] <= best[n - 2][1] ? 0 : 1;
  if (total != nullptr) *total = best[n - 2][h];
  for (int k = n - 2; k >= 0; --k) {
    out[k] = h;
    h = from[k][h];
  }
  out[n - 1] = out[n - 2];
  return out;
}

}  // namespace

PowerslideState<double> PowerslideStartState(const Episode& ep, int start,
                                             const std::vector<double>& levels) {
  PowerslideState<double> s;
  s.body = FromSample<CarState<double>>(ep.rows[start]);
  s.handbrake = levels[start];
  return s;
}

PowerslideState<double> PowerslideStartState(const Episode& ep, int start,
                                             const Integration& integ, const double* acting) {
  return PowerslideStartState(ep, start, PowerslideLevelsTo(ep, start, integ, acting));
}

std::vector<double> PowerslideHandbrakeLevels(const Episode& ep, const Integration& integ,
                                              const double* acting) {
  if (ep.size() == 0) return {};
  return PowerslideLevelsTo(ep, ep.size() - 1, integ, acting);
}

VehicleState<double> VehicleStartState(const Episode& ep, int start,
                                       const std::vector<double>& levels) {
  VehicleState<double> s = FromSample<VehicleState<double>>(ep.rows[start]);
  s.wheels.handbrake = levels[start];
  return s;
}

VehicleState<double> VehicleStartState(const Episode& ep, int start, const Integration& integ,
                                       const double* acting) {
  return VehicleStartState(ep, start, VehicleLevelsTo(ep, start, integ, acting));
}

std::vector<double> VehicleHandbrakeLevels(const Episode& ep, const Integration& integ,
                                           const double* acting, double start_level) {
  if (ep.size() == 0) return {};
  return VehicleLevelsTo(ep, ep.size() - 1, integ, acting, start_level);
}

EpisodeHandbrake PowerslideEpisodeHandbrake(const Episode& ep, const Integration& integ,
                                            std::vector<double> acting) {
  EpisodeHandbrake out;
  out.acting = std::move(acting);
  out.levels = PowerslideHandbrakeLevels(ep, integ, out.acting_or_null());
  return out;
}

namespace {

// The committed vehicle fit (results/vehicle/coeffs.json), read once.
const CoeffFile& CommittedVehicleFit() {
  static const CoeffFile file = LoadCoefficients(FindModel("vehicle"), "");
  return file;
}

// The switch `acting` (empty: the recorded input) and the levels ramped over it from
// `start_level`.
EpisodeHandbrake RampedOver(const Episode& ep, const Integration& integ,
                            std::vector<double> acting, double start_level) {
  EpisodeHandbrake out;
  out.acting = std::move(acting);
  out.levels = VehicleHandbrakeLevels(ep, integ, out.acting_or_null(), start_level);
  return out;
}

}  // namespace

EpisodeHandbrake VehicleEpisodeHandbrake(const Episode& ep, const VehicleCoeffs<double>& coeffs,
                                         const Integration& integ) {
  double start_level = -1.0;
  std::vector<double> acting = VehicleActingHandbrake(ep, coeffs, integ, &start_level);
  return RampedOver(ep, integ, std::move(acting), start_level);
}

EpisodeHandbrake VehicleEpisodeHandbrake(const Episode& ep, const Integration& integ) {
  double start_level = -1.0;
  std::vector<double> acting = VehicleActingHandbrake(ep, &start_level);
  return RampedOver(ep, integ, std::move(acting), start_level);
}

std::vector<double> VehicleActingHandbrake(const Episode& ep, double* start_level) {
  // The committed fit is read only where a switch is inferred: a recording that holds the
  // handbrake never needs the file.
  if (ChooseHandbrakeSource(ep) != HandbrakeSource::kInferred) {
    if (start_level != nullptr) *start_level = -1.0;
    return {};
  }
  const CoeffFile& file = CommittedVehicleFit();
  return VehicleActingHandbrake(ep, VehicleCoeffs<double>::FromArray(file.values.data()),
                                file.integration, start_level);
}

std::vector<double> VehicleActingHandbrake(const Episode& ep, const VehicleCoeffs<double>& coeffs,
                                           const Integration& integ, double* start_level) {
  if (start_level != nullptr) *start_level = -1.0;
  if (ChooseHandbrakeSource(ep) != HandbrakeSource::kInferred) return {};
  // Inferred with the vehicle's own step (decision 0140; before, with the powerslide model's:
  // held out on the handbrake set, 4 folds, |dx| at 1 s 7.92 / 26.4 / 76.6 -> 7.57 / 18.1 / 57.7
  // uu). A switch is dearer and the velocity error counts more than the powerslide's defaults
  // (decision 0129); the vehicle's switches hardly move with the penalty (20 to 200 give the
  // same figures).
  HandbrakeInference vehicle;
  vehicle.switch_penalty = 40.0;
  vehicle.v_scale_uu_s = 5.0;
  return InferVehicleHandbrake(coeffs, ep, integ, vehicle, start_level);
}

std::vector<double> InferHandbrake(const GroundCoeffs<double>& g,
                                   const PowerslideCoeffs<double>& c, const Episode& ep,
                                   const Integration& integ, const HandbrakeInference& opt) {
  return ViterbiSwitch(ep, opt, [&](int k, const double* acting, double level,
                                   double* level_after) {
    PowerslideState<double> s;
    s.body = FromSample<CarState<double>>(ep.rows[k]);
    s.handbrake = level;
    s = AdvancePowerslideRow(g, c, s, ep, k, integ, acting);
    *level_after = s.handbrake;
    return OneRowCost(s.body, ep, k, opt);
  });
}

std::vector<double> InferVehicleHandbrake(const VehicleCoeffs<double>& c, const Episode& ep,
                                          const Integration& integ,
                                          const HandbrakeInference& opt, double* start_level) {
  // A step's cost depends on the row, the state and the level alone, and the grid's runs below
  // meet the same ones wherever their levels have reached 0 or 1 alike: each is computed once
  // (remembered per row and state by its exact level; the same values): the handbrake set's
  // replay takes 0.24 s, 1.0 s without it, 0.20 s with one run.
  struct Known {
    double level, cost, after;
  };
  std::vector<std::array<std::vector<Known>, 2>> known(ep.size());
  auto step_cost = [&](int k, const double* acting, double level, double* level_after) {
    std::vector<Known>& seen = known[k][acting[k] > 0.5 ? 1 : 0];
    for (const Known& e : seen) {
      if (e.level == level) {
        *level_after = e.after;
        return e.cost;
      }
    }
    VehicleState<double> s = FromSample<VehicleState<double>>(ep.rows[k]);
    s.wheels.handbrake = level;
    s = AdvanceVehicleRow(c, s, ep, k, integ, acting);
    *level_after = s.wheels.handbrake;
    const double cost = OneRowCost(s.body, ep, k, opt);
    seen.push_back({level, cost, *level_after});
    return cost;
  };
  double best_total = 0.0;
  std::vector<double> best_switch = ViterbiSwitch(ep, opt, step_cost, -1.0, &best_total);
  if (start_level == nullptr) return best_switch;
  // The level at row 0 is unknown: the handbrake may have been let go (or pressed) shortly
  // before the recording starts, so the level is between 0 and 1. Each level of a grid is
  // tried at row 0; one is kept where its path costs less than the path from the switch's own
  // level by more than a switch's penalty (a change of the handbrake before row 0 is one more
  // switch), the lowest level among equals (decision 0141).
  *start_level = -1.0;
  const double own_total = best_total;
  for (int i = 0; i <= kStartLevelSteps; ++i) {
    const double level = static_cast<double>(i) / kStartLevelSteps;
    double total = 0.0;
    std::vector<double> path = ViterbiSwitch(ep, opt, step_cost, level, &total);
    if (total + opt.switch_penalty < own_total && total < best_total) {
      best_total = total;
      best_switch = std::move(path);
      *start_level = level;
    }
  }
  return best_switch;
}

double RearSlipShare(const Episode& ep, int* flat_rows) {
  const std::vector<bool> slip = LargeRearSlip(ep, kSlideRearSlipUuS);
  int flat = 0, sliding = 0;
  for (int k = 0; k < ep.size(); ++k) {
    if (!OnFlatFloor(ep.rows[k])) continue;
    ++flat;
    sliding += slip[k] ? 1 : 0;
  }
  if (flat_rows != nullptr) *flat_rows = flat;
  return flat > 0 ? static_cast<double>(sliding) / flat : 0.0;
}

namespace {

bool AnyPress(const Episode& ep) {
  for (const Sample& s : ep.rows)
    if (s.input.handbrake) return true;
  return false;
}

// Measured: no press, yet the car slides like a powerslide on enough of its flat-floor rows.
bool SlidesWithoutPresses(const Episode& ep) {
  int flat = 0;
  const double share = RearSlipShare(ep, &flat);
  return flat >= kMinFlatRowsMeasured && share > kUnrecordedHandbrakeShare;
}

}  // namespace

HandbrakeSource ChooseHandbrakeSource(const Episode& ep) {
  if (AnyPress(ep)) return HandbrakeSource::kRecorded;
  if (ep.handbrake != HandbrakeRecord::kColumn) return HandbrakeSource::kInferred;
  return SlidesWithoutPresses(ep) ? HandbrakeSource::kInferred : HandbrakeSource::kRecorded;
}

std::string HandbrakeSourceReason(const Episode& ep) {
  if (AnyPress(ep)) return "";
  if (ep.handbrake == HandbrakeRecord::kNoColumn) return "no handbrake column";
  if (ep.handbrake == HandbrakeRecord::kNotRecorded) return "";
  return SlidesWithoutPresses(ep)
             ? "measured: no press recorded while the car slides on over " +
                   std::to_string(static_cast<int>(kUnrecordedHandbrakeShare * 100)) +
                   "% of its flat-floor rows"
             : "";
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
