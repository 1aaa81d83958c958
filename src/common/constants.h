// Game constants with unit and source. Used only as defaults of coefficient structs and
// options; step functions read coefficients, never these directly.
#pragma once

namespace rlfit::game {

// Physics tick of the game engine, Hz (datasets README; RocketSim).
inline constexpr double kTickRateHz = 120.0;
// Row rate of the ~61 Hz episode CSVs, Hz: in-air rows change vz by 650/60.96 (datasets README).
inline constexpr double kEpisodeRowRateHz = 60.96;
// Gravity along world z, uu/s^2 (datasets README).
inline constexpr double kGravityZ = -650.0;
// Largest car speed, uu/s (parameters/car.md ARBActor_TA.MaxLinearSpeed).
inline constexpr double kCarMaxSpeed = 2300.0;
// Largest car angular speed, rad/s (parameters/car.md ARBActor_TA.MaxAngularSpeed; note 000).
inline constexpr double kCarMaxOmega = 5.5;
// Boost acceleration: BoostForce 178500 / car mass 180, uu/s^2 (magic_numbers.py, car.md).
inline constexpr double kBoostAccel = 178500.0 / 180.0;
// Boost amount: full tank, and the amount used per second of boost held (RocketSim
// src/RLConst.h BOOST_MAX, BOOST_USED_PER_SECOND = BOOST_MAX / 3).
inline constexpr double kBoostMax = 100.0;
inline constexpr double kBoostUsedPerSecond = kBoostMax / 3.0;
// In-air throttle acceleration: ThrottleForce 12000 / mass 180, uu/s^2 (magic_numbers.py).
inline constexpr double kAirThrottleAccel = 12000.0 / 180.0;

// Aerial torque and damping of note 000 ("Example Implementation"), 1/s^2 and 1/s.
inline constexpr double kAirTorqueRoll = -36.07956616966136;
inline constexpr double kAirTorquePitch = -12.14599781908070;
inline constexpr double kAirTorqueYaw = 8.91962804287785;
inline constexpr double kAirDampingRoll = -4.47166302201591;
inline constexpr double kAirDampingPitch = -2.798194258050845;
inline constexpr double kAirDampingYaw = -1.886491900437232;

// Ball (note 003, parameters/ball.md, datasets README).
inline constexpr double kBallRadius = 91.25;          // nominal radius, uu
inline constexpr double kBallContactRadius = 93.15;   // resting height in the arena, uu
inline constexpr double kBallMaxSpeed = 6000.0;       // uu/s (ball.md MaxLinearSpeed)
inline constexpr double kBallMaxOmega = 6.0;          // rad/s (ball.md MaxAngularSpeed)
// The game rounds the ball's velocity to 0.01 uu/s every tick, uu/s (RocketSim's Ball rounds
// its linear velocity so). Measured (NOTES issue 12, vel35): the recordings' free-flight
// velocity steps carry a sawtooth of +-0.0095 uu/s a row that wraps where |v| crosses an odd
// multiple of 19.7 uu/s (= 0.01 / (1 - exp(drag / 120)) / 2), the rounding of the drag's
// decrement; with the rounding the open loop's horizontal velocity follows the record to the digit.
inline constexpr double kBallVelocityQuantum = 0.01;
inline constexpr double kBallRestitution = 0.6;       // note 003
inline constexpr double kBallFrictionMu = 0.285;      // RLUtilities ball.cc
inline constexpr double kBallFrictionY = 2.0;         // RLUtilities ball.cc
// Drag, 1/s: v *= exp(drag dt). ln(0.97): Bullet's linear damping of 0.03 (v *= (1 - 0.03)^dt),
// and the free-flight decay of the recordings' horizontal speed, -0.03045 /s over 472 spans
// (NOTES "Rolling"); RLUtilities' ball.cc has -0.0305. The ball's fit holds it here unless
// told --free drag (fit/fit.cc).
inline constexpr double kBallDrag = -0.030459207484708574;
// m R^2 / I of the ball: 2.5 for a solid sphere (Bullet's btSphereShape inertia 0.4 m r^2;
// note 003's ball code uses A = m/I = 0.0003 per uu^2, i.e. 2.5 at R = 91.25).
inline constexpr double kBallSpinFactor = 2.5;
// Normal speeds below this do not bounce: the contact only stops the ball, uu/s. The rolling
// rows of ball_trajectories report vz = 0 exactly at z = 93.14, and the last hops before that
// are ~10-15 uu/s; at 10 the model can hop forever at ~13 uu/s. Replays: last-row median error
// 16.9 uu at 15, 17.5 at 20, 17.9 at 25.
inline constexpr double kBallRestitutionThreshold = 15.0;
// Fraction of the ball's penetration into the mesh removed per tick, by moving it out (measured
// on 522 floor bounces of ball_trajectories: the outgoing parabola lags the incoming one by
// 1.0 tick (p10 0.26, p90 1.74); full removal would give 0.5 on average, none 1.33).
// Re-measured with the final step (1/61 s rows, speculative contacts): median height error 5
// rows after 1200 floor bounces 0.11 uu at 0, 0.18 at 0.1, 0.46 at 0.4, 1.10 at 1; replays,
// median |dx| at 5 s / last row: 5.9 / 12.4 uu at 0, 6.3 / 12.5 at 0.1, 7.2 / 12.3 at 0.4. Kept
// at 0.4 at first; set to 0, where the bounce heights put it (rlfit leaves it where it
// starts, see fit/ball_fit.h).
// The push-out acts only on the depth beyond this slop, uu (not fitted): x += recovery
// max(0, depth - slop) n. Measured per floor bounce (NOTES "What the game does at a flat
// contact", push30): the outgoing arc sits 0.797 (d - 1.900) above "contact tick + v_out dt"
// (741 bounces, |residual| median 0.007 uu, max 0.079), nothing for d < 1.9 (490 bounces,
// |push| p90 0.02 uu), no velocity term at any depth: the 1.9 uu between the contact radius
// (93.15) and the ball's radius (91.25) is not pushed out, the rest is at Bullet's split-impulse
// erp2 (0.8).
inline constexpr double kBallPenetrationSlop = 1.9;
inline constexpr double kBallPenetrationRecovery = 0.0;
// Where the ball's fit holds contact_radius and recovery unless told --free (fit/fit.cc; the
// seed's 93.15 and 0 above stay the seed notes' values). Measured per floor bounce (NOTES push30):
// the contact starts below R = 93.1504 uu (the closest tick that did not touch was 0.002 uu
// above, the shallowest that touched 0.001 below); the push-out is 0.797 (d - 1.900) (hinge fit
// over 741 bounces: knee 1.900 uu, slope 0.797, |residual| median 0.007 uu; Bullet's
// split-impulse erp2 is 0.8).
inline constexpr double kBallContactRadiusMeasured = 93.1504;
inline constexpr double kBallPenetrationRecoveryMeasured = 0.797;
// Height of the arena's flat ceiling for the ball, uu. meshes/pitch.dat's two ceiling triangles
// lie at z 2044.0, but the recorded balls bounce off 2048: slow ceiling contacts turn at centre
// z 1954.7-1955.1 (2048 - 93.15 = 1954.85), and the one-row mean |dv| of the 1,262 steps above
// z 1850 is 14.5 uu/s at 2044, 9.1 at 2048, 10.8 at 2050 (NOTES "Ball tail"; "Where the mesh
// is, patch by patch": no other patch is off by more than a fraction of a uu). The ball's arena
// (BallArena) moves them there; the car and wall models keep the mesh as it is.
inline constexpr double kBallCeilingZ = 2048.0;

// Game rotation units to radians: value * pi / 32768 (datasets README).
inline constexpr double kRadiansPerUnrealUnit = 3.14159265358979323846 / 32768.0;

// Car on the ground (note 002, parameters/vehicle_sim.md, RLBot wiki "Car physics").
// Throttle acceleration at rest, uu/s^2 (RLBot wiki; the game's DriveTorque 288000 scaled by
// DriveTorqueCurve, vehicle_sim.md). Note 002 writes T (F_thr - |v_f|) with F_thr ~ 1550.
inline constexpr double kThrottleAccel = 1600.0;
// DriveTorqueCurve (vehicle_sim.md): 1 at 0 uu/s, 0.1 at 1400 uu/s, 0 at 1410 uu/s.
inline constexpr double kThrottleFadeSpeed = 1400.0;   // uu/s
inline constexpr double kThrottleFadeFraction = 0.1;   // of kThrottleAccel at the fade speed
inline constexpr double kThrottleCutoffWidth = 10.0;   // uu/s from 0.1 to 0
// Braking (throttle against the motion), uu/s^2 (RLBot wiki; BrakeTorque 10500, vehicle_sim.md).
inline constexpr double kBrakeAccel = 3500.0;
// Coasting, uu/s^2: IdleBrakeFactor 0.15 (vehicle_sim.md) times kBrakeAccel.
inline constexpr double kCoastAccel = 0.15 * kBrakeAccel;
// Below this forward speed a released throttle brakes fully, uu/s (StopThreshold, vehicle_sim.md).
inline constexpr double kCarStopSpeed = 25.0;
// |throttle| below this counts as released (assumed; recorded throttles are 0 or >= 0.1).
inline constexpr double kThrottleDeadzone = 0.01;
// Curvature vs forward speed, 1/uu, at 0, 500, 1000, 1500, 1750, 2300 uu/s (RLUtilities /
// RLBot community curve; the game's SteerAngleCurve over the 85 uu wheelbase gives about the same).
inline constexpr double kCurvature0 = 0.0069;
inline constexpr double kCurvature500 = 0.00398;
inline constexpr double kCurvature1000 = 0.00235;
inline constexpr double kCurvature1500 = 0.001375;
inline constexpr double kCurvature1750 = 0.0011;
inline constexpr double kCurvature2300 = 0.00088;
// Rate at which the yaw rate follows steer * kappa * v_f, 1/s (assumed starting value; note 002
// gives only the form of the torque; fitted).
inline constexpr double kYawRateResponse = 15.0;
// Decay rate of the sideways velocity while driving, 1/s (assumed starting value; fitted).
inline constexpr double kLateralFrictionRate = 15.0;
// Distance from the car's center back to its rear axle, uu (magic_numbers.py, Octane
// PresetRestPosition x = -33.75 of the rear wheels).
inline constexpr double kCarRearAxleOffset = 33.75;
// Height of a car resting on flat ground, uu (measured: z = 17.01 in every on-ground row of
// ground_driving_no_handbrake).
inline constexpr double kCarRestHeight = 17.01;
// vz the game reports for a car resting on flat ground, uu/s (measured: median 8.3, 10535 rows
// of ground_driving_no_handbrake, range 7.98-8.40, while z stays at kCarRestHeight).
inline constexpr double kCarRestReportedVz = 8.3;

// The game's vehicle on a surface (issue 37; src/models/vehicle.h). Values from RocketSim
// (ZealanL/RocketSim v2.2, MIT; ../shared/refs), read for what the game does.
// Ground boost acceleration, uu/s^2: RocketSim src/RLConst.h BOOST_ACCEL_GROUND = 2975 / 3 (the
// air's is 3175 / 3: kBoostAccel + kAirThrottleAccel above).
inline constexpr double kBoostAccelGround = 2975.0 / 3.0;
// Coasting brakes at this fraction of the full brake: RocketSim src/RLConst.h
// COASTING_BRAKE_FACTOR.
inline constexpr double kVehicleCoastBrake = 0.15;
// |throttle| below this is released: RocketSim src/RLConst.h THROTTLE_DEADZONE.
inline constexpr double kVehicleThrottleDeadzone = 0.001;
// A wheel's sideways impulse per tick as a rate, 1/s: RocketSim src/Sim/btVehicleRL/
// btVehicleRL.cpp calcFrictionImpulses takes Bullet's resolveSingleBilateral impulse (0.2 of the
// impulse stopping the contact's sideways velocity) times the friction scale mass / 3 = 60 and
// the tick: 0.2 x 60 = 12 /s of that impulse (0.1 of it per 120 Hz tick).
inline constexpr double kVehicleLateralRate = 12.0;
// Sideways grip of a wheel sliding fully sideways (slip ratio 1): RocketSim src/RLConst.h
// LAT_FRICTION_CURVE (1 at ratio 0, 0.2 at 1); the ratio counts only above kVehicleSlideMinSpeed
// of sideways speed (Car::_UpdateWheels: baseFriction > 5).
inline constexpr double kVehicleSlideGrip = 0.2;
inline constexpr double kVehicleSlideMinSpeed = 5.0;  // uu/s
// Rolling friction of a braking wheel, 1/s: RocketSim btVehicleRL.cpp calcFrictionImpulses
// ROLLING_FRICTION_SCALE_MAGIC 113.73963 x the friction scale mass / 3 over the mass 180.
inline constexpr double kVehicleRollingGain = 113.73963 / 3.0;
// Wheel positions from the centre of mass, uu, {front, rear}: forward (x) and to either side (y)
// (RocketSim src/Sim/Car/CarConfig/CarConfig.cpp FRONT_WHEELS_OFFSET / BACK_WHEELS_OFFSET, Octane).
inline constexpr double kVehicleWheelX[2] = {51.25, -33.75};
inline constexpr double kVehicleWheelY[2] = {25.90, 29.50};
// Inertia over mass of the Octane's hitbox box, uu^2 (RocketSim CarConfig.cpp HITBOX_SIZES
// 120.507 x 86.6994 x 38.6591; Bullet's btBoxShape: m (ly^2 + lz^2) / 12 ...).
inline constexpr double kOctaneRollGyrationSq = (86.6994 * 86.6994 + 38.6591 * 38.6591) / 12.0;
inline constexpr double kOctanePitchGyrationSq = (120.507 * 120.507 + 38.6591 * 38.6591) / 12.0;
inline constexpr double kOctaneYawGyrationSq = (120.507 * 120.507 + 86.6994 * 86.6994) / 12.0;
// Steer angle of the front wheels at full steer against forward speed, rad at uu/s: RocketSim
// src/RLConst.h STEER_ANGLE_FROM_SPEED_CURVE.
inline constexpr double kSteerAngleSpeeds[6] = {0.0, 500.0, 1000.0, 1500.0, 1750.0, 3000.0};
inline constexpr double kSteerAngles[6] = {0.53356, 0.31930, 0.18203, 0.10570, 0.08507, 0.03454};
// Drive torque factor against forward speed: RocketSim src/RLConst.h
// DRIVE_SPEED_TORQUE_FACTOR_CURVE (the DriveTorqueCurve of vehicle_sim.md).
inline constexpr double kDriveCurveSpeeds[3] = {0.0, 1400.0, 1410.0};
inline constexpr double kDriveCurveFactors[3] = {1.0, 0.1, 0.0};

}  // namespace rlfit::game
