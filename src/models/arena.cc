// Arena mesh: building the BVH, the exact sphere-triangle contact shared by
// the BVH and naive queries, and the six-ray inside test used for sampling.
#include "src/models/arena.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <Eigen/Geometry>

#include "src/common/error.h"
#include "src/common/inline.h"

namespace rlfit {
namespace {

using Eigen::Vector3d;

// --- exact contact, double ---------------------------------------------------------------

// p - q, where q is the closest point to p on triangle abc (Ericson, Real-Time Collision
// Detection, 5.1.5, for the regions). Where q lies inside the face the offset is computed from
// the triangle's plane, n (n . (p - a)) with n its unit normal, instead of p minus Ericson's
// barycentric point: for a triangle in an axis-aligned plane (the floor, a flat wall) n is
// exactly the axis, so the offset has exactly zero sideways parts and its length is exactly
// the distance to the plane (the barycentric point carried ~1e-13 uu of rounding sideways,
// which put ~1e-15 into the contact normal). The floor's fast path (Arena::FloorHeight) relies
// on it. On the edges and vertices the offset is p - q as Ericson computes q.
// `unit_normal`, if given, is ab x ac normalized as computed here (the leaf's, LeafVertices::n):
// the same value without the square root and divisions.
// Always inlined: in the queries' exact test (Touches) the call, and the copies of the vertices
// it needed, cost ~30 of its ~125 instructions (bench/README.md, "Arena query").
// `ab` and `ac` are b - a and c - a (a leaf's, LeafVertices::ab and ac: the same values).
RLFIT_ALWAYS_INLINE Vector3d ClosestOffset(const Vector3d& p, const Vector3d& a,
                                             const Vector3d& b, const Vector3d& c,
                                             const Vector3d& ab, const Vector3d& ac,
                                             const double* unit_normal) {
  const Vector3d ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) return p - a;
  const Vector3d bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return bp;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return p - (a + (d1 / (d1 - d3)) * ab);
  const Vector3d cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return cp;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return p - (a + (d2 / (d2 - d6)) * ac);
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0)
    return p - (b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b));
  // Inside the face. Eigen's normalized() divides by the norm, so an axis-aligned normal is
  // exactly +-1 on its axis and (+-)0 elsewhere; the dot product is spelled out in a fixed order.
  const Vector3d n = unit_normal != nullptr
                         ? Vector3d(unit_normal[0], unit_normal[1], unit_normal[2])
                         : Vector3d(ab.cross(ac).normalized());
  const double height = n.x() * ap.x() + n.y() * ap.y() + n.z() * ap.z();
  return n * height;
}

RLFIT_ALWAYS_INLINE Vector3d ClosestOffset(const Vector3d& p, const Vector3d& a,
                                             const Vector3d& b, const Vector3d& c,
                                             const double* unit_normal = nullptr) {
  return ClosestOffset(p, a, b, c, Vector3d(b - a), Vector3d(c - a), unit_normal);
}

// Below this distance from the mesh (uu) the direction c - q is meaningless and the face normal
// is used instead.
constexpr double kDegenerateDistance = 1e-9;
// A weighted normal sum shorter than this fraction of its total weight counts as cancelled.
constexpr double kCancelledFraction = 1e-9;

// Index of the lowest set bit of a non-zero mask.
inline int LowestSetBit(int mask) {
#if defined(__GNUC__)
  return __builtin_ctz(static_cast<unsigned>(mask));
#else
  int k = 0;
  while (!(mask & (1 << k))) ++k;
  return k;
#endif
}

// False when the sphere of float centre (x, y, z, 0) and radius sqrt(r2) (the cull's radius,
// grown by the grid's margin) cannot reach the box lo..hi (lane 3 of both 0): then it cannot
// touch the triangle in it, and the exact test (Touches) would say so, as the margin is far
// above the float rounding of the centre and the sums. True otherwise (a NaN included).
template <class BoxT>
inline bool ReachesBox(const BoxT& box, const float (&center)[4], float r2) {
#if defined(__SSE2__)
  const __m128 c = _mm_loadu_ps(center);
  __m128 e = _mm_max_ps(_mm_max_ps(_mm_sub_ps(_mm_load_ps(box.lo), c),
                                   _mm_sub_ps(c, _mm_load_ps(box.hi))),
                        _mm_setzero_ps());
  e = _mm_mul_ps(e, e);
  e = _mm_add_ps(e, _mm_movehl_ps(e, e));
  return !(_mm_cvtss_f32(_mm_add_ss(e, _mm_shuffle_ps(e, e, 1))) > r2);
#else
  float d2 = 0.0f;
  for (int k = 0; k < 3; ++k) {
    const float e = std::max({box.lo[k] - center[k], center[k] - box.hi[k], 0.0f});
    d2 += e * e;
  }
  return !(d2 > r2);
#endif
}

// The exact test of one triangle: whether the sphere (center, radius) touches triangle abc;
// if so *diff is the centre's offset from the closest point and *d its length.
// ab, ac: see ClosestOffset.
RLFIT_ALWAYS_INLINE bool Touches(const Vector3d& center, double radius, const Vector3d& a,
                                  const Vector3d& b, const Vector3d& c, const Vector3d& ab,
                                  const Vector3d& ac, const double* unit_normal, Vector3d* diff,
                                  double* d) {
  *diff = ClosestOffset(center, a, b, c, ab, ac, unit_normal);
  const double d2 = diff->squaredNorm();
  if (!(d2 <= radius * radius)) return false;  // also rejects NaN
  *d = std::sqrt(d2);
  return *d <= radius;
}

// Sums the contacts of one query, in the order triangles are visited.
class ContactSum {
 public:
  ContactSum(const Vector3d& center, double radius) : center_(center), radius_(radius) {}

  // Adds triangle abc if it touches the sphere (unit_normal: see ClosestOffset).
  RLFIT_ALWAYS_INLINE void Add(const Vector3d& a, const Vector3d& b, const Vector3d& c,
                               const double* unit_normal = nullptr) {
    Add(a, b, c, b - a, c - a, unit_normal);
  }
  // The same with ab = b - a and ac = c - a given (see ClosestOffset).
  RLFIT_ALWAYS_INLINE void Add(const Vector3d& a, const Vector3d& b, const Vector3d& c,
                               const Vector3d& ab, const Vector3d& ac, const double* unit_normal) {
    Vector3d diff;
    double d = 0.0;
    if (!Touches(center_, radius_, a, b, c, ab, ac, unit_normal, &diff, &d)) return;
    const Vector3d direction =
        d > kDegenerateDistance ? Vector3d(diff / d) : Vector3d(ab.cross(ac).normalized());
    const double penetration = radius_ - d;
    weighted_ += penetration * direction;
    unweighted_ += direction;
    weight_ += penetration;
    if (count_ == 0 || penetration > deepest_) {
      deepest_ = penetration;
      deepest_direction_ = direction;
    }
    ++count_;
  }

  Contact Finish() const {
    return FinishContact(weighted_, unweighted_, deepest_direction_, weight_, deepest_, count_);
  }

  // The contact from the sums of `count` touching triangles (see Contact).
  static Contact FinishContact(const Vector3d& weighted, const Vector3d& unweighted,
                               const Vector3d& deepest_direction, double weight, double deepest,
                               int count) {
    Contact contact;
    if (count == 0) return contact;
    contact.hit = true;
    contact.penetration = deepest;
    contact.triangles = count;
    const double weighted_norm = weighted.norm();
    if (weight > 0.0 && weighted_norm > kCancelledFraction * weight) {
      contact.normal = weighted / weighted_norm;
      return contact;
    }
    const double unweighted_norm = unweighted.norm();  // only where the weighted sum cancels
    if (unweighted_norm > kCancelledFraction * count)
      contact.normal = unweighted / unweighted_norm;
    else
      contact.normal = deepest_direction;
    return contact;
  }

 private:
  Vector3d center_;
  double radius_;
  Vector3d weighted_ = Vector3d::Zero();
  Vector3d unweighted_ = Vector3d::Zero();
  Vector3d deepest_direction_ = Vector3d::UnitZ();
  double weight_ = 0.0;
  double deepest_ = 0.0;
  int count_ = 0;
};

// ContactSum's test and penetration without the directions and sums: the deepest of the same
// values is the same value (radius - d is never -0, so the order does not matter).
class DeepestPenetration {
 public:
  DeepestPenetration(const Vector3d& center, double radius) : center_(center), radius_(radius) {}

  RLFIT_ALWAYS_INLINE void Add(const Vector3d& a, const Vector3d& b, const Vector3d& c,
                               const Vector3d& ab, const Vector3d& ac, const double* unit_normal) {
    Vector3d diff;
    double d = 0.0;
    if (!Touches(center_, radius_, a, b, c, ab, ac, unit_normal, &diff, &d)) return;
    const double penetration = radius_ - d;
    if (!touched_ || penetration > deepest_) deepest_ = penetration;
    touched_ = true;
  }
  double Finish() const { return deepest_; }

 private:
  Vector3d center_;
  double radius_;
  double deepest_ = 0.0;
  bool touched_ = false;
};

// The exact test of a leaf entry's triangle (Arena::LeafVertices: vertices, edges, normal).
template <class VerticesT, class Sum>
RLFIT_ALWAYS_INLINE void AddLeaf(const VerticesT& v, Sum* sum) {
  sum->Add(Vector3d(v.p[0][0], v.p[0][1], v.p[0][2]), Vector3d(v.p[1][0], v.p[1][1], v.p[1][2]),
           Vector3d(v.p[2][0], v.p[2][1], v.p[2][2]), Vector3d(v.ab[0], v.ab[1], v.ab[2]),
           Vector3d(v.ac[0], v.ac[1], v.ac[2]), v.n);
}

// The float plane cull of a sphere (centre (cx, cy, cz), radius r grown by the caller's
// margin): true where it lies farther than r from the triangle's plane (a NaN does not cull).
template <class PlaneT>
RLFIT_ALWAYS_INLINE bool PlaneCulls(const PlaneT& plane, float cx, float cy, float cz, float r) {
  const float s =
      plane.normal[0] * cx + plane.normal[1] * cy + plane.normal[2] * cz - plane.offset;
  return std::abs(s) > r;
}

// The leaf test shared by CollideBvh and CollideList: the float plane cull of the sphere
// (centre c, radius r grown by the caller's margin), then the exact test of the triangle.
template <class PlaneT, class VerticesT, class Sum>
inline void AddLeafTriangle(const PlaneT& plane, const VerticesT& vertices, float cx, float cy,
                            float cz, float r, Sum* sum) {
  if (PlaneCulls(plane, cx, cy, cz, r)) return;
  AddLeaf(vertices, sum);
}

// The listed triangles `begin..end` (indices into `planes` and `boxes`) that AddLeafTriangle's
// float plane cull lets through (|s| > r culls, a NaN does not) and whose box the sphere reaches
// (ReachesBox with r * r), in list order: visit(entry) for each. The plane cull uses the same
// floats in the same order as AddLeafTriangle's, four entries at a time with SSE2 (a listed cell
// holds ~12 entries, of which the plane culls ~85% in a prediction: the cull was ~18
// instructions an entry, ~8 in fours). kBoxesInFours: where two or more of the four pass, their
// boxes are tested together too (~10 instructions an entry against ~23 and a call one at a
// time: arena_query 190.7 -> 186.7); a ball's prediction, where mostly one passes, does not
// gain from it (its callers, CollideFree and PenetrationEntries, test one at a time). Both culls
// only spare the exact test work: it rejects what they reject. *least_abs, if given, is lowered
// to the least |s| over all the entries (a lower bound on each one's distance, less the cull's
// margin).
template <bool kBoxesInFours, class PlaneT, class BoxT, class Visit>
inline void ForNearPlanes(const PlaneT* planes, const BoxT* boxes, const float (&c)[4], float r,
                          const std::uint32_t* begin, const std::uint32_t* end, float* least_abs,
                          const Visit& visit) {
  const std::uint32_t* it = begin;
  const float cx = c[0], cy = c[1], cz = c[2], r2 = r * r;
  float least = std::numeric_limits<float>::infinity();
#if defined(__SSE2__)
  static_assert(sizeof(PlaneT) == 4 * sizeof(float), "a plane is its normal and offset");
  const __m128 x = _mm_set1_ps(cx), y = _mm_set1_ps(cy), z = _mm_set1_ps(cz);
  const __m128 reach = _mm_set1_ps(r), reach2 = _mm_set1_ps(r2);
  const __m128 centre = _mm_loadu_ps(c);
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  __m128 lowest = _mm_set1_ps(least);
  for (; end - it >= 4; it += 4) {
    __m128 nx = _mm_loadu_ps(planes[it[0]].normal), ny = _mm_loadu_ps(planes[it[1]].normal);
    __m128 nz = _mm_loadu_ps(planes[it[2]].normal), offset = _mm_loadu_ps(planes[it[3]].normal);
    _MM_TRANSPOSE4_PS(nx, ny, nz, offset);
    const __m128 d = _mm_and_ps(
        _mm_sub_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(nx, x), _mm_mul_ps(ny, y)), _mm_mul_ps(nz, z)),
                   offset),
        abs_mask);
    if (least_abs != nullptr) lowest = _mm_min_ps(lowest, d);
    int near = _mm_movemask_ps(_mm_cmpngt_ps(d, reach));
    if (near == 0) continue;
    if (!kBoxesInFours || (near & (near - 1)) == 0) {  // one by one (a prediction's: one)
      for (; near != 0; near &= near - 1) {
        const std::uint32_t t = it[LowestSetBit(near)];
        if (ReachesBox(boxes[t], c, r2)) visit(t);
      }
      continue;
    }
    // The squared distances from the centre to the four boxes (lane 3 of every box is 0, as
    // the centre's), transposed to sum each box's lanes: culled where it exceeds r * r.
    __m128 e[4];
    for (int k = 0; k < 4; ++k) {
      const BoxT& box = boxes[it[k]];
      const __m128 g = _mm_max_ps(_mm_max_ps(_mm_sub_ps(_mm_load_ps(box.lo), centre),
                                             _mm_sub_ps(centre, _mm_load_ps(box.hi))),
                                  _mm_setzero_ps());
      e[k] = _mm_mul_ps(g, g);
    }
    _MM_TRANSPOSE4_PS(e[0], e[1], e[2], e[3]);
    const __m128 box_d2 = _mm_add_ps(_mm_add_ps(e[0], e[2]), _mm_add_ps(e[1], e[3]));
    near &= _mm_movemask_ps(_mm_cmpngt_ps(box_d2, reach2));
    for (; near != 0; near &= near - 1) visit(it[LowestSetBit(near)]);
  }
  if (least_abs != nullptr) {
    lowest = _mm_min_ps(lowest, _mm_movehl_ps(lowest, lowest));
    least = _mm_cvtss_f32(_mm_min_ss(lowest, _mm_shuffle_ps(lowest, lowest, 1)));
  }
#endif
  for (; it != end; ++it) {
    const PlaneT& plane = planes[*it];
    const float d =
        std::abs(plane.normal[0] * cx + plane.normal[1] * cy + plane.normal[2] * cz - plane.offset);
    least = std::min(least, d);
    if (!(d > r) && ReachesBox(boxes[*it], c, r2)) visit(*it);
  }
  if (least_abs != nullptr) *least_abs = std::min(*least_abs, least);
}

// The listed triangles `begin..end` (indices into planes, boxes and vertices) as
// AddLeafTriangle adds them: the float plane cull and the triangle's box (ForNearPlanes, with
// one margin for every sphere in the grid), then the exact test. *least_abs: see ForNearPlanes.
// The culls fill a small buffer, then one loop runs the exact tests, inlined once (a call per
// test, and the sum's state kept in memory across the calls, cost ~30 instructions a test).
template <bool kBoxesInFours, class PlanesT, class VerticesT, class BoxesT, class Sum>
inline void AddListed(const PlanesT& planes, const VerticesT& vertices, const BoxesT& boxes,
                      float margin, const Vector3d& center, double radius,
                      const std::uint32_t* begin, const std::uint32_t* end, Sum* sum,
                      float* least_abs = nullptr) {
  const float c[4] = {static_cast<float>(center.x()), static_cast<float>(center.y()),
                      static_cast<float>(center.z()), 0.0f};
  const float r = static_cast<float>(radius) + margin;
  constexpr std::ptrdiff_t kChunk = 64;  // entries culled before their exact tests
  std::uint32_t near[kChunk];
  for (const std::uint32_t* chunk = begin; chunk != end;) {
    const std::uint32_t* chunk_end = end - chunk > kChunk ? chunk + kChunk : end;
    int count = 0;
    ForNearPlanes<kBoxesInFours>(planes.data(), boxes.data(), c, r, chunk, chunk_end, least_abs,
                                 [&](std::uint32_t t) { near[count++] = t; });
    for (int i = 0; i < count; ++i) AddLeaf(vertices[near[i]], sum);
    chunk = chunk_end;
  }
}

#if defined(__SSE2__)
// --- the grid's exact test in pairs (SSE2) -----------------------------------------------

// The query's centre as SSE2 pairs: each coordinate twice, and (x, y).
struct PairCentre {
  explicit PairCentre(const Vector3d& center)
      : x(_mm_set1_pd(center.x())),
        y(_mm_set1_pd(center.y())),
        z(_mm_set1_pd(center.z())),
        xy(_mm_loadu_pd(center.data())),
        z_scalar(center.z()) {}
  __m128d x, y, z, xy;
  double z_scalar;
};

inline double Low(__m128d v) { return _mm_cvtsd_f64(v); }
inline double High(__m128d v) { return _mm_cvtsd_f64(_mm_unpackhi_pd(v, v)); }

// p - (o + t e) for the point o and the direction e given as (x, y) pairs and z: the offset of
// ClosestOffset's edge cases, the same operations per coordinate.
RLFIT_ALWAYS_INLINE __m128d EdgeOffset(const PairCentre& p, __m128d o_xy, double o_z,
                                       __m128d e_xy, double e_z, double t, double* z) {
  *z = p.z_scalar - (o_z + t * e_z);
  return _mm_sub_pd(p.xy, _mm_add_pd(o_xy, _mm_mul_pd(_mm_set1_pd(t), e_xy)));
}

// ClosestOffset(p, a, b, c, ab, ac, n) of an Arena::ExactLeaf, bit for bit: the same
// operations on the same doubles, Ericson's dot products two at a time (d1 and d3, d2 and d4,
// d5 and d6; each a sum of three products in the order of Eigen's dot, (x + y) + z). Returns the
// offset's (x, y) and *z its z.
template <class ExactT>
RLFIT_ALWAYS_INLINE __m128d ClosestOffsetPairs(const ExactT& e, const PairCentre& p, double* z) {
  const __m128d x = _mm_sub_pd(p.x, _mm_load_pd(e.ab_vertices[0]));  // (ap.x, bp.x)
  const __m128d y = _mm_sub_pd(p.y, _mm_load_pd(e.ab_vertices[1]));
  const __m128d w = _mm_sub_pd(p.z, _mm_load_pd(e.ab_vertices[2]));
  const __m128d d13 = _mm_add_pd(
      _mm_add_pd(_mm_mul_pd(_mm_load_pd(e.ab[0]), x), _mm_mul_pd(_mm_load_pd(e.ab[1]), y)),
      _mm_mul_pd(_mm_load_pd(e.ab[2]), w));
  const __m128d d24 = _mm_add_pd(
      _mm_add_pd(_mm_mul_pd(_mm_load_pd(e.ac[0]), x), _mm_mul_pd(_mm_load_pd(e.ac[1]), y)),
      _mm_mul_pd(_mm_load_pd(e.ac[2]), w));
  const double d1 = Low(d13), d2 = Low(d24);
  if (d1 <= 0.0 && d2 <= 0.0) {  // p - a
    *z = Low(w);
    return _mm_unpacklo_pd(x, y);
  }
  const double d3 = High(d13), d4 = High(d24);
  if (d3 >= 0.0 && d4 <= d3) {  // p - b
    *z = High(w);
    return _mm_unpackhi_pd(x, y);
  }
  const double vc = d1 * d4 - d3 * d2;
  // a (x, y), ab's and ac's (x, y), for the edge cases
  const auto a_xy = [&] {
    return _mm_unpacklo_pd(_mm_load_pd(e.ab_vertices[0]), _mm_load_pd(e.ab_vertices[1]));
  };
  const auto ab_xy = [&] {
    return _mm_unpacklo_pd(_mm_load_pd(e.edges[0]), _mm_load_pd(e.edges[1]));
  };
  const auto ac_xy = [&] {
    return _mm_unpackhi_pd(_mm_load_pd(e.edges[0]), _mm_load_pd(e.edges[1]));
  };
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0)
    return EdgeOffset(p, a_xy(), e.ab_vertices[2][0], ab_xy(), e.edges[2][0], d1 / (d1 - d3), z);
  const __m128d cx = _mm_sub_pd(p.x, _mm_load_pd(e.c[0]));  // cp.x twice
  const __m128d cy = _mm_sub_pd(p.y, _mm_load_pd(e.c[1]));
  const __m128d cz = _mm_sub_pd(p.z, _mm_load_pd(e.c[2]));
  const __m128d d56 = _mm_add_pd(
      _mm_add_pd(_mm_mul_pd(_mm_load_pd(e.edges[0]), cx), _mm_mul_pd(_mm_load_pd(e.edges[1]), cy)),
      _mm_mul_pd(_mm_load_pd(e.edges[2]), cz));
  const double d5 = Low(d56), d6 = High(d56);
  if (d6 >= 0.0 && d5 <= d6) {  // p - c
    *z = Low(cz);
    return _mm_unpacklo_pd(cx, cy);
  }
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0)
    return EdgeOffset(p, a_xy(), e.ab_vertices[2][0], ac_xy(), e.edges[2][1], d2 / (d2 - d6), z);
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    const __m128d b_xy =
        _mm_unpackhi_pd(_mm_load_pd(e.ab_vertices[0]), _mm_load_pd(e.ab_vertices[1]));
    const __m128d c_xy = _mm_unpacklo_pd(_mm_load_pd(e.c[0]), _mm_load_pd(e.c[1]));
    const double b_z = e.ab_vertices[2][1];
    return EdgeOffset(p, b_xy, b_z, _mm_sub_pd(c_xy, b_xy), e.c[2][0] - b_z,
                      (d4 - d3) / ((d4 - d3) + (d5 - d6)), z);
  }
  // Inside the face: n (n . ap).
  const __m128d n_xy = _mm_load_pd(e.n);
  const __m128d h = _mm_mul_pd(n_xy, _mm_unpacklo_pd(x, y));
  const double height = (Low(h) + High(h)) + e.n[2] * Low(w);
  *z = e.n[2] * height;
  return _mm_mul_pd(n_xy, _mm_set1_pd(height));
}

// ContactSum's sums with the (x, y) parts of the vectors as pairs.
struct PairSum {
  __m128d weighted_xy = _mm_setzero_pd();
  __m128d unweighted_xy = _mm_setzero_pd();
  __m128d deepest_xy = _mm_setzero_pd();
  double weighted_z = 0.0;
  double unweighted_z = 0.0;
  double deepest_z = 1.0;  // ContactSum's deepest direction starts as (0, 0, 1)
  double weight = 0.0;
  double deepest = -std::numeric_limits<double>::infinity();  // any penetration is deeper
  int count = 0;

  Contact Finish() const {
    double w[2], u[2], d[2];
    _mm_storeu_pd(w, weighted_xy);
    _mm_storeu_pd(u, unweighted_xy);
    _mm_storeu_pd(d, deepest_xy);
    return ContactSum::FinishContact(Vector3d(w[0], w[1], weighted_z),
                                     Vector3d(u[0], u[1], unweighted_z),
                                     Vector3d(d[0], d[1], deepest_z), weight, deepest, count);
  }
};

// One touching triangle of the grid's exact test: its direction (x, y as a pair, z) and
// penetration, as ContactSum::Add computes them.
struct PairTouch {
  __m128d direction_xy;
  double direction_z;
  double penetration;
};

// ContactSum::Add's test of a leaf entry (its ExactLeaf e, its LeafVertices v), bit for bit:
// Touches' test, and where it touches the same direction and penetration in *touch; true then.
template <class ExactT, class VerticesT>
RLFIT_ALWAYS_INLINE bool TouchPairs(const ExactT& e, const VerticesT& v, const PairCentre& p,
                                    double radius, double radius2, PairTouch* touch) {
  double z;
  const __m128d xy = ClosestOffsetPairs(e, p, &z);
  const __m128d sq = _mm_mul_pd(xy, xy);
  const double d2 = (Low(sq) + High(sq)) + z * z;  // Eigen's squaredNorm
  if (!(d2 <= radius2)) return false;  // also rejects NaN
  const double d = std::sqrt(d2);
  if (!(d <= radius)) return false;
  if (d > kDegenerateDistance) {
    touch->direction_xy = _mm_div_pd(xy, _mm_set1_pd(d));
    touch->direction_z = z / d;
  } else {
    const Vector3d n =
        Vector3d(v.ab[0], v.ab[1], v.ab[2]).cross(Vector3d(v.ac[0], v.ac[1], v.ac[2])).normalized();
    touch->direction_xy = _mm_setr_pd(n.x(), n.y());
    touch->direction_z = n.z();
  }
  touch->penetration = radius - d;
  return true;
}

// ContactSum::Add's sums of a touching triangle, bit for bit.
RLFIT_ALWAYS_INLINE void AddTouch(const PairTouch& touch, PairSum* sum) {
  const double penetration = touch.penetration;
  sum->weighted_xy =
      _mm_add_pd(sum->weighted_xy, _mm_mul_pd(_mm_set1_pd(penetration), touch.direction_xy));
  sum->weighted_z += penetration * touch.direction_z;
  sum->unweighted_xy = _mm_add_pd(sum->unweighted_xy, touch.direction_xy);
  sum->unweighted_z += touch.direction_z;
  sum->weight += penetration;
  if (penetration > sum->deepest) {
    sum->deepest = penetration;
    sum->deepest_xy = touch.direction_xy;
    sum->deepest_z = touch.direction_z;
  }
  ++sum->count;
}

// ForNearPlanes<true> over `begin..end` into near[0..count), count returned: AddListed's culls.
// Inlined: with the sums after the exact tests (TestChunk), nothing is live across it (out of
// line, as it was while the sums ran beside the tests, it cost ~25 instructions a call).
template <class PlaneT, class BoxT>
RLFIT_ALWAYS_INLINE int CullListed(const PlaneT* planes, const BoxT* boxes, float margin,
                              const Vector3d& center, double radius, const std::uint32_t* begin,
                              const std::uint32_t* end, std::uint32_t* near) {
  // (x, y, z, 0) as floats, each rounded as static_cast<float> rounds it (cvtpd2ps as cvtsd2ss),
  // in four instructions (the array's initializer took ~20).
  alignas(16) float c[4];
  _mm_store_ps(c, _mm_movelh_ps(_mm_cvtpd_ps(_mm_loadu_pd(center.data())),
                                _mm_cvtpd_ps(_mm_set_sd(center.z()))));
  const float r = static_cast<float>(radius) + margin;
  int count = 0;
  ForNearPlanes<true>(planes, boxes, c, r, begin, end, nullptr,
                      [&](std::uint32_t t) { near[count++] = t; });
  return count;
}

// The grid's query data of CollideListedPairs.
template <class PlanesT, class ExactT, class VerticesT, class BoxesT>
struct ListedQuery {
  const PlanesT& planes;
  const ExactT& exact;
  const VerticesT& vertices;
  const BoxesT& boxes;
  float margin;
  const Vector3d& center;
  double radius;
};

constexpr std::ptrdiff_t kListedChunk = 64;  // entries culled before their exact tests

// The culls (CullListed) and exact tests (TouchPairs) of the listed entries chunk..chunk_end
// (at most kListedChunk): touches[0..n) the touching triangles in list order, n returned.
// The centre's pairs are made after the culls' call (before it, they were stored and loaded
// again).
template <class Query>
RLFIT_ALWAYS_INLINE int TestChunk(const Query& q, const std::uint32_t* chunk,
                                  const std::uint32_t* chunk_end, PairTouch* touches) {
  std::uint32_t near[kListedChunk];
  const int count = CullListed(q.planes.data(), q.boxes.data(), q.margin, q.center, q.radius,
                               chunk, chunk_end, near);
  const PairCentre p(q.center);
  const double radius2 = q.radius * q.radius;
  int touched = 0;
  for (int i = 0; i < count; ++i)
    touched += TouchPairs(q.exact[near[i]], q.vertices[near[i]], p, q.radius, radius2,
                          &touches[touched]);
  return touched;
}

// CollideListedPairs of a list over kListedChunk entries (0.06% of arena_query's queries).
template <class PlanesT, class ExactT, class VerticesT, class BoxesT>
RLFIT_NOINLINE Contact CollideListedChunks(const PlanesT& planes, const ExactT& exact,
                                           const VerticesT& vertices, const BoxesT& boxes,
                                           float margin, const Vector3d& center, double radius,
                                           const std::uint32_t* begin, const std::uint32_t* end) {
  const ListedQuery<PlanesT, ExactT, VerticesT, BoxesT> q{planes, exact,  vertices, boxes,
                                                          margin, center, radius};
  PairTouch touches[kListedChunk];
  PairSum sum;
  for (const std::uint32_t* chunk = begin; chunk != end;) {
    const std::uint32_t* chunk_end = end - chunk > kListedChunk ? chunk + kListedChunk : end;
    const int touched = TestChunk(q, chunk, chunk_end, touches);
    for (int i = 0; i < touched; ++i) AddTouch(touches[i], &sum);
    chunk = chunk_end;
  }
  return sum.Finish();
}

// AddListed's culls, then TouchPairs and AddTouch for the survivors: CollideList's contact, bit
// for bit as ContactSum's. The tests first, then the sums in the same order: apart, the sums
// stay in registers (together, they were kept in memory: ~14 loads and stores a touching test),
// and they start after the culls' call (kept across it, they were stored and loaded again).
template <class PlanesT, class ExactT, class VerticesT, class BoxesT>
RLFIT_ALWAYS_INLINE Contact CollideListedPairs(const PlanesT& planes, const ExactT& exact,
                                               const VerticesT& vertices, const BoxesT& boxes,
                                               float margin, const Vector3d& center,
                                               double radius, const std::uint32_t* begin,
                                               const std::uint32_t* end) {
  if (end - begin > kListedChunk)
    return CollideListedChunks(planes, exact, vertices, boxes, margin, center, radius, begin, end);
  const ListedQuery<PlanesT, ExactT, VerticesT, BoxesT> q{planes, exact,  vertices, boxes,
                                                          margin, center, radius};
  PairTouch touches[kListedChunk];
  const int touched = TestChunk(q, begin, end, touches);
  PairSum sum;
  for (int i = 0; i < touched; ++i) AddTouch(touches[i], &sum);
  return sum.Finish();
}

// CollideListedPairs of a list of one entry, bit for bit: its plane cull (AddLeafTriangle's)
// and exact test, and the sums of one touch. The culls only spare exact tests (they reject
// nothing the test accepts: ForNearPlanes), so leaving out the box cull changes nothing, and the
// sums start from the same zeros. A cell listing one triangle (beside the floor or a flat wall)
// holds 56% of arena_query's touching queries and 60% of its listed ones without contact; the
// four-wide culls' set-up, the box cull and the sums' loop cost them ~100 instructions a
// touching query.
template <class PlaneT, class ExactT, class VerticesT>
RLFIT_ALWAYS_INLINE Contact CollideOneListed(const PlaneT& plane, const ExactT& exact,
                                             const VerticesT& vertices, float margin,
                                             const Vector3d& center, double radius) {
  if (PlaneCulls(plane, static_cast<float>(center.x()), static_cast<float>(center.y()),
                 static_cast<float>(center.z()), static_cast<float>(radius) + margin))
    return Contact{};
  PairTouch touch;
  if (!TouchPairs(exact, vertices, PairCentre(center), radius, radius * radius, &touch))
    return Contact{};
  PairSum sum;
  AddTouch(touch, &sum);
  return sum.Finish();
}

// CollideListedPairs of a list of two or three entries, bit for bit: each entry's plane cull
// (AddLeafTriangle's) and exact test, then the sums, without the box cull and the set-up of
// the four-wide culls (8% of the touching queries and 10% of the listed ones without contact).
template <class PlanesT, class ExactT, class VerticesT>
RLFIT_ALWAYS_INLINE Contact CollideFewListed(const PlanesT& planes, const ExactT& exact,
                                             const VerticesT& vertices, float margin,
                                             const Vector3d& center, double radius,
                                             const std::uint32_t* begin,
                                             const std::uint32_t* end) {
  const float cx = static_cast<float>(center.x()), cy = static_cast<float>(center.y()),
              cz = static_cast<float>(center.z());
  const float r = static_cast<float>(radius) + margin;
  const PairCentre p(center);
  PairTouch touches[3];
  int touched = 0;
  for (const std::uint32_t* it = begin; it != end; ++it) {
    if (PlaneCulls(planes[*it], cx, cy, cz, r)) continue;
    touched +=
        TouchPairs(exact[*it], vertices[*it], p, radius, radius * radius, &touches[touched]);
  }
  PairSum sum;
  for (int i = 0; i < touched; ++i) AddTouch(touches[i], &sum);
  return sum.Finish();
}
#endif  // __SSE2__

// Largest |x| + |y| + |z| + radius of a query, uu. Beyond it, for a NaN or infinity, or for a
// negative radius, a query touches nothing (this keeps the BVH's float conversions defined).
constexpr double kMaxQueryExtent = 1e30;

double QueryExtent(const Vector3d& center, double radius) {
  return std::abs(center.x()) + std::abs(center.y()) + std::abs(center.z()) + radius;
}

bool ValidQuery(double extent, double radius) {
  return radius >= 0.0 && extent <= kMaxQueryExtent;  // false for NaN
}

// --- BVH construction --------------------------------------------------------------------

// Relative costs of visiting a node and testing a triangle, in the split cost below.
constexpr double kNodeCost = 1.0;
constexpr double kTriangleCost = 1.5;
// Most triangles in a leaf.
constexpr int kMaxLeafSize = 4;
// Beyond this depth the builder splits at the median, which bounds the depth (and the
// traversal stack) by kMedianDepth + log2(triangles).
constexpr int kMedianDepth = 48;
// Deepest 4-wide node: the binary tree's depth bound, with log2 of 2^32 triangles.
constexpr int kMaxDepth = kMedianDepth + 33;
// A node visit pushes at most 4 children and pops 1.
constexpr int kStackSize = 3 * kMaxDepth + 1;
constexpr float kInf = std::numeric_limits<float>::infinity();

struct BuildBox {
  Vector3d lo = Vector3d::Constant(std::numeric_limits<double>::infinity());
  Vector3d hi = Vector3d::Constant(-std::numeric_limits<double>::infinity());
  void Grow(const BuildBox& b) {
    lo = lo.cwiseMin(b.lo);
    hi = hi.cwiseMax(b.hi);
  }
};

// Weight of a box in the split cost: its surface area, as in ray tracing's SAH. For sphere
// centres spread through the arena the volume of the box grown by the radius is the exact
// chance of a visit, but over the benchmark's spheres the tree it built needed 13% more
// instructions per query (464 against 410).
double VisitWeight(const BuildBox& b) {
  const Vector3d e = b.hi - b.lo;
  return e.x() * e.y() + e.y() * e.z() + e.z() * e.x();
}

struct BuildItem {
  BuildBox box;
  Vector3d centroid;
  int triangle;
};

// A node of the binary tree built first and then collapsed into 4-wide nodes.
struct BuildNode {
  BuildBox box;
  int child[2] = {-1, -1};  // binary nodes; -1 in a leaf
  int first = 0;            // leaf: first entry in planes_ / leaf_vertices_
  int count = 0;            // leaf: number of triangles; 0 for an inner node
};

}  // namespace

void Arena::Build() {
  nodes_.clear();
  planes_.clear();
  leaf_vertices_.clear();
  const int n = static_cast<int>(triangles_.size());
  if (n == 0) return;

  std::vector<BuildItem> items(n);
  for (int i = 0; i < n; ++i) {
    BuildItem& item = items[i];
    for (const auto& p : triangles_[i].p) {
      const Vector3d v = p.cast<double>();
      item.box.lo = item.box.lo.cwiseMin(v);
      item.box.hi = item.box.hi.cwiseMax(v);
    }
    item.centroid = 0.5 * (item.box.lo + item.box.hi);
    item.triangle = i;
  }
  planes_.reserve(n);
  leaf_vertices_.reserve(n);
  leaf_boxes_.clear();
  leaf_boxes_.reserve(n);
  exact_leaves_.clear();
  exact_leaves_.reserve(n);

  // 1. A binary tree by the SAH-style split cost, over items [begin, end).
  std::vector<BuildNode> tree;
  tree.reserve(2 * n);
  std::vector<double> right_weight(n);
  auto build = [&](auto&& self, int begin, int end, int depth) -> int {
    const int count = end - begin;
    const int node_index = static_cast<int>(tree.size());
    tree.emplace_back();
    for (int i = begin; i < end; ++i) tree[node_index].box.Grow(items[i].box);
    const BuildBox box = tree[node_index].box;

    // Best split over the three axes, items sorted by centroid.
    int best_axis = -1, best_split = 0;
    double best_cost = std::numeric_limits<double>::infinity();
    const double parent_weight = VisitWeight(box);
    if (count > 1) {
      for (int axis = 0; axis < 3; ++axis) {
        std::sort(items.begin() + begin, items.begin() + end,
                  [axis](const BuildItem& a, const BuildItem& b) {
                    return a.centroid[axis] < b.centroid[axis] ||
                           (a.centroid[axis] == b.centroid[axis] && a.triangle < b.triangle);
                  });
        if (depth >= kMedianDepth) {
          if (axis == 0) {
            best_axis = 0;
            best_split = begin + count / 2;
          }
          continue;
        }
        BuildBox right;
        for (int i = end - 1; i > begin; --i) {
          right.Grow(items[i].box);
          right_weight[i] = VisitWeight(right) * (end - i);
        }
        BuildBox left;
        for (int i = begin + 1; i < end; ++i) {
          left.Grow(items[i - 1].box);
          const double cost = kNodeCost + kTriangleCost *
                                              (VisitWeight(left) * (i - begin) + right_weight[i]) /
                                              parent_weight;
          if (cost < best_cost) {
            best_cost = cost;
            best_axis = axis;
            best_split = i;
          }
        }
      }
    }
    const bool leaf = count == 1 || (count <= kMaxLeafSize && kTriangleCost * count <= best_cost);
    if (leaf) {
      tree[node_index].first = static_cast<int>(planes_.size());
      tree[node_index].count = count;
      for (int i = begin; i < end; ++i) {
        const Triangle& t = triangles_[items[i].triangle];
        LeafVertices v;
        for (int j = 0; j < 3; ++j)
          for (int k = 0; k < 3; ++k) v.p[j][k] = t.p[j][k];
        const Vector3d a = t.p[0].cast<double>(), b = t.p[1].cast<double>(),
                       c = t.p[2].cast<double>();
        const Vector3d normal = (b - a).cross(c - a).normalized();
        for (int k = 0; k < 3; ++k) {
          v.n[k] = normal[k];
          v.ab[k] = b[k] - a[k];
          v.ac[k] = c[k] - a[k];
        }
        Plane plane;
        for (int k = 0; k < 3; ++k) plane.normal[k] = static_cast<float>(normal[k]);
        plane.offset = static_cast<float>(normal.dot(a));
        planes_.push_back(plane);
        leaf_vertices_.push_back(v);
        ExactLeaf e{};
        for (int k = 0; k < 3; ++k) {
          e.ab_vertices[k][0] = v.p[0][k];
          e.ab_vertices[k][1] = v.p[1][k];
          e.c[k][0] = e.c[k][1] = v.p[2][k];
          e.ab[k][0] = e.ab[k][1] = v.ab[k];
          e.ac[k][0] = e.ac[k][1] = v.ac[k];
          e.edges[k][0] = v.ab[k];
          e.edges[k][1] = v.ac[k];
          e.n[k] = v.n[k];
        }
        exact_leaves_.push_back(e);
        LeafBox box{};
        for (int k = 0; k < 3; ++k) {
          box.lo[k] = std::min({t.p[0][k], t.p[1][k], t.p[2][k]});
          box.hi[k] = std::max({t.p[0][k], t.p[1][k], t.p[2][k]});
        }
        leaf_boxes_.push_back(box);
      }
      return node_index;
    }
    if (best_axis != 2)
      std::sort(
          items.begin() + begin, items.begin() + end,
          [best_axis](const BuildItem& a, const BuildItem& b) {
            return a.centroid[best_axis] < b.centroid[best_axis] ||
                   (a.centroid[best_axis] == b.centroid[best_axis] && a.triangle < b.triangle);
          });
    const int left = self(self, begin, best_split, depth + 1);
    const int right = self(self, best_split, end, depth + 1);
    tree[node_index].child[0] = left;
    tree[node_index].child[1] = right;
    return node_index;
  };
  const int root = build(build, 0, n, 0);

  // 2. Collapse into 4-wide nodes: a node takes the binary node's children, then keeps opening
  // its largest inner child until it has four. Depth first, so a subtree follows its parent.
  auto gather = [&](int binary, std::array<int, 4>* kids) {
    if (tree[binary].count > 0) {  // a leaf root: one child
      (*kids)[0] = binary;
      return 1;
    }
    *kids = {tree[binary].child[0], tree[binary].child[1], -1, -1};
    int count = 2;
    while (count < 4) {
      int widest = -1;
      for (int g = 0; g < count; ++g)
        if (tree[(*kids)[g]].count == 0 &&
            (widest < 0 ||
             VisitWeight(tree[(*kids)[g]].box) > VisitWeight(tree[(*kids)[widest]].box)))
          widest = g;
      if (widest < 0) break;
      const BuildNode& open = tree[(*kids)[widest]];
      (*kids)[count++] = open.child[1];
      (*kids)[widest] = open.child[0];
    }
    return count;
  };
  int max_depth = 0;
  auto emit = [&](auto&& self, int binary, int depth) -> std::uint32_t {
    max_depth = std::max(max_depth, depth);
    const auto index = static_cast<std::uint32_t>(nodes_.size());
    Node node;
    for (int k = 0; k < 4; ++k) {
      for (int axis = 0; axis < 3; ++axis) {
        node.lo[axis][k] = kInf;  // empty box: never overlapped
        node.hi[axis][k] = -kInf;
      }
      node.index[k] = 0;
      node.count[k] = 0;
    }
    nodes_.push_back(node);
    std::array<int, 4> kids;
    const int kid_count = gather(binary, &kids);
    for (int k = 0; k < kid_count; ++k) {
      const BuildNode& kid = tree[kids[k]];
      for (int axis = 0; axis < 3; ++axis) {
        nodes_[index].lo[axis][k] = static_cast<float>(kid.box.lo[axis]);  // exact: float vertices
        nodes_[index].hi[axis][k] = static_cast<float>(kid.box.hi[axis]);
      }
      if (kid.count > 0) {
        nodes_[index].index[k] = static_cast<std::uint32_t>(kid.first);
        nodes_[index].count[k] = static_cast<std::uint32_t>(kid.count);
      } else {
        const std::uint32_t child = self(self, kids[k], depth + 1);
        nodes_[index].index[k] = child;
      }
    }
    return index;
  };
  emit(emit, root, 1);
  RLFIT_CHECK(max_depth <= kMaxDepth, "BVH deeper than the traversal stack allows");
}

// --- grid construction -------------------------------------------------------------------

namespace {

// In place over cells[i + nx (j + ny k)]: 0 stays 0 (a seed), any other value becomes the
// Chebyshev distance in cells to the nearest seed, at most 255 (cells outside the box count as
// no seed). A chamfer transform with unit weights over the 26 neighbours (exact for this
// metric), one sweep forward over the 13 neighbours already visited and one backward over the
// other 13. A row at a time: the 12 neighbours in the previous layer and row first (3-wide
// minima of 4 rows), then the one before in the row.
void ChebyshevChamfer(std::uint8_t* cells, std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  std::vector<std::uint8_t> near(static_cast<std::size_t>(nx));
  auto sweep = [&](int step) {
    for (std::int64_t kk = 0; kk < nz; ++kk)
      for (std::int64_t jj = 0; jj < ny; ++jj) {
        const std::int64_t k = step > 0 ? kk : nz - 1 - kk, j = step > 0 ? jj : ny - 1 - jj;
        std::fill(near.begin(), near.end(), 255);
        auto take = [&](std::int64_t rj, std::int64_t rk) {
          if (rj < 0 || rj >= ny || rk < 0 || rk >= nz) return;
          const std::uint8_t* r = cells + nx * (rj + ny * rk);
          std::uint8_t* m = near.data();
          m[0] = std::min({m[0], r[0], r[std::min<std::int64_t>(1, nx - 1)]});
          for (std::int64_t i = 1; i + 1 < nx; ++i)  // vectorised by the compiler
            m[i] = std::min(m[i], std::min(r[i - 1], std::min(r[i], r[i + 1])));
          if (nx > 1) m[nx - 1] = std::min({m[nx - 1], r[nx - 2], r[nx - 1]});
        };
        for (std::int64_t dj = -1; dj <= 1; ++dj) take(j + dj, k - step);
        take(j - step, k);
        std::uint8_t* row = cells + nx * (j + ny * k);
        int before = 255;  // the row's previous cell in the sweep's order, + 1 below
        for (std::int64_t ii = 0; ii < nx; ++ii) {
          const std::int64_t i = step > 0 ? ii : nx - 1 - ii;
          const int d = std::min({static_cast<int>(row[i]), near[i] + 1, before + 1});
          row[i] = static_cast<std::uint8_t>(std::min(d, 255));
          before = row[i];
        }
      }
  };
  sweep(+1);
  sweep(-1);
}

}  // namespace

void Arena::BuildGrid() {
  grid_cells_.clear();
  grid_candidates_.clear();
  grid_clear_cells_.clear();
  std::fill(std::begin(octant_masks_), std::end(octant_masks_), std::uint8_t{0});
  const int n = static_cast<int>(planes_.size());
  if (n < kGridMinTriangles) return;

  // Leaf entries in the order CollideBvh visits them: a node's leaf children (k ascending),
  // then its inner children's subtrees (k descending, the last pushed is popped first).
  std::vector<std::uint32_t> order;
  order.reserve(n);
  auto visit = [&](auto&& self, std::uint32_t index) -> void {
    const Node& node = nodes_[index];
    for (int k = 0; k < 4; ++k)
      for (std::uint32_t t = node.index[k]; t < node.index[k] + node.count[k]; ++t)
        order.push_back(t);
    for (int k = 3; k >= 0; --k)
      if (node.count[k] == 0 && node.lo[0][k] <= node.hi[0][k]) self(self, node.index[k]);
  };
  visit(visit, 0);
  RLFIT_CHECK(static_cast<int>(order.size()) == n, "BVH visit order misses leaf entries");

  // Box of the mesh grown by the grid radius.
  Vector3d lo = Vector3d::Constant(std::numeric_limits<double>::infinity());
  Vector3d hi = -lo;
  for (const LeafVertices& v : leaf_vertices_)
    for (const auto& p : v.p)
      for (int axis = 0; axis < 3; ++axis) {
        lo[axis] = std::min(lo[axis], p[axis]);
        hi[axis] = std::max(hi[axis], p[axis]);
      }
  lo.array() -= kGridRadius;
  hi.array() += kGridRadius;
  std::int64_t dims[3];
  std::int64_t cells = 1;
  for (int axis = 0; axis < 3; ++axis) {
    dims[axis] = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::ceil((hi[axis] - lo[axis]) / kGridCellUu)));
    cells *= dims[axis];
    if (cells > kGridMaxCells) return;  // too large a mesh: BVH only
  }
  // Slack of the candidate tests, uu: far above the rounding of the query's cell index and of
  // the double contact test at these magnitudes (1e-12 uu), so no touching triangle is missed.
  const double extent = std::max(std::abs(lo.x()), std::abs(hi.x())) +
                        std::max(std::abs(lo.y()), std::abs(hi.y())) +
                        std::max(std::abs(lo.z()), std::abs(hi.z())) + kGridRadius;
  const double slack = 1e-3 + 1e-5 * extent;
  const double half = 0.5 * kGridCellUu;
  const double half_diagonal = half * std::sqrt(3.0);
  const double reach = kGridRadius + slack;

  // (cell, leaf entry) pairs, triangles in visit order. A triangle is listed in a cell when
  // both necessary conditions for a point of the cell within kGridRadius of it hold: its plane
  // comes within reach of the cell's box, and the triangle within reach + half diagonal of the
  // cell's centre.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (const std::uint32_t t : order) {
    const auto& v = leaf_vertices_[t].p;
    const Vector3d a(v[0][0], v[0][1], v[0][2]), b(v[1][0], v[1][1], v[1][2]),
        c(v[2][0], v[2][1], v[2][2]);
    const Vector3d normal = (b - a).cross(c - a).normalized();
    const double box_reach = half * normal.cwiseAbs().sum();
    std::int64_t first[3], last[3];
    for (int axis = 0; axis < 3; ++axis) {
      const double tlo = std::min({a[axis], b[axis], c[axis]}) - reach - lo[axis];
      const double thi = std::max({a[axis], b[axis], c[axis]}) + reach - lo[axis];
      first[axis] = std::clamp<std::int64_t>(
          static_cast<std::int64_t>(std::floor(tlo / kGridCellUu)), 0, dims[axis] - 1);
      last[axis] = std::clamp<std::int64_t>(
          static_cast<std::int64_t>(std::floor(thi / kGridCellUu)), 0, dims[axis] - 1);
    }
    for (std::int64_t k = first[2]; k <= last[2]; ++k)
      for (std::int64_t j = first[1]; j <= last[1]; ++j)
        for (std::int64_t i = first[0]; i <= last[0]; ++i) {
          const Vector3d center = lo + kGridCellUu * Vector3d(i + 0.5, j + 0.5, k + 0.5);
          if (std::abs(normal.dot(center - a)) - box_reach > reach) continue;
          if (ClosestOffset(center, a, b, c).norm() > reach + half_diagonal) continue;
          pairs.emplace_back(static_cast<std::uint32_t>(i + dims[0] * (j + dims[1] * k)), t);
        }
    if (static_cast<std::int64_t>(pairs.size()) > 4 * kGridMaxCells) return;  // BVH only
  }

  // Counting sort by cell, stable: each cell's list stays in visit order.
  grid_cells_.assign(static_cast<std::size_t>(cells) + 1, 0);
  for (const auto& pair : pairs) ++grid_cells_[pair.first + 1];
  for (std::int64_t cell = 0; cell < cells; ++cell) grid_cells_[cell + 1] += grid_cells_[cell];
  grid_candidates_.resize(pairs.size());
  std::vector<std::uint32_t> cursor(grid_cells_.begin(), grid_cells_.end() - 1);
  for (const auto& pair : pairs) grid_candidates_[cursor[pair.first]++] = pair.second;

  // Free octants of the listed cells: the listing's two tests for each octant's box (half the
  // cell's edge) against the cell's triangles (a superset of the octant's: the box lies in the
  // cell's). An octant that no triangle passes is farther than kGridRadius from the mesh.
  std::vector<std::uint8_t> free_octants(static_cast<std::size_t>(cells), 0);
  const double octant_half = 0.5 * half;
  const double octant_half_diagonal = 0.5 * half_diagonal;
  for (std::int64_t cell = 0; cell < cells; ++cell) {
    if (grid_cells_[cell] == grid_cells_[cell + 1]) continue;
    const std::int64_t i = cell % dims[0], j = (cell / dims[0]) % dims[1],
                       k = cell / (dims[0] * dims[1]);
    // A triangle within reach of the cell's centre, a corner of every octant, leaves none free
    // (most listed cells; one test each instead of eight).
    const Vector3d cell_center = lo + kGridCellUu * Vector3d(i + 0.5, j + 0.5, k + 0.5);
    bool center_near = false;
    for (std::uint32_t e = grid_cells_[cell]; e < grid_cells_[cell + 1] && !center_near; ++e) {
      const LeafVertices& leaf = leaf_vertices_[grid_candidates_[e]];
      const auto& v = leaf.p;
      const double height = leaf.n[0] * (cell_center.x() - v[0][0]) +
                            leaf.n[1] * (cell_center.y() - v[0][1]) +
                            leaf.n[2] * (cell_center.z() - v[0][2]);
      if (std::abs(height) > reach) continue;  // the plane is out of reach
      center_near = ClosestOffset(cell_center, Vector3d(v[0][0], v[0][1], v[0][2]),
                                  Vector3d(v[1][0], v[1][1], v[1][2]),
                                  Vector3d(v[2][0], v[2][1], v[2][2]), leaf.n)
                        .squaredNorm() <= reach * reach;
    }
    if (center_near) continue;
    std::uint8_t free = 0;
    for (int o = 0; o < 8; ++o) {
      const Vector3d center =
          lo + kGridCellUu * Vector3d(i + 0.25 + 0.5 * (o & 1), j + 0.25 + 0.5 * (o >> 1 & 1),
                                      k + 0.25 + 0.5 * (o >> 2 & 1));
      bool near = false;
      for (std::uint32_t e = grid_cells_[cell]; e < grid_cells_[cell + 1] && !near; ++e) {
        const LeafVertices& leaf = leaf_vertices_[grid_candidates_[e]];
        const auto& v = leaf.p;
        const Vector3d a(v[0][0], v[0][1], v[0][2]), b(v[1][0], v[1][1], v[1][2]),
            c(v[2][0], v[2][1], v[2][2]);
        // First the gap between the octant and the triangle's box (a quicker proof that the
        // triangle is out of reach), then the listing's tests.
        const Vector3d gap = ((a.cwiseMin(b).cwiseMin(c) - center).array() - octant_half)
                                 .max((center - a.cwiseMax(b).cwiseMax(c)).array() - octant_half)
                                 .max(0.0);
        if (gap.squaredNorm() > reach * reach) continue;
        const Vector3d normal(leaf.n[0], leaf.n[1], leaf.n[2]);
        if (std::abs(normal.dot(center - a)) - octant_half * normal.cwiseAbs().sum() > reach)
          continue;
        near = ClosestOffset(center, a, b, c, leaf.n).norm() <= reach + octant_half_diagonal;
      }
      if (!near) free |= static_cast<std::uint8_t>(1 << o);
    }
    free_octants[cell] = free;
  }

  // Chebyshev distance to the nearest listed cell, at most kMaxClearCells.
  grid_clear_cells_.assign(static_cast<std::size_t>(cells), 255);
  for (std::int64_t cell = 0; cell < cells; ++cell)
    if (grid_cells_[cell] != grid_cells_[cell + 1]) grid_clear_cells_[cell] = 0;
  ChebyshevChamfer(grid_clear_cells_.data(), dims[0], dims[1], dims[2]);
  for (std::uint8_t& clear : grid_clear_cells_)
    clear = std::min<std::uint8_t>(clear, kMaxClearCells);
  // The listed cells' free octants as codes: the most frequent masks first (ties by value).
  std::array<std::int64_t, 256> mask_count{};
  for (const std::uint8_t mask : free_octants) ++mask_count[mask];
  std::vector<int> masks;
  for (int mask = 1; mask < 256; ++mask)
    if (mask_count[mask] > 0) masks.push_back(mask);
  std::stable_sort(masks.begin(), masks.end(),
                   [&](int a, int b) { return mask_count[a] > mask_count[b]; });
  std::array<std::uint8_t, 256> code_of{};  // 0: not coded
  constexpr int kCodes = 256 - kOctantCodeBase;
  for (int i = 0; i < kCodes && i < static_cast<int>(masks.size()); ++i) {
    octant_masks_[i] = static_cast<std::uint8_t>(masks[i]);
    code_of[masks[i]] = static_cast<std::uint8_t>(kOctantCodeBase + i);
  }
  for (std::int64_t cell = 0; cell < cells; ++cell)
    if (grid_clear_cells_[cell] == 0) grid_clear_cells_[cell] = code_of[free_octants[cell]];

  for (int axis = 0; axis < 3; ++axis) {
    grid_origin_[axis] = lo[axis];
    grid_dims_[axis] = static_cast<double>(dims[axis]);
  }
  grid_inv_cell_ = 1.0 / kGridCellUu;
  grid_stride_[0] = dims[0];
  grid_stride_[1] = dims[0] * dims[1];
  grid_margin_ = static_cast<float>(slack);

  // Collide's lookup: the grid inside a border of one cell, its axes laid out smallest first
  // (LookupIndex's 16-bit tops and strides; without a fit, no table: the BVH answers).
  const std::int64_t grown[3] = {dims[0] + 2, dims[1] + 2, dims[2] + 2};
  int axes[3] = {0, 1, 2};
  std::stable_sort(axes, axes + 3, [&](int a, int b) { return grown[a] < grown[b]; });
  std::int64_t weight[3];
  weight[axes[0]] = 1;
  weight[axes[1]] = grown[axes[0]];
  weight[axes[2]] = grown[axes[0]] * grown[axes[1]];
  constexpr std::int64_t kMost16 = std::numeric_limits<std::int16_t>::max();
  if (weight[axes[2]] > kMost16 || grown[axes[2]] - 1 > kMost16) return;
  grid_lookup_.assign(static_cast<std::size_t>(grown[0] * grown[1] * grown[2]), kLookupOutside);
  for (std::int64_t k = 0; k < dims[2]; ++k)
    for (std::int64_t j = 0; j < dims[1]; ++j)
      for (std::int64_t i = 0; i < dims[0]; ++i) {
        const std::int64_t cell = i + dims[0] * (j + dims[1] * k);
        grid_lookup_[(i + 1) * weight[0] + (j + 1) * weight[1] + (k + 1) * weight[2]] =
            grid_cells_[cell] == grid_cells_[cell + 1] ? kLookupEmpty
                                                       : static_cast<std::int32_t>(cell);
      }
  for (int axis = 0; axis < 3; ++axis) {
    lookup_origin_[axis] = lo[axis] - kGridCellUu;
    lookup_top_[axis] = static_cast<std::int16_t>(grown[axis] - 1);
    lookup_weight_[axis] = static_cast<std::int16_t>(weight[axis]);
  }
}

void Arena::BuildFloor() {
  floor_columns_.clear();
  floor_top_z_ = -1e300;
  if (grid_cells_.empty()) return;
  const std::int64_t nx = grid_stride_[0], ny = grid_stride_[1] / grid_stride_[0];
  const auto nz = static_cast<std::int64_t>(grid_dims_[2]);
  auto is_floor = [](const double (&p)[3][3]) {
    return p[0][2] == 0.0 && p[1][2] == 0.0 && p[2][2] == 0.0;
  };
  // The floor's edges in x-y (float vertices, exact), each with the side of the line its
  // triangle's third vertex lies on. An edge of two triangles on opposite sides is inside the
  // floor; any other (one triangle, or a fold) is on its boundary.
  std::map<std::array<float, 4>, std::vector<int>> edges;
  std::vector<const LeafVertices*> floor;
  for (const LeafVertices& v : leaf_vertices_) {
    if (!is_floor(v.p)) continue;
    floor.push_back(&v);
    for (int e = 0; e < 3; ++e) {
      const double* p = v.p[e];
      const double* q = v.p[(e + 1) % 3];
      const double* r = v.p[(e + 2) % 3];
      const double side = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]);
      std::array<float, 4> key = {static_cast<float>(p[0]), static_cast<float>(p[1]),
                                  static_cast<float>(q[0]), static_cast<float>(q[1])};
      int sign = side > 0.0 ? 1 : (side < 0.0 ? -1 : 0);
      if (std::make_pair(key[2], key[3]) < std::make_pair(key[0], key[1])) {
        key = {key[2], key[3], key[0], key[1]};
        sign = -sign;
      }
      edges[key].push_back(sign);
    }
  }
  if (floor.empty()) return;

  // The grid's cell index along `axis` of the coordinate v, clamped to the grid.
  const std::int64_t counts[3] = {nx, ny, nz};
  auto cell_along = [&](int axis, double v) {
    return std::clamp<std::int64_t>(
        static_cast<std::int64_t>(std::floor((v - grid_origin_[axis]) / kGridCellUu)), 0,
        counts[axis] - 1);
  };
  // Layers from the one holding kFloorMinZUu to the one holding kFloorReachUu.
  const std::int64_t k_lo = cell_along(2, kFloorMinZUu), k_hi = cell_along(2, kFloorReachUu);
  auto column_of = [&](double x, double y, std::int64_t* i, std::int64_t* j) {
    *i = cell_along(0, x);
    *j = cell_along(1, y);
  };

  // 1: the column's centre lies on a floor triangle (inclusive of its edges).
  std::vector<std::uint8_t> columns(static_cast<std::size_t>(nx * ny), 0);
  for (const LeafVertices* v : floor) {
    const auto& p = v->p;
    std::int64_t i0, j0, i1, j1;
    column_of(std::min({p[0][0], p[1][0], p[2][0]}), std::min({p[0][1], p[1][1], p[2][1]}), &i0,
              &j0);
    column_of(std::max({p[0][0], p[1][0], p[2][0]}), std::max({p[0][1], p[1][1], p[2][1]}), &i1,
              &j1);
    for (std::int64_t j = j0; j <= j1; ++j)
      for (std::int64_t i = i0; i <= i1; ++i) {
        const double x = grid_origin_[0] + kGridCellUu * (i + 0.5);
        const double y = grid_origin_[1] + kGridCellUu * (j + 0.5);
        double w[3];
        for (int e = 0; e < 3; ++e) {
          const auto& a = p[e];
          const auto& b = p[(e + 1) % 3];
          w[e] = (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]);
        }
        const bool inside = (w[0] >= 0.0 && w[1] >= 0.0 && w[2] >= 0.0) ||
                            (w[0] <= 0.0 && w[1] <= 0.0 && w[2] <= 0.0);
        if (inside) columns[i + nx * j] = 1;
      }
  }
  // 2: no boundary edge of the floor within 1 uu of the column's square (then a square whose
  // centre is on the floor lies on it whole).
  constexpr double kEdgeGrowUu = 1.0;
  for (const auto& [key, sides] : edges) {
    if (sides.size() == 2 && sides[0] * sides[1] < 0) continue;  // inside the floor
    std::int64_t i0, j0, i1, j1;
    column_of(std::min(key[0], key[2]) - kEdgeGrowUu, std::min(key[1], key[3]) - kEdgeGrowUu, &i0,
              &j0);
    column_of(std::max(key[0], key[2]) + kEdgeGrowUu, std::max(key[1], key[3]) + kEdgeGrowUu, &i1,
              &j1);
    for (std::int64_t j = j0; j <= j1; ++j)
      for (std::int64_t i = i0; i <= i1; ++i) columns[i + nx * j] = 0;
  }
  // 3: the column's cells from k_lo to k_hi list floor triangles or nothing: the Chebyshev
  // distance of each cell to the nearest cell listing another triangle is >= 1. The column
  // keeps the least over those cells (its free distance, see FloorHeight), 0 if it is not
  // answered.
  std::vector<std::uint8_t> others(grid_clear_cells_.size(), 255);
  for (std::size_t cell = 0; cell < others.size(); ++cell)
    for (std::uint32_t e = grid_cells_[cell]; e < grid_cells_[cell + 1]; ++e)
      if (!is_floor(leaf_vertices_[grid_candidates_[e]].p)) {
        others[cell] = 0;
        break;
      }
  ChebyshevChamfer(others.data(), nx, ny, nz);
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) {
      std::uint8_t& column = columns[i + nx * j];
      if (column == 0) continue;  // not covered by the floor
      column = 255;
      for (std::int64_t k = k_lo; k <= k_hi; ++k)
        column = std::min(column, others[i + nx * (j + ny * k)]);
    }
  floor_columns_ = std::move(columns);
  floor_top_z_ = grid_origin_[2] + kGridCellUu * static_cast<double>(k_hi + 1);
}

std::int64_t Arena::floor_columns() const {
  return static_cast<std::int64_t>(floor_columns_.size()) -
         std::count(floor_columns_.begin(), floor_columns_.end(), std::uint8_t{0});
}

void CheckTriangles(const std::vector<Triangle>& triangles, const std::string& source) {
  for (std::size_t i = 0; i < triangles.size(); ++i) {
    const Triangle& t = triangles[i];
    const int row = static_cast<int>(i + 1);
    for (int j = 0; j < 3; ++j)
      if (!t.p[j].allFinite())
        throw InputError(source, row, 3 * j + 1,
                         "vertex " + std::to_string(j + 1) + " is not finite");
    const Vector3d a = t.p[0].cast<double>(), b = t.p[1].cast<double>(), c = t.p[2].cast<double>();
    if ((b - a).cross(c - a).squaredNorm() == 0.0)
      throw InputError(source, row, 0, "triangle has zero area");
  }
}

Arena::Arena(std::vector<Triangle> triangles) : triangles_(std::move(triangles)) {
  CheckTriangles(triangles_, "triangle list");
  box_.lo = Eigen::Vector3d::Constant(std::numeric_limits<double>::infinity());
  box_.hi = -box_.lo;
  for (const Triangle& t : triangles_)
    for (int j = 0; j < 3; ++j) {
      box_.lo = box_.lo.cwiseMin(t.p[j].cast<double>());
      box_.hi = box_.hi.cwiseMax(t.p[j].cast<double>());
    }
  Build();
  BuildEdgeNeighbours();
  BuildGrid();
  BuildFloor();
}

// --- queries -----------------------------------------------------------------------------

namespace {

// Overlap of the cube around a sphere (centre, half-size r) with the four child boxes of a
// node, as a 4-bit mask. The cube is looser than the sphere, but it costs six compares for
// four boxes; the triangles' planes cull what it lets through.
class CubeTest {
 public:
  CubeTest(float cx, float cy, float cz, float r) {
    const float lo[3] = {cx - r, cy - r, cz - r}, hi[3] = {cx + r, cy + r, cz + r};
    for (int axis = 0; axis < 3; ++axis) {
#if defined(__SSE2__)
      lo_[axis] = _mm_set1_ps(lo[axis]);
      hi_[axis] = _mm_set1_ps(hi[axis]);
#else
      lo_[axis] = lo[axis];
      hi_[axis] = hi[axis];
#endif
    }
  }

  // `lo` and `hi` are a node's [axis][child] box corners, 16-byte aligned.
  int Overlaps(const float (&lo)[3][4], const float (&hi)[3][4]) const {
#if defined(__SSE2__)
    __m128 overlap = _mm_and_ps(_mm_cmple_ps(_mm_load_ps(lo[0]), hi_[0]),
                                _mm_cmple_ps(lo_[0], _mm_load_ps(hi[0])));
    overlap = _mm_and_ps(overlap, _mm_cmple_ps(_mm_load_ps(lo[1]), hi_[1]));
    overlap = _mm_and_ps(overlap, _mm_cmple_ps(lo_[1], _mm_load_ps(hi[1])));
    overlap = _mm_and_ps(overlap, _mm_cmple_ps(_mm_load_ps(lo[2]), hi_[2]));
    overlap = _mm_and_ps(overlap, _mm_cmple_ps(lo_[2], _mm_load_ps(hi[2])));
    return _mm_movemask_ps(overlap);
#else
    int mask = 0;
    for (int k = 0; k < 4; ++k)
      mask |= ((lo[0][k] <= hi_[0]) & (lo_[0] <= hi[0][k]) & (lo[1][k] <= hi_[1]) &
               (lo_[1] <= hi[1][k]) & (lo[2][k] <= hi_[2]) & (lo_[2] <= hi[2][k]))
              << k;
    return mask;
#endif
  }

 private:
#if defined(__SSE2__)
  __m128 lo_[3], hi_[3];
#else
  float lo_[3], hi_[3];
#endif
};

}  // namespace

Contact Arena::CollideBvh(const Vector3d& center, double radius) const {
  const double extent = QueryExtent(center, radius);
  if (nodes_.empty() || !ValidQuery(extent, radius)) return Contact{};
  ContactSum sum(center, radius);
  // Float culling with the sphere grown by a margin well above the rounding of the float
  // centre, radius and box/plane arithmetic (a few ulps of the largest magnitude involved).
  const double margin = 1e-3 + 1e-5 * extent;
  const float cx = static_cast<float>(center.x());
  const float cy = static_cast<float>(center.y());
  const float cz = static_cast<float>(center.z());
  const float r = static_cast<float>(radius + margin);
  const CubeTest cube(cx, cy, cz, r);

  const Node* nodes = nodes_.data();
  std::uint32_t stack[kStackSize];
  int top = 0;
  std::uint32_t n = 0;
  for (;;) {
    const Node& node = nodes[n];
    for (int mask = cube.Overlaps(node.lo, node.hi); mask != 0; mask &= mask - 1) {
      const int k = LowestSetBit(mask);
      if (node.count[k] == 0) {
        stack[top++] = node.index[k];
        continue;
      }
      for (std::uint32_t t = node.index[k], e = t + node.count[k]; t < e; ++t) {
        AddLeafTriangle(planes_[t], leaf_vertices_[t], cx, cy, cz, r, &sum);
      }
    }
    if (top == 0) break;
    n = stack[--top];
  }
  return sum.Finish();
}

Contact Arena::CollideCell(const Vector3d& center, double radius, std::int64_t cell) const {
  if (cell < 0) return CollideBvh(center, radius);
#if defined(__SSE2__)
  const std::uint32_t* begin = grid_candidates_.data() + grid_cells_[cell];
  const std::uint32_t* end = grid_candidates_.data() + grid_cells_[cell + 1];
  if (end - begin == 1)
    return CollideOneListed(planes_[*begin], exact_leaves_[*begin], leaf_vertices_[*begin],
                            grid_margin_, center, radius);
  if (end - begin < 4)
    return CollideFewListed(planes_, exact_leaves_, leaf_vertices_, grid_margin_, center, radius,
                            begin, end);
  // CollideList's body, inlined here: one call less.
  return CollideListedPairs(planes_, exact_leaves_, leaf_vertices_, leaf_boxes_, grid_margin_,
                            center, radius, begin, end);
#else
  return CollideList(center, radius, grid_candidates_.data() + grid_cells_[cell],
                     grid_candidates_.data() + grid_cells_[cell + 1]);
#endif
}

Contact Arena::CollideFree(const Vector3d& center, double radius, double* free_uu) const {
  const std::int64_t cell = GridCell(center, radius);
  *free_uu = -1.0;
  if (cell < 0) return CollideBvh(center, radius);
  float least_abs = std::numeric_limits<float>::infinity();
  ContactSum sum(center, radius);
  AddListed<false>(planes_, leaf_vertices_, leaf_boxes_, grid_margin_, center, radius,
                   grid_candidates_.data() + grid_cells_[cell],
                   grid_candidates_.data() + grid_cells_[cell + 1], &sum, &least_abs);
  // A listed triangle is at least its plane's distance away, which the float |s| gives to
  // within the grid's cull margin; an unlisted one farther than kGridRadius from the cell.
  *free_uu = std::min(kGridRadius, static_cast<double>(least_abs) - grid_margin_);
  return sum.Finish();
}

bool Arena::GatherNear(const Vector3d& center, double reach,
                       std::vector<std::uint32_t>* entries, double* nearest_uu) const {
  return GatherNearWith(
      center, reach,
      [entries](std::uint32_t t) {
        entries->push_back(t);
        return true;
      },
      nearest_uu);
}

int Arena::GatherNear(const Vector3d& center, double reach, std::uint32_t* entries,
                      int capacity) const {
  int n = 0;
  const bool listed = GatherNearWith(
      center, reach,
      [&](std::uint32_t t) {
        if (n == capacity) return false;
        entries[n++] = t;
        return true;
      },
      nullptr);
  return listed ? n : -1;
}

template <typename Push>
bool Arena::GatherNearWith(const Vector3d& center, double reach, const Push& push,
                           double* nearest_uu) const {
  const std::int64_t cell = GridCell(center, reach);
  if (cell < 0) return false;
  double nearest2 = reach * reach;
  const double limit = reach + kNearSlackUu;
  const float cx = static_cast<float>(center.x());
  const float cy = static_cast<float>(center.y());
  const float cz = static_cast<float>(center.z());
  const float r = static_cast<float>(limit) + grid_margin_;
  for (std::uint32_t i = grid_cells_[cell]; i < grid_cells_[cell + 1]; ++i) {
    const std::uint32_t t = grid_candidates_[i];
    const Plane& plane = planes_[t];
    const float s =
        plane.normal[0] * cx + plane.normal[1] * cy + plane.normal[2] * cz - plane.offset;
    if (std::abs(s) > r) continue;
    const auto& v = leaf_vertices_[t].p;
    const double d2 = ClosestOffset(center, Vector3d(v[0][0], v[0][1], v[0][2]),
                                    Vector3d(v[1][0], v[1][1], v[1][2]),
                                    Vector3d(v[2][0], v[2][1], v[2][2]), leaf_vertices_[t].n)
                          .squaredNorm();
    if (d2 <= limit * limit) {
      if (!push(t)) return false;
      nearest2 = std::min(nearest2, d2);
    }
  }
  if (nearest_uu != nullptr) *nearest_uu = std::sqrt(nearest2);
  return true;
}

double Arena::PenetrationEntries(const Vector3d& center, double radius,
                                 const std::uint32_t* begin, const std::uint32_t* end) const {
  DeepestPenetration sum(center, radius);
  AddListed<false>(planes_, leaf_vertices_, leaf_boxes_, grid_margin_, center, radius, begin, end,
                   &sum);
  return sum.Finish();
}

double Arena::OctantClearance(int code, double fx, double fy, double fz) const {
  // The octant: the parity of the half cell's index (2 f is exact; that index over 2 is the
  // cell's).
  const int octant = static_cast<int>((static_cast<std::int64_t>(2.0 * fx) & 1) |
                                      (static_cast<std::int64_t>(2.0 * fy) & 1) << 1 |
                                      (static_cast<std::int64_t>(2.0 * fz) & 1) << 2);
  return (octant_masks_[code - kOctantCodeBase] >> octant) & 1 ? kGridRadius : -1.0;
}

int Arena::GridListSize(const Vector3d& center, double radius) const {
  const std::int64_t cell = GridCell(center, radius);
  return cell < 0 ? -1 : static_cast<int>(grid_cells_[cell + 1] - grid_cells_[cell]);
}

Contact Arena::CollideList(const Vector3d& center, double radius, const std::uint32_t* begin,
                           const std::uint32_t* end) const {
#if defined(__SSE2__)
  return CollideListedPairs(planes_, exact_leaves_, leaf_vertices_, leaf_boxes_, grid_margin_,
                            center, radius, begin, end);
#else
  ContactSum sum(center, radius);
  AddListed<true>(planes_, leaf_vertices_, leaf_boxes_, grid_margin_, center, radius, begin, end,
                  &sum);
  return sum.Finish();
#endif
}

namespace {

// Keeps the deepest Arena::kMaxContacts distinct contacts of one query, deepest first (see
// Arena::CollideEach).
class ContactKeeper {
 public:
  ContactKeeper(const Vector3d& center, double radius, TriangleContact* out)
      : center_(center), radius_(radius), out_(out) {}

  void Add(const Vector3d& a, const Vector3d& b, const Vector3d& c,
           const double* unit_normal = nullptr) {
    Vector3d diff;
    double d = 0.0;
    if (!Touches(center_, radius_, a, b, c, b - a, c - a, unit_normal, &diff, &d)) return;
    const Vector3d q = center_ - diff;
    TriangleContact contact;
    contact.point = q;
    contact.normal =
        d > kDegenerateDistance ? Vector3d(diff / d) : Vector3d((b - a).cross(c - a).normalized());
    contact.penetration = radius_ - d;
    contact.entry = entry_;
    // The same point as a kept contact: keep the deeper of the two (the first on a tie).
    for (int i = 0; i < count_; ++i) {
      if ((out_[i].point - q).squaredNorm() > Arena::kMergeUu * Arena::kMergeUu) continue;
      if (contact.penetration <= out_[i].penetration) return;
      for (int j = i; j + 1 < count_; ++j) out_[j] = out_[j + 1];
      --count_;
      break;
    }
    int at = count_;
    while (at > 0 && out_[at - 1].penetration < contact.penetration) --at;
    if (at >= Arena::kMaxContacts) return;
    const int last = std::min(count_, Arena::kMaxContacts - 1);
    for (int j = last; j > at; --j) out_[j] = out_[j - 1];
    out_[at] = contact;
    count_ = std::min(count_ + 1, Arena::kMaxContacts);
  }
  int count() const { return count_; }
  void SetEntry(int entry) { entry_ = entry; }

 private:
  Vector3d center_;
  double radius_;
  TriangleContact* out_;
  int entry_ = -1;
  int count_ = 0;
};

}  // namespace

int Arena::CollideEach(const Vector3d& center, double radius, TriangleContact* out) const {
  if (!ValidQuery(QueryExtent(center, radius), radius)) return 0;
  ContactKeeper keeper(center, radius, out);
  const std::int64_t cell = GridCell(center, radius);
  if (cell < 0) {
    for (std::size_t e = 0; e < leaf_vertices_.size(); ++e) {
      const auto& v = leaf_vertices_[e].p;
      keeper.SetEntry(static_cast<int>(e));
      keeper.Add(Vector3d(v[0][0], v[0][1], v[0][2]), Vector3d(v[1][0], v[1][1], v[1][2]),
                 Vector3d(v[2][0], v[2][1], v[2][2]));
    }
    return keeper.count();
  }
  const float c[4] = {static_cast<float>(center.x()), static_cast<float>(center.y()),
                      static_cast<float>(center.z()), 0.0f};
  const float r = static_cast<float>(radius) + grid_margin_;
  ForNearPlanes<true>(planes_.data(), leaf_boxes_.data(), c, r,
                      grid_candidates_.data() + grid_cells_[cell],
                      grid_candidates_.data() + grid_cells_[cell + 1], nullptr,
                      [&](std::uint32_t t) {
                        const auto& v = leaf_vertices_[t].p;
                        keeper.SetEntry(static_cast<int>(t));
                        keeper.Add(Vector3d(v[0][0], v[0][1], v[0][2]),
                                   Vector3d(v[1][0], v[1][1], v[1][2]),
                                   Vector3d(v[2][0], v[2][1], v[2][2]), leaf_vertices_[t].n);
                      });
  return keeper.count();
}

namespace {

Vector3d LeafVertex(const double (&p)[3]) { return Vector3d(p[0], p[1], p[2]); }

double SegmentDistance(const Vector3d& p, const Vector3d& a, const Vector3d& b) {
  const Vector3d ab = b - a;
  const double t = std::clamp((p - a).dot(ab) / ab.squaredNorm(), 0.0, 1.0);
  return (p - (a + t * ab)).norm();
}

// Unit vector in the plane of a triangle, perpendicular to its edge along `edge` (unit) from
// vertex `on_edge`, pointing toward its third vertex `opposite`.
Vector3d IntoTriangle(const Vector3d& edge, const Vector3d& on_edge, const Vector3d& opposite) {
  Vector3d c = opposite - on_edge;
  c -= c.dot(edge) * edge;
  return c.normalized();
}

}  // namespace

void Arena::BuildEdgeNeighbours() {
  const int n = static_cast<int>(leaf_vertices_.size());
  edge_neighbours_.assign(n, {-1, -1, -1});
  std::map<std::array<double, 6>, std::pair<int, int>> open;  // sorted vertex pair -> entry, edge
  for (int t = 0; t < n; ++t)
    for (int k = 0; k < 3; ++k) {
      const auto& a = leaf_vertices_[t].p[k];
      const auto& b = leaf_vertices_[t].p[(k + 1) % 3];
      std::array<double, 6> key{a[0], a[1], a[2], b[0], b[1], b[2]};
      if (std::lexicographical_compare(b, b + 3, a, a + 3))
        key = {b[0], b[1], b[2], a[0], a[1], a[2]};
      auto [it, inserted] = open.emplace(key, std::make_pair(t, k));
      if (inserted) continue;
      edge_neighbours_[t][k] = it->second.first;
      edge_neighbours_[it->second.first][it->second.second] = t;
    }
}

Vector3d Arena::InternalEdgeNormal(const TriangleContact& contact, const Vector3d& center) const {
  const int t = contact.entry;
  if (t < 0 || t >= static_cast<int>(edge_neighbours_.size())) return contact.normal;
  const auto& p = leaf_vertices_[t].p;
  const Vector3d v[3] = {LeafVertex(p[0]), LeafVertex(p[1]), LeafVertex(p[2])};
  int best = -1;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 3; ++k) {
    if (edge_neighbours_[t][k] < 0) continue;
    const double d = SegmentDistance(contact.point, v[k], v[(k + 1) % 3]);
    if (d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  if (best < 0 || !(best_distance < kEdgeDistanceUu)) return contact.normal;
  const Vector3d wound_a = (v[1] - v[0]).cross(v[2] - v[0]).normalized();
  const double side = wound_a.dot(center - v[0]) >= 0.0 ? 1.0 : -1.0;
  const Vector3d n_a = side * wound_a;
  const int u = edge_neighbours_[t][best];
  const auto& q = leaf_vertices_[u].p;
  const Vector3d w[3] = {LeafVertex(q[0]), LeafVertex(q[1]), LeafVertex(q[2])};
  const Vector3d n_b = side * Vector3d((w[1] - w[0]).cross(w[2] - w[0]).normalized());
  const Vector3d& e0 = v[best];
  const Vector3d e1 = v[(best + 1) % 3];
  const Vector3d edge = (e1 - e0).normalized();
  const Vector3d into_a = IntoTriangle(edge, e0, v[(best + 2) % 3]);
  Vector3d opposite_b = w[0];
  for (int k = 0; k < 3; ++k)
    if (w[k] != e0 && w[k] != e1) opposite_b = w[k];
  const Vector3d into_b = IntoTriangle(edge, e0, opposite_b);
  // Bullet's m_planarEpsilon on |edgeCrossA x edgeCrossB|^2: a flat edge is concave.
  constexpr double kPlanarEpsilon = 1e-4;
  const bool flat = into_a.cross(into_b).squaredNorm() < kPlanarEpsilon;
  if (flat || n_a.dot(into_b) >= 0.0) return n_a;
  // Convex: the contact normal turned about the edge no farther than the neighbour's normal.
  const Vector3d out = -into_a;
  const Vector3d& n = contact.normal;
  const double a = n.dot(n_a), b = n.dot(out), c = n.dot(edge);
  const double theta = std::atan2(b, a);
  const double phi = std::atan2(n_b.dot(out), n_b.dot(n_a));
  if (!(theta > phi)) return n;
  const double rho = std::hypot(a, b);
  return Vector3d(rho * (std::cos(phi) * n_a + std::sin(phi) * out) + c * edge).normalized();
}

Triangle Arena::LeafTriangle(int entry) const {
  Triangle t;
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 3; ++i) t.p[k](i) = static_cast<float>(leaf_vertices_[entry].p[k][i]);
  return t;
}

Contact Arena::CollideNaive(const Vector3d& center, double radius) const {
  if (!ValidQuery(QueryExtent(center, radius), radius)) return Contact{};
  ContactSum sum(center, radius);
  for (const Triangle& t : triangles_)
    sum.Add(t.p[0].cast<double>(), t.p[1].cast<double>(), t.p[2].cast<double>());
  return sum.Finish();
}

std::array<Arena::RayFace, 6> Arena::FirstFaces(const Vector3d& point) const {
  std::array<RayFace, 6> faces;
  faces.fill(RayFace::kNone);
  if (!point.allFinite()) return faces;
  // Nearest hit along -x, +x, -y, +y, -z, +z: distance and whether it is a front face.
  std::array<double, 6> nearest;
  nearest.fill(std::numeric_limits<double>::infinity());
  std::array<bool, 6> front{};
  std::uint32_t stack[kStackSize];
  for (int k = 0; k < 3 && !nodes_.empty(); ++k) {
    // The line through `point` along axis k, against the BVH.
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    const double pi = point[i], pj = point[j];
    int top = 0;
    std::uint32_t n = 0;
    for (;;) {
      const Node& node = nodes_[n];
      for (int lane = 0; lane < 4; ++lane) {
        if (!(node.lo[i][lane] <= pi && pi <= node.hi[i][lane] && node.lo[j][lane] <= pj &&
              pj <= node.hi[j][lane]))
          continue;
        if (node.count[lane] == 0) {
          stack[top++] = node.index[lane];
          continue;
        }
        for (std::uint32_t t = node.index[lane], e = t + node.count[lane]; t < e; ++t) {
          const auto& v = leaf_vertices_[t].p;
          // Barycentric weights of the line's foot in the (i, j) projection.
          auto edge = [&](const double* u, const double* w) {
            return (w[i] - u[i]) * (pj - u[j]) - (w[j] - u[j]) * (pi - u[i]);
          };
          const double wc = edge(v[0], v[1]), wa = edge(v[1], v[2]), wb = edge(v[2], v[0]);
          const double area = wa + wb + wc;  // twice the projected area, signed
          if (area == 0.0) continue;         // triangle seen edge-on
          if ((wa < 0.0 || wb < 0.0 || wc < 0.0) && (wa > 0.0 || wb > 0.0 || wc > 0.0)) continue;
          const double along = (wa * v[0][k] + wb * v[1][k] + wc * v[2][k]) / area - point[k];
          if (along == 0.0) continue;
          const int ray = 2 * k + (along > 0.0 ? 1 : 0);
          if (std::abs(along) < nearest[ray]) {
            nearest[ray] = std::abs(along);
            // The k component of the face normal has the sign of the projected area.
            front[ray] = (along > 0.0) == (area < 0.0);
          }
        }
      }
      if (top == 0) break;
      n = stack[--top];
    }
  }
  for (int ray = 0; ray < 6; ++ray)
    if (std::isfinite(nearest[ray])) faces[ray] = front[ray] ? RayFace::kFront : RayFace::kBack;
  return faces;
}

std::array<Arena::RayFace, 2> Arena::FirstFacesAlong(const Vector3d& point,
                                                     const Vector3d& dir) const {
  std::array<RayFace, 2> faces = {RayFace::kNone, RayFace::kNone};
  if (!point.allFinite() || !dir.allFinite() || dir.isZero(0.0)) return faces;
  // Nearest hit along -dir and +dir, in multiples of |dir|, and whether it is a front face.
  double nearest[2] = {std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::infinity()};
  bool front[2] = {false, false};
  // The boxes are floats: a line grazing one is let in (the triangle test is exact).
  constexpr double kPadUu = 1e-3;
  std::uint32_t stack[kStackSize];
  int top = 0;
  std::uint32_t n = 0;
  for (;;) {
    if (nodes_.empty()) break;
    const Node& node = nodes_[n];
    for (int lane = 0; lane < 4; ++lane) {
      if (!(node.lo[0][lane] <= node.hi[0][lane])) continue;  // an unused child
      // Slabs: the line's parameter range inside the (padded) box, empty if it misses it.
      double t_lo = -std::numeric_limits<double>::infinity();
      double t_hi = std::numeric_limits<double>::infinity();
      for (int axis = 0; axis < 3 && t_lo <= t_hi; ++axis) {
        const double lo = node.lo[axis][lane] - kPadUu, hi = node.hi[axis][lane] + kPadUu;
        if (dir[axis] == 0.0) {
          if (!(lo <= point[axis] && point[axis] <= hi)) {  // outside the slab: no part
            t_lo = 1.0;
            t_hi = 0.0;
          }
          continue;
        }
        double a = (lo - point[axis]) / dir[axis], b = (hi - point[axis]) / dir[axis];
        if (a > b) std::swap(a, b);
        t_lo = std::max(t_lo, a);
        t_hi = std::min(t_hi, b);
      }
      if (!(t_lo <= t_hi)) continue;
      if (node.count[lane] == 0) {
        stack[top++] = node.index[lane];
        continue;
      }
      for (std::uint32_t t = node.index[lane], e = t + node.count[lane]; t < e; ++t) {
        const auto& v = leaf_vertices_[t].p;
        const Vector3d v0(v[0][0], v[0][1], v[0][2]);
        const Vector3d e1 = Vector3d(v[1][0], v[1][1], v[1][2]) - v0;
        const Vector3d e2 = Vector3d(v[2][0], v[2][1], v[2][2]) - v0;
        // Where the line meets the triangle's plane, by barycentric weights (Moller-Trumbore).
        const Vector3d h = dir.cross(e2);
        const double det = e1.dot(h);
        if (det == 0.0) continue;  // the line lies in the plane: the triangle seen edge-on
        const Vector3d s = point - v0;
        const double u = s.dot(h) / det;
        if (u < 0.0 || u > 1.0) continue;
        const Vector3d q = s.cross(e1);
        const double w = dir.dot(q) / det;
        if (w < 0.0 || u + w > 1.0) continue;
        const double along = e2.dot(q) / det;
        if (along == 0.0) continue;  // through the point
        const int ray = along > 0.0 ? 1 : 0;
        if (std::abs(along) < nearest[ray]) {
          nearest[ray] = std::abs(along);
          // A front face turns its normal (e1 x e2, the winding's) against the ray.
          front[ray] = (e1.cross(e2).dot(dir) < 0.0) == (along > 0.0);
        }
      }
    }
    if (top == 0) break;
    n = stack[--top];
  }
  for (int ray = 0; ray < 2; ++ray)
    if (std::isfinite(nearest[ray])) faces[ray] = front[ray] ? RayFace::kFront : RayFace::kBack;
  return faces;
}

bool Arena::Contains(const Vector3d& point) const {
  const std::array<RayFace, 6> faces = FirstFaces(point);
  return std::all_of(faces.begin(), faces.end(),
                     [](RayFace f) { return f == RayFace::kFront; });
}

}  // namespace rlfit
