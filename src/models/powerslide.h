// Forwards to the powerslide's folder, src/models/powerslide/powerslide.h. Kept only for
// src/models/car.h, which another branch is editing: delete it once car.h includes the new path.
#pragma once

#include "src/models/powerslide/powerslide.h"
