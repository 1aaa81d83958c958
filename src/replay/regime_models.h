// Each model's row classifier (RegimeClassifier, src/replay/registry.h), as the registry
// binds them to the models' names; ClassifyRows (src/replay/regime.h) says what the labels mean.
#pragma once

#include <vector>

#include "src/io/episode.h"
#include "src/models/arena.h"
#include "src/replay/regime.h"

namespace rlfit {

std::vector<Regime> AerialRows(const Episode& ep, const Arena* arena);
// The ground and vehicle models' rows (the flat floor without the handbrake); `arena` unused.
std::vector<Regime> GroundRows(const Episode& ep, const Arena* arena);
std::vector<Regime> JumpRows(const Episode& ep, const Arena* arena);
std::vector<Regime> PowerslideRows(const Episode& ep, const Arena* arena);  // `arena` unused
std::vector<Regime> WallRows(const Episode& ep, const Arena* arena);
std::vector<Regime> CarRows(const Episode& ep, const Arena* arena);
std::vector<Regime> BallRows(const Episode& ep, const Arena* arena);

}  // namespace rlfit
