// The coefficients JSON that `rlfit fit` writes and `rlsim replay --coeffs` reads.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/common/coeff_layout.h"

namespace rlfit {

inline constexpr int kCoeffSchemaVersion = 1;

// integration.clock of a ball file: the clock its coefficients were fitted on. "ticks": whole
// physics ticks, each recorded row the blend of the two ticks around it (src/models/ball.h, the
// only ball integration since 2026-11-26). The other models integrate per row and have no clock
// key. (schema_version stays 1: the key is new only in ball files, which the reader refuses
// without it.)
inline constexpr const char* kBallClock = "ticks";

// The widest standard error a coefficients file may state, in widths of the coefficient's
// bounds (upper - lower). A fit's sandwich errors are linear estimates and can exceed the
// range of a coefficient the data barely determines (the widest committed: car
// ground.turn_drag_arm_backward, 1.96 widths), so the cap leaves a 50x margin; beyond it an
// error says nothing (1e308 was accepted, and as --init's --step-sigmas scale ended the fit after
// one step). `rlfit fit` writes null (not determined) for such an error.
inline constexpr double kMaxStdErrorWidths = 100.0;

// True when `std_error` is above kMaxStdErrorWidths widths of `bound` (a bound of infinite width
// caps nothing; NaN, "not determined", is never above). The one test behind both the reader's
// refusal and `rlfit fit` writing null.
inline bool StdErrorAboveCap(double std_error, const CoeffBound& bound) {
  const double width = bound.upper - bound.lower;
  return std::isfinite(width) && std_error > kMaxStdErrorWidths * width;
}

struct CoeffFile {
  std::string model;                 // "aerial", "ball", "ground"
  std::vector<double> values;        // flat, in the model's CoeffLayout order
  // Same order; empty when not fitted. NaN where the fit could not determine one (JSON null:
  // the Jacobian or covariance was not finite, or the residuals do not depend on it); 0 for a
  // coefficient held constant. Readers of this field must treat NaN as "unknown".
  std::vector<double> std_errors;
  Integration integration;
  // The coefficients of the models the layout runs on (CoeffLayout::runs_on), in its order, as
  // the file was fitted with: JSON "runs_on": {"ground": {name: value, ...}}. Empty when the
  // file carries none (the seed notes', a file written before files carried them).
  std::vector<std::vector<double>> runs_on;
  nlohmann::json provenance = nlohmann::json::object();  // data, options, git revision
  nlohmann::json fit_report = nlohmann::json::object();  // costs, timings, held-out errors
};

// Strict parse of the text of a coefficients file; `name` is the file named in errors. Every
// departure is an InputError naming the file and the key (and the value and its allowed range):
//  - invalid JSON, a number out of the double range (1e999), a duplicate key anywhere, nesting
//    deeper than 64 levels;
//  - schema_version not the integer kCoeffSchemaVersion (1.7 and 1e30 are refused, not rounded);
//  - a top-level key other than schema_version, model, coefficients, std_errors, defaults,
//    units, integration, runs_on, provenance, fit_report; `model` other than `model`;
//  - runs_on (optional) for a layout that runs on no other model, or not an object holding
//    exactly the layout's runs_on models, each exactly that model's names with numbers inside
//    its bounds;
//  - coefficients (and std_errors, defaults, units when present) not exactly the layout's names;
//    a coefficient that is not a number or lies outside its CoeffBound; a standard error that is
//    not a finite number >= 0 or null, or is above kMaxStdErrorWidths widths of its bounds; a
//    unit that differs from the layout's;
//  - integration not exactly tick_rate_hz, input_delay_s, tick_aligned_inputs,
//    ticks_per_clock_row, rotation_update ("new_omega" or "average_omega") and optionally
//    tick_phase (0 when absent), or a setting outside its range (Integration::Check); for the
//    ball also `clock`, which must be kBallClock
//    (missing: a file from the row clock, refused with a line saying to refit);
//  - provenance or fit_report not an object.
// Never throws anything else on any input (fuzz/coeff_file_fuzz.cc).
CoeffFile ParseCoeffFile(const std::string& name, const std::string& text,
                         const std::string& model, const CoeffLayout& layout);

// Reads the file and parses it with ParseCoeffFile; InputError if it cannot be read.
CoeffFile ReadCoeffFile(const std::string& path, const std::string& model,
                        const CoeffLayout& layout);

// The seed note's coefficients for a model, with Integration's default settings (the model's
// own input timing is the replay layer's: SeedCoeffs, src/replay/coeff_choice.h).
CoeffFile DefaultCoeffs(const std::string& model, const CoeffLayout& layout);

nlohmann::json CoeffFileToJson(const CoeffFile& file, const CoeffLayout& layout);

// Atomic write of CoeffFileToJson. The text is first parsed back with ParseCoeffFile: a file the
// reader would refuse is never written (InternalError: the writer produced it, a bug).
void WriteCoeffFile(const std::string& path, const CoeffFile& file, const CoeffLayout& layout);

}  // namespace rlfit
