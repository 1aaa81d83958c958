// The jump model's coefficient layout.
#include "src/models/jump.h"

namespace rlfit {

const CoeffLayout& JumpLayout() {
  static const CoeffLayout layout = [] {
    CoeffLayout l = AerialLayout();
    const int jump = l.size();
    l.names.insert(l.names.end(),
                   {"jump_impulse", "jump_accel", "sticky_accel", "contact_drive_accel",
                    "double_jump_impulse", "dodge_impulse", "dodge_backward_impulse",
                    "dodge_torque_forward", "dodge_torque_side", "dodge_z_damping"});
    l.units.insert(l.units.end(), {"uu/s", "uu/s^2", "uu/s^2", "uu/s^2", "uu/s", "uu/s", "uu/s",
                                   "rad/s^2", "rad/s^2", "1"});
    l.defaults.insert(l.defaults.end(),
                      {game::kJumpImpulse, game::kJumpAccel, game::kStickyGround * -game::kGravityZ,
                       // Drive at rest: DriveTorque 288000 / mass 180 (magic_numbers.py).
                       288000.0 / 180.0, game::kJumpImpulse, game::kDodgeImpulse,
                       game::kDodgeBackwardImpulse, game::kDodgeTorqueForward,
                       game::kDodgeTorqueSide, game::kDodgeZDamping});
    l.blocks.push_back({"jump", jump, 4});
    l.blocks.push_back({"double_jump", jump + 4, 1});
    l.blocks.push_back({"dodge", jump + 5, 5});
    l.bounds.insert(
        l.bounds.end(),
        {// Impulses push along up (>= 0), at most twice the game's 291.7 uu/s (a jump to
         // twice the recorded height would be another game).
         {0.0, 2.0 * game::kJumpImpulse},
         // Jump force: up, at most twice the game's 1458 uu/s^2.
         {0.0, 2.0 * game::kJumpAccel},
         // Sticky force: down, at most 2 g (the game's wall value is 1.5 g).
         {0.0, -2.0 * game::kGravityZ},
         // Drive on the ground: forward, at most the game's boost-free peak ~1600 uu/s^2 x 2.
         {0.0, 3200.0},
         {0.0, 2.0 * game::kJumpImpulse},  // double jump impulse
         {0.0, 2.0 * game::kDodgeImpulse},
         {0.0, 2.0 * game::kDodgeBackwardImpulse},
         // Dodge torques: the stick's direction (>= 0 here, the sign is in StepJump), at most
         // twice the game's.
         {0.0, 2.0 * game::kDodgeTorqueForward},
         {0.0, 2.0 * game::kDodgeTorqueSide},
         // A fraction of vz removed per tick.
         {0.0, 1.0}});
    return l;
  }();
  return layout;
}

}  // namespace rlfit
