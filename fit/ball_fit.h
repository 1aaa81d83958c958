// Residuals of the ball fit: open-loop rollouts of StepBall (the function replay runs) against
// the arena mesh, compared with the recorded position, velocity and angular velocity.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <ceres/ceres.h>

#include "fit/fit.h"
#include "fit/fit_common.h"
#include "src/io/arena_file.h"
#include "src/io/episode.h"
#include "src/models/arena.h"
#include "src/models/ball.h"
#include "src/replay/episode_steps.h"
#include "src/replay/regime.h"

namespace rlfit {

// Per-component scales that turn errors into dimensionless residuals; roughly the size of a
// good 0.5 s prediction error across a bounce, so that each quantity weighs in comparably.
struct BallResidualScales {
  double x_uu = 2.0;
  double v_uu_s = 10.0;
  double omega_rad_s = 0.05;
};

// Per-tick triangle lists shared by the rollouts of one window (SmoothedBallRolloutCost's
// central differences: 15 rollouts whose centres stay within a few uu of each other tick by
// tick). The first rollout that looks the mesh up at a tick gathers the triangles within
// kReachUu of its centre there (Arena::GatherNear: typically 0-2 against the 6 of a grid cell's
// list); a later lookup at that tick whose sphere lies within that reach is answered from them
// (Arena::CollideEntries), any other from the Arena. Either way the answer is Arena::Collide's
// bit for bit, so the rollouts are too. Reset before each set of rollouts (it keeps its memory).
class BallTickMeshes {
 public:
  // Reach of the lists, uu: the largest the grid answers (Arena::kGridRadius), which leaves the
  // contact query (contact radius 93.2 + margin 0.3, up to 1 uu more in the perturbed
  // rollouts, another 1 uu in ClosestFeatureNormal's probes) 6-8 uu to move from the centre
  // that gathered the list.
  static constexpr double kReachUu = Arena::kGridRadius;

  void Reset(const Arena* arena, int ticks) {
    arena_ = arena;
    patches_.assign(static_cast<std::size_t>(ticks), Patch{});
    entries_.clear();
  }

  // The mesh of one tick, as StepBall queries it (FloorHeight, GridFreeClearance, Collide and the
  // manifold's CollideEach and InternalEdgeNormal):
  // from the tick's list of `meshes`, or with meshes == nullptr straight from `arena` (a single
  // rollout, which has no other rollout to share a list with). The same answers either way.
  class View {
   public:
    View(BallTickMeshes* meshes, const Arena* arena, int tick)
        : meshes_(meshes), arena_(arena), tick_(tick) {}
    double FloorHeight(const Eigen::Vector3d& center, double radius,
                       double* free_uu = nullptr) const {
      return arena_->FloorHeight(center, radius, free_uu);
    }
    double GridFreeClearance(const Eigen::Vector3d& center, double radius) const {
      return arena_->GridFreeClearance(center, radius);
    }
    Contact Collide(const Eigen::Vector3d& center, double radius) const {
      return meshes_ != nullptr ? meshes_->Collide(tick_, center, radius)
                                : arena_->Collide(center, radius);
    }
    // The manifold's queries (ManifoldContactNormal) straight from the Arena: they come only
    // where Collide counts several triangles.
    int CollideEach(const Eigen::Vector3d& center, double radius, TriangleContact* out) const {
      return arena_->CollideEach(center, radius, out);
    }
    Eigen::Vector3d InternalEdgeNormal(const TriangleContact& contact,
                                       const Eigen::Vector3d& center) const {
      return arena_->InternalEdgeNormal(contact, center);
    }

   private:
    BallTickMeshes* meshes_;
    const Arena* arena_;
    int tick_;
  };

 private:
  enum class State : std::uint8_t { kUnset, kListed, kNone };
  struct Patch {
    Eigen::Vector3d anchor = Eigen::Vector3d::Zero();  // centre the list was gathered at, uu
    double nearest = 0.0;  // distance from the anchor to the nearest triangle, at most kReachUu
    std::uint32_t begin = 0, end = 0;  // its entries in entries_
    State state = State::kUnset;
  };

  Contact Collide(int tick, const Eigen::Vector3d& center, double radius) {
    Patch& p = patches_[tick];
    if (p.state == State::kUnset) {
      p.anchor = center;
      p.begin = static_cast<std::uint32_t>(entries_.size());
      p.state = arena_->GatherNear(center, kReachUu, &entries_, &p.nearest) ? State::kListed
                                                                            : State::kNone;
      p.end = static_cast<std::uint32_t>(entries_.size());
    }
    if (p.state == State::kListed && radius >= 0.0) {
      // False for a NaN centre or radius: then the Arena answers.
      const double reach = (center - p.anchor).norm() + radius + Arena::kNearSlackUu;
      if (reach < p.nearest) return Contact{};  // nothing that near: no hit (GatherNear)
      if (reach <= kReachUu)
        return arena_->CollideEntries(center, radius, entries_.data() + p.begin,
                                      entries_.data() + p.end);
    }
    return arena_->Collide(center, radius);
  }

  const Arena* arena_ = nullptr;
  std::vector<Patch> patches_;
  std::vector<std::uint32_t> entries_;
};

// Rollout over rows start..start+rows of an episode on the tick clock (src/models/ball.h) from
// the tick pair around the recorded row `start` (BallTicksAroundRow, at the row's place on the
// episode's clock: EpisodePlan::clock_origin_rows): for each row j in 1..rows the 9 residuals
//   (x_pred - x_rec) / s_x, (v_pred - v_rec) / s_v, (omega_pred - omega_rec) / s_omega,
// x_pred etc. the blend of the two ticks around row j, units uu, uu/s, rad/s divided by the
// scales; 0 for the rows in `skip_rows` (episode row indices): rows in the middle of a bounce,
// which the game's blend of two ticks puts where no model tick is near. Parameter blocks:
// bounce[3], spin[1], drag[1], geometry[2] (BallLayout()). With Jets the mesh query runs in
// double on the value part (see StepBall): the contact normal is constant in the derivative and
// the penetration linearised; the start's tick pair is a function of the coefficients too.
class BallRolloutResidual {
 public:
  template <typename T>
  struct StatesOf {  // (a non-deduced context: Roll takes nullptr for "no states")
    using type = std::vector<BallTicks<T>>;
  };

  // What every window of an episode reads per row, worked out once per episode: the clock rows
  // before row k (BallClockRowsPrefix, as replay's BallPredictor), whether row k is in skip_rows, and where row 0 sits on the
  // tick clock (BallClockOrigin with the coefficients given: the fit's start).
  struct EpisodePlan {
    EpisodePlan(const Episode& ep, const std::vector<int>& skip_rows, double clock_origin_rows)
        : first_clock_row(BallClockRowsPrefix(ep)), skip(ep.size(), 0),
          clock_origin_rows(clock_origin_rows) {
      for (int k : skip_rows)
        if (k >= 0 && k < ep.size()) skip[k] = 1;
    }
    EpisodePlan(const Episode& ep, const Integration& integ, const std::vector<int>& skip_rows,
                const BallCoeffs<double>& c)
        : EpisodePlan(ep, skip_rows, BallClockOrigin(ep, c, integ)) {}
    std::vector<long> first_clock_row;
    std::vector<char> skip;
    double clock_origin_rows;
  };

  // The plan from `c` (BallClockOrigin(*episode, c, integ)); the rollouts round the velocity
  // to c.velocity_quantum (the game's 0.01 uu/s; 0 for the continuous tick, whose derivatives a
  // numeric check can follow: a rounding has steps and no slope).
  BallRolloutResidual(const Episode* episode, int start, int rows, const Integration& integ,
                      const Arena* arena, const BallResidualScales& scales,
                      const std::vector<int>& skip_rows,
                      const BallCoeffs<double>& c = BallCoeffs<double>::FromArray(
                          BallLayout().defaults.data()))
      : BallRolloutResidual(std::make_shared<const EpisodePlan>(*episode, integ, skip_rows, c),
                            episode, start, rows, integ, arena, scales, c.velocity_quantum) {}
  // `plan`: the episode's, for this integ and skip_rows (shared by its windows).
  BallRolloutResidual(std::shared_ptr<const EpisodePlan> plan, const Episode* episode, int start,
                      int rows, const Integration& integ, const Arena* arena,
                      const BallResidualScales& scales,
                      double velocity_quantum = game::kBallVelocityQuantum)
      : episode_(episode), start_(start), rows_(rows), integ_(integ), arena_(arena),
        scales_(scales), plan_(std::move(plan)),
        start_a_(BallTickFraction(plan_->clock_origin_rows, plan_->first_clock_row[start],
                                  integ)),
        velocity_quantum_(velocity_quantum) {}

  template <typename T>
  bool operator()(const T* bounce, const T* spin, const T* drag, const T* geometry,
                  T* residuals) const {
    const BallCoeffs<T> c = BallCoeffs<T>::FromBlocks(bounce, spin, drag, geometry);
    Roll(c, 0, StartTicks(c), residuals, nullptr);
    return true;
  }

  // The rollout from step j0 of the window on, from its tick pair `t` there: writes the residual
  // rows j0+1..rows (at residuals + 9 (j - 1), as operator() lays them out) and, if `states`
  // is given, the tick pair at each row j0..rows (states->at(j), resized to rows + 1). For
  // double: `meshes` (or nullptr: the Arena) answers the rollout's mesh lookups (BallTickMeshes,
  // reset for ticks()), and `first_touch`, if given, receives the first step j (row j -> j + 1)
  // in which the ball touched the mesh (BallClearance::touched), rows if none.
  template <typename T>
  void Roll(const BallCoeffs<T>& coeffs, int j0, BallTicks<T> t, T* residuals,
            typename StatesOf<T>::type* states, BallTickMeshes* meshes = nullptr,
            int* first_touch = nullptr) const {
    const BallCoeffs<T> c = WithQuantum(coeffs);
    if (states != nullptr) {
      states->resize(rows_ + 1);
      (*states)[j0] = t;
    }
    if (first_touch != nullptr) *first_touch = rows_;
    BallClearance clearance;  // used by the double rollouts
    const EpisodePlan& plan = *plan_;
    for (int j = j0 + 1; j <= rows_; ++j) {
      const int k = start_ + j - 1;  // episode row of the step
      BallState<T> s;
      if constexpr (std::is_same_v<T, double>) {
        // The mesh source (the shared tick lists, or the Arena without them) is `meshes`,
        // fixed for the rollout; the View asks the Arena when it is null.
        s = AdvanceBallTicks(
            c, &t, *episode_, k, integ_,
            [&](long i) { return BallTickMeshes::View(meshes, arena_, static_cast<int>(i)); },
            &clearance);
        if (first_touch != nullptr && clearance.touched && *first_touch == rows_)
          *first_touch = j - 1;
      } else {
        s = AdvanceBallTicks(c, &t, *episode_, k, integ_, *arena_);
      }
      if (states != nullptr) (*states)[j] = t;
      const Sample& rec = episode_->rows[start_ + j];
      T* r = residuals + 9 * (j - 1);
      if (plan.skip[start_ + j]) {
        for (int i = 0; i < 9; ++i) r[i] = T(0.0);
        continue;
      }
      for (int i = 0; i < 3; ++i) {
        r[i] = (s.x(i) - T(rec.x(i))) / T(scales_.x_uu);
        r[3 + i] = (s.v(i) - T(rec.v(i))) / T(scales_.v_uu_s);
        r[6 + i] = (s.omega(i) - T(rec.omega(i))) / T(scales_.omega_rad_s);
      }
    }
  }

  // The tick pair around the window's first row with coefficients `c` (BallTicksAroundRow). For
  // double, `touched` (if given) is set when one of its ticks touched the mesh: then the pair
  // depends on every contact coefficient.
  template <typename T>
  BallTicks<T> StartTicks(const BallCoeffs<T>& coeffs, bool* touched = nullptr) const {
    const BallCoeffs<T> c = WithQuantum(coeffs);
    const BallState<T> row = FromSample<BallState<T>>(episode_->rows[start_]);
    if constexpr (std::is_same_v<T, double>) {
      const double tick_s = 1.0 / integ_.tick_rate_hz;
      bool any = false;
      const BallTicks<double> t = BallTicksAroundRowBy(row, start_a_, [&](const BallState<T>& s) {
        BallClearance clearance;  // StepBall's state bit for bit, and whether it touched
        const BallState<double> next = StepBall(c, s, tick_s, *arena_, &clearance);
        any = any || clearance.touched;
        return next;
      });
      if (touched != nullptr) *touched = any;
      return t;
    } else {
      return BallTicksAroundRow(c, row, start_a_, integ_, *arena_);
    }
  }

  // Ticks a rollout of the window steps from (the size of a BallTickMeshes for Roll: the step
  // from tick i looks the mesh up as tick i, 1 <= i <= the last row's tick0).
  int ticks() const {
    const long rows = plan_->first_clock_row[start_ + rows_] - plan_->first_clock_row[start_];
    return static_cast<int>(BallWholeTicks(start_a_, rows, integ_)) + 1;
  }

  // Number of leading steps of the window along `states` (a rollout's tick pairs, from Roll) in
  // which the ball cannot touch the mesh with a contact radius up to `radius`: at each such
  // step's tick0 no triangle lies within radius + the distance the ball can
  // travel from there to the tick after the next row's (the step's game time and two ticks
  // more; at step 0 that covers the start's tick pair too). A coefficient that acts only
  // through a contact leaves those steps bit-identical (SmoothedBallRolloutCost).
  int StepsClearOfContact(const std::vector<BallTicks<double>>& states,
                          const BallCoeffs<double>& c, double radius) const {
    // Safety on the travel: 10% and 1 uu beyond |v| dt + |g| dt^2 (drag only slows the ball).
    constexpr double kTravelFactor = 1.1, kTravelPadUu = 1.0;
    for (int j = 0; j < rows_; ++j) {
      const double clock_rows = static_cast<double>(BallClockRowsOf(*episode_, start_ + j));
      const double dt = std::max(episode_->step_dt_s[start_ + j],
                                 clock_rows * integ_.ticks_per_clock_row / integ_.tick_rate_hz) +
                        2.0 / integ_.tick_rate_hz;
      const BallState<double>& s = states[j].tick0;
      const double travel =
          kTravelFactor * (s.v.norm() + std::abs(c.gravity_z) * dt) * dt + kTravelPadUu;
      if (arena_->Collide(s.x, radius + travel).hit) return j;
    }
    return rows_;
  }

  int rows() const { return rows_; }
  const Arena* arena() const { return arena_; }
  // The window's first row's place between its two ticks, [0, 1) tick.
  double start_fraction() const { return start_a_; }

  static ceres::CostFunction* Create(const Episode* episode, int start, int rows,
                                     const Integration& integ, const Arena* arena,
                                     const BallResidualScales& scales = {},
                                     const std::vector<int>& skip_rows = {},
                                     const BallCoeffs<double>& c = BallCoeffs<double>::FromArray(
                                         BallLayout().defaults.data())) {
    return new ceres::AutoDiffCostFunction<BallRolloutResidual, ceres::DYNAMIC, 3, 1, 1, 2>(
        new BallRolloutResidual(episode, start, rows, integ, arena, scales, skip_rows, c),
        9 * rows);
  }

 private:
  template <typename T>
  BallCoeffs<T> WithQuantum(BallCoeffs<T> c) const {
    c.velocity_quantum = velocity_quantum_;
    return c;
  }

  const Episode* episode_;
  int start_;
  int rows_;
  Integration integ_;
  const Arena* arena_;
  BallResidualScales scales_;
  std::shared_ptr<const EpisodePlan> plan_;
  double start_a_;  // the first row's place between its two ticks (BallTickFraction)
  double velocity_quantum_;  // uu/s, BallCoeffs::velocity_quantum of every rollout
};

// The fit's cost function: the residuals of a BallRolloutResidual, differentiated by central
// differences at coarse, fixed steps (one per coefficient, BallLayout order) instead of by
// autodiff. Why: the rollout cost is piecewise smooth, with a jump wherever a coefficient moves
// a contact to another physics tick; the exact derivative between jumps misses the trend the
// jumps make, and Levenberg-Marquardt stalls where it starts (from a perturbed start on the
// recordings neither drag nor restitution moved). A difference over a step that spans many
// such jumps measures the trend: it is the derivative of the cost smoothed over that step.
// It also writes its Jacobian column-major (ColumnMajorJacobian) for ReducedCost's QR.
class SmoothedBallRolloutCost : public ceres::CostFunction, public ColumnMajorJacobian {
 public:
  // steps: per coefficient in BallLayout order, in the coefficient's unit.
  // share_prefix: the rollouts of a coefficient that acts only through contacts (all but drag)
  // start from the unperturbed rollout's state at a step before which they cannot differ from
  // it: for the contact radius the first step that may touch the mesh with the perturbed
  // radius (BallRolloutResidual::StepsClearOfContact); for restitution, mu, Y, spin_factor and
  // recovery, which StepBall reads only in a tick that touches the mesh, the first step in
  // which the unperturbed rollout touched it (none: their columns are zero without a rollout).
  // The rollouts also share their mesh lookups tick by tick (BallTickMeshes). The steps before
  // are the same to the bit, and so is the Jacobian (tested). false recomputes every rollout
  // from the window's start against the Arena (reference for the tests).
  SmoothedBallRolloutCost(BallRolloutResidual* residual, int rows, std::vector<double> steps,
                          bool share_prefix = true)
      : residual_(residual), steps_(std::move(steps)), share_prefix_(share_prefix) {
    set_num_residuals(9 * rows);
    for (const ParamBlock& b : BallLayout().blocks)
      mutable_parameter_block_sizes()->push_back(b.size);
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    if (jacobians == nullptr) {
      double flat[BallCoeffs<double>::kSize];
      Flatten(parameters, flat);
      return Run(flat, residuals);
    }
    bool asked[kBlocks];
    for (int bi = 0; bi < kBlocks; ++bi) asked[bi] = jacobians[bi] != nullptr;
    // Ceres' layout: block bi row-major, column j at jacobians[bi] + j, stride the block size.
    return EvaluateWith<false>(parameters, residuals, asked,
                               [jacobians](int bi, int j) { return jacobians[bi] + j; });
  }

  bool EvaluateColumns(double const* const* parameters, double* residuals, const bool* asked,
                       double* columns) const override {
    const std::vector<ParamBlock>& blocks = BallLayout().blocks;
    int first[kBlocks];  // first column of each asked block in `columns`
    for (int bi = 0, col = 0; bi < kBlocks; ++bi) {
      first[bi] = col;
      if (asked[bi]) col += blocks[bi].size;
    }
    const std::size_t m = static_cast<std::size_t>(num_residuals());
    return EvaluateWith<true>(parameters, residuals, asked, [&](int bi, int j) {
      return columns + static_cast<std::size_t>(first[bi] + j) * m;
    });
  }

 private:
  static constexpr int kBlocks = 4;  // BallLayout().blocks

  static void Flatten(double const* const* parameters, double* flat) {
    const std::vector<ParamBlock>& blocks = BallLayout().blocks;
    for (std::size_t bi = 0; bi < blocks.size(); ++bi)
      std::copy(parameters[bi], parameters[bi] + blocks[bi].size, flat + blocks[bi].offset);
  }

  // Residuals and the Jacobian columns of the blocks `asked`: column j of block bi is written
  // from column_at(bi, j) on, with stride 1 (kContiguous) or the block's size (Ceres' layout).
  // The same numbers either way.
  template <bool kContiguous, class ColumnAt>
  bool EvaluateWith(double const* const* parameters, double* residuals, const bool* asked,
                    const ColumnAt& column_at) const {
    using Coeffs = BallCoeffs<double>;
    const std::vector<ParamBlock>& blocks = BallLayout().blocks;
    double flat[Coeffs::kSize];
    Flatten(parameters, flat);
    // Per-thread buffers, reused from evaluation to evaluation (no allocation per window).
    thread_local Scratch scratch;
    BallTickMeshes* meshes = nullptr;
    if (share_prefix_) {
      scratch.meshes.Reset(residual_->arena(), residual_->ticks());
      meshes = &scratch.meshes;
    }
    // The unperturbed rollout, with its tick pairs.
    std::vector<BallTicks<double>>& states = scratch.states;
    const Coeffs c = Coeffs::FromArray(flat);
    bool start_touched = false;
    const BallTicks<double> start = residual_->StartTicks(c, &start_touched);
    int first_touch = 0;
    residual_->Roll(c, 0, start, residuals, &states, meshes, &first_touch);
    if (start_touched) first_touch = 0;  // the start's pair itself reads the contact
    const int m = num_residuals();
    int shared_radius = 0;
    if (share_prefix_) {
      if (asked[3])  // the geometry block: the contact radius
        shared_radius = residual_->StepsClearOfContact(
            states, c, c.contact_radius + std::abs(steps_[Coeffs::kContactRadius]));
    } else {
      first_touch = 0;
    }
    scratch.plus.resize(m);
    scratch.minus.resize(m);
    double* plus = scratch.plus.data();
    double* minus = scratch.minus.data();
    for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
      if (!asked[bi]) continue;
      const int size = blocks[bi].size;
      const int stride = kContiguous ? 1 : size;
      for (int j = 0; j < size; ++j) {
        const int i = blocks[bi].offset + j;
        // Drag acts in every tick, the contact radius from the first that may touch with the
        // perturbed radius, the others from the first that touched (StepBall); from step 0
        // the start's tick pair is worked out again with the perturbed coefficients.
        const int from = i == Coeffs::kDrag            ? 0
                         : i == Coeffs::kContactRadius ? shared_radius
                                                       : first_touch;
        double* column = column_at(static_cast<int>(bi), j);
        for (int r = 0; r < 9 * from; ++r) column[r * stride] = 0.0;
        if (from == residual_->rows()) continue;  // no step left: the column is zero
        const double x = flat[i], h = steps_[i];
        auto roll = [&](double* out) {
          const Coeffs cp = Coeffs::FromArray(flat);
          residual_->Roll(cp, from, from == 0 ? residual_->StartTicks(cp) : states[from], out,
                          nullptr, meshes);
        };
        flat[i] = x + h;
        roll(plus);
        flat[i] = x - h;
        roll(minus);
        flat[i] = x;
        for (int r = 9 * from; r < m; ++r) column[r * stride] = (plus[r] - minus[r]) / (2.0 * h);
      }
    }
    return true;
  }

  // The residual functor on a flat coefficient vector (its blocks at their layout offsets).
  bool Run(const double* flat, double* residuals) const {
    const std::vector<ParamBlock>& blocks = BallLayout().blocks;
    return (*residual_)(flat + blocks[0].offset, flat + blocks[1].offset, flat + blocks[2].offset,
                        flat + blocks[3].offset, residuals);
  }
  // A thread's buffers for Evaluate.
  struct Scratch {
    std::vector<BallTicks<double>> states;
    std::vector<double> plus, minus;
    BallTickMeshes meshes;
  };
  std::unique_ptr<BallRolloutResidual> residual_;
  std::vector<double> steps_;
  bool share_prefix_;
};

// The fit's smoothing steps for SmoothedBallRolloutCost (BallLayout order; see ball_fit.cc).
const std::vector<double>& BallSmoothingSteps();

// Rows of `ep` whose recorded velocity is off free flight from the previous or to the next row
// by more than `min_jump_uu_s`: the rows in the middle of a bounce.
std::vector<int> ContactRows(const Episode& ep, const BallCoeffs<double>& c, double min_jump_uu_s);

// The rollout cost is piecewise smooth, with a small jump wherever a coefficient change moves a
// contact to another tick. With the exact autodiff derivative (exact between jumps, blind to
// the trend the jumps make) Levenberg-Marquardt stalled near its start: from restitution 0.55,
// drag -0.025 it ended at 0.550 and -0.0248. The fit therefore differentiates with
// SmoothedBallRolloutCost, in passes of decreasing step (FitterInfo::smoothing_passes); from
// the same start it now lands within 0.0006 of the restitution and 1% of the drag it reaches
// from the defaults (all 258 episodes; decision 0006).
//
// Adds one SmoothedBallRolloutCost per window (options.window_s long, options.stride_s apart;
// steps BallSmoothingSteps() * options.smoothing),
// inside the rows ClassifyRows("ball") covers (no car touch: UnexplainedImpulseRows in
// src/replay/regime.h; the rows left out are counted on stderr unless quiet), skipping the
// residuals of ContactRows.
// The arena is BallArena(options.data_root) (meshes/pitch.dat, the ceiling at 2048); each
// episode's clock origin is BallClockOrigin with the start coefficients `params`. Returns the
// number of residual blocks.
int AddBallResiduals(ceres::Problem* problem, double* params,
                     const std::vector<Episode>& episodes, const FitOptions& options,
                     std::vector<int>* block_episodes);

}  // namespace rlfit
