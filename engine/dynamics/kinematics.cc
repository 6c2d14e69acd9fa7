#include "engine/dynamics/kinematics.h"

#include "engine/math/spatial.h"

namespace alsim {
namespace {

// A frame being moved by a body's joints: origin and orientation in the world.
struct Frame {
  Vec3 pos;
  Quat quat;
};

// Applies joint `j` to `frame` and records the joint's anchor, axis and the axes of its dof
// motion subspaces. Rotational dofs get only their axis here (the angular part of cdof); the
// linear part needs the tree's reference point, which is known once the root body is placed.
void ApplyJoint(const Model& m, int j, Frame& frame, Data& d) {
  const int qadr = m.jnt_qpos_adr[j];
  const int dof = m.jnt_dof_adr[j];
  const double* q = d.qpos.data() + qadr;
  Vec6* s = d.cdof.data() + dof;
  switch (m.jnt_type[j]) {
    case JointType::kFree: {
      frame.pos = Vec3(q[0], q[1], q[2]);
      frame.quat = QuatNormalize(Quat(q[3], q[4], q[5], q[6]));
      const Mat3 r = QuatToMatrix(frame.quat);
      d.xanchor[j] = frame.pos + r * m.jnt_pos[j];
      d.xaxis[j].setZero();
      for (int k = 0; k < 3; ++k) {
        s[k] = TranslationMotion(Vec3::Unit(k));
        s[3 + k].head<3>() = r.col(k);
      }
      return;
    }
    case JointType::kBall: {
      const Vec3 anchor = frame.pos + QuatRotate(frame.quat, m.jnt_pos[j]);
      frame.quat = QuatMultiply(frame.quat, QuatNormalize(Quat(q[0], q[1], q[2], q[3])));
      const Mat3 r = QuatToMatrix(frame.quat);
      frame.pos = anchor - r * m.jnt_pos[j];  // the anchor stays where it is
      d.xanchor[j] = anchor;
      d.xaxis[j].setZero();
      for (int k = 0; k < 3; ++k) s[k].head<3>() = r.col(k);
      return;
    }
    case JointType::kSlide: {
      const Vec3 axis = QuatRotate(frame.quat, m.jnt_axis[j]);
      d.xanchor[j] = frame.pos + QuatRotate(frame.quat, m.jnt_pos[j]);
      d.xaxis[j] = axis;
      frame.pos += axis * (q[0] - m.qpos0[qadr]);
      s[0] = TranslationMotion(axis);
      return;
    }
    case JointType::kHinge: {
      // A hinge at the body's origin (most of a humanoid's) leaves the origin where it is.
      const bool at_origin = m.jnt_pos[j].isZero(0.0);
      const Vec3 anchor =
          at_origin ? frame.pos : Vec3(frame.pos + QuatRotate(frame.quat, m.jnt_pos[j]));
      const Vec3 axis = QuatRotate(frame.quat, m.jnt_axis[j]);
      frame.quat = QuatMultiply(frame.quat, QuatFromAxisAngle(m.jnt_axis[j], q[0] - m.qpos0[qadr]));
      if (!at_origin) frame.pos = anchor - QuatRotate(frame.quat, m.jnt_pos[j]);
      d.xanchor[j] = anchor;
      d.xaxis[j] = axis;
      s[0].head<3>() = axis;
      return;
    }
  }
}

bool IsRotationalDof(const Model& m, int dof) {
  const int j = m.dof_jnt[dof];
  switch (m.jnt_type[j]) {
    case JointType::kFree:
      return dof - m.jnt_dof_adr[j] >= 3;
    case JointType::kBall:
    case JointType::kHinge:
      return true;
    case JointType::kSlide:
      return false;
  }
  return false;
}

// Frames of body b: parent frame o (body_pos, body_quat), then the joints; then the inertia frame.
// A free joint replaces the frame it is given, so a body whose first joint is free skips the
// parent's; an inertia (or geom) frame with the identity orientation has the body's matrix, bit
// for bit. Most of humanoid100's bodies and geoms are such (the saving:
// docs/benchmarks-history.md).
void PlaceBody(const Model& m, int b, Data& d) {
  const int parent = m.body_parent[b];
  const int jnt_begin = m.body_jnt_adr[b], jnt_end = jnt_begin + m.body_jnt_num[b];
  Frame frame;
  if (jnt_begin == jnt_end || m.jnt_type[jnt_begin] != JointType::kFree) {
    frame = {d.xpos[parent] + d.xmat[parent] * m.body_pos[b],
             QuatMultiply(d.xquat[parent], m.body_quat[b])};
  }
  for (int j = jnt_begin; j < jnt_end; ++j) ApplyJoint(m, j, frame, d);
  d.xpos[b] = frame.pos;
  d.xquat[b] = QuatNormalize(frame.quat);
  d.xmat[b] = QuatToMatrix(d.xquat[b]);
  d.xipos[b] = d.xpos[b] + d.xmat[b] * m.body_ipos[b];
  d.ximat[b] = m.body_iquat[b] == QuatIdentity()
                   ? d.xmat[b]
                   : QuatToMatrix(QuatMultiply(d.xquat[b], m.body_iquat[b]));
}

// A rotation about axis a through the anchor p is the motion vector (a, (p - o) x a) about the
// reference point o (RBDA §2.9).
void CompleteDofSubspaces(const Model& m, int b, Data& d) {
  const Vec3& origin = SpatialReferencePoint(m, d, b);
  const int dof_end = m.body_dof_adr[b] + m.body_dof_num[b];
  for (int k = m.body_dof_adr[b]; k < dof_end; ++k) {
    if (!IsRotationalDof(m, k)) continue;
    const Vec3 axis = d.cdof[k].head<3>();
    d.cdof[k] = RotationMotion(axis, d.xanchor[m.dof_jnt[k]] - origin);
  }
}

// Body inertia about the reference point: R diag(I) R^T about the COM, shifted (RBDA eq. 2.63).
void ComputeBodyInertia(const Model& m, int b, Data& d) {
  const Mat3& r = d.ximat[b];
  Mat3 inertia_com;
  inertia_com.noalias() = r * m.body_inertia[b].asDiagonal() * r.transpose();
  d.cinert[b] = RigidInertia::FromCom(m.body_mass[b], d.xipos[b] - SpatialReferencePoint(m, d, b),
                                      inertia_com);
}

}  // namespace

// Geom frames ride on their bodies: x_geom = x_body + R_body p_geom, R_geom = R_body R(q_geom).
void PlaceGeoms(const Model& m, Data& d, int geom_begin, int geom_end) {
  for (int g = geom_begin; g < geom_end; ++g) {
    const int b = m.geom_body[g];
    d.geom_xpos[g] = d.xpos[b] + d.xmat[b] * m.geom_pos[g];
    d.geom_xmat[g] = m.geom_quat[g] == QuatIdentity()
                         ? d.xmat[b]
                         : Mat3(d.xmat[b] * QuatToMatrix(m.geom_quat[g]));
  }
}

void KinematicsOfWorld(Data& d) {
  d.xpos[0].setZero();
  d.xquat[0] = QuatIdentity();
  d.xmat[0].setIdentity();
  d.xipos[0].setZero();
  d.ximat[0].setIdentity();
  d.cinert[0].SetZero();
}

void KinematicsOfTrees(const Model& m, Data& d, const TreeRange& trees) {
  // Parents precede children, and a tree's root body precedes the rest of the tree, so the
  // reference point is placed before any body of its tree needs it.
  for (int b = trees.body_begin; b < trees.body_end; ++b) {
    PlaceBody(m, b, d);
    if (m.body_dof_num[b] > 0) CompleteDofSubspaces(m, b, d);
    ComputeBodyInertia(m, b, d);
  }
}

void Kinematics(const Model& m, Data& d) {
  KinematicsOfWorld(d);
  KinematicsOfTrees(m, d, TreeRange{1, m.nbody, 0, m.nv});
  PlaceGeoms(m, d, 0, m.ngeom);
}

}  // namespace alsim
