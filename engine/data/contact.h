// Contact points: what collision detection hands to the contact solvers.
#pragma once

#include "engine/math/types.h"

namespace alsim {

// The most contacts one geom pair reports (the narrowphase's slots per candidate).
inline constexpr int kMaxContactsPerPair = 8;
// The most for a pair with an SDF geom or a concave mesh (Model::geom_many_contacts), whose
// conforming surfaces touch at hundreds of points: the narrowphase clusters them down to this
// many (the SubADMM paper's 120, digest section 8.1).
inline constexpr int kMaxContactsPerSdfPair = 120;

// One contact point between two geoms.
struct Contact {
  double dist = 0;  // signed distance between the surfaces along the normal (< 0: penetration), m
  Vec3 pos = Vec3::Zero();      // midpoint between the two surfaces, world frame
  Vec3 normal = Vec3::UnitZ();  // unit normal, world frame, pointing from geom1 toward geom2
  // Contact frame R_i: columns normal, tangent1, tangent2 (right-handed, orthonormal). Set by the
  // collision driver from `normal`; narrowphase functions leave it alone.
  Mat3 frame = Mat3::Identity();
  int geom1 = -1;
  int geom2 = -1;
  double friction = 0;  // combined sliding friction coefficient mu
  // condim 4 and 6 (ContactParameters in engine/collision/collision.h): the torsional coefficient
  // (condim 4, 6; N m per N of normal force) and the rolling one (condim 6), 0 when unused.
  double friction_torsion = 0;
  double friction_rolling = 0;
  int dim = 3;  // constraint rows: 3 (sliding), 4 (+ torsion) or 6 (+ rolling); condim 1 is 3
  // The explicit pair the contact came from, -1 for a dynamic pair (MuJoCo's model reads the
  // pair's solref, solimp, margin and gap; it fits in the struct's padding).
  int explicit_pair = -1;
};

// A deformable's vertex near a rigid geom (issue 48; engine/collision/deformable_contacts.h): the
// geom's outward normal and closest surface point at the step's start, the point kept in the
// geom's body frame (world frame for the world's and static bodies' geoms) so that a solver can
// re-evaluate the gap C = n . (x_v - p) - thickness where the bodies are (the paper's contact
// points fixed on the bodies, normal fixed for the step).
struct VertexContact {
  int vertex = -1;
  int geom = -1;
  double dist = 0;              // C at the step's start, m (< 0: the vertex is inside the layer)
  Vec3 normal = Vec3::UnitZ();  // the geom's outward unit normal, world
  Vec3 anchor = Vec3::Zero();   // the geom's closest point, in its body's frame
  double friction = 0;          // mu: the larger of the geom's and the deformable's
};

// A sphere or capsule near a deformable's surface triangle (issue 48): the triangle's closest
// point as barycentric weights of its vertices (fixed for the step), the unit normal from that
// point toward the geom, and the geom's nearest axis point (a sphere's centre, a point of a
// capsule's segment) kept in the geom's body frame; the gap
// C = n . (p - sum_i w_i x_i) - radius - thickness.
struct TriangleContact {
  int triangle = -1;  // index into Model::tri_vert
  int geom = -1;
  double dist = 0;                  // C at the step's start, m
  Vec3 barycentric = Vec3::Zero();  // w_i of the triangle's vertices
  Vec3 normal = Vec3::UnitZ();      // from the triangle toward the geom, world
  Vec3 anchor = Vec3::Zero();       // the geom's axis point, in its body's frame
  double friction = 0;              // mu: the larger of the geom's and the deformable's
};

// A deformable's vertex near another deformable's surface triangle (issue 48): the triangle's
// closest point as barycentric weights (fixed for the step) and the unit normal from that point
// toward the vertex (the triangle's outward normal where the vertex is inside); the gap
// C = n . (x_v - sum_i w_i x_i) - thickness_v - thickness_t.
struct VertexTriangleContact {
  int vertex = -1;
  int triangle = -1;                // index into Model::tri_vert
  double dist = 0;                  // C at the step's start, m
  Vec3 barycentric = Vec3::Zero();  // w_i of the triangle's vertices
  Vec3 normal = Vec3::UnitZ();      // from the triangle toward the vertex, world
  double friction = 0;              // mu: the larger of the two deformables'
};

// A geom pair for the narrowphase, chosen by the broadphase; geom1 < geom2.
struct CollisionCandidate {
  int geom1 = -1;
  int geom2 = -1;
  int explicit_pair = -1;  // index into the Model's explicit pairs, -1 for a dynamic pair
  double margin = 0;       // contacts are reported below this distance, m
};

// A geom's box in the sweep's scratch: the boxes are copied in sweep order so that the sweep reads
// them one after another.
struct SweepBox {
  double lo[3];
  double hi[3];
  int geom;
};

}  // namespace alsim
