// CSV writers in the recordings' formats.
#include "src/io/episode_writer.h"

#include <cmath>
#include <sstream>

#include "src/common/constants.h"

namespace rlfit {
namespace {

void WriteEuler(std::ostringstream& out, const Eigen::Matrix3d& theta) {
  const Eigen::Vector3d e = MatrixToEuler(theta);
  for (int i = 0; i < 3; ++i) out << "," << std::lround(e(i) / game::kRadiansPerUnrealUnit);
}

}  // namespace

Eigen::Vector3d MatrixToEuler(const Eigen::Matrix3d& m) {
  const double pitch = std::asin(std::max(-1.0, std::min(1.0, m(2, 0))));
  const double yaw = std::atan2(m(1, 0), m(0, 0));
  const double roll = std::atan2(-m(2, 1), m(2, 2));
  return {pitch, yaw, roll};
}

std::string CarEpisodeToCsv(const Episode& ep) {
  std::ostringstream out;
  out.precision(10);
  for (const Sample& s : ep.rows) {
    out << s.x(0) << "," << s.x(1) << "," << s.x(2) << "," << s.v(0) << "," << s.v(1) << ","
        << s.v(2);
    WriteEuler(out, s.theta);
    out << "," << s.omega(0) << "," << s.omega(1) << "," << s.omega(2) << "," << s.supersonic
        << "," << s.jumped << "," << s.double_jumped << "," << s.on_ground << ","
        << s.boost_amount << "," << s.input.throttle << "," << s.input.steer << ","
        << s.input.pitch << "," << s.input.yaw << "," << s.input.roll << "," << s.input.jump
        << "," << s.input.boost << "," << s.input.handbrake << "\n";
  }
  return out.str();
}

std::string BallEpisodeToCsv(const Episode& ep) {
  std::ostringstream out;
  out.precision(10);
  for (const Sample& s : ep.rows) {
    out << s.t_s << "," << s.x(0) << "," << s.x(1) << "," << s.x(2) << "," << s.v(0) << ","
        << s.v(1) << "," << s.v(2);
    WriteEuler(out, s.theta);
    out << "," << s.omega(0) << "," << s.omega(1) << "," << s.omega(2) << "\n";
  }
  return out.str();
}

}  // namespace rlfit
