// Lobot's Car.h includes "Pitch.h" while its file is inc/pitch.h (Windows' file names ignore
// case): this forwards to it, for the Lobot comparison only.
#pragma once

#include "pitch.h"
