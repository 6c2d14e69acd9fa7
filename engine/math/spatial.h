// Quaternion and spatial-vector (Plücker) helpers on the fixed-size types of types.h.
//
// Quaternions are (w, x, y, z) and unit; a quaternion q maps body-frame vectors to the parent
// frame (v_parent = q v_body q*). Spatial vectors put the angular part first (Featherstone, RBDA
// ch. 2): a motion vector is (omega, v_O) and a force vector is (n_O, f), both about a reference
// point O that the caller chooses.
#pragma once

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

}  // namespace alsim
