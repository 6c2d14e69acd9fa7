// Where the server's models come from: built-in scene names and scene text, compiled once per
// distinct text so that every instance of one scene shares one immutable Model.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "engine/model/model.h"
#include "engine/model/model_import.h"

namespace alsim::server {

struct LoadedScene {
  std::shared_ptr<const Model> model;
  std::string name;                   // the built-in name or the text's filename
  std::vector<std::string> warnings;  // the importer's, from the first compilation
};

class SceneCatalog {
 public:
  // Built-in scenes: every *.xml in `scenes_dir` by its stem (e.g. "quadruped_drop_8"), plus
  // MuJoCo's sample humanoids ("humanoid", "22_humanoids", "humanoid100") where libmujoco-samples
  // is installed.
  explicit SceneCatalog(const std::string& scenes_dir);

  std::vector<std::string> BuiltinNames() const;

  // NOT_FOUND for an unknown name; INVALID_ARGUMENT with the importer's file:line message for a
  // scene MuJoCo or alsim refuses.
  grpc::Status LoadBuiltin(const std::string& name, LoadedScene* out);
  grpc::Status LoadText(const std::string& text, const std::vector<ModelAsset>& assets,
                        const std::string& filename, LoadedScene* out);

 private:
  grpc::Status Compile(const std::string& key, const std::string& name,
                       const std::function<ModelImport()>& import, LoadedScene* out);

  std::map<std::string, std::string> builtin_paths_;  // name -> file
  std::mutex mutex_;
  // Compiled scenes by their text (and assets): kept while any instance uses them.
  struct Entry {
    std::weak_ptr<const Model> model;
    std::vector<std::string> warnings;
  };
  std::map<std::string, Entry> compiled_;
};

}  // namespace alsim::server
