// The models stepped over recorded episodes: the inputs acting during a recorded row's physics
// steps (ControlsOver, ForEachRowTick, RowStepControls), each model's row advance
// (Advance*Row), model states from recorded rows (FromSample), the ball's tick clock on a
// recording and the powerslide's handbrake from a recording. The replay layer's: the models
// (src/models) take states and Controls and never see an Episode (docs/design.md, layers).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "src/io/episode.h"
#include "src/models/aerial.h"
#include "src/models/arena.h"
#include "src/models/ball.h"
#include "src/models/car.h"
#include "src/models/car_state.h"
#include "src/models/ground.h"
#include "src/models/jump.h"
#include "src/models/model.h"
#include "src/models/powerslide/powerslide.h"
#include "src/models/surface.h"
#include "src/models/vehicle.h"

namespace rlfit {

// ---- Inputs of a recorded row ----------------------------------------------------------

// The time average over [t0_s, t1_s) (episode time) of the inputs acting then: the input
// recorded at row j acts from its switch time until the next row's input takes over; the
// switch time is rows[j].t_s + input_delay_s, moved on to the next physics tick when the
// inputs are tick-aligned and the episode's clock is known (see Integration). Before the
// first row's input acts, the first row's input is assumed.
Controls ControlsOver(const Episode& ep, double t0_s, double t1_s, const Integration& integ);

// Calls tick(controls, h_s) for each physics step of recorded row k -> k+1 of `ep`, in order:
// SubstepsForRow steps of h_s = step_dt_s[k] / n, step i spanning [t_k + i h_s, t_k + (i+1) h_s)
// with the inputs acting then (ControlsOver). The one place a row's steps and their inputs are
// formed: AdvanceCarRow, RowStepControls and JumpStateAt all take them from here.
template <typename Tick>
void ForEachRowTick(const Episode& ep, int k, const Integration& integ, const Tick& tick) {
  const double dt_row = ep.step_dt_s[k];
  const int n = SubstepsForRow(dt_row, integ.tick_rate_hz);
  const double h = dt_row / n;
  for (int i = 0; i < n; ++i) {
    const double t0 = ep.rows[k].t_s + i * h;
    tick(ControlsOver(ep, t0, t0 + h, integ), h);
  }
}

// Advances a car state over recorded row k -> k+1 of `ep`: the row's physics steps
// (ForEachRowTick), each with the inputs acting during it; step(state, controls, dt_s).
template <typename State, typename Step>
State AdvanceCarRow(const State& s, const Episode& ep, int k, const Integration& integ,
                    const Step& step) {
  State out = s;
  ForEachRowTick(ep, k, integ, [&](const Controls& u, double h) { out = step(out, u, h); });
  return out;
}

// The inputs of every physics step of rows first_row .. last_row - 1 of an episode, as
// AdvanceCarRow computes them (ForEachRowTick), computed once: a fit rolls
// each window out many times, and overlapping windows share the rows. Holds no reference to
// the episode.
class RowStepControls {
 public:
  RowStepControls() = default;
  RowStepControls(const Episode& ep, const Integration& integ, int first_row, int last_row)
      : first_row_(first_row) {
    offsets_.reserve(last_row - first_row + 1);
    offsets_.push_back(0);
    for (int k = first_row; k < last_row; ++k) {
      ForEachRowTick(ep, k, integ, [&](const Controls& u, double) { controls_.push_back(u); });
      offsets_.push_back(static_cast<int>(controls_.size()));
    }
  }
  int first_row() const { return first_row_; }
  int last_row() const { return first_row_ + static_cast<int>(offsets_.size()) - 1; }
  // Row k's steps: `count` Controls from `begin` (first_row <= k < last_row).
  const Controls* begin(int k) const { return controls_.data() + offsets_[k - first_row_]; }
  int count(int k) const { return offsets_[k - first_row_ + 1] - offsets_[k - first_row_]; }

 private:
  int first_row_ = 0;
  std::vector<int> offsets_;  // row k's steps are controls_[offsets_[k - first_row_] ...)
  std::vector<Controls> controls_;
};

// AdvanceCarRow with the steps' inputs taken from `controls` (built from the same episode and
// Integration, covering row k): the same states, bit for bit.
template <typename State, typename Step>
State AdvanceCarRow(const State& s, const Episode& ep, int k, const RowStepControls& controls,
                    const Step& step) {
  const int n = controls.count(k);
  const double h = ep.step_dt_s[k] / n;
  const Controls* u = controls.begin(k);
  State out = s;
  for (int i = 0; i < n; ++i) out = step(out, u[i], h);
  return out;
}

// ---- Model states from recorded rows ---------------------------------------------------

// A model state from a recorded row (a rollout's start): FromSample<State>(row, extra...), e.g.
// FromSample<CarState<double>>(ep.rows[k]) or FromSample<JumpState>(row, timing). Each state
// type has a FromSampleAs overload below (found at instantiation).
template <class State, class... Extra>
State FromSample(const Sample& s, const Extra&... extra) {
  return FromSampleAs(s, static_cast<const State*>(nullptr), extra...);
}

// The recorded position, velocity, angular velocity and orientation.
template <typename T>
CarState<T> FromSampleAs(const Sample& s, const CarState<T>*) {
  CarState<T> out;
  out.x = s.x.cast<T>();
  out.v = s.v.cast<T>();
  out.omega = s.omega.cast<T>();
  out.theta = s.theta.cast<T>();
  return out;
}

template <typename T>
BallState<T> FromSampleAs(const Sample& s, const BallState<T>*) {
  BallState<T> out;
  out.x = s.x.cast<T>();
  out.v = s.v.cast<T>();
  out.omega = s.omega.cast<T>();
  return out;
}

// From a recorded row's flags alone (when the jump's history is unknown): in contact when
// on_ground; a recorded jumped / double_jumped flag counts as used, with the windows closed.
inline JumpState FromSampleAs(const Sample& s, const JumpState*, const JumpTiming& timing) {
  JumpState j;
  j.in_contact = s.on_ground;
  j.jump_held = s.input.jump;
  j.has_jumped = s.jumped;
  j.has_double_jumped = s.double_jumped;
  j.jump_time_s = s.jumped ? timing.jump_max_time_s : 0.0;
  j.since_jump_s = s.jumped ? timing.double_jump_window_s : 0.0;
  return j;
}

// The recorded car, its wheels decided on its first tick.
template <typename T>
VehicleState<T> FromSampleAs(const Sample& row, const VehicleState<T>*) {
  VehicleState<T> s;
  s.body = FromSample<CarState<T>>(row);
  return s;
}

// The recorded car, its jump flags (JumpState's FromSampleAs) and boost amount, its wheels
// unset (decided on its first floor tick), handbrake level 0.
template <typename T>
CarModelState<T> FromSampleAs(const Sample& s, const CarModelState<T>*) {
  CarModelState<T> out;
  out.body = FromSample<CarState<T>>(s);
  out.jump = FromSample<JumpState>(s, JumpTiming());
  out.boost = s.boost_amount;
  return out;
}

// The car model's state at row `row` of `ep` as the row alone gives it (FromSample: the car, its
// jump flags and boost amount, wheels unset, handbrake level 0) with the recording's unlimited
// boost: the start of the car fit's windows (fit/car_fit.h, with their jump state and handbrake level) and, with
// those from the episode, of the car's rollouts (CarStartState, src/replay/regime.h).
template <typename T>
CarModelState<T> CarRecordedState(const Episode& ep, int row) {
  CarModelState<T> s = FromSample<CarModelState<T>>(ep.rows[row]);
  s.unlimited_boost = ep.unlimited_boost;
  return s;
}

// ---- Each model over a recorded row ----------------------------------------------------

// Advances the state over recorded row k -> k+1 of `ep` (substeps per Integration).
template <typename T>
CarState<T> AdvanceAerialRow(const AerialCoeffs<T>& c, const CarState<T>& s, const Episode& ep,
                             int k, const Integration& integ) {
  return AdvanceCarRow(s, ep, k, integ,
                       [&](const CarState<T>& state, const Controls& u, double h) {
                         return StepAerial(c, state, u, h, integ.rotate_with_new_omega);
                       });
}

// The ground step's decay factors of one row (its ticks share c and the step h), computed
// at the first tick: a row of n ticks takes 2 exp, not 2 n (the values are the same). One
// object may serve a whole rollout (its rows share c; a new h recomputes them), never two
// coefficient sets.
template <typename T>
class GroundRowDecay {
 public:
  const GroundDecay<T>& At(const GroundCoeffs<T>& c, double h) {
    if (!set_ || h != h_) {
      decay_ = GroundDecayFactors(c, h);
      h_ = h;
      set_ = true;
    }
    return decay_;
  }

 private:
  GroundDecay<T> decay_{};
  double h_ = 0.0;
  bool set_ = false;
};

// Advances the state over recorded row k -> k+1 of `ep` (substeps per Integration).
template <typename T>
CarState<T> AdvanceGroundRow(const GroundCoeffs<T>& c, const CarState<T>& s, const Episode& ep,
                             int k, const Integration& integ) {
  GroundRowDecay<T> decay;
  return AdvanceCarRow(s, ep, k, integ,
                       [&](const CarState<T>& state, const Controls& u, double h) {
                         return StepGround(c, state, u, h, decay.At(c, h),
                                           integ.rotate_with_new_omega);
                       });
}
// The same with the steps' inputs precomputed (RowStepControls of `ep` and `integ`).
template <typename T>
CarState<T> AdvanceGroundRow(const GroundCoeffs<T>& c, const CarState<T>& s, const Episode& ep,
                             int k, const Integration& integ, const RowStepControls& controls) {
  GroundRowDecay<T> decay;
  return AdvanceCarRow(s, ep, k, controls,
                       [&](const CarState<T>& state, const Controls& u, double h) {
                         return StepGround(c, state, u, h, decay.At(c, h),
                                           integ.rotate_with_new_omega);
                       });
}

// Advances the state over recorded row k -> k+1 of `ep` (substeps per Integration).
template <typename T>
CarState<T> AdvanceSurfaceRow(const GroundCoeffs<T>& g, const SurfaceCoeffs<T>& c,
                              const CarState<T>& s, const Episode& ep, int k,
                              const Integration& integ, const Arena& arena) {
  return AdvanceCarRow(s, ep, k, integ, [&](const CarState<T>& state, const Controls& u, double h) {
    return StepSurface(g, c, state, u, h, integ.rotate_with_new_omega, arena);
  });
}

// Advances over recorded row k -> k+1 of `ep` (the row's ticks, ForEachRowTick). `acting`
// (row-aligned, may be null) is the handbrake input acting during step k -> k+1 (the inferred
// switch, InferHandbrake); when null, the recorded handbrake column acts like the other inputs.
template <typename T>
VehicleState<T> AdvanceVehicleRow(const VehicleCoeffs<T>& c, const VehicleState<T>& s,
                                  const Episode& ep, int k, const Integration& integ,
                                  const double* acting = nullptr) {
  return AdvanceCarRow(s, ep, k, integ, [&](const VehicleState<T>& state, Controls u, double h) {
    if (acting != nullptr) u.handbrake = acting[k];
    return StepVehicle(c, state, u, h);
  });
}
template <typename T>
VehicleState<T> AdvanceVehicleRow(const VehicleCoeffs<T>& c, const VehicleState<T>& s,
                                  const Episode& ep, int k, const RowStepControls& controls,
                                  const double* acting = nullptr) {
  return AdvanceCarRow(s, ep, k, controls,
                       [&](const VehicleState<T>& state, Controls u, double h) {
                         if (acting != nullptr) u.handbrake = acting[k];
                         return StepVehicle(c, state, u, h);
                       });
}

// Advances over recorded row k -> k+1 of `ep` (substeps per Integration).
template <typename T>
JumpCarState<T> AdvanceJumpRow(const JumpCoeffs<T>& c, const JumpCarState<T>& s,
                               const Episode& ep, int k, const Integration& integ) {
  return AdvanceCarRow(s, ep, k, integ,
                       [&](const JumpCarState<T>& state, const Controls& u, double h) {
                         return StepJump(c, state, u, h, integ.rotate_with_new_omega);
                       });
}

// The jump state at recorded row `row` of a jump that took off at row `takeoff` (<= row):
// PlanJumpTick run over the recorded inputs of the rows between, tick by tick as
// AdvanceCarRow steps them. At the take-off row: in contact, jump not yet held.
JumpState JumpStateAt(const Episode& ep, int takeoff, int row, const Integration& integ,
                      const JumpTiming& timing);

// The jump state at row `row` of `ep` from that row alone, where no recorded take-off holds it
// (rlsim predict's start, a car rollout outside a jump): JumpState::FromSample (in contact when
// on_ground), with jump held as the input acting in the tick before the row (ControlsOver), and
// not held before the first row: a jump held from the first row on is a press.
JumpState JumpStateOfRow(const Episode& ep, int row, const Integration& integ,
                         const JumpTiming& timing);

// The state replay and the fit start a jump rollout from at `row`: the recorded car and the
// jump state of JumpStateAt. The recorded velocity is kept as it is, also the vz ~8.3 uu/s the
// game reports for a car resting on the floor (datasets README): with it the impulse's row step
// is reproduced (8.31 + 291.67 + one tick of 483 uu/s^2 = 304.0 uu/s; recorded 304.29 and
// 304.32 in jumps.txt), without it 4 uu/s short.
template <typename T>
JumpCarState<T> JumpStartState(const Episode& ep, int takeoff, int row, const Integration& integ,
                               const JumpTiming& timing) {
  JumpCarState<T> s;
  s.car = FromSample<CarState<T>>(ep.rows[row]);
  s.jump = JumpStateAt(ep, takeoff, row, integ, timing);
  return s;
}

// Advances the state over recorded row k -> k+1 of `ep` (substeps per Integration).
template <typename T>
CarModelState<T> AdvanceCarModelRow(const CarCoeffs<T>& c, const Arena& arena,
                                    const CarModelState<T>& s, const Episode& ep, int k,
                                    const Integration& integ) {
  return AdvanceCarRow(s, ep, k, integ,
                       [&](const CarModelState<T>& state, const Controls& u, double h) {
                         return StepCar(c, arena, state, u, h, integ.rotate_with_new_omega);
                       });
}

// Per row of `ep`: would the switch put the recorded state on a surface (ChooseCarStep on the
// recorded row, no carried regime)? For the on_ground check and the row labels.
std::vector<CarStepChoice> CarChoicesOnRecorded(const Episode& ep, const Arena& arena);

// ---- The powerslide and the handbrake of a recording (src/replay/handbrake.cc) -----------

// Advances over recorded row k -> k+1 of `ep`. `acting` (row-aligned, may be null) is the
// handbrake input acting during step k -> k+1 (the inferred switch, see InferHandbrake); when
// null, the recorded handbrake column acts through ControlsOver like the other inputs.
template <typename T>
PowerslideState<T> AdvancePowerslideRow(const GroundCoeffs<T>& g, const PowerslideCoeffs<T>& c,
                                        const PowerslideState<T>& s, const Episode& ep, int k,
                                        const Integration& integ, const double* acting) {
  GroundRowDecay<T> decay;
  return AdvanceCarRow(s, ep, k, integ,
                       [&](const PowerslideState<T>& state, Controls u, double h) {
                         if (acting != nullptr) u.handbrake = acting[k];
                         return StepPowerslide(g, c, state, u, h, decay.At(g, h),
                                               integ.rotate_with_new_omega);
                       });
}

// The same with the steps' inputs precomputed (RowStepControls of `ep` and `integ`, covering
// row k): the same states bit for bit.
template <typename T>
PowerslideState<T> AdvancePowerslideRow(const GroundCoeffs<T>& g, const PowerslideCoeffs<T>& c,
                                        const PowerslideState<T>& s, const Episode& ep, int k,
                                        const Integration& integ, const RowStepControls& controls,
                                        const double* acting) {
  GroundRowDecay<T> decay;
  return AdvanceCarRow(s, ep, k, controls,
                       [&](const PowerslideState<T>& state, Controls u, double h) {
                         if (acting != nullptr) u.handbrake = acting[k];
                         return StepPowerslide(g, c, state, u, h, decay.At(g, h),
                                               integ.rotate_with_new_omega);
                       });
}

// Start state at row `start`: the recorded car and the handbrake level ramped (at the fixed
// rise and fall rates) from row 0 over the handbrake acting on each step before `start`
// (acting, else the recorded input as ControlsOver gives it), starting at the value acting on
// the first step.
PowerslideState<double> PowerslideStartState(const Episode& ep, int start,
                                             const Integration& integ, const double* acting);

// The vehicle's start state at row `start`: the recorded car, its wheels decided on its first
// tick, with the handbrake level ramped (NextVehicleHandbrake, the game's rates) tick by tick
// from row 0 over the handbrake acting on each step before `start` (acting, else the recorded
// input as ControlsOver gives it), starting at the value acting on the first step.
VehicleState<double> VehicleStartState(const Episode& ep, int start, const Integration& integ,
                                       const double* acting);

// The handbrake level at every row of `ep` (element k: the level PowerslideStartState, resp.
// VehicleStartState, ramps to at row k: the same arithmetic in the same order), in one pass over
// the rows: what rollouts restarted along an episode and a fit's windows read at their start row
// instead of ramping from row 0 each time.
std::vector<double> PowerslideHandbrakeLevels(const Episode& ep, const Integration& integ,
                                              const double* acting);
// VehicleHandbrakeLevels ramps from `start_level` at row 0 where it is not negative (a level
// InferVehicleHandbrake inferred there), else as VehicleStartState does.
std::vector<double> VehicleHandbrakeLevels(const Episode& ep, const Integration& integ,
                                           const double* acting, double start_level = -1.0);

// The start states at row `start` with the level at that row of `levels` (the tables above).
PowerslideState<double> PowerslideStartState(const Episode& ep, int start,
                                             const std::vector<double>& levels);
VehicleState<double> VehicleStartState(const Episode& ep, int start,
                                       const std::vector<double>& levels);

// The handbrake of an episode as every rollout along it reads it, worked out once per episode.
struct EpisodeHandbrake {
  std::vector<double> acting;  // the switch acting on each step; empty: the recorded input acts
  std::vector<double> levels;  // the level at each row (PowerslideHandbrakeLevels or Vehicle...)
  const double* acting_or_null() const { return acting.empty() ? nullptr : acting.data(); }
};
// The powerslide's, with the switch `acting` (empty: the recorded input).
EpisodeHandbrake PowerslideEpisodeHandbrake(const Episode& ep, const Integration& integ,
                                            std::vector<double> acting);
// The vehicle's: VehicleActingHandbrake's switch and VehicleHandbrakeLevels ramped over it
// from the level inferred at row 0, both inferred with the vehicle fit `coeffs` and `integ`
// (the coefficients the rollouts run with: a replay's --coeffs, a fold's refit); without them,
// with the committed fit.
EpisodeHandbrake VehicleEpisodeHandbrake(const Episode& ep, const VehicleCoeffs<double>& coeffs,
                                         const Integration& integ);
EpisodeHandbrake VehicleEpisodeHandbrake(const Episode& ep, const Integration& integ);

// The handbrake acting on each step of `ep` for the vehicle (row-aligned like InferHandbrake's),
// or empty when the recording holds it (ChooseHandbrakeSource: the recorded input acts): the
// switch InferVehicleHandbrake infers with the committed vehicle fit
// (results/vehicle/coeffs.json, read once) and its integration, at the vehicle's settings
// (switch penalty 40, v_scale 5 uu/s; decisions 0129, 0140), with the level at row 0 inferred
// with it into `start_level` when given (-1 where the recorded input acts or no level beats the
// switch's own: the level then starts from the switch or the input). InputError when that file
// is bad.
std::vector<double> VehicleActingHandbrake(const Episode& ep, double* start_level = nullptr);
// The same, inferred with the vehicle fit `coeffs` and `integ` instead of the committed fit.
std::vector<double> VehicleActingHandbrake(const Episode& ep, const VehicleCoeffs<double>& coeffs,
                                           const Integration& integ, double* start_level);

// Which handbrake drives a rollout.
enum class HandbrakeSource { kRecorded, kInferred };

// Settings of the handbrake inference.
struct HandbrakeInference {
  // Cost of one switch of the handbrake (on or off), in units of a row's squared scaled
  // one-row error: a switch must explain the motion of a few rows better to be taken.
  double switch_penalty = 20.0;
  double omega_scale_rad_s = 0.05;  // one-row yaw-rate error that counts 1
  double v_scale_uu_s = 10.0;       // one-row in-plane velocity error that counts 1
};

// The handbrake switch (0 or 1) acting on each step k -> k+1 of `ep` (row-aligned; the last
// entry repeats the one before), by Viterbi over a two-state switch: the cost of a row in a
// state is the scaled squared error of the one-row prediction from the recorded state with the
// handbrake input at the state's value and the level ramped along the path into it (carried
// along each state's best path), plus switch_penalty per switch.
// Rows off the flat floor (airborne, wall) cost nothing in either state.
std::vector<double> InferHandbrake(const GroundCoeffs<double>& g,
                                   const PowerslideCoeffs<double>& c, const Episode& ep,
                                   const Integration& integ, const HandbrakeInference& opt = {});
// The same inference with the vehicle's step (StepVehicle from the recorded row, its wheels
// decided on the first tick, the level carried as above): the switch the vehicle replays and
// fits with (VehicleActingHandbrake). Each state starts from its own level (0 or 1). With
// `start_level`, the level at row 0 is inferred too: the switch is inferred from each of 0,
// 0.05, ..., 1 at row 0 (both states), and the path of least cost is kept where it costs less
// than the own levels' path by more than opt.switch_penalty (a change of the handbrake before
// row 0), its level written there; else -1 is written and the own levels' switch returned.
std::vector<double> InferVehicleHandbrake(const VehicleCoeffs<double>& c, const Episode& ep,
                                          const Integration& integ,
                                          const HandbrakeInference& opt = {},
                                          double* start_level = nullptr);

// Recorded when any row of `ep` has the handbrake pressed; inferred when the file has no
// handbrake column (named format), when its dataset manifest or the command line declares it
// not recorded (Episode::handbrake: the Lobot ground_driving_handbrake folder), or, measured,
// when its column holds no press while the car slides sideways like a powerslide
// (UnrecordedHandbrakeShare); recorded otherwise.
HandbrakeSource ChooseHandbrakeSource(const Episode& ep);
// Why ChooseHandbrakeSource chose as it did, for the report: "" for the recorded column or a
// declared unrecorded handbrake, else "no handbrake column" or "measured: ...".
std::string HandbrakeSourceReason(const Episode& ep);

// The share of `ep`'s flat-floor rows on which the rear axle slides sideways by more than
// kSlideRearSlipUuS, and the count of those rows: the measure of an unrecorded handbrake.
// Measured per file of the Lobot recordings with 30 flat-floor rows or more and no press: the
// ground_driving_no_handbrake episodes and spirals, the wall_driving episodes and the timed
// .txt recordings 0, jumps.txt 0.021 (its landings); the 30 ground_driving_handbrake episodes
// 0.226 to 0.957.
double RearSlipShare(const Episode& ep, int* flat_rows);
// A car recording whose handbrake column holds no press drove with an unrecorded handbrake when
// more than this share of at least kMinFlatRowsMeasured flat-floor rows slide (ten times the
// largest share without one, under half the smallest with one).
inline constexpr double kUnrecordedHandbrakeShare = 0.1;
inline constexpr int kMinFlatRowsMeasured = 30;

// Per row, whether the car slides sideways: the rear axle's sideways speed |v_l - b w_z| is
// above `min_slip_uu_s` (the measure the inference is compared with).
std::vector<bool> LargeRearSlip(const Episode& ep, double min_slip_uu_s);
// Sideways speed of the rear axle that counts as a slide, uu/s. Measured on the 10,465 flat-floor
// on_ground rows of the ground_driving_no_handbrake episodes (no handbrake): median 79, p99 207,
// largest 214 uu/s (the rear axle slips in ordinary turns: the ground model's sideways velocity
// settles at w_z (lever_arm - v_f / rate)); ground_driving_handbrake: median 368, p90 1239.
inline constexpr double kSlideRearSlipUuS = 250.0;

// ---- The ball's tick clock on a recording ----------------------------------------------

// Clock rows of the step row k -> k + 1 of `ep`: a ~61 Hz row is one (a skipped row two).
inline long BallClockRowsOf(const Episode& ep, int k) {
  return std::lround(ep.step_dt_s[k] * game::kEpisodeRowRateHz);
}

// Clock rows from row 0 of `ep` to row k.
inline long BallClockRowsTo(const Episode& ep, int k) {
  long n = 0;
  for (int i = 0; i < k; ++i) n += BallClockRowsOf(ep, i);
  return n;
}

// BallClockRowsTo of every row of `ep` (element k for row k), in one pass: what the rollouts
// restarted along one episode look up by index instead of summing from row 0 each time.
inline std::vector<long> BallClockRowsPrefix(const Episode& ep) {
  std::vector<long> to(ep.rows.size(), 0);
  for (std::size_t k = 1; k < to.size(); ++k)
    to[k] = to[k - 1] + BallClockRowsOf(ep, static_cast<int>(k) - 1);
  return to;
}

// The place of a row between two ticks, in [0, 1) tick, `clock_rows` after row 0 of an
// episode whose row 0 is at clock_origin_rows: the fractional part of
// (clock_origin_rows + clock_rows) ticks_per_clock_row.
inline double BallTickFraction(double clock_origin_rows, long clock_rows,
                               const Integration& integ) {
  const double ticks =
      (clock_origin_rows + static_cast<double>(clock_rows)) * integ.ticks_per_clock_row;
  return ticks - std::floor(ticks);
}

// Advances `t` over the step row k -> k + 1 of `ep` on the tick clock (whole ticks of
// 1 / tick_rate_hz s, StepBall) and returns the new row: the blend of the two ticks around it.
template <typename T>
BallState<T> AdvanceBallTicks(const BallCoeffs<T>& c, BallTicks<T>* t, const Episode& ep, int k,
                              const Integration& integ, const Arena& arena) {
  const double tick_s = 1.0 / integ.tick_rate_hz;
  t->clock_rows += BallClockRowsOf(ep, k);
  const long whole = BallWholeTicks(t->first_a, t->clock_rows, integ);
  if (t->ticks >= whole) return t->Row(integ);
  const T drag_factor = BallDragFactor(c, tick_s);  // once for the row's ticks
  for (; t->ticks < whole; ++t->ticks) {
    t->tick0 = t->tick1;
    t->tick1 = StepBall(c, t->tick0, tick_s, arena, drag_factor);
  }
  return t->Row(integ);
}

// The same for double, chained through `clearance` (see BallClearance: the same states bit for
// bit, without the lookups of ticks that cannot reach the mesh); mesh_at(i) gives the mesh the
// step from tick i (counted as BallTicks::ticks) queries: the Arena, or a view that answers as
// it does, bit for bit (the fit's per-tick triangle lists, fit/ball_fit.h).
template <class MeshAt>
BallState<double> AdvanceBallTicks(const BallCoeffs<double>& c, BallTicks<double>* t,
                                   const Episode& ep, int k, const Integration& integ,
                                   const MeshAt& mesh_at, BallClearance* clearance) {
  const double tick_s = 1.0 / integ.tick_rate_hz;
  t->clock_rows += BallClockRowsOf(ep, k);
  const long whole = BallWholeTicks(t->first_a, t->clock_rows, integ);
  while (t->ticks < whole) {
    ++t->ticks;
    t->tick0 = t->tick1;
    t->tick1 = StepBall(c, t->tick0, tick_s, mesh_at(t->ticks), clearance);
  }
  return t->Row(integ);
}

// The recorded velocity change of row k -> k+1 of `ep` beyond gravity and drag under `c`,
// uu/s: zero in free flight, a contact's impulse otherwise (BallVelocityJump is its norm).
// Gravity first, then drag, over the whole row: not the tick's order (BallForcedVelocity), a
// difference of about 0.005 uu/s a row; the model's order here lost crossval's quick four
// (NOTES, issue 12, order34), so the thresholds below keep the order they were set with.
inline Eigen::Vector3d BallFreeFlightResidual(const Episode& ep, const BallCoeffs<double>& c,
                                              int k) {
  const double dt = ep.step_dt_s[k];
  Eigen::Vector3d v = ep.rows[k].v;
  v.z() += c.gravity_z * dt;
  v *= std::exp(c.drag * dt);
  return ep.rows[k + 1].v - v;
}

// A recorded step whose BallFreeFlightResidual is below this is free flight, uu/s (0.5 typical):
// no contact.
inline constexpr double kBallFreeFlightUuS = 5.0;

// Where row 0 of a ball episode sits on the tick clock, from its recorded bounces, in clock
// rows (ticks fall where (origin + clock rows) ticks_per_clock_row is whole). A bounce
// (velocity change within two rows, free flight on the row before and after) whose middle row
// k holds a fraction f in (kMinFraction, 1 - kMinFraction) of the change places row k at f
// tick past the tick before the bounce; each such bounce gives the origin
// (f - clock rows to k * ticks_per_clock_row) mod 1 tick, and the circular mean over them is
// returned. Fast bounces (over kMinBounceUuS) are used where the episode has any; else the
// slower ones (kMinSlowBounceUuS to kMinBounceUuS); else the slowest (kMinSlowestBounceUuS to
// kMinSlowBounceUuS) with the rows either side free to kStrictFreeFlightUuS. Measured: in the
// 106 visible episodes with two or more fast bounces they agree to 0.0011 tick (median over
// 239 bounces; p90 0.0023); the slow ones of the 155 episodes that have both agree with the
// fast ones' phase to 0.0029 tick (per episode median; p90 0.0051, max 0.082), and place 47 of
// the 57 episodes without a fast one (NOTES, issue 12, phase31); the slowest ones of 151
// phased episodes to 0.0038 tick (median; p90 0.0062, max 0.213), and place 9 of the last 10
// (NOTES, issue 12, half32). NaN when the episode has none (no bounce straddles a row; about
// half of all bounces fall between rows and give no phase).
inline double EstimateBallClockOrigin(const Episode& ep, const BallCoeffs<double>& c,
                                      const Integration& integ) {
  constexpr double kMinBounceUuS = 800.0;  // a fast bounce, not rolling or a graze
  // Slower straddled bounces agree with the fast ones down to here; below it, 7 of 438 are
  // off by over 0.05 tick (rolling contacts, grazes; NOTES, issue 12, phase31).
  constexpr double kMinSlowBounceUuS = 200.0;
  // The slowest tier, used only where an episode has no bounce above kMinSlowBounceUuS: with
  // the rows either side free to 2 uu/s (5 lets through 9 more bounces, 8 of them off by over
  // 0.05 tick, one episode by 0.44) they agree with the fast ones to 0.0038 tick (median over
  // 303 bounces, 5 over 0.05: NOTES, issue 12, half32).
  constexpr double kMinSlowestBounceUuS = 50.0;
  constexpr double kStrictFreeFlightUuS = 2.0;
  constexpr double kMinFraction = 0.03;    // the bounce really straddles the row
  const int n = ep.size();
  if (n < 5) return std::numeric_limits<double>::quiet_NaN();
  std::vector<Eigen::Vector3d> jump(static_cast<std::size_t>(n - 1));
  for (int k = 0; k + 1 < n; ++k) jump[k] = BallFreeFlightResidual(ep, c, k);
  // Sums of the fast bounces' phases [0], of the slow ones' [1] and of the slowest ones' [2].
  double sum_cos[3] = {0.0, 0.0, 0.0}, sum_sin[3] = {0.0, 0.0, 0.0};
  int count[3] = {0, 0, 0};
  long clock_rows = BallClockRowsTo(ep, 2);
  for (int k = 2; k + 2 < n; ++k) {
    if (k > 2) clock_rows += BallClockRowsOf(ep, k - 1);
    const Eigen::Vector3d whole = jump[k - 1] + jump[k];
    const double whole2 = whole.squaredNorm();
    if (whole2 < kMinSlowestBounceUuS * kMinSlowestBounceUuS) continue;
    const int tier = whole2 >= kMinBounceUuS * kMinBounceUuS           ? 0
                     : whole2 >= kMinSlowBounceUuS * kMinSlowBounceUuS ? 1
                                                                       : 2;
    const double free_uu_s = tier == 2 ? kStrictFreeFlightUuS : kBallFreeFlightUuS;
    if (jump[k - 2].norm() > free_uu_s || jump[k + 1].norm() > free_uu_s) continue;
    const double f = jump[k - 1].dot(whole) / whole2;
    if (!(f > kMinFraction && f < 1.0 - kMinFraction)) continue;
    const double phase =
        2.0 * M_PI * (f - static_cast<double>(clock_rows) * integ.ticks_per_clock_row);
    sum_cos[tier] += std::cos(phase);
    sum_sin[tier] += std::sin(phase);
    ++count[tier];
  }
  const int tier = count[0] > 0 ? 0 : count[1] > 0 ? 1 : 2;
  if (count[tier] == 0) return std::numeric_limits<double>::quiet_NaN();
  double p0 = std::atan2(sum_sin[tier], sum_cos[tier]) / (2.0 * M_PI);
  p0 -= std::floor(p0);
  return p0 / integ.ticks_per_clock_row;
}

// The clock origin a ball rollout of `ep` uses: Episode::clock_origin_rows when known, else
// EstimateBallClockOrigin, else half a tick (without a straddled bounce nothing places the
// rows on the tick clock; half a tick is off by at most half a tick: 1 of the 258 recorded
// episodes, NOTES "The tick clock", phase31 and half32).
inline double BallClockOrigin(const Episode& ep, const BallCoeffs<double>& c,
                              const Integration& integ) {
  if (!std::isnan(ep.clock_origin_rows)) return ep.clock_origin_rows;
  const double estimate = EstimateBallClockOrigin(ep, c, integ);
  if (!std::isnan(estimate)) return estimate;
  return 0.5 / integ.ticks_per_clock_row;
}

// The tick pair a rollout restarted at row `start` of `ep` begins from, and the row it belongs
// to (*from_row): BallTicksAroundRow at `start`'s place on the clock (clock origin
// `origin_rows`), unless that pair's step touches the mesh while the previous row's own pair is
// free: then that pair, at row start - 1, which the rollout advances over the step as any other
// (its first row is still the recorded one). A pair that bounces between its ticks blends to
// the row only as a state the game never had, whether the row holds no fraction of the bounce
// (the recorded step into it free flight; with a wrong clock phase the fixed point can find one
// exactly: NOTES, issue 12, tail31: episode 82, row 244, z 85.97 below the contact radius and
// vz -966.8 straight off free flight from row 243: tick0 vz -2,850, tick1 +1,710 after the
// model's bounce, 556 uu off 0.5 s on; from row 243's pair 1.07 uu) or a fraction of it (a
// straddled bounce: the fixed point does not reach the game's pair; NOTES, issue 12, new34:
// episode 89, row 396, 88.6 uu off 0.5 s on, from row 395's pair 0.02). The same holds where
// the row's pair is free but the recorded steps into and out of the row are both off free flight
// (kBallFreeFlightUuS): the fixed point then finds a free parabola through a row that holds part
// of a bounce, and the rest of the bounce is lost (new34: episode 237, row 152, a 1,776 uu/s
// side-ramp bounce, 230.9 uu off 0.5 s on, from row 151's pair 0.07). From a free pair the
// rollout meets the contact at its own tick.
// `rows_to` is BallClockRowsPrefix(ep).
inline BallTicks<double> BallStartTicks(const BallCoeffs<double>& c, const Episode& ep, int start,
                                        double origin_rows, const std::vector<long>& rows_to,
                                        const Integration& integ, const Arena& arena,
                                        int* from_row) {
  const double tick_s = 1.0 / integ.tick_rate_hz;
  const auto pair_at = [&](int row, bool* touched) {
    bool any = false;
    const BallTicks<double> t = BallTicksAroundRowBy(
        FromSample<BallState<double>>(ep.rows[row]),
        BallTickFraction(origin_rows, rows_to[row], integ),
        [&](const BallState<double>& s) {
          BallClearance clearance;  // StepBall's state bit for bit, and whether it touched
          const BallState<double> next = StepBall(c, s, tick_s, arena, &clearance);
          any = any || clearance.touched;
          return next;
        });
    *touched = any;
    return t;
  };
  *from_row = start;
  bool touched = false;
  const BallTicks<double> at_start = pair_at(start, &touched);
  if (start == 0) return at_start;
  // The row holds a fraction of a contact: the recorded steps into and out of it both off free
  // flight (a free pair through it is the fixed point's, not the game's).
  const bool straddled = start + 1 < ep.size() &&
                         BallFreeFlightResidual(ep, c, start - 1).norm() > kBallFreeFlightUuS &&
                         BallFreeFlightResidual(ep, c, start).norm() > kBallFreeFlightUuS;
  if (!touched && !straddled) return at_start;
  bool touched_before = false;
  const BallTicks<double> before = pair_at(start - 1, &touched_before);
  if (touched_before) return at_start;
  *from_row = start - 1;
  return before;
}

}  // namespace rlfit
