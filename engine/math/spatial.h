// Quaternion and spatial-vector (Plücker) helpers on the fixed-size types of types.h.
//
// Quaternions are (w, x, y, z) and unit; a quaternion q maps body-frame vectors to the parent
// frame (v_parent = q v_body q*). Spatial vectors put the angular part first (Featherstone, RBDA
// ch. 2): a motion vector is (omega, v_O) and a force vector is (n_O, f), both about a reference
// point O that the caller chooses.
#pragma once

#include <cmath>

#include <Eigen/Geometry>

#include "engine/math/types.h"

namespace alsim {

// ---- quaternions

Quat QuatIdentity();
Quat QuatMultiply(const Quat& a, const Quat& b);  // Hamilton product a * b
Quat QuatConjugate(const Quat& q);
Vec3 QuatRotate(const Quat& q, const Vec3& v);  // q v q*
Mat3 QuatToMatrix(const Quat& q);               // rotation matrix of a unit quaternion
// Rotation by `angle` (rad) about the unit vector `axis`.
Quat QuatFromAxisAngle(const Vec3& axis, double angle);
// q / |q|; the identity when |q| is zero.
Quat QuatNormalize(const Quat& q);
// Rotation vector (axis * angle, angle in [-pi, pi]) of a unit quaternion: the inverse of
// QuatFromAxisAngle.
Vec3 QuatToRotationVector(const Quat& q);
// The orientation after rotating for `dt` at the constant angular velocity `omega_body` given in
// the rotating (body) frame: q * exp(omega_body * dt / 2), normalized.
Quat QuatIntegrate(const Quat& q, const Vec3& omega_body, double dt);

// Skew-symmetric matrix [v]x with [v]x u = v x u.
Mat3 Skew(const Vec3& v);

// ---- spatial vectors (RBDA §2.9)

inline Vec3 Angular(const Vec6& s) { return s.head<3>(); }
inline Vec3 Linear(const Vec6& s) { return s.tail<3>(); }

// Motion cross product v x m (RBDA eq. 2.31): [w x m_w; w x m_v + v_v x m_w].
Vec6 CrossMotion(const Vec6& v, const Vec6& m);
// Force cross product v x* f (RBDA eq. 2.32): [w x f_n + v_v x f_f; w x f_f].
Vec6 CrossForce(const Vec6& v, const Vec6& f);

// The motion vector, about reference point O, of a unit-rate rotation about `axis` through the
// point `r` (given relative to O): (axis, r x axis).
inline Vec6 RotationMotion(const Vec3& axis, const Vec3& r) {
  Vec6 s;
  s << axis, r.cross(axis);
  return s;
}
// The motion vector of a unit-rate translation along `axis` (independent of O): (0, axis).
inline Vec6 TranslationMotion(const Vec3& axis) {
  Vec6 s;
  s << Vec3::Zero(), axis;
  return s;
}

// 6x6 spatial inertia about O of a body of mass `mass` whose center of mass is at `com` (relative
// to O) and whose rotational inertia about the center of mass is `inertia_com` (RBDA eq. 2.63):
//   [ I_c + m [c]x [c]x^T   m [c]x ]
//   [ m [c]x^T              m 1    ]
Mat6 SpatialInertiaMatrix(double mass, const Vec3& com, const Mat3& inertia_com);

// The same spatial inertia in 10 numbers, which is all that composite-inertia sums and products
// with motion vectors need: mass m, first moment h = m c and rotational inertia about O,
// I_O = I_c + m ([c]x [c]x^T). Sums of RigidInertia about one point are the inertia of the union.
struct RigidInertia {
  double mass = 0;
  Vec3 first_moment = Vec3::Zero();       // m c, kg m
  Mat3 inertia_at_origin = Mat3::Zero();  // I_O, kg m^2

  static RigidInertia FromCom(double mass, const Vec3& com, const Mat3& inertia_com);

  void SetZero();
  RigidInertia& operator+=(const RigidInertia& other);
  // The momentum I v of a motion vector v = (w, v_O): (I_O w + h x v_O, m v_O - h x w).
  Vec6 Apply(const Vec6& v) const;
  Mat6 ToMatrix() const;
};

// ---- definitions of the small helpers above that every step's kinematics and dynamics call
// many times per body: inline, so that they are optimized in place.

inline Quat QuatIdentity() { return Quat(1, 0, 0, 0); }

inline Quat QuatMultiply(const Quat& a, const Quat& b) {
  return Quat(a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
              a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
              a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
              a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]);
}

inline Quat QuatConjugate(const Quat& q) { return Quat(q[0], -q[1], -q[2], -q[3]); }

// v' = v + 2 w (u x v) + 2 u x (u x v), with q = (w, u): the expanded form of q v q*.
inline Vec3 QuatRotate(const Quat& q, const Vec3& v) {
  const Vec3 u = q.tail<3>();
  const Vec3 t = 2.0 * u.cross(v);
  return v + q[0] * t + u.cross(t);
}

inline Mat3 QuatToMatrix(const Quat& q) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  const double xx = x * x, yy = y * y, zz = z * z;
  const double xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z;
  Mat3 r;
  r << 1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),  //
      2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),   //
      2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy);
  return r;
}

inline Quat QuatFromAxisAngle(const Vec3& axis, double angle) {
  const double s = std::sin(0.5 * angle);
  return Quat(std::cos(0.5 * angle), s * axis[0], s * axis[1], s * axis[2]);
}

inline Quat QuatNormalize(const Quat& q) {
  const double norm = q.norm();
  return norm > 0 ? Quat(q / norm) : QuatIdentity();
}

inline Vec6 CrossMotion(const Vec6& v, const Vec6& m) {
  const Vec3 w = v.head<3>(), vv = v.tail<3>();
  const Vec3 mw = m.head<3>(), mv = m.tail<3>();
  Vec6 r;
  r << w.cross(mw), w.cross(mv) + vv.cross(mw);
  return r;
}

inline Vec6 CrossForce(const Vec6& v, const Vec6& f) {
  const Vec3 w = v.head<3>(), vv = v.tail<3>();
  const Vec3 fn = f.head<3>(), ff = f.tail<3>();
  Vec6 r;
  r << w.cross(fn) + vv.cross(ff), w.cross(ff);
  return r;
}

// I_O = I_c + m [c]x [c]x^T = I_c + m (|c|^2 1 - c c^T) (parallel axis theorem).
inline RigidInertia RigidInertia::FromCom(double mass, const Vec3& com, const Mat3& inertia_com) {
  RigidInertia inertia;
  inertia.mass = mass;
  inertia.first_moment = mass * com;
  inertia.inertia_at_origin =
      inertia_com + mass * (com.squaredNorm() * Mat3::Identity() - com * com.transpose());
  return inertia;
}

inline void RigidInertia::SetZero() {
  mass = 0;
  first_moment.setZero();
  inertia_at_origin.setZero();
}

inline RigidInertia& RigidInertia::operator+=(const RigidInertia& other) {
  mass += other.mass;
  first_moment += other.first_moment;
  inertia_at_origin += other.inertia_at_origin;
  return *this;
}

inline Vec6 RigidInertia::Apply(const Vec6& v) const {
  const Vec3 w = v.head<3>(), vo = v.tail<3>();
  Vec6 r;
  r << inertia_at_origin * w + first_moment.cross(vo), mass * vo - first_moment.cross(w);
  return r;
}

}  // namespace alsim
