// The arena's collision mesh (8028 triangles, meshes/pitch.dat) and sphere-vs-mesh contact
// queries: a bounding volume hierarchy for speed and a naive all-triangles loop as reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// The mesh and its BVH. Build once (about 15 ms for the pitch), then query from any number of
// threads: queries are const and allocate nothing.
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
  // Reads meshes/pitch.dat: one triangle per line, 9 tab-separated floats. InputError (file,
  // row, column) on a malformed line.
  static Arena Load(const std::string& path);
  // Throws InputError (row = 1-based triangle index) on a non-finite vertex or a triangle of
  // zero area.
  explicit Arena(std::vector<Triangle> triangles);

  // Contact of a sphere with the mesh, through the BVH. A centre or radius that is not finite
  // (or beyond 1e30 uu), or a negative radius, gives no hit.
  Contact Collide(const Eigen::Vector3d& center, double radius) const;
  // Same answer from testing every triangle (reference for tests and benchmarks).
  Contact CollideNaive(const Eigen::Vector3d& center, double radius) const;

  // True if `point` is inside the arena: each of the six axis-aligned rays from it first meets
  // the front (normal-side) face of a triangle. The mesh is open (708 unshared edges), so this
  // is a sampling aid for tests and benchmarks, not an exact solid test. Three line walks of
  // the BVH: about 2 us.
  bool Contains(const Eigen::Vector3d& point) const;

  int triangle_count() const { return static_cast<int>(triangles_.size()); }
  const std::vector<Triangle>& triangles() const { return triangles_; }

 private:
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
  // Vertices of a triangle in leaf order, in double for the exact test.
  struct LeafVertices {
    double p[3][3];
  };

  void Build();

  std::vector<Triangle> triangles_;
  std::vector<Node> nodes_;
  std::vector<Plane> planes_;
  std::vector<LeafVertices> leaf_vertices_;
};

}  // namespace rlfit
