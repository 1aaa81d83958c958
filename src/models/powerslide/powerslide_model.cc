// The powerslide's registration (src/replay/registry.h): its descriptor, predictor, row
// classifier and checks. Replay layer (compiled into rlfit_replay); CMake finds it by its folder
// (cmake/model_folders.cmake) and the registry calls DescribePowerslide().
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/io/coeff_file.h"
#include "src/io/episode.h"
#include "src/models/powerslide/powerslide.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/episode_steps.h"
#include "src/replay/predictor.h"
#include "src/replay/regime.h"
#include "src/replay/regime_models.h"
#include "src/replay/registry.h"

namespace rlfit {
namespace {

// The powerslide runs on the ground coefficients its file was fitted with (GroundBeneath: the
// step at handbrake level 0) and its own. The handbrake acting on each step is the recorded
// input, or inferred from the motion where the file does not record it (ChooseHandbrakeSource:
// no column, declared unrecorded, or measured). The switch and the level at every row are worked
// out once per episode (PowerslideEpisodeHandbrake).
class PowerslidePredictor : public PreparedPredictor<EpisodeHandbrake> {
 public:
  PowerslidePredictor(GroundCoeffs<double> ground, PowerslideCoeffs<double> coeffs,
                      Integration integ)
      : ground_(ground), coeffs_(coeffs), integ_(integ) {}

  // The handbrake switch acting on each step of `ep` (InferHandbrake), whatever the source.
  std::vector<double> Inferred(const Episode& ep) const {
    return InferHandbrake(ground_, coeffs_, ep, integ_);
  }

  const Integration& integration() const { return integ_; }

 private:
  // The handbrake acting on each step: the inferred switch, or empty where the recording holds
  // the input (ChooseHandbrakeSource); and the level it ramps to at each row.
  EpisodeHandbrake Prepare(const Episode& ep) const override {
    std::vector<double> acting;
    if (ChooseHandbrakeSource(ep) == HandbrakeSource::kInferred) acting = Inferred(ep);
    return PowerslideEpisodeHandbrake(ep, integ_, std::move(acting));
  }

  std::vector<PredictedState> RolloutOn(const Episode& ep, const EpisodeHandbrake& handbrake,
                                        int start, int end) const override {
    const double* a = handbrake.acting_or_null();
    return RolloutRows(PowerslideStartState(ep, start, handbrake.levels), start, end,
                       [&](const PowerslideState<double>& s, int k) {
                         return AdvancePowerslideRow(ground_, coeffs_, s, ep, k, integ_, a);
                       });
  }

  GroundCoeffs<double> ground_;
  PowerslideCoeffs<double> coeffs_;
  Integration integ_;
};

std::unique_ptr<Predictor> MakePowerslide(const CoeffFile& file, const std::string&) {
  return std::make_unique<PowerslidePredictor>(
      GroundBeneath(file, PowerslideLayout()),
      PowerslideCoeffs<double>::FromArray(file.values.data()), file.integration);
}

// Which handbrake drove the rollouts, and how the inferred switch agrees with the motion (the
// rear axle sliding sideways by more than kSlideRearSlipUuS) and, where the file records
// presses, with the recorded input acting on the step; over the covered rows.
std::map<std::string, int> PowerslideChecks(const Episode& ep, const std::vector<Regime>& regimes,
                                            const Predictor& predictor, double,
                                            const std::string&) {
  const auto& p = dynamic_cast<const PowerslidePredictor&>(predictor);
  const std::vector<double> inferred = p.Inferred(ep);
  const std::vector<bool> slip = LargeRearSlip(ep, kSlideRearSlipUuS);
  const bool recorded = ChooseHandbrakeSource(ep) == HandbrakeSource::kRecorded;
  // Why it is inferred, unless declared (the dataset manifest or --handbrake-unrecorded).
  const std::string reason = HandbrakeSourceReason(ep);
  const std::string why = reason.empty() ? "" : " (" + reason + ")";
  bool presses = false;
  for (const Sample& s : ep.rows) presses = presses || s.input.handbrake;
  const Integration& integ = p.integration();
  std::map<std::string, int> out;
  const std::string source = "handbrake source";
  const std::string vs_slip = "inferred handbrake vs rear-axle slip > 250 uu/s";
  const std::string vs_input = "inferred handbrake vs recorded input";
  for (int k = 0; k + 1 < ep.size(); ++k) {
    if (regimes[k] != Regime::kCovered) continue;
    const bool on = inferred[k] > 0.5;
    ++out[source + ".rows"];
    out[source + (recorded ? ".from the recorded column"
                           : ".inferred from the motion" + why)] += 1;
    ++out[vs_slip + ".rows"];
    if (on == slip[k + 1]) ++out[vs_slip + ".agree"];
    else if (on) ++out[vs_slip + ".switch on, no slip"];
    else ++out[vs_slip + ".slip, switch off"];
    if (!presses) continue;
    const bool held = ControlsOver(ep, ep.rows[k].t_s, ep.rows[k + 1].t_s, integ).handbrake > 0.5;
    ++out[vs_input + ".rows"];
    if (on && held) ++out[vs_input + ".held and inferred on"];
    if (on == held) ++out[vs_input + ".agree"];
    else if (on) ++out[vs_input + ".inferred on, not held"];
    else ++out[vs_input + ".held, inferred off"];
  }
  return out;
}

// The ground model's rows with the handbrake held or not.
std::vector<Regime> PowerslideRows(const Episode& ep, const Arena*) {
  std::vector<Regime> rows(ep.rows.size(), Regime::kCovered);
  for (int k = 0; k < ep.size(); ++k) {
    rows[k] = GroundRegime(ep.rows[k]);
    if (rows[k] == Regime::kHandbrake) rows[k] = Regime::kCovered;
  }
  return rows;
}

}  // namespace

ModelDescriptor DescribePowerslide() {
  ModelDescriptor d;
  d.replay = {"powerslide", "car on the flat floor with the handbrake: per-axle tyre forces",
              EpisodeKind::kCar, true, &PowerslideLayout(), {0.5, 1.0, 2.0}, MakePowerslide,
              nullptr, PowerslideChecks, nullptr};
  d.classify = PowerslideRows;
  d.arena = ArenaUse::kNone;  // the flat floor is a plane
  d.has_fit = true;           // fit/models/powerslide_fit.cc
  d.coeff_extras = CoeffFileExtras::kNone;
  d.docs = "docs/models/powerslide.md";
  d.has_results = true;
  d.start = StartNeeds::kOnFloor;
  d.order = 70;  // after wall (60), before car (80)
  return d;
}

}  // namespace rlfit
