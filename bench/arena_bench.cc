// Benchmarks of the arena's sphere-vs-mesh queries: BVH and naive loop on the same random
// ball-sized spheres. `--callgrind_queries=N` instead runs N BVH queries for instruction counts.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "src/io/recording.h"
#include "src/models/arena.h"

namespace rlfit {
namespace {

// Radius of the queried spheres, uu: the ball's (the brief's 92.75).
constexpr double kRadius = 92.75;
// Distinct spheres cycled through by the benchmarks; a power of two.
constexpr int kSpheres = 1 << 13;
constexpr unsigned kSeed = 20240611;

struct Scene {
  Arena arena;
  std::vector<Eigen::Vector3d> centers;
};

// Centres uniform in the mesh's bounding box, kept when Arena::Contains puts them inside the
// arena (about 80% are). Fixed seed, so every run queries the same spheres.
std::vector<Eigen::Vector3d> SampleCenters(const Arena& arena, int count) {
  Eigen::Vector3f lo = arena.triangles()[0].p[0], hi = lo;
  for (const Triangle& t : arena.triangles())
    for (const auto& p : t.p) {
      lo = lo.cwiseMin(p);
      hi = hi.cwiseMax(p);
    }
  std::mt19937_64 rng(kSeed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Eigen::Vector3d> centers;
  while (static_cast<int>(centers.size()) < count) {
    const Eigen::Vector3d p(lo.x() + u(rng) * (hi.x() - lo.x()),
                            lo.y() + u(rng) * (hi.y() - lo.y()),
                            lo.z() + u(rng) * (hi.z() - lo.z()));
    if (arena.Contains(p)) centers.push_back(p);
  }
  return centers;
}

const Scene& GetScene() {
  static const Scene scene = [] {
    const std::string root = ResolveDataRoot("");
    if (root.empty())
      throw std::runtime_error("datasets not found: set RLFIT_DATA to the lobot folder");
    Arena arena = Arena::Load(root + "/meshes/pitch.dat");
    std::vector<Eigen::Vector3d> centers = SampleCenters(arena, kSpheres);
    return Scene{std::move(arena), std::move(centers)};
  }();
  return scene;
}

void BM_ArenaCollideBvh(benchmark::State& state) {
  const Scene& scene = GetScene();
  int i = 0, hits = 0;
  for (auto _ : state) {
    const Contact c = scene.arena.Collide(scene.centers[i], kRadius);
    benchmark::DoNotOptimize(c);
    hits += c.hit;
    i = (i + 1) & (kSpheres - 1);
  }
  state.counters["hit_fraction"] = benchmark::Counter(hits, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_ArenaCollideBvh);

void BM_ArenaCollideNaive(benchmark::State& state) {
  const Scene& scene = GetScene();
  int i = 0, hits = 0;
  for (auto _ : state) {
    const Contact c = scene.arena.CollideNaive(scene.centers[i], kRadius);
    benchmark::DoNotOptimize(c);
    hits += c.hit;
    i = (i + 1) & (kSpheres - 1);
  }
  state.counters["hit_fraction"] = benchmark::Counter(hits, benchmark::Counter::kAvgIterations);
}
// One pass over every sphere, so the naive loop averages over exactly the BVH's spheres.
BENCHMARK(BM_ArenaCollideNaive)->Unit(benchmark::kMicrosecond)->Iterations(kSpheres);

void BM_ArenaBuild(benchmark::State& state) {
  const Scene& scene = GetScene();
  for (auto _ : state) {
    Arena arena(scene.arena.triangles());
    benchmark::DoNotOptimize(arena);
  }
}
BENCHMARK(BM_ArenaBuild)->Unit(benchmark::kMillisecond);

// Runs `queries` BVH queries over the same spheres as the benchmark, for callgrind: the
// instructions of N and 2N queries differ by N queries' worth, setup cancelling out.
int RunCallgrindQueries(long queries) {
  const Scene& scene = GetScene();
  double sum = 0.0;
  for (long q = 0; q < queries; ++q)
    sum += scene.arena.Collide(scene.centers[q & (kSpheres - 1)], kRadius).penetration;
  std::printf("%ld queries, penetration sum %.6f\n", queries, sum);
  return 0;
}

}  // namespace
}  // namespace rlfit

int main(int argc, char** argv) {
  const char* kFlag = "--callgrind_queries=";
  try {
    for (int i = 1; i < argc; ++i)
      if (std::strncmp(argv[i], kFlag, std::strlen(kFlag)) == 0)
        return rlfit::RunCallgrindQueries(std::atol(argv[i] + std::strlen(kFlag)));
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    rlfit::GetScene();  // load and sample before timing
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arena_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
