#include "server/simulator_service.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/sim/state_snapshot.h"
#include "engine/solver/solver.h"
#include "engine/solver/solver_option_table.h"
#include "server/batch_step.h"
#include "server/build_info.h"
#include "server/metrics.h"
#include "server/step_stream.h"
#include "server/tensors.h"

namespace alsim::server {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::uint64_t> Ids(const alsim::v1::InstanceSelection& selection) {
  return {selection.instance_ids().begin(), selection.instance_ids().end()};
}

// A double as text that parses back to it exactly ("nan" and "inf" too, which the table refuses).
std::string ExactText(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", x);
  return text;
}

// Runs a handler's `work` and returns its status; an exception it throws ends only this `unit`
// ("call", or a stream's "message"): RESOURCE_EXHAUSTED when memory ran out, INTERNAL otherwise.
grpc::Status Guarded(const char* unit, const std::function<grpc::Status()>& work) {
  try {
    return work();
  } catch (const std::bad_alloc&) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            std::string("the server ran out of memory for this ") + unit};
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INTERNAL, std::string("internal error: ") + e.what()};
  }
}

// The keyframe a CreateRequest or ResetRequest names (its oneof keyframe).
template <class Request>
batch::KeyframeRef KeyframeOf(const Request& request) {
  batch::KeyframeRef ref;
  switch (request.keyframe_case()) {
    case Request::kKeyframeName:
      ref.by = batch::KeyframeRef::By::kName;
      ref.name = request.keyframe_name();
      break;
    case Request::kKeyframeIndex:
      ref.by = batch::KeyframeRef::By::kIndex;
      ref.index = request.keyframe_index();
      break;
    default:
      break;
  }
  return ref;
}

// The server's metrics as the batch-step core reports to them.
class MetricsObserver final : public batch::StepObserver {
 public:
  explicit MetricsObserver(ServerMetrics* metrics) : metrics_(metrics) {}
  void Diverged() override { metrics_->AddDiverged(); }
  void Stepped(double steps) override { metrics_->AddSteps(steps); }
  void Solved(const SolverStatistics& statistics, double seconds_per_step) override {
    metrics_->ObserveStep(statistics, seconds_per_step);
  }

 private:
  ServerMetrics* metrics_;
};

// A StepResponse written in place by the batch's tasks: every repeated field and observation
// tensor sized in Begin, each instance's task writing its own entries.
class StepResponseWriter final : public batch::StepReply {
 public:
  // `gradients`: the request's gradient option (not requested: the reply has no Jacobians).
  StepResponseWriter(const std::vector<alsim::v1::Observation>& kinds,
                     const batch::GradientInputs& gradients, alsim::v1::StepResponse* response)
      : kinds_(kinds), gradients_(gradients), response_(response) {}

  void Begin(const Model& m, int batch, double seconds, bool final_observations) override {
    response_->set_step_seconds(seconds);
    response_->mutable_status()->Resize(batch, alsim::v1::INSTANCE_STATUS_OK);
    response_->mutable_truncated()->Resize(batch, false);
    response_->mutable_reset()->Resize(batch, false);
    status_ = response_->mutable_status()->mutable_data();
    truncated_ = response_->mutable_truncated()->mutable_data();
    reset_ = response_->mutable_reset()->mutable_data();
    diagnostics_.resize(batch);
    if (final_observations) {
      final_writer_.emplace(m, batch, kinds_, response_->mutable_final_observations());
    }
    writer_.emplace(m, batch, kinds_, response_->mutable_observations());
    if (gradients_.requested) {
      jacobians_.emplace(m, batch, gradients_.request, response_->mutable_gradients());
    }
  }

  void Ended(int k, const batch::InstanceStep& step, Data& data) override {
    status_[k] =
        step.diverged ? alsim::v1::INSTANCE_STATUS_DIVERGED : alsim::v1::INSTANCE_STATUS_OK;
    diagnostics_[k] = std::make_unique<alsim::v1::SolverDiagnostics>();
    FillDiagnostics(data.solver_statistics, diagnostics_[k].get());
    truncated_[k] = step.truncated;
    if (final_writer_) final_writer_->Write(k, data);
    if (jacobians_ && step.jacobians != nullptr) jacobians_->Write(k, *step.jacobians);
  }

  void Observed(int k, const batch::InstanceStep& step, Data& data) override {
    reset_[k] = step.reset;
    writer_->Write(k, data);
  }

  // After a successful step: the diagnostics, messages (with a map each) made by the tasks, handed
  // to the repeated field in batch order (a pointer each; protobuf adds them one by one).
  void Finish() {
    google::protobuf::RepeatedPtrField<alsim::v1::SolverDiagnostics>* out =
        response_->mutable_diagnostics();
    out->Reserve(static_cast<int>(diagnostics_.size()));
    for (auto& filled : diagnostics_) out->AddAllocated(filled.release());
  }

 private:
  const std::vector<alsim::v1::Observation>& kinds_;
  const batch::GradientInputs& gradients_;
  alsim::v1::StepResponse* response_;
  int* status_ = nullptr;
  bool* truncated_ = nullptr;
  bool* reset_ = nullptr;
  std::vector<std::unique_ptr<alsim::v1::SolverDiagnostics>> diagnostics_;
  std::optional<ObservationWriter> final_writer_;
  std::optional<ObservationWriter> writer_;
  std::optional<JacobianWriter> jacobians_;
};

}  // namespace

grpc::Status SolverOptionsOf(const alsim::v1::SolverConfig& config, StepOptions* options) {
  // Every field goes through the option table (engine/solver/solver_option_table.h), which
  // parses, range-checks and words the error; the typed fields first, then `parameters` in key
  // order (a map's order is unspecified), so that the first error is always the same.
  SolverOptions solver = options->solver;
  std::string error;
  auto set = [&](const std::string& name, const std::string& text) {
    if (!error.empty()) return;
    const SolverOptionSpec* spec = FindSolverOption(name);
    if (spec == nullptr || name != spec->name) {
      error = "unknown solver parameter '" + name + "'";
      return;
    }
    error = SetSolverOption(*spec, text, &solver);
  };
  if (!config.solver().empty()) set("solver", config.solver());
  if (config.max_iterations() > 0) set("max_iterations", std::to_string(config.max_iterations()));
  if (config.tolerance() != 0) set("tolerance", ExactText(config.tolerance()));
  set("time_budget_us", ExactText(config.time_budget_us()));
  if (config.relaxation() != 0) set("relaxation", ExactText(config.relaxation()));
  if (!config.penalty_scaling().empty()) set("penalty_scaling", config.penalty_scaling());
  if (config.has_anderson_memory()) {
    set("anderson_memory", std::to_string(config.anderson_memory().value()));
  }
  if (config.has_delassus_refresh_steps()) {
    set("delassus_refresh_steps", std::to_string(config.delassus_refresh_steps().value()));
  }
  if (config.has_response_after_iterations()) {
    set("response_after_iterations", std::to_string(config.response_after_iterations().value()));
  }
  std::vector<std::pair<std::string, std::string>> parameters(config.parameters().begin(),
                                                              config.parameters().end());
  std::sort(parameters.begin(), parameters.end());
  for (const auto& [name, text] : parameters) set(name, text);
  if (!error.empty()) return {grpc::StatusCode::INVALID_ARGUMENT, error};
  options->solver = solver;
  return grpc::Status::OK;
}

// Ends a unary call at once with `status`.
grpc::ServerUnaryReactor* Refuse(grpc::CallbackServerContext* context, const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

alsim::v1::SolverConfig SolverConfigOf(const StepOptions& options) {
  // Every option of the table, by name, in `parameters` (the typed fields stay unset: they are a
  // subset and SolverOptionsOf reads both).
  alsim::v1::SolverConfig config;
  for (const SolverOptionSpec& spec : SolverOptionTable()) {
    (*config.mutable_parameters())[spec.name] = SolverOptionValue(spec, options.solver);
  }
  return config;
}

grpc::Status CallInterrupted(const grpc::CallbackServerContext* context) {
  if (context->IsCancelled()) return {grpc::StatusCode::CANCELLED, "the client cancelled the call"};
  if (context->deadline() < std::chrono::system_clock::now()) {
    return {grpc::StatusCode::DEADLINE_EXCEEDED,
            "deadline exceeded; the steps already taken are kept"};
  }
  return grpc::Status::OK;
}

SimulatorService::SimulatorService(const ServiceOptions& options, ServerMetrics* metrics)
    : limits_(options.limits),
      tenants_(options.tenants),
      budget_(options.limits.max_memory),
      compiler_(options.compiler),
      catalog_(SceneCatalogOptions{options.scenes_dir, options.limits.scene_cache}, &compiler_,
               &budget_),
      registry_(
          RegistryLimits{options.limits.max_instances, options.limits.max_instances_per_tenant},
          options.threads, &budget_),
      metrics_(metrics),
      started_(Clock::now()),
      watch_(options.limits.max_call_seconds),
      pump_(&registry_, metrics, options.limits.max_message_bytes) {
  PublishCounts();
}

SimulatorService::~SimulatorService() {
  watch_.StopAll();
  registry_.WaitForTasks();
}

void SimulatorService::BeginShutdown() {
  watch_.StopAll();
  pump_.Close();  // streams end with UNAVAILABLE, not a grace timeout
}

grpc::Status SimulatorService::Admit(const grpc::CallbackServerContext& context,
                                     std::string* tenant) const {
  if (watch_.stopping()) {
    return {grpc::StatusCode::UNAVAILABLE, "the server is shutting down; try another server"};
  }
  tenant->clear();
  if (tenants_ == nullptr) return grpc::Status::OK;
  return tenants_->Authenticate(context, tenant);
}

grpc::Status SimulatorService::ToStepOptions(const alsim::v1::SolverConfig& config,
                                             StepOptions* options) const {
  if (config.max_iterations() > limits_.max_iterations) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "solver max_iterations " + std::to_string(config.max_iterations()) +
                " is above the server's limit of " + std::to_string(limits_.max_iterations) +
                " (--max-iterations)"};
  }
  return SolverOptionsOf(config, options);
}

void SimulatorService::PublishCounts() {
  if (metrics_ == nullptr) return;
  metrics_->SetInstances(registry_.size());
  metrics_->SetInstancesLimit(limits_.max_instances);
  metrics_->SetScenes(catalog_.size());
  metrics_->SetMemory(static_cast<double>(budget_.used()), static_cast<double>(budget_.limit()));
}

void SimulatorService::ReturnFreedMemory() {
  // malloc keeps what destroyed instances freed in its arenas (one per thread that allocated);
  // malloc_trim hands the free pages back to the system. At most once a second: it walks every
  // arena under its lock.
  const std::int64_t now = Clock::now().time_since_epoch().count();
  std::int64_t last = last_trim_.load();
  if (now - last < std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(1)).count() ||
      !last_trim_.compare_exchange_strong(last, now)) {
    return;
  }
  malloc_trim(0);
}

grpc::ServerUnaryReactor* SimulatorService::Offload(grpc::CallbackServerContext* context,
                                                    std::function<grpc::Status()> work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  registry_.Enqueue([reactor, work = std::move(work)] { reactor->Finish(Guarded("call", work)); });
  return reactor;
}

grpc::ServerUnaryReactor* SimulatorService::ServerInfo(grpc::CallbackServerContext* context,
                                                       const alsim::v1::ServerInfoRequest*,
                                                       alsim::v1::ServerInfoResponse* response) {
  std::string tenant;
  if (grpc::Status admitted = Admit(*context, &tenant); !admitted.ok()) {
    return Refuse(context, admitted);
  }
  auto* reactor = context->DefaultReactor();
  const BuildInfo& info = ServerBuildInfo();
  response->set_version(info.version);
  response->set_git_revision(info.git_revision);
  response->set_build_type(info.build_type);
  response->set_compiler(info.compiler);
  response->set_sanitizer(info.sanitizer);
  for (const auto& [library, version] : info.dependencies) {
    (*response->mutable_dependencies())[library] = version;
  }
  response->set_hardware_threads(std::thread::hardware_concurrency());
  response->set_uptime_seconds(std::chrono::duration<double>(Clock::now() - started_).count());
  for (const std::string& name : catalog_.BuiltinNames()) response->add_builtin_scenes(name);
  response->set_instances(static_cast<std::uint32_t>(registry_.List(tenant).size()));
  response->set_max_instances(static_cast<std::uint32_t>(limits_.max_instances));
  response->set_max_message_bytes(limits_.max_message_bytes);
  response->set_max_scene_bytes(limits_.max_scene_bytes);
  response->set_max_gradient_doubles(limits_.max_gradient_doubles);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* SimulatorService::Create(grpc::CallbackServerContext* context,
                                                   const alsim::v1::CreateRequest* request,
                                                   alsim::v1::CreateResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::string tenant;
  grpc::Status status = Admit(*context, &tenant);
  if (status.ok() && ++creates_in_progress_ > limits_.max_creates) {
    --creates_in_progress_;
    status = {grpc::StatusCode::RESOURCE_EXHAUSTED, "the server is running " +
                                                        std::to_string(limits_.max_creates) +
                                                        " Creates already; try again shortly"};
  }
  if (!status.ok()) {
    reactor->Finish(status);
    return reactor;
  }
  registry_.RunOnThread([this, context, reactor, request, response, tenant] {
    const grpc::Status result =
        Guarded("call", [&] { return CreateNow(context, tenant, *request, response); });
    --creates_in_progress_;
    reactor->Finish(result);
  });
  return reactor;
}

grpc::Status SimulatorService::CreateNow(grpc::CallbackServerContext* context,
                                         const std::string& tenant,
                                         const alsim::v1::CreateRequest& request,
                                         alsim::v1::CreateResponse* response) {
  StepOptions options;
  grpc::Status status = ToStepOptions(request.solver(), &options);
  if (!status.ok()) return status;
  SceneSource source;
  switch (request.scene().source_case()) {
    case alsim::v1::SceneSource::kBuiltin:
      source.builtin = request.scene().builtin();
      if (source.builtin.empty()) {
        return {grpc::StatusCode::INVALID_ARGUMENT, "scene.builtin is empty"};
      }
      break;
    case alsim::v1::SceneSource::kText: {
      const alsim::v1::SceneText& text = request.scene().text();
      std::size_t bytes = text.text().size();
      for (const auto& [name, content] : text.assets()) bytes += name.size() + content.size();
      if (bytes > limits_.max_scene_bytes) {
        return {grpc::StatusCode::RESOURCE_EXHAUSTED,
                "the scene and its assets are " + std::to_string(bytes) +
                    " bytes; the server accepts at most " +
                    std::to_string(limits_.max_scene_bytes) + " (--max-scene-bytes)"};
      }
      source.text = text.text();
      source.filename = text.filename();
      // In name order (the map's order is unspecified): equal requests share one model.
      for (const auto& [name, content] : text.assets()) source.assets.push_back({name, content});
      std::sort(source.assets.begin(), source.assets.end(),
                [](const ModelAsset& a, const ModelAsset& b) { return a.name < b.name; });
      break;
    }
    default:
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "the request names no scene (scene.builtin or scene.text)"};
  }
  const std::uint32_t count = request.count() == 0 ? 1 : request.count();
  if (count > limits_.max_instances) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            "count " + std::to_string(count) + " is above the server's limit of " +
                std::to_string(limits_.max_instances) + " instances (--max-instances)"};
  }
  // A Create stops (and leaves nothing behind) once its client gives up or the server stops.
  auto should_stop = [this, context]() -> grpc::Status {
    if (watch_.stopping()) {
      return {grpc::StatusCode::UNAVAILABLE, "the server is shutting down; nothing was created"};
    }
    grpc::Status interrupted = CallInterrupted(context);
    if (!interrupted.ok()) {
      return {interrupted.error_code(), interrupted.error_message() + "; nothing was created"};
    }
    return grpc::Status::OK;
  };
  CreateSpec spec;
  status = catalog_.Load(source, should_stop, &spec.scene);
  if (!status.ok()) return status;
  // A solver that cannot express the scene's contacts (condim 4/6) is refused here, by name,
  // rather than by every Step.
  if (const std::string refused = SolverRefusesModel(*spec.scene.model, options.solver.type);
      !refused.empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT, refused + "; nothing was created"};
  }
  const batch::Status keyframe = batch::ResolveKeyframe(*spec.scene.model, KeyframeOf(request),
                                                        "nothing was created", &spec.keyframe);
  if (!keyframe.ok()) return ToGrpc(keyframe);
  spec.tenant = tenant;
  spec.options = options;
  spec.count = count;
  spec.seed = request.seed();
  spec.max_episode_steps = request.max_episode_steps();
  std::uint64_t group = 0;
  std::vector<std::uint64_t> ids;
  status = registry_.Create(spec, should_stop, &group, &ids);
  if (!status.ok()) return status;
  for (const std::uint64_t id : ids) response->add_instance_ids(id);
  response->set_group_id(group);
  FillSpecs(*spec.scene.model, response->mutable_specs());
  for (const std::string& warning : spec.scene.warnings) response->add_warnings(warning);
  spec.scene = LoadedScene{};  // before counting scenes: this call holds the model no more
  PublishCounts();
  return grpc::Status::OK;
}

grpc::Status SimulatorService::RunStep(const std::string& tenant,
                                       const alsim::v1::StepRequest& request,
                                       CallWatch::Ticket& ticket,
                                       alsim::v1::StepResponse* response) {
  std::vector<alsim::v1::Observation> observations;
  grpc::Status status = ParseObservations(request.observations(), false, &observations);
  if (!status.ok()) return status;
  batch::StepInputs inputs;
  inputs.actions = ViewOf(request.actions());
  inputs.external_forces = ViewOf(request.external_forces());
  inputs.substeps = request.substeps();
  inputs.reset_mask = request.reset_mask().data();
  inputs.reset_mask_size = request.reset_mask_size();
  inputs.reset_noise = request.reset_noise();
  inputs.reset_truncated = request.reset_truncated();
  inputs.observations = ObservationKindsOf(observations);
  inputs.gradients = GradientInputsOf(request);
  // Checked before the selection, so that these errors come first.
  if (batch::Status checked = batch::CheckStepInputs(inputs); !checked.ok()) {
    return ToGrpc(checked);
  }
  return registry_.WithInstances(
      tenant, Ids(request.instances()), request.instances().group_id(),
      [&](std::vector<Instance*>& instances) -> grpc::Status {
        StepResponseWriter reply(observations, inputs.gradients, response);
        std::optional<MetricsObserver> observer;
        if (metrics_ != nullptr) observer.emplace(metrics_);
        const batch::Status stepped = batch::Step(
            instances, inputs,
            {limits_.max_call_iterations, limits_.max_message_bytes, limits_.max_gradient_doubles},
            &ticket.flag, reply, observer ? &*observer : nullptr);
        // Interrupted: the reply is not sent, and the watch says why.
        if (stepped.code == batch::Code::kInterrupted) return CallWatch::Reason(ticket);
        if (stepped.ok()) reply.Finish();
        // A gradient step may have reserved memory for the instances' StepGradients.
        if (inputs.gradients.requested) PublishCounts();
        return ToGrpc(stepped);
      });
}

grpc::ServerUnaryReactor* SimulatorService::Step(grpc::CallbackServerContext* context,
                                                 const alsim::v1::StepRequest* request,
                                                 alsim::v1::StepResponse* response) {
  std::string tenant;
  if (grpc::Status admitted = Admit(*context, &tenant); !admitted.ok()) {
    return Refuse(context, admitted);
  }
  return Offload(context, [this, context, request, response, tenant] {
    const auto watched = watch_.Watch([context] { return CallInterrupted(context); });
    return RunStep(tenant, *request, watched->ticket(), response);
  });
}

grpc::ServerUnaryReactor* SimulatorService::Reset(grpc::CallbackServerContext* context,
                                                  const alsim::v1::ResetRequest* request,
                                                  alsim::v1::ResetResponse* response) {
  std::string tenant;
  if (grpc::Status admitted = Admit(*context, &tenant); !admitted.ok()) {
    return Refuse(context, admitted);
  }
  return Offload(context, [this, request, response, tenant]() -> grpc::Status {
    std::vector<alsim::v1::Observation> observations;
    grpc::Status status = ParseObservations(request->observations(), false, &observations);
    if (!status.ok()) return status;
    batch::ResetInputs inputs;
    inputs.noise = request->noise();
    inputs.keyframe = KeyframeOf(*request);
    inputs.seeds = request->seeds().data();
    inputs.seeds_size = request->seeds_size();
    inputs.observations = ObservationKindsOf(observations);
    if (batch::Status checked = batch::CheckResetInputs(inputs); !checked.ok()) {
      return ToGrpc(checked);
    }
    return registry_.WithInstances(
        tenant, Ids(request->instances()), request->instances().group_id(),
        [&](std::vector<Instance*>& instances) -> grpc::Status {
          const batch::Status reset = batch::Reset(instances, inputs, limits_.max_message_bytes);
          if (!reset.ok()) return ToGrpc(reset);
          PackObservations(instances, observations, response->mutable_observations(),
                           PackMode::kParallel);
          return grpc::Status::OK;
        });
  });
}

grpc::ServerUnaryReactor* SimulatorService::GetState(grpc::CallbackServerContext* context,
                                                     const alsim::v1::GetStateRequest* request,
                                                     alsim::v1::GetStateResponse* response) {
  std::string tenant;
  if (grpc::Status admitted = Admit(*context, &tenant); !admitted.ok()) {
    return Refuse(context, admitted);
  }
  // Offloaded: it waits for any step in progress on the instance.
  return Offload(context, [this, request, response, tenant] {
    return registry_.WithInstances(
        tenant, {request->instance_id()}, 0, [&](std::vector<Instance*>& instances) {
          const Instance& instance = *instances.front();
          response->set_state(SaveStateSnapshot(*instance.model, *instance.data));
          response->set_time(instance.data->time);
          return grpc::Status::OK;
        });
  });
}

grpc::ServerUnaryReactor* SimulatorService::SetState(grpc::CallbackServerContext* context,
                                                     const alsim::v1::SetStateRequest* request,
                                                     alsim::v1::SetStateResponse*) {
  std::string tenant;
  if (grpc::Status admitted = Admit(*context, &tenant); !admitted.ok()) {
    return Refuse(context, admitted);
  }
  return Offload(context, [this, request, tenant]() -> grpc::Status {
    return registry_.WithInstances(
        tenant, {request->instance_id()}, 0,
        [&](std::vector<Instance*>& instances) -> grpc::Status {
          Instance& instance = *instances.front();
          std::string error;
          if (!RestoreStateSnapshot(*instance.model, request->state(), *instance.data, &error)) {
            return {grpc::StatusCode::INVALID_ARGUMENT,
                    "state refused for instance " + std::to_string(instance.id) + ": " + error};
          }
          // Forces a state saved in process may hold are not the service's: it applies them
          // during the Step that carries them only (alsim.proto, SetStateRequest).
          std::fill(instance.data->xfrc_applied.begin(), instance.data->xfrc_applied.end(),
                    Vec6::Zero());
          instance.diverged = false;
          instance.episode_steps = 0;
          instance.published_time = instance.data->time;
          return grpc::Status::OK;
        });
  });
}

grpc::ServerUnaryReactor* SimulatorService::Destroy(grpc::CallbackServerContext* context,
                                                    const alsim::v1::DestroyRequest* request,
                                                    alsim::v1::DestroyResponse* response) {
  std::string tenant;
  if (grpc::Status admitted = Admit(*context, &tenant); !admitted.ok()) {
    return Refuse(context, admitted);
  }
  return Offload(context, [this, request, response, tenant] {
    int destroyed = 0;
    const grpc::Status status = registry_.Destroy(tenant, Ids(request->instances()),
                                                  request->instances().group_id(), &destroyed);
    response->set_destroyed(destroyed);
    PublishCounts();
    if (destroyed > 0) ReturnFreedMemory();
    return status;
  });
}

grpc::ServerUnaryReactor* SimulatorService::List(grpc::CallbackServerContext* context,
                                                 const alsim::v1::ListRequest*,
                                                 alsim::v1::ListResponse* response) {
  std::string tenant;
  if (grpc::Status admitted = Admit(*context, &tenant); !admitted.ok()) {
    return Refuse(context, admitted);
  }
  for (const InstanceSummary& summary : registry_.List(tenant)) {
    alsim::v1::InstanceInfo* info = response->add_instances();
    info->set_instance_id(summary.id);
    info->set_group_id(summary.group);
    info->set_scene(summary.scene);
    info->set_solver(summary.solver);
    info->set_time(summary.time);
    info->set_steps(summary.steps);
    info->set_status(summary.diverged ? alsim::v1::INSTANCE_STATUS_DIVERGED
                                      : alsim::v1::INSTANCE_STATUS_OK);
  }
  auto* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* SimulatorService::GetScene(grpc::CallbackServerContext* context,
                                                     const alsim::v1::GetSceneRequest* request,
                                                     alsim::v1::GetSceneResponse* response) {
  std::string tenant;
  if (grpc::Status admitted = Admit(*context, &tenant); !admitted.ok()) {
    return Refuse(context, admitted);
  }
  // The model and look never change, so nothing waits for a step: Check finds the instance
  // without locking it.
  std::shared_ptr<const Instance> instance;
  const grpc::Status status =
      request->instance_id() == 0
          ? grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "instance_id is unset (0)")
          : registry_.Find(tenant, request->instance_id(), &instance);
  if (status.ok()) FillScene(*instance->model, instance->look.get(), instance->scene, response);
  auto* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

grpc::ServerWriteReactor<alsim::v1::StateFrame>* SimulatorService::StreamStates(
    grpc::CallbackServerContext* context, const alsim::v1::StreamStatesRequest* request) {
  std::string tenant;
  const grpc::Status admitted = Admit(*context, &tenant);
  return pump_.Open(context, request, tenant, admitted);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* SimulatorService::StepStream(
    grpc::CallbackServerContext* context) {
  std::string tenant;
  const grpc::Status admitted = Admit(*context, &tenant);
  return new StepStreamReactor(
      context, &registry_,
      [this, context, tenant](const alsim::v1::StepRequest& request,
                              alsim::v1::StepResponse* response) {
        const auto watched = watch_.Watch([context] { return CallInterrupted(context); });
        return Guarded("message",
                       [&] { return RunStep(tenant, request, watched->ticket(), response); });
      },
      admitted);
}

}  // namespace alsim::server
