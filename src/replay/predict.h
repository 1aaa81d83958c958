// `rlsim predict`: runs a model forward from given initial states (and, for the car, a control
// sequence) for a given duration, through the same Predictor replay uses, over a constructed
// episode whose rows are the output rows.
#pragma once

#include <Eigen/Core>
#include <iosfwd>
#include <string>
#include <vector>

#include "src/common/constants.h"
#include "src/io/episode.h"
#include "src/models/arena.h"
#include "src/replay/episode_steps.h"
#include "src/replay/predictor.h"

namespace rlfit {

// Longest prediction, s: nothing runs unbounded (72000 car rows at the default spacing).
inline constexpr double kMaxPredictDurationS = 600.0;
// Most output rows of one run, over all states (about 1 GB of CSV).
inline constexpr long kMaxPredictRows = 5000000;
// Largest output row spacing, s.
inline constexpr double kMaxPredictDtS = 1.0;
// Car models: a row of dt_s is split into n = max(1, round(dt_s * 120)) physics steps of
// dt_s / n (SubstepsForRow, as for recorded rows); that step must be within this fraction of a
// tick (1/120 s), so the model never runs at a step it was not fitted at. The ~61 Hz
// recordings' rows (2 steps of 1/121.92 s) are 1.6% off.
inline constexpr double kPredictStepTolerance = 0.05;

// An initial state. Euler angles as the datasets' (integers x pi / 32768, here in radians):
// theta = EulerToMatrix(pitch, yaw, roll) = Rz(yaw) Ry(-pitch) Rx(-roll).
struct InitialState {
  Eigen::Vector3d x = Eigen::Vector3d::Zero();      // position, uu
  Eigen::Vector3d v = Eigen::Vector3d::Zero();      // velocity, uu/s
  Eigen::Vector3d omega = Eigen::Vector3d::Zero();  // angular velocity (world), rad/s
  Eigen::Vector3d euler = Eigen::Vector3d::Zero();  // pitch, yaw, roll, rad (car models)
  double boost = game::kBoostMax;                   // boost amount 0-100 (car models)
};

// One row of a controls file: the inputs held from t_s until the next row's t_s.
struct TimedInput {
  double t_s = 0.0;  // s from the initial state
  CarInputs input;
};

struct PredictOptions {
  std::string model;          // model name (see Models())
  std::string state;          // --state "x,y,z,vx,vy,vz[,wx,wy,wz]": uu, uu/s, rad/s
  std::string orientation;    // --orientation "pitch,yaw,roll", rad (car models; default 0)
  std::string states_path;    // --states: .json or .csv of initial states (instead of --state)
  std::string controls_path;  // --controls: car inputs CSV; "" = no input
  double duration_s = 2.0;    // predicted span, s, in (0, kMaxPredictDurationS]
  double dt_s = 0.0;          // output row spacing, s; 0 = DefaultPredictDt(model)
  std::string coeffs;         // "" = committed fit, "seed", or a coefficients JSON
  std::string out_path;       // CSV to write (atomically); "" = stdout
  std::string data_root;      // datasets root for the arena mesh; "" = default lookup
  // Keep the recordings' Euler-rate drift (kRecordingDriftBlock) in the coefficients; by
  // default it is left out (PredictionCoefficients).
  bool recording_drift = false;
  // Keep the recordings' input delay (Integration::input_delay_s); by default a control row
  // acts from its own time (PredictionCoefficients).
  bool recording_input_delay = false;

  // Option errors (names the option): model, one state source, ranges, the --state and
  // --orientation values, --out not naming an input. Files are checked by RunPredict.
  bool Check(std::string* why) const;
};

// A predicted trajectory: row k at t_s[k] = k dt; rows[0] is the initial state.
struct Trajectory {
  int state_index = 1;  // 1-based position of the state in --states (1 for --state)
  std::vector<double> t_s;
  std::vector<PredictedState> rows;
};

// The columns of a controls row, in the controls CSV's order (t_s first).
inline constexpr const char* kControlColumns[9] = {
    "t_s", "throttle", "steer", "pitch", "yaw", "roll", "jump", "boost", "handbrake"};

// Output row spacing when --dt is not given: one physics tick (1/120 s) for the car models;
// one row of the ball recordings (1/60.96 s, which the ball model advances by 2 ticks of
// 1/122 s, src/models/ball.h) for the ball.
double DefaultPredictDt(const ModelInfo& model);

// Closest a ball's starting centre may be to the arena mesh, uu. The ball's radius is 91.25
// (a ball at rest sits 93.15 from the surface), but fast bounces are recorded mid-contact:
// of the 155,625 rows of ball_trajectories (258 episodes), 264 have the centre within 91.25 uu
// of the pitch mesh, the closest 81.72 uu (p10 86.9, median 90.1). A start that deep is a state
// the game produces, so the limit sits below it; a deeper overlap is refused.
inline constexpr double kBallStartMinMeshDistanceUu = 80.0;

// The model a starting state is checked against (ModelStartProblem), with the datasets root
// of its arena mesh ("" = the default lookup).
struct StartRule {
  const ModelInfo* model = nullptr;
  std::string data_root;
};

// Why `state` (already legal: InitialStateProblem) is not a starting state `model` covers, ""
// when it is; *part as InitialStateProblem's (0 position, 3 orientation). The same rows a
// replay scores (ClassifyRows on the one-row episode PredictionEpisode builds):
//   ground, powerslide, vehicle: a car on the flat floor (the centre within
//     kGroundHeightBandUu of game::kCarRestHeight, the up axis within acos(kGroundUprightMinCos)
//     of vertical, src/replay/regime.h);
//   wall: a car on a surface (the mesh within kWallDriveReachUu of the centre) on its wheels
//     there (IsOnSurface with the default SurfaceCoeffs, as the car's regime test);
//   aerial: a car clear of the mesh (no part of it within reach: the centre more than
//     kCarSurfaceReachUu from the mesh), nor resting on the floor;
//   ball: a ball not behind the mesh (BallArena: none of 26 rays from the centre, along the
//     axes and the diagonals, first meets the back of a triangle) whose centre is at least
//     kBallStartMinMeshDistanceUu from it (its sphere overlaps the mesh by at most what the
//     recordings' bounces do), less the distance its velocity carries it along the contact's
//     normal in a tick (a fast ball mid-bounce, as a step leaves it): one behind a corner
//     curve or deep in the net ended outside the arena;
//   car, jump: any legal state whose centre is not behind the pitch mesh (under the floor,
//     beyond a wall, above the ceiling: the same ray test as the ball's).
std::string ModelStartProblem(const ModelInfo& model, const InitialState& state,
                              const std::string& data_root, int* part);

// Reads initial states: .json (one object or a list of objects {"x": [3], "v": [3], optional
// "omega": [3], "euler": [3] pitch/yaw/roll rad}) or .csv (header naming x,y,z,vx,vy,vz and
// optionally wx,wy,wz and pitch,yaw,roll; one state per row). InputError (file, row, column)
// on anything malformed or implausible, or (`box` given) centred outside the box of the
// arena mesh's vertices (see InitialStateProblem), or (`rule` given) not a start its model
// covers (ModelStartProblem).
std::vector<InitialState> ReadStates(const std::string& path, bool car,
                                     const Arena::VertexBox* box = nullptr,
                                     const StartRule* rule = nullptr);

// Reads a controls CSV: a header naming any of throttle, steer, pitch, yaw, roll (in [-1, 1]),
// jump, boost, handbrake (0 or 1) and optionally t_s (s, >= 0, increasing); a missing column
// is 0. Without t_s, row i holds from i * dt_s. InputError (file, row, column) otherwise.
std::vector<TimedInput> ReadControls(const std::string& path, double dt_s);

// What is implausible about an initial state, with the recording reader's limits
// (src/io/plausible.h); "" when nothing. *part: 0 position, 1 velocity, 2 angular velocity,
// 3 Euler angles (also "the ball model has no orientation" when !car and euler is not zero).
// With `box` (the box of the arena mesh's vertices, Arena::Box), a position outside it is
// refused too: a replay leaves such rows out as `outside the arena` (no wall or floor holds
// the ball there: under the floor it falls for ever). With `rule`, then ModelStartProblem.
std::string InitialStateProblem(const InitialState& state, bool car, int* part,
                                const Arena::VertexBox* box = nullptr,
                                const StartRule* rule = nullptr);

// "" when `x` lies within `box` (the box of the arena mesh's vertices, Arena::Box), else why,
// naming the first coordinate outside it (*axis 0, 1 or 2): no wall or floor holds the ball
// there. The one test behind InitialStateProblem's box, `rlsim predict --state` and Python's
// step_ticks.
std::string OutsideArenaProblem(const Eigen::Vector3d& x, const Arena::VertexBox& box,
                                int* axis);

// The box of the ball's arena (BallArena) under `data_root` ("" = the default lookup) for
// `model`'s states, or null for a model whose prediction does not run on the mesh.
const Arena::VertexBox* PredictArenaBox(const ModelInfo& model, const std::string& data_root);

// Why a duration and output row spacing cannot be predicted with `model` ("" when they can):
// duration in (0, kMaxPredictDurationS], dt in (0, kMaxPredictDtS] (0 = DefaultPredictDt) and
// a whole number of ticks (car) or recording rows (ball), not longer than the duration.
// Messages name the values by `duration_name` and `dt_name` (e.g. "--duration", "--dt").
std::string PredictSpanProblem(const ModelInfo& model, double duration_s, double dt_s,
                               const std::string& duration_name, const std::string& dt_name);

// Output rows after the initial one: floor(duration_s / dt_s), forgiving rounding of the ratio.
int PredictSteps(double duration_s, double dt_s);

// "" if the analog input v (throttle, steer, pitch, yaw or roll) lies in [-1, 1], else the
// problem: "<v> is outside [-1, 1]" (a NaN included). ControlRowFromValues and the Python
// module's Controls share it.
std::string AnalogInputProblem(double v);

// One controls row from its values in kControlColumns order (values[0] = t_s, used when
// `timed`, else the row holds from previous.size() * dt_s). False with the 0-based column in
// *column and the reason in *why when a value is out of range (analog in [-1, 1], switches
// 0 or 1, t_s >= 0 and increasing over `previous`).
bool ControlRowFromValues(const double values[9], bool timed,
                          const std::vector<TimedInput>& previous, double dt_s, TimedInput* out,
                          int* column, std::string* why);

// The episode the predictor runs over: rows k = 0..steps at t = k dt_s (a car's accumulated,
// t_k = t_(k-1) + dt_s, so that ticks end on the next row's time to the bit), row 0 holding `state`,
// each row carrying the inputs in force at its time (the last TimedInput with t_s <= t + 1e-9;
// none before the first). A car's recording clock is unknown (clock_origin_rows NaN), so inputs
// switch as in any recording without one (Integration, ControlsOver): a control row at t_s
// acts from t_s + input_delay_s + half a tick, t_s + 19.3 ms with the committed settings. The
// ball's row 0 is a physics tick (clock_origin_rows 0: the state is tick0 of the tick clock,
// src/models/ball.h), its later rows 120/61 ticks apart, each blended from two ticks.
Episode PredictionEpisode(EpisodeKind kind, const InitialState& state,
                          const std::vector<TimedInput>& controls, double dt_s, int steps);

// Runs `predictor` from every state for `steps` rows of dt_s with the same controls (the core
// of RunPredict, also called by the Python module): trajectory i starts from states[i]
// (state_index i + 1). Split over `threads` threads (0 = std::thread::hardware_concurrency());
// the result does not depend on the thread count. States are not checked here.
std::vector<Trajectory> PredictTrajectories(const ModelInfo& model, const Predictor& predictor,
                                            const std::vector<InitialState>& states,
                                            const std::vector<TimedInput>& controls, double dt_s,
                                            int steps, int threads);

// The whole command without output: checks the options (InputError "(options)" with the
// reason), reads states and controls (refusing a start the model does not cover,
// ModelStartProblem), loads the coefficients (PredictionCoefficients: without the recordings'
// drift unless options.recording_drift) and runs the model's Predictor.
std::vector<Trajectory> RunPredict(const PredictOptions& options);

// The trajectory CSV: [state,]source_row,t_s,x,y,z,vx,vy,vz,wx,wy,wz[,pitch,yaw,roll] with
// 17 significant digits; source_row is the 1-based row of a trajectory, `state` (with
// --states) its state_index; pitch, yaw, roll in rad (MatrixToEuler) for car models.
std::string TrajectoriesCsv(const std::vector<Trajectory>& trajectories, bool orientation,
                            bool state_column);

// Writes TrajectoriesCsv to options.out_path (atomically) or to `out` when it is empty.
void WritePredictOutput(const PredictOptions& options, const std::vector<Trajectory>& trajectories,
                        std::ostream& out);

}  // namespace rlfit
