#include "engine/dynamics/jacobian.h"

namespace alsim {
namespace {

// The velocity of `point` produced by a unit rate of the dof with subspace s (a motion vector
// about the reference point o): v_o + omega x (point - o) (RBDA eq. 2.22).
Vec3 PointVelocity(const Vec6& s, const Vec3& point_from_reference) {
  return s.tail<3>() + s.head<3>().cross(point_from_reference);
}

}  // namespace

int BodyPathLength(const Data& d, int body) {
  const int last = d.body_last_dof[body];
  return last < 0 ? 0 : d.mass_layout.row_nnz[last];
}

int BodyPathDofs(const Data& d, int body, int* dofs) {
  int n = 0;
  for (int k = d.body_last_dof[body]; k >= 0; k = d.mass_layout.parent[k]) dofs[n++] = k;
  return n;
}

void BodyJacobian(const Model& m, const Data& d, int body, Eigen::Ref<Jacobian6> jac) {
  const Vec3 origin_from_reference = d.xpos[body] - SpatialReferencePoint(m, d, body);
  int c = 0;
  for (int k = d.body_last_dof[body]; k >= 0; k = d.mass_layout.parent[k], ++c) {
    jac.col(c) << d.cdof[k].head<3>(), PointVelocity(d.cdof[k], origin_from_reference);
  }
}

void PointJacobian(const Model& m, const Data& d, int body, const Vec3& point,
                   Eigen::Ref<Jacobian3> jacp, Eigen::Ref<Jacobian3> jacr) {
  jacp.setZero();
  jacr.setZero();
  const Vec3 point_from_reference = point - SpatialReferencePoint(m, d, body);
  for (int k = d.body_last_dof[body]; k >= 0; k = d.mass_layout.parent[k]) {
    jacr.col(k) = d.cdof[k].head<3>();
    jacp.col(k) = PointVelocity(d.cdof[k], point_from_reference);
  }
}

}  // namespace alsim
