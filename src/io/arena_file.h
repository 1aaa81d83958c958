// The arena mesh file (meshes/pitch.dat) read into the models' Arena, and the arenas of a
// datasets root, each built once per process and passed to the models (src/models/arena.h).
#pragma once

#include <string>
#include <vector>

#include "src/models/arena.h"

namespace rlfit {

// Reads a mesh file: one triangle per line, 9 tab-separated floats. InputError (file, row,
// column) on a malformed line, and on a vertex beyond twice the arena's extent
// (plausible::MaxAbsPositionUu, as for recorded positions).
Arena LoadArena(const std::string& path);
// LoadArena's triangles, read and checked the same way, without building the arena (for a mesh
// changed before it is built: the ball's, BallArena).
std::vector<Triangle> LoadArenaTriangles(const std::string& path);

// The arena of a datasets root (<root>/meshes/pitch.dat), the mesh as it is: the car and wall
// models'. Built on first use and kept for the process, shared by every predictor and fit
// (queries are const and thread-safe). InputError if the root is unknown ("") or the mesh
// cannot be read.
const Arena& PitchArena(const std::string& data_root);

// The arena the ball moves in: the same mesh with the ball's ceiling (WithBallCeiling,
// src/models/ball.h), with its own grid and cache (PitchArena's is not built for it).
const Arena& BallArena(const std::string& data_root);

}  // namespace rlfit
