// Contacts of deformables with rigid geoms and with each other (issue 48; Macklin et al. 2019, seed
// 002, Sec 3.3 and 10.1: candidates once per step within a proximity threshold, the normal and the
// closest points from the step's start). Self-collision is not modelled.
//
// Every vertex that is not pinned is tested against every geom that collides at all (contype or
// conaffinity nonzero) whose bounding box (Data::geom_aabb_lo/hi, planes unbounded) meets the
// deformable's vertex box grown by the threshold. A vertex within
//   threshold = thickness + 2 h |v_v| + kDeformableContactSlack
// of a geom's surface (the layer of the deformable's thickness, what the vertex covers in two
// steps at its speed, and a fixed slack; [OURS]: the paper gives no threshold) gets a
// VertexContact with the geom's outward normal and closest point (PointGeomDistance). Geoms whose
// distance the collision layer does not model (ellipsoids, height fields, SDFs) are skipped.
// Spheres and capsules, round between the vertices, are tested against the deformable's surface
// triangles instead (ClosestSegmentTriangle): a TriangleContact per triangle within the threshold
// of the geom's surface, its closest point kept once per geom (a vertex or an edge shared by
// triangles). A box's corners and a mesh's vertices are tested against the surface too: each
// within the threshold gets a TriangleContact with its nearest triangle (the point on the geom's
// body, radius 0), so a box corner cannot pass between a deformable's vertices. Deformables meet
// each other vertex against surface: each free vertex of one within
//   thickness_1 + thickness_2 + 2 h (|v|max_1 + |v|max_2) + kDeformableContactSlack
// of another's surface gets a VertexTriangleContact with the nearest triangle (both ways round).
// The nearest triangle is found by scanning the surface (no spatial index: deformables here have
// hundreds to a few thousand surface triangles). Edges against edges, and self-collision, are not
// modelled.
#pragma once

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

inline constexpr double kDeformableContactSlack = 0.002;  // m

// Fills d.vertex_contact, d.triangle_contact and d.vertex_triangle_contact for the vertices'
// positions d.vert_xpos and velocities d.vert_xvel and the geoms' poses (needs Kinematics() and the
// geoms' bounding boxes); h is the step.
void DeformableCollision(const Model& m, Data& d, double h);

}  // namespace alsim
