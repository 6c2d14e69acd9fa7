#include "engine/solver/drumwright/row_acceleration.h"

#include "engine/constraint/build_constraints.h"
#include "engine/math/spatial.h"

namespace alsim {
namespace {

// The motion of a material point at qacc = 0: its velocity and acceleration (header comment).
struct PointMotion {
  Vec3 velocity = Vec3::Zero();
  Vec3 acceleration = Vec3::Zero();
};

// Body b's bias acceleration about the fixed point at its tree's reference point: the sum of
// cdof_dot[k] qvel[k] over the dofs on its path to the world (zero for the world and bodies
// welded to it).
Vec6 BiasAcceleration(const Model& m, const Data& d, int body) {
  Vec6 acceleration = Vec6::Zero();
  int b = body;
  while (b > 0 && m.body_dof_num[b] == 0) b = m.body_parent[b];
  if (b <= 0) return acceleration;
  for (int dof = m.body_dof_adr[b] + m.body_dof_num[b] - 1; dof >= 0; dof = m.dof_parent[dof]) {
    acceleration += d.cdof_dot[dof] * d.qvel[dof];
  }
  return acceleration;
}

// v_p = v_b + w_b x r and a_p = a_b + alpha_b x r + w_b x v_p with r = p - O, for the point p
// fixed in `body`; zero for a body without a slack block (the world, a static body).
PointMotion MaterialPointMotion(const Model& m, const Data& d, int body, const Vec3& point) {
  PointMotion motion;
  if (m.body_subsystem[body] < 0) return motion;
  const Vec3 r = point - SpatialReferencePoint(m, d, body);
  const Vec6& velocity = d.cvel[body];
  const Vec3 w = velocity.head<3>();
  motion.velocity = velocity.tail<3>() + w.cross(r);
  const Vec6 bias = BiasAcceleration(m, d, body);
  motion.acceleration = bias.tail<3>() + bias.head<3>().cross(r) + w.cross(motion.velocity);
  return motion;
}

// Body b's angular velocity and angular acceleration at qacc = 0 (zero without a slack block).
void AngularMotion(const Model& m, const Data& d, int body, Vec3* w, Vec3* alpha) {
  w->setZero();
  alpha->setZero();
  if (m.body_subsystem[body] < 0) return;
  *w = d.cvel[body].head<3>();
  *alpha = BiasAcceleration(m, d, body).head<3>();
}

// True when every block of constraint c maps body velocities by +-[I 0] (alsim's rotation rows).
bool HasWorldAxisRotationRows(const Data& d, const Constraint& c, int body1) {
  for (int k = c.block_adr; k < c.block_adr + c.block_num; ++k) {
    const ConstraintBlock& block = d.constraints.blocks[k];
    if (block.body < 0) return false;
    const double sign = block.body == body1 ? 1.0 : -1.0;
    if (!(block.map.leftCols<3>() == sign * Mat3::Identity())) return false;
    if (!block.map.rightCols<3>().isZero(0)) return false;
  }
  return true;
}

// The Hamilton product of pure quaternions, (0, a) (0, b) = (-a . b, a x b).
Quat PureProduct(const Vec3& a, const Vec3& b) {
  Quat q;
  q << -a.dot(b), a.cross(b);
  return q;
}

Quat Pure(const Vec3& a) {
  Quat q;
  q << 0.0, a;
  return q;
}

bool EqualityRows(const Model& m, const Data& d, const Constraint& c, double* out) {
  const int eq = c.key.a;
  const int body1 = m.eq_body1[eq], body2 = m.eq_body2[eq];
  const bool weld = m.eq_type[eq] == EqualityType::kWeld;
  if (!weld && m.eq_type[eq] != EqualityType::kConnect) return false;
  if (c.dim != 3) return false;
  if (c.key.b == 0) {
    const EqualityError error = EqualityErrors(m, d, eq);
    const Vec3 a = MaterialPointMotion(m, d, body1, error.point1).acceleration -
                   MaterialPointMotion(m, d, body2, error.point2).acceleration;
    for (int r = 0; r < 3; ++r) out[r] = a[r];
    return true;
  }
  if (!weld || c.key.b != 1) return false;
  Vec3 w1, alpha1, w2, alpha2;
  AngularMotion(m, d, body1, &w1, &alpha1);
  AngularMotion(m, d, body2, &w2, &alpha2);
  if (HasWorldAxisRotationRows(d, c, body1)) {
    const Vec3 a = alpha1 - alpha2;
    for (int r = 0; r < 3; ++r) out[r] = a[r];
    return true;
  }
  // MuJoCo's rows: c Im(q2* (0, u) t), differentiated (header comment).
  const Quat target = QuatMultiply(d.xquat[body1], m.eq_relquat[eq]);
  const Quat conjugate2 = QuatConjugate(d.xquat[body2]);
  const Vec3 u = w1 - w2;
  const Quat inner = Pure(alpha1 - alpha2) + 0.5 * (PureProduct(u, w1) - PureProduct(w2, u));
  const Quat product = QuatMultiply(QuatMultiply(conjugate2, inner), target);
  const Vec3 a = 0.5 * m.eq_torquescale[eq] * product.tail<3>();
  for (int r = 0; r < 3; ++r) out[r] = a[r];
  return true;
}

bool FoundationRow(const Model& m, const Data& d, const Constraint& c, double* out) {
  const int e = c.key.a;
  if (e < 0 || e >= static_cast<int>(m.foundation_site.size()) || c.dim != 1) return false;
  const int site = m.foundation_site[e], plane = m.foundation_geom[e];
  const int body = m.site_body[site];
  if (m.body_subsystem[m.geom_body[plane]] >= 0) return false;  // a moving plane: MuJoCo has none
  const Vec3 point = d.xpos[body] + d.xmat[body] * m.site_pos[site];
  const Vec3 normal = d.geom_xmat[plane].col(2);
  const PointMotion motion = MaterialPointMotion(m, d, body, point);
  // a plane lies in a static body: its normal does not move
  out[0] = normal.dot(motion.acceleration);
  return true;
}

// Rows of joint-space blocks only: G is constant, Gd v = 0.
bool ConstantRows(const Data& d, const Constraint& c, double* out) {
  for (int k = c.block_adr; k < c.block_adr + c.block_num; ++k) {
    if (d.constraints.blocks[k].body >= 0) return false;
  }
  for (int r = 0; r < c.dim; ++r) out[r] = 0.0;
  return true;
}

bool Compute(const Model& m, const Data& d, const Constraint& c, double* out) {
  switch (c.key.kind) {
    case kKindEquality:
      return c.type == ConstraintType::kEquality && EqualityRows(m, d, c, out);
    case kKindLimit:
    case kKindSoft:
    case kKindFriction:
    case kKindTendonLimit:
      return ConstantRows(d, c, out);
    case kKindFoundation:
      return FoundationRow(m, d, c, out);
    case kKindContact:
    default:
      return false;
  }
}

}  // namespace

bool RowVelocityProductAcceleration(const Model& m, const Data& d, int constraint, double* out) {
  const Constraint& c = d.constraints.constraints[constraint];
  if (Compute(m, d, c, out)) return true;
  for (int r = 0; r < c.dim; ++r) out[r] = 0.0;
  return false;
}

}  // namespace alsim
