// Tests of the arena mesh: loading pitch.dat and bad files, hand-computed contacts, Lobot's
// sphere-triangle reference answers, the BVH query against the naive loop, and the contact
// manifold (CollideEach) against every triangle.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Geometry>
#include "src/io/arena_file.h"
#include "src/io/csv_parser.h"

#include "src/common/error.h"
#include "src/io/recording.h"
#include "src/models/arena.h"
#include "tests/test_util.h"

namespace rlfit {
namespace {

using Eigen::Vector3d;

// The ball's collision radius in the arena, uu (it rests at z = 93.15).
constexpr double kRestRadius = 93.15;
// Radius the benchmarks use, uu.
constexpr double kBallRadius = 92.75;
// Hand-computed penetrations: the contact is computed in double from exact float vertices,
// so only a few ulps of ~100 uu are lost.
constexpr double kHandTolerance = 1e-9;
// BVH vs naive normal: both sum the same terms in a different order, so they differ by a few
// ulps; 1e-12 leaves room without hiding a missing or extra triangle (those move it by >1e-6).
constexpr double kNormalTolerance = 1e-12;
constexpr double kPi = 3.14159265358979323846;

using testing::DataRoot;
using testing::TempDir;

// Loaded once: building the BVH takes a few milliseconds.
const Arena& Pitch() {
  static const Arena arena = LoadArena(DataRoot() + "/meshes/pitch.dat");
  return arena;
}

Triangle MakeTriangle(const Vector3d& a, const Vector3d& b, const Vector3d& c) {
  Triangle t;
  t.p[0] = a.cast<float>();
  t.p[1] = b.cast<float>();
  t.p[2] = c.cast<float>();
  return t;
}

Vector3d FaceNormal(const Triangle& t) {
  const Vector3d a = t.p[0].cast<double>(), b = t.p[1].cast<double>(), c = t.p[2].cast<double>();
  return (b - a).cross(c - a).normalized();
}

// Expects LoadArena to throw an InputError at this row and column.
void ExpectLoadError(const std::string& path, int row, int column) {
  try {
    LoadArena(path);
    FAIL("no error for " << path);
  } catch (const InputError& e) {
    INFO(e.what());
    CHECK(e.file() == path);
    CHECK(e.row() == row);
    CHECK(e.column() == column);
  }
}

constexpr char kFloorRow[] = "-4096.\t6000.\t0.\t4096.\t-6000.\t0.\t4096.\t6000.\t0.\n";

TEST_CASE("the pitch mesh loads 8028 triangles" * doctest::skip(testing::NoData())) {
  const Arena& arena = Pitch();
  CHECK(arena.triangle_count() == 8028);
  // First line of pitch.dat: half of the floor.
  const Triangle& t = arena.triangles()[0];
  CHECK(t.p[0] == Eigen::Vector3f(-4096, 6000, 0));
  CHECK(t.p[1] == Eigen::Vector3f(4096, -6000, 0));
  CHECK(t.p[2] == Eigen::Vector3f(4096, 6000, 0));
}

TEST_CASE("malformed mesh files name the row and column") {
  TempDir dir;
  const std::string good = std::string(kFloorRow) + kFloorRow;
  CHECK(LoadArena(dir.Write("good.dat", good)).triangle_count() == 2);
  ExpectLoadError(dir.Write("short.dat", good + "1\t2\t3\t4\t5\t6\t7\t8\n"), 3, 9);
  ExpectLoadError(dir.Write("one.dat", "1 2 3 4 5 6 7 8 9\n"), 1, 2);
  ExpectLoadError(dir.Write("long.dat", "1\t2\t3\t4\t5\t6\t7\t8\t9\t10\n" + good), 1, 10);
  ExpectLoadError(dir.Write("word.dat", kFloorRow + std::string("0\t0\t0\t1\tx1\t0\t0\t1\t0\n")), 2,
                  5);
  ExpectLoadError(dir.Write("nan.dat", good + "0\t0\t0\t1\t0\t0\tnan\t1\t0\n"), 3, 7);
  ExpectLoadError(dir.Write("huge.dat", "0\t0\t0\t1\t0\t0\t0\t1e39\t0\n"), 1, 8);
  ExpectLoadError(dir.Write("empty_cell.dat", "0\t0\t\t1\t0\t0\t0\t1\t0\n"), 1, 3);
  ExpectLoadError(dir.Write("flat.dat", good + "0\t0\t0\t1\t1\t1\t2\t2\t2\n"), 3, 0);
  ExpectLoadError(dir.Write("blank.dat", std::string(kFloorRow) + "\n" + kFloorRow), 2, 1);
  ExpectLoadError(dir.Write("nothing.dat", ""), 0, 0);
  ExpectLoadError(dir.path() + "/missing.dat", 0, 0);
}

TEST_CASE("triangles given in code are checked") {
  std::vector<Triangle> triangles = {MakeTriangle({0, 0, 0}, {1, 0, 0}, {0, 1, 0}),
                                     MakeTriangle({0, 0, 0}, {1, 0, 0}, {2, 0, 0})};
  CHECK_THROWS_AS(Arena{triangles}, InputError);
  triangles[1].p[2] = Eigen::Vector3f(0, 0, std::nanf(""));
  CHECK_THROWS_AS(Arena{triangles}, InputError);
  triangles.pop_back();
  CHECK(Arena{triangles}.triangle_count() == 1);
  // An empty mesh is allowed and touches nothing.
  const Arena empty(std::vector<Triangle>{});
  CHECK_FALSE(empty.Collide({0, 0, 0}, 100).hit);
  CHECK_FALSE(empty.CollideNaive({0, 0, 0}, 100).hit);
}

TEST_CASE("hand-computed contacts with the floor and a side wall" *
          doctest::skip(testing::NoData())) {
  const Arena& arena = Pitch();
  for (const bool naive : {false, true}) {
    CAPTURE(naive);
    auto collide = [&](const Vector3d& c, double r) {
      return naive ? arena.CollideNaive(c, r) : arena.Collide(c, r);
    };
    // Resting ball: the sphere touches the floor, penetration 0. (100, 200) is off the
    // floor's diagonal, so only one floor triangle.
    Contact c = collide({100, 200, kRestRadius}, kRestRadius);
    CHECK(c.hit);
    CHECK(c.triangles == 1);
    CHECK(c.penetration >= 0.0);
    CHECK(c.penetration < kHandTolerance);
    CHECK((c.normal - Vector3d::UnitZ()).norm() < kHandTolerance);
    CHECK_FALSE(collide({100, 200, kRestRadius + 0.01}, kRestRadius).hit);
    // Sunk to z = 50: penetration 93.15 - 50; on the diagonal both floor halves touch.
    c = collide({0, 0, 50}, kRestRadius);
    CHECK(c.hit);
    CHECK(c.triangles == 2);
    CHECK(std::abs(c.penetration - 43.15) < kHandTolerance);
    CHECK((c.normal - Vector3d::UnitZ()).norm() < kHandTolerance);
    // The flat side wall x = 4096 (normal -x), halfway up, 50 uu away and clear of the
    // diagonal that splits the wall into two triangles.
    c = collide({4046, 2000, 1000}, kRestRadius);
    CHECK(c.triangles == 1);
    CHECK(c.hit);
    CHECK(std::abs(c.penetration - 43.15) < kHandTolerance);
    CHECK((c.normal + Vector3d::UnitX()).norm() < kHandTolerance);
    // Near the floor's diagonal the neighbouring triangle touches at its edge, and the
    // normal is the penetration-weighted mean of +z and the direction from that edge.
    // Centre 30 uu to the side of the diagonal (through (0, 0) with direction (8192, -12000))
    // and 60 uu up: contacts 93.15 - 60 along +z and 93.15 - |(30, 60)| along (30 m + 60 z).
    {
      const Vector3d m = Vector3d(12000, 8192, 0).normalized();  // across the diagonal
      const double e = 30.0, h = 60.0, d = std::hypot(e, h);
      c = collide(e * m + h * Vector3d::UnitZ(), kRestRadius);
      const Vector3d expected = ((kRestRadius - h) * Vector3d::UnitZ() +
                                 (kRestRadius - d) / d * (e * m + h * Vector3d::UnitZ()))
                                    .normalized();
      CHECK(c.triangles == 2);
      CHECK(std::abs(c.penetration - (kRestRadius - h)) < kHandTolerance);
      CHECK((c.normal - expected).norm() < kHandTolerance);
      CHECK(expected.z() < 0.99);  // the edge contact tilts the normal by ~12 degrees
    }
    // Mid-air: nothing.
    c = collide({0, 0, 1000}, kRestRadius);
    CHECK_FALSE(c.hit);
    CHECK(c.triangles == 0);
    // Bad queries touch nothing.
    CHECK_FALSE(collide({std::nan(""), 0, 50}, kRestRadius).hit);
    CHECK_FALSE(collide({0, 0, 50}, -1.0).hit);
    CHECK_FALSE(collide({0, 0, 50}, std::numeric_limits<double>::infinity()).hit);
    CHECK_FALSE(collide({0, 0, std::numeric_limits<double>::infinity()}, kRestRadius).hit);
  }
}

TEST_CASE("normals turn smoothly as the ball rolls over the curved floor-to-wall ramp" *
          doctest::skip(testing::NoData())) {
  const Arena& arena = Pitch();
  // The ramp at y = 1000 is a quarter circle of radius 256 around (3840, 256) in (x, z), cut
  // into ~10-degree facets. Walk the centre along it in 0.4 uu steps, 40 uu into the mesh.
  // With the normal of the single deepest facet the direction would jump by the angle
  // between facets at every facet edge.
  constexpr double kMaxTurnPerStepDeg = 1.0;
  constexpr double kPathRadius = 256.0 - kRestRadius + 40.0;
  Vector3d previous = Vector3d::Zero();
  double largest_turn_deg = 0.0;
  int contacts = 0, multi_facet = 0;
  for (int step = 0; step <= 800; ++step) {
    const double angle = step * kPi / 2.0 / 800.0;
    const Vector3d center(3840.0 + kPathRadius * std::sin(angle), 1000.0,
                          256.0 - kPathRadius * std::cos(angle));
    const Contact c = arena.Collide(center, kRestRadius);
    if (!c.hit) continue;
    ++contacts;
    if (c.triangles > 1) ++multi_facet;
    if (previous != Vector3d::Zero())
      largest_turn_deg = std::max(largest_turn_deg,
                                  std::acos(std::min(1.0, previous.dot(c.normal))) * 180.0 / kPi);
    previous = c.normal;
  }
  INFO("largest turn " << largest_turn_deg << " deg");
  CHECK(contacts == 801);
  CHECK(multi_facet > 400);
  CHECK(largest_turn_deg < kMaxTurnPerStepDeg);
  CHECK(previous.x() < -0.9);  // ends against the side wall
}

// --- Lobot's reference answers ----------------------------------------------------------

using TabReader9 = io::CSVReader<9, io::trim_chars<' ', '\t'>, io::no_quote_escape<'\t'>>;
using TabReader4 = io::CSVReader<4, io::trim_chars<' ', '\t'>, io::no_quote_escape<'\t'>>;

std::vector<Triangle> ReadReferenceTriangles(const std::string& path) {
  TabReader9 reader(path);
  reader.set_header("a", "b", "c", "d", "e", "f", "g", "h", "i");
  std::vector<Triangle> triangles;
  double v[9];
  while (reader.read_row(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]))
    triangles.push_back(MakeTriangle({v[0], v[1], v[2]}, {v[3], v[4], v[5]}, {v[6], v[7], v[8]}));
  return triangles;
}

struct Sphere {
  Vector3d center;
  double radius;
};

std::vector<Sphere> ReadReferenceSpheres(const std::string& path) {
  TabReader4 reader(path);
  reader.set_header("x", "y", "z", "r");
  std::vector<Sphere> spheres;
  double x, y, z, r;
  while (reader.read_row(x, y, z, r)) spheres.push_back({{x, y, z}, r});
  return spheres;
}

// A count, then that many 0/1 answers, one per line.
std::vector<int> ReadReferenceAnswers(const std::string& path) {
  io::CSVReader<1> reader(path);
  reader.set_header("answer");
  int count = 0, answer = 0;
  std::vector<int> answers;
  if (!reader.read_row(count)) return answers;
  while (reader.read_row(answer)) answers.push_back(answer);
  REQUIRE(static_cast<int>(answers.size()) == count);
  return answers;
}

TEST_CASE("sphere-triangle predicate agrees with Lobot's sphere_tri and tri_sphere answers" *
          doctest::skip(testing::NoData())) {
  // spheres.txt and tris.txt hold 50 shapes each; sphere_tri.txt answers intersect(sphere i,
  // tri j) at i * 50 + j, tri_sphere.txt intersect(tri i, sphere j). The closest calls are
  // 2.6e-4 (unit-sized shapes) from the boundary, far above float rounding of the vertices.
  const std::string dir = DataRoot() + "/intersections/";
  const auto spheres = ReadReferenceSpheres(dir + "spheres.txt");
  const auto triangles = ReadReferenceTriangles(dir + "tris.txt");
  const auto sphere_tri = ReadReferenceAnswers(dir + "sphere_tri.txt");
  const auto tri_sphere = ReadReferenceAnswers(dir + "tri_sphere.txt");
  const int n = static_cast<int>(spheres.size());
  REQUIRE(n == 50);
  REQUIRE(static_cast<int>(triangles.size()) == n);
  REQUIRE(static_cast<int>(sphere_tri.size()) == n * n);
  REQUIRE(static_cast<int>(tri_sphere.size()) == n * n);

  int hits = 0, wrong = 0;
  for (int j = 0; j < n; ++j) {
    const Arena one(std::vector<Triangle>{triangles[j]});
    for (int i = 0; i < n; ++i) {
      const bool bvh = one.Collide(spheres[i].center, spheres[i].radius).hit;
      const bool naive = one.CollideNaive(spheres[i].center, spheres[i].radius).hit;
      hits += bvh;
      if (bvh != (sphere_tri[i * n + j] == 1) || naive != bvh ||
          bvh != (tri_sphere[j * n + i] == 1)) {
        ++wrong;
        MESSAGE("sphere " << i << ", triangle " << j << ": bvh " << bvh << ", naive " << naive
                          << ", expected " << sphere_tri[i * n + j]);
      }
    }
  }
  CHECK(wrong == 0);
  CHECK(hits == 272);  // counted from the reference files
}

// --- BVH against the naive loop ---------------------------------------------------------

// Uniform in the mesh's bounding box, kept if Arena::Contains says it is inside the arena.
Vector3d SampleInside(const Arena& arena, std::mt19937_64& rng) {
  Eigen::Vector3f lo = arena.triangles()[0].p[0], hi = lo;
  for (const Triangle& t : arena.triangles())
    for (const auto& p : t.p) {
      lo = lo.cwiseMin(p);
      hi = hi.cwiseMax(p);
    }
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (;;) {
    const Vector3d p(lo.x() + u(rng) * (hi.x() - lo.x()), lo.y() + u(rng) * (hi.y() - lo.y()),
                     lo.z() + u(rng) * (hi.z() - lo.z()));
    if (arena.Contains(p)) return p;
  }
}

// Whether two queries' contacts agree: hit, triangle count and penetration exactly, the normals
// within `normal_tolerance` (0: bit for bit).
bool SameContact(const Contact& a, const Contact& b, double normal_tolerance = 0.0) {
  return a.hit == b.hit && a.triangles == b.triangles && a.penetration == b.penetration &&
         (normal_tolerance == 0.0 ? a.normal == b.normal
                                  : (a.normal - b.normal).norm() <= normal_tolerance);
}

// "hit/triangles/penetration", for a mismatch's message.
std::string Brief(const Contact& c) {
  std::ostringstream out;
  out << c.hit << "/" << c.triangles << "/" << c.penetration;
  return out.str();
}

// The random draws of the tests that place spheres in and near the pitch mesh, from one seeded
// stream: uniform [0, 1) numbers, points inside the arena, random triangles, points of their
// faces and random directions. Each test takes its draws in a fixed order, so its spheres are
// the same from run to run.
class MeshSampler {
 public:
  MeshSampler(const Arena& arena, std::uint64_t seed)
      : arena_(arena), rng_(seed), pick_(0, arena.triangle_count() - 1) {}

  double Uniform() { return u_(rng_); }
  Vector3d Inside() { return SampleInside(arena_, rng_); }
  const Triangle& AnyTriangle() { return arena_.triangles()[pick_(rng_)]; }
  // Uniform on the face of `t`: barycentric (a, b), folded back into the triangle when a + b > 1.
  Vector3d PointOnFace(const Triangle& t) {
    double a = Uniform(), b = Uniform();
    if (a + b > 1.0) {
      a = 1.0 - a;
      b = 1.0 - b;
    }
    const Vector3d p0 = t.p[0].cast<double>();
    return p0 + a * (t.p[1].cast<double>() - p0) + b * (t.p[2].cast<double>() - p0);
  }
  // A uniformly random unit vector: three standard normals, normalized. The draws fill z, y,
  // then x, the order in which the tests' Vector3d(gauss, gauss, gauss) took them (GCC).
  Vector3d Direction() {
    const double z = gauss_(rng_), y = gauss_(rng_), x = gauss_(rng_);
    return Vector3d(x, y, z).normalized();
  }
  // Where the tests gather a list: one in four (k % 4 == 0) anywhere inside the arena, the rest
  // a ball's radius +- spread / 2 from a random point of a random triangle.
  Vector3d Anchor(int k, double spread) {
    if (k % 4 == 0) return Inside();
    const Vector3d q = PointOnFace(AnyTriangle());
    const Vector3d dir = Direction();
    return q + (kRestRadius + spread * Uniform() - 0.5 * spread) * dir;
  }

 private:
  const Arena& arena_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> u_{0.0, 1.0};
  std::uniform_int_distribution<int> pick_;
  std::normal_distribution<double> gauss_{0.0, 1.0};
};

TEST_CASE("BVH and naive queries give the same contacts on 100k random spheres" *
          doctest::skip(testing::NoData())) {
  // Under the sanitizers 2k: the naive query visits all 8028 triangles (an hour for 100k there).
  const Arena& arena = Pitch();
  MeshSampler draw(arena, 20240611);

  constexpr int kSpheres = testing::kSanitized ? 2000 : 100000;
  int hits = 0, multi = 0, mismatches = 0;
  for (int k = 0; k < kSpheres; ++k) {
    // Three in four are ball-sized; the rest span small to car-sized spheres.
    const double radius = k % 4 != 3 ? kBallRadius : 10.0 + 290.0 * draw.Uniform();
    Vector3d center;
    if (k % 2 == 0) {
      // Anywhere inside the arena.
      center = draw.Inside();
    } else {
      // Near a random point of a random triangle: along its normal at radius +- 2 uu
      // (touching, or just missing), or in a random direction within 1.2 radii.
      const Triangle& t = draw.AnyTriangle();
      const Vector3d q = draw.PointOnFace(t);
      if (k % 4 == 1) {
        center = q + (radius + 4.0 * draw.Uniform() - 2.0) * FaceNormal(t);
      } else {
        const Vector3d dir = draw.Direction();
        center = q + 1.2 * radius * draw.Uniform() * dir;
      }
    }
    const Contact bvh = arena.CollideBvh(center, radius);
    const Contact naive = arena.CollideNaive(center, radius);
    hits += naive.hit;
    multi += naive.triangles > 1;
    // Same triangles through the same double routine: hit, count and penetration (a max,
    // independent of order) agree exactly; the normal up to summation order.
    if (!SameContact(bvh, naive, kNormalTolerance) && ++mismatches <= 5)
      MESSAGE("sphere " << k << " at " << center.transpose() << " r " << radius << ": bvh "
                        << Brief(bvh) << ", naive " << Brief(naive) << ", normal difference "
                        << (bvh.normal - naive.normal).norm());
  }
  MESSAGE(hits << " of " << kSpheres << " spheres touch the mesh, " << multi
               << " touch several triangles");
  CHECK(mismatches == 0);
  // The mix must exercise contacts: about half of the spheres are placed at a surface.
  CHECK(hits > kSpheres / 3);
  CHECK(multi > kSpheres / 10);
}

TEST_CASE("grid and BVH queries give bit-identical contacts on 200k spheres" *
          doctest::skip(testing::NoData())) {
  const Arena& arena = Pitch();
  REQUIRE(arena.grid_cells() > 0);
  // The pitch's grid stays modest (14.0 MB with its clamped table, decision 0094, and 2.2 MB
  // of exact-test pairs, decision 0100).
  CHECK(arena.grid_bytes() < 50 * 1000 * 1000);
  MeshSampler draw(arena, 20261123);

  constexpr int kSpheres = testing::kSanitized ? 20000 : 200000;
  int hits = 0, multi = 0, mismatches = 0;
  for (int k = 0; k < kSpheres; ++k) {
    // Mostly radii the grid answers (the ball's, the grid's largest, any below it); one in
    // eight larger, which the BVH answers.
    double radius;
    switch (k % 8) {
      case 0: radius = kBallRadius; break;
      case 1: radius = kRestRadius + 0.3 + 1.0; break;  // ClosestFeatureNormal's probes
      case 2: radius = Arena::kGridRadius; break;
      case 3: radius = 150.0 * draw.Uniform(); break;
      case 4: radius = Arena::kGridRadius + 50.0 * draw.Uniform(); break;
      default: radius = 80.0 + 21.5 * draw.Uniform(); break;
    }
    Vector3d center;
    const int where = (k / 8) % 4;
    if (where == 0) {
      center = draw.Inside();
    } else {
      // At a random point of a random triangle's face (where 1), edge (2, the seams between
      // facets) or vertex (3), then along the normal (face) or a random direction at the radius
      // +- 2 uu: touching, just missing, or between neighbouring facets.
      const Triangle& t = draw.AnyTriangle();
      const Vector3d p0 = t.p[0].cast<double>(), p1 = t.p[1].cast<double>(),
                     p2 = t.p[2].cast<double>();
      Vector3d q;
      if (where == 1) {
        q = draw.PointOnFace(t);
      } else if (where == 2) {
        q = p0 + draw.Uniform() * (p1 - p0);
      } else {
        q = p2;
      }
      const Vector3d dir = where == 1 && k % 3 == 0 ? FaceNormal(t) : draw.Direction();
      center = q + (radius + 4.0 * draw.Uniform() - 2.0) * dir;
    }
    const Contact grid = arena.Collide(center, radius);
    const Contact bvh = arena.CollideBvh(center, radius);
    hits += bvh.hit;
    multi += bvh.triangles > 1;
    // The same triangles in the same order through the same double routine: every field is
    // bit for bit the same.
    if (!SameContact(grid, bvh) && ++mismatches <= 5)
      MESSAGE("sphere " << k << " at " << center.transpose() << " r " << radius << ": grid "
                        << Brief(grid) << ", bvh " << Brief(bvh) << ", normal difference "
                        << (grid.normal - bvh.normal).norm());
  }
  MESSAGE(hits << " of " << kSpheres << " spheres touch the mesh, " << multi
               << " touch several triangles");
  CHECK(mismatches == 0);
  CHECK(hits > kSpheres / 3);
  CHECK(multi > kSpheres / 10);
}

TEST_CASE("centres on the grid's cell boundaries and just off the grid answer as the BVH" *
          doctest::skip(testing::NoData())) {
  // Collide finds the cell from the centre clamped into the grid grown by one cell (arena.h,
  // grid_lookup_): on a boundary it may take either neighbour, off the grid the border.
  const Arena& arena = Pitch();
  REQUIRE(arena.grid_cells() > 0);
  const Vector3d lo = arena.Box().lo.array() - Arena::kGridRadius;
  const Vector3d hi = arena.Box().hi.array() + Arena::kGridRadius;
  MeshSampler draw(arena, 20261130);
  int mismatches = 0, hits = 0;
  for (int k = 0; k < 40000; ++k) {
    Vector3d center = draw.Inside();
    // One to three coordinates on a cell boundary, give or take a few ulps, or just off the
    // grid's faces.
    for (int axis = 0; axis < 3; ++axis) {
      if (draw.Uniform() < 0.5) continue;
      const double cells = std::floor((center[axis] - lo[axis]) / Arena::kGridCellUu);
      double v = lo[axis] + Arena::kGridCellUu * cells;
      if (k % 7 == 0) v = draw.Uniform() < 0.5 ? lo[axis] : hi[axis];
      const int ulps = static_cast<int>(draw.Uniform() * 7.0) - 3;
      for (int u = 0; u < std::abs(ulps); ++u)
        v = std::nextafter(v, ulps > 0 ? 1e300 : -1e300);
      center[axis] = v;
    }
    const double radius = k % 2 == 0 ? kBallRadius : Arena::kGridRadius;
    const Contact grid = arena.Collide(center, radius);
    const Contact bvh = arena.CollideBvh(center, radius);
    hits += bvh.hit;
    if (!SameContact(grid, bvh) && ++mismatches <= 5)
      MESSAGE("centre " << center.transpose() << " r " << radius << ": grid " << Brief(grid)
                        << ", bvh " << Brief(bvh));
  }
  MESSAGE(hits << " of 40000 boundary spheres touch the mesh");
  CHECK(mismatches == 0);
  CHECK(hits > 1000);
}

TEST_CASE("a list gathered near a point answers nearby queries as Collide, bit for bit" *
          doctest::skip(testing::NoData())) {
  const Arena& arena = Pitch();
  MeshSampler draw(arena, 20261125);
  constexpr int kAnchors = testing::kSanitized ? 2000 : 20000;
  constexpr int kQueriesPerAnchor = 8;
  const double reach = Arena::kGridRadius;
  long listed = 0, cell_listed = 0, queries = 0, hits = 0, multi = 0, cleared = 0;
  int mismatches = 0, most_listed = 0;
  constexpr int kBufferEntries = 256;  // ClosestFeatureNormal's buffer (src/models/ball.h)
  for (int k = 0; k < kAnchors; ++k) {
    const Vector3d anchor = draw.Anchor(k, 20.0);
    std::vector<std::uint32_t> entries;
    double nearest = -1.0;
    if (!arena.GatherNear(anchor, reach, &entries, &nearest)) continue;  // outside the grid
    CHECK(nearest <= reach);
    CHECK(nearest >= 0.0);
    listed += static_cast<long>(entries.size());
    cell_listed += arena.GridListSize(anchor, reach);
    // The buffer overload: the same entries when they fit, -1 when one more than fits.
    std::uint32_t buffer[kBufferEntries];
    const int n = arena.GatherNear(anchor, reach, buffer, kBufferEntries);
    most_listed = std::max(most_listed, static_cast<int>(entries.size()));
    if (static_cast<int>(entries.size()) <= kBufferEntries) {
      CHECK(std::vector<std::uint32_t>(buffer, buffer + std::max(n, 0)) == entries);
    } else {
      CHECK(n == -1);
    }
    if (!entries.empty())
      CHECK(arena.GatherNear(anchor, reach, buffer, static_cast<int>(entries.size()) - 1) == -1);
    for (int i = 0; i < kQueriesPerAnchor; ++i) {
      // Radii of the contact and the normal's probes; centres up to the reach's edge (the
      // last query of each anchor exactly on it).
      const double radius = kRestRadius + 0.3 + (i % 3 == 0 ? 1.0 : 2.0 * draw.Uniform());
      const double room = reach - Arena::kNearSlackUu - radius;
      const double distance = i + 1 == kQueriesPerAnchor ? room : room * draw.Uniform();
      const Vector3d center = anchor + distance * draw.Direction();
      if ((center - anchor).norm() + radius > reach - Arena::kNearSlackUu) continue;  // rounding
      const Contact near =
          arena.CollideEntries(center, radius, entries.data(), entries.data() + entries.size());
      const Contact full = arena.Collide(center, radius);
      if ((center - anchor).norm() + radius + Arena::kNearSlackUu < nearest) {
        ++cleared;  // GatherNear's bound: no triangle that near
        if (full.hit && ++mismatches <= 5)
          MESSAGE("sphere at " << center.transpose() << " r " << radius << " touches within "
                               << nearest << " uu of " << anchor.transpose());
      }
      ++queries;
      hits += full.hit;
      multi += full.triangles > 1;
      if (!SameContact(near, full) && ++mismatches <= 5)
        MESSAGE("anchor " << anchor.transpose() << ", sphere at " << center.transpose() << " r "
                          << radius << ": near " << Brief(near) << ", full " << Brief(full));
    }
  }
  MESSAGE(queries << " queries, " << hits << " touch, " << multi << " several triangles, "
                  << cleared << " cleared by the nearest distance; " << listed << " triangles gathered against " << cell_listed
                  << " in the anchors' grid cells; at most " << most_listed
                  << " at one anchor");
  CHECK(mismatches == 0);
  CHECK(hits > queries / 3);
  CHECK(multi > queries / 50);
  CHECK(listed < cell_listed);
  CHECK(cleared > queries / 20);
  // Outside the grid, or a reach beyond what the grid answers: nothing gathered.
  std::vector<std::uint32_t> entries;
  CHECK_FALSE(arena.GatherNear(Vector3d(1e6, 0, 0), reach, &entries));
  CHECK_FALSE(arena.GatherNear(Vector3d(0, 0, 100), Arena::kGridRadius + 1.0, &entries));
  CHECK(entries.empty());
  std::uint32_t buffer[4];
  CHECK(arena.GatherNear(Vector3d(1e6, 0, 0), reach, buffer, 4) == -1);
}

TEST_CASE("the grid's clearance is a lower bound on the distance to the mesh" *
          doctest::skip(testing::NoData())) {
  // GridFreeClearance(c, r) = b >= 0 promises that no triangle is within b of c: a sphere of
  // radius b there touches nothing (CollideBvh: a hit is a closest point within the radius).
  const Arena& arena = Pitch();
  MeshSampler draw(arena, 20261125);
  constexpr int kPoints = testing::kSanitized ? 5000 : 50000;
  int answered = 0, far = 0, wrong = 0, listed_free = 0, octants = 0;
  for (int k = 0; k < kPoints; ++k) {
    Vector3d center;
    if (k % 2 == 0) {
      center = draw.Inside();
    } else {
      // 0-400 uu off a random vertex in a random direction: near the cells' edges of listing.
      const Triangle& t = draw.AnyTriangle();
      const Vector3d dir = draw.Direction();
      center = t.p[k % 3].cast<double>() + 400.0 * draw.Uniform() * dir;
    }
    const double radius = k % 3 == 0 ? kBallRadius : kRestRadius + 0.3;
    const double bound = arena.GridFreeClearance(center, radius);
    // An empty cell is always answered; a listed one where the centre's octant is free.
    if (arena.GridSaysFree(center, radius)) CHECK(bound >= 0.0);
    if (bound < 0.0) continue;
    ++answered;
    CHECK(bound >= Arena::kGridRadius);
    if (!arena.GridSaysFree(center, radius)) {
      ++octants;
      CHECK(bound == Arena::kGridRadius);
    }
    far += bound >= 500.0;
    if (arena.CollideBvh(center, bound).hit && ++wrong <= 5)
      MESSAGE("centre " << center.transpose() << ": bound " << bound << " but a triangle is closer");
    // The bound also covers the grid's own answer: nothing within kGridRadius.
    listed_free += !arena.CollideBvh(center, Arena::kGridRadius).hit;
  }
  MESSAGE(answered << " of " << kPoints << " centres answered, " << octants
                   << " of them in a listed cell's free octant, " << far
                   << " with a bound of 500 uu or more");
  CHECK(wrong == 0);
  CHECK(listed_free == answered);
  CHECK(answered > kPoints / 4);
  CHECK(far > answered / 10);       // not a vacuous bound
  CHECK(octants > kPoints / 100);   // the free octants answer too
}

TEST_CASE("a query outside the grid, too large for it or not finite falls back to the BVH" *
          doctest::skip(testing::NoData())) {
  const Arena& arena = Pitch();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Far outside the grid, a sphere that reaches back into the arena: hits, through the BVH.
  const Contact big = arena.Collide(Vector3d(0, 0, 3000), 1000.0);
  CHECK(big.hit);
  CHECK(big.penetration == arena.CollideBvh(Vector3d(0, 0, 3000), 1000.0).penetration);
  CHECK_FALSE(arena.Collide(Vector3d(0, 0, 1.0e6), kBallRadius).hit);
  CHECK_FALSE(arena.Collide(Vector3d(nan, 0, 50), kBallRadius).hit);
  CHECK_FALSE(arena.Collide(Vector3d(0, 0, 50), nan).hit);
  CHECK_FALSE(arena.Collide(Vector3d(0, 0, 50), -1.0).hit);
  CHECK_FALSE(arena.Collide(Vector3d(inf, 0, 50), kBallRadius).hit);
  // On the floor, in the grid: the same answer as the BVH.
  const Contact floor = arena.Collide(Vector3d(10, 20, 80), kBallRadius);
  CHECK(floor.hit);
  CHECK(floor.normal == arena.CollideBvh(Vector3d(10, 20, 80), kBallRadius).normal);
}

TEST_CASE("a mesh too large for the grid has none and still answers") {
  // kGridMinTriangles copies of a floor triangle 2 x 10^5 uu wide: too many cells.
  constexpr float kFar = 1.0e5f;
  std::vector<Triangle> t(Arena::kGridMinTriangles);
  for (Triangle& triangle : t) {
    triangle.p[0] = {-kFar, -kFar, 0.0f};
    triangle.p[1] = {kFar, -kFar, 0.0f};
    triangle.p[2] = {0.0f, kFar, 0.0f};
  }
  const Arena arena(t);
  CHECK(arena.grid_cells() == 0);
  const Contact c = arena.Collide(Vector3d(0, 0, 90), 92.75);
  CHECK(c.hit);
  CHECK(c.penetration == doctest::Approx(2.75).epsilon(1e-12));
}

TEST_CASE("Contains tells the arena from the space around it" * doctest::skip(testing::NoData())) {
  const Arena& arena = Pitch();
  CHECK(arena.Contains({0, 0, 1000}));
  CHECK(arena.Contains({-3000, 4000, 100}));
  CHECK(arena.Contains({0, 5500, 300}));            // inside a goal
  CHECK_FALSE(arena.Contains({3000, 5500, 300}));   // behind the back wall, beside the goal
  CHECK_FALSE(arena.Contains({0, 0, -100}));        // under the floor
  CHECK_FALSE(arena.Contains({0, 0, 2100}));        // above the ceiling
  CHECK_FALSE(arena.Contains({4100, 0, 1000}));     // beyond a side wall
  CHECK_FALSE(arena.Contains({4050, 5050, 1000}));  // behind a rounded corner
}

// Reference for FirstFaces' back faces: every triangle, Moller-Trumbore along each axis
// (x + s d = p0 + u e1 + v e2), the nearest hit per ray and whether `x` is on its back side.
bool BehindMeshEveryTriangle(const Arena& arena, const Eigen::Vector3d& x) {
  std::array<double, 6> nearest;
  nearest.fill(std::numeric_limits<double>::infinity());
  std::array<bool, 6> back{};
  for (const Triangle& t : arena.triangles()) {
    const Eigen::Vector3d p0 = t.p[0].cast<double>(), e1 = t.p[1].cast<double>() - p0,
                          e2 = t.p[2].cast<double>() - p0, n = e1.cross(e2);
    for (int k = 0; k < 3; ++k) {
      if (n(k) == 0.0) continue;
      const Eigen::Vector3d d = Eigen::Vector3d::Unit(k), h = d.cross(e2), q = x - p0;
      const double det = e1.dot(h);
      if (det == 0.0) continue;
      const double u = q.dot(h) / det;
      if (u < 0.0 || u > 1.0) continue;
      const Eigen::Vector3d r = q.cross(e1);
      const double v = d.dot(r) / det, s = e2.dot(r) / det;
      if (v < 0.0 || u + v > 1.0 || s == 0.0) continue;
      const int ray = 2 * k + (s > 0.0 ? 1 : 0);
      if (std::abs(s) < nearest[ray]) {
        nearest[ray] = std::abs(s);
        back[ray] = q.dot(n) < 0.0;
      }
    }
  }
  for (int ray = 0; ray < 6; ++ray)
    if (std::isfinite(nearest[ray]) && back[ray]) return true;
  return false;
}

TEST_CASE("FirstFaces finds a back face where testing every triangle does" *
          doctest::skip(testing::NoData())) {
  // The start check's "behind the mesh" (any ray meets a back face first) from the BVH's line
  // walks against every triangle, on random points over and around the pitch's box, a quarter
  // of them on integer coordinates (lines through vertices and edges). ~1 s.
  const Arena& arena = Pitch();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> ux(-4300, 4300), uy(-6200, 6200), uz(-200, 2300);
  int behind = 0;
  for (int i = 0; i < 2000; ++i) {
    Eigen::Vector3d x(ux(rng), uy(rng), uz(rng));
    if (i % 4 == 0) x = x.array().round();
    const std::array<Arena::RayFace, 6> faces = arena.FirstFaces(x);
    const bool back =
        std::find(faces.begin(), faces.end(), Arena::RayFace::kBack) != faces.end();
    CAPTURE(x.transpose());
    REQUIRE(back == BehindMeshEveryTriangle(arena, x));
    behind += back;
    if (!back) CHECK(arena.Contains(x) == (std::count(faces.begin(), faces.end(),
                                                      Arena::RayFace::kFront) == 6));
  }
  MESSAGE(behind << " of 2000 points behind the mesh");
  CHECK(behind > 400);
}

// Reference for FirstFacesAlong: every triangle, the same Moller-Trumbore test along the line,
// the nearest hit on each side and whether it is a front face.
std::array<Arena::RayFace, 2> FirstFacesEveryTriangle(const Arena& arena, const Eigen::Vector3d& x,
                                                      const Eigen::Vector3d& d) {
  double nearest[2] = {std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::infinity()};
  bool front[2] = {false, false};
  for (const Triangle& t : arena.triangles()) {
    const Eigen::Vector3d p0 = t.p[0].cast<double>(), e1 = t.p[1].cast<double>() - p0,
                          e2 = t.p[2].cast<double>() - p0;
    const Eigen::Vector3d h = d.cross(e2);
    const double det = e1.dot(h);
    if (det == 0.0) continue;
    const Eigen::Vector3d q = x - p0;
    const double u = q.dot(h) / det;
    if (u < 0.0 || u > 1.0) continue;
    const Eigen::Vector3d r = q.cross(e1);
    const double v = d.dot(r) / det, s = e2.dot(r) / det;
    if (v < 0.0 || u + v > 1.0 || s == 0.0) continue;
    const int ray = s > 0.0 ? 1 : 0;
    if (std::abs(s) < nearest[ray]) {
      nearest[ray] = std::abs(s);
      front[ray] = (e1.cross(e2).dot(d) < 0.0) == (s > 0.0);
    }
  }
  std::array<Arena::RayFace, 2> faces = {Arena::RayFace::kNone, Arena::RayFace::kNone};
  for (int ray = 0; ray < 2; ++ray)
    if (std::isfinite(nearest[ray]))
      faces[ray] = front[ray] ? Arena::RayFace::kFront : Arena::RayFace::kBack;
  return faces;
}

TEST_CASE("FirstFacesAlong finds what testing every triangle finds, and FirstFaces on the axes" *
          doctest::skip(testing::NoData())) {
  // Random points over and around the pitch's box (a quarter on integer coordinates: lines
  // through vertices and edges), along the axes, the diagonals and random directions. ~1 s.
  const Arena& arena = Pitch();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> ux(-4300, 4300), uy(-6200, 6200), uz(-200, 2300),
      unit(-1, 1);
  int hits = 0, backs = 0;
  for (int i = 0; i < 300; ++i) {
    Eigen::Vector3d x(ux(rng), uy(rng), uz(rng));
    if (i % 4 == 0) x = x.array().round();
    const std::array<Arena::RayFace, 6> axes = arena.FirstFaces(x);
    const Eigen::Vector3d dirs[5] = {Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(),
                                     Eigen::Vector3d::UnitZ(), Eigen::Vector3d(1, -1, 1),
                                     Eigen::Vector3d(unit(rng), unit(rng), unit(rng))};
    for (int k = 0; k < 5; ++k) {
      const std::array<Arena::RayFace, 2> got = arena.FirstFacesAlong(x, dirs[k]);
      CAPTURE(x.transpose());
      CAPTURE(dirs[k].transpose());
      REQUIRE(got == FirstFacesEveryTriangle(arena, x, dirs[k]));
      if (k < 3) {
        CHECK(got[0] == axes[2 * k]);
        CHECK(got[1] == axes[2 * k + 1]);
      }
      for (const Arena::RayFace f : got) {
        hits += f != Arena::RayFace::kNone;
        backs += f == Arena::RayFace::kBack;
      }
    }
  }
  MESSAGE(hits << " rays of 3000 meet the mesh, " << backs << " a back face first");
  CHECK(hits > 1000);
  CHECK(backs > 200);
  CHECK(arena.FirstFacesAlong({0, 0, 1000}, Eigen::Vector3d::Zero()) ==
        std::array<Arena::RayFace, 2>{Arena::RayFace::kNone, Arena::RayFace::kNone});
}

TEST_CASE("inside an axis-aligned triangle the contact is exact: distance and normal") {
  // A floor (z = 0), a side wall (x = 3512) and a ceiling (z = 2044), out of each other's reach:
  // inside each face the offset from the plane gives exactly radius - distance and exactly the
  // axis as normal, with +0 in the other components (Ericson's barycentric point left ~1e-15
  // sideways in the normal; the floor's fast path, Arena::FloorHeight, relies on the exact
  // answer).
  const std::vector<Triangle> mesh = {
      MakeTriangle({-3000, -2000, 0}, {3000, -2500, 0}, {100, 4000, 0}),
      MakeTriangle({3512, -3000, 100}, {3512, 3000, 300}, {3512, 0, 1900}),
      MakeTriangle({-3000, -2000, 2044}, {100, 4000, 2044}, {3000, -2500, 2044})};
  const Arena arena(mesh);
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int checked = 0;
  for (int k = 0; k < 3000; ++k) {
    const int which = k % 3;
    const Triangle& t = mesh[which];
    // Well inside the face: barycentric weights of at least 0.05 (no edge region).
    double a = 0.05 + 0.9 * u(rng), b = 0.05 + 0.9 * u(rng);
    if (a + b > 0.95) {
      a = 1.0 - a;
      b = 1.0 - b;
    }
    if (a < 0.05 || b < 0.05 || a + b > 0.95) continue;
    const Vector3d p0 = t.p[0].cast<double>();
    const Vector3d foot = p0 + a * (t.p[1].cast<double>() - p0) + b * (t.p[2].cast<double>() - p0);
    const double height = 1.0 + 99.0 * u(rng);
    const double radius = height + 5.0 * u(rng);
    Vector3d center = foot, axis;
    double distance;  // exact: Sterbenz, the operands within a factor of 2
    if (which == 0) {
      center.z() = height;
      distance = center.z();
      axis = Vector3d::UnitZ();
    } else if (which == 1) {
      center.x() = 3512.0 - height;
      distance = 3512.0 - center.x();
      axis = -Vector3d::UnitX();
    } else {
      center.z() = 2044.0 - height;
      distance = 2044.0 - center.z();
      axis = -Vector3d::UnitZ();
    }
    CAPTURE(center.transpose());
    for (const Contact& c : {arena.Collide(center, radius), arena.CollideNaive(center, radius)}) {
      REQUIRE(c.hit);
      CHECK(c.triangles == 1);
      CHECK(c.penetration == radius - distance);
      CHECK(c.normal == axis);
      for (int i = 0; i < 3; ++i)
        if (axis(i) == 0.0) CHECK_FALSE(std::signbit(c.normal(i)));
    }
    ++checked;
  }
  CHECK(checked > 2000);
}

TEST_CASE("the floor's fast path answers only over covered floor far from everything else") {
  // A floor of 8 x 8 squares of 400 uu (128 triangles: enough for a grid) without the square
  // [-400, 0] x [-400, 0], and a wall x = 1600 beside it. FloorHeight answers only where the
  // floor lies under the centre and nothing else is within kGridRadius, and there Collide
  // gives the floor's contact: a hit exactly when z <= radius, penetration radius - z.
  std::vector<Triangle> mesh;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      const double x0 = -1600.0 + 400.0 * i, y0 = -1600.0 + 400.0 * j;
      if (x0 == -400.0 && y0 == -400.0) continue;  // the hole
      mesh.push_back(MakeTriangle({x0, y0, 0}, {x0 + 400, y0, 0}, {x0 + 400, y0 + 400, 0}));
      mesh.push_back(MakeTriangle({x0, y0, 0}, {x0 + 400, y0 + 400, 0}, {x0, y0 + 400, 0}));
    }
  mesh.push_back(MakeTriangle({1600, -1600, 0}, {1600, 1600, 0}, {1600, 1600, 800}));
  mesh.push_back(MakeTriangle({1600, -1600, 0}, {1600, 1600, 800}, {1600, -1600, 800}));
  const Arena arena(mesh);
  REQUIRE(arena.grid_cells() > 0);
  CHECK(arena.floor_columns() > 0);
  CHECK(arena.FloorHeight({800, 800, 50}, kRestRadius) == 50.0);
  CHECK(arena.FloorHeight({-200, -200, 50}, kRestRadius) == -1.0);  // over the hole
  CHECK(arena.FloorHeight({-401, -200, 50}, kRestRadius) == -1.0);  // over the hole's edge
  CHECK(arena.FloorHeight({1550, 0, 50}, kRestRadius) == -1.0);     // the wall is 50 uu away
  CHECK(arena.FloorHeight({800, 800, 0.5}, kRestRadius) == -1.0);   // below kFloorMinZUu
  CHECK(arena.FloorHeight({800, 800, 50}, Arena::kGridRadius + 1.0) == -1.0);
  CHECK(arena.FloorHeight({800, 800, 600}, kRestRadius) == 600.0);   // up to kFloorReachUu
  CHECK(arena.FloorHeight({800, 800, 900}, kRestRadius) == -1.0);
  CHECK(arena.FloorHeight({800, 800, std::nan("")}, kRestRadius) == -1.0);
  const Arena wall({mesh.end()[-2], mesh.end()[-1]});  // to check its distance by the BVH
  std::mt19937_64 rng(20261127);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int answered = 0, hits = 0;
  for (int k = 0; k < 20000; ++k) {
    const Vector3d center(-1700 + 3400 * u(rng), -1700 + 3400 * u(rng),
                          (k % 2 == 0 ? 250.0 : 750.0) * u(rng));
    const double radius = 80.0 + (Arena::kGridRadius - 80.0) * u(rng);
    double others_uu = -1.0;
    const double z = arena.FloorHeight(center, radius, &others_uu);
    if (z < 0.0) continue;
    CAPTURE(center.transpose());
    ++answered;
    CHECK(z == center.z());
    // The distance to everything but the floor: at least the grid's radius, and no other
    // triangle within it (the floor's own distance is z).
    CHECK(others_uu >= Arena::kGridRadius);
    CHECK_FALSE(wall.CollideBvh(center, others_uu).hit);
    const bool over_hole = center.x() >= -400 && center.x() <= 0 && center.y() >= -400 &&
                           center.y() <= 0;
    CHECK_FALSE(over_hole);
    CHECK_FALSE(wall.CollideBvh(center, Arena::kGridRadius).hit);
    const Contact c = arena.Collide(center, radius);
    REQUIRE(c.hit == (z <= radius));
    if (!c.hit) continue;
    ++hits;
    CHECK(c.penetration == radius - z);
    if (c.triangles == 1) CHECK(c.normal == Vector3d::UnitZ());
  }
  MESSAGE(answered << " of 20000 spheres answered by the floor, " << hits << " touching it");
  CHECK(answered > 5000);
  CHECK(hits > 1000);
}

}  // namespace
}  // namespace rlfit

namespace rlfit {
namespace {

TEST_CASE("PenetrationEntries is CollideEntries' penetration, bit for bit" *
          doctest::skip(testing::NoData())) {
  // ClosestFeatureNormal's probes read only the depth; the shortcut must not move a bit of it,
  // also where several triangles touch (seams, ramps, edges: the probes' usual place).
  const Arena& arena = Pitch();
  MeshSampler draw(arena, 20261126);
  constexpr int kAnchors = testing::kSanitized ? 1000 : 10000;
  constexpr int kQueriesPerAnchor = 6;
  const double reach = Arena::kGridRadius;
  long queries = 0, hits = 0, multi = 0;
  int mismatches = 0;
  for (int k = 0; k < kAnchors; ++k) {
    const Vector3d anchor = draw.Anchor(k, 4.0);
    std::vector<std::uint32_t> entries;
    if (!arena.GatherNear(anchor, reach, &entries)) continue;
    const std::uint32_t* begin = entries.data();
    const std::uint32_t* end = begin + entries.size();
    for (int i = 0; i < kQueriesPerAnchor; ++i) {
      const double radius = kRestRadius + 0.3 + 1.0 + (i == 0 ? 0.0 : 2.0 * draw.Uniform());
      const double room = reach - Arena::kNearSlackUu - radius;
      const Vector3d center = anchor + 0.5 * room * draw.Uniform() * draw.Direction();
      const Contact full = arena.CollideEntries(center, radius, begin, end);
      const double depth = arena.PenetrationEntries(center, radius, begin, end);
      ++queries;
      hits += full.hit;
      multi += full.triangles > 1;
      if ((depth != full.penetration || std::signbit(depth) != std::signbit(full.penetration)) &&
          ++mismatches <= 5)
        MESSAGE("sphere at " << center.transpose() << " r " << radius << ": depth " << depth
                             << ", contact " << Brief(full));
    }
  }
  MESSAGE(queries << " queries, " << hits << " touch, " << multi << " several triangles");
  CHECK(mismatches == 0);
  CHECK(hits > queries / 4);
  CHECK(multi > queries / 50);
  // No entries: no depth, as no contact.
  CHECK(arena.PenetrationEntries(Vector3d(0, 0, 50), 100.0, nullptr, nullptr) == 0.0);
}

}  // namespace
}  // namespace rlfit

namespace rlfit {
namespace {

// Three triangles: A on the floor (z = 0, y <= 0), B a 45-degree ramp rising from A's edge
// along the x axis (a concave crease seen from above), C on the floor beside A's edge from
// (-1000, 0) to (0, -1000) (a flat seam). Wound consistently (every face normal points up).
std::vector<Triangle> CreaseMesh() {
  return {MakeTriangle({-1000, 0, 0}, {0, -1000, 0}, {1000, 0, 0}),      // A
          MakeTriangle({1000, 0, 0}, {0, 1000, 1000}, {-1000, 0, 0}),    // B
          MakeTriangle({0, -1000, 0}, {-1000, 0, 0}, {-1000, -1000, 0})};  // C
}

// The first leaf entry of a triangle with vertex `v`, or -1.
int EntryWith(const Arena& arena, const Vector3d& v) {
  for (int e = 0; e < arena.triangle_count(); ++e) {
    const Triangle t = arena.LeafTriangle(e);
    for (int k = 0; k < 3; ++k)
      if (t.p[k].cast<double>() == v) return e;
  }
  return -1;
}

TEST_CASE("edge neighbours: triangles sharing two vertices, both ways, -1 on the boundary") {
  const Arena arena(CreaseMesh());
  // The entries by a vertex only one triangle holds.
  const int b = EntryWith(arena, {0, 1000, 1000});
  const int c = EntryWith(arena, {-1000, -1000, 0});
  REQUIRE(b >= 0);
  REQUIRE(c >= 0);
  REQUIRE(b != c);
  const int a_entry = 3 - b - c;  // the entries are 0, 1, 2
  int links = 0;
  for (int e = 0; e < 3; ++e) {
    const Triangle t = arena.LeafTriangle(e);
    const auto n = arena.EdgeNeighbours(e);
    for (int k = 0; k < 3; ++k) {
      if (n[k] < 0) continue;
      ++links;
      // The neighbour holds this edge's two vertices, and lists this triangle back.
      const Triangle u = arena.LeafTriangle(n[k]);
      int shared = 0;
      for (int i = 0; i < 3; ++i)
        shared += (u.p[i] == t.p[k]) + (u.p[i] == t.p[(k + 1) % 3]);
      CHECK(shared == 2);
      const auto back = arena.EdgeNeighbours(n[k]);
      CHECK((back[0] == e || back[1] == e || back[2] == e));
    }
  }
  CHECK(links == 4);  // A-B and A-C, each seen from both sides
  const auto na = arena.EdgeNeighbours(a_entry);
  CHECK(std::count(na.begin(), na.end(), b) == 1);
  CHECK(std::count(na.begin(), na.end(), c) == 1);
  CHECK(std::count(na.begin(), na.end(), -1) == 1);
  const auto nb = arena.EdgeNeighbours(b);
  CHECK(std::count(nb.begin(), nb.end(), a_entry) == 1);
  CHECK(std::count(nb.begin(), nb.end(), -1) == 2);
}

TEST_CASE("the contact manifold at a crease: one contact per facet, edge contacts adjusted") {
  const Arena arena(CreaseMesh());
  const double r = 93.45;
  // Sunk into the floor beside the ramp: A's contact is a face contact straight below
  // (penetration r - 50), B's the nearest point of the shared edge, the origin (penetration
  // r - |(0, -70, 50)|), whose direction points from the edge to the centre.
  const Vector3d center(0, -70, 50);
  TriangleContact contacts[Arena::kMaxContacts];
  const int count = arena.CollideEach(center, r, contacts);
  REQUIRE(count == 2);
  CHECK(std::abs(contacts[0].penetration - (r - 50.0)) < kHandTolerance);
  CHECK(contacts[0].normal == Vector3d::UnitZ());
  CHECK(std::abs(contacts[1].penetration - (r - std::sqrt(70.0 * 70.0 + 50.0 * 50.0))) <
        kHandTolerance);
  CHECK((contacts[1].normal - Vector3d(0, -70, 50).normalized()).norm() < kHandTolerance);
  // The penetration-weighted sum of Collide is the same pair's.
  const Contact sum = arena.Collide(center, r);
  CHECK(sum.triangles == 2);
  CHECK(sum.penetration == contacts[0].penetration);
  // B's edge is concave seen from the ball: its adjusted normal is B's face normal, not the
  // edge direction; A's contact lies 70 uu from every shared edge: its own normal.
  const Vector3d face_b = Vector3d(0, -1, 1).normalized();
  CHECK((arena.InternalEdgeNormal(contacts[1], center) - face_b).norm() < kHandTolerance);
  CHECK(arena.InternalEdgeNormal(contacts[0], center) == Vector3d::UnitZ());
  // On the flat seam between A and C, 2 sqrt(2) uu from it on A's side: both contacts (A's
  // face below the centre, C's the nearest point of the seam) are adjusted to the floor's
  // normal exactly, where C's own direction leans 1.7 degrees toward the seam.
  const Vector3d on_seam(-498, -498, 93);
  REQUIRE(arena.CollideEach(on_seam, r, contacts) == 2);
  CHECK(contacts[1].normal.z() < 0.9996);
  CHECK(arena.InternalEdgeNormal(contacts[0], on_seam) == Vector3d::UnitZ());
  CHECK(arena.InternalEdgeNormal(contacts[1], on_seam) == Vector3d::UnitZ());
}

TEST_CASE("the contact manifold holds every touching triangle up to kMaxContacts, deepest first") {
  // kMaxContacts + 4 separate small triangles around the origin, each facing it at its own
  // distance (directions on a Fibonacci sphere, distances from 40 uu in steps of 0.5 in a
  // scrambled order), all within the radius: the manifold keeps the kMaxContacts deepest,
  // sorted, and drops the 4 shallowest.
  constexpr int n = Arena::kMaxContacts + 4;
  static_assert(n % 7 != 0, "the distances below step by 7 modulo n");
  const double r = 93.0;
  std::vector<Triangle> t(n);
  std::vector<double> depths;
  for (int k = 0; k < n; ++k) {
    const double z = 1.0 - (2.0 * k + 1.0) / n;
    const double phi = 2.399963229728653 * k;  // the golden angle, rad
    const Vector3d u(std::sqrt(1.0 - z * z) * std::cos(phi), std::sqrt(1.0 - z * z) * std::sin(phi),
                     z);
    const double d = 40.0 + 0.5 * ((7 * k) % n);  // each distance once
    const Vector3d e1 = u.unitOrthogonal();
    const Vector3d e2 = u.cross(e1);
    const Vector3d p = -d * u;
    t[k].p[0] = (p + 2.0 * e1).cast<float>();
    t[k].p[1] = (p - e1 + 2.0 * e2).cast<float>();
    t[k].p[2] = (p - e1 - 2.0 * e2).cast<float>();
    depths.push_back(r - d);
  }
  const Arena arena(t);
  REQUIRE(arena.Collide(Vector3d::Zero(), r).triangles == n);
  std::sort(depths.rbegin(), depths.rend());
  TriangleContact contacts[Arena::kMaxContacts];
  REQUIRE(arena.CollideEach(Vector3d::Zero(), r, contacts) == Arena::kMaxContacts);
  // The vertices are floats: a contact's distance is its plane's to float rounding.
  constexpr double kFloatPlane = 1e-4;
  for (int i = 0; i < Arena::kMaxContacts; ++i)
    CHECK(std::abs(contacts[i].penetration - depths[i]) < kFloatPlane);
}

// --- CollideEach against every triangle ---------------------------------------------------

// The closest point of triangle abc to p (Ericson, Real-Time Collision Detection, 5.1.5):
// written apart from the Arena's ClosestOffset, so that the reference below shares no code with
// what it checks.
Vector3d ClosestOnTriangle(const Vector3d& p, const Vector3d& a, const Vector3d& b,
                           const Vector3d& c) {
  const Vector3d ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) return a;
  const Vector3d bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) return b;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return a + d1 / (d1 - d3) * ab;
  const Vector3d cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) return c;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return a + d2 / (d2 - d6) * ac;
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0)
    return b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b);
  const double denom = 1.0 / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

// The manifold CollideEach documents, by brute force: every triangle of the mesh tested, the
// touching ones sorted deepest first, a contact within kMergeUu of a deeper kept one merged
// into it, the first kMaxContacts kept. Also returns the depth of the first contact left out
// (-inf if none), where a tie with the last kept one makes the cut ambiguous, and the smallest
// |distance - radius| over every triangle (one at the radius may count either way).
std::vector<TriangleContact> CollideEachReference(const Arena& arena, const Vector3d& center,
                                                  double radius, double* first_left_out,
                                                  double* nearest_to_radius) {
  std::vector<TriangleContact> touching;
  *nearest_to_radius = std::numeric_limits<double>::infinity();
  for (const Triangle& t : arena.triangles()) {
    const Vector3d a = t.p[0].cast<double>(), b = t.p[1].cast<double>(),
                   c = t.p[2].cast<double>();
    const Vector3d q = ClosestOnTriangle(center, a, b, c);
    const double d = (center - q).norm();
    *nearest_to_radius = std::min(*nearest_to_radius, std::abs(d - radius));
    if (!(d <= radius)) continue;
    TriangleContact contact;
    contact.point = q;
    contact.penetration = radius - d;
    contact.normal = d > 1e-9 ? Vector3d((center - q) / d) : Vector3d::UnitZ();
    touching.push_back(contact);
  }
  std::stable_sort(touching.begin(), touching.end(),
                   [](const TriangleContact& x, const TriangleContact& y) {
                     return x.penetration > y.penetration;
                   });
  std::vector<TriangleContact> kept;
  *first_left_out = -std::numeric_limits<double>::infinity();
  for (const TriangleContact& t : touching) {
    const bool merged = std::any_of(kept.begin(), kept.end(), [&](const TriangleContact& k) {
      return (k.point - t.point).norm() <= Arena::kMergeUu;
    });
    if (merged) continue;
    if (static_cast<int>(kept.size()) == Arena::kMaxContacts) {
      *first_left_out = t.penetration;
      break;
    }
    kept.push_back(t);
  }
  return kept;
}

// CollideEach's grid route against the brute force on random spheres touching pitch.dat:
// around a random point of a random triangle, from 30 uu inside to 110 uu outside its plane,
// radius 40-101.5 uu (the grid's), plus a tenth above kGridRadius (CollideEach's own
// every-triangle loop). The two compute the closest point in different arithmetic, so the
// figures agree to a bound, not bit for bit: kEachTolerance, a few ulps of the pitch's ~10^4 uu
// coordinates (a missing, extra or misplaced contact is off by far more). Spheres whose
// contacts sit within 1e-6 uu of a decision (a triangle at the radius, a merge at kMergeUu, a
// tie at the kMaxContacts cut) are skipped and counted. 1.1 s on the loaded 2-core machine
// (8,028 triangles per sphere).
TEST_CASE("CollideEach equals an every-triangle manifold on random spheres (pitch.dat)" *
          doctest::skip(testing::NoData())) {
  const Arena& arena = Pitch();
  const auto& tris = arena.triangles();
  constexpr double kEachTolerance = 1e-7;
  constexpr double kDecisionUu = 1e-6;
  std::mt19937_64 rng(35);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  int checked = 0, with_contacts = 0, full = 0, skipped = 0;
  for (int i = 0; i < 500; ++i) {
    const Triangle& t = tris[rng() % tris.size()];
    double w1 = u01(rng), w2 = u01(rng);
    if (w1 + w2 > 1.0) w1 = 1.0 - w1, w2 = 1.0 - w2;
    const Vector3d a = t.p[0].cast<double>(), b = t.p[1].cast<double>(),
                   c = t.p[2].cast<double>();
    const Vector3d n = (b - a).cross(c - a).normalized();
    const Vector3d on = a + w1 * (b - a) + w2 * (c - a);
    const Vector3d center = on + n * (-30.0 + 140.0 * u01(rng));
    const double radius =
        i % 10 == 9 ? Arena::kGridRadius + 60.0 * u01(rng) : 40.0 + 61.5 * u01(rng);
    CAPTURE(i);
    CAPTURE(center.transpose());
    CAPTURE(radius);
    double left_out = 0.0, nearest_to_radius = 0.0;
    const std::vector<TriangleContact> want =
        CollideEachReference(arena, center, radius, &left_out, &nearest_to_radius);
    // Near a decision the two arithmetics may decide differently: skip (counted below).
    bool near_decision = nearest_to_radius < kDecisionUu ||
                         (!want.empty() && want.back().penetration - left_out < kDecisionUu);
    for (std::size_t x = 0; x < want.size(); ++x)
      for (std::size_t y = 0; y < x; ++y)
        if (std::abs((want[x].point - want[y].point).norm() - Arena::kMergeUu) < kDecisionUu)
          near_decision = true;
    if (near_decision) {
      ++skipped;
      continue;
    }
    TriangleContact got[Arena::kMaxContacts];
    const int count = arena.CollideEach(center, radius, got);
    REQUIRE(count == static_cast<int>(want.size()));
    for (int k = 0; k < count; ++k) {
      CAPTURE(k);
      CHECK(std::abs(got[k].penetration - want[k].penetration) < kEachTolerance);
      // Contacts of equal depth may come in either order: the one at the same point.
      const auto same = std::find_if(want.begin(), want.end(), [&](const TriangleContact& w) {
        return std::abs(w.penetration - got[k].penetration) < kEachTolerance &&
               (w.point - got[k].point).norm() < kEachTolerance;
      });
      REQUIRE(same != want.end());
      if (radius - same->penetration > 1e-3)  // the direction is defined away from the surface
        CHECK((got[k].normal - same->normal).norm() < kEachTolerance);
      CHECK(got[k].entry >= 0);
    }
    ++checked;
    with_contacts += count > 0;
    full += count == Arena::kMaxContacts;
  }
  MESSAGE("CollideEach vs every triangle: " << checked << " spheres checked (" << with_contacts
                                            << " touching, " << full << " at kMaxContacts), "
                                            << skipped << " near a decision skipped");
  CHECK(skipped < 30);
  CHECK(with_contacts > 300);
  CHECK(full > 20);
}

}  // namespace
}  // namespace rlfit
