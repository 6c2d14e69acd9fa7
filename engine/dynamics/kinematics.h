// Forward kinematics: body and inertia frames, joint anchors and axes, dof motion subspaces and
// body spatial inertias for the configuration d.qpos (RBDA §4.1 with MuJoCo's joint semantics).
#pragma once

#include "engine/data/data.h"
#include "engine/dynamics/tree_range.h"
#include "engine/model/model.h"

namespace alsim {

// Computes xpos, xquat, xmat, xipos, ximat, xanchor, xaxis, cdof, cinert and the geom frames
// geom_xpos, geom_xmat from d.qpos.
//
// A body's frame is its parent's frame composed with (body_pos, body_quat), then moved by the
// body's joints in order, each joint acting on the frame left by the previous one:
//   slide: translate along the axis by q - qpos0
//   hinge: rotate about the axis through the anchor by q - qpos0
//   ball:  rotate about the anchor by the (normalized) quaternion qpos
//   free:  the frame is (qpos[0:3], normalized qpos[3:7]) in the world (top-level bodies only)
// A ball joint's and a free joint's rotational dofs turn about the axes of the frame right after
// the joint (the body frame when it is the body's last joint); a free joint's translational dofs
// move along the world axes.
void Kinematics(const Model& m, Data& d);

// The stages of Kinematics, for running trees in parallel: the world body's frame, then the bodies
// of `trees` (their parents are the world or inside the range), then geoms [begin, end) (each on
// its own; needs their bodies placed).
void KinematicsOfWorld(Data& d);
void KinematicsOfTrees(const Model& m, Data& d, const TreeRange& trees);
void PlaceGeoms(const Model& m, Data& d, int geom_begin, int geom_end);

}  // namespace alsim
