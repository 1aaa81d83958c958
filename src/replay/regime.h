// Which recorded rows a model covers. Every model states its regime (aerial: airborne and not
// touching a surface; ground: all wheels on the flat floor; ball: no car touch); replay and
// fit score only covered rows and say how many they left out and why.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/io/episode.h"

namespace rlfit {

// Why a row is or is not covered. kCovered first; the others are reasons to leave a row out.
enum class Regime : std::uint8_t {
  kCovered = 0,
  kOnGround,          // wheels on a surface (aerial model)
  kTouchingSurface,   // body near the arena mesh (aerial model)
  kAirborne,          // no wheel contact (ground model)
  kOffFlatFloor,      // on a wall, curve or ramp (ground model)
  kHandbrake,         // handbrake held: powerslide, not modelled (ground model)
  kCarTouch,          // velocity change no surface explains (ball model)
};
inline constexpr int kRegimeCount = 7;

// Short label for tables and JSON, e.g. "on the ground".
const char* RegimeLabel(Regime regime);

// Per row of `ep`: kCovered where model `model` ("aerial", "ground", "ball") covers it, else
// why not. `data_root` locates the arena mesh for the surface tests.
std::vector<Regime> ClassifyRows(const std::string& model, const Episode& ep,
                                 const std::string& data_root);

// Maximal runs [first, last] (inclusive row indices) of covered rows with at least two rows.
std::vector<std::pair<int, int>> CoveredStretches(const std::vector<Regime>& rows);

}  // namespace rlfit
