#include "server/scene_catalog.h"

#include <filesystem>
#include <tuple>

namespace alsim::server {
namespace {

const char* const kMujocoSamples[][2] = {
    {"humanoid", "/usr/share/mujoco/model/humanoid/humanoid.xml"},
    {"22_humanoids", "/usr/share/mujoco/model/humanoid/22_humanoids.xml"},
    {"humanoid100", "/usr/share/mujoco/model/humanoid100/humanoid100.xml"},
};

constexpr auto kPoll = std::chrono::milliseconds(20);

// A caller's own interruptions: another caller that waits for the same compile tries again.
bool CallerSpecific(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::CANCELLED ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         status.error_code() == grpc::StatusCode::UNAVAILABLE;
}

struct SourceLess {
  using is_transparent = void;
  bool operator()(const std::shared_ptr<const SceneSource>& a,
                  const std::shared_ptr<const SceneSource>& b) const {
    return *a < *b;
  }
  bool operator()(const SceneSource& a, const std::shared_ptr<const SceneSource>& b) const {
    return a < *b;
  }
  bool operator()(const std::shared_ptr<const SceneSource>& a, const SceneSource& b) const {
    return *a < b;
  }
};

}  // namespace

std::size_t SceneSource::bytes() const {
  std::size_t n = builtin.size() + filename.size() + text.size();
  for (const ModelAsset& asset : assets) n += asset.name.size() + asset.bytes.size();
  return n;
}

bool operator<(const SceneSource& a, const SceneSource& b) {
  if (std::tie(a.builtin, a.filename, a.text) != std::tie(b.builtin, b.filename, b.text)) {
    return std::tie(a.builtin, a.filename, a.text) < std::tie(b.builtin, b.filename, b.text);
  }
  if (a.assets.size() != b.assets.size()) return a.assets.size() < b.assets.size();
  for (std::size_t k = 0; k < a.assets.size(); ++k) {
    if (std::tie(a.assets[k].name, a.assets[k].bytes) !=
        std::tie(b.assets[k].name, b.assets[k].bytes)) {
      return std::tie(a.assets[k].name, a.assets[k].bytes) <
             std::tie(b.assets[k].name, b.assets[k].bytes);
    }
  }
  return false;
}

// One source's compile: in progress, or done (a live model, or a failure for its waiters).
struct Entry {
  std::shared_ptr<const SceneSource> source;
  bool done = false;
  grpc::Status failure;  // when done without a model
  std::weak_ptr<const Model> model;
  std::vector<std::string> warnings;
  std::shared_ptr<const SceneLook> look;
  std::uint64_t instance_bytes = 0;
  std::uint64_t model_bytes = 0;
  std::uint64_t charged_bytes = 0;  // reserved from the budget until the model is freed
  bool listed = false;              // still in State::entries
};

struct SceneCatalog::State {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::shared_ptr<const SceneSource>, std::shared_ptr<Entry>, SourceLess> entries;
  std::list<std::shared_ptr<const Model>> recent;  // the LRU cache, most recent first
  std::size_t cache_scenes = 0;
  MemoryBudget* budget = nullptr;

  void Unlist(const std::shared_ptr<Entry>& entry) {
    if (!entry->listed) return;
    entries.erase(entry->source);
    entry->listed = false;
  }
};

SceneCatalog::SceneCatalog(const SceneCatalogOptions& options, SceneCompiler* compiler,
                           MemoryBudget* budget)
    : state_(std::make_shared<State>()), compiler_(compiler) {
  state_->cache_scenes = options.cache_scenes;
  state_->budget = budget;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(options.scenes_dir, error)) {
    if (entry.path().extension() == ".xml") {
      builtin_paths_[entry.path().stem().string()] = entry.path().string();
    }
  }
  for (const auto& sample : kMujocoSamples) {
    if (std::filesystem::exists(sample[1], error)) builtin_paths_[sample[0]] = sample[1];
  }
}

SceneCatalog::~SceneCatalog() {
  std::list<std::shared_ptr<const Model>> recent;  // freed after the lock: deleters take it
  const std::lock_guard<std::mutex> lock(state_->mutex);
  recent.swap(state_->recent);
}

std::vector<std::string> SceneCatalog::BuiltinNames() const {
  std::vector<std::string> names;
  for (const auto& [name, path] : builtin_paths_) names.push_back(name);
  return names;
}

std::size_t SceneCatalog::size() {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->entries.size();
}

grpc::Status SceneCatalog::Load(const SceneSource& source,
                                const std::function<grpc::Status()>& should_stop,
                                LoadedScene* out) {
  SceneCompileRequest request;
  std::string name;
  if (!source.builtin.empty()) {
    const auto found = builtin_paths_.find(source.builtin);
    if (found == builtin_paths_.end()) {
      std::string known;
      for (const auto& [known_name, path] : builtin_paths_) known += " " + known_name;
      return {grpc::StatusCode::NOT_FOUND,
              "unknown built-in scene '" + source.builtin + "'; the server has:" + known};
    }
    request.path = found->second;
    name = source.builtin;
  } else {
    name = source.filename.empty() ? "scene.xml" : source.filename;
  }
  State& state = *state_;
  std::shared_ptr<const Model> evicted;  // released after the lock: its deleter takes the lock
  std::unique_lock<std::mutex> lock(state.mutex);
  std::shared_ptr<Entry> entry;
  for (;;) {
    const auto found = state.entries.find(source);
    if (found == state.entries.end()) break;
    entry = found->second;
    if (!entry->done) {
      state.changed.wait_for(lock, kPoll);
      lock.unlock();
      grpc::Status stop = should_stop();
      lock.lock();
      if (!stop.ok()) return stop;
      continue;
    }
    if (auto model = entry->model.lock()) {
      out->model = std::move(model);
      out->name = name;
      out->warnings = entry->warnings;
      out->instance_bytes = entry->instance_bytes;
      out->model_bytes = entry->model_bytes;
      out->source = entry->source;
      out->look = entry->look;
      if (state.cache_scenes > 0) {
        state.recent.remove(out->model);
        state.recent.push_front(out->model);
      }
      return grpc::Status::OK;
    }
    if (!entry->failure.ok() && !CallerSpecific(entry->failure)) return entry->failure;
    state.Unlist(entry);  // a failed compile or a model being freed: compile anew
  }
  entry = std::make_shared<Entry>();
  entry->source = std::make_shared<const SceneSource>(source);
  entry->listed = true;
  state.entries.emplace(entry->source, entry);
  lock.unlock();

  // Compile and convert outside the lock.
  if (request.path.empty()) {
    request.text = source.text;
    request.name = name;
    request.assets = source.assets;
  }
  SceneCompileReply reply;
  grpc::Status status = compiler_->Compile(request, should_stop, &reply);
  ModelImport imported;
  if (status.ok()) {
    imported = ImportCompiledScene(reply.scene, name);
    if (!imported) status = {grpc::StatusCode::INVALID_ARGUMENT, imported.error};
  }
  // The look is for viewers only: a scene whose look does not read still simulates (GetScene
  // then draws it grey).
  std::shared_ptr<const SceneLook> look;
  if (status.ok()) {
    std::string look_error;
    look = ReadSceneLook(reply.scene.mjb, *imported.model, &look_error);
  }
  const std::uint64_t charge = reply.model_bytes + source.bytes();
  if (status.ok() && !state.budget->TryReserve(charge)) {
    status = {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "the scene's model needs about " + std::to_string(charge >> 20) +
                  " MiB, more than is left of the server's memory budget (--max-memory)"};
  }

  lock.lock();
  entry->done = true;
  if (!status.ok()) {
    entry->failure = status;
    state.Unlist(entry);
    state.changed.notify_all();
    return status;
  }
  entry->charged_bytes = charge;
  entry->instance_bytes = reply.instance_bytes;
  entry->model_bytes = reply.model_bytes;
  entry->warnings = imported.model->warnings;
  entry->look = look;
  // The model's last owner unlists the entry and returns its bytes to the budget.
  const std::weak_ptr<State> weak_state = state_;
  const Model* raw = imported.model.get();
  std::shared_ptr<const Model> keep = imported.model;
  // The deleter lives as long as the control block, which the entry's weak_ptr keeps: it must
  // let go of the entry itself, or entry and block would keep each other (and the scene text).
  std::shared_ptr<const Model> model(raw, [weak_state, entry, keep](const Model*) mutable {
    keep.reset();
    if (auto owner = weak_state.lock()) {
      const std::lock_guard<std::mutex> guard(owner->mutex);
      owner->Unlist(entry);
      owner->budget->Release(entry->charged_bytes);
    }
    entry.reset();
  });
  entry->model = model;
  if (state.cache_scenes > 0) {
    state.recent.push_front(model);
    if (state.recent.size() > state.cache_scenes) {
      evicted = std::move(state.recent.back());
      state.recent.pop_back();
    }
  }
  state.changed.notify_all();
  out->model = std::move(model);
  out->name = name;
  out->warnings = entry->warnings;
  out->instance_bytes = entry->instance_bytes;
  out->model_bytes = entry->model_bytes;
  out->source = entry->source;
  out->look = entry->look;
  return grpc::Status::OK;
}

}  // namespace alsim::server
