// Broadphase: the geom pairs worth a narrowphase test this step.
#pragma once

#include "engine/model/model.h"
#include "engine/sim/data.h"

namespace alsim {

// Fills d.collision_candidates, sorted by (geom1, geom2): every pair that MayCollide and whose
// world bounding boxes, each grown by its geom's margin, overlap (sweep and prune along the axis
// where the geoms are most spread out); planes, which are infinite, against every geom that comes
// within the margin of them; and the scene's explicit pairs. Needs Kinematics(). Allocates only
// when more candidates than ever before appear.
void Broadphase(const Model& m, Data& d);

}  // namespace alsim
