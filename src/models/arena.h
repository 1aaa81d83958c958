// The arena's collision mesh (8028 triangles, meshes/pitch.dat) and sphere-vs-mesh contact
// queries: a uniform grid of candidate triangles for ball-sized spheres, a bounding volume
// hierarchy for the rest, and a naive all-triangles loop as reference.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <Eigen/Core>

namespace rlfit {

struct Triangle {
  Eigen::Vector3f p[3];  // vertices, uu
};

// Result of a sphere-vs-mesh query.
//
// A triangle touches the sphere (centre c, radius r) when its closest point q to c lies within
// r: d = |c - q| <= r. It contributes penetration_i = r - d and direction n_i = (c - q) / d (its
// face normal when d is ~0). Over all touching triangles: penetration = max penetration_i and
// normal = normalize(sum_i penetration_i n_i), which turns smoothly as a ball rolls across the
// facets of a curved wall. If that sum vanishes (every contact only just touching, or contacts
// cancelling) the unweighted sum of n_i is used, then the direction of the deepest contact.
struct Contact {
  bool hit = false;
  // Unit, pointing from the mesh to the sphere centre.
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
  // Radius - distance to the mesh, uu: >= 0 on a hit, 0 when only touching.
  double penetration = 0.0;
  int triangles = 0;  // number of triangles touched
};

// One touching triangle of a sphere-vs-mesh query (Arena::CollideEach): the triangle's own
// closest point q to the centre c, its direction n = (c - q) / |c - q| (the face normal when
// |c - q| is ~0) and penetration = radius - |c - q| (>= 0).
struct TriangleContact {
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  double penetration = 0.0;
  int entry = -1;  // the triangle (leaf entry, Arena::InternalEdgeNormal)
};

// Throws InputError(source, row = 1-based triangle index, column) on a non-finite vertex or a
// triangle of zero area (the Arena constructor's check; LoadArena's, naming the file).
void CheckTriangles(const std::vector<Triangle>& triangles, const std::string& source);

// The mesh, its BVH and its grid. Build once (both for the pitch: ~110 ms CPU on a loaded 2-core
// machine, the BVH alone ~18 ms), then query from any number of threads: queries are const and
// allocate nothing.
//
// The grid: the arena never moves, so a sphere of radius <= kGridRadius centred in a cell of a
// uniform grid (cells of kGridCellUu over the mesh's box grown by kGridRadius) can only touch
// the triangles listed for that cell: those within kGridRadius of the cell (conservative tests
// in double with a small slack, see BuildGrid). Most of the arena is farther than that from
// every surface, so most queries read one empty list and return; the others test the listed
// triangles, in the order the BVH visits them, with the same float plane cull and the same
// double contact: Collide returns bit for bit what CollideBvh returns. Spheres outside the grid
// or larger than kGridRadius go to the BVH. A mesh whose grid would exceed kGridMaxCells cells
// (e.g. a floor 10^5 uu wide) or with fewer than kGridMinTriangles triangles has no grid.
// Pitch: 0.91 M cells, 14.0 MB, 4.0 of them Collide's lookup (docs/models/arena.md).
//
// The BVH: a binary tree split by surface area (SAH), leaves of up to 4 triangles, collapsed
// into 4-wide nodes of 128 bytes (float boxes of the four children, structure of arrays) laid
// out depth first. A query walks it with a small stack, testing the sphere's bounding cube
// against four child boxes at once (SSE2, scalar elsewhere); in a leaf each triangle's plane
// distance is checked in float before the exact test.
//
// Precision: the exact per-triangle test (closest point, Ericson "Real-Time Collision Detection"
// 5.1.5, and the contact) runs in double on the float vertices, identically in Collide and
// CollideNaive, so both find the same triangles and the same penetration; their normals differ
// only by summation order (~1e-15). Collide only culls in float (node boxes, triangle planes),
// with the sphere grown by a margin far above float rounding, so culling never drops a contact.
class Arena {
 public:
  // Reading a mesh file is the I/O layer's: src/io/arena_file.h (LoadArena).
  // Throws InputError (row = 1-based triangle index) on a non-finite vertex or a triangle of
  // zero area.
  explicit Arena(std::vector<Triangle> triangles);

  // Largest sphere radius the grid answers, uu: the ball's contact radius at its fitted bound
  // (100) plus ClosestFeatureNormal's pad (1), with room (0.5: it once held a contact margin
  // of 0.3 uu too, which the ball no longer has).
  static constexpr double kGridRadius = 101.5;
  // Edge of a grid cell, uu: smaller cells list fewer triangles but take more memory.
  static constexpr double kGridCellUu = 64.0;
  // Most cells a grid may have (4 bytes each); beyond it the mesh has no grid.
  static constexpr std::int64_t kGridMaxCells = 8 << 20;
  // Fewest triangles for a grid: a smaller mesh (the tests' floors) is answered as fast by its
  // BVH, and its grid would cost more to build than it saves.
  static constexpr int kGridMinTriangles = 64;

  // Contact of a sphere with the mesh, through the grid, else the BVH. A centre or radius that
  // is not finite (or beyond 1e30 uu), or a negative radius, gives no hit. Inline up to the
  // grid's empty cells (most of the arena: nothing within kGridRadius), the rest out of line.
  // The inline part reads one entry of grid_lookup_, found from the centre clamped into the
  // grid grown by one cell: no range checks (a clamped centre lands in a border cell, which
  // sends it to the BVH).
  Contact Collide(const Eigen::Vector3d& center, double radius) const {
    if (radius <= kGridRadius && radius >= 0.0) {  // false for NaN
      const std::int32_t cell = grid_lookup_[LookupIndex(center)];
      if (cell == kLookupEmpty) return Contact{};
      if (cell >= 0) return CollideCell(center, radius, cell);
    }
    return CollideBvh(center, radius);
  }
  // Collide, and where it reports no hit and the grid answers, *free_uu a lower bound on the
  // distance from `center` to the mesh (uu; the least distance of the listed triangles' planes
  // less the grid's float cull margin, at most kGridRadius); -1 where the grid does not answer.
  // For a ball's prediction in a listed cell (StepBall with a BallClearance in
  // src/models/ball.h: its coming free ticks without another lookup).
  Contact CollideFree(const Eigen::Vector3d& center, double radius, double* free_uu) const;
  // Same answer, bit for bit, through the BVH alone (reference for tests and benchmarks).
  Contact CollideBvh(const Eigen::Vector3d& center, double radius) const;
  // True when the grid shows that Collide(center, radius) has no hit: the centre's cell lists
  // no triangle (nothing within kGridRadius of any point of the cell). False when it does, and
  // when the grid does not answer (no grid, centre outside it, radius above kGridRadius, NaN):
  // then ask Collide. Inline, for the free flight of a ball (most of its ticks).
  bool GridSaysFree(const Eigen::Vector3d& center, double radius) const {
    const std::int64_t cell = GridCell(center, radius);
    return cell >= 0 && grid_cells_[cell] == grid_cells_[cell + 1];
  }
  // When the grid shows that Collide(center, radius) has no hit: a lower bound on the distance
  // from `center` to the mesh, uu (>= kGridRadius). Otherwise -1 (ask Collide).
  // The bound: every point of a cell the grid lists nothing for is farther than kGridRadius
  // from the mesh, and a cell whose nearest listed cell is D cells away (Chebyshev distance,
  // grid_clear_cells_) is at least (D - 1) cells from any listed one, so (the distance being
  // 1-Lipschitz) a point in it is at least kGridRadius + (D - 1) kGridCellUu from the mesh.
  // In a listed cell, a centre in one of the cell's eight octants (cubes of kGridCellUu / 2)
  // that the same tests as the listing's find farther than kGridRadius from every listed
  // triangle gets kGridRadius: about a fifth of a prediction's lookups in listed cells
  // (bench/README.md). A prediction may skip the lookups of the ticks in which the ball cannot
  // travel that far (BallClearance in src/models/ball.h).
  // It reads only the cell's byte of grid_clear_cells_ (the clearance of an empty cell or the
  // free octants of a listed one): 0.9 MB for the pitch against 3.6 MB of list offsets, so
  // fewer cache misses along a prediction.
  double GridFreeClearance(const Eigen::Vector3d& center, double radius) const {
    double f[3];  // the grid coordinates: the octant only in a listed cell
    const std::int64_t cell = GridCoordinates(center, radius, f);
    if (cell < 0) return -1.0;
    const int code = grid_clear_cells_[cell];
    if (code == 0) return -1.0;
    if (code <= kMaxClearCells) return kGridRadius + kGridCellUu * (code - 1);
    return OctantClearance(code, f[0], f[1], f[2]);  // out of line: keeps this one inlined
  }
  // The floor's fast path: where the centre lies over the flat floor (the plane z = 0) and no
  // other triangle is within kGridRadius (a column of grid cells flagged by BuildFloor), at a
  // height z with kFloorMinZUu < z < the top of the flagged layers (653 uu on the pitch), and
  // 0 <= radius <= kGridRadius: returns z, the distance to the floor. Then Collide(center,
  // radius) is the floor's contact, bit for bit: a hit exactly when z <= radius, penetration
  // radius - z, normal (0, 0, 1); a sphere touching several floor triangles (near a seam) has
  // the same normal from ClosestFeatureNormal (src/models/ball.h). `others_uu`, if given,
  // receives a lower bound on the distance from `center` to every triangle but the floor's (which
  // lie in the plane z = 0, at distance >= z): kGridRadius + (D - 1) kGridCellUu with D the
  // column's least Chebyshev distance (in cells) to a cell listing any other triangle (as
  // GridFreeClearance's bound). A ball's free ticks over the floor take the floor's distance
  // along z alone and this bound for the rest (BallFloorFreeTicks in src/models/ball.h). Returns
  // -1 otherwise (ask GridFreeClearance, Collide). It reads the centre and one byte of a
  // per-column table (25 KB for the pitch), none of the grid's arrays: most of a ball's ticks
  // near a surface are on or just above the floor (bench/README.md).
  double FloorHeight(const Eigen::Vector3d& center, double radius,
                     double* others_uu = nullptr) const {
    const double z = center.z();
    // False for a NaN centre or radius, and always without a grid or a floor (floor_top_z_).
    if (!(z > kFloorMinZUu && z < floor_top_z_ && radius <= kGridRadius && radius >= 0.0))
      return -1.0;
    const double fx = (center.x() - grid_origin_[0]) * grid_inv_cell_;
    const double fy = (center.y() - grid_origin_[1]) * grid_inv_cell_;
    if (!(fx >= 0.0 && fx < grid_dims_[0] && fy >= 0.0 && fy < grid_dims_[1])) return -1.0;
    const int clear_cells = floor_columns_[static_cast<std::int64_t>(fx) +
                                           static_cast<std::int64_t>(fy) * grid_stride_[0]];
    if (clear_cells == 0) return -1.0;
    if (others_uu != nullptr) *others_uu = kGridRadius + kGridCellUu * (clear_cells - 1);
    return z;
  }
  // Lowest height FloorHeight answers, uu: below it (or below the floor) the contact's
  // direction is the face normal's special case (Collide), left to the grid.
  static constexpr double kFloorMinZUu = 1.0;
  // FloorHeight answers up to the top of the grid layer holding this height, uu: above the
  // contacts (<= kGridRadius), so that a ball rising from the floor counts its free ticks from
  // the floor's exact distance (most of a prediction's lookups in empty cells were there).
  static constexpr double kFloorReachUu = 600.0;
  // Number of grid columns whose floor FloorHeight answers (0 without a grid or a floor).
  std::int64_t floor_columns() const;

  // The leaf entries (see CollideEntries) of the triangles within `reach` of `center`, in the
  // order Collide tests them, appended to `entries` (a few more may be listed: the test is
  // conservative). False, with nothing appended, when the grid does not answer (as GridCell:
  // no grid, centre outside it, reach above kGridRadius or not finite). Then, for any sphere
  // (c, r) with r >= 0 and |c - center| + r <= reach - kNearSlackUu, CollideEntries(c, r, those
  // entries) returns what Collide(c, r) returns, bit for bit: every triangle that can touch the
  // sphere is listed, in the same order, and the others add nothing. For many queries near one
  // point (the fit's perturbed rollouts of one window, fit/ball_fit.h). `nearest_uu`, if
  // given, receives the distance from `center` to the nearest listed triangle, or `reach` if
  // that is nearer (no triangle lies closer): a sphere (c, r) with |c - center| + r <
  // nearest_uu - kNearSlackUu touches nothing, and Collide(c, r) reports no hit.
  bool GatherNear(const Eigen::Vector3d& center, double reach,
                  std::vector<std::uint32_t>* entries, double* nearest_uu = nullptr) const;
  static constexpr double kNearSlackUu = 1e-6;  // far above the rounding of the distances
  // The same entries written to entries[0..n) of a caller's buffer of `capacity`, and n
  // returned; -1 when the grid does not answer or more than `capacity` are near (then the
  // buffer's content is unspecified): for a caller that keeps no scratch vector.
  int GatherNear(const Eigen::Vector3d& center, double reach, std::uint32_t* entries,
                 int capacity) const;
  // Contact of a sphere of radius <= kGridRadius with the triangles of the given leaf entries
  // (from GatherNear), tested as Collide tests a grid cell's list.
  Contact CollideEntries(const Eigen::Vector3d& center, double radius, const std::uint32_t* begin,
                         const std::uint32_t* end) const {
    return CollideList(center, radius, begin, end);
  }
  // CollideEntries(center, radius, begin, end).penetration, bit for bit, without the contact's
  // normal (no directions, no sums): ClosestFeatureNormal's probes read only the depth.
  double PenetrationEntries(const Eigen::Vector3d& center, double radius,
                            const std::uint32_t* begin, const std::uint32_t* end) const;
  // The contacts of a sphere with the mesh one triangle at a time, as a physics engine's contact
  // manifold holds them: every touching triangle (as Collide finds them) gives its own closest
  // point, direction and penetration; contacts whose points lie within kMergeUu of a deeper
  // one's (the triangles around a shared edge or vertex under the ball) are one contact; the
  // deepest kMaxContacts are written to out[0..n), deepest first, and n returned. Through the
  // grid's cell list; where the grid does not answer (no grid, centre outside it, radius above
  // kGridRadius) every triangle is tested. 0 for an invalid query (as Collide).
  // 4 is Bullet's manifold size. Every touching triangle (64; the ball replays reach 44) was
  // measured in the ball's seam normal and lost held out (decision 0069).
  static constexpr int kMaxContacts = 4;
  static constexpr double kMergeUu = 0.01;
  int CollideEach(const Eigen::Vector3d& center, double radius, TriangleContact* out) const;
  // Bullet's btAdjustInternalEdgeContacts for one contact of CollideEach (sphere centre
  // `center`): of the contact triangle's edges shared with another triangle of the mesh (same
  // vertices, EdgeNeighbours), the one nearest the contact point, if within kEdgeDistanceUu
  // (Bullet's m_edgeDistanceThreshold, 0.1 m = 5 uu): a flat or concave edge (seen from the
  // ball's side) gives the triangle's face normal, so a ball on a seam between coplanar facets
  // feels the face and not the edge; a convex edge clamps the contact normal, turned about the
  // edge, to at most the neighbour's face normal. Otherwise (no shared edge that near, or a
  // contact without a triangle) the contact's own normal. Face normals are turned toward the
  // centre (the sphere-triangle test is two-sided); the neighbour's is oriented with the
  // triangle's by the mesh's winding (pitch.dat's is consistent: 11,686 edges shared by two
  // triangles, 712 by one, none by more).
  static constexpr double kEdgeDistanceUu = 5.0;
  Eigen::Vector3d InternalEdgeNormal(const TriangleContact& contact,
                                     const Eigen::Vector3d& center) const;
  // The triangles sharing an edge with leaf entry `entry` (TriangleContact::entry): element k
  // for the edge from its vertex k to vertex k + 1 (mod 3), as LeafTriangle lists them, the leaf
  // entry with the same two vertices (bit for bit), or -1 on the mesh's boundary. An edge
  // listed by more than two triangles (none on the pitch) links each later one to the first.
  std::array<std::int32_t, 3> EdgeNeighbours(int entry) const { return edge_neighbours_[entry]; }
  // The vertices of leaf entry `entry` (0 <= entry < triangle_count()), uu.
  Triangle LeafTriangle(int entry) const;
  // Number of triangles the grid lists for this query, or -1 if the grid does not answer it
  // (no grid, centre outside it, radius above kGridRadius). For benchmarks and diagnostics.
  int GridListSize(const Eigen::Vector3d& center, double radius) const;
  // Same answer from testing every triangle (reference for tests and benchmarks).
  Contact CollideNaive(const Eigen::Vector3d& center, double radius) const;

  // What each of the six axis-aligned rays from `point` (along -x, +x, -y, +y, -z, +z) meets
  // first: no triangle (the mesh is open: 708 unshared edges), the front (normal-side, facing
  // into the arena) face of one or its back. A triangle through `point` or seen edge-on does
  // not count; a non-finite point meets nothing. Three line walks of the BVH: about 2 us.
  enum class RayFace : std::uint8_t { kNone, kFront, kBack };
  std::array<RayFace, 6> FirstFaces(const Eigen::Vector3d& point) const;
  // The same for the two rays from `point` along -dir and +dir (dir any non-zero direction):
  // one line walk of the BVH. {kNone, kNone} for a non-finite point or a zero direction.
  std::array<RayFace, 2> FirstFacesAlong(const Eigen::Vector3d& point,
                                         const Eigen::Vector3d& dir) const;

  // True if `point` is inside the arena: each of the six rays of FirstFaces first meets a front
  // face. The mesh is open, so this is a sampling aid for tests and benchmarks, not an exact
  // solid test.
  bool Contains(const Eigen::Vector3d& point) const;

  int triangle_count() const { return static_cast<int>(triangles_.size()); }
  // Grid size: cells (0 without a grid), listed candidates, and bytes of the grid's arrays and
  // the floor's columns.
  std::int64_t grid_cells() const {
    return grid_cells_.empty() ? 0 : static_cast<std::int64_t>(grid_cells_.size()) - 1;
  }
  std::int64_t grid_candidates() const { return static_cast<std::int64_t>(grid_candidates_.size()); }
  std::int64_t grid_bytes() const {
    return static_cast<std::int64_t>(
        (grid_cells_.size() + grid_candidates_.size() + grid_lookup_.size()) * 4 +
        grid_clear_cells_.size() + floor_columns_.size());
  }
  const std::vector<Triangle>& triangles() const { return triangles_; }
  // Axis-aligned box of the mesh's vertices, uu (lo <= hi per axis), computed once when the
  // arena is built: the rows whose centre lies outside it are `outside the arena`
  // (src/replay/regime.cc).
  struct VertexBox {
    Eigen::Vector3d lo;
    Eigen::Vector3d hi;
  };
  const VertexBox& Box() const { return box_; }

 private:
  // GatherNear's walk: push(t) for each near entry t (false stops the walk: GatherNear's
  // result is then false); the nearest distance as GatherNear's nearest_uu.
  template <typename Push>
  bool GatherNearWith(const Eigen::Vector3d& center, double reach, const Push& push,
                      double* nearest_uu) const;
  // A BVH node with four children, 128 bytes, stored depth first. Child k has the box
  // lo[axis][k]..hi[axis][k] (uu). count[k] == 0 marks an inner node at nodes_[index[k]];
  // otherwise child k is a leaf of count[k] triangles from entry index[k] of planes_ and
  // leaf_vertices_. Unused children have an empty box (lo = +inf, hi = -inf).
  struct alignas(64) Node {
    float lo[3][4];
    float hi[3][4];
    std::uint32_t index[4];
    std::uint32_t count[4];
  };
  // Plane of a triangle in leaf order, for a float rejection before the exact test.
  struct Plane {
    float normal[3];  // unit face normal
    float offset;     // normal . vertex, uu
  };
  // Vertices of a triangle in leaf order, in double for the exact test, and its unit face
  // normal (p1 - p0) x (p2 - p0) normalized, computed once as the exact test computes it (the
  // test's face case reads it instead of a square root and three divisions).
  // ab = p[1] - p[0] and ac = p[2] - p[0] as the exact test computes them (the same doubles),
  // stored so that the test reads them.
  struct LeafVertices {
    double p[3][3];
    double n[3];
    double ab[3];
    double ac[3];
  };

  // The grid's exact test's data of a leaf entry (the same doubles as LeafVertices) in pairs,
  // one per SSE2 register: a packed operation computes two of Ericson's six dot products, the
  // same operations on the same values as ClosestOffset's scalar ones. Per axis k:
  struct alignas(16) ExactLeaf {
    double ab_vertices[3][2];  // [a_k, b_k]: p - these is [ap_k, bp_k]
    double c[3][2];            // [c_k, c_k]: p - these is cp_k twice
    double ab[3][2];           // [ab_k, ab_k]: times [ap_k, bp_k] gives d1 and d3's terms
    double ac[3][2];           // [ac_k, ac_k]: d2 and d4's
    double edges[3][2];        // [ab_k, ac_k]: times cp_k twice gives d5 and d6's
    double n[4];               // the unit face normal (LeafVertices::n), 0
  };

  // The box of a triangle in leaf order, float (its vertices are floats: exact), lane 3 zero:
  // the listed triangles' exact test first asks whether the sphere reaches it (a prediction's
  // lookups in listed cells reject about half their exact tests so).
  struct alignas(16) LeafBox {
    float lo[4];
    float hi[4];
  };

  void Build();
  // edge_neighbours_ from leaf_vertices_ (after Build).
  void BuildEdgeNeighbours();
  void BuildGrid();
  // The floor's columns for FloorHeight, from the grid's lists (after BuildGrid).
  void BuildFloor();
  // Collide past the empty cells: the cell's list, or the BVH where the grid does not answer
  // (cell -1).
  Contact CollideCell(const Eigen::Vector3d& center, double radius, std::int64_t cell) const;
  // Adds the listed triangles of leaf entries [begin, end) touching the sphere, see Collide.
  Contact CollideList(const Eigen::Vector3d& center, double radius, const std::uint32_t* begin,
                      const std::uint32_t* end) const;
  // GridFreeClearance in a listed cell of grid_clear_cells_ code `code` (> kMaxClearCells) from
  // the centre's grid coordinates (f = offset from the grid's origin / kGridCellUu):
  // kGridRadius if the centre's octant is free, else -1.
  double OctantClearance(int code, double fx, double fy, double fz) const;
  // Index of the grid cell answering the query, or -1 (see GridListSize).
  std::int64_t GridCell(const Eigen::Vector3d& center, double radius) const {
    double f[3];
    return GridCoordinates(center, radius, f);
  }
  // GridCell, also giving the centre's grid coordinates f (offset from the grid's origin over
  // kGridCellUu; set only where the index is not -1).
  // Without a grid grid_dims_ are 0, so no centre lies inside.
  std::int64_t GridCoordinates(const Eigen::Vector3d& center, double radius, double f[3]) const {
    // False for a NaN centre or radius.
    if (!(radius <= kGridRadius && radius >= 0.0)) return -1;
    f[0] = (center.x() - grid_origin_[0]) * grid_inv_cell_;
    f[1] = (center.y() - grid_origin_[1]) * grid_inv_cell_;
    f[2] = (center.z() - grid_origin_[2]) * grid_inv_cell_;
    if (!(f[0] >= 0.0 && f[0] < grid_dims_[0] && f[1] >= 0.0 && f[1] < grid_dims_[1] &&
          f[2] >= 0.0 && f[2] < grid_dims_[2]))
      return -1;
    return static_cast<std::int64_t>(f[0]) + static_cast<std::int64_t>(f[1]) * grid_stride_[0] +
           static_cast<std::int64_t>(f[2]) * grid_stride_[1];
  }
  // Index into grid_lookup_ of the centre's cell in the grown grid, each coordinate truncated
  // toward zero, then clamped into [0, lookup_top_]: a centre below, above (or beyond any
  // integer) or NaN lands in the border, which sends the query to the BVH.
  std::int64_t LookupIndex(const Eigen::Vector3d& center) const {
#if defined(__SSE2__)
    // x and y as one pair, z alone, the same operations per coordinate.
    // The offsets from the origin, uu, truncated to int32 (NaN and beyond int32: INT_MIN) and
    // shifted right by 6: for an offset v >= 0, trunc(v) >> 6 is trunc(v / 64), the cell of
    // the scalar path; a negative v stays negative (below 0 after the clamp, as before), and
    // 3 instructions fewer than scaling by 1 / 64 (bench/README.md).
    static_assert(kGridCellUu == 64.0, "the lookup's shift is log2 of the cell's edge");
    const __m128d vxy = _mm_sub_pd(_mm_loadu_pd(center.data()), _mm_load_pd(lookup_origin_));
    const __m128d vz =
        _mm_sub_sd(_mm_load_sd(center.data() + 2), _mm_load_sd(lookup_origin_ + 2));
    // (ix, iy, iz, 0) as int32, then as int16 with saturation (twice), clamped, and weighted:
    // (ix wx + iy wy, iz wz) in pmaddwd's int32 lanes.
    const __m128i i32 = _mm_srai_epi32(
        _mm_unpacklo_epi64(_mm_cvttpd_epi32(vxy), _mm_cvttpd_epi32(vz)), 6);
    const __m128i i16 =
        _mm_min_epi16(_mm_max_epi16(_mm_packs_epi32(i32, i32), _mm_setzero_si128()),
                      _mm_load_si128(reinterpret_cast<const __m128i*>(lookup_top_)));
    const __m128i sums =
        _mm_madd_epi16(i16, _mm_load_si128(reinterpret_cast<const __m128i*>(lookup_weight_)));
    return static_cast<std::uint32_t>(
        _mm_cvtsi128_si32(_mm_add_epi32(sums, _mm_shuffle_epi32(sums, 1))));
#else
    std::int64_t index = 0;
    for (int axis = 0; axis < 3; ++axis) {
      const double f = (center[axis] - lookup_origin_[axis]) * (1.0 / kGridCellUu);
      // The SSE2 path's cell: f in [0, top + 1) truncated, below (or NaN) 0, above the top.
      const double clamped = f > 0.0 ? std::min(f, static_cast<double>(lookup_top_[axis])) : 0.0;
      index += static_cast<std::int64_t>(clamped) * lookup_weight_[axis];
    }
    return index;
#endif
  }

  std::vector<Triangle> triangles_;
  VertexBox box_;  // see Box()
  std::vector<Node> nodes_;
  std::vector<Plane> planes_;
  std::vector<LeafVertices> leaf_vertices_;
  std::vector<LeafBox> leaf_boxes_;  // per leaf entry, as leaf_vertices_
  std::vector<ExactLeaf> exact_leaves_;  // per leaf entry, as leaf_vertices_ (272 bytes each)
  // Per leaf entry, edge k (vertex k to k + 1): the leaf entry sharing it (same two vertices),
  // or -1 (see EdgeNeighbours).
  std::vector<std::array<std::int32_t, 3>> edge_neighbours_;

  // Grid: cell (i, j, k) (x fastest) lists the leaf entries grid_candidates_[grid_cells_[c]]
  // up to grid_cells_[c + 1], in BVH visit order. Empty without a grid.
  double grid_origin_[3] = {0.0, 0.0, 0.0};  // low corner, uu
  double grid_inv_cell_ = 0.0;               // 1 / cell edge, 1/uu
  double grid_dims_[3] = {0.0, 0.0, 0.0};    // cells along x, y, z (as doubles, for the bounds)
  std::int64_t grid_stride_[2] = {0, 0};     // cells per row (x), per layer (x * y)
  float grid_margin_ = 0.0f;                 // float cull margin for any grid query, uu
  std::vector<std::uint32_t> grid_cells_;
  std::vector<std::uint32_t> grid_candidates_;
  // Collide's table over the grid grown by one cell on every side (cell (i, j, k) of the grid
  // is (i + 1, j + 1, k + 1) here, at LookupIndex's strides): the grid's cell index where its list is not
  // empty, kLookupEmpty where it is, kLookupOutside in the border (and the one entry without a
  // grid): the BVH answers there. A centre off the grid clamps into the border; one on it may
  // land in a neighbouring cell where rounding puts it within ~1e-12 uu of the boundary, which
  // gives the same answer: the lists hold every triangle within kGridRadius plus the listing's
  // slack of their cell, in the BVH's order.
  static constexpr std::int32_t kLookupEmpty = -1;
  static constexpr std::int32_t kLookupOutside = -2;
  std::vector<std::int32_t> grid_lookup_ = {kLookupOutside};
  alignas(16) double lookup_origin_[3] = {0.0, 0.0, 0.0};  // low corner of the grown grid, uu
  // Per axis x, y, z (lanes 3-7 zero, for SSE2's 16-bit lanes): the grown grid's cells less 1,
  // and the table's stride along it. Its axes are laid out smallest first, so that the
  // strides fit 16 bits (the pitch's largest is a few thousand); a mesh whose two smaller axes
  // have more than 32,767 cells together gets no table (the one entry: Collide asks the BVH).
  alignas(16) std::int16_t lookup_top_[8] = {};
  alignas(16) std::int16_t lookup_weight_[8] = {};
  // Per cell, a byte: for a cell with an empty list, the Chebyshev distance in cells to the
  // nearest cell with a non-empty list, 1 to kMaxClearCells (cells outside the grid count as
  // empty: they are farther than kGridRadius from the mesh's box); for a listed cell 0, or
  // kOctantCodeBase + i where octant_masks_[i] holds the cell's free octants: bit o set when
  // none of the cell's triangles passes the listing's tests (BuildGrid) for octant o (bits 0,
  // 1, 2 of o: the upper half along x, y, z), so every point of it is farther than kGridRadius
  // from the mesh. The masks are the mesh's most frequent ones (a cell whose mask is not among
  // them keeps 0). See GridFreeClearance.
  std::vector<std::uint8_t> grid_clear_cells_;
  static constexpr int kMaxClearCells = 63;  // 4,069 uu of clearance: ~0.7 s at top speed
  static constexpr int kOctantCodeBase = kMaxClearCells + 1;
  std::uint8_t octant_masks_[256 - kOctantCodeBase] = {};
  // Per column (i, j) of grid cells (x fastest), non-zero when FloorHeight answers there: the
  // column's cells from the one holding z = kFloorMinZUu up to floor_top_z_ list only floor
  // triangles (all three vertices at z = 0) or none, so every other triangle is farther than
  // kGridRadius from every point of them; and the floor triangles cover the column's x-y
  // square: no edge of the floor's boundary comes within 1 uu of it and its centre is on a
  // floor triangle. The value is the least Chebyshev distance (cells, at most 255) from those
  // cells to one listing another triangle (>= 1). Empty without a grid.
  std::vector<std::uint8_t> floor_columns_;
  // Top of the flagged layers, uu: the top of the layer holding z = kFloorReachUu. Below any
  // height without a grid or a floor.
  double floor_top_z_ = -1e300;
};

}  // namespace rlfit
