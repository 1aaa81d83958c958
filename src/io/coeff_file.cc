// Coefficients JSON: named values with standard errors, integration settings, provenance; a
// strict reader that refuses anything it does not understand.
#include "src/io/coeff_file.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "src/common/error.h"
#include "src/common/number_text.h"
#include "src/io/files.h"

namespace rlfit {
namespace {

using nlohmann::json;

// A number in a message: 9 significant digits, enough to tell a value from a bound near it.
std::string Num(double v) { return MessageNumber(v, 9); }

// Reads one JSON object of a coefficients file, knowing its path for messages.
class Reader {
 public:
  explicit Reader(const std::string& name) : name_(name) {}

  [[noreturn]] void Fail(const std::string& message) const {
    throw InputError(name_, 0, 0, message);
  }

  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  const json& Object(const json& parent, const std::string& path, const std::string& key) const {
    const json& v = Require(parent, path, key);
    if (!v.is_object()) Fail(Join(path, key) + " must be an object, not " + Show(v));
    return v;
  }

  const json& Require(const json& object, const std::string& path,
                      const std::string& key) const {
    const auto it = object.find(key);
    if (it == object.end()) Fail("missing key \"" + Join(path, key) + "\"");
    return *it;
  }

  double Number(const json& object, const std::string& path, const std::string& key) const {
    const json& v = Require(object, path, key);
    if (!v.is_number()) Fail(Join(path, key) + " must be a number, not " + Show(v));
    const double x = v.get<double>();
    if (!std::isfinite(x)) Fail(Join(path, key) + " is not finite");
    return x;
  }

  // Every key of `object` is one of `allowed`.
  void OnlyKeys(const json& object, const std::string& path,
                const std::vector<std::string>& allowed) const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      bool known = false;
      for (const std::string& a : allowed) known = known || a == it.key();
      if (known) continue;
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      Fail("unknown key \"" + Join(path, it.key()) + "\" (allowed: " + list + ")");
    }
  }

  // A short rendering of a value for messages.
  static std::string Show(const json& v) {
    if (v.is_null()) return "null";  // type name and value are the same word
    std::string s = v.dump();
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return v.type_name() + std::string(" ") + s;
  }

 private:
  std::string name_;
};

}  // namespace

CoeffFile ParseCoeffFile(const std::string& name, const std::string& text,
                         const std::string& model, const CoeffLayout& layout) {
  const json j = ParseStrictJson(name, text);
  const Reader r(name);
  if (!j.is_object()) r.Fail("expected a JSON object, not " + Reader::Show(j));
  r.OnlyKeys(j, "",
             {"schema_version", "model", "coefficients", "std_errors", "defaults", "units",
              "integration", "runs_on", "provenance", "fit_report"});

  // An integer, not a float rounded to one (1.7 is not version 1; 1e30 has no int).
  const json& version = r.Require(j, "", "schema_version");
  if (!version.is_number_integer())
    r.Fail("schema_version " + version.dump() + " is not an integer (expected " +
           std::to_string(kCoeffSchemaVersion) + ")");
  if (!(version == kCoeffSchemaVersion))
    r.Fail("schema_version " + version.dump() + " is not supported (expected " +
           std::to_string(kCoeffSchemaVersion) + ")");

  CoeffFile file;
  const json& model_json = r.Require(j, "", "model");
  if (!model_json.is_string()) r.Fail("model must be a string, not " + Reader::Show(model_json));
  file.model = model_json.get<std::string>();
  if (file.model != model)
    r.Fail("coefficients are for model \"" + file.model + "\", not \"" + model + "\"");

  // Objects keyed by exactly the layout's names.
  auto by_name = [&](const std::string& key) -> const json& {
    const json& o = r.Object(j, "", key);
    r.OnlyKeys(o, key, layout.names);
    return o;
  };
  const json& values = by_name("coefficients");
  for (int i = 0; i < layout.size(); ++i) {
    const std::string& n = layout.names[i];
    const double v = r.Number(values, "coefficients", n);
    const CoeffBound b = layout.Bound(i);
    if (!b.Contains(v))
      r.Fail("coefficients." + n + " = " + Num(v) + " is outside its bounds [" + Num(b.lower) +
             ", " + Num(b.upper) + "] " + layout.units[i]);
    file.values.push_back(v);
  }
  if (j.contains("std_errors") && !j["std_errors"].is_null()) {
    const json& errors = by_name("std_errors");
    for (const std::string& n : layout.names) {
      if (r.Require(errors, "std_errors", n).is_null()) {  // not determined by the fit
        file.std_errors.push_back(std::nan(""));
        continue;
      }
      const double e = r.Number(errors, "std_errors", n);
      if (!(e >= 0.0)) r.Fail("std_errors." + n + " = " + Num(e) + " is negative");
      const CoeffBound b = layout.Bound(static_cast<int>(file.std_errors.size()));
      if (StdErrorAboveCap(e, b))
        r.Fail("std_errors." + n + " = " + Num(e) + " is more than " + Num(kMaxStdErrorWidths) +
               " times the width of its bounds [" + Num(b.lower) + ", " + Num(b.upper) + "] " +
               layout.units[file.std_errors.size()] + ": it says nothing (null: not determined)");
      file.std_errors.push_back(e);
    }
  }
  if (j.contains("defaults")) {
    const json& defaults = by_name("defaults");
    for (const std::string& n : layout.names) r.Number(defaults, "defaults", n);
  }
  if (j.contains("units")) {
    const json& units = by_name("units");
    for (int i = 0; i < layout.size(); ++i) {
      const json& u = r.Require(units, "units", layout.names[i]);
      if (!u.is_string() || u.get<std::string>() != layout.units[i])
        r.Fail("units." + layout.names[i] + " is " + u.dump() + ", but the " + model +
               " model's " + layout.names[i] + " is in \"" + layout.units[i] + "\"");
    }
  }

  const json& integ = r.Object(j, "", "integration");
  std::vector<std::string> integ_keys = {"tick_rate_hz", "input_delay_s", "tick_aligned_inputs",
                                         "ticks_per_clock_row", "rotation_update",
                                         "tick_phase"};
  if (model == "ball") integ_keys.push_back("clock");
  r.OnlyKeys(integ, "integration", integ_keys);
  if (model == "ball") {
    // The clock the ball's coefficients were fitted on (kBallClock); a file from the row clock
    // (before 2026-11-26: two equal steps a row) is refused, not converted: its coefficients
    // are tuned to another integration.
    if (!integ.contains("clock"))
      r.Fail("integration.clock is missing: a ball file from before the tick clock (fitted on "
             "the row clock); refit it with rlfit fit ball (integration.clock \"" +
             std::string(kBallClock) + "\")");
    const json& clock = integ["clock"];
    if (!(clock == kBallClock))
      r.Fail("integration.clock is " + clock.dump() + ": the ball runs on the tick clock only (\"" +
             std::string(kBallClock) + "\"); refit the file with rlfit fit ball");
  }
  file.integration.tick_rate_hz = r.Number(integ, "integration", "tick_rate_hz");
  file.integration.input_delay_s = r.Number(integ, "integration", "input_delay_s");
  const json& aligned = r.Require(integ, "integration", "tick_aligned_inputs");
  if (!aligned.is_boolean())
    r.Fail("integration.tick_aligned_inputs must be true or false, not " + Reader::Show(aligned));
  file.integration.tick_aligned_inputs = aligned.get<bool>();
  file.integration.ticks_per_clock_row = r.Number(integ, "integration", "ticks_per_clock_row");
  // Written only when not 0 (files from before it, and every model at phase 0, lack it).
  if (integ.contains("tick_phase"))
    file.integration.tick_phase = r.Number(integ, "integration", "tick_phase");
  const json& rotation = r.Require(integ, "integration", "rotation_update");
  if (!rotation.is_string() ||
      (rotation != "new_omega" && rotation != "average_omega"))
    r.Fail("integration.rotation_update is " + rotation.dump() +
           " (allowed: \"new_omega\", \"average_omega\")");
  file.integration.rotate_with_new_omega = rotation == "new_omega";
  std::string why;
  if (!file.integration.Check(&why)) r.Fail("integration." + why);

  if (j.contains("runs_on")) {
    if (layout.runs_on.empty())
      r.Fail("runs_on: the " + model + " model runs on no other model's coefficients");
    const json& beneath = r.Object(j, "", "runs_on");
    std::vector<std::string> models;
    for (const CoeffLayout::RunsOn& on : layout.runs_on) models.push_back(on.model);
    r.OnlyKeys(beneath, "runs_on", models);
    for (const CoeffLayout::RunsOn& on : layout.runs_on) {
      const std::string path = "runs_on." + on.model;
      const json& values_of = r.Object(beneath, "runs_on", on.model);
      r.OnlyKeys(values_of, path, on.layout->names);
      std::vector<double> v;
      for (int i = 0; i < on.layout->size(); ++i) {
        const std::string& n = on.layout->names[i];
        v.push_back(r.Number(values_of, path, n));
        const CoeffBound b = on.layout->Bound(i);
        if (!b.Contains(v.back()))
          r.Fail(path + "." + n + " = " + Num(v.back()) + " is outside its bounds [" +
                 Num(b.lower) + ", " + Num(b.upper) + "] " + on.layout->units[i]);
      }
      file.runs_on.push_back(std::move(v));
    }
  }
  if (j.contains("provenance")) file.provenance = r.Object(j, "", "provenance");
  if (j.contains("fit_report")) file.fit_report = r.Object(j, "", "fit_report");
  return file;
}

CoeffFile ReadCoeffFile(const std::string& path, const std::string& model,
                        const CoeffLayout& layout) {
  RequireReadableFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, 0, 0, "cannot read file");
  return ParseCoeffFile(path, text.str(), model, layout);
}

CoeffFile DefaultCoeffs(const std::string& model, const CoeffLayout& layout) {
  CoeffFile file;
  file.model = model;
  file.values = layout.defaults;
  file.provenance = {{"source", "seed note defaults"}};
  return file;
}

nlohmann::json CoeffFileToJson(const CoeffFile& file, const CoeffLayout& layout) {
  RLFIT_CHECK(static_cast<int>(file.values.size()) == layout.size(), "coefficient count");
  RLFIT_CHECK(file.std_errors.empty() || static_cast<int>(file.std_errors.size()) == layout.size(),
              "standard error count");
  nlohmann::json j;
  j["schema_version"] = kCoeffSchemaVersion;
  j["model"] = file.model;
  nlohmann::json values, errors, defaults, units;
  for (int i = 0; i < layout.size(); ++i) {
    values[layout.names[i]] = file.values[i];
    defaults[layout.names[i]] = layout.defaults[i];
    units[layout.names[i]] = layout.units[i];
    if (!file.std_errors.empty())
      errors[layout.names[i]] =
          std::isnan(file.std_errors[i]) ? nlohmann::json() : nlohmann::json(file.std_errors[i]);
  }
  j["coefficients"] = values;
  if (!file.std_errors.empty()) j["std_errors"] = errors;
  j["defaults"] = defaults;
  j["units"] = units;
  j["integration"] = {{"tick_rate_hz", file.integration.tick_rate_hz},
                      {"input_delay_s", file.integration.input_delay_s},
                      {"tick_aligned_inputs", file.integration.tick_aligned_inputs},
                      {"ticks_per_clock_row", file.integration.ticks_per_clock_row},
                      {"rotation_update",
                       file.integration.rotate_with_new_omega ? "new_omega" : "average_omega"}};
  if (file.integration.tick_phase != 0.0)
    j["integration"]["tick_phase"] = file.integration.tick_phase;
  if (file.model == "ball") j["integration"]["clock"] = kBallClock;
  if (!file.runs_on.empty()) {
    RLFIT_CHECK(file.runs_on.size() == layout.runs_on.size(), "runs_on model count");
    for (std::size_t m = 0; m < layout.runs_on.size(); ++m) {
      const CoeffLayout& on = *layout.runs_on[m].layout;
      RLFIT_CHECK(static_cast<int>(file.runs_on[m].size()) == on.size(), "runs_on count");
      nlohmann::json values_of;
      for (int i = 0; i < on.size(); ++i) values_of[on.names[i]] = file.runs_on[m][i];
      j["runs_on"][layout.runs_on[m].model] = values_of;
    }
  }
  j["provenance"] = file.provenance;
  j["fit_report"] = file.fit_report;
  return j;
}

void WriteCoeffFile(const std::string& path, const CoeffFile& file, const CoeffLayout& layout) {
  const std::string text = DumpJson(CoeffFileToJson(file, layout), 2) + "\n";
  try {
    ParseCoeffFile(path, text, file.model, layout);
  } catch (const InputError& e) {
    throw InternalError(std::string("refusing to write coefficients the reader would refuse: ") +
                        e.what());
  }
  WriteFileAtomic(path, text);
}

}  // namespace rlfit
