// SCENE arguments of `alsim create` and `alsim bench`: a built-in scene name, or an MJCF/URDF file
// sent as text together with the files it references.
#pragma once

#include <string>
#include <vector>

#include "alsim/v1/alsim.pb.h"

namespace alsim::cli {

// True when `scene` names a built-in scene rather than a file: it has no '/' and no '.'
// ("quadruped_drop_8", "humanoid"). "./robot" is the file robot.
bool IsBuiltinSceneName(const std::string& scene);

// Fills `source` from a SCENE argument. For a file: its text, its base name as the filename, and
// as assets the files its file="..." attributes (and a texture's fileleft=... and friends, and a
// URDF mesh's filename=...) refer to, keyed by their path relative to the model's directory:
// meshes, height fields and skins under <compiler meshdir>, textures under texturedir (assetdir
// sets both), everything else (an <include>, whose own references are followed too) under the
// model's directory, and so are the tetrahedral deformables' companion file that the custom text
// alsim:deformables names and the TetGen node/ele files of its deformables. A referenced file
// that cannot be read is left out with a note in `warnings` (the server then names what it
// misses). Returns an error message when the file itself cannot be read, else "".
std::string LoadSceneSource(const std::string& scene, alsim::v1::SceneSource* source,
                            std::vector<std::string>* warnings);

}  // namespace alsim::cli
