// The bot author's objects of `rlfit._rlfit` (issue 36): Ball, Car and Controls in the RLBot /
// RLUtilities vocabulary, each holding its whole state and stepping it tick by tick with the
// function `rlsim predict` runs (PredictBall on BallArena; StepCar on PitchArena with the
// prediction coefficients). No model code here: states are built as `rlsim predict` builds its
// start (PredictionEpisode) and checked as it checks them (InitialStateProblem).
#include "python/sim_objects.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "src/common/constants.h"
#include "src/common/error.h"
#include "src/common/number_text.h"
#include "src/common/rotation.h"
#include "src/io/arena_file.h"
#include "src/io/episode_writer.h"
#include "src/io/recording.h"
#include "src/models/ball.h"
#include "src/models/car.h"
#include "src/models/powerslide/powerslide.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/episode_steps.h"
#include "src/replay/predict.h"
#include "src/replay/regime.h"
#include "src/replay/registry.h"

namespace py = pybind11;

namespace rlfit {
namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// A step must be this close to a whole number of ticks (relative to one tick): 0.05 s given as
// 6 / 120 passes, 0.01 s does not.
constexpr double kWholeTickSlack = 1e-6;
// Most ticks of one step call (an hour of game time): nothing runs unbounded.
constexpr long kMaxStepTicks = 120L * 3600L;
// An orientation must be a rotation to this precision (|R^T R - I| entries, det - 1).
constexpr double kRotationSlack = 1e-6;

// The number of ticks of dt_s (a whole number of 1 / tick_rate_hz s), or a ValueError
// (InputError) naming the value.
long WholeTicks(double dt_s, double tick_rate_hz) {
  const double ticks = dt_s * tick_rate_hz;
  const double n = std::round(ticks);
  if (!std::isfinite(dt_s) || !(n >= 1.0) || std::abs(ticks - n) > kWholeTickSlack)
    throw InputError("dt", 0, 0,
                     "dt = " + MessageNumber(dt_s, 9) + " s is not a whole number (>= 1) of " +
                         "physics ticks of 1/" + MessageNumber(tick_rate_hz, 6) +
                         " s (e.g. dt = k / 120)");
  if (n > kMaxStepTicks)
    throw InputError("dt", 0, 0, "dt = " + MessageNumber(dt_s, 9) + " s is longer than an hour");
  return static_cast<long>(n);
}

Eigen::Vector3d Vec3From(const py::object& o, const char* what) {
  const Array a = Array::ensure(o);
  if (!a || a.ndim() != 1 || a.shape(0) != 3) throw InputError(what, 0, 0, "expected 3 numbers");
  Eigen::Vector3d v(a.data()[0], a.data()[1], a.data()[2]);
  if (!v.allFinite()) throw InputError(what, 0, 0, "value is not finite");
  return v;
}

Array ToArray(const Eigen::Vector3d& v) {
  Array a(3);
  for (int i = 0; i < 3; ++i) a.mutable_data()[i] = v(i);
  return a;
}

Array ToArray(const Eigen::Matrix3d& m) {
  Array a(std::vector<py::ssize_t>{3, 3});
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) a.mutable_data()[3 * r + c] = m(r, c);
  return a;
}

// Refuses an implausible state as `rlsim predict` refuses it (InitialStateProblem with the
// model's start rule and, for the ball, its arena's box).
void CheckStart(const ModelInfo& model, const InitialState& s, const std::string& root) {
  const StartRule rule{&model, root};
  int part = -1;
  const std::string why = InitialStateProblem(s, model.kind == EpisodeKind::kCar, &part,
                                              PredictArenaBox(model, root), &rule);
  static constexpr const char* kPart[] = {"position", "velocity", "angular_velocity",
                                          "orientation"};
  if (!why.empty()) throw InputError(kPart[part < 0 ? 0 : part], 0, 0, why);
}

// The coefficients a model predicts with (PredictionCoefficients: no recording drift) and the
// datasets root, loaded once per (model, coeffs, data_root) and shared by every object.
struct Context {
  const ModelInfo* model = nullptr;
  std::string root;
  CoeffFile file;
};

std::shared_ptr<const Context> ContextFor(const std::string& model, const std::string& coeffs,
                                          const std::string& data_root) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Context>> cache;
  const std::string key = model + '\0' + coeffs + '\0' + data_root;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  auto c = std::make_shared<Context>();
  c->model = &FindModel(model);
  c->root = ResolveDataRoot(data_root);
  c->file = PredictionCoefficients(*c->model, LoadCoefficients(*c->model, coeffs), coeffs, false,
                                   false);
  return cache[key] = c;
}

// The inputs of one tick (RLBot's SimpleControllerState).
struct PyControls {
  double throttle = 0.0, steer = 0.0, pitch = 0.0, yaw = 0.0, roll = 0.0;
  bool jump = false, boost = false, handbrake = false;

  Controls ToModel() const {
    Controls u;
    u.throttle = throttle;
    u.steer = steer;
    u.pitch = pitch;
    u.yaw = yaw;
    u.roll = roll;
    u.jump = jump ? 1.0 : 0.0;
    u.boost = boost ? 1.0 : 0.0;
    u.handbrake = handbrake ? 1.0 : 0.0;
    return u;
  }
};

double Analog(double v, const char* name) {
  if (const std::string problem = AnalogInputProblem(v); !problem.empty())
    throw InputError(name, 0, 0, problem);
  return v;
}

PyControls MakeControls(double throttle, double steer, double pitch, double yaw, double roll,
                        bool jump, bool boost, bool handbrake) {
  PyControls c;
  c.throttle = Analog(throttle, "throttle");
  c.steer = Analog(steer, "steer");
  c.pitch = Analog(pitch, "pitch");
  c.yaw = Analog(yaw, "yaw");
  c.roll = Analog(roll, "roll");
  c.jump = jump;
  c.boost = boost;
  c.handbrake = handbrake;
  return c;
}

// ---- Pickling (pickle, copy, multiprocessing): each object's whole state as plain numbers ----
// A pickle is (kPickleVersion, coeffs, data_root, ticks stepped, numbers): the coefficients and datasets
// root as the object was given them (loaded again where it is unpickled, as the constructor
// loads them), and the state's fields in the order of BallStateFields / CarStateFields, every
// one a double (bools 0/1, the regime its enum value). A pickle of another version or length,
// or with a field out of its range, is refused (ValueError) rather than read wrong.
constexpr int kPickleVersion = 1;

struct FieldSaver {
  std::vector<double>* out;
  void operator()(const double& v) const { out->push_back(v); }
  void operator()(const bool& v) const { out->push_back(v ? 1.0 : 0.0); }
  void operator()(const int& v) const { out->push_back(static_cast<double>(v)); }
  void operator()(const CarRegime& v) const { out->push_back(static_cast<double>(v)); }
};

struct FieldLoader {
  const std::vector<double>* in;
  const char* what;
  mutable std::size_t next = 0;

  double Take() const {
    if (next >= in->size()) Refuse("has too few numbers");
    return (*in)[next++];
  }
  [[noreturn]] void Refuse(const std::string& why) const {
    throw InputError("pickle", 0, 0,
                     std::string("a pickled rlfit.") + what + " " + why +
                         " (made by another version of rlfit?)");
  }
  void operator()(double& v) const {
    v = Take();
    if (!std::isfinite(v)) Refuse("has a number that is not finite");
  }
  void operator()(bool& v) const {
    const double x = Take();
    if (x != 0.0 && x != 1.0) Refuse("has a flag that is not 0 or 1");
    v = x == 1.0;
  }
  void operator()(int& v) const {
    const double x = Take();
    if (!(std::abs(x) <= 1e9) || x != std::trunc(x)) Refuse("has a count that is not an integer");
    v = static_cast<int>(x);
  }
  void operator()(CarRegime& v) const {
    const double x = Take();
    if (!(x >= 0.0 && x <= static_cast<double>(CarRegime::kJump)) || x != std::trunc(x))
      Refuse("has an unknown regime");
    v = static_cast<CarRegime>(static_cast<int>(x));
  }
  void Finish() const {
    if (next != in->size()) Refuse("has too many numbers");
  }
};

template <class S, class F>
void BodyFields(S& b, const F& f) {
  for (int i = 0; i < 3; ++i) f(b.x(i));
  for (int i = 0; i < 3; ++i) f(b.v(i));
  for (int i = 0; i < 3; ++i) f(b.omega(i));
}

template <class S, class F>
void BallStateFields(S& s, const F& f) {
  BodyFields(s, f);
}

// Every member of CarModelState<double>: a member added there must be added here (the round
// trip test steps a car mid-dodge, mid-powerslide and on a wall from its unpickled copy).
template <class S, class F>
void CarStateFields(S& s, const F& f) {
  BodyFields(s.body, f);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) f(s.body.theta(r, c));
  f(s.regime);
  f(s.on_floor);
  f(s.on_surface);
  f(s.left_surface);
  f(s.regime_ticks);
  auto& j = s.jump;
  f(j.in_contact);
  f(j.jump_held);
  f(j.jumping);
  f(j.has_jumped);
  f(j.jump_time_s);
  f(j.since_jump_s);
  f(j.has_double_jumped);
  f(j.has_flipped);
  f(j.flipping);
  f(j.flip_time_s);
  f(j.flip_forward);
  f(j.flip_side);
  auto& w = s.wheels;
  f(w.steer_angle);
  f(w.drive);
  f(w.brake);
  f(w.handbrake);
  for (int i = 0; i < 4; ++i) f(w.slip_ratio[i]);
  f(w.set);
  f(s.boost);
  f(s.unlimited_boost);
}

struct PickledParts {
  std::string coeffs, data_root;
  long ticks = 0;
  std::vector<double> numbers;
};

PickledParts PickledPartsOf(const py::tuple& t, const char* what) {
  const std::string bad = std::string("a pickled rlfit.") + what +
                          " of another form (made by another version of rlfit?)";
  if (t.size() != 5) throw InputError("pickle", 0, 0, bad);
  int version = 0;
  PickledParts p;
  try {
    version = t[0].cast<int>();
    p.coeffs = t[1].cast<std::string>();
    p.data_root = t[2].cast<std::string>();
    p.ticks = t[3].cast<long>();
    p.numbers = t[4].cast<std::vector<double>>();
  } catch (const py::cast_error&) {
    throw InputError("pickle", 0, 0, bad);
  }
  if (version != kPickleVersion)
    throw InputError("pickle", 0, 0,
                     std::string("a pickled rlfit.") + what + " of version " +
                         std::to_string(version) + ", this rlfit reads version " +
                         std::to_string(kPickleVersion));
  if (p.ticks < 0) throw InputError("pickle", 0, 0, bad);
  return p;
}

// What Ball and Car share: the model's context, the coefficients and datasets root as they were
// given (what a pickle carries, loaded again where it is unpickled), and the ticks stepped.
class SimObject {
 public:
  // Seconds stepped since construction, from the whole ticks (never accumulated in seconds).
  double TimeS() const { return static_cast<double>(ticks_) / ctx_->file.integration.tick_rate_hz; }
  const std::string& coeffs_name() const { return coeffs_name_; }
  const std::string& data_root() const { return data_root_; }

  long ticks_ = 0;  // ticks stepped since construction

 protected:
  SimObject(const char* model, const std::string& coeffs, const std::string& data_root)
      : ctx_(ContextFor(model, coeffs, data_root)), coeffs_name_(coeffs), data_root_(data_root) {}

  std::shared_ptr<const Context> ctx_;

 private:
  std::string coeffs_name_, data_root_;
};

class PyBall : public SimObject {
 public:
  PyBall(const py::object& position, const py::object& velocity, const py::object& angular_velocity,
         const std::string& coeffs, const std::string& data_root)
      : PyBall(coeffs, data_root) {
    InitialState s;
    s.x = Vec3From(position, "position");
    s.v = Vec3From(velocity, "velocity");
    s.omega = Vec3From(angular_velocity, "angular_velocity");
    CheckStart(*ctx_->model, s, ctx_->root);
    state_.x = s.x;
    state_.v = s.v;
    state_.omega = s.omega;
  }

  void Step(double dt_s) {
    const long n = WholeTicks(dt_s, ctx_->file.integration.tick_rate_hz);
    const Arena& arena = BallArena(ctx_->root);
    const double tick_s = 1.0 / ctx_->file.integration.tick_rate_hz;
    std::vector<BallState<double>> out(static_cast<std::size_t>(n));
    {
      py::gil_scoped_release release;
      PredictBall(coeffs_, state_, tick_s, static_cast<int>(n), arena, out.data());
    }
    state_ = out.back();
    ticks_ += n;
  }

  Array ToFlat() const {
    Array a(9);
    for (int i = 0; i < 3; ++i) {
      a.mutable_data()[i] = state_.x(i);
      a.mutable_data()[3 + i] = state_.v(i);
      a.mutable_data()[6 + i] = state_.omega(i);
    }
    return a;
  }

  // For Pickled / Unpickled: the state's fields, and a ball of these coefficients whose state
  // the caller sets.
  static constexpr const char* kWhat = "Ball";
  template <class S, class F>
  static void Fields(S& s, const F& f) {
    BallStateFields(s, f);
  }
  static PyBall Blank(const std::string& coeffs, const std::string& data_root) {
    return PyBall(coeffs, data_root);
  }

  BallState<double> state_;

 private:
  // The ball of these coefficients with a zero state (the constructors set it).
  PyBall(const std::string& coeffs, const std::string& data_root)
      : SimObject("ball", coeffs, data_root),
        coeffs_(BallCoeffs<double>::FromArray(ctx_->file.values.data())) {}

  BallCoeffs<double> coeffs_;
};

class PyCar : public SimObject {
 public:
  PyCar(const py::object& position, const py::object& velocity, const py::object& angular_velocity,
        const py::object& orientation, double pitch, double yaw, double roll, double boost,
        const py::object& on_ground, bool jumped, bool double_jumped, const std::string& coeffs,
        const std::string& data_root)
      : PyCar(coeffs, data_root) {
    InitialState s;
    s.x = Vec3From(position, "position");
    s.v = Vec3From(velocity, "velocity");
    s.omega = Vec3From(angular_velocity, "angular_velocity");
    if (!(boost >= 0.0 && boost <= game::kBoostMax))
      throw InputError("boost", 0, 0, MessageNumber(boost, 6) + " is outside [0, 100]");
    s.boost = boost;
    Eigen::Matrix3d theta;
    if (!orientation.is_none()) {
      if (pitch != 0.0 || yaw != 0.0 || roll != 0.0)
        throw InputError("orientation", 0, 0, "give orientation or pitch/yaw/roll, not both");
      const Array a = Array::ensure(orientation);
      if (!a || a.ndim() != 2 || a.shape(0) != 3 || a.shape(1) != 3)
        throw InputError("orientation", 0, 0,
                         "expected a 3x3 matrix (columns forward, left, up in world axes)");
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) theta(r, c) = a.data()[3 * r + c];
      if (!theta.allFinite() ||
          (theta.transpose() * theta - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() >
              kRotationSlack ||
          std::abs(theta.determinant() - 1.0) > kRotationSlack)
        throw InputError("orientation", 0, 0, "is not a rotation matrix");
      s.euler = MatrixToEuler(theta);
    } else {
      s.euler = {pitch, yaw, roll};
    }
    CheckStart(*ctx_->model, s, ctx_->root);
    // The start as `rlsim predict car` builds it: the one-row episode and the car predictor's
    // start state (CarStartState; the episode's boost is not unlimited).
    const Integration& integ = ctx_->file.integration;
    Episode ep = PredictionEpisode(EpisodeKind::kCar, s, {}, 1.0 / integ.tick_rate_hz, 1);
    Sample& row = ep.rows[0];
    if (!orientation.is_none()) row.theta = theta;
    if (!on_ground.is_none()) row.on_ground = on_ground.cast<bool>();
    row.jumped = jumped;
    row.double_jumped = double_jumped;
    state_ = CarStartState(ep, 0, integ, coeffs_.jump.timing);
  }

  void Step(const PyControls& controls, double dt_s) {
    const Integration& integ = ctx_->file.integration;
    const long n = WholeTicks(dt_s, integ.tick_rate_hz);
    const double tick_s = 1.0 / integ.tick_rate_hz;
    const Arena& arena = PitchArena(ctx_->root);
    const Controls u = controls.ToModel();
    {
      py::gil_scoped_release release;
      for (long i = 0; i < n; ++i)
        state_ = StepCar(coeffs_, arena, state_, u, tick_s, integ.rotate_with_new_omega);
    }
    ticks_ += n;
  }

  Array ToFlat() const {
    Array a(12);
    double* d = a.mutable_data();
    const Eigen::Vector3d e = MatrixToEuler(state_.body.theta);
    for (int i = 0; i < 3; ++i) {
      d[i] = state_.body.x(i);
      d[3 + i] = state_.body.v(i);
      d[6 + i] = state_.body.omega(i);
      d[9 + i] = e(i);
    }
    return a;
  }

  bool OnGround() const {
    if (state_.regime == CarRegime::kUnknown) return state_.jump.in_contact;
    return state_.on_floor || state_.on_surface ||
           (state_.regime == CarRegime::kJump && state_.jump.in_contact);
  }

  // As PyBall's.
  static constexpr const char* kWhat = "Car";
  template <class S, class F>
  static void Fields(S& s, const F& f) {
    CarStateFields(s, f);
  }
  static PyCar Blank(const std::string& coeffs, const std::string& data_root) {
    return PyCar(coeffs, data_root);
  }

  CarModelState<double> state_;

 private:
  // As PyBall's.
  PyCar(const std::string& coeffs, const std::string& data_root)
      : SimObject("car", coeffs, data_root),
        coeffs_(CarCoeffs<double>::FromArray(ctx_->file.values.data())) {}

  CarCoeffs<double> coeffs_;
};

// A Ball or Car as pickle carries it: (kPickleVersion, coeffs, data_root, ticks, numbers), the
// numbers its Fields' (Unpickled: the same object, bit for bit).
template <class Obj>
py::tuple Pickled(const Obj& o) {
  std::vector<double> numbers;
  Obj::Fields(o.state_, FieldSaver{&numbers});
  return py::make_tuple(kPickleVersion, o.coeffs_name(), o.data_root(), o.ticks_, numbers);
}
template <class Obj>
Obj Unpickled(const py::tuple& t) {
  const PickledParts p = PickledPartsOf(t, Obj::kWhat);
  Obj o = Obj::Blank(p.coeffs, p.data_root);
  o.ticks_ = p.ticks;
  const FieldLoader load{&p.numbers, Obj::kWhat};
  Obj::Fields(o.state_, load);
  load.Finish();
  return o;
}

// Vectors of a flat predict row: (9,) ball x, v, omega; (12,) car with pitch, yaw, roll.
Eigen::Vector3d Part(const Array& a, int part) {
  return Eigen::Vector3d(a.data()[3 * part], a.data()[3 * part + 1], a.data()[3 * part + 2]);
}

Array FlatRow(const py::object& o, int width, const char* what) {
  const Array a = Array::ensure(o);
  if (!a || a.ndim() != 1 || a.shape(0) != width)
    throw InputError(what, 0, 0,
                     "expected a 1-D array of " + std::to_string(width) + " values (" +
                         (width == 9 ? "x, y, z, vx, vy, vz, wx, wy, wz"
                                     : "x, y, z, vx, vy, vz, wx, wy, wz, pitch, yaw, roll") +
                         ", as a row of Model.predict without t_s)");
  return a;
}

}  // namespace

void BindSimObjects(py::module_& m) {
  py::class_<PyControls> controls(m, "Controls",
                                  "The inputs of a tick, RLBot's SimpleControllerState: analog "
                                  "sticks in [-1, 1], buttons as bools.");
  // The sticks checked when set as when constructed (Analog: finite, in [-1, 1]); a plain
  // attribute let `k.steer = nan` reach the car's state.
  struct Stick {
    const char* name;
    double PyControls::*value;
  };
  for (const Stick& stick : {Stick{"throttle", &PyControls::throttle},
                             Stick{"steer", &PyControls::steer}, Stick{"pitch", &PyControls::pitch},
                             Stick{"yaw", &PyControls::yaw}, Stick{"roll", &PyControls::roll}}) {
    controls.def_property(
        stick.name, [value = stick.value](const PyControls& c) { return c.*value; },
        [stick](PyControls& c, double v) { c.*stick.value = Analog(v, stick.name); });
  }
  controls
      .def(py::init(&MakeControls), py::arg("throttle") = 0.0, py::arg("steer") = 0.0,
           py::arg("pitch") = 0.0, py::arg("yaw") = 0.0, py::arg("roll") = 0.0,
           py::arg("jump") = false, py::arg("boost") = false, py::arg("handbrake") = false)
      .def_readwrite("jump", &PyControls::jump)
      .def_readwrite("boost", &PyControls::boost)
      .def_readwrite("handbrake", &PyControls::handbrake)
      .def(
          "to_array",
          [](const PyControls& c) -> Array {
            Array a(8);
            const double v[8] = {c.throttle,
                                 c.steer,
                                 c.pitch,
                                 c.yaw,
                                 c.roll,
                                 c.jump ? 1.0 : 0.0,
                                 c.boost ? 1.0 : 0.0,
                                 c.handbrake ? 1.0 : 0.0};
            std::copy(v, v + 8, a.mutable_data());
            return a;
          },
          "(8,) throttle, steer, pitch, yaw, roll, jump, boost, handbrake: a row of the "
          "controls Model.rollout takes without t_s.")
      .def(
          "copy", [](const PyControls& c) { return PyControls(c); }, "An independent copy.")
      .def("__copy__", [](const PyControls& c) { return PyControls(c); })
      .def(
          "__deepcopy__", [](const PyControls& c, const py::object&) { return PyControls(c); },
          py::arg("memo"))
      .def(
          "__eq__",
          [](const PyControls& a, const py::object& o) {
            if (!py::isinstance<PyControls>(o)) return false;
            const PyControls& b = o.cast<const PyControls&>();
            return a.throttle == b.throttle && a.steer == b.steer && a.pitch == b.pitch &&
                   a.yaw == b.yaw && a.roll == b.roll && a.jump == b.jump &&
                   a.boost == b.boost && a.handbrake == b.handbrake;
          },
          py::is_operator())
      .def(py::pickle(
          [](const PyControls& c) {
            return py::make_tuple(c.throttle, c.steer, c.pitch, c.yaw, c.roll, c.jump, c.boost,
                                  c.handbrake);
          },
          [](const py::tuple& t) {
            if (t.size() != 8)
              throw InputError("pickle", 0, 0, "a pickled rlfit.Controls of another form");
            return MakeControls(t[0].cast<double>(), t[1].cast<double>(), t[2].cast<double>(),
                                t[3].cast<double>(), t[4].cast<double>(), t[5].cast<bool>(),
                                t[6].cast<bool>(), t[7].cast<bool>());
          }))
      .def("__repr__", [](const PyControls& c) -> std::string {
        return "Controls(throttle=" + MessageNumber(c.throttle, 6) +
               ", steer=" + MessageNumber(c.steer, 6) + ", pitch=" + MessageNumber(c.pitch, 6) +
               ", yaw=" + MessageNumber(c.yaw, 6) + ", roll=" + MessageNumber(c.roll, 6) +
               ", jump=" + (c.jump ? "True" : "False") + ", boost=" + (c.boost ? "True" : "False") +
               ", handbrake=" + (c.handbrake ? "True" : "False") + ")";
      });

  const Array zero3 = ToArray(Eigen::Vector3d(Eigen::Vector3d::Zero()));
  py::class_<PyBall>(m, "Ball",
                     "The ball: position (uu), velocity (uu/s), angular_velocity (rad/s), world "
                     "axes. step(dt) advances it dt s (a whole number of 1/120 s ticks) with the "
                     "ball model's tick on the arena mesh, as `rlsim predict ball`.")
      .def(py::init<const py::object&, const py::object&, const py::object&, const std::string&,
                    const std::string&>(),
           py::arg("position"), py::arg("velocity") = zero3, py::arg("angular_velocity") = zero3,
           py::kw_only(), py::arg("coeffs") = "", py::arg("data_root") = "",
           "A ball at `position` (3,) uu with `velocity` (3,) uu/s and `angular_velocity` (3,) "
           "rad/s. Refused (ValueError) where `rlsim predict ball` refuses it (outside the "
           "arena, overlapping the mesh). coeffs: '' the committed fit, 'seed' or a file.")
      .def_property_readonly(
          "position", [](const PyBall& b) { return ToArray(b.state_.x); }, "Centre (3,), uu.")
      .def_property_readonly(
          "velocity", [](const PyBall& b) { return ToArray(b.state_.v); }, "Velocity (3,), uu/s.")
      .def_property_readonly(
          "angular_velocity", [](const PyBall& b) { return ToArray(b.state_.omega); },
          "Angular velocity (3,), world axes, rad/s.")
      .def_property_readonly(
          "time", &PyBall::TimeS, "Seconds stepped since construction (whole ticks / tick rate).")
      .def("step", &PyBall::Step, py::arg("dt"),
           "Advances dt s: a whole number (>= 1) of 1/120 s ticks, else ValueError.")
      .def(
          "copy", [](const PyBall& b) { return PyBall(b); }, "An independent copy.")
      .def("__copy__", [](const PyBall& b) { return PyBall(b); })
      .def(
          "__deepcopy__", [](const PyBall& b, const py::object&) { return PyBall(b); },
          py::arg("memo"))
      .def(py::pickle(&Pickled<PyBall>, &Unpickled<PyBall>))
      .def("to_array", &PyBall::ToFlat,
           "(9,) x, y, z, vx, vy, vz, wx, wy, wz: a row of Model('ball').predict without t_s.")
      .def_static(
          "from_array",
          [](const py::object& row, const std::string& coeffs, const std::string& data_root) {
            const Array a = FlatRow(row, 9, "state");
            return PyBall(ToArray(Part(a, 0)), ToArray(Part(a, 1)), ToArray(Part(a, 2)), coeffs,
                          data_root);
          },
          py::arg("state"), py::kw_only(), py::arg("coeffs") = "", py::arg("data_root") = "",
          "The ball of a flat row (9,) as to_array gives it.");

  py::class_<PyCar>(m, "Car",
                    "A car with its whole state: rigid body, boost amount, jump and dodge "
                    "timers, handbrake level and the regime of its last tick. step(controls, "
                    "dt) runs the `car` model's tick (StepCar, as `rlsim predict car`) once "
                    "per 1/120 s. Boost drains at 100/3 per second while held and thrusts only "
                    "while boost > 0. Orientation: columns forward, left, up (world axes); "
                    "pitch, yaw, roll as the datasets' Euler angles (rad), "
                    "R = Rz(yaw) Ry(-pitch) Rx(-roll).")
      .def(py::init<const py::object&, const py::object&, const py::object&, const py::object&,
                    double, double, double, double, const py::object&, bool, bool,
                    const std::string&, const std::string&>(),
           py::arg("position"), py::arg("velocity") = zero3, py::arg("angular_velocity") = zero3,
           py::kw_only(), py::arg("orientation") = py::none(), py::arg("pitch") = 0.0,
           py::arg("yaw") = 0.0, py::arg("roll") = 0.0, py::arg("boost") = game::kBoostMax,
           py::arg("on_ground") = py::none(), py::arg("jumped") = false,
           py::arg("double_jumped") = false, py::arg("coeffs") = "", py::arg("data_root") = "",
           "A car at `position` (3,) uu, `velocity` (3,) uu/s, `angular_velocity` (3,) rad/s, "
           "oriented by `orientation` (3, 3) or pitch/yaw/roll (rad), with `boost` 0-100. "
           "on_ground None: on its wheels when resting on the floor (as rlsim predict). "
           "Refused (ValueError) where `rlsim predict car` refuses it.")
      .def_property_readonly(
          "position", [](const PyCar& c) { return ToArray(Eigen::Vector3d(c.state_.body.x)); },
          "Centre (3,), uu.")
      .def_property_readonly(
          "velocity", [](const PyCar& c) { return ToArray(Eigen::Vector3d(c.state_.body.v)); },
          "Velocity (3,), uu/s.")
      .def_property_readonly(
          "angular_velocity",
          [](const PyCar& c) { return ToArray(Eigen::Vector3d(c.state_.body.omega)); },
          "Angular velocity (3,), world axes, rad/s.")
      .def_property_readonly(
          "orientation",
          [](const PyCar& c) { return ToArray(Eigen::Matrix3d(c.state_.body.theta)); },
          "Rotation (3, 3): columns forward, left, up in world axes.")
      .def_property_readonly(
          "forward",
          [](const PyCar& c) { return ToArray(Eigen::Vector3d(c.state_.body.theta.col(0))); },
          "The nose's direction (3,) (orientation[:, 0]).")
      .def_property_readonly(
          "up", [](const PyCar& c) { return ToArray(Eigen::Vector3d(c.state_.body.theta.col(2))); },
          "The roof's direction (3,) (orientation[:, 2]).")
      .def_property_readonly(
          "boost", [](const PyCar& c) { return c.state_.boost; }, "Boost amount, 0-100.")
      .def_property_readonly("on_ground", &PyCar::OnGround,
                             "Wheels on a surface: the last tick ran the floor or surface step "
                             "(or a jump's take-off still touching); before any step, as given.")
      .def_property_readonly(
          "jumped", [](const PyCar& c) { return c.state_.jump.has_jumped; },
          "The first jump was used since the last landing.")
      .def_property_readonly(
          "double_jumped", [](const PyCar& c) { return c.state_.jump.has_double_jumped; },
          "The double jump was used since the last landing.")
      .def_property_readonly(
          "dodged", [](const PyCar& c) { return c.state_.jump.has_flipped; },
          "A dodge was used since the last landing.")
      .def_property_readonly(
          "jump_timer", [](const PyCar& c) { return c.state_.jump.jump_time_s; },
          "s since the first jump's impulse.")
      .def_property_readonly(
          "dodge_timer", [](const PyCar& c) { return c.state_.jump.flip_time_s; },
          "s since the dodge started.")
      .def_property_readonly(
          "handbrake", [](const PyCar& c) { return c.state_.wheels.handbrake; },
          "Handbrake level 0-1 (ramps toward the input).")
      .def_property_readonly(
          "time", &PyCar::TimeS, "Seconds stepped since construction (whole ticks / tick rate).")
      .def("step", &PyCar::Step, py::arg("controls"), py::arg("dt"),
           "Advances dt s (a whole number >= 1 of 1/120 s ticks, else ValueError) holding "
           "`controls`: the car model's tick, as `rlsim predict car` (which also delays inputs "
           "by the recordings' input lag; step applies them at once).")
      .def(
          "copy", [](const PyCar& c) { return PyCar(c); }, "An independent copy.")
      .def("__copy__", [](const PyCar& c) { return PyCar(c); })
      .def(
          "__deepcopy__", [](const PyCar& c, const py::object&) { return PyCar(c); },
          py::arg("memo"))
      .def(py::pickle(&Pickled<PyCar>, &Unpickled<PyCar>))
      .def("to_array", &PyCar::ToFlat,
           "(12,) x, y, z, vx, vy, vz, wx, wy, wz, pitch, yaw, roll: a row of "
           "Model('car').predict without t_s (the rest of the state is not in it).")
      .def_static(
          "from_array",
          [](const py::object& row, double boost, const py::object& on_ground, bool jumped,
             bool double_jumped, const std::string& coeffs, const std::string& data_root) {
            const Array a = FlatRow(row, 12, "state");
            const Eigen::Vector3d e = Part(a, 3);
            return PyCar(ToArray(Part(a, 0)), ToArray(Part(a, 1)), ToArray(Part(a, 2)), py::none(),
                         e(0), e(1), e(2), boost, on_ground, jumped, double_jumped, coeffs,
                         data_root);
          },
          py::arg("state"), py::kw_only(), py::arg("boost") = game::kBoostMax,
          py::arg("on_ground") = py::none(), py::arg("jumped") = false,
          py::arg("double_jumped") = false, py::arg("coeffs") = "", py::arg("data_root") = "",
          "The car of a flat row (12,) as to_array gives it, with the rest of the state given.");
}

}  // namespace rlfit
