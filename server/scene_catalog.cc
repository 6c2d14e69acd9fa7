#include "server/scene_catalog.h"

#include <filesystem>
#include <functional>

namespace alsim::server {
namespace {

const char* const kMujocoSamples[][2] = {
    {"humanoid", "/usr/share/mujoco/model/humanoid/humanoid.xml"},
    {"22_humanoids", "/usr/share/mujoco/model/humanoid/22_humanoids.xml"},
    {"humanoid100", "/usr/share/mujoco/model/humanoid100/humanoid100.xml"},
};

}  // namespace

SceneCatalog::SceneCatalog(const std::string& scenes_dir) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(scenes_dir, error)) {
    if (entry.path().extension() == ".xml") {
      builtin_paths_[entry.path().stem().string()] = entry.path().string();
    }
  }
  for (const auto& sample : kMujocoSamples) {
    if (std::filesystem::exists(sample[1], error)) builtin_paths_[sample[0]] = sample[1];
  }
}

std::vector<std::string> SceneCatalog::BuiltinNames() const {
  std::vector<std::string> names;
  for (const auto& [name, path] : builtin_paths_) names.push_back(name);
  return names;
}

grpc::Status SceneCatalog::Compile(const std::string& key, const std::string& name,
                                   const std::function<ModelImport()>& import, LoadedScene* out) {
  // One lock around the lookup and the compile: two creates of a new scene compile it once.
  // (MuJoCo's compiler is serialized process-wide anyway.)
  const std::lock_guard<std::mutex> lock(mutex_);
  Entry& entry = compiled_[key];
  out->model = entry.model.lock();
  out->name = name;
  if (out->model != nullptr) {
    out->warnings = entry.warnings;
    return grpc::Status::OK;
  }
  const ModelImport imported = import();
  if (!imported) {
    compiled_.erase(key);
    return {grpc::StatusCode::INVALID_ARGUMENT, imported.error};
  }
  entry.model = imported.model;
  entry.warnings = imported.model->warnings;
  out->model = imported.model;
  out->warnings = entry.warnings;
  return grpc::Status::OK;
}

grpc::Status SceneCatalog::LoadBuiltin(const std::string& name, LoadedScene* out) {
  const auto found = builtin_paths_.find(name);
  if (found == builtin_paths_.end()) {
    std::string known;
    for (const auto& [known_name, path] : builtin_paths_) known += " " + known_name;
    return {grpc::StatusCode::NOT_FOUND,
            "unknown built-in scene '" + name + "'; the server has:" + known};
  }
  const std::string path = found->second;
  return Compile(
      "builtin:" + name, name, [&] { return ImportModelFromFile(path); }, out);
}

grpc::Status SceneCatalog::LoadText(const std::string& text, const std::vector<ModelAsset>& assets,
                                    const std::string& filename, LoadedScene* out) {
  // The key is everything that determines the compiled model: the name (it appears in error
  // messages only, but two names for one text are rare), the text and each asset.
  std::string key = "text:" + filename + '\0' + text;
  for (const ModelAsset& asset : assets) {
    key += '\0' + asset.name + '\0' + std::to_string(asset.bytes.size()) + '\0' + asset.bytes;
  }
  const std::string name = filename.empty() ? "scene.xml" : filename;
  return Compile(
      key, name, [&] { return ImportModelFromString(text, assets, name); }, out);
}

}  // namespace alsim::server
