// Shared by the SDF-pair tests: a scene from MJCF text with its kinematics done, a geom by name,
// and one pair's contacts through the narrowphase entry (engine/collision/narrowphase.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/collision/narrowphase.h"
#include "engine/collision/sdf_pairs.h"
#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"

namespace alsim::sdf_test {

struct Scene {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Data> data;
  std::string error;
};

inline Scene Load(const std::string& xml) {
  Scene scene;
  const ModelImport imported = ImportModelFromString(xml);
  scene.error = imported.error;
  if (!imported) return scene;
  scene.model = imported.model;
  scene.data = std::make_unique<Data>(*scene.model);
  Kinematics(*scene.model, *scene.data);
  return scene;
}

inline int Geom(const Model& m, const std::string& name) {
  for (int g = 0; g < m.ngeom; ++g) {
    if (m.geom_name[g] == name) return g;
  }
  return -1;
}

// The pair's contacts through the narrowphase entry, normals from geom `a` toward geom `b`.
inline std::vector<Contact> Collide(const Scene& scene, const std::string& a, const std::string& b,
                                    double margin) {
  std::vector<Contact> out(kMaxContactsPerSdfPair);
  const int count = CollideShapes(ShapeOfGeom(*scene.model, *scene.data, Geom(*scene.model, a)),
                                  ShapeOfGeom(*scene.model, *scene.data, Geom(*scene.model, b)),
                                  margin, out.data());
  out.resize(count);
  return out;
}

inline double Deepest(const std::vector<Contact>& contacts) {
  double deepest = INFINITY;
  for (const Contact& c : contacts) deepest = std::min(deepest, c.dist);
  return deepest;
}

}  // namespace alsim::sdf_test
