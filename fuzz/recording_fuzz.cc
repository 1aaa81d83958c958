// libFuzzer target: the recording reader (ParseRecording) on arbitrary bytes, read as a
// .csv episode and as a .txt recording, and the baseline-prediction reader. Anything but an
// InputError escaping, a sanitizer report, an episode breaking the invariants below, or a
// different outcome once a final newline is added is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "src/common/error.h"
#include "src/io/recording.h"

namespace {

// What every episode ParseRecording returns must satisfy.
void CheckEpisodes(const std::vector<rlfit::Episode>& episodes) {
  FUZZ_CHECK(!episodes.empty());
  std::set<int> lines;  // source rows kept or merged: each line at most once
  int previous_row = 0;
  for (std::size_t i = 0; i < episodes.size(); ++i) {
    const rlfit::Episode& ep = episodes[i];
    FUZZ_CHECK(ep.size() >= 2);
    FUZZ_CHECK(ep.step_dt_s.size() + 1 == ep.rows.size());
    FUZZ_CHECK(ep.step_ticks.size() + 1 == ep.rows.size());
    FUZZ_CHECK(ep.rows[0].t_s == 0.0);
    for (int k = 0; k + 1 < ep.size(); ++k) {
      FUZZ_CHECK(ep.step_dt_s[k] > 0.0 && ep.step_dt_s[k] <= 1.0);
      FUZZ_CHECK(ep.step_ticks[k] >= 1 && ep.step_ticks[k] <= 120);
      FUZZ_CHECK(ep.rows[k + 1].t_s > ep.rows[k].t_s);
    }
    for (const rlfit::Sample& s : ep.rows) {
      FUZZ_CHECK(s.source_row > previous_row);
      previous_row = s.source_row;
      FUZZ_CHECK(lines.insert(s.source_row).second);
      FUZZ_CHECK(s.x.allFinite() && s.v.allFinite() && s.omega.allFinite());
      FUZZ_CHECK(s.theta.allFinite());
      FUZZ_CHECK(std::abs(s.x.x()) <= 8192.0 && std::abs(s.x.y()) <= 12000.0 &&
                 std::abs(s.x.z()) <= 4088.0);
    }
    // Merged rows follow the episode's first row and precede the next episode's.
    const int next_first = i + 1 < episodes.size() ? episodes[i + 1].rows[0].source_row : 1 << 30;
    int previous_merged = 0;
    for (int m : ep.merged_source_rows) {
      FUZZ_CHECK(m > previous_merged);
      previous_merged = m;
      FUZZ_CHECK(m > ep.rows[0].source_row && m < next_first);
      FUZZ_CHECK(lines.insert(m).second);
    }
    if (!std::isnan(ep.clock_origin_rows)) FUZZ_CHECK(ep.clock_origin_rows >= 0.0);
  }
}

// What ParseRecording makes of the bytes, checked, as a comparable summary.
std::string Outcome(const char* name, const char* data, std::size_t size) {
  try {
    const std::vector<rlfit::Episode> episodes = rlfit::ParseRecording(name, data, size);
    CheckEpisodes(episodes);
    std::string out;
    for (const rlfit::Episode& ep : episodes) {
      out += ep.name + " " + std::to_string(ep.size()) + " " +
             std::to_string(ep.rows.front().source_row) + ".." +
             std::to_string(ep.rows.back().source_row) + " merged " +
             std::to_string(ep.merged_source_rows.size()) + "\n";
    }
    return out;
  } catch (const rlfit::InputError& e) {
    return std::string("error: ") + e.what();
  }
}

// The reader's error for a last row without an end of line (src/io/recording.cc).
constexpr const char* kCutShort = "truncated: the file does not end with a newline";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, std::size_t size) {
  const char* data = reinterpret_cast<const char*>(bytes);
  for (const char* name : {"episode_01.csv", "recording.txt"}) {
    const std::string outcome = Outcome(name, data, size);
    // A text ending in '\n' is never called cut short. Without one, a final newline changes
    // nothing unless the last row was refused as cut short (a '{...}' row of the .txt exports
    // needs none; any other last row does).
    const bool cut = outcome.find(kCutShort) != std::string::npos;
    if (size > 0 && data[size - 1] == '\n') FUZZ_CHECK(!cut);
    if (size > 0 && data[size - 1] != '\n' && !cut) {
      const std::string terminated = std::string(data, size) + "\n";
      FUZZ_CHECK(Outcome(name, terminated.data(), terminated.size()) == outcome);
    }
  }
  try {
    const rlfit::BaselinePrediction p =
        rlfit::ParseBaselinePrediction("prediction_01.csv", data, size);
    FUZZ_CHECK(p.x.size() == p.v.size() && p.v.size() == p.omega.size());
  } catch (const rlfit::InputError&) {
  }
  return 0;
}
