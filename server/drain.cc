#include "server/drain.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "alsim/server/v1/drain.pb.h"
#include "engine/core/build_info.h"
#include "engine/dynamics/kinematics.h"
#include "engine/sim/state_snapshot.h"
#include "engine/solver/solver.h"

namespace alsim::server {
namespace {

constexpr const char* kFile = "instances.pb";

}  // namespace

std::string SaveInstances(SimulatorService& service, const std::string& state_dir, int* saved) {
  *saved = 0;
  alsim::server::v1::DrainedServer drained;
  drained.set_version(EngineBuildInfo().version);
  std::map<const SceneSource*, std::uint64_t> scene_keys;
  for (const auto& instance : service.registry().All()) {
    const std::lock_guard<std::mutex> lock(instance->mutex);
    if (instance->destroyed || instance->source == nullptr) continue;
    auto [found, added] =
        scene_keys.emplace(instance->source.get(), static_cast<std::uint64_t>(scene_keys.size()));
    if (added) {
      const SceneSource& source = *instance->source;
      auto* scene = drained.add_scenes();
      scene->set_key(found->second);
      scene->set_builtin(source.builtin);
      scene->set_filename(source.filename);
      scene->set_text(source.text);
      for (const ModelAsset& asset : source.assets) {
        auto* out = scene->add_assets();
        out->set_name(asset.name);
        out->set_bytes(asset.bytes);
      }
    }
    auto* out = drained.add_instances();
    out->set_id(instance->id);
    out->set_group(instance->group);
    out->set_tenant(instance->tenant);
    out->set_scene(found->second);
    *out->mutable_solver() = SolverConfigOf(instance->options);
    std::ostringstream rng;
    rng << instance->rng;
    out->set_rng(rng.str());
    out->set_steps(instance->steps);
    out->set_max_episode_steps(instance->max_episode_steps);
    out->set_episode_steps(instance->episode_steps);
    if (instance->keyframe >= 0) out->set_keyframe(static_cast<std::uint32_t>(instance->keyframe));
    out->set_diverged(instance->diverged);
    out->set_state(SaveStateSnapshot(*instance->model, *instance->data));
    ++*saved;
  }
  std::error_code error;
  std::filesystem::create_directories(state_dir, error);
  const std::string path = state_dir + "/" + kFile;
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file || !drained.SerializeToOstream(&file) || !file.flush()) {
      return "cannot write " + temporary;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) return "cannot rename to " + path;
  return "";
}

std::string RestoreInstances(SimulatorService& service, const std::string& state_dir, int* restored,
                             std::string* skipped) {
  *restored = 0;
  skipped->clear();
  const std::string path = state_dir + "/" + kFile;
  std::ifstream file(path, std::ios::binary);
  if (!file) return "";  // nothing saved
  alsim::server::v1::DrainedServer drained;
  if (!drained.ParseFromIstream(&file)) return path + " is not a saved server";
  file.close();

  std::map<std::uint64_t, LoadedScene> scenes;
  std::map<std::uint64_t, std::string> scene_errors;
  for (const auto& saved : drained.scenes()) {
    SceneSource source;
    source.builtin = saved.builtin();
    source.filename = saved.filename();
    source.text = saved.text();
    for (const auto& asset : saved.assets()) source.assets.push_back({asset.name(), asset.bytes()});
    LoadedScene scene;
    const grpc::Status status = service.catalog().Load(
        source, [] { return grpc::Status::OK; }, &scene);
    if (status.ok()) {
      scenes[saved.key()] = std::move(scene);
    } else {
      scene_errors[saved.key()] = status.error_message();
    }
  }
  for (const auto& saved : drained.instances()) {
    auto skip = [&](const std::string& why) {
      *skipped += "instance " + std::to_string(saved.id()) + ": " + why + "\n";
    };
    const auto scene = scenes.find(saved.scene());
    if (scene == scenes.end()) {
      skip(scene_errors.count(saved.scene()) != 0 ? scene_errors[saved.scene()] : "unknown scene");
      continue;
    }
    const LoadedScene& loaded = scene->second;
    auto instance = std::make_shared<Instance>();
    instance->id = saved.id();
    instance->group = saved.group();
    instance->tenant = saved.tenant();
    instance->model = loaded.model;
    instance->source = loaded.source;
    instance->look = loaded.look;
    instance->scene = loaded.name;
    if (grpc::Status status = SolverOptionsOf(saved.solver(), &instance->options); !status.ok()) {
      skip(status.error_message());
      continue;
    }
    std::istringstream rng(saved.rng());
    rng >> instance->rng;
    if (!rng) {
      skip("its random generator's state does not parse");
      continue;
    }
    if (saved.has_keyframe() &&
        saved.keyframe() >= static_cast<std::uint32_t>(loaded.model->nkey)) {
      skip("its keyframe " + std::to_string(saved.keyframe()) + " is not one of the scene's " +
           std::to_string(loaded.model->nkey));
      continue;
    }
    instance->keyframe = saved.has_keyframe() ? static_cast<int>(saved.keyframe()) : -1;
    instance->data = std::make_unique<Data>(*loaded.model);
    EnsureSolver(*loaded.model, *instance->data, instance->options.solver.type);
    std::string error;
    if (!saved.diverged() &&
        !RestoreStateSnapshot(*loaded.model, saved.state(), *instance->data, &error)) {
      skip(error);
      continue;
    }
    if (saved.diverged()) Kinematics(*loaded.model, *instance->data);
    instance->steps = saved.steps();
    instance->max_episode_steps = saved.max_episode_steps();
    instance->episode_steps = saved.episode_steps();
    instance->diverged = saved.diverged();
    instance->published_time = instance->data->time;
    // Charged to the budget like a created instance; restored even past it (they existed).
    instance->instance_bytes = loaded.instance_bytes;
    instance->model_bytes = loaded.model_bytes;
    if (loaded.instance_bytes > 0 && service.budget().TryReserve(loaded.instance_bytes)) {
      instance->budget = &service.budget();
      instance->reserved_bytes = loaded.instance_bytes;
    }
    if (grpc::Status status = service.registry().Adopt(std::move(instance)); !status.ok()) {
      skip(status.error_message());
      continue;
    }
    ++*restored;
  }
  std::remove(path.c_str());
  return "";
}

}  // namespace alsim::server
