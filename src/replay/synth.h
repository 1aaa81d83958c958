// Synthetic episodes: a recorded episode's timing, inputs and first state, with every later
// state replaced by a model's prediction. Used for committed examples and for tests.
#pragma once

#include <string>

#include "src/io/episode.h"
#include "src/replay/predictor.h"

namespace rlfit {

// A copy of the first `rows` rows of `recorded` (all if rows <= 0) whose states after row 0
// are the open-loop prediction of `predictor`.
Episode Resimulate(const Episode& recorded, const Predictor& predictor, int rows);

// Writes `ep` in its recording format (25-column car or 13-column ball), atomically.
void WriteEpisodeCsv(const std::string& path, const Episode& ep);

}  // namespace rlfit
