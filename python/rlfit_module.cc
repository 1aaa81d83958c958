// The extension `rlfit._rlfit` of the Python package `rlfit`: pybind11 bindings over rlfit_core
// and rlfit_fit, the libraries rlsim and rlfit use. No model code here: arrays are converted to
// the core's types and every call goes to the same functions as the tools
// (Predictor/PredictTrajectories, Arena, ReadRecordings, ReplayFiles; the distributed replay,
// fit and cross-validation of fit/distributed.h for rlfit.dask). Shapes and columns are
// documented in python/README.md.
#include <dlfcn.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli_common.h"
#include "python/sim_objects.h"
#include "fit/distributed.h"
#include "src/common/constants.h"
#include "src/common/error.h"
#include "src/common/number_text.h"
#include "src/common/parallel.h"
#include "src/common/resources.h"
#include "src/io/arena_file.h"
#include "src/io/coeff_file.h"
#include "src/io/episode_writer.h"
#include "src/io/files.h"
#include "src/io/recording.h"
#include "src/models/ball.h"
#include "src/replay/coeff_choice.h"
#include "src/replay/predict.h"
#include "src/replay/predictor.h"
#include "src/replay/regime.h"
#include "src/replay/registry.h"
#include "src/replay/replay.h"
#include "src/report/plots.h"

namespace py = pybind11;

namespace rlfit {

// A file-system path argument or result. From Python: a str (with the surrogate escapes
// os.fsdecode gives a name that is not UTF-8), bytes or an os.PathLike, turned into the
// file system's bytes as os.fsencode does; back to Python: a str as os.fsdecode gives it, so
// a name read from a folder opens again. A plain std::string argument refused the surrogate
// escapes and os.PathLike with pybind11's "incompatible function arguments" TypeError, and a
// name that is not UTF-8 could not come back at all (UnicodeDecodeError).
struct FsPath {
  std::string bytes;
};

}  // namespace rlfit

namespace pybind11::detail {
template <>
struct type_caster<rlfit::FsPath> {
  PYBIND11_TYPE_CASTER(rlfit::FsPath, const_name("str | bytes | os.PathLike"));
  bool load(handle src, bool) {
    object path = reinterpret_steal<object>(PyOS_FSPath(src.ptr()));
    if (!path) {  // not a path: let pybind11 raise its TypeError naming the expected types
      PyErr_Clear();
      return false;
    }
    object encoded = PyBytes_Check(path.ptr())
                         ? path
                         : reinterpret_steal<object>(PyUnicode_EncodeFSDefault(path.ptr()));
    if (!encoded) throw error_already_set();  // e.g. a lone surrogate that is no escape
    value.bytes.assign(PyBytes_AS_STRING(encoded.ptr()),
                       static_cast<std::size_t>(PyBytes_GET_SIZE(encoded.ptr())));
    if (value.bytes.find('\0') != std::string::npos)
      throw value_error("embedded null byte in a path");  // as open() says
    return true;
  }
  static handle cast(const rlfit::FsPath& p, return_value_policy, handle) {
    return PyUnicode_DecodeFSDefaultAndSize(p.bytes.data(),
                                            static_cast<Py_ssize_t>(p.bytes.size()));
  }
};
}  // namespace pybind11::detail

namespace rlfit {
namespace {

namespace fs = std::filesystem;

// float64, C order; other numeric dtypes are converted (a copy), non-numeric ones refused.
using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Columns of a predicted row (the `rlsim predict` CSV without source_row).
std::vector<std::string> StateColumns(bool car, bool with_time) {
  std::vector<std::string> c;
  if (with_time) c.push_back("t_s");
  for (const char* n : {"x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"}) c.push_back(n);
  if (car)
    for (const char* n : {"pitch", "yaw", "roll"}) c.push_back(n);
  return c;
}

// The resources (results/, scripts/) relative to this module's file: build/python/rlfit/ in
// the build tree (build/share/rlfit), <prefix>/lib/pythonX.Y/site-packages/rlfit/ when installed
// (<prefix>/share/rlfit). Without either the executable-relative lookup stays.
void FindResourcesBesideModule() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&FindResourcesBesideModule), &info) == 0 ||
      info.dli_fname == nullptr)
    return;
  std::error_code ec;
  const fs::path dir = fs::absolute(info.dli_fname, ec).parent_path();
  // The extension sits in the package folder rlfit/: build/python/rlfit/ or
  // <prefix>/lib/pythonX.Y/site-packages/rlfit/.
  for (const fs::path& candidate : {dir / ".." / ".." / "share" / "rlfit",
                                    dir / ".." / ".." / ".." / ".." / "share" / "rlfit"}) {
    if (fs::is_directory(candidate / "results", ec)) {
      SetResourceRoot(candidate.lexically_normal().string());
      return;
    }
  }
}

// The 2-D view of `a` with `width` columns among `allowed`: a 1-D array is one row.
struct Rows {
  const double* data = nullptr;
  int n = 0;
  int width = 0;
};

Rows AsRows(const Array& a, const std::string& what, const std::vector<int>& allowed,
            bool allow_1d) {
  Rows r;
  if (a.ndim() == 1 && allow_1d) {
    r.n = 1;
    r.width = static_cast<int>(a.shape(0));
  } else if (a.ndim() == 2) {
    r.n = static_cast<int>(a.shape(0));
    r.width = static_cast<int>(a.shape(1));
  } else {
    throw InputError(what, 0, 0,
                     "expected a " + std::string(allow_1d ? "1-D or " : "") + "2-D array, got " +
                         std::to_string(a.ndim()) + " dimensions");
  }
  bool ok = false;
  std::string widths;
  for (int w : allowed) {
    ok = ok || w == r.width;
    widths += (widths.empty() ? "" : " or ") + std::to_string(w);
  }
  if (!ok)
    throw InputError(what, 0, 0, std::to_string(r.width) + " values per row, expected " + widths);
  if (r.n == 0) throw InputError(what, 0, 0, "no rows");
  r.data = a.data();
  return r;
}

// Initial states from rows x,y,z,vx,vy,vz[,wx,wy,wz[,pitch,yaw,roll]] (uu, uu/s, rad/s, rad),
// checked as `rlsim predict` checks --states (InitialStateProblem, with `rule` the model's
// start, ModelStartProblem); errors name the array,
// the 1-based row and the first column of the bad group.
std::vector<InitialState> StatesFrom(const Array& a, bool car, bool allow_1d,
                                     const std::string& what,
                                     const Arena::VertexBox* box = nullptr,
                                     const StartRule* rule = nullptr) {
  const std::vector<int> widths = car ? std::vector<int>{6, 9, 12} : std::vector<int>{6, 9};
  const Rows r = AsRows(a, what, widths, allow_1d);
  std::vector<InitialState> states(r.n);
  for (int i = 0; i < r.n; ++i) {
    const double* v = r.data + static_cast<std::size_t>(i) * r.width;
    InitialState& s = states[i];
    s.x = {v[0], v[1], v[2]};
    s.v = {v[3], v[4], v[5]};
    if (r.width >= 9) s.omega = {v[6], v[7], v[8]};
    if (r.width == 12) s.euler = {v[9], v[10], v[11]};
    int part = -1;
    const std::string why = InitialStateProblem(s, car, &part, box, rule);
    if (!why.empty())
      throw InputError(what, allow_1d && a.ndim() == 1 ? 0 : i + 1, 3 * part + 1, why);
  }
  return states;
}

// Controls from rows of kControlColumns (9 values, t_s first) or without t_s (8 values, row i
// holding from i * dt_s), checked as `rlsim predict --controls` checks its file.
std::vector<TimedInput> ControlsFrom(const py::object& controls, double dt_s) {
  std::vector<TimedInput> out;
  if (controls.is_none()) return out;
  const Array a = Array::ensure(controls);
  if (!a) throw InputError("controls", 0, 0, "not an array of numbers");
  const Rows r = AsRows(a, "controls", {8, 9}, true);
  const bool timed = r.width == 9;
  for (int i = 0; i < r.n; ++i) {
    double v[9] = {};
    const double* row = r.data + static_cast<std::size_t>(i) * r.width;
    for (int c = 0; c < r.width; ++c) v[c + (timed ? 0 : 1)] = row[c];
    TimedInput t;
    int column = 0;
    std::string why;
    if (!ControlRowFromValues(v, timed, out, dt_s, &t, &column, &why))
      throw InputError("controls", i + 1, timed ? column + 1 : column, why);
    out.push_back(t);
  }
  return out;
}

// Writes a predicted row into `out`: [t_s,] x, v, omega[, pitch, yaw, roll] (MatrixToEuler, as
// the CSV; -0 printed as 0 there, kept here).
void PutRow(bool with_time, double t_s, const PredictedState& p, bool car, double* out) {
  int c = 0;
  if (with_time) out[c++] = t_s;
  for (const Eigen::Vector3d* v : {&p.x, &p.v, &p.omega})
    for (int i = 0; i < 3; ++i) out[c++] = (*v)(i);
  if (car) {
    const Eigen::Vector3d e = MatrixToEuler(p.theta);
    for (int i = 0; i < 3; ++i) out[c++] = e(i);
  }
}

// Text for people (a table, warnings, a message) as str: a file name's bytes that are not UTF-8
// as \xHH rather than a UnicodeDecodeError.
py::str Text(const std::string& text) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(
      text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace"));
}

py::object JsonToPython(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(DumpJson(j, -1));
}

Array Vector3Rows(const std::vector<Sample>& rows, Eigen::Vector3d Sample::*field) {
  Array a(std::vector<py::ssize_t>{static_cast<py::ssize_t>(rows.size()), 3});
  double* d = a.mutable_data();
  for (std::size_t k = 0; k < rows.size(); ++k)
    for (int i = 0; i < 3; ++i) d[3 * k + i] = (rows[k].*field)(i);
  return a;
}

// A coefficients file as a dict (see python/README.md).
py::dict CoefficientsDict(const ModelInfo& model, const CoeffFile& file, const std::string& spec) {
  py::dict d;
  d["model"] = model.name;
  d["names"] = model.layout->names;
  d["units"] = model.layout->units;
  d["values"] = Array(static_cast<py::ssize_t>(file.values.size()), file.values.data());
  d["std_errors"] = file.std_errors.empty()
                        ? py::object(py::none())
                        : py::object(Array(static_cast<py::ssize_t>(file.std_errors.size()),
                                           file.std_errors.data()));
  d["source"] = DescribeCoefficients(model.name, spec);
  d["file"] = JsonToPython(CoeffFileToJson(file, *model.layout));
  return d;
}

// A model with its coefficients and predictor, built once (the ball's arena mesh is loaded
// once per process and datasets root, BallArena).
class PyModel {
 public:
  PyModel(const std::string& name, const FsPath& coeffs, const FsPath& data_root,
          const py::object& values, bool recording_drift, bool recording_input_delay)
      : model_(&FindModel(name)), spec_(coeffs.bytes), data_root_(data_root.bytes) {
    file_ = LoadCoefficients(*model_, coeffs.bytes);
    if (!values.is_none()) {
      const Array a = Array::ensure(values);
      if (!a || a.ndim() != 1 || a.shape(0) != model_->layout->size())
        throw InputError("values", 0, 0,
                         "expected " + std::to_string(model_->layout->size()) +
                             " coefficients in the layout's order (Model.coefficients['names'])");
      file_.values.assign(a.data(), a.data() + a.shape(0));
      file_.std_errors.clear();  // they belonged to the replaced values
      // Checked by the coefficients file reader (finite, within the layout's bounds).
      file_ = ParseCoeffFile("values", DumpJson(CoeffFileToJson(file_, *model_->layout), -1), model_->name,
                             *model_->layout);
      spec_ = "(values given)";
    }
    // Predictions from given states: without the recordings' drift unless asked for, at the
    // game's tick rate (PredictionCoefficients); `coefficients` shows the file as it is.
    predictor_ = model_->make_predictor(
        PredictionCoefficients(*model_, file_, coeffs.bytes, recording_drift,
                               recording_input_delay),
        data_root_);
  }

  bool car() const { return model_->kind == EpisodeKind::kCar; }

  // Rows of one prediction: checks the span as `rlsim predict` does.
  int Steps(double duration_s, double* dt_s) const {
    const std::string why = PredictSpanProblem(*model_, duration_s, *dt_s, "duration_s", "dt_s");
    if (!why.empty()) throw InputError("(arguments)", 0, 0, why);
    if (*dt_s == 0.0) *dt_s = DefaultPredictDt(*model_);
    return PredictSteps(duration_s, *dt_s);
  }

  std::vector<TimedInput> Controls(const py::object& controls, double dt_s) const {
    if (!controls.is_none() && !car())
      throw InputError("controls", 0, 0, "the " + model_->name + " model takes no controls");
    return ControlsFrom(controls, dt_s);
  }

  // (N, rows, C) for N states, or (rows, C) for one 1-D state.
  Array Predict(const Array& states_in, double duration_s, double dt_s, const py::object& controls,
                int threads, bool batch) const {
    // One state is a 1-D row: a 2-D array here would fill a (rows, C) output with N states.
    if (!batch && states_in.ndim() != 1)
      throw InputError("state", 0, 0,
                       "expected a 1-D array (one state), got " +
                           std::to_string(states_in.ndim()) +
                           " dimensions (predict_batch takes several)");
    int steps = Steps(duration_s, &dt_s);
    const std::string root = ResolveDataRoot(data_root_);
    const StartRule rule{model_, root};  // the root resolved once, not per state
    // The output bound of `rlsim predict` (kMaxPredictRows), before converting anything.
    const long n_states = states_in.ndim() == 2 ? static_cast<long>(states_in.shape(0)) : 1;
    if (static_cast<double>(n_states) * (steps + 1) > kMaxPredictRows)
      throw InputError("(arguments)", 0, 0,
                       std::to_string(n_states) + " states x " + std::to_string(steps + 1) +
                           " rows is more than " + std::to_string(kMaxPredictRows) +
                           " rows: split the batch");
    const std::vector<InitialState> states =
        StatesFrom(states_in, car(), !batch, batch ? "states" : "state",
                   PredictArenaBox(*model_, root), &rule);
    const std::vector<TimedInput> inputs = Controls(controls, dt_s);
    const py::ssize_t n = static_cast<py::ssize_t>(states.size());
    const py::ssize_t rows = steps + 1;
    const py::ssize_t width = car() ? 13 : 10;
    Array out(batch ? std::vector<py::ssize_t>{n, rows, width}
                    : std::vector<py::ssize_t>{rows, width});
    double* data = out.mutable_data();
    {
      py::gil_scoped_release release;
      const std::vector<Trajectory> t =
          PredictTrajectories(*model_, *predictor_, states, inputs, dt_s, steps, threads);
      const bool is_car = car();
      ParallelFor(static_cast<int>(n), threads, [&](int i) {
        for (py::ssize_t k = 0; k < rows; ++k)
          PutRow(true, t[i].t_s[k], t[i].rows[k], is_car, data + (i * rows + k) * width);
      });
    }
    return out;
  }

  // The state one row of dt_s after `state` (1-D, C - 1 columns: no t_s).
  Array Step(const Array& state, const py::object& controls, double dt_s) const {
    if (dt_s == 0.0) dt_s = DefaultPredictDt(*model_);
    const Array rows = Predict(state, dt_s, dt_s, controls, 1, false);
    const py::ssize_t width = rows.shape(1) - 1;
    Array out(width);
    for (py::ssize_t c = 0; c < width; ++c) out.mutable_data()[c] = rows.data()[width + 1 + 1 + c];
    return out;
  }

  // The ball model's coefficients and arena (BallArena, as the replay's), for the tick-level
  // calls below; InputError for another model.
  BallCoeffs<double> BallCoefficients(const char* what, const Arena** arena) const {
    if (model_->name != "ball")
      throw InputError("(arguments)", 0, 0,
                       std::string(what) + " is the ball model's, not the " + model_->name +
                           " model's");
    *arena = &BallArena(ResolveDataRoot(data_root_));
    return BallCoeffs<double>::FromArray(file_.values.data());
  }

  // The ball's physics ticks from one tick state: (ticks + 1, 9) rows x, v, omega, row 0 the
  // state, each next one StepBall of one tick (1 / tick_rate_hz s), the replay's own step.
  Array StepTicks(const Array& state, long ticks) const {
    const Arena* arena = nullptr;
    const BallCoeffs<double> c = BallCoefficients("step_ticks", &arena);
    constexpr long kMaxTicks = 1L << 20;  // 2.4 h of game time: far beyond any use
    if (ticks < 0 || ticks > kMaxTicks)
      throw InputError("ticks", 0, 0,
                       "expected 0 to " + std::to_string(kMaxTicks) + ", got " +
                           std::to_string(ticks));
    if (state.ndim() != 1 || state.shape(0) != 9)
      throw InputError("state", 0, 0, "expected 9 values x, v, omega (uu, uu/s, rad/s)");
    for (int k = 0; k < 9; ++k)
      if (!std::isfinite(state.data()[k]))
        throw InputError("state", 0, k + 1, "value is not finite");
    BallState<double> s;
    for (int i = 0; i < 3; ++i) {
      s.x(i) = state.data()[i];
      s.v(i) = state.data()[3 + i];
      s.omega(i) = state.data()[6 + i];
    }
    // Outside the box of the arena's vertices no wall or floor holds the ball (a replay leaves
    // such rows out, predict refuses such a state): refused as predict refuses it.
    int axis = -1;
    const std::string outside = OutsideArenaProblem(s.x, arena->Box(), &axis);
    if (!outside.empty()) throw InputError("state", 0, axis + 1, outside);
    const double tick_s = 1.0 / file_.integration.tick_rate_hz;
    const double drag_factor = BallDragFactor(c, tick_s);  // once for every tick
    Array out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(ticks + 1), 9});
    double* d = out.mutable_data();
    {
      py::gil_scoped_release release;
      for (long t = 0;; ++t) {
        for (int i = 0; i < 3; ++i) {
          d[9 * t + i] = s.x(i);
          d[9 * t + 3 + i] = s.v(i);
          d[9 * t + 6 + i] = s.omega(i);
        }
        if (t == ticks) break;
        s = StepBall(c, s, tick_s, *arena, drag_factor);
      }
    }
    return out;
  }

  // The ball's contact with its arena at a centre, as a tick of StepBall sees it: Collide's
  // answer over the contact radius plus margin, the normal and depth the step bounces off
  // (BallContactNormal), and the manifold's contacts one by one (Arena::CollideEach, at most
  // Arena::kMaxContacts, deepest first) with their adjusted normals (InternalEdgeNormal), the
  // triangle (leaf entry, vertices) and its edge neighbours (-1: a boundary edge).
  py::dict BallContact(const Array& center_in) const {
    const Arena* arena = nullptr;
    const BallCoeffs<double> c = BallCoefficients("ball_contact", &arena);
    if (center_in.ndim() != 1 || center_in.shape(0) != 3)
      throw InputError("center", 0, 0, "expected 3 values x, y, z (uu)");
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(center_in.data()[k]))
        throw InputError("center", 0, k + 1, "centre coordinate is not finite");
    const Eigen::Vector3d center(center_in.data()[0], center_in.data()[1], center_in.data()[2]);
    const double radius = c.contact_radius;
    const Contact contact = arena->Collide(center, radius);
    py::dict d;
    d["hit"] = contact.hit;
    d["radius"] = radius;
    d["triangles"] = contact.triangles;
    py::list each;
    if (contact.hit) {
      double depth = 0.0;
      const Eigen::Vector3d n = BallContactNormal(*arena, center, radius, contact, &depth);
      d["normal"] = Array(3, n.data());
      d["depth"] = depth;
      TriangleContact contacts[Arena::kMaxContacts];
      const int count = arena->CollideEach(center, radius, contacts);
      for (int i = 0; i < count; ++i) {
        const TriangleContact& tc = contacts[i];
        const Eigen::Vector3d adjusted = arena->InternalEdgeNormal(tc, center);
        const Triangle tri = arena->LeafTriangle(tc.entry);
        Array vertices(std::vector<py::ssize_t>{3, 3});
        for (int v = 0; v < 3; ++v)
          for (int k = 0; k < 3; ++k) vertices.mutable_data()[3 * v + k] = tri.p[v](k);
        const std::array<std::int32_t, 3> nb = arena->EdgeNeighbours(tc.entry);
        py::dict e;
        e["entry"] = tc.entry;
        e["point"] = Array(3, tc.point.data());
        e["normal"] = Array(3, tc.normal.data());
        e["adjusted"] = Array(3, adjusted.data());
        e["depth"] = tc.penetration;
        e["vertices"] = vertices;
        e["neighbours"] = std::vector<int>(nb.begin(), nb.end());
        each.append(e);
      }
    } else {
      d["normal"] = py::none();
      d["depth"] = py::none();
    }
    d["contacts"] = each;
    return d;
  }

  const ModelInfo& model() const { return *model_; }
  py::dict Coefficients() const { return CoefficientsDict(*model_, file_, spec_); }

 private:
  const ModelInfo* model_;
  std::string spec_;
  std::string data_root_;
  CoeffFile file_;
  std::unique_ptr<Predictor> predictor_;
};

// The contact point reported with a hit: the centre moved back along the contact normal by the
// distance to the mesh (radius - penetration). For a contact with one triangle that is the
// closest point of the mesh; with several, the normal is their blend (Contact) and the point
// lies at the deepest contact's distance along it. NaN without a hit.
Eigen::Vector3d ContactPoint(const Contact& c, const double* center, double radius) {
  if (!c.hit) return Eigen::Vector3d::Constant(kNaN);
  return Eigen::Vector3d(center[0], center[1], center[2]) - (radius - c.penetration) * c.normal;
}

// The arena mesh of a datasets root, loaded once per process (PitchArena).
class PyArena {
 public:
  explicit PyArena(const FsPath& data_root) {
    const std::string root = ResolveDataRoot(data_root.bytes);
    arena_ = &PitchArena(root);  // InputError naming where it looked when root is ""
  }

  // A query the arena can answer: a finite centre and a radius in [0, kMaxQueryRadiusUu] (a NaN
  // centre or a negative radius would come back as a quiet "no hit", and so would a radius of
  // 1e50: the mesh's single-precision culls overflow).
  static constexpr double kMaxQueryRadiusUu = 1.0e6;  // 100 times the arena's length
  static void CheckQuery(const double* center, double radius, const std::string& what, int row) {
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(center[k]))
        throw InputError(what, row, k + 1, "centre coordinate is not finite");
    if (!(radius >= 0.0 && radius <= kMaxQueryRadiusUu))
      throw InputError("radius", row, 0,
                       "must be a number in [0, 1e6] (uu), got " + MessageNumber(radius, 6));
  }

  // Arena::Contains: each of the six axis-aligned rays from the point first meets a triangle's
  // front face (the C++ tests' inside test: a sampling aid, the mesh is open).
  bool Contains(const Array& point) const {
    if (point.ndim() != 1 || point.shape(0) != 3)
      throw InputError("point", 0, 0, "expected 3 values x, y, z (uu)");
    CheckQuery(point.data(), 0.0, "point", 0);
    return arena_->Contains({point.data()[0], point.data()[1], point.data()[2]});
  }

  py::dict Collide(const Array& center, double radius) const {
    if (center.ndim() != 1 || center.shape(0) != 3)
      throw InputError("center", 0, 0, "expected 3 values x, y, z (uu)");
    CheckQuery(center.data(), radius, "center", 0);
    const Contact c =
        arena_->Collide({center.data()[0], center.data()[1], center.data()[2]}, radius);
    const Eigen::Vector3d point = ContactPoint(c, center.data(), radius);
    py::dict d;
    d["hit"] = c.hit;
    d["point"] = Array(3, point.data());
    d["normal"] = Array(3, c.normal.data());
    d["depth"] = c.penetration;
    d["triangles"] = c.triangles;
    return d;
  }

  py::dict CollideBatch(const Array& centers, const py::object& radius_in, int threads) const {
    const Rows r = AsRows(centers, "centers", {3}, false);
    const Array radius = Array::ensure(radius_in);
    if (!radius || !(radius.ndim() == 0 || (radius.ndim() == 1 && radius.shape(0) == r.n)))
      throw InputError("radius", 0, 0,
                       "expected one radius or one per centre (" + std::to_string(r.n) + ")");
    const bool each = radius.ndim() == 1;
    for (int i = 0; i < r.n; ++i)
      CheckQuery(r.data + 3 * static_cast<std::size_t>(i), radius.data()[each ? i : 0], "centers",
                 i + 1);
    py::array_t<bool> hit(r.n);
    Array point(std::vector<py::ssize_t>{r.n, 3});
    Array normal(std::vector<py::ssize_t>{r.n, 3});
    Array depth(r.n);
    py::array_t<int> triangles(r.n);
    bool* h = hit.mutable_data();
    double* pnt = point.mutable_data();
    double* nrm = normal.mutable_data();
    double* dep = depth.mutable_data();
    int* tri = triangles.mutable_data();
    const double* rad = radius.data();
    {
      py::gil_scoped_release release;
      ParallelFor(r.n, threads, [&](int i) {
        const double* p = r.data + 3 * static_cast<std::size_t>(i);
        const double radius = each ? rad[i] : rad[0];
        const Contact c = arena_->Collide({p[0], p[1], p[2]}, radius);
        const Eigen::Vector3d q = ContactPoint(c, p, radius);
        h[i] = c.hit;
        for (int k = 0; k < 3; ++k) pnt[3 * i + k] = q(k);
        for (int k = 0; k < 3; ++k) nrm[3 * i + k] = c.normal(k);
        dep[i] = c.penetration;
        tri[i] = c.triangles;
      });
    }
    py::dict d;
    d["hit"] = hit;
    d["point"] = point;
    d["normal"] = normal;
    d["depth"] = depth;
    d["triangles"] = triangles;
    return d;
  }

  int TriangleCount() const { return arena_->triangle_count(); }

 private:
  const Arena* arena_ = nullptr;
};

py::dict EpisodeDict(const Episode& ep) {
  const bool car = ep.kind == EpisodeKind::kCar;
  const py::ssize_t n = ep.size();
  py::dict d;
  d["name"] = FsPath{ep.name};  // from the file name, which may not be UTF-8
  d["path"] = FsPath{ep.path};
  d["kind"] = car ? "car" : "ball";
  std::vector<int> source_row(n);
  std::vector<double> t_s(n);
  for (py::ssize_t k = 0; k < n; ++k) {
    source_row[k] = ep.rows[k].source_row;
    t_s[k] = ep.rows[k].t_s;
  }
  d["source_row"] = py::array_t<int>(n, source_row.data());
  d["t_s"] = Array(n, t_s.data());
  d["x"] = Vector3Rows(ep.rows, &Sample::x);
  d["v"] = Vector3Rows(ep.rows, &Sample::v);
  d["omega"] = Vector3Rows(ep.rows, &Sample::omega);
  d["step_dt_s"] = Array(static_cast<py::ssize_t>(ep.step_dt_s.size()), ep.step_dt_s.data());
  d["step_ticks"] =
      py::array_t<int>(static_cast<py::ssize_t>(ep.step_ticks.size()), ep.step_ticks.data());
  d["clock_origin_rows"] = ep.clock_origin_rows;
  d["merged_source_rows"] = ep.merged_source_rows;
  d["segment"] = ep.segment;
  d["notes"] = ep.notes;
  d["fingerprint"] = FingerprintText(ep.fingerprint);
  if (ep.reference_path.empty()) d["reference"] = py::none();
  else d["reference"] = FsPath{ep.reference_path};
  // The initial-state layout of Model.predict, one row per recorded row.
  Array states(std::vector<py::ssize_t>{n, car ? 12 : 9});
  for (py::ssize_t k = 0; k < n; ++k) {
    PredictedState p{ep.rows[k].x, ep.rows[k].v, ep.rows[k].omega, ep.rows[k].theta};
    PutRow(false, 0.0, p, car, states.mutable_data() + k * (car ? 12 : 9));
  }
  d["states"] = states;
  if (car) {
    Array theta(std::vector<py::ssize_t>{n, 3, 3});
    Array controls(std::vector<py::ssize_t>{n, 9});
    Array boost(n);
    py::array_t<bool> flags(std::vector<py::ssize_t>{n, 4});
    for (py::ssize_t k = 0; k < n; ++k) {
      const Sample& s = ep.rows[k];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) theta.mutable_data()[9 * k + 3 * i + j] = s.theta(i, j);
      const double u[9] = {s.t_s,
                           s.input.throttle,
                           s.input.steer,
                           s.input.pitch,
                           s.input.yaw,
                           s.input.roll,
                           s.input.jump ? 1.0 : 0.0,
                           s.input.boost ? 1.0 : 0.0,
                           s.input.handbrake ? 1.0 : 0.0};
      for (int c = 0; c < 9; ++c) controls.mutable_data()[9 * k + c] = u[c];
      boost.mutable_data()[k] = s.boost_amount;
      const bool f[4] = {s.on_ground, s.supersonic, s.jumped, s.double_jumped};
      for (int c = 0; c < 4; ++c) flags.mutable_data()[4 * k + c] = f[c];
    }
    d["theta"] = theta;
    d["controls"] = controls;
    d["boost_amount"] = boost;
    d["flags"] = flags;
  }
  return d;
}

// With keep_going, a file that cannot be read is named in a warnings.warn line (the tools'
// "unreadable FILE: reason") and the rest are read.
py::list ReadRecordingPy(const FsPath& path, const FsPath& data_root, bool keep_going) {
  std::vector<Episode> episodes;
  std::vector<SkippedInput> unreadable;
  {
    py::gil_scoped_release release;
    const std::string root = ResolveDataRoot(data_root.bytes);
    std::vector<SkippedInput>* bad = keep_going ? &unreadable : nullptr;
    episodes = ReadRecordingFiles(
        ExpandRecordingPaths({ResolveUnderRoot(path.bytes, root)}, nullptr, bad), {}, 0, bad);
  }
  for (const SkippedInput& u : unreadable)
    py::module_::import("warnings").attr("warn")(Text("unreadable " + u.path + ": " + u.reason));
  py::list out;
  for (const Episode& ep : episodes) out.append(EpisodeDict(ep));
  return out;
}

py::dict ReplayPy(const std::string& model_name, const std::vector<FsPath>& paths,
                  const FsPath& coeffs, const FsPath& data_root,
                  const std::vector<double>& horizons_s, double window_s, bool keep_going) {
  ReplayOptions o;
  o.keep_going = keep_going;
  o.model = model_name;
  for (const FsPath& path : paths) o.paths.push_back(path.bytes);
  o.coeffs_path = coeffs.bytes;
  o.data_root = ResolveDataRoot(data_root.bytes);
  o.horizons_s = horizons_s;
  o.window_s = window_s;
  o.quiet = true;
  o.keep_predictions = true;
  o.program = "rlfit.replay";
  std::string why;
  if (!o.Check(&why)) throw InputError("(options)", 0, 0, why);
  std::ostringstream warnings;
  std::vector<Episode> episodes;
  CoeffFile file;
  ReplayReport report;
  {
    py::gil_scoped_release release;
    report = ReplayFiles(o, warnings, &episodes, &file);
  }
  const bool car = report.has_orientation;
  const py::ssize_t width = car ? 12 : 9;
  py::list eps;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const Episode& ep = episodes[e];
    const EpisodeReport& r = report.episodes[e];
    const py::ssize_t n = ep.size();
    Array predicted(std::vector<py::ssize_t>{n, width});
    py::array_t<bool> covered(n);
    py::list regimes;
    for (py::ssize_t k = 0; k < n; ++k) {
      const PredictedState* p = r.PredictedAt(static_cast<int>(k));
      double* row = predicted.mutable_data() + k * width;
      if (p != nullptr) {
        PutRow(false, 0.0, *p, car, row);
      } else {
        for (py::ssize_t c = 0; c < width; ++c) row[c] = kNaN;
      }
      const Regime regime = r.regimes.empty() ? Regime::kCovered : r.regimes[k];
      covered.mutable_data()[k] = regime == Regime::kCovered;
      regimes.append(RegimeLabel(regime));
    }
    py::dict d = EpisodeDict(ep);
    d["split"] = r.split;
    d["covered"] = covered;
    d["regime"] = regimes;
    d["predicted"] = predicted;
    eps.append(d);
  }
  py::dict out;
  out["summary"] = JsonToPython(report.ToJson());
  out["table"] = Text(report.Table());
  out["episodes"] = eps;
  out["warnings"] = Text(warnings.str());
  out["coefficients"] = CoefficientsDict(FindModel(model_name), file, coeffs.bytes);
  return out;
}

// --- rlfit.dask: the client's side of fit/distributed.h and the workers' task --------------

// A Python callable map(task, payloads) -> answers (bytes) as a ShardMap. The callable is held
// through a shared_ptr whose deleter takes the GIL, so the C++ side copies the ShardMap freely
// without it; each call takes the GIL.
ShardMap PythonMap(const py::object& map) {
  auto held = std::shared_ptr<py::object>(new py::object(map), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
  return [held](const std::string& task, const std::vector<std::string>& payloads) {
    py::gil_scoped_acquire gil;
    py::list list;
    for (const std::string& p : payloads) list.append(py::bytes(p));
    const py::object answers = (*held)(task, list);
    std::vector<std::string> out;
    for (const py::handle a : answers) out.push_back(a.cast<std::string>());
    return out;
  };
}

// Options of the rlfit.dask calls, from the dict rlfit/dask.py builds (paths as bytes).
template <typename T>
T Get(const py::dict& d, const char* key, T fallback) {
  return d.contains(key) && !d[key].is_none() ? d[key].cast<T>() : fallback;
}

// The tools' --reference, --handbrake-unrecorded and --clock-origin (reference as bytes).
RecordingFacts FactsFrom(const py::dict& d) {
  RecordingFacts facts;
  facts.reference_dir = Get<std::string>(d, "reference", "");
  facts.handbrake_unrecorded = Get(d, "handbrake_unrecorded", false);
  facts.clock_origin_rows = Get(d, "clock_origin", facts.clock_origin_rows);
  std::string why;
  if (!facts.Check(&why)) throw InputError("(options)", 0, 0, why);
  if (!facts.reference_dir.empty() && !fs::is_directory(facts.reference_dir))
    throw InputError(facts.reference_dir, 0, 0, "--reference: not a folder");
  return facts;
}

DistributedOptions DistFrom(const py::dict& d) {
  DistributedOptions o;
  o.shards = Get(d, "shards", o.shards);
  o.worker_threads = Get(d, "worker_threads", o.worker_threads);
  std::string why;
  if (!o.Check(&why)) throw InputError("(options)", 0, 0, why);
  return o;
}

FitOptions FitFrom(const py::dict& d) {
  FitOptions o;
  o.model = Get<std::string>(d, "model", o.model);
  o.paths = Get(d, "paths", o.paths);
  o.data_root = ResolveDataRoot(Get<std::string>(d, "data_root", ""));
  o.init_coeffs = Get(d, "init", o.init_coeffs);
  o.out_path = Get(d, "out", o.out_path);
  o.window_s = Get(d, "window_s", o.window_s);
  o.stride_s = Get(d, "stride_s", o.stride_s);
  o.holdout_every = Get(d, "holdout_every", o.holdout_every);
  o.integration.tick_rate_hz = Get(d, "tick_rate_hz", o.integration.tick_rate_hz);
  o.integration.input_delay_s = Get(d, "input_delay_s", o.integration.input_delay_s);
  o.integration.tick_phase = Get(d, "tick_phase", o.integration.tick_phase);
  auto given = [&d](const char* key) { return d.contains(key) && !d[key].is_none(); };
  o.model_timing = !given("input_delay_s") && !given("tick_phase");
  o.integration.tick_aligned_inputs =
      Get(d, "tick_aligned_inputs", o.integration.tick_aligned_inputs);
  o.integration.rotate_with_new_omega =
      Get(d, "rotate_with_new_omega", o.integration.rotate_with_new_omega);
  o.selection.held = Get(d, "hold", o.selection.held);
  o.selection.freed = Get(d, "free", o.selection.freed);
  o.solver.loss = Get(d, "loss", o.solver.loss);
  o.solver.loss_scale = Get(d, "loss_scale", o.solver.loss_scale);
  o.solver.max_iterations = Get(d, "max_iterations", o.solver.max_iterations);
  o.solver.step_sigmas = Get(d, "step_sigmas", o.solver.step_sigmas);
  o.replay.horizons_s = Get(d, "horizons_s", o.replay.horizons_s);
  o.replay.force = Get(d, "force", false);
  o.keep_going = Get(d, "keep_going", false);
  o.replay.keep_going = o.keep_going;
  o.facts = FactsFrom(d);
  o.quiet = Get(d, "quiet", true);
  o.tail_set = Get(d, "tail_set", o.tail_set);
  std::string why;
  if (!o.Check(&why)) throw InputError("(options)", 0, 0, why);
  return o;
}

// The inputs of a fit or crossval (recordings, shipped predictions, the mesh, --init), which no
// output may be (CheckOutputTarget, as the tools check).
std::vector<std::string> FitInputs(const FitOptions& o) {
  std::vector<std::string> inputs =
      InputFilesFor(o.model, o.paths, o.data_root, o.facts, o.keep_going);
  if (!o.init_coeffs.empty()) inputs.push_back(o.init_coeffs);
  return inputs;
}

py::dict DaskReplay(const py::dict& d, const py::object& map) {
  ReplayOptions o;
  o.model = Get<std::string>(d, "model", o.model);
  o.paths = Get(d, "paths", o.paths);
  o.data_root = ResolveDataRoot(Get<std::string>(d, "data_root", ""));
  o.coeffs_path = Get(d, "coeffs", o.coeffs_path);
  o.out_dir = Get(d, "out", o.out_dir);
  o.horizons_s = Get(d, "horizons_s", o.horizons_s);
  o.window_s = Get(d, "window_s", o.window_s);
  o.force = Get(d, "force", false);
  o.plots = Get(d, "plots", false);
  o.keep_going = Get(d, "keep_going", false);
  o.facts = FactsFrom(d);
  o.quiet = true;
  o.program = "rlfit.dask";
  std::string why;
  if (!o.Check(&why)) throw InputError("(options)", 0, 0, why);
  const DistributedOptions dist = DistFrom(d);
  std::vector<std::string> inputs =
      InputFilesFor(o.model, o.paths, o.data_root, o.facts, o.keep_going);
  for (const std::string& c : CoeffsInputFiles(o.model, o.coeffs_path)) inputs.push_back(c);
  CheckOutputTarget(o.out_dir, OutputKind::kFolder, inputs, o.force);
  const ShardMap shard_map = PythonMap(map);
  std::ostringstream out, warnings;
  ReplayReport report;
  {
    py::gil_scoped_release release;
    report = DistributedReplay(o, dist, shard_map, out, warnings);
  }
  py::dict result;
  result["summary"] = JsonToPython(report.ToJson());
  result["table"] = Text(out.str());
  result["warnings"] = Text(warnings.str());
  return result;
}

py::dict DaskFit(const py::dict& d, const py::object& map) {
  const FitOptions o = FitFrom(d);
  const DistributedOptions dist = DistFrom(d);
  const bool force = Get(d, "force", false);
  const std::string plots = Get<std::string>(d, "plots", "");
  const std::vector<std::string> inputs = FitInputs(o);
  CheckOutputTarget(o.out_path, OutputKind::kCoeffsFile, inputs, force);
  if (!plots.empty()) {  // as `rlfit fit --plots`
    if (o.out_path.empty()) throw InputError("plots", 0, 0, "needs out (the coefficients file)");
    const fs::path out = fs::weakly_canonical(fs::absolute(o.out_path));
    const fs::path folder = fs::weakly_canonical(fs::absolute(plots));
    if (std::mismatch(folder.begin(), folder.end(), out.begin(), out.end()).first == folder.end())
      throw InputError(o.out_path, 0, 0,
                       "lies inside the --plots folder, which is replaced as a whole: choose "
                       "another --out or --plots");
    CheckOutputTarget(plots, OutputKind::kFolder, inputs, force);
  }
  const ShardMap shard_map = PythonMap(map);
  std::ostringstream out;
  FitResult r;
  {
    py::gil_scoped_release release;
    r = DistributedFit(o, dist, shard_map, out);
    if (!plots.empty()) {
      StagedDir staged(plots, force);
      RunPlotScript(PlotScriptPath("plot_fit.py"),
                    {o.out_path, staged.dir(), "--shown-as", staged.final_dir()});
      staged.Commit();
    }
  }
  py::dict result;
  result["coefficients"] = JsonToPython(CoeffFileToJson(r.coeffs, *FindModel(o.model).layout));
  result["text"] = Text(out.str());
  return result;
}

py::dict DaskCrossval(const py::dict& d, const py::object& map) {
  FitOptions o = FitFrom(d);
  const DistributedOptions dist = DistFrom(d);
  const int folds = Get(d, "folds", 4);
  const std::string out_dir = o.out_path;
  o.out_path.clear();
  CheckOutputTarget(out_dir, OutputKind::kFolder, FitInputs(o), o.replay.force);
  const ShardMap shard_map = PythonMap(map);
  std::ostringstream out;
  ReplayReport report;
  {
    py::gil_scoped_release release;
    report = DistributedCrossValidation(o, folds, out_dir, dist, shard_map, out);
  }
  py::dict result;
  result["summary"] = JsonToPython(report.ToJson());
  result["text"] = Text(out.str());
  return result;
}

}  // namespace
}  // namespace rlfit

PYBIND11_MODULE(_rlfit, m) {
  using namespace rlfit;
  m.doc() =
      "rlfit: the Rocket League ball and car models of the rlfit tools (same library as rlsim "
      "and rlfit). Arrays are float64; shapes and columns in python/README.md.";
  FindResourcesBesideModule();
  SetDataRootArgument("data_root=DIR");  // the tools' --data is this module's data_root=

  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  static py::exception<InternalError> internal_error(m, "InternalError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      // The message as text (a file name's stray bytes as \xHH), the file as os.fsdecode
      // gives it (it opens again).
      py::object err = py::handle(input_error.ptr())(Text(e.what()));
      err.attr("file") = FsPath{e.file()};
      err.attr("row") = e.row();
      err.attr("column") = e.column();
      PyErr_SetObject(input_error.ptr(), err.ptr());
    } catch (const InternalError& e) {
      PyErr_SetString(internal_error.ptr(), e.what());
    }
  });

  m.attr("__version__") = RLFIT_VERSION;
  m.attr("TICK_S") = 1.0 / game::kTickRateHz;
  m.attr("BALL_ROW_S") = 1.0 / game::kEpisodeRowRateHz;
  // The registry's names (pybind11 copies the docstring).
  const std::string models_doc = "The model names, as the tools take them: " +
                                 RegisteredNamesText() + ".";
  m.def("models", &ModelNames, models_doc.c_str());
  m.def("resource_root", &ResourceRoot, "The folder holding results/ and scripts/.");
  m.def(
      "data_root",
      [](const FsPath& data_root) { return FsPath{ResolveDataRoot(data_root.bytes)}; },
      py::arg("data_root") = "",
        "The datasets root the tools would use ('' if none is found).");

  m.def(
      "load_coefficients",
      [](const std::string& model, const FsPath& coeffs) {
        const ModelInfo& info = FindModel(model);
        return CoefficientsDict(info, LoadCoefficients(info, coeffs.bytes), coeffs.bytes);
      },
      py::arg("model"), py::arg("coeffs") = "",
      "Coefficients of `model`: coeffs '' = results/<model>/coeffs.json, 'seed' = the seed "
      "notes' values, else a coefficients JSON. Dict: model, names, units, values (K,), "
      "std_errors (K,) or None, source, file (the JSON).");

  py::class_<PyModel>(m, "Model")
      .def(
          py::init<const std::string&, const FsPath&, const FsPath&, const py::object&, bool,
                   bool>(),
          py::arg("name"), py::arg("coeffs") = "", py::arg("data_root") = "",
          py::arg("values") = py::none(), py::arg("recording_drift") = false,
          py::arg("recording_input_delay") = false,
          "A model with its coefficients (see load_coefficients; `values` (K,) replaces them). "
          "The ball loads the arena mesh of the datasets root once. predict, rollout and step "
          "leave out the aerial recordings' Euler-rate drift (coefficients *drift_*) unless "
          "recording_drift; a control row acts from its own time (a row at a tick's start on "
          "that tick, as Car.step) unless recording_input_delay (the recordings' 15.1 ms, as "
          "replay); they refuse a start the model does not cover (as rlsim predict) "
          "and a file whose integration.tick_rate_hz is not 120.")
      .def_property_readonly("name", [](const PyModel& p) { return p.model().name; })
      .def_property_readonly("columns",
                             [](const PyModel& p) { return StateColumns(p.car(), true); })
      .def_property_readonly("coefficients", &PyModel::Coefficients)
      .def_property_readonly("default_dt_s",
                             [](const PyModel& p) { return DefaultPredictDt(p.model()); })
      .def(
          "predict",
          [](const PyModel& p, const Array& state, double duration_s, double dt_s,
             const py::object& controls) {
            return p.Predict(state, duration_s, dt_s, controls, 1, false);
          },
          py::arg("state"), py::arg("duration_s"), py::arg("dt_s") = 0.0,
          py::arg("controls") = py::none(),
          "Trajectory (rows, C) from one state (6, 9 or, car, 12 values), columns `columns`.")
      .def(
          "rollout",
          [](const PyModel& p, const Array& state, const py::object& controls, double duration_s,
             double dt_s) { return p.Predict(state, duration_s, dt_s, controls, 1, false); },
          py::arg("state"), py::arg("controls"), py::arg("duration_s"), py::arg("dt_s") = 0.0,
          "predict() with a control sequence (M, 9) t_s first, or (M, 8) one per row.")
      .def(
          "predict_batch",
          [](const PyModel& p, const Array& states, double duration_s, double dt_s,
             const py::object& controls,
             int threads) { return p.Predict(states, duration_s, dt_s, controls, threads, true); },
          py::arg("states"), py::arg("duration_s"), py::arg("dt_s") = 0.0,
          py::arg("controls") = py::none(), py::arg("threads") = 0,
          "Trajectories (N, rows, C) from states (N, 6|9|12); threads 0 = every core.")
      .def("step", &PyModel::Step, py::arg("state"), py::arg("controls") = py::none(),
           py::arg("dt_s") = 0.0, "The state one row later (C - 1 values, no t_s).")
      .def("step_ticks", &PyModel::StepTicks, py::arg("state"), py::arg("ticks"),
           "Ball only: (ticks + 1, 9) physics ticks x, v, omega from one tick state (9,), each "
           "one StepBall of 1 / tick_rate_hz s (the replay's step; a recorded row is a blend "
           "of two ticks, not a tick state).")
      .def("ball_contact", &PyModel::BallContact, py::arg("center"),
           "Ball only: the contact a tick at `center` (3,) sees: dict hit, radius, triangles, "
           "normal (the one the step bounces off) and depth or None, contacts (the manifold's, "
           "deepest first: entry, point, normal, adjusted, depth, vertices (3, 3), neighbours "
           "(3; -1 a boundary edge)).");

  py::class_<PyArena>(m, "Arena")
      .def(py::init<const FsPath&>(), py::arg("data_root") = "",
           "The arena mesh (meshes/pitch.dat of the datasets root), loaded once.")
      .def_property_readonly("triangle_count", &PyArena::TriangleCount)
      .def("contains", &PyArena::Contains, py::arg("point"),
           "True if the point (3,), uu, is inside the arena: each of the six axis-aligned rays "
           "from it first meets a triangle's front face (Arena::Contains; about 2 us).")
      .def("collide", &PyArena::Collide, py::arg("center"), py::arg("radius"),
           "Sphere contact: dict hit, point (3,), normal (3,), depth (uu), triangles.")
      .def("collide_batch", &PyArena::CollideBatch, py::arg("centers"), py::arg("radius"),
           py::arg("threads") = 0,
           "Contacts of N spheres: dict hit (N,), point (N, 3), normal (N, 3), depth (N,), "
           "triangles (N,).");

  m.def("read_recording", &ReadRecordingPy, py::arg("path"), py::arg("data_root") = "",
        py::arg("keep_going") = false,
        "Episodes of a recording file or folder (the tools' reader): a list of dicts. "
        "keep_going: a file that cannot be read is named in a UserWarning and the rest read.");
  m.def(
      "_run_shard_task",
      [](const std::string& task, const py::bytes& payload) {
        const std::string p = payload;
        std::string answer;
        {
          py::gil_scoped_release release;
          answer = RunShardTask(task, p);
        }
        return py::bytes(answer);
      },
      py::arg("task"), py::arg("payload"),
      "rlfit.dask's worker task (fit/distributed.h RunShardTask): bytes in, bytes out.");
  m.def("_dask_replay", &DaskReplay, py::arg("options"), py::arg("map"));
  m.def("_dask_fit", &DaskFit, py::arg("options"), py::arg("map"));
  m.def("_dask_crossval", &DaskCrossval, py::arg("options"), py::arg("map"));
  m.def("replay", &ReplayPy, py::arg("model"), py::arg("paths") = std::vector<FsPath>{},
        py::arg("coeffs") = "", py::arg("data_root") = "",
        py::arg("horizons_s") = std::vector<double>{}, py::arg("window_s") = 0.5,
        py::arg("keep_going") = false,
        "`rlsim replay` without files: dict summary (replay_summary.json's content), table, "
        "episodes (with predicted (n, 9|12)), warnings, coefficients. keep_going: as "
        "--keep-going, files that cannot be read are listed in summary['unreadable'].");
  BindSimObjects(m);  // Ball, Car, Controls (python/sim_objects.cc)
}
