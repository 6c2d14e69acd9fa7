// Scalar and small fixed-size types used throughout the engine.
#pragma once

#include <Eigen/Core>

namespace alsim {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
// Quaternions are stored as (w, x, y, z), MuJoCo's order, in plain 4-vectors: Eigen::Quaterniond
// stores (x, y, z, w), and qpos must keep MuJoCo's layout.
using Quat = Eigen::Vector4d;
// Spatial vectors (angular part first, then linear), Featherstone's convention.
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;

}  // namespace alsim
