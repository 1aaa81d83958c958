// The arena query's workload (bench/workloads.h): the in-arena spheres and the loop of queries.
#include <random>
#include <stdexcept>
#include <utility>

#include "bench/workloads.h"
#include "src/io/arena_file.h"
#include "src/io/recording.h"

namespace rlfit {
namespace bench {

std::string DataRootOrThrow() {
  const std::string root = ResolveDataRoot("");
  if (root.empty())
    throw std::runtime_error("datasets not found: set RLFIT_DATA to the lobot folder");
  return root;
}

const ArenaScene& GetArenaScene() {
  static const ArenaScene scene = [] {
    Arena arena = LoadArena(DataRootOrThrow() + "/meshes/pitch.dat");
    Eigen::Vector3f lo = arena.triangles()[0].p[0], hi = lo;
    for (const Triangle& t : arena.triangles())
      for (const auto& p : t.p) {
        lo = lo.cwiseMin(p);
        hi = hi.cwiseMax(p);
      }
    std::mt19937_64 rng(20240611);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<Eigen::Vector3d> centers;
    while (static_cast<int>(centers.size()) < kQuerySpheres) {
      const Eigen::Vector3d p(lo.x() + u(rng) * (hi.x() - lo.x()),
                              lo.y() + u(rng) * (hi.y() - lo.y()),
                              lo.z() + u(rng) * (hi.z() - lo.z()));
      if (arena.Contains(p)) centers.push_back(p);
    }
    ArenaScene s{std::move(arena), std::move(centers), {}, {}, {}};
    for (const Eigen::Vector3d& c : s.centers) {
      if (s.arena.Collide(c, kQueryRadius).hit)
        s.touching.push_back(c);
      else if (s.arena.GridListSize(c, kQueryRadius) == 0)
        s.empty.push_back(c);
      else
        s.listed.push_back(c);
    }
    return s;
  }();
  return scene;
}

double RunArenaQueries(const ArenaScene& scene, const std::vector<Eigen::Vector3d>& set,
                       long queries, bool grid) {
  const std::size_t n = set.size();
  double sum = 0.0;
  std::size_t i = 0;
  for (long q = 0; q < queries; ++q) {
    const Eigen::Vector3d& c = set[i];
    sum += (grid ? scene.arena.Collide(c, kQueryRadius) : scene.arena.CollideBvh(c, kQueryRadius))
               .penetration;
    if (++i == n) i = 0;
  }
  return sum;
}

}  // namespace bench
}  // namespace rlfit
