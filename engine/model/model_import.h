// Builds an alsim::Model from MJCF or URDF through libmujoco 2.2.2's own compiler.
//
// MuJoCo's compiler handles defaults and classes, fromto, orientations, inertia from geoms, meshes
// and convex hulls; alsim converts the compiled mjModel and keeps nothing of it. Compilation is
// serialized (MuJoCo swaps process-wide error handlers while it compiles), and its error handler is
// replaced so that a bad scene becomes an error value, never an exit.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/model/model.h"

namespace alsim {

// A file the scene refers to (a mesh, an included MJCF file), given as bytes. Matched by file
// name without its directory, as MuJoCo's virtual file system does.
struct ModelAsset {
  std::string name;
  std::string bytes;
};

struct ModelImport {
  std::shared_ptr<const Model> model;  // null on failure
  // On failure: what is wrong, with the file and line MuJoCo reports, or the unsupported feature.
  std::string error;

  explicit operator bool() const { return model != nullptr; }
};

// Loads an MJCF or URDF file; referenced files are read relative to it.
ModelImport ImportModelFromFile(const std::string& path);

// Loads MJCF or URDF text. `assets` supply the files it refers to; `name` is used in messages.
ModelImport ImportModelFromString(const std::string& xml,
                                  const std::vector<ModelAsset>& assets = {},
                                  const std::string& name = "model.xml");

// The timestep of a scene whose MJCF does not set option/timestep (URDF never does).
inline constexpr double kDefaultTimestep = 1.0 / 240.0;

}  // namespace alsim
