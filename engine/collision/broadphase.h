// Broadphase: the geom pairs worth a narrowphase test this step.
#pragma once

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

// Fills d.collision_candidates, sorted by (geom1, geom2): every pair that MayCollide and whose
// world bounding boxes, each grown by its geom's margin, overlap (sweep and prune along the axis
// where the geoms are most spread out); planes, which are infinite, against every geom that comes
// within the margin of them; and the scene's explicit pairs. Needs Kinematics(). Allocates only
// when more candidates than ever before appear.
// With `boxes_ready` the boxes are taken as they are (BoundingBoxesOfBodies for every body since
// the geoms last moved, as Step does tree by tree).
void Broadphase(const Model& m, Data& d, bool boxes_ready = false);

// The world bounding boxes (grown by margin and speculative margin) of the swept geoms of bodies
// [body_begin, body_end), into d.geom_aabb_lo / hi. Needs the geoms placed and, if any,
// the speculative margins.
void BoundingBoxesOfBodies(const Model& m, Data& d, int body_begin, int body_end);

}  // namespace alsim
