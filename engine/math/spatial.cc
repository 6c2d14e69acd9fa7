#include "engine/math/spatial.h"

#include <cmath>

namespace alsim {

Quat QuatIdentity() { return Quat(1, 0, 0, 0); }

Quat QuatMultiply(const Quat& a, const Quat& b) {
  return Quat(a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
              a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
              a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
              a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]);
}

Quat QuatConjugate(const Quat& q) { return Quat(q[0], -q[1], -q[2], -q[3]); }

// v' = v + 2 w (u x v) + 2 u x (u x v), with q = (w, u): the expanded form of q v q*.
Vec3 QuatRotate(const Quat& q, const Vec3& v) {
  const Vec3 u = q.tail<3>();
  const Vec3 t = 2.0 * u.cross(v);
  return v + q[0] * t + u.cross(t);
}

Mat3 QuatToMatrix(const Quat& q) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  const double xx = x * x, yy = y * y, zz = z * z;
  const double xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z;
  Mat3 r;
  r << 1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),  //
      2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),   //
      2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy);
  return r;
}

Quat QuatFromAxisAngle(const Vec3& axis, double angle) {
  const double s = std::sin(0.5 * angle);
  return Quat(std::cos(0.5 * angle), s * axis[0], s * axis[1], s * axis[2]);
}

Quat QuatNormalize(const Quat& q) {
  const double norm = q.norm();
  return norm > 0 ? Quat(q / norm) : QuatIdentity();
}

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

Vec6 CrossMotion(const Vec6& v, const Vec6& m) {
  const Vec3 w = v.head<3>(), vv = v.tail<3>();
  const Vec3 mw = m.head<3>(), mv = m.tail<3>();
  Vec6 r;
  r << w.cross(mw), w.cross(mv) + vv.cross(mw);
  return r;
}

Vec6 CrossForce(const Vec6& v, const Vec6& f) {
  const Vec3 w = v.head<3>(), vv = v.tail<3>();
  const Vec3 fn = f.head<3>(), ff = f.tail<3>();
  Vec6 r;
  r << w.cross(fn) + vv.cross(ff), w.cross(ff);
  return r;
}

Mat6 SpatialInertiaMatrix(double mass, const Vec3& com, const Mat3& inertia_com) {
  return RigidInertia::FromCom(mass, com, inertia_com).ToMatrix();
}

// I_O = I_c + m [c]x [c]x^T = I_c + m (|c|^2 1 - c c^T) (parallel axis theorem).
RigidInertia RigidInertia::FromCom(double mass, const Vec3& com, const Mat3& inertia_com) {
  RigidInertia inertia;
  inertia.mass = mass;
  inertia.first_moment = mass * com;
  inertia.inertia_at_origin =
      inertia_com + mass * (com.squaredNorm() * Mat3::Identity() - com * com.transpose());
  return inertia;
}

void RigidInertia::SetZero() {
  mass = 0;
  first_moment.setZero();
  inertia_at_origin.setZero();
}

RigidInertia& RigidInertia::operator+=(const RigidInertia& other) {
  mass += other.mass;
  first_moment += other.first_moment;
  inertia_at_origin += other.inertia_at_origin;
  return *this;
}

Vec6 RigidInertia::Apply(const Vec6& v) const {
  const Vec3 w = v.head<3>(), vo = v.tail<3>();
  Vec6 r;
  r << inertia_at_origin * w + first_moment.cross(vo), mass * vo - first_moment.cross(w);
  return r;
}

Mat6 RigidInertia::ToMatrix() const {
  const Mat3 h = Skew(first_moment);
  Mat6 r;
  r << inertia_at_origin, h, h.transpose(), mass * Mat3::Identity();
  return r;
}

}  // namespace alsim
