// The immutable description of one scene, shared by every instance that simulates it.
//
// Built once from MJCF/URDF through libmujoco's compiler (engine/model/model_import.h) and never
// modified afterwards. Indexing and generalized-coordinate layout are MuJoCo's exactly (same body,
// joint, dof, geom and actuator ids; same qpos/qvel layout), so that MuJoCo can serve as an oracle
// and users can move states between the two:
//   - free joint: qpos = position (3), unit quaternion w,x,y,z (4); qvel = linear velocity of the
//     body origin in the world frame (3), angular velocity in the body frame (3)
//   - ball joint: qpos = unit quaternion (4) relative to the parent; qvel = angular velocity in the
//     child (body) frame (3)
//   - hinge / slide: one angle (rad) / displacement (m), measured from qpos0
// Arrays are flat, one entry per element, and named <element>_<field> as in MuJoCo; each comment
// ends with its length. Body 0 is the world.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/math/types.h"

namespace alsim {

// Cells along each edge of a mesh's cube map of walk starts (Model::mesh_graph_dir_start).
inline constexpr int kMeshStartCells = 16;

// Values equal MuJoCo's mjtJoint.
enum class JointType : std::uint8_t { kFree = 0, kBall = 1, kSlide = 2, kHinge = 3 };

// Values equal MuJoCo's mjtGeom.
enum class GeomType : std::uint8_t {
  kPlane = 0,
  kHeightField = 1,
  kSphere = 2,
  kCapsule = 3,
  kEllipsoid = 4,
  kCylinder = 5,
  kBox = 6,
  kMesh = 7,
  // alsim's own, not MuJoCo 2.2.2's: an analytic signed distance field (Model::geom_sdf). The
  // scene declares it on a proxy geom (custom text alsim:sdf:GEOM, docs/engine.md); later
  // MuJoCo versions number their mjGEOM_SDF 8 as well.
  kSdf = 8,
};

// The kinds of SDF geoms (Model::sdf_kind) and their parameters in Model::sdf_param.
enum class SdfKind : std::uint8_t {
  kRevolution = 0,  // SdfRevolution (engine/collision/sdf_revolution.h): a_r a_z b_r b_z padding
  kThread = 1,      // SdfThread (engine/collision/sdf_thread.h): major_diameter pitch z0 z1
                    // handedness (+1 right, -1 left)
};

// How an actuator applies its force (MuJoCo's mjtTrn, the kinds alsim supports).
enum class ActuatorTransmission : std::uint8_t {
  kJoint,        // a hinge or slide joint: length = q, moment arm = 1
  kSliderCrank,  // a crank site driven by a rod of fixed length from a slider site
  kTendon,       // a fixed tendon: length = the tendon's length L, moment arm = its coefficients
  kActivation,   // a deformable's activation (Model::activation_*): no force on the dofs; its
                 // control is the activation a of its tets (alsim's, not MuJoCo's)
};

// Values equal MuJoCo's mjtEq (only the kinds alsim supports).
enum class EqualityType : std::uint8_t { kConnect = 0, kWeld = 1 };

// The most joints a fixed tendon may couple (after merging repeated joints): each becomes a
// slack block of the tendon's limit and servo rows, and the solvers keep a constraint's blocks
// on the stack. The importer refuses longer tendons by name.
constexpr int kMaxTendonJoints = 16;

// Number of qpos / qvel entries of a joint.
int JointQposSize(JointType type);
int JointDofSize(JointType type);

// MuJoCo's friction cones (option/cone): pyramidal (2 (condim - 1) edge rows per contact) or
// elliptic (condim rows inside the cone).
enum class FrictionCone { kPyramidal, kElliptic };

// solref and solimp as MuJoCo stores them (mjNREF = 2, mjNIMP = 5).
using SolRef = std::array<double, 2>;
using SolImp = std::array<double, 5>;

struct Model {
  // ---- sizes
  int nq = 0;          // generalized positions
  int nv = 0;          // degrees of freedom (generalized velocities)
  int nbody = 0;       // bodies, including the world (body 0)
  int njnt = 0;        // joints
  int ngeom = 0;       // geoms
  int nmesh = 0;       // meshes
  int nsite = 0;       // sites (named frames attached to bodies)
  int nu = 0;          // actuators
  int neq = 0;         // equality constraints
  int nexclude = 0;    // body pairs excluded from collision
  int npair = 0;       // geom pairs always checked for collision, with their own parameters
  int ntendon = 0;     // tendons (MuJoCo's numbering; only fixed ones act, see below)
  int nwrap = 0;       // joints of the fixed tendons, all tendons together
  int nsubsystem = 0;  // kinematic trees rooted at the world that have at least one dof
  int nkey = 0;        // keyframes (MJCF <key>)
  int nsdf = 0;        // SDF geoms (alsim:sdf custom text)

  // ---- options
  double timestep = 1.0 / 240.0;  // s; MJCF option/timestep wins over the default
  Vec3 gravity{0, 0, -9.81};      // m/s^2; zero when the scene disables gravity

  // ---- collision options
  bool constraints_enabled = true;  // false when the scene disables every constraint: contacts,
                                    // limits, implicit servos (option/flag constraint)
  bool equalities_enabled = true;   // false when the scene disables equality constraints
  bool limits_enabled = true;       // false when the scene disables joint limits (flag limit)
  bool contact_enabled = true;      // false when the scene disables contacts (option/flag contact)
  bool filter_parent = true;  // skip geoms of a body and its parent body, unless the parent is
                              // the world (option/flag filterparent)

  // false when the scene disables dry joint friction (option/flag frictionloss)
  bool frictionloss_enabled = true;

  // ---- MuJoCo's soft-constraint model (read only by the solvers of that model,
  // engine/solver/mujoco): every constraint row is regularized by solref (timeconst, dampratio;
  // or -stiffness, -damping when negative) and solimp (dmin, dmax, width, midpoint, power), the
  // friction cone is pyramidal or elliptic (option/cone) and impratio scales the friction rows'
  // regularization (option/impratio). Per-element arrays below carry each element's pair.
  FrictionCone cone = FrictionCone::kPyramidal;  // MuJoCo's default
  double impratio = 1;
  bool refsafe = true;  // timeconst >= 2 timestep (MuJoCo's refsafe flag, on unless disabled)

  // ---- bodies (nbody)
  std::vector<std::string> body_name;
  std::vector<int> body_parent;     // parent body; -1 for the world
  std::vector<int> body_root;       // top-level ancestor (child of the world); 0 for the world
  std::vector<int> body_subsystem;  // subsystem of the body; -1 if it cannot move (world, static)
  std::vector<int> body_weld;  // body it is welded to: the nearest ancestor-or-self with a joint,
                               // 0 when welded to the world (MuJoCo's body_weldid)
  std::vector<int> body_jnt_adr;  // first joint; -1 if none
  std::vector<int> body_jnt_num;  // number of joints
  std::vector<int> body_dof_adr;  // first dof; -1 if none
  std::vector<int> body_dof_num;  // number of dofs
  std::vector<Vec3> body_pos;     // body frame origin in the parent body frame (at qpos0)
  std::vector<Quat> body_quat;    // body frame orientation in the parent body frame (at qpos0)
  std::vector<Vec3> body_ipos;    // center of mass in the body frame
  std::vector<Quat> body_iquat;   // principal inertia axes in the body frame
  std::vector<double> body_mass;  // kg
  // MuJoCo's body_invweight0: mean inverse translational and rotational weight at qpos0, the
  // diagonal approximation of J M^-1 J^T that sets each soft row's regularization R
  std::vector<Eigen::Vector2d> body_invweight0;
  std::vector<Vec3> body_inertia;  // principal moments of inertia about the COM, kg m^2

  // ---- joints (njnt)
  std::vector<std::string> jnt_name;
  std::vector<JointType> jnt_type;
  std::vector<int> jnt_body;            // body the joint moves
  std::vector<int> jnt_qpos_adr;        // first qpos entry
  std::vector<int> jnt_dof_adr;         // first dof
  std::vector<Vec3> jnt_pos;            // anchor in the body frame
  std::vector<Vec3> jnt_axis;           // unit axis in the body frame (hinge, slide)
  std::vector<double> jnt_stiffness;    // spring stiffness toward qpos_spring, N/m or Nm/rad
  std::vector<bool> jnt_limited;        // has a position limit
  std::vector<double> jnt_range_lower;  // limit (hinge: rad, slide: m; ball: max angle in [1])
  std::vector<double> jnt_range_upper;
  std::vector<double> jnt_margin;  // a limit row exists below this distance to a bound
  std::vector<SolRef> jnt_solref;  // the limit rows' (MuJoCo's model)
  std::vector<SolImp> jnt_solimp;

  // ---- dofs (nv)
  std::vector<int> dof_body;             // body the dof moves
  std::vector<int> dof_jnt;              // joint the dof belongs to
  std::vector<int> dof_parent;           // previous dof on the path to the world; -1 if none
  std::vector<double> dof_armature;      // rotor inertia added to the mass matrix diagonal
  std::vector<double> dof_damping;       // viscous damping, N s/m or Nm s/rad
  std::vector<double> dof_frictionloss;  // dry joint friction, N or N m: a kFriction constraint
                                         // row where positive (engine/data/constraint_set.h)
  std::vector<double> dof_invweight0;    // MuJoCo's: the dof's inverse weight at qpos0
  std::vector<SolRef> dof_solref;        // the frictionloss row's (MuJoCo's model)
  std::vector<SolImp> dof_solimp;

  // ---- generalized positions (nq)
  std::vector<double> qpos0;        // reference configuration (joint angles measured from it)
  std::vector<double> qpos_spring;  // spring rest configuration

  // ---- subsystems (nsubsystem): trees rooted at the world; their bodies and dofs are contiguous
  std::vector<int> subsystem_root_body;  // top-level body of the tree
  std::vector<int> subsystem_body_adr;   // first body
  std::vector<int> subsystem_body_num;
  std::vector<int> subsystem_dof_adr;  // first dof
  std::vector<int> subsystem_dof_num;

  // ---- geoms (ngeom)
  std::vector<std::string> geom_name;
  std::vector<GeomType> geom_type;
  std::vector<int> geom_body;
  std::vector<Vec3> geom_pos;   // in the body frame
  std::vector<Quat> geom_quat;  // in the body frame
  std::vector<Vec3> geom_size;  // MuJoCo's size parameters of the type (radius, half-lengths...)
  std::vector<Vec3> geom_friction;  // sliding, torsional, rolling coefficients
  std::vector<int> geom_contype;    // collision bitmask (MuJoCo's filtering rules)
  std::vector<int> geom_conaffinity;
  std::vector<int> geom_condim;  // contact dimensionality requested by the scene
  // The first geom (or explicit pair's geom1) whose contacts can have condim 4 or 6, -1 if none.
  int high_condim_geom = -1;
  std::vector<int> geom_priority;   // the higher priority geom's friction wins
  std::vector<double> geom_margin;  // contacts are generated below this distance, m
  std::vector<double> geom_gap;
  std::vector<SolRef> geom_solref;  // MuJoCo's model: mixed by solmix, or the higher priority's
  std::vector<SolImp> geom_solimp;
  std::vector<double> geom_solmix;
  std::vector<double> geom_rbound;  // bounding-sphere radius around geom_pos, m
  std::vector<int> geom_mesh;       // mesh id for kMesh; -1 otherwise
  // Compliant contact (the ICF solvers; custom text alsim:contact:GEOM, docs/engine.md): the
  // geom's stiffness k (N/m), Hunt & Crossley dissipation d (s/m) and stiction speed v_s (m/s);
  // negative where the scene sets none (the solver's option applies).
  std::vector<double> geom_contact_stiffness;
  std::vector<double> geom_contact_dissipation;
  std::vector<double> geom_stiction_speed;
  // Pairs whose contact sets its own values (custom text alsim:contact:GEOM1:GEOM2): the geoms
  // (geom1 < geom2) and the values, negative where unset (the geoms' combined value applies).
  std::vector<int> contact_pair_geom1;
  std::vector<int> contact_pair_geom2;
  std::vector<double> contact_pair_stiffness;
  std::vector<double> contact_pair_dissipation;
  std::vector<double> contact_pair_stiction_speed;
  // Anisotropic friction (ICF, Appendix B; alsim:contact keys friction_x, friction_y): a geom's
  // coefficients along its local x and y axes projected onto the contact's tangent plane
  // (AnisotropicFriction in engine/solver/icf/icf_contact.h), negative where the scene sets none.
  std::vector<double> geom_friction_x;
  std::vector<double> geom_friction_y;
  // A pair's (contact_pair_geom1/2), negative where unset, along the axes of
  // contact_pair_friction_geom: the pair text's first-named geom.
  std::vector<double> contact_pair_friction_x;
  std::vector<double> contact_pair_friction_y;
  std::vector<int> contact_pair_friction_geom;
  // Drumwright's contact springs (engine/solver/drumwright; alsim:contact keys damping and
  // hertz): a geom's normal damper B_n (N s/m) and Hertz modulus E* (Pa; the law K_n = E*
  // sqrt(r), phi_n = -d^(3/2) instead of the linear stiffness), and a pair's; negative where unset.
  std::vector<double> geom_contact_damping;
  std::vector<double> geom_hertz_modulus;
  std::vector<double> contact_pair_damping;
  std::vector<double> contact_pair_hertz_modulus;
  // Drumwright's springs on limits and equalities (custom text alsim:joint:NAME,
  // alsim:tendon:NAME, alsim:equality:NAME): K (N/m or N m/rad) and B (N s/m or N m s/rad) per
  // joint (its limits), tendon (its limits) and equality; negative where unset.
  std::vector<double> jnt_spring_stiffness;
  std::vector<double> jnt_spring_damping;
  std::vector<double> tendon_spring_stiffness;
  std::vector<double> tendon_spring_damping;
  std::vector<double> eq_spring_stiffness;
  std::vector<double> eq_spring_damping;
  // Elastic (Winkler) foundations (custom text alsim:foundation:PLANE, docs/engine.md): element
  // e is a point of a body, a box site's centre, pressing on a plane geom by a frictionless
  // unilateral row (phi = the point's height above the plane); Drumwright's solver gives it
  // K = E area / depth (the site's footprint 4 size_x size_y) and the text's damping B.
  std::vector<int> foundation_site;
  std::vector<int> foundation_geom;
  std::vector<double> foundation_stiffness;  // N/m
  std::vector<double> foundation_damping;    // N s/m
  // Tetrahedral deformables (custom text alsim:deformables naming a companion file,
  // engine/model/deformable_spec.h; issue 48). Deformable d owns vertices [deform_vert_adr[d],
  // + deform_vert_num[d]), tets and surface triangles likewise, all indices global. Vertices live
  // in the world frame beside qpos/qvel (Data's vertex state), each with its lumped mass
  // rho V_e / 4 from every tet it belongs to; vert_body is -1 for a free vertex, 0 for one pinned
  // in the world, else the body that carries it at vert_body_offset (its body frame, at qpos0).
  // A tet's rest volume V_e and Dm^-1 (Dm = [X1 - X0, X2 - X0, X3 - X0], positive volume) give
  // F = Ds Dm^-1; surface triangles are the faces of exactly one tet, wound outward.
  // Activation k is actuator activation_actuator[k] (ActuatorTransmission::kActivation, appended
  // after MuJoCo's actuators, ctrl range = activation_range): its control a grows the rest shape
  // of its tets (activation_tet) by 1 + a in every direction about each tet's centroid (a
  // uniform internal volumetric stress, the paper's PneuNet inflation, Sec 10.1.4). A tet
  // belongs to at most one activation; lower > -1.
  int ndeform = 0;
  int nvert = 0;
  int ntet = 0;
  std::vector<std::string> deform_name;
  std::vector<std::uint8_t> deform_material;  // DeformableMaterial
  std::vector<double> deform_young;           // Pa
  std::vector<double> deform_poisson;
  std::vector<double> deform_density;  // kg/m^3
  std::vector<double> deform_friction;
  std::vector<double> deform_thickness;  // m
  std::vector<std::array<float, 4>> deform_rgba;
  std::vector<int> deform_vert_adr, deform_vert_num;
  std::vector<int> deform_tet_adr, deform_tet_num;
  std::vector<int> deform_tri_adr, deform_tri_num;
  std::vector<Vec3> vert_pos0;    // rest positions in the world, m
  std::vector<double> vert_mass;  // kg
  std::vector<int> vert_deform;
  std::vector<int> vert_body;
  std::vector<Vec3> vert_body_offset;  // in the body frame
  std::vector<std::array<int, 4>> tet_vert;
  std::vector<double> tet_volume;      // V_e, m^3
  std::vector<Mat3> tet_rest_inverse;  // Dm^-1
  std::vector<std::array<int, 3>> tri_vert;
  std::vector<std::string> activation_name;
  std::vector<int> activation_deform;
  std::vector<std::array<double, 2>> activation_range;
  std::vector<int> activation_tet_adr, activation_tet_num;
  std::vector<int> activation_tet;
  std::vector<int> activation_actuator;
  // SDF geoms and concave meshes (custom text alsim:sdf:GEOM and alsim:concave:GEOM,
  // docs/engine.md). geom_sdf: the geom's index into the sdf_* arrays, -1 for other geoms.
  // geom_concave: a mesh geom that collides by its triangles (mesh_face), not its convex hull.
  // geom_many_contacts: an SDF geom or a concave mesh, whose pairs get kMaxContactsPerSdfPair
  // contact slots instead of kMaxContactsPerPair.
  std::vector<int> geom_sdf;
  std::vector<std::uint8_t> geom_concave;
  std::vector<std::uint8_t> geom_many_contacts;
  // (nbody + 1) body b's geoms are [body_geom_adr[b], body_geom_adr[b + 1]): MuJoCo orders geoms
  // by body, so a tree's geoms are contiguous too.
  std::vector<int> body_geom_adr;

  // ---- meshes (nmesh); vertices are in the mesh frame, which MuJoCo aligns with the geom frame
  std::vector<int> mesh_vert_adr;  // first vertex in mesh_vert
  std::vector<int> mesh_vert_num;
  std::vector<int> mesh_face_adr;  // first triangle in mesh_face
  std::vector<int> mesh_face_num;
  std::vector<int> mesh_hull_face_adr;  // first triangle of the convex hull in mesh_hull_face
  std::vector<int> mesh_hull_face_num;  // 0 when MuJoCo built no hull
  std::vector<Vec3> mesh_vert;
  std::vector<Eigen::Vector3i> mesh_face;       // vertex indices, local to the mesh
  std::vector<Eigen::Vector3i> mesh_hull_face;  // hull triangles, local vertex indices
  // The hull's vertex adjacency graph (MuJoCo's mesh_graph), for support search by hill climbing.
  // Mesh k's hull vertices are [mesh_graph_vert_adr[k], + mesh_graph_vert_num[k]) in
  // mesh_graph_vert (local mesh vertex indices); hull vertex h's neighbours are
  // mesh_graph_edge[mesh_graph_edge_adr[h] .. + mesh_graph_edge_num[h]), as hull-local indices.
  // mesh_graph_vert_num is 0 when MuJoCo built no hull.
  std::vector<int> mesh_graph_vert_adr;
  std::vector<int> mesh_graph_vert_num;
  std::vector<int> mesh_graph_vert;
  std::vector<int> mesh_graph_edge_adr;  // one per hull vertex, into mesh_graph_edge
  std::vector<int> mesh_graph_edge_num;
  std::vector<int> mesh_graph_edge;
  // Per mesh, the walk's starts by direction: a cube map of 6 faces (+x, -x, +y, -y, +z, -z, the
  // direction's largest component) of kMeshStartCells x kMeshStartCells cells each, the face split
  // evenly in the two other components divided by the largest (row: the next axis after it,
  // column: the one after that, cyclically). A cell holds a hull-local vertex near the support
  // along its centre direction, so that a walk starts a few moves from the answer (6 *
  // kMeshStartCells^2 per mesh). Only a start: the walk's answer does not depend on it.
  std::vector<int> mesh_graph_dir_start;

  // ---- SDF geoms (nsdf), in geom order. The field is given in the geom's frame; sdf k's
  //      parameters are sdf_param[sdf_param_adr[k] .. + sdf_param_num[k]) in its kind's order
  //      (SdfKind). sdf_box_lo/hi: the solid's box in the geom frame (its LocalBox). The surface
  //      triangulation (for the SDF's side of an SDF-SDF pair and against planes): vertices on
  //      the surface, in the geom frame, and triangles of local vertex indices; sdf_face_num is
  //      0 for a kind without one.
  std::vector<int> sdf_geom;
  std::vector<SdfKind> sdf_kind;
  std::vector<int> sdf_param_adr;
  std::vector<int> sdf_param_num;
  std::vector<double> sdf_param;
  std::vector<Vec3> sdf_box_lo;
  std::vector<Vec3> sdf_box_hi;
  std::vector<int> sdf_vert_adr;
  std::vector<int> sdf_vert_num;
  std::vector<Vec3> sdf_vert;
  std::vector<int> sdf_face_adr;
  std::vector<int> sdf_face_num;
  std::vector<Eigen::Vector3i> sdf_face;

  // ---- sites (nsite)
  std::vector<std::string> site_name;
  std::vector<int> site_body;
  std::vector<Vec3> site_pos;   // in the body frame
  std::vector<Quat> site_quat;  // in the body frame

  // ---- tendons (ntendon), MuJoCo's ids. A fixed tendon's length is a linear function of its
  //      joints' positions, L = sum_k coef_k qpos[k] (hinge or slide joints; MuJoCo's mjWRAP_JOINT
  //      with wrap_prm the coefficient), so its Jacobian is the constant row dL/dv = coef_k at
  //      joint k's dof. Each joint appears once (the importer refuses repeats); zero coefficients
  //      are dropped. A spatial tendon (sites, geoms) is kept only as a name with no wraps and no
  //      force: the importer refuses it whenever it would act.
  std::vector<std::string> tendon_name;
  std::vector<int> tendon_wrap_adr;       // first joint in wrap_*
  std::vector<int> tendon_wrap_num;       // number of joints (0: a spatial tendon)
  std::vector<bool> tendon_limited;       // has a length range (a limit row near its ends)
  std::vector<double> tendon_margin;      // MuJoCo's model: a limit row below this distance
  std::vector<SolRef> tendon_solref_lim;  // MuJoCo's model: the limit rows'
  std::vector<SolImp> tendon_solimp_lim;
  std::vector<double> tendon_invweight0;   // MuJoCo's: the tendon's inverse weight at qpos0
  std::vector<double> tendon_range_lower;  // m or rad, in L's units
  std::vector<double> tendon_range_upper;
  std::vector<double> tendon_stiffness;     // spring toward tendon_lengthspring, N/m
  std::vector<double> tendon_damping;       // N s/m, explicit (as MuJoCo 2.2.2's Euler)
  std::vector<double> tendon_lengthspring;  // the spring's rest length (MuJoCo's compiled value)
  // (nwrap) one entry per joint of a fixed tendon
  std::vector<int> wrap_jnt;       // the joint
  std::vector<int> wrap_qpos_adr;  // its qpos entry
  std::vector<int> wrap_dof;       // its dof
  std::vector<double> wrap_coef;   // its coefficient
  std::vector<int> wrap_tendon;    // the tendon it belongs to
  // The joints of the tendons that have a spring or damper, by subsystem: subsystem j's are
  // subsystem_passive_wraps[subsystem_passive_wrap_adr[j] .. subsystem_passive_wrap_adr[j + 1]),
  // wrap indices in tendon order, so that each tree adds the tendon forces on its own dofs.
  std::vector<int> subsystem_passive_wrap_adr;  // (nsubsystem + 1)
  std::vector<int> subsystem_passive_wraps;

  // ---- actuators (nu): force = gain * ctrl + bias0 + bias1 * l + bias2 * v, with l the
  //      transmission's length times gear and v = dl/dt; motor, position (kp) and velocity (kv)
  //      actuators are all of this affine form.
  std::vector<std::string> actuator_name;
  std::vector<ActuatorTransmission> actuator_transmission;
  std::vector<int> actuator_jnt;          // kJoint: joint driven (hinge or slide); -1 otherwise
  std::vector<int> actuator_tendon;       // kTendon: the fixed tendon driven; -1 otherwise
  std::vector<int> actuator_crank_site;   // kSliderCrank: site the rod pulls; -1 otherwise
  std::vector<int> actuator_slider_site;  // kSliderCrank: rod end, sliding along the site's z axis
  std::vector<int> actuator_activation;   // kActivation: its index in activation_*; -1 otherwise
  std::vector<double> actuator_crank_length;  // kSliderCrank: rod length, m
  std::vector<double> actuator_gear;
  std::vector<double> actuator_gain;
  std::vector<double> actuator_bias0;
  std::vector<double> actuator_bias1;  // -kp for position servos
  std::vector<double> actuator_bias2;  // -kv for velocity servos
  // A joint actuator on a hinge or slide, or a tendon actuator, whose bias is a spring or damper
  // that pulls back (bias1, bias2 <= 0, not both zero): a servo the step may solve as a soft
  // constraint (IsImplicitServo in engine/constraint/build_constraints.h).
  std::vector<bool> actuator_servo_shaped;
  std::vector<bool> actuator_ctrl_limited;
  std::vector<double> actuator_ctrl_lower;
  std::vector<double> actuator_ctrl_upper;
  std::vector<bool> actuator_force_limited;
  std::vector<double> actuator_force_lower;
  std::vector<double> actuator_force_upper;
  // Actuators by subsystem, in actuator order: subsystem j drives subsystem_actuators[
  // subsystem_actuator_adr[j] .. subsystem_actuator_adr[j + 1]) through joint transmissions and
  // tendons whose joints all lie in j.
  std::vector<int> subsystem_actuator_adr;  // (nsubsystem + 1)
  std::vector<int> subsystem_actuators;
  // Every actuator drives one joint or a tendon within one tree (none is a slider-crank, whose
  // sites may lie on two trees, or a tendon across trees), so each tree's actuator forces, and
  // its acceleration, need nothing from other trees.
  bool actuators_in_trees = true;

  // ---- equality constraints (neq)
  std::vector<EqualityType> eq_type;
  std::vector<int> eq_body1;
  std::vector<int> eq_body2;
  std::vector<bool> eq_active;    // active at qpos0
  std::vector<SolRef> eq_solref;  // MuJoCo's model
  std::vector<SolImp> eq_solimp;
  std::vector<double> eq_torquescale;  // weld: rotation error scale in the impedance's distance
  std::vector<Vec3> eq_anchor;         // connect: anchor in body1's frame; weld: anchor in body2's
  std::vector<Vec3> eq_anchor2;        // connect: the same point in body2's frame (at qpos0)
  std::vector<Vec3> eq_relpos;         // weld: where body2's anchor belongs, in body1's frame
  std::vector<Quat> eq_relquat;        // weld: body2's orientation relative to body1

  // ---- collision filters: excluded body pairs (nexclude) and explicit geom pairs (npair)
  std::vector<int> exclude_body1;
  std::vector<int> exclude_body2;
  std::vector<int> pair_geom1;
  std::vector<int> pair_geom2;
  std::vector<double> pair_margin;  // replaces the geoms' margins
  std::vector<double> pair_gap;
  std::vector<double> pair_friction;          // sliding friction, replaces the geoms' combination
  std::vector<double> pair_friction_torsion;  // the pair's torsional friction (MuJoCo's 3rd)
  std::vector<double> pair_friction_rolling;  // the pair's rolling friction (MuJoCo's 4th)
  std::vector<int> pair_condim;               // the pair's condim, replaces the geoms'
  std::vector<SolRef> pair_solref;            // MuJoCo's model: replace the geoms' mix
  std::vector<SolImp> pair_solimp;

  // ---- keyframes (nkey), MuJoCo's key_* arrays as the compiler fills them: a <key> that omits
  //      a field holds the model's value there (qpos0, zero velocity and controls, time 0).
  //      ResetDataKeyframe (engine/sim/reset.h) puts one in a Data as mj_resetDataKeyframe does.
  //      Dropped: key_act, since alsim refuses activation dynamics (na is always 0), and
  //      key_mpos / key_mquat, since alsim has no mocap state (a mocap body is a static body
  //      where the model puts it; the importer warns of a keyframe that would move one).
  std::vector<std::string> key_name;  // "" for an unnamed keyframe
  std::vector<double> key_time;       // s
  std::vector<double> key_qpos;       // (nkey x nq)
  std::vector<double> key_qvel;       // (nkey x nv)
  std::vector<double> key_ctrl;       // (nkey x nu)

  // ---- import report
  // Features of the source scene that alsim ignores because they do not change the dynamics it
  // computes (visual elements, sensors, ...), one line each. Features that would change the
  // physics make the import fail instead.
  std::vector<std::string> warnings;
};

// The keyframe named `name`, or -1 when none is (an empty name finds nothing: unnamed keyframes
// have no name to find). MuJoCo's names are unique per kind, so at most one matches.
int KeyframeId(const Model& m, const std::string& name);

// The keyframe that `spec` names, as the CLI's --keyframe takes it: a keyframe's name, else a
// decimal index from 0 to nkey - 1 (digits only). A name wins over an index, so a keyframe named
// "1" is found by its name. Returns "" and sets *key, or an error naming the scene's keyframes
// (DescribeKeyframes) and leaves *key alone.
std::string FindKeyframe(const Model& m, const std::string& spec, int* key);

// The scene's keyframes for messages: "0 'home', 1 (unnamed)", or "none" when it has none.
std::string DescribeKeyframes(const Model& m);

}  // namespace alsim
