// Benchmarks of the arena's sphere-vs-mesh queries: grid (Collide), BVH and naive loop on the
// same random ball-sized spheres. `--callgrind_queries=N` instead runs N queries for
// instruction counts, `--callgrind_path=grid|bvh` (default grid) and
// `--callgrind_spheres=all|empty|listed|touching` (default all) choosing the query and the
// subset of spheres: in an empty grid cell, in a listed cell but touching nothing, touching.
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
#include "bench/workloads.h"

namespace rlfit {
namespace {

constexpr double kRadius = bench::kQueryRadius;
constexpr int kSpheres = bench::kQuerySpheres;
using Scene = bench::ArenaScene;
const Scene& GetScene() { return bench::GetArenaScene(); }

void BM_ArenaCollideGrid(benchmark::State& state) {
  const Scene& scene = GetScene();
  int i = 0, hits = 0;
  for (auto _ : state) {
    const Contact c = scene.arena.Collide(scene.centers[i], kRadius);
    benchmark::DoNotOptimize(c);
    hits += c.hit;
    i = (i + 1) & (kSpheres - 1);
  }
  state.counters["hit_fraction"] = benchmark::Counter(hits, benchmark::Counter::kAvgIterations);
  state.counters["empty_cell_fraction"] =
      static_cast<double>(scene.empty.size()) / scene.centers.size();
}
BENCHMARK(BM_ArenaCollideGrid);

void BM_ArenaCollideBvh(benchmark::State& state) {
  const Scene& scene = GetScene();
  int i = 0, hits = 0;
  for (auto _ : state) {
    const Contact c = scene.arena.CollideBvh(scene.centers[i], kRadius);
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

// Building the BVH and the grid (the whole Arena constructor, with the triangle checks).
void BM_ArenaBuild(benchmark::State& state) {
  const Scene& scene = GetScene();
  for (auto _ : state) {
    Arena arena(scene.arena.triangles());
    benchmark::DoNotOptimize(arena);
  }
  state.counters["grid_cells"] = static_cast<double>(scene.arena.grid_cells());
  state.counters["grid_candidates"] = static_cast<double>(scene.arena.grid_candidates());
  state.counters["grid_MB"] = static_cast<double>(scene.arena.grid_bytes()) / 1e6;
}
BENCHMARK(BM_ArenaBuild)->Unit(benchmark::kMillisecond);

// Runs `queries` queries over the chosen spheres (bench/workloads.h), for callgrind: the
// instructions of N and 2N queries differ by N queries' worth, setup cancelling out.
int RunCallgrindQueries(long queries, const std::string& path, const std::string& spheres) {
  const Scene& scene = GetScene();
  const std::vector<Eigen::Vector3d>* set = &scene.centers;
  if (spheres == "empty") set = &scene.empty;
  else if (spheres == "listed") set = &scene.listed;
  else if (spheres == "touching") set = &scene.touching;
  else if (spheres != "all") throw std::runtime_error("unknown --callgrind_spheres: " + spheres);
  if (path != "grid" && path != "bvh") throw std::runtime_error("unknown --callgrind_path: " + path);
  const double sum = bench::RunArenaQueries(scene, *set, queries, path == "grid");
  std::printf("%ld %s queries over %zu %s spheres (of %zu: %zu empty cells, %zu listed, %zu "
              "touching), penetration sum %.6f\n",
              queries, path.c_str(), set->size(), spheres.c_str(), scene.centers.size(),
              scene.empty.size(), scene.listed.size(), scene.touching.size(), sum);
  return 0;
}

}  // namespace
}  // namespace rlfit

int main(int argc, char** argv) {
  const char* kFlag = "--callgrind_queries=";
  const char* kPath = "--callgrind_path=";
  const char* kSpheres = "--callgrind_spheres=";
  try {
    long queries = -1;
    std::string path = "grid", spheres = "all";
    for (int i = 1; i < argc; ++i) {
      if (std::strncmp(argv[i], kFlag, std::strlen(kFlag)) == 0)
        queries = std::atol(argv[i] + std::strlen(kFlag));
      else if (std::strncmp(argv[i], kPath, std::strlen(kPath)) == 0)
        path = argv[i] + std::strlen(kPath);
      else if (std::strncmp(argv[i], kSpheres, std::strlen(kSpheres)) == 0)
        spheres = argv[i] + std::strlen(kSpheres);
    }
    if (queries >= 0) return rlfit::RunCallgrindQueries(queries, path, spheres);
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
