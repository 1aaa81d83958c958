// Limits of a plausible car or ball state, shared by the recording reader and `rlsim predict`:
// a value beyond them is not a game state (bad input), whoever gives it.
#pragma once

#include "src/common/constants.h"

namespace rlfit::plausible {

// Arena extent, uu (datasets README, RLBot arena): side walls at |x| = 4096, back walls at
// |y| = 5120 plus 880 of goal depth, ceiling at z = 2044. A position beyond kArenaMargin times
// these (on either side of the floor for z) is not a game state.
inline constexpr double kArenaHalfWidthUu = 4096.0;
inline constexpr double kArenaHalfLengthUu = 5120.0 + 880.0;
inline constexpr double kArenaHeightUu = 2044.0;
inline constexpr double kArenaMargin = 2.0;

// Largest |position| along axis 0 (x), 1 (y) or 2 (z), uu.
inline constexpr double MaxAbsPositionUu(int axis) {
  return kArenaMargin *
         (axis == 0 ? kArenaHalfWidthUu : axis == 1 ? kArenaHalfLengthUu : kArenaHeightUu);
}
// Largest speed, uu/s, and angular speed, rad/s: twice the game's caps.
inline constexpr double MaxSpeedUuS(bool car) {
  return 2.0 * (car ? game::kCarMaxSpeed : game::kBallMaxSpeed);
}
inline constexpr double MaxOmegaRadS(bool car) {
  return 2.0 * (car ? game::kCarMaxOmega : game::kBallMaxOmega);
}

}  // namespace rlfit::plausible
