#include "engine/math/spatial.h"

#include <cmath>

namespace alsim {

Vec3 QuatToRotationVector(const Quat& q) {
  const Vec3 u = q.tail<3>();
  const double sin_half = u.norm();
  if (sin_half == 0) return Vec3::Zero();
  double angle = 2.0 * std::atan2(sin_half, q[0]);  // in [0, 2 pi]
  if (angle > M_PI) angle -= 2.0 * M_PI;            // the shorter way round
  return u * (angle / sin_half);
}

Quat QuatIntegrate(const Quat& q, const Vec3& omega_body, double dt) {
  const double rate = omega_body.norm();
  if (rate == 0) return QuatNormalize(q);
  return QuatNormalize(QuatMultiply(q, QuatFromAxisAngle(omega_body / rate, rate * dt)));
}

Mat3 Skew(const Vec3& v) {
  Mat3 s;
  s << 0, -v[2], v[1],  //
      v[2], 0, -v[0],   //
      -v[1], v[0], 0;
  return s;
}

Mat6 SpatialInertiaMatrix(double mass, const Vec3& com, const Mat3& inertia_com) {
  return RigidInertia::FromCom(mass, com, inertia_com).ToMatrix();
}

Mat6 RigidInertia::ToMatrix() const {
  const Mat3 h = Skew(first_moment);
  Mat6 r;
  r << inertia_at_origin, h, h.transpose(), mass * Mat3::Identity();
  return r;
}

}  // namespace alsim
