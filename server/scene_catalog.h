// Where the server's models come from: built-in scene names and scene text, compiled once per
// distinct source so that every instance of one scene shares one immutable Model.
//
// Compiles run in alsim-scene-compiler processes (server/scene_compiler.h), outside any lock:
// compiles of different scenes run at once, and a second Create of a scene being compiled waits
// for the first. A compiled scene lives as long as its instances (and, with --scene-cache N, while
// it is among the N most recently used): its model's last owner removes its entry, so the catalog
// holds nothing for scenes nobody uses.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "engine/model/model.h"
#include "engine/model/model_import.h"
#include "server/memory_budget.h"
#include "server/scene_compiler.h"
#include "server/scene_look.h"

namespace alsim::server {

// What a scene was created from: a built-in name, or a client's text and assets.
struct SceneSource {
  std::string builtin;   // the built-in scene's name, or empty
  std::string filename;  // the text's file name (messages, MuJoCo's VFS)
  std::string text;
  std::vector<ModelAsset> assets;

  std::size_t bytes() const;
};
bool operator<(const SceneSource& a, const SceneSource& b);

struct LoadedScene {
  std::shared_ptr<const Model> model;
  std::string name;                   // the built-in name or the text's filename
  std::vector<std::string> warnings;  // the importer's, from the compilation
  std::uint64_t instance_bytes = 0;   // the compiler's estimate of one instance's memory
  std::uint64_t model_bytes = 0;      // and of the model's (a gradient step's parameter copy)
  std::shared_ptr<const SceneSource> source;
  std::shared_ptr<const SceneLook> look;  // colours and names for GetScene; null if unreadable
};

struct SceneCatalogOptions {
  std::string scenes_dir;
  std::size_t cache_scenes = 0;  // scenes kept compiled after their last instance is gone
};

class SceneCatalog {
 public:
  // Built-in scenes: every *.xml in `scenes_dir` by its stem (e.g. "quadruped_drop_8"), plus
  // MuJoCo's sample humanoids ("humanoid", "22_humanoids", "humanoid100") where libmujoco-samples
  // is installed. `compiler` and `budget` must outlive the catalog and every model it returns.
  SceneCatalog(const SceneCatalogOptions& options, SceneCompiler* compiler, MemoryBudget* budget);
  ~SceneCatalog();

  std::vector<std::string> BuiltinNames() const;

  // NOT_FOUND for an unknown built-in name; otherwise the status of SceneCompiler::Compile (a
  // scene MuJoCo or alsim refuses is INVALID_ARGUMENT with its file:line message), or
  // RESOURCE_EXHAUSTED when the model does not fit the memory budget. `should_stop` is polled
  // while compiling or waiting for another caller's compile.
  grpc::Status Load(const SceneSource& source, const std::function<grpc::Status()>& should_stop,
                    LoadedScene* out);

  // Compiled scenes held (in use or cached), for tests and metrics.
  std::size_t size();

 private:
  struct State;
  std::shared_ptr<State> state_;
  SceneCompiler* compiler_;
  std::map<std::string, std::string> builtin_paths_;  // name -> file
};

}  // namespace alsim::server
