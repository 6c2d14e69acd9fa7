// Everything one simulation instance owns: its state and the outputs of every stage, allocated
// once from a Model so that a step allocates nothing. Fields are grouped by the stage that
// computes them (engine/dynamics/*.h), MuJoCo-style; each comment ends with its length.
//
// Spatial convention. Spatial vectors (angular part first) and spatial inertias are expressed in
// world orientation about a reference point per kinematic tree: the origin of the tree's root
// body (the child of the world that the body descends from, Model::body_root), i.e.
// SpatialReferencePoint(m, d, body) = xpos[body_root[body]]. One point per tree keeps the numbers
// small for scenes with many robots far from the world origin (humanoid100), and needs no
// transform between bodies of one tree, so CRBA and RNEA are plain sums (RBDA §2.11, "spatial
// vectors in a single coordinate system"). Trees never exchange spatial quantities: the world's
// velocity is zero and its acceleration (0, -gravity) is a pure translation, which is the same
// about any point.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/data/constraint_set.h"
#include "engine/data/contact.h"
#include "engine/data/islands.h"
#include "engine/data/solver_statistics.h"
#include "engine/linalg/tree_sparse_layout.h"
#include "engine/math/spatial.h"
#include "engine/math/types.h"
#include "engine/model/model.h"

namespace alsim {

class ConstraintSolver;

// A Data's solver, created on its first Step by CreateSolver (engine/solver/solver.h) and destroyed
// through the function stored with it, so that this bottom layer needs no solver header.
struct SolverDeleter {
  void (*destroy)(ConstraintSolver*) = nullptr;
  void operator()(ConstraintSolver* solver) const {
    if (destroy != nullptr) destroy(solver);
  }
};
using SolverHandle = std::unique_ptr<ConstraintSolver, SolverDeleter>;

// The impulses of last step's constraints, for the next step's warm start (SaveWarmStart in
// engine/constraint/build_constraints.h). Sorted by key, as the constraints are.
struct WarmStart {
  std::vector<ConstraintKey> key;
  std::vector<Vec3> position;  // contacts: the contact point, world
  std::vector<Vec3> impulse;   // contacts: the impulse in the world frame; else (lambda, 0, 0)
  // Contacts of condim 4/6: the torsional and rolling impulses as one angular impulse in the world
  // frame (frame * (torsion, rolling1, rolling2)); zero for every other constraint.
  std::vector<Vec3> angular_impulse;
  std::vector<double> delassus_trace;      // Constraint::delassus_trace (negative: none)
  std::vector<std::int32_t> delassus_age;  // Constraint::delassus_age
};

struct Data {
  explicit Data(const Model& m);
  ~Data();
  Data(Data&&) noexcept;
  Data& operator=(Data&&) noexcept;

  // ---- topology derived from the Model, constant after construction
  TreeSparseLayout mass_layout;    // sparsity of M, qLD (branch-induced, from dof_parent)
  std::vector<int> body_last_dof;  // dof nearest to the body on its path to the world; -1 if
                                   // the body cannot move (nbody)

  // ---- state
  double time = 0;           // s
  std::vector<double> qpos;  // generalized positions, MuJoCo layout (nq)
  std::vector<double> qvel;  // generalized velocities, MuJoCo layout (nv)
  std::vector<double> ctrl;  // actuator controls (nu)
  // External force and torque on each body (MuJoCo's xfrc_applied), an input like ctrl: it stays
  // until changed. Stored in MuJoCo's order, NOT alsim's (angular, linear) spatial convention:
  // entries 0..2 are the force (N) and 3..5 the torque (N m), both in the world frame, the force
  // acting at the body's center of mass (xipos). The world body's and static bodies' entries
  // move nothing. AppliedForces() turns them into qfrc_applied. (nbody)
  std::vector<Vec6> xfrc_applied;
  // Tetrahedral deformables' vertex state (Model::vert_*), world frame, beside qpos/qvel: set to
  // the rest positions vert_pos0 and zero velocity by construction and by ResetData /
  // ResetDataKeyframe; ApplyResetNoise and the server's instance start then put the vertices a
  // body carries (vert_body > 0) at that body's frame times vert_body_offset
  // (PlaceAttachedVertices, engine/sim/reset.h). Nothing steps them yet. (nvert each)
  std::vector<Vec3> vert_xpos;  // vertex positions, world, m (nvert)
  std::vector<Vec3> vert_xvel;  // vertex velocities, world, m/s (nvert)
  // Deformable vertices near rigid geoms this step (DeformableCollision), by deformable, geom,
  // vertex.
  std::vector<VertexContact> vertex_contact;
  // Spheres and capsules near deformables' surface triangles, and the corners of boxes and the
  // vertices of meshes near them, this step, by deformable, geom, triangle (or corner).
  std::vector<TriangleContact> triangle_contact;
  // Deformables' vertices near other deformables' surface triangles this step, by the vertex's
  // deformable, the triangle's, vertex.
  std::vector<VertexTriangleContact> vertex_triangle_contact;

  // ---- Kinematics() (engine/dynamics/kinematics.h)
  std::vector<Vec3> xpos;            // body frame origin, world (nbody)
  std::vector<Quat> xquat;           // body frame orientation, world, unit (nbody)
  std::vector<Mat3> xmat;            // body frame rotation matrix, world (nbody)
  std::vector<Vec3> xipos;           // body center of mass, world (nbody)
  std::vector<Mat3> ximat;           // body principal inertia axes, world (nbody)
  std::vector<Vec3> xanchor;         // joint anchor, world (njnt)
  std::vector<Vec3> xaxis;           // hinge/slide axis, world; zero for ball/free (njnt)
  std::vector<Vec6> cdof;            // dof motion subspace (unit-rate spatial velocity it
                                     // produces), world orientation about the tree's reference
                                     // point (nv)
  std::vector<RigidInertia> cinert;  // body spatial inertia about the tree's reference point
  std::vector<Vec3> geom_xpos;       // geom frame origin, world (ngeom)
  std::vector<Mat3> geom_xmat;       // geom frame orientation, world (ngeom)
                                     // (nbody)

  // ---- Velocity() (engine/dynamics/velocity.h)
  std::vector<Vec6> cvel;      // body spatial velocity about the tree's reference point
                               // (nbody)
  std::vector<Vec6> cdof_dot;  // time derivative of cdof (nv)

  // ---- MassMatrix() (engine/dynamics/mass_matrix.h)
  std::vector<RigidInertia> crb;  // composite inertia of the body's subtree (nbody)
  std::vector<double> M;          // joint-space inertia incl. armature, mass_layout (nnz)

  // ---- FactorMassMatrix() (engine/linalg/tree_ldl.h)
  std::vector<double> qLD;  // M = L^T D L: unit-lower L off the diagonal, D on it,
                            // mass_layout (nnz)

  // ---- BiasForces() (engine/dynamics/bias_forces.h)
  std::vector<double> qfrc_bias;  // Coriolis, centrifugal and gravity forces (nv)
  std::vector<Vec6> cacc;         // body acceleration at qacc = 0 with the world accelerating
                                  // at -gravity (nbody)
  std::vector<Vec6> cfrc;         // spatial force the subtree needs (RNEA backward pass)
                                  // (nbody)

  // ---- TendonKinematics() (engine/dynamics/tendon.h)
  std::vector<double> ten_length;    // fixed tendon length L = sum coef q, m or rad (ntendon)
  std::vector<double> ten_velocity;  // dL/dt = sum coef v (ntendon)

  // ---- PassiveForces() (engine/dynamics/passive_forces.h)
  std::vector<double> qfrc_passive;  // joint and tendon springs and damping (nv)

  // ---- AppliedForces() (engine/dynamics/applied_forces.h)
  std::vector<Vec6> cfrc_applied;    // spatial force (torque, force) of xfrc_applied on the
                                     // body's subtree, about the tree's reference point (nbody)
  std::vector<double> qfrc_applied;  // generalized force of xfrc_applied: sum over bodies of
                                     // J_com^T force + J_rot^T torque (nv)

  // ---- ActuatorForces() (engine/dynamics/actuation.h)
  std::vector<double> actuator_length;  // transmission length times gear (nu)
  std::vector<double> actuator_force;   // scalar force of each actuator, after clamping (nu)
  std::vector<double> qfrc_actuator;    // joint forces of all actuators (nv)
  // Slider-crank scratch, sized only when the model has one: site Jacobians (3 x nv each) and the
  // moment arm d length / d qpos of the current actuator (nv).
  Eigen::Matrix<double, 3, Eigen::Dynamic> crank_jacp, slider_jacp, slider_jacr, unused_jacr;
  std::vector<double> transmission_moment;

  // ---- Collision() (engine/collision/collision.h)
  std::vector<int> plane_geoms;                 // planes that can collide with something (constant)
  std::vector<int> sweep_order;                 // the other geoms that can collide, in sweep order
  std::vector<char> geom_in_sweep;              // the geom is in sweep_order (ngeom, constant)
  std::vector<double> geom_speculative_margin;  // extra margin per geom,
                                                // SpeculativeMarginsOfBodies() (ngeom)
  std::vector<Vec3> geom_aabb_lo;     // world bounding box grown by the geom's margin (ngeom)
  std::vector<Vec3> geom_aabb_hi;     // (ngeom)
  std::vector<SweepBox> sweep_boxes;  // the boxes of sweep_order, in that order (scratch)
  std::vector<CollisionCandidate> collision_candidates;  // broadphase output, by geom pair
  // Candidate k's contact slots: kMaxContactsPerPair each, from k kMaxContactsPerPair; in a model
  // with Model::geom_many_contacts geoms, kMaxContactsPerSdfPair for their pairs, from
  // candidate_contact_adr[k] (n + 1 entries, filled only then).
  std::vector<Contact> candidate_contacts;
  std::vector<int> candidate_contact_adr;
  std::vector<int> candidate_contact_count;  // contacts found per candidate
  std::vector<Contact> contact;              // this step's contacts, sorted by (geom1, geom2)

  // ---- Step() / Forward() (engine/sim/step.h)
  // M + (1 - theta) h theta_v D + h^2 theta_q theta_vq K (engine/dynamics/theta_method.h), then
  // its tree LDL^T factor, mass_layout (nnz)
  std::vector<double> qH;
  std::vector<double> qacc;        // generalized acceleration of the smooth dynamics (nv)
  std::vector<double> qvel_start;  // v_k while bias forces are re-evaluated at v_theta (nv)

  // ---- the constraint solve of Step() (engine/constraint, engine/island, engine/solver)
  std::vector<double> qA;          // A = qH's matrix / (1 - theta): eq. (2) of the SubADMM paper,
                                   // eq. (11) of the SAP paper, mass_layout (nnz)
  std::vector<double> qA_factor;   // its tree LDL^T (nnz)
  std::vector<double> v_free;      // v_hat without constraints, A^{-1} b (nv)
  std::vector<double> solver_rhs;  // b = A v_free (nv)
  std::vector<double> v_hat;       // v_hat with constraints: the solver's answer (nv)
  std::vector<double> v_position;  // a split step's v_hat with the corrections, positions' (nv)
  ConstraintSet constraints;       // this step's constraint rows and impulses
  Islands islands;
  WarmStart warm_start;
  SolverStatistics solver_statistics;  // of the last step
  SolverHandle solver;                 // created by the first Step() with a solver type
};

// The point about which the spatial quantities of `body` are expressed (see the file comment).
inline const Vec3& SpatialReferencePoint(const Model& m, const Data& d, int body) {
  return d.xpos[m.body_root[body]];
}

}  // namespace alsim
