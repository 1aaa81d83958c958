// Tests of the strict coefficients reader: every rule of ParseCoeffFile, the bounds of every
// model's layout, and the committed results/*/coeffs.json.
#include <cmath>
#include <limits>
#include <string>

#include <doctest/doctest.h>

#include "src/common/error.h"
#include "src/io/coeff_file.h"
#include "src/models/aerial.h"
#include "src/models/ball.h"
#include "src/models/car.h"
#include "src/models/ground.h"
#include "src/models/jump.h"
#include "src/models/powerslide/powerslide.h"
#include "src/models/surface.h"
#include "src/replay/coeff_choice.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

using nlohmann::json;

// A valid aerial file as JSON (the writer's output for the seed defaults with std errors).
json ValidAerial() {
  CoeffFile file = DefaultCoeffs("aerial", AerialLayout());
  file.std_errors.assign(AerialLayout().size(), 0.01);
  return CoeffFileToJson(file, AerialLayout());
}

// The InputError message of parsing `text` as aerial coefficients ("" if none).
std::string ErrorOf(const std::string& text) {
  try {
    ParseCoeffFile("C.json", text, "aerial", AerialLayout());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
std::string ErrorOf(const json& j) { return ErrorOf(j.dump()); }
std::string ErrorOf(const char* text) { return ErrorOf(std::string(text)); }

// The error names the file and contains every one of `parts`.
void CheckError(const std::string& error, const std::vector<std::string>& parts) {
  INFO(error);
  REQUIRE(!error.empty());
  CHECK(error.rfind("C.json", 0) == 0);
  for (const std::string& p : parts) CHECK(error.find(p) != std::string::npos);
}

TEST_CASE("a valid file reads, and what was written reads back") {
  const json j = ValidAerial();
  const CoeffFile f = ParseCoeffFile("C.json", j.dump(), "aerial", AerialLayout());
  CHECK(f.values == AerialLayout().defaults);
  CHECK(f.std_errors == std::vector<double>(AerialLayout().size(), 0.01));
  CHECK(f.integration.rotate_with_new_omega);
  json avg = j;
  avg["integration"]["rotation_update"] = "average_omega";
  CHECK_FALSE(ParseCoeffFile("C.json", avg.dump(), "aerial", AerialLayout())
                  .integration.rotate_with_new_omega);
  // Optional parts may be absent; std_errors may be null (not fitted).
  json minimal = j;
  for (const char* k : {"std_errors", "defaults", "units", "provenance", "fit_report"})
    minimal.erase(k);
  CHECK(ParseCoeffFile("C.json", minimal.dump(), "aerial", AerialLayout()).std_errors.empty());
  minimal["std_errors"] = nullptr;
  CHECK(ParseCoeffFile("C.json", minimal.dump(), "aerial", AerialLayout()).std_errors.empty());
}

TEST_CASE("a standard error the fit could not determine is null, read as NaN, written as null") {
  CoeffFile file = DefaultCoeffs("aerial", AerialLayout());
  file.std_errors.assign(AerialLayout().size(), 0.01);
  file.std_errors[4] = std::nan("");
  const json j = CoeffFileToJson(file, AerialLayout());
  CHECK(j["std_errors"]["D_p"].is_null());
  const CoeffFile back = ParseCoeffFile("C.json", j.dump(), "aerial", AerialLayout());
  CHECK(std::isnan(back.std_errors[4]));
  CHECK(back.std_errors[3] == 0.01);
}

TEST_CASE("unknown rotation_update is refused") {
  json j = ValidAerial();
  j["integration"]["rotation_update"] = "newomega";
  CheckError(ErrorOf(j), {"integration.rotation_update", "newomega", "new_omega",
                          "average_omega"});
  j["integration"]["rotation_update"] = 1;
  CheckError(ErrorOf(j), {"integration.rotation_update"});
}

TEST_CASE("integration settings outside their ranges are refused, naming key, value, range") {
  struct Case {
    const char* key;
    double value;
  };
  for (const Case& c : {Case{"tick_rate_hz", 0.0}, Case{"tick_rate_hz", -120.0},
                        Case{"tick_rate_hz", 1e9}, Case{"input_delay_s", -0.01},
                        Case{"input_delay_s", 2.0}, Case{"ticks_per_clock_row", 0.0},
                        Case{"ticks_per_clock_row", -1.0}, Case{"ticks_per_clock_row", 1e6}}) {
    json j = ValidAerial();
    j["integration"][c.key] = c.value;
    CAPTURE(c.key);
    CAPTURE(c.value);
    char value[32];
    std::snprintf(value, sizeof(value), "%.9g", c.value);
    CheckError(ErrorOf(j), {std::string("integration.") + c.key, value, "outside ["});
  }
  json j = ValidAerial();
  j["integration"]["tick_aligned_inputs"] = 1;
  CheckError(ErrorOf(j), {"integration.tick_aligned_inputs", "true or false"});
  j = ValidAerial();
  j["integration"]["tick_rate_hz"] = "120";
  CheckError(ErrorOf(j), {"integration.tick_rate_hz must be a number"});
}

TEST_CASE("Integration::Check: the defaults pass, each range holds, NaN fails") {
  std::string why;
  CHECK(Integration{}.Check(&why));
  Integration i;
  i.tick_rate_hz = std::nan("");
  CHECK_FALSE(i.Check(&why));
  CHECK(why.find("tick_rate_hz") != std::string::npos);
  i = Integration{};
  i.tick_rate_hz = kMaxTickRateHz;
  i.input_delay_s = kMaxInputDelayS;
  i.ticks_per_clock_row = kMaxTicksPerClockRow;
  CHECK(i.Check(&why));  // both ends inclusive
}

TEST_CASE("SubstepsForRow: rounds, at least 1, at most kMaxSubstepsPerRow, NaN safe") {
  CHECK(SubstepsForRow(1.0 / 60.96, 120.0) == 2);
  CHECK(SubstepsForRow(1.0 / 120.0, 120.0) == 1);
  CHECK(SubstepsForRow(0.0, 120.0) == 1);
  CHECK(SubstepsForRow(-1.0, 120.0) == 1);
  CHECK(SubstepsForRow(std::nan(""), 120.0) == 1);
  CHECK(SubstepsForRow(1.0, 1e9) == kMaxSubstepsPerRow);
  CHECK(SubstepsForRow(1e300, 1e300) == kMaxSubstepsPerRow);
}

TEST_CASE("extra keys are refused at every level") {
  json j = ValidAerial();
  j["comment"] = "hi";
  CheckError(ErrorOf(j), {"unknown key \"comment\""});
  j = ValidAerial();
  j["coefficients"]["D_q"] = 1.0;
  CheckError(ErrorOf(j), {"unknown key \"coefficients.D_q\""});
  j = ValidAerial();
  j["integration"]["tick_rate"] = 120.0;
  CheckError(ErrorOf(j), {"unknown key \"integration.tick_rate\""});
  j = ValidAerial();
  j["std_errors"]["x"] = 1.0;
  CheckError(ErrorOf(j), {"unknown key \"std_errors.x\""});
}

TEST_CASE("duplicate keys are refused, not silently resolved to the last") {
  const std::string text = ValidAerial().dump();
  // Insert a second D_p in front of the first.
  std::string dup = text;
  const std::size_t at = dup.find("\"D_p\"");
  REQUIRE(at != std::string::npos);
  dup.insert(at, "\"D_p\":-1.0,");
  CheckError(ErrorOf(dup), {"duplicate key \"coefficients.D_p\""});
  std::string top = text;
  top.insert(1, "\"model\":\"aerial\",");
  CheckError(ErrorOf(top), {"duplicate key \"model\""});
  // The same key in different objects is fine (D_p is in coefficients, std_errors, ...).
  CHECK(ErrorOf(text).empty());
}

TEST_CASE("schema_version must be the integer 1") {
  for (const char* v : {"1.7", "1e30", "1.0", "\"1\"", "2", "-1", "18446744073709551615"}) {
    std::string text = ValidAerial().dump();
    const std::size_t at = text.find("\"schema_version\":1");
    REQUIRE(at != std::string::npos);
    const std::string key = "\"schema_version\":";
    text.replace(at, key.size() + 1, key + v);
    CAPTURE(v);
    CheckError(ErrorOf(text), {"schema_version"});
  }
}

TEST_CASE("numbers beyond double (1e999) are an InputError, not an internal error") {
  std::string text = ValidAerial().dump();
  const std::size_t at = text.find("\"D_p\":");
  text.insert(at + 6, "1e999,\"x\":");
  CheckError(ErrorOf(text), {"invalid JSON", "1e999"});
  CheckError(ErrorOf("{\"a\":-1e999}"), {"invalid JSON"});
}

TEST_CASE("invalid JSON names line and column; deep nesting is refused") {
  CheckError(ErrorOf("{\n  \"schema_version\": 1,\n  x\n}"), {"row 3", "invalid JSON"});
  CheckError(ErrorOf(""), {"invalid JSON"});
  CheckError(ErrorOf(std::string(100000, '[')), {"nested deeper"});
  CheckError(ErrorOf("[1]"), {"expected a JSON object"});
}

TEST_CASE("coefficients outside their bounds are refused, naming key, value and bounds") {
  json j = ValidAerial();
  j["coefficients"]["D_p"] = 1e100;
  CheckError(ErrorOf(j), {"coefficients.D_p = 1e+100", "outside its bounds [-50, 0] 1/s"});
  j["coefficients"]["D_p"] = 1e20;
  CheckError(ErrorOf(j), {"coefficients.D_p = 1e+20"});
  j["coefficients"]["D_p"] = 0.5;  // damping that pumps energy
  CheckError(ErrorOf(j), {"coefficients.D_p = 0.5"});
  j = ValidAerial();
  j["coefficients"]["T_y"] = -9.0;  // wrong sign
  CheckError(ErrorOf(j), {"coefficients.T_y"});
  j = ValidAerial();
  j["coefficients"]["T_r"] = "fast";
  CheckError(ErrorOf(j), {"coefficients.T_r must be a number"});
  j = ValidAerial();
  j["coefficients"].erase("D_y");
  CheckError(ErrorOf(j), {"missing key \"coefficients.D_y\""});

  // The other models too.
  auto ball_error = [](double restitution) {
    CoeffFile f = DefaultCoeffs("ball", BallLayout());
    json b = CoeffFileToJson(f, BallLayout());
    b["coefficients"]["restitution"] = restitution;
    try {
      ParseCoeffFile("B.json", b.dump(), "ball", BallLayout());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(ball_error(1.0).empty());
  CHECK(ball_error(1.2).find("coefficients.restitution = 1.2") != std::string::npos);
  CHECK(ball_error(-0.1).find("coefficients.restitution") != std::string::npos);
}

TEST_CASE("a ball file says its clock: ticks; a row-clock file or one without it is refused") {
  const CoeffFile f = DefaultCoeffs("ball", BallLayout());
  const json written = CoeffFileToJson(f, BallLayout());
  CHECK(written["integration"]["clock"] == "ticks");
  auto error = [](const json& b) {
    try {
      ParseCoeffFile("C.json", b.dump(), "ball", BallLayout());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error(written).empty());
  json b = written;
  b["integration"].erase("clock");
  CheckError(error(b), {"integration.clock is missing", "row clock",
                        "rlfit fit ball"});
  b["integration"]["clock"] = "rows";
  CheckError(error(b), {"integration.clock is \"rows\"", "tick clock only"});
  // The other models integrate per row: no clock key is written, and one is refused.
  json a = ValidAerial();
  CHECK_FALSE(CoeffFileToJson(ParseCoeffFile("A.json", a.dump(), "aerial", AerialLayout()),
                              AerialLayout())["integration"]
                  .contains("clock"));
  a["integration"]["clock"] = "ticks";
  CheckError(ErrorOf(a), {"integration.clock"});
}

TEST_CASE("standard errors must be finite and >= 0 (or null)") {
  json j = ValidAerial();
  j["std_errors"]["T_r"] = -0.1;
  CheckError(ErrorOf(j), {"std_errors.T_r", "negative"});
  j["std_errors"]["T_r"] = "big";
  CheckError(ErrorOf(j), {"std_errors.T_r must be a number"});
  j = ValidAerial();
  j["std_errors"].erase("T_r");
  CheckError(ErrorOf(j), {"missing key \"std_errors.T_r\""});
  // At most kMaxStdErrorWidths (100) widths of the coefficient's bounds (D_p in [-50, 0]);
  // 0 (held) and the limit itself pass.
  j = ValidAerial();
  j["std_errors"]["D_p"] = 1e308;
  CheckError(ErrorOf(j),
             {"std_errors.D_p = 1e+308 is more than 100 times the width of its bounds [-50, 0] 1/s"});
  j["std_errors"]["D_p"] = 5000.001;
  CheckError(ErrorOf(j), {"std_errors.D_p", "more than 100 times"});
  for (const double ok : {0.0, 5000.0}) {
    j["std_errors"]["D_p"] = ok;
    CHECK(ErrorOf(j).empty());
  }
}

TEST_CASE("StdErrorAboveCap: the one cap of the reader and the fit, at 100 widths exactly") {
  // D_p in [-50, 0]: width 50, so 5000 is the last error that says something.
  const CoeffBound d_p{-50.0, 0.0};
  CHECK_FALSE(StdErrorAboveCap(0.0, d_p));
  CHECK_FALSE(StdErrorAboveCap(5000.0, d_p));
  CHECK(StdErrorAboveCap(5000.001, d_p));
  CHECK(StdErrorAboveCap(std::numeric_limits<double>::infinity(), d_p));
  CHECK_FALSE(StdErrorAboveCap(std::nan(""), d_p));  // not determined: null, never capped
  const CoeffBound open{0.0, std::numeric_limits<double>::infinity()};
  CHECK_FALSE(StdErrorAboveCap(1e308, open));  // an unbounded coefficient has no cap
}

TEST_CASE("units that differ from the model's, a wrong model, wrong types are refused") {
  json j = ValidAerial();
  j["units"]["D_p"] = "rad/s";
  CheckError(ErrorOf(j), {"units.D_p", "1/s"});
  j = ValidAerial();
  j["model"] = "ball";
  CheckError(ErrorOf(j), {"model \"ball\""});
  j["model"] = 3;
  CheckError(ErrorOf(j), {"model must be a string"});
  j = ValidAerial();
  j["coefficients"] = json::array();
  CheckError(ErrorOf(j), {"coefficients must be an object"});
  j = ValidAerial();
  j["provenance"] = "me";
  CheckError(ErrorOf(j), {"provenance must be an object"});
}

TEST_CASE("every model's layout has a bound per coefficient, holding its default") {
  for (const CoeffLayout* layout : {&AerialLayout(), &GroundLayout(), &BallLayout()}) {
    REQUIRE(layout->bounds.size() == layout->names.size());
    REQUIRE(layout->units.size() == layout->names.size());
    for (int i = 0; i < layout->size(); ++i) {
      INFO(layout->names[i]);
      CHECK(layout->bounds[i].lower < layout->bounds[i].upper);
      CHECK(std::isfinite(layout->bounds[i].lower));
      CHECK(std::isfinite(layout->bounds[i].upper));
      CHECK(layout->bounds[i].Contains(layout->defaults[i]));
    }
  }
}

TEST_CASE("the committed results/*/coeffs.json read, their values inside the bounds") {
  struct Model {
    const char* name;
    const CoeffLayout* layout;
  };
  for (const Model& m : {Model{"aerial", &AerialLayout()}, Model{"ground", &GroundLayout()},
                         Model{"ball", &BallLayout()}}) {
    CAPTURE(m.name);
    const CoeffFile f = ReadCoeffFile(
        std::string(RLFIT_SOURCE_DIR) + "/results/" + m.name + "/coeffs.json", m.name, *m.layout);
    CHECK(static_cast<int>(f.values.size()) == m.layout->size());
    CHECK(static_cast<int>(f.std_errors.size()) == m.layout->size());
  }
}

TEST_CASE("a wall or powerslide file carries the ground coefficients it runs on") {
  for (const CoeffLayout* layout : {&SurfaceLayout(), &PowerslideLayout()}) {
    const std::string model = layout == &SurfaceLayout() ? "wall" : "powerslide";
    CAPTURE(model);
    REQUIRE(layout->runs_on.size() == 1);
    CHECK(layout->runs_on[0].model == "ground");
    // Written and read back; GroundBeneath drives with the carried values, not the committed.
    CoeffFile file = DefaultCoeffs(model, *layout);
    std::vector<double> ground = GroundLayout().defaults;
    ground[0] = 1234.5;  // throttle_accel, not the committed fit's
    file.runs_on = {ground};
    const json j = CoeffFileToJson(file, *layout);
    CHECK(j["runs_on"]["ground"]["throttle_accel"] == 1234.5);
    const CoeffFile back = ParseCoeffFile("C.json", j.dump(), model, *layout);
    REQUIRE(back.runs_on.size() == 1);
    CHECK(back.runs_on[0] == ground);
    CHECK(GroundBeneath(back, *layout).throttle_accel == 1234.5);
    // A file without them (the seed, an older file) runs on the committed ground fit.
    json old = j;
    old.erase("runs_on");
    const CoeffFile bare = ParseCoeffFile("C.json", old.dump(), model, *layout);
    CHECK(bare.runs_on.empty());
    CHECK(GroundBeneath(bare, *layout).throttle_accel == CommittedGroundCoeffs().throttle_accel);
    // Refused: another model's key, a missing or extra name, a value out of its bounds.
    auto error_of = [&](const json& bad) {
      try {
        ParseCoeffFile("C.json", bad.dump(), model, *layout);
      } catch (const InputError& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    json other = j;
    other["runs_on"]["aerial"] = other["runs_on"]["ground"];
    CHECK(error_of(other).find("unknown key \"runs_on.aerial\"") != std::string::npos);
    json missing = j;
    missing["runs_on"]["ground"].erase("kappa_0");
    CHECK(error_of(missing).find("runs_on.ground.kappa_0") != std::string::npos);
    json outside = j;
    outside["runs_on"]["ground"]["throttle_accel"] = -1.0;
    CHECK(error_of(outside).find("runs_on.ground.throttle_accel = -1 is outside") !=
          std::string::npos);
  }
  // A model that runs on nothing refuses the key.
  json aerial = ValidAerial();
  aerial["runs_on"] = json::object();
  CheckError(ErrorOf(aerial), {"runs_on", "aerial model runs on no other"});
}

TEST_CASE("the committed wall and powerslide fits carry the ground fit they run on") {
  for (const char* model : {"wall", "powerslide"}) {
    CAPTURE(model);
    const CoeffFile f = LoadCoefficients(FindModel(model), "");
    REQUIRE(f.runs_on.size() == 1);
    CHECK(f.runs_on[0].size() == static_cast<std::size_t>(GroundLayout().size()));
  }
}

// The car's defaults for its surface, jump and vehicle sets are the committed fits of the
// wall, jump and vehicle models, written into the build by cmake/committed_fits.cmake and
// placed by name in CarLayout (src/models/car.cc): a misplaced name or a value that does not
// parse back to the file's double fails here.
TEST_CASE("the car's defaults are the committed wall, jump and vehicle fits") {
  const std::vector<double>& car = CarLayout().defaults;
  const CoeffFile wall = LoadCoefficients(FindModel("wall"), "");
  for (int i = 0; i < SurfaceLayout().size(); ++i)
    CHECK(car[CarCoeffs<double>::kWallOffset + i] == wall.values[i]);
  const CoeffFile jump = LoadCoefficients(FindModel("jump"), "");
  for (int i = AerialLayout().size(); i < JumpLayout().size(); ++i)  // the jump's own entries
    CHECK(car[CarCoeffs<double>::kJumpOffset + i - AerialLayout().size()] == jump.values[i]);
  const CoeffFile vehicle = LoadCoefficients(FindModel("vehicle"), "");
  for (int i = 0; i < VehicleLayout().size(); ++i)
    CHECK(car[CarCoeffs<double>::kVehicleOffset + i] == vehicle.values[i]);
}

TEST_CASE("ReadCoeffFile: a missing file is an InputError") {
  CHECK_THROWS_AS(ReadCoeffFile("/no/such/coeffs.json", "aerial", AerialLayout()), InputError);
}

TEST_CASE("the writer refuses to write a file the reader would refuse") {
  testing::TempDir dir;
  CoeffFile f = DefaultCoeffs("aerial", AerialLayout());
  f.values[4] = 1e100;
  CHECK_THROWS_AS(WriteCoeffFile(dir.path() + "/c.json", f, AerialLayout()), InternalError);
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/c.json"));
}

}  // namespace
}  // namespace rlfit
