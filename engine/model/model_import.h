// Builds an alsim::Model from MJCF or URDF through libmujoco 2.2.2's own compiler.
//
// MuJoCo's compiler handles defaults and classes, fromto, orientations, inertia from geoms, meshes
// and convex hulls; alsim converts the compiled mjModel and keeps nothing of it. Compilation is
// serialized (MuJoCo's compiler keeps process-wide state), and MuJoCo's error and warning handlers
// are replaced once for the process, so that a bad scene becomes an error value: libmujoco never
// exits the process nor writes MUJOCO_LOG.TXT.
//
// The compile can also be split in two (CompileSceneText, then ImportCompiledScene) so that the
// untrusted half, MuJoCo's XML parser and compiler, runs in another process (the server's
// sandboxed scene compiler, server/scene_compiler.h) and only MuJoCo's binary model crosses back.
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

// Installs alsim's MuJoCo error handler (throws to the importer) and warning handler (collects
// the compile's warnings) for the whole process, once; every import calls it. Call it early in a
// program that also calls libmujoco directly, so that no MuJoCo error can exit the process.
void InstallMujocoHandlers();

// Loads an MJCF or URDF file; referenced files are read relative to it.
ModelImport ImportModelFromFile(const std::string& path);

// Loads MJCF or URDF text. `assets` supply the files it refers to; `name` is used in messages.
// Refused: empty text, an empty asset, a name of MuJoCo's VFS limit (999 characters) or longer.
// MuJoCo itself falls back to the disk for a file that is not among the assets; code that compiles
// scenes from untrusted clients runs CompileSceneText in a sandbox instead.
ModelImport ImportModelFromString(const std::string& xml,
                                  const std::vector<ModelAsset>& assets = {},
                                  const std::string& name = "model.xml");

// A scene compiled by MuJoCo but not yet converted: MuJoCo's binary model (MJB) and what the
// scene text says that an mjModel cannot tell.
struct CompiledScene {
  std::string mjb;                    // mj_saveModel's bytes; empty on failure
  bool sets_timestep = false;         // the MJCF sets option/timestep (checked to be positive)
  std::vector<std::string> warnings;  // MuJoCo's compiler warnings
  std::string error;                  // on failure: as ModelImport::error
  // The deformables (SerializeDeformables, engine/model/deformable_spec.h), parsed where the
  // scene compiled; empty when it has none.
  std::string deformables;
};

// The first half of ImportModelFromString: parses and compiles, never converts. Reads no file
// itself (included files come from the assets); MuJoCo's own disk fallback is the caller's to
// forbid (the scene compiler forbids opening files at all).
CompiledScene CompileSceneText(const std::string& xml, const std::vector<ModelAsset>& assets,
                               const std::string& name);
// The first half of ImportModelFromFile.
CompiledScene CompileSceneFile(const std::string& path);
// The second half: loads the MJB bytes (in memory) and converts them; `source` names the scene in
// messages. A corrupt MJB is an error, never a crash of the caller.
ModelImport ImportCompiledScene(const CompiledScene& scene, const std::string& source);

// The timestep of a scene whose MJCF does not set option/timestep (URDF never does): MJCF's own
// default, which MuJoCo's compiler writes into mjModel, so that one file gives one motion in
// alsim and in MuJoCo.
inline constexpr double kDefaultTimestep = 0.002;

}  // namespace alsim
