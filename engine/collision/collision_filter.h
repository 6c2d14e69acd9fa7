// Which geom pairs may collide: MuJoCo's filtering rules, which scenes are written against.
#pragma once

#include "engine/model/model.h"

namespace alsim {

// True if geoms g1 and g2 may touch according to the scene, independent of where they are:
//   - geoms of one rigid body (bodies welded together, or both welded to the world) never collide
//   - contype/conaffinity: (contype1 & conaffinity2) || (contype2 & conaffinity1)
//   - with filter_parent, a body never collides with its parent body (by weld), unless the parent
//     is the world
//   - body pairs listed in <contact><exclude> never collide
//   - body pairs that have an explicit <contact><pair> are handled by that pair instead
bool MayCollide(const Model& m, int g1, int g2);

}  // namespace alsim
