// The replay-side face of a model: open-loop rollouts over recorded episodes in double,
// and the registry of models by name (one entry per model; rlsim and rlfit both use it).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "src/io/coeff_file.h"
#include "src/io/episode.h"
#include "src/models/ball.h"
#include "src/models/car.h"
#include "src/models/car_state.h"
#include "src/models/jump.h"
#include "src/models/model.h"
#include "src/models/powerslide/powerslide.h"
#include "src/models/vehicle.h"
#include "src/replay/episode_steps.h"
#include "src/replay/regime.h"

namespace rlfit {

struct PredictedState {
  Eigen::Vector3d x, v, omega;
  Eigen::Matrix3d theta = Eigen::Matrix3d::Identity();
};

inline PredictedState ToPredicted(const CarState<double>& s) {
  return {s.x, s.v, s.omega, s.theta};
}

inline PredictedState ToPredicted(const CarModelState<double>& s) { return ToPredicted(s.body); }

// The ball carries no orientation: theta stays the identity (not reported).
inline PredictedState ToPredicted(const BallState<double>& s) {
  return {s.x, s.v, s.omega, Eigen::Matrix3d::Identity()};
}

class Predictor {
 public:
  virtual ~Predictor() = default;
  // Predicts rows start..end (inclusive) of `ep` from the recorded state at `start`, with the
  // recorded inputs; element 0 is the recorded state at `start`.
  virtual std::vector<PredictedState> Rollout(const Episode& ep, int start, int end) const = 0;
  // Rollout over each window (start, end) of `windows`, in order, handing each prediction to
  // each(i, prediction): the same predictions as Rollout, bit for bit. A model whose rollout
  // needs facts of the whole episode works them out once here (PreparedPredictor).
  virtual void RolloutEach(
      const Episode& ep, const std::vector<std::pair<int, int>>& windows,
      const std::function<void(std::size_t, std::vector<PredictedState>)>& each) const {
    for (std::size_t i = 0; i < windows.size(); ++i)
      each(i, Rollout(ep, windows[i].first, windows[i].second));
  }
};

// A predictor whose rollouts read facts of the whole episode (the ball's clock, the handbrake
// switch and levels): Prepare works them out once per episode into a Context, and every rollout
// of that episode reads them (RolloutOn). Rollout prepares for its one window; RolloutEach once
// for all the windows of an episode, so that restarts along it cost time linear in its length.
// A predictor says only what it prepares and how one rollout uses it.
template <typename Context>
class PreparedPredictor : public Predictor {
 public:
  std::vector<PredictedState> Rollout(const Episode& ep, int start, int end) const final {
    return RolloutOn(ep, Prepare(ep), start, end);
  }

  void RolloutEach(
      const Episode& ep, const std::vector<std::pair<int, int>>& windows,
      const std::function<void(std::size_t, std::vector<PredictedState>)>& each) const final {
    if (windows.empty()) return;
    const Context context = Prepare(ep);
    for (std::size_t i = 0; i < windows.size(); ++i)
      each(i, RolloutOn(ep, context, windows[i].first, windows[i].second));
  }

 protected:
  // The facts of `ep` its rollouts read; nothing is kept between calls that could outlive `ep`.
  virtual Context Prepare(const Episode& ep) const = 0;
  // Rows start..end of `ep` (as Rollout) with the facts Prepare(ep) gave.
  virtual std::vector<PredictedState> RolloutOn(const Episode& ep, const Context& context,
                                                int start, int end) const = 0;
};

// The ToPredicted of a state holding a car body beside a model's own state.
inline PredictedState ToPredicted(const JumpCarState<double>& s) { return ToPredicted(s.car); }
inline PredictedState ToPredicted(const PowerslideState<double>& s) { return ToPredicted(s.body); }
inline PredictedState ToPredicted(const VehicleState<double>& s) { return ToPredicted(s.body); }

// The rollout every predictor runs: rows start..end, element 0 the start state `s` (row start),
// then s = advance(s, k) over each row k -> k + 1.
template <typename State, typename Advance>
std::vector<PredictedState> RolloutRows(State s, int start, int end, const Advance& advance) {
  std::vector<PredictedState> out;
  out.reserve(end - start + 1);
  out.push_back(ToPredicted(s));
  for (int k = start; k < end; ++k) {
    s = advance(s, k);
    out.push_back(ToPredicted(s));
  }
  return out;
}

// Adapts a model's templated AdvanceRow to the Predictor interface, from the recorded state.
template <typename State, typename Coeffs, typename Advance>
class RowPredictor : public Predictor {
 public:
  RowPredictor(Coeffs coeffs, Integration integ, Advance advance)
      : coeffs_(std::move(coeffs)), integ_(integ), advance_(std::move(advance)) {}

  std::vector<PredictedState> Rollout(const Episode& ep, int start, int end) const override {
    return RolloutRows(FromSample<State>(ep.rows[start]), start, end,
                       [&](const State& s, int k) { return advance_(coeffs_, s, ep, k, integ_); });
  }

 private:
  Coeffs coeffs_;
  Integration integ_;
  Advance advance_;
};

struct ModelInfo {
  std::string name;            // "aerial", "ball", "car", "ground"
  std::string description;
  EpisodeKind kind;            // which recordings it replays
  bool has_orientation;        // orientation error is reported
  const CoeffLayout* layout;
  std::vector<double> horizons_s;          // reported horizons by default, s (plus "last")
  // Builds the predictor for these coefficients; data_root is where model data other than
  // coefficients lives (the ball's arena mesh), "" for the default lookup.
  std::function<std::unique_ptr<Predictor>(const CoeffFile&, const std::string& data_root)>
      make_predictor;
  // What the recorded object was doing around a row (for the worst-episode list: where the
  // open-loop prediction departs), e.g. "bounce side ramp at a seam"; empty: not labelled.
  std::function<std::string(const Episode&, int row, const std::string& data_root)> situation;
  // Checks of the model's own decisions against recorded flags, as named counts per episode
  // that replay sums over episodes and reports ("<check>.rows", "<check>.agree", and the
  // disagreements by kind "<check>.<kind>"), e.g. the car's regime against on_ground; null:
  // none. Given the episode, its row labels, the predictor and the replay window, s.
  std::function<std::map<std::string, int>(const Episode&, const std::vector<Regime>&,
                                           const Predictor&, double window_s,
                                           const std::string& data_root)>
      checks;
  // What the model does at each row it covers, for the trajectory CSV's regime column and the
  // figures (the car: the step its switch picks on the recorded state, "on a surface" or "in
  // the air"); one label per row, read only where the row is covered. Null: "covered".
  std::function<std::vector<std::string>(const Episode&, const std::string& data_root)>
      row_labels;
};

// Every model of the project, in a fixed order.
const std::vector<ModelInfo>& Models();
// The model called `name`; InputError listing the known ones otherwise.
const ModelInfo& FindModel(const std::string& name);
std::vector<std::string> ModelNames();

}  // namespace rlfit
