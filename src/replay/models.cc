// The registry of models (src/replay/registry.h): each descriptor binds a model's name to its
// coefficient layout, row step, row classifier and the rest. The models not yet in a folder of
// their own are described here; a new model is a folder (src/models/<name>/, registered by
// cmake/model_folders.cmake).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "src/common/error.h"
#include "src/io/arena_file.h"
#include "src/io/recording.h"
#include "src/models/aerial.h"
#include "src/models/ball.h"
#include "src/models/car.h"
#include "src/models/ground.h"
#include "src/models/jump.h"
#include "src/models/surface.h"
#include "src/models/vehicle.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/episode_steps.h"
#include "src/replay/predictor.h"
#include "src/replay/regime.h"
#include "src/replay/regime_models.h"
#include "src/replay/registry.h"

namespace rlfit {
namespace {

// The datasets root `data_root` (--data), or the default root (ResolveDataRoot: $RLFIT_DATA,
// else ../shared/datasets/lobot, ...) when it is "".
std::string RootOrDefault(const std::string& data_root) {
  return data_root.empty() ? ResolveDataRoot("") : data_root;
}

// The pitch mesh (the car and wall models') and the ball's arena under that root.
const Arena& PitchArenaUnder(const std::string& data_root) {
  return PitchArena(RootOrDefault(data_root));
}
const Arena& BallArenaUnder(const std::string& data_root) {
  return BallArena(RootOrDefault(data_root));
}

template <typename Coeffs, typename State, typename Advance>
std::unique_ptr<Predictor> MakeRowPredictor(Coeffs coeffs, const Integration& integ,
                                            Advance advance) {
  return std::make_unique<RowPredictor<State, Coeffs, Advance>>(std::move(coeffs), integ,
                                                                std::move(advance));
}

// The aerial model's input timing (ModelDescriptor::timing): the game's ticks 0.15 tick later on
// the recording's clock, with 0.01635 s (the same switch ticks as 0.0151 s at phase 0, each
// 1.25 ms later). Decisions 0107 (measured: one-row |dω| rms 0.0047 -> 0.0025 rad/s, the refitted
// torque and damping on the game's values) and 0124 (switched: judged on restarts, where the
// acting inputs are recorded; from row 0 the 2 s p90 and last-row median lose, the input before
// row 0 being unknowable).
Integration AerialTiming() {
  Integration timing;
  timing.input_delay_s = 0.01635;
  timing.tick_phase = 0.15;
  return timing;
}

std::unique_ptr<Predictor> MakeAerial(const CoeffFile& file, const std::string&) {
  const auto coeffs = AerialCoeffs<double>::FromArray(file.values.data());
  return MakeRowPredictor<AerialCoeffs<double>, CarState<double>>(
      coeffs, file.integration,
      [](const AerialCoeffs<double>& c, const CarState<double>& s, const Episode& ep, int k,
         const Integration& integ) { return AdvanceAerialRow(c, s, ep, k, integ); });
}

std::unique_ptr<Predictor> MakeGround(const CoeffFile& file, const std::string&) {
  const auto coeffs = GroundCoeffs<double>::FromArray(file.values.data());
  return MakeRowPredictor<GroundCoeffs<double>, CarState<double>>(
      coeffs, file.integration,
      [](const GroundCoeffs<double>& c, const CarState<double>& s, const Episode& ep, int k,
         const Integration& integ) { return AdvanceGroundRow(c, s, ep, k, integ); });
}

// The vehicle's rollouts start from the recorded car, its wheels decided on the first tick, and
// the handbrake level ramped over the rows before (VehicleStartState). The handbrake acting on
// each step is the recorded input, or the switch inferred with the vehicle's own step and these
// coefficients where the recording does not hold it (VehicleActingHandbrake). Both are worked out
// once per episode (VehicleEpisodeHandbrake: the switch and the level at every row).
class VehiclePredictor : public PreparedPredictor<EpisodeHandbrake> {
 public:
  VehiclePredictor(VehicleCoeffs<double> coeffs, Integration integ)
      : coeffs_(coeffs), integ_(integ) {}

 private:
  EpisodeHandbrake Prepare(const Episode& ep) const override {
    return VehicleEpisodeHandbrake(ep, coeffs_, integ_);
  }

  std::vector<PredictedState> RolloutOn(const Episode& ep, const EpisodeHandbrake& handbrake,
                                        int start, int end) const override {
    const double* a = handbrake.acting_or_null();
    return RolloutRows(VehicleStartState(ep, start, handbrake.levels), start, end,
                       [&](const VehicleState<double>& s, int k) {
                         return AdvanceVehicleRow(coeffs_, s, ep, k, integ_, a);
                       });
  }

  VehicleCoeffs<double> coeffs_;
  Integration integ_;
};

std::unique_ptr<Predictor> MakeVehicle(const CoeffFile& file, const std::string&) {
  return std::make_unique<VehiclePredictor>(
      VehicleCoeffs<double>::FromArray(file.values.data()), file.integration);
}

// Jump rollouts start from the recorded car and the jump state since the take-off of the
// recorded jump holding `start` (JumpSegments; the row alone, JumpStateOfRow, when none holds
// it: rlsim predict's start).
class JumpPredictor : public Predictor {
 public:
  JumpPredictor(JumpCoeffs<double> coeffs, Integration integ)
      : coeffs_(std::move(coeffs)), integ_(integ) {}

  std::vector<PredictedState> Rollout(const Episode& ep, int start, int end) const override {
    JumpCarState<double> s;
    s.car = FromSample<CarState<double>>(ep.rows[start]);
    s.jump = JumpStateOfRow(ep, start, integ_, coeffs_.timing);
    for (const auto& [first, last] : JumpSegments(ep))
      if (first <= start && start <= last)
        s = JumpStartState<double>(ep, first, start, integ_, coeffs_.timing);
    return RolloutRows(s, start, end, [&](const JumpCarState<double>& state, int k) {
      return AdvanceJumpRow(coeffs_, state, ep, k, integ_);
    });
  }

 private:
  JumpCoeffs<double> coeffs_;
  Integration integ_;
};

std::unique_ptr<Predictor> MakeJump(const CoeffFile& file, const std::string&) {
  return std::make_unique<JumpPredictor>(JumpCoeffs<double>::FromArray(file.values.data()),
                                         file.integration);
}

// The ball runs on the tick clock (src/models/ball.h): the tick pair around the start row
// (BallStartTicks: BallTicksAroundRow at the row's place on the episode's clock,
// BallClockOrigin, or the previous row's free pair where the start row's bounces between its
// ticks or the row holds part of a straddled bounce),
// then all the ticks the rollout needs in one PredictBall (so the free ticks run in its
// register loop, BallFreeRun, as BM_Prediction6s measures), each row the blend of
// the two ticks around it. The same rows as chained AdvanceBallTicks calls, bit for bit
// (PredictBall gives chained StepBall's states; tested). The clock origin and the rows' places
// on the clock are worked out once per episode (Prepare).
struct BallEpisodeClock {
  double origin;              // where row 0 sits on the tick clock (BallClockOrigin)
  std::vector<long> rows_to;  // the clock rows before each row (BallClockRowsPrefix)
};

class BallPredictor : public PreparedPredictor<BallEpisodeClock> {
 public:
  BallPredictor(BallCoeffs<double> coeffs, Integration integ, const Arena* arena)
      : coeffs_(std::move(coeffs)), integ_(integ), arena_(arena) {}

 private:
  // One pass over the episode's rows, a few exp() a row.
  BallEpisodeClock Prepare(const Episode& ep) const override {
    return {BallClockOrigin(ep, coeffs_, integ_), BallClockRowsPrefix(ep)};
  }

  std::vector<PredictedState> RolloutOn(const Episode& ep, const BallEpisodeClock& clock,
                                        int start, int end) const override {
    const double origin = clock.origin;
    const std::vector<long>& rows_to = clock.rows_to;
    std::vector<PredictedState> out;
    out.reserve(end - start + 1);
    const BallState<double> s = FromSample<BallState<double>>(ep.rows[start]);
    out.push_back(ToPredicted(s));
    if (end <= start) return out;
    int from = start;  // the row whose tick pair the rollout steps from (BallStartTicks)
    const BallTicks<double> t0 =
        BallStartTicks(coeffs_, ep, start, origin, rows_to, integ_, *arena_, &from);
    // ticks[i] is the tick i past row `from`'s tick0 (ticks[0] = tick0, ticks[1] = tick1).
    const long rows = rows_to[end] - rows_to[from];
    const long last = BallWholeTicks(t0.first_a, rows, integ_) + 1;
    // Not value-initialised (a vector's would be: a quarter of a 6 s rollout's instructions).
    std::unique_ptr<BallState<double>[]> ticks(new BallState<double>[last + 1]);
    ticks[0] = t0.tick0;
    ticks[1] = t0.tick1;
    if (last > 1)
      PredictBall(coeffs_, t0.tick1, 1.0 / integ_.tick_rate_hz, static_cast<int>(last - 1),
                  *arena_, ticks.get() + 2);
    long clock_rows = rows_to[start] - rows_to[from];
    for (int k = start; k < end; ++k) {
      clock_rows += BallClockRowsOf(ep, k);
      const long whole = BallWholeTicks(t0.first_a, clock_rows, integ_);
      const double a = t0.first_a + static_cast<double>(clock_rows) * integ_.ticks_per_clock_row -
                       static_cast<double>(whole);
      out.push_back(ToPredicted(BlendBallStates(ticks[whole], ticks[whole + 1], a)));
    }
    return out;
  }

  BallCoeffs<double> coeffs_;
  Integration integ_;
  const Arena* arena_;
};

// The ball's arena (BallArena: the ceiling at 2048) under the datasets root.
std::unique_ptr<Predictor> MakeBall(const CoeffFile& file, const std::string& data_root) {
  const Arena* arena = &BallArenaUnder(data_root);
  return std::make_unique<BallPredictor>(BallCoeffs<double>::FromArray(file.values.data()),
                                         file.integration, arena);
}

// The wall model drives on the arena mesh with the ground coefficients its file was fitted
// with (GroundBeneath: the flat-floor physics it runs in the surface's frame) and its own
// surface coefficients.
std::unique_ptr<Predictor> MakeWall(const CoeffFile& file, const std::string& data_root) {
  const auto surface = SurfaceCoeffs<double>::FromArray(file.values.data());
  const auto ground = GroundBeneath(file, SurfaceLayout());
  const Arena* arena = &PitchArenaUnder(data_root);
  struct Coeffs {
    GroundCoeffs<double> ground;
    SurfaceCoeffs<double> surface;
  };
  return MakeRowPredictor<Coeffs, CarState<double>>(
      Coeffs{ground, surface}, file.integration,
      [arena](const Coeffs& c, const CarState<double>& s, const Episode& ep, int k,
              const Integration& integ) {
        return AdvanceSurfaceRow(c.ground, c.surface, s, ep, k, integ, *arena);
      });
}

// The car switches regimes on the arena mesh (as the ball, from the datasets root). Rollouts
// start from CarStartState: the recorded car, the jump state of CarJumpStateAt (the state
// since the take-off inside a recorded jump), the handbrake level ramped over the recorded input
// (VehicleStartState's), the recorded boost amount and the recording's unlimited boost. The
// levels of every row are worked out once per episode (VehicleHandbrakeLevels).
class CarPredictor : public PreparedPredictor<std::vector<double>> {
 public:
  CarPredictor(CarCoeffs<double> coeffs, Integration integ, const Arena* arena)
      : coeffs_(std::move(coeffs)), integ_(integ), arena_(arena) {}

 protected:
  std::vector<double> Prepare(const Episode& ep) const override {
    return VehicleHandbrakeLevels(ep, integ_, nullptr);
  }
  std::vector<PredictedState> RolloutOn(const Episode& ep, const std::vector<double>& levels,
                                        int start, int end) const override {
    return RolloutRows(CarStartState(ep, start, integ_, coeffs_.jump.timing, levels), start, end,
                       [&](const CarModelState<double>& state, int k) {
                         return AdvanceCarModelRow(coeffs_, *arena_, state, ep, k, integ_);
                       });
  }

 private:
  CarCoeffs<double> coeffs_;
  Integration integ_;
  const Arena* arena_;
};

std::unique_ptr<Predictor> MakeCar(const CoeffFile& file, const std::string& data_root) {
  const Arena* arena = &PitchArenaUnder(data_root);
  return std::make_unique<CarPredictor>(CarCoeffs<double>::FromArray(file.values.data()),
                                        file.integration, arena);
}

// The car's switch against the recorded on_ground flag, on the recorded states and along
// predictions: open-loop windows of window_s from the first row of every covered stretch, then
// every window_s (restarting from the recorded state), the switch's decision on each predicted
// state after the window's first.
std::map<std::string, int> CarChecks(const Episode& ep, const std::vector<Regime>& regimes,
                                     const Predictor& predictor, double window_s,
                                     const std::string& data_root) {
  const Arena& arena = PitchArenaUnder(data_root);
  std::vector<signed char> recorded(ep.rows.size()), predicted(ep.rows.size(), -1);
  const std::vector<CarStepChoice> choices = CarChoicesOnRecorded(ep, arena);
  for (int k = 0; k < ep.size(); ++k) recorded[k] = choices[k].regime == CarRegime::kSurface;
  for (const auto& [first, last] : CoveredStretches(regimes)) {
    for (int start = first; start < last;) {
      int end = start;
      while (end < last && ep.rows[end].t_s - ep.rows[start].t_s < window_s - 1e-9) ++end;
      end = std::max(end, start + 1);  // a window shorter than a row: one row (never stuck)
      const std::vector<PredictedState> pred = predictor.Rollout(ep, start, end);
      for (int i = 1; i < static_cast<int>(pred.size()); ++i)
        predicted[start + i] =
            FindWheelContact(arena, pred[i].x, pred[i].theta.col(2)).hit ? 1 : 0;
      start = end;
    }
  }
  std::map<std::string, int> out;
  auto add = [&out](const std::string& name, const OnGroundAgreement& a) {
    out[name + ".rows"] = a.rows;
    out[name + ".agree"] = a.agree;
    out[name + ".on a surface, flag off"] = a.surface_not_flagged;
    out[name + ".in the air, flag on"] = a.flagged_in_air;
  };
  add("on_ground vs switch, recorded states", CompareOnGround(ep, recorded));
  add("on_ground vs switch, predicted states", CompareOnGround(ep, predicted));
  return out;
}

// The step the car's switch picks on each recorded row.
std::vector<std::string> CarRowLabels(const Episode& ep, const std::string& data_root) {
  const Arena& arena = PitchArenaUnder(data_root);
  std::vector<std::string> out;
  for (const CarStepChoice& c : CarChoicesOnRecorded(ep, arena))
    out.push_back(c.regime == CarRegime::kSurface ? "on a surface" : "in the air");
  return out;
}

// The surface the ball is at in `row`, on the ball's arena (BallArena).
std::string BallSituationAt(const Episode& ep, int row, const std::string& data_root) {
  const Arena& arena = BallArenaUnder(data_root);
  const std::vector<double>& d = BallLayout().defaults;
  return BallSituation(ep, row, arena, BallCoeffs<double>::FromArray(d.data()));
}

}  // namespace

// The registry: the descriptors below and those of the models in folders of their own
// (FolderModelDescriptors: src/models/<name>/<name>_model.cc, listed by CMake), in the order of
// their keys. A descriptor: its replay side (ModelInfo: name, description, recordings' kind,
// whether orientation is scored, coefficient layout, default horizons, predictor, situation,
// checks, row labels), its row classifier and mesh, whether `rlfit` fits it, what its
// coefficients file carries, its page, whether results/ holds its fit, the starts it accepts,
// its place in the lists and its input timing (Integration's defaults unless given).
const std::vector<ModelDescriptor>& Registry() {
  static const std::vector<ModelDescriptor> registry = [] {
    std::vector<ModelDescriptor> all = {
        {{"aerial", "car in the air (notes 000/001)", EpisodeKind::kCar, true, &AerialLayout(),
          {0.5, 1.0, 2.0}, MakeAerial, nullptr, nullptr, nullptr},
         AerialRows, ArenaUse::kPitchOrFloor, true, CoeffFileExtras::kNone,
         "docs/models/aerial.md", true, StartNeeds::kClearOfMesh, 10, AerialTiming()},
        {{"ball", "ball: gravity, drag, bounces on the arena mesh (notes 003/004)",
          EpisodeKind::kBall, false, &BallLayout(), {0.5, 1.0, 2.0, 5.0}, MakeBall,
          BallSituationAt, nullptr, nullptr},
         BallRows, ArenaUse::kBall, true, CoeffFileExtras::kBallClock, "docs/models/ball.md",
         true, StartNeeds::kBallInArena, 20},
        {{"ground", "car driving on flat ground (note 002)", EpisodeKind::kCar, true,
          &GroundLayout(), {0.5, 1.0, 2.0}, MakeGround, nullptr, nullptr, nullptr},
         GroundRows, ArenaUse::kNone, true, CoeffFileExtras::kNone, "docs/models/ground.md", true,
         StartNeeds::kOnFloor, 30},
        // The ground model's rows and recordings, driven by the game's vehicle (issue 37).
        {{"vehicle", "car on the flat floor as the game's vehicle: four wheels' tyre impulses",
          EpisodeKind::kCar, true, &VehicleLayout(), {0.5, 1.0, 2.0}, MakeVehicle, nullptr,
          nullptr, nullptr},
         GroundRows, ArenaUse::kNone, true, CoeffFileExtras::kNone, "docs/models/vehicle.md",
         true, StartNeeds::kOnFloor, 40},
        {{"jump", "car jumping: take-off, held jump, sticky force, double jump, dodge",
          EpisodeKind::kCar, true, &JumpLayout(), {0.25, 0.5, 1.0}, MakeJump, nullptr, nullptr,
          nullptr},
         JumpRows, ArenaUse::kPitchOrFloor, true, CoeffFileExtras::kNone, "docs/models/jump.md",
         true, StartNeeds::kAny, 50},
        {{"wall", "car driving on any surface of the arena: floor, curves, walls",
          EpisodeKind::kCar, true, &SurfaceLayout(), {0.5, 1.0, 2.0}, MakeWall, nullptr, nullptr,
          nullptr},
         WallRows, ArenaUse::kPitch, true, CoeffFileExtras::kNone, "docs/models/wall.md", true,
         StartNeeds::kOnSurface, 60},
        // Rows no sub-model covers yet are labelled (ClassifyRows "car") and left out of the
        // scores.
        {{"car",
          "one car across regimes: surface (floor, ramps, walls), air and jump, switched per tick",
          EpisodeKind::kCar, true, &CarLayout(), {0.5, 1.0, 2.0}, MakeCar, nullptr, CarChecks,
          CarRowLabels},
         CarRows, ArenaUse::kPitchOrFloor, true, CoeffFileExtras::kNone, "docs/models/car.md",
         true, StartNeeds::kAny, 80},
    };
    for (ModelDescriptor& d : FolderModelDescriptors()) all.push_back(std::move(d));
    std::stable_sort(all.begin(), all.end(),
                     [](const ModelDescriptor& a, const ModelDescriptor& b) {
                       return a.order < b.order;
                     });
    return all;
  }();
  return registry;
}

const ModelDescriptor* LookUpDescriptor(const std::string& name) {
  for (const ModelDescriptor& d : Registry())
    if (d.replay.name == name) return &d;
  return nullptr;
}

const ModelDescriptor& FindDescriptor(const std::string& name) {
  if (const ModelDescriptor* d = LookUpDescriptor(name)) return *d;
  throw InputError(name, 0, 0, "unknown model (known: " + RegisteredNamesText() + ")");
}

std::string RegisteredNamesText() {
  std::string known;
  for (const ModelDescriptor& d : Registry()) known += (known.empty() ? "" : ", ") + d.replay.name;
  return known;
}

// The registry's replay sides, in its order.
const std::vector<ModelInfo>& Models() {
  static const std::vector<ModelInfo> models = [] {
    std::vector<ModelInfo> out;
    for (const ModelDescriptor& d : Registry()) out.push_back(d.replay);
    return out;
  }();
  return models;
}

const ModelInfo& FindModel(const std::string& name) {
  for (const ModelInfo& m : Models())
    if (m.name == name) return m;
  return FindDescriptor(name).replay;  // throws: the name is not registered
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const ModelDescriptor& d : Registry()) names.push_back(d.replay.name);
  return names;
}

}  // namespace rlfit
