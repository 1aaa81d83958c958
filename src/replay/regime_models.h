// The row classifiers (RegimeClassifier, src/replay/registry.h) of the models described in
// src/replay/models.cc (a model in its own folder keeps its classifier there), and the flat
// floor's row label they share; ClassifyRows (src/replay/regime.h) says what the labels mean.
#pragma once

#include <vector>

#include "src/io/episode.h"
#include "src/models/arena.h"
#include "src/replay/regime.h"

namespace rlfit {

// The flat floor's label of one car row, as the ground, vehicle and powerslide models read it:
// kAirborne off the ground, kOffFlatFloor off the floor's height band or tilted, kHandbrake
// with the handbrake held, else kCovered.
Regime GroundRegime(const Sample& s);

std::vector<Regime> AerialRows(const Episode& ep, const Arena* arena);
// The ground and vehicle models' rows (the flat floor without the handbrake); `arena` unused.
std::vector<Regime> GroundRows(const Episode& ep, const Arena* arena);
std::vector<Regime> JumpRows(const Episode& ep, const Arena* arena);
std::vector<Regime> WallRows(const Episode& ep, const Arena* arena);
std::vector<Regime> CarRows(const Episode& ep, const Arena* arena);
std::vector<Regime> BallRows(const Episode& ep, const Arena* arena);

}  // namespace rlfit
