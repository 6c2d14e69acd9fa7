// What a viewer needs of a scene beyond the physics: the geoms' colours and visibility groups and
// the meshes' names. The engine's Model keeps none of them (they change no motion), so the server
// reads them from the same compiled MuJoCo model (MJB) the Model was converted from.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/model.h"

namespace alsim::v1 {
class GetSceneResponse;  // alsim.pb.h: the registry that includes this header is protobuf-free
}

namespace alsim::server {

struct SceneLook {
  std::vector<std::array<float, 4>>
      geom_rgba;                       // (ngeom) the material's rgba if any, else the geom's
  std::vector<int> geom_group;         // (ngeom) MuJoCo's visibility group
  std::vector<std::string> mesh_name;  // (nmesh)
};

// Reads the look of MuJoCo's binary model `mjb` (one that ImportCompiledScene accepted, so that
// it loads). Null, with *error set, when it does not load or does not match `model`'s counts.
std::shared_ptr<const SceneLook> ReadSceneLook(const std::string& mjb, const Model& model,
                                               std::string* error);

// GetScene's reply for `model` named `scene`: its meshes, then each SDF geom's triangulation as a
// mesh ("sdf:GEOM") that the geom names. `look` may be null (grey, group 0, the scene's meshes
// unnamed).
void FillScene(const Model& model, const SceneLook* look, const std::string& scene,
               alsim::v1::GetSceneResponse* response);

}  // namespace alsim::server
