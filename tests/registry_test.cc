// Tests of the model registry (src/replay/registry.h): the lists the tools, the docs and
// results/ keep are the registry's, and each descriptor's tags agree with what its model does.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "apps/cli_common.h"
#include "src/common/error.h"
#include "src/io/coeff_file.h"
#include "src/io/files.h"
#include "src/replay/registry.h"
#include "tests/surface_test_util.h"

namespace rlfit {
namespace {

namespace fs = std::filesystem;

const std::string kSource = RLFIT_SOURCE_DIR;

TEST_CASE("registry: one descriptor per name, and the tools' lists are its names in order") {
  std::set<std::string> seen;
  std::vector<std::string> names;
  for (const ModelDescriptor& d : Registry()) {
    INFO(d.replay.name);
    CHECK(seen.insert(d.replay.name).second);
    CHECK(!d.replay.description.empty());
    CHECK(d.replay.layout != nullptr);
    CHECK(d.replay.make_predictor != nullptr);
    CHECK(d.classify != nullptr);
    CHECK(&FindDescriptor(d.replay.name) == &d);
    CHECK(FindModel(d.replay.name).name == d.replay.name);
    names.push_back(d.replay.name);
  }
  CHECK(ModelNames() == names);
  REQUIRE(Models().size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(Models()[i].name == names[i]);
}

TEST_CASE("registry: the models are listed by their order keys, each key once") {
  REQUIRE(!Registry().empty());
  for (std::size_t i = 1; i < Registry().size(); ++i) {
    INFO(Registry()[i].replay.name);
    CHECK(Registry()[i - 1].order < Registry()[i].order);
  }
}

TEST_CASE("registry: every model folder's registration is in the registry, under its name") {
  // src/models/<name>/<name>_model.cc, found by cmake/model_folders.cmake.
  std::set<std::string> folders;
  for (const auto& entry : fs::directory_iterator(kSource + "/src/models")) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && fs::is_regular_file(entry.path() / (name + "_model.cc")))
      folders.insert(name);
  }
  CHECK(folders.count("powerslide") == 1);
  std::set<std::string> described;
  for (const ModelDescriptor& d : FolderModelDescriptors()) described.insert(d.replay.name);
  CHECK(described == folders);
  for (const std::string& name : folders) {
    INFO(name);
    CHECK(LookUpDescriptor(name) != nullptr);
  }
}

TEST_CASE("registry: an unknown name is an input error listing every registered model") {
  const Episode car = testing::HandMadeEpisode(EpisodeKind::kCar, {Sample(), Sample()});
  std::string classify_message, find_message;
  try {
    ClassifyRows("boat", car, testing::FlatFloor());
  } catch (const InputError& e) {
    classify_message = e.what();
  }
  try {
    FindModel("boat");
  } catch (const InputError& e) {
    find_message = e.what();
  }
  CHECK(classify_message.find("unknown model 'boat' (known: " + RegisteredNamesText() + ")") !=
        std::string::npos);
  CHECK(find_message.find("unknown model (known: " + RegisteredNamesText() + ")") !=
        std::string::npos);
  for (const std::string& name : ModelNames()) {
    CHECK(RegisteredNamesText().find(name) != std::string::npos);
  }
}

TEST_CASE("registry: every model refuses recordings of the other kind") {
  const Arena floor = testing::FlatFloor();
  Sample s;
  s.x = {0.0, 0.0, 500.0};
  for (const ModelDescriptor& d : Registry()) {
    INFO(d.replay.name);
    const EpisodeKind other =
        d.replay.kind == EpisodeKind::kCar ? EpisodeKind::kBall : EpisodeKind::kCar;
    CHECK_THROWS_AS(ClassifyRows(d.replay.name, testing::HandMadeEpisode(other, {s, s}), floor),
                    InputError);
    CHECK(ClassifyRows(d.replay.name, testing::HandMadeEpisode(d.replay.kind, {s, s}), floor)
              .size() == 2);
  }
}

TEST_CASE("registry: a model that declares no mesh is classified without one") {
  // ClassifyRows gives such a model no arena (nor needs a datasets root for it): a classifier
  // that reads the mesh would crash here.
  // Rows every mesh-reading classifier looks the mesh up on: on the floor with jump pressed,
  // a take-off (+300 uu/s along up), two rows in the air, a landing.
  std::vector<Sample> rows(4);
  for (int k = 0; k < 4; ++k) {
    rows[k].x = {0.0, 0.0, k == 0 || k == 3 ? 17.01 : 60.0};
    rows[k].theta.setIdentity();
    rows[k].on_ground = k == 0 || k == 3;
    rows[k].t_s = k / 60.0;
  }
  rows[0].input.jump = true;
  rows[1].v = rows[2].v = {0.0, 0.0, 300.0};
  int without_mesh = 0;
  for (const ModelDescriptor& d : Registry()) {
    if (d.arena != ArenaUse::kNone) continue;
    INFO(d.replay.name);
    CHECK(d.classify(testing::HandMadeEpisode(d.replay.kind, rows), nullptr).size() == 4);
    ++without_mesh;
  }
  CHECK(without_mesh > 0);
}

TEST_CASE("registry: every model has its page, and results/ holds exactly the models that say so") {
  std::ifstream index_file(kSource + "/docs/models/README.md");
  const std::string index((std::istreambuf_iterator<char>(index_file)),
                          std::istreambuf_iterator<char>());
  REQUIRE(!index.empty());
  std::set<std::string> with_results;
  for (const ModelDescriptor& d : Registry()) {
    INFO(d.replay.name);
    CHECK(fs::is_regular_file(kSource + "/" + d.docs));
    // A line of the models' table, linking the page.
    const std::string page = fs::path(d.docs).filename().string();
    CHECK(index.find("| `" + d.replay.name + "` | [" + page + "](" + page + ") |") !=
          std::string::npos);
    const std::string results = kSource + "/results/" + d.replay.name;
    CHECK(fs::is_regular_file(results + "/coeffs.json") == d.has_results);
    CHECK(fs::is_regular_file(results + "/baseline.json") == d.has_results);
    if (d.has_results) {
      with_results.insert(d.replay.name);
      // The folder's manifest (ReadOutputFolderListing, src/io/files.h), committed with the
      // three files `rlfit baseline` writes: a fresh clone's folder is then an rlfit output
      // whose files are known, and a later baseline leaves no untracked file (decision 0128).
      std::set<std::string> listed;
      CHECK(ReadOutputFolderListing(results, &listed));
      CHECK(listed == std::set<std::string>{"baseline.json", "coeffs.json", "summary.txt"});
    }
  }
  std::set<std::string> folders;
  for (const auto& entry : fs::directory_iterator(kSource + "/results"))
    if (entry.is_directory()) folders.insert(entry.path().filename().string());
  CHECK(folders == with_results);
}

TEST_CASE("registry: the coefficients file carries what the descriptor says") {
  for (const ModelDescriptor& d : Registry()) {
    INFO(d.replay.name);
    const nlohmann::json j =
        CoeffFileToJson(DefaultCoeffs(d.replay.name, *d.replay.layout), *d.replay.layout);
    CHECK(j["integration"].contains("clock") ==
          (d.coeff_extras == CoeffFileExtras::kBallClock));
  }
}

TEST_CASE("registry: the tools' model argument offers and lists every model") {
  CLI::App app("test");
  std::string model;
  AddModelArgument(&app, &model, "model to replay");
  std::string choices;
  for (const std::string& name : ModelNames()) choices += (choices.empty() ? "{" : ",") + name;
  CHECK(app.help().find(choices + "}") != std::string::npos);
  for (const std::string& name : ModelNames()) {
    INFO(name);
    const char* argv[] = {"test", name.c_str()};
    CHECK_NOTHROW(app.parse(2, argv));
    CHECK(model == name);
  }
  const char* argv[] = {"test", "boat"};
  CHECK_THROWS(app.parse(2, argv));
  // A command without its MODEL names them all (tests/bad_input/cli_missing_model.case).
  char* args[] = {const_cast<char*>("test"), const_cast<char*>("fit")};
  CHECK(WithWhatIsAccepted(&app, "model is required", "", 2, args) ==
        "model is required: one of " + RegisteredNamesText());
}

TEST_CASE("registry: the help's default horizons name every model once, with its own") {
  const std::string text = DefaultHorizonsText();  // "0.5,1,2 (aerial, ground); 0.25,0.5,1 (jump)"
  int listed = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find("; ", begin);
    if (end == std::string::npos) end = text.size();
    const std::string group = text.substr(begin, end - begin);
    const std::size_t open = group.find(" (");
    REQUIRE(open != std::string::npos);
    REQUIRE(group.back() == ')');
    const std::string horizons = group.substr(0, open);
    std::string models = group.substr(open + 2, group.size() - open - 3) + ", ";
    for (std::size_t at = 0; at < models.size();) {
      const std::size_t comma = models.find(", ", at);
      const std::string name = models.substr(at, comma - at);
      INFO(name);
      std::string own;
      for (const double h : FindModel(name).horizons_s)
        own += (own.empty() ? "" : ",") + MessageNumber(h);
      CHECK(own == horizons);
      ++listed;
      at = comma + 2;
    }
    begin = end + 2;
  }
  CHECK(listed == static_cast<int>(Registry().size()));
}

}  // namespace
}  // namespace rlfit
