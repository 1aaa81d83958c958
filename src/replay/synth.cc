// Resimulated (synthetic) episodes.
#include "src/replay/synth.h"

#include <limits>

#include "src/io/episode_writer.h"
#include "src/io/files.h"

namespace rlfit {

Episode Resimulate(const Episode& recorded, const Predictor& predictor, int rows) {
  Episode ep = recorded;
  // The CSV formats carry no clock, so simulate as the written file will be replayed.
  ep.clock_origin_rows = std::numeric_limits<double>::quiet_NaN();
  if (rows > 0 && rows < ep.size()) {
    ep.rows.resize(rows);
    ep.step_dt_s.resize(rows - 1);
    ep.step_ticks.resize(rows - 1);
  }
  const std::vector<PredictedState> predicted = predictor.Rollout(ep, 0, ep.size() - 1);
  for (int k = 1; k < ep.size(); ++k) {
    ep.rows[k].x = predicted[k].x;
    ep.rows[k].v = predicted[k].v;
    ep.rows[k].omega = predicted[k].omega;
    if (ep.kind == EpisodeKind::kCar) ep.rows[k].theta = predicted[k].theta;
  }
  return ep;
}

void WriteEpisodeCsv(const std::string& path, const Episode& ep) {
  WriteFileAtomic(path, ep.kind == EpisodeKind::kCar ? CarEpisodeToCsv(ep) : BallEpisodeToCsv(ep));
}

}  // namespace rlfit
