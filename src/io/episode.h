// An episode: a validated, time-stamped sequence of recorded states (and, for the car,
// the controller inputs), the unit every model is replayed and fitted on.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace rlfit {

// Controller inputs of one recorded row. Analog values in [-1, 1].
struct CarInputs {
  double throttle = 0.0;
  double steer = 0.0;
  double pitch = 0.0;
  double yaw = 0.0;
  double roll = 0.0;
  bool jump = false;
  bool boost = false;
  bool handbrake = false;

  // From the eight values in the recordings' column order: throttle, steer, pitch, yaw, roll,
  // jump, boost, handbrake (the last three pressed when nonzero).
  static CarInputs FromColumns(const double* u) {
    CarInputs in;
    in.throttle = u[0];
    in.steer = u[1];
    in.pitch = u[2];
    in.yaw = u[3];
    in.roll = u[4];
    in.jump = u[5] != 0.0;
    in.boost = u[6] != 0.0;
    in.handbrake = u[7] != 0.0;
    return in;
  }
};

// One recorded row, in SI-like game units: uu, uu/s, rad/s, all in the world frame.
struct Sample {
  int source_row = 0;             // 1-based line in the source file
  double t_s = 0.0;               // time since the episode's first row, s (derived, see Episode)
  Eigen::Vector3d x = Eigen::Vector3d::Zero();       // position, uu
  Eigen::Vector3d v = Eigen::Vector3d::Zero();       // velocity, uu/s
  Eigen::Vector3d omega = Eigen::Vector3d::Zero();   // angular velocity (world), rad/s
  Eigen::Matrix3d theta = Eigen::Matrix3d::Identity();  // columns forward, left, up
  // Car only (zero for the ball):
  bool supersonic = false;
  bool jumped = false;
  bool double_jumped = false;
  bool on_ground = false;
  double boost_amount = 0.0;      // 0-100
  CarInputs input;
};

enum class EpisodeKind { kBall, kCar };

// What a car recording says of its handbrake (the facts and the measurement that decide whether
// the handbrake input is read from the file or inferred: ChooseHandbrakeSource).
enum class HandbrakeRecord {
  kColumn,         // the file has a handbrake column (it may hold no press: see powerslide.h)
  kNoColumn,       // a named-column recording without a `handbrake` column
  kNotRecorded,    // declared not recorded (dataset manifest or --handbrake-unrecorded)
};

// A continuous stretch of recording. rows[k+1] follows rows[k] after step_dt_s[k] seconds,
// which spans step_ticks[k] physics ticks of the game (1 tick = 1/120 s nominally).
struct Episode {
  std::string path;    // source file
  std::string name;    // output file name, e.g. "episode_00.csv" or "driving_seg02.csv"
  EpisodeKind kind = EpisodeKind::kCar;
  std::vector<Sample> rows;
  std::vector<double> step_dt_s;  // size rows.size() - 1
  std::vector<int> step_ticks;    // size rows.size() - 1
  // Where row 0 sits on the recording's row clock, in rows, when known: the Lobot 61 Hz car
  // folders are one continuous recording cut into 301-row slices (row 300 of slice k is row 0
  // of slice k+1), so slice NN starts at row 300 * NN, which their dataset manifest declares
  // (or --clock-origin gives). NaN when unknown.
  double clock_origin_rows = std::numeric_limits<double>::quiet_NaN();
  // Index of this episode among the parts of its file when they are named as segments
  // (name_segNN.csv: a timed recording cut at pauses and restarts, a file cut at a gap of
  // dropped frames, any .txt recording); -1 when the file is read as one episode under its own
  // name. Provenance names a segment as "path#name".
  int segment = -1;
  // What the reader has to say about the episode's file, one line each (the same list in every
  // episode of the file; empty for most files): where it cut the file at a gap of dropped
  // frames and why, the parts it left out, columns it did not read, a missing handbrake column.
  std::vector<std::string> notes;
  // Source rows of the file's first and last kept rows (the span of a whole-file episode): a
  // reference prediction of the recording has one row per source row between them.
  int file_first_row = 0;
  int file_last_row = 0;
  // Content identity of the episode: a 64-bit hash of its rows' states, inputs and steps (not of
  // the file's name, bytes or format): the same recording under another name, or rewritten in
  // the named-column format, has the same fingerprint. Fit provenance lists it.
  std::uint64_t fingerprint = 0;
  // Facts the rows do not carry (dataset manifest, command line; recording.h ReadRecording).
  HandbrakeRecord handbrake = HandbrakeRecord::kColumn;
  std::string reference_path;  // an earlier model's prediction of this recording; "" if none
  std::string facts_source;    // where the facts came from ("" when none applied)
  // Boost never ran out in this recording: boost is held on some row and the recorded amount
  // never falls (the Lobot recordings: 100 on every row although boost is pressed; datasets
  // README). Detected by ReadRecording from the rows, never from a name; a rollout of the
  // recording then does not drain boost (CarModelState::unlimited_boost). False for a
  // constructed episode (rlsim predict): boost drains there.
  bool unlimited_boost = false;
  // Source rows inside this episode's span that the reader merged into the row before them
  // (an exact repeat of it), ascending. Outputs repeat that row for them, so a predicted
  // trajectory stays row-aligned with its recording. A repeat belongs to the episode holding
  // the row it repeats, so repeats after an episode's last row are listed too.
  std::vector<int> merged_source_rows;

  int size() const { return static_cast<int>(rows.size()); }
  double duration_s() const { return rows.empty() ? 0.0 : rows.back().t_s; }
};

// An earlier model's open-loop prediction of a recording, one row per source row of the
// recording (the Lobot datasets' prediction_NN.csv, paired by the dataset manifest or
// --reference).
struct BaselinePrediction {
  std::string path;
  std::vector<Eigen::Vector3d> x, v, omega;
};

}  // namespace rlfit
