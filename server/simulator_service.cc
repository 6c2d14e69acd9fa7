#include "server/simulator_service.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include <oneapi/tbb/task_arena.h>

#include "engine/core/parallel.h"
#include "engine/sim/state_snapshot.h"
#include "engine/solver/solver.h"
#include "engine/solver/solver_option_table.h"
#include "server/build_info.h"
#include "server/metrics.h"
#include "server/step_stream.h"
#include "server/tensors.h"

namespace alsim::server {
namespace {

// Reset noise draws are uniform in [-noise, noise]: 2 noise must be a finite double.
grpc::Status CheckResetNoise(double noise, const std::string& what) {
  if (noise >= 0 && std::isfinite(2 * noise)) return grpc::Status::OK;
  return {grpc::StatusCode::INVALID_ARGUMENT, what + " must be finite, >= 0 and below 8.9e307"};
}

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
  registry_.Enqueue([reactor, work = std::move(work)] {
    grpc::Status status;
    try {
      status = work();
    } catch (const std::bad_alloc&) {
      status = {grpc::StatusCode::RESOURCE_EXHAUSTED, "the server ran out of memory for this call"};
    } catch (const std::exception& e) {
      status = {grpc::StatusCode::INTERNAL, std::string("internal error: ") + e.what()};
    }
    reactor->Finish(status);
  });
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
    grpc::Status result;
    try {
      result = CreateNow(context, tenant, *request, response);
    } catch (const std::bad_alloc&) {
      result = {grpc::StatusCode::RESOURCE_EXHAUSTED, "the server ran out of memory for this call"};
    } catch (const std::exception& e) {
      result = {grpc::StatusCode::INTERNAL, std::string("internal error: ") + e.what()};
    }
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
  constexpr std::uint32_t kMaxSubsteps = 1000000;
  if (request.substeps() > kMaxSubsteps) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "substeps " + std::to_string(request.substeps()) +
                                                    " is above the limit of " +
                                                    std::to_string(kMaxSubsteps) + " per call"};
  }
  if (grpc::Status noise = CheckResetNoise(request.reset_noise(), "reset_noise"); !noise.ok()) {
    return noise;
  }
  const int substeps = request.substeps() == 0 ? 1 : static_cast<int>(request.substeps());
  return registry_.WithInstances(
      tenant, Ids(request.instances()), request.instances().group_id(),
      [&](std::vector<Instance*>& instances) -> grpc::Status {
        const Model& model = *instances.front()->model;
        const int batch = static_cast<int>(instances.size());
        if (request.reset_mask_size() != 0 && request.reset_mask_size() != batch) {
          return {grpc::StatusCode::INVALID_ARGUMENT,
                  "reset_mask has " + std::to_string(request.reset_mask_size()) + " flags for " +
                      std::to_string(batch) + " instances; give one per instance or none"};
        }
        auto masked = [&](int k) {
          return request.reset_mask_size() != 0 && request.reset_mask(k);
        };
        for (int k = 0; k < batch; ++k) {
          const Instance* instance = instances[k];
          if (instance->model != instances.front()->model) {
            return {grpc::StatusCode::INVALID_ARGUMENT,
                    "instances " + std::to_string(instances.front()->id) + " and " +
                        std::to_string(instance->id) +
                        " run different scenes; a batch steps instances of one scene"};
          }
          if (instance->diverged && !masked(k)) {
            return {grpc::StatusCode::FAILED_PRECONDITION,
                    "instance " + std::to_string(instance->id) +
                        " diverged; Reset or SetState it (or set its reset_mask flag) before "
                        "stepping"};
          }
        }
        // Work and reply size are bounded before anything moves.
        double iterations = 0;
        for (const Instance* instance : instances) {
          iterations += static_cast<double>(substeps) * instance->options.solver.max_iterations;
        }
        if (iterations > static_cast<double>(limits_.max_call_iterations)) {
          return {grpc::StatusCode::INVALID_ARGUMENT,
                  "this call may take up to " + std::to_string(static_cast<long long>(iterations)) +
                      " solver iterations (substeps x max_iterations x instances); the server "
                      "allows " +
                      std::to_string(limits_.max_call_iterations) +
                      " per call (--max-call-iterations): take fewer substeps per call"};
        }
        // Final observations double the reply when reset_truncated may reset someone.
        const bool may_truncate =
            request.reset_truncated() && instances.front()->max_episode_steps > 0;
        const std::size_t reply_bytes =
            EstimateObservationBytes(model, batch, observations) * (may_truncate ? 2 : 1) +
            static_cast<std::size_t>(batch) * 96;
        grpc::Status fits =
            CheckMessageSize("reply", reply_bytes, limits_.max_message_bytes,
                             "ask for fewer observations or instances; nothing was stepped");
        if (!fits.ok()) return fits;
        // Both inputs' dtypes, shapes and sizes are checked here; their values are read per
        // instance, by the batch's tasks, straight from the request's bytes.
        BatchRows actions, forces;
        if (request.actions().dtype() != alsim::v1::DTYPE_UNSPECIFIED) {
          grpc::Status checked = CheckActions(request.actions(), batch, model.nu, &actions);
          if (!checked.ok()) return checked;
        }
        if (request.external_forces().dtype() != alsim::v1::DTYPE_UNSPECIFIED) {
          grpc::Status checked =
              CheckExternalForces(request.external_forces(), batch, model, &forces);
          if (!checked.ok()) return checked;
        }
        static_assert(sizeof(Vec6) == 6 * sizeof(double), "xfrc_applied rows are 6 doubles");

        // Every per-instance pass runs as the batch's parallel tasks, one instance per task, so
        // that nothing on the server walks K instances' data one after another. Isolated: while
        // this thread waits for the batch's tasks it must not pick up another queued RPC, which
        // could block on an instance lock this thread holds. Another call's batch runs beside
        // this one on the threads that call took, and idle threads steal from both.
        auto for_each_instance = [batch](const auto& body) {
          tbb::this_task_arena::isolate([&] { ParallelFor(0, batch, 1, body); });
        };

        // 1. Validation, before anything moves: every value of both inputs finite (the masked
        // instances' rows too: NaN or Inf anywhere refuses the request), every masked instance's
        // reset computable. Tasks finish in any order; each failure kind keeps its lowest index,
        // so the error names the first bad element in batch order, as a serial scan would: the
        // actions' first, then the forces', then the first reset.
        std::vector<PreparedReset> prepared(request.reset_mask_size() != 0 ? batch : 0);
        std::atomic<std::size_t> bad_action{BatchRows::kNone}, bad_force{BatchRows::kNone};
        std::atomic<int> bad_reset{batch};
        std::atomic<int> resets{0};
        auto keep_lowest = [](auto& lowest, auto value) {
          auto seen = lowest.load(std::memory_order_relaxed);
          while (value < seen && !lowest.compare_exchange_weak(seen, value)) {
          }
        };
        if (actions.present() || forces.present() || !prepared.empty()) {
          for_each_instance([&](int k) {
            keep_lowest(bad_action, actions.FirstNonFinite(k));
            keep_lowest(bad_force, forces.FirstNonFinite(k));
            if (!masked(k)) return;
            resets.fetch_add(1, std::memory_order_relaxed);
            const Instance& instance = *instances[k];
            if (!PrepareReset(*instance.model, instance.rng, request.reset_noise(), &prepared[k])) {
              keep_lowest(bad_reset, k);
            }
          });
        }
        if (bad_action != BatchRows::kNone) return actions.NonFinite(bad_action);
        if (bad_force != BatchRows::kNone) return forces.NonFinite(bad_force);
        if (bad_reset < batch) {
          return {grpc::StatusCode::INVALID_ARGUMENT,
                  "reset_noise " + std::to_string(request.reset_noise()) + " leaves instance " +
                      std::to_string(instances[bad_reset]->id) +
                      " with a position or velocity that is not finite; nothing was stepped"};
        }
        const int stepped = batch - resets;

        // 2. The substeps. The first pass also applies the masked instances' resets (they take no
        // substep) and reads each other instance's row of actions into its ctrl and of forces into
        // its xfrc_applied; the last pass ends the instance's stepping. The passes stay separate
        // (a barrier between substeps) so that an interruption stops every instance after the
        // same number of substeps. External forces act during this call's substeps only
        // (alsim.proto, StepRequest): an instance holds none between calls (zero, as a new Data),
        // so they are cleared when its stepping ends, an interrupted call included.
        // `truncated` and `reset_after` are per instance (chars: a vector<bool> shares bytes).
        std::vector<char> truncated(batch, 0), reset_after(batch, 0);
        std::atomic<bool> any_truncated_reset{false};
        auto begin_call = [&](int k) {
          Instance& instance = *instances[k];
          if (masked(k)) {
            CommitReset(instance, std::move(prepared[k]));
            return;
          }
          if (actions.present()) actions.Read(k, instance.data->ctrl.data());
          if (forces.present()) forces.Read(k, instance.data->xfrc_applied.front().data());
          ++instance.episode_steps;
          truncated[k] = instance.max_episode_steps > 0 &&
                         instance.episode_steps >= instance.max_episode_steps;
          reset_after[k] = truncated[k] && request.reset_truncated();
          if (reset_after[k]) any_truncated_reset.store(true, std::memory_order_relaxed);
        };
        auto end_stepping = [&](int k) {
          Instance& instance = *instances[k];
          if (forces.present() && !masked(k)) {
            std::fill(instance.data->xfrc_applied.begin(), instance.data->xfrc_applied.end(),
                      Vec6::Zero());
          }
          instance.published_time = instance.data->time;
        };
        const auto start = Clock::now();
        grpc::Status interrupted = CallWatch::Reason(ticket);
        bool ended = false;
        // The first pass runs even when the call is already interrupted (without its substep):
        // the resets and inputs are applied as by an uninterrupted call.
        for (int n = 0; n == 0 || (n < substeps && interrupted.ok()); ++n) {
          const bool step = interrupted.ok();
          const bool last = n == substeps - 1 || !step;
          for_each_instance([&](int k) {
            if (n == 0) begin_call(k);
            Instance& instance = *instances[k];
            if (step && !instance.diverged && !masked(k)) {
              StepOptions step_options = instance.options;
              step_options.solver.interrupt = &ticket.flag;
              const StepStatus result = alsim::Step(*instance.model, *instance.data, step_options);
              ++instance.steps;
              if (result != StepStatus::kOk) {
                instance.diverged = true;
                if (metrics_ != nullptr) metrics_->AddDiverged();
              }
            }
            if (last) end_stepping(k);
          });
          ended = last;
          interrupted = CallWatch::Reason(ticket);
        }
        if (!ended) for_each_instance(end_stepping);
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        const double seconds_per_step =
            stepped > 0 ? seconds / (static_cast<double>(stepped) * substeps) : 0;
        if (metrics_ != nullptr && stepped > 0) {
          metrics_->AddSteps(static_cast<double>(stepped) * substeps);
        }
        if (!interrupted.ok()) {
          // The reply is not sent; the steps taken are kept and counted.
          if (metrics_ != nullptr && stepped > 0) {
            for_each_instance([&](int k) {
              if (masked(k)) return;
              metrics_->ObserveStep(instances[k]->data->solver_statistics, seconds_per_step);
            });
          }
          return interrupted;
        }
        response->set_step_seconds(seconds);

        // 3. The reply, in place: every repeated field and observation tensor sized here, each
        // instance's task writing its own entries. SAME_STEP: an instance reset after its
        // truncation has its truncated state written to final_observations first, then starts
        // the new episode; its reset draws from the instance's generator with the call's noise,
        // checked above, as for the masked ones.
        response->mutable_status()->Resize(batch, alsim::v1::INSTANCE_STATUS_OK);
        response->mutable_truncated()->Resize(batch, false);
        response->mutable_reset()->Resize(batch, false);
        int* status_out = response->mutable_status()->mutable_data();
        bool* truncated_out = response->mutable_truncated()->mutable_data();
        bool* reset_out = response->mutable_reset()->mutable_data();
        // Diagnostics are messages (with a map each): made and filled by the tasks, then handed
        // to the repeated field in batch order (a pointer each; protobuf adds them one by one).
        std::vector<std::unique_ptr<alsim::v1::SolverDiagnostics>> diagnostics(batch);
        std::optional<ObservationWriter> final_writer;
        if (any_truncated_reset) {
          final_writer.emplace(model, batch, observations, response->mutable_final_observations());
        }
        const ObservationWriter writer(model, batch, observations,
                                       response->mutable_observations());
        for_each_instance([&](int k) {
          Instance& instance = *instances[k];
          status_out[k] = instance.diverged ? alsim::v1::INSTANCE_STATUS_DIVERGED
                                            : alsim::v1::INSTANCE_STATUS_OK;
          diagnostics[k] = std::make_unique<alsim::v1::SolverDiagnostics>();
          FillDiagnostics(instance.data->solver_statistics, diagnostics[k].get());
          truncated_out[k] = truncated[k];
          reset_out[k] = masked(k) || reset_after[k];
          if (metrics_ != nullptr && stepped > 0 && !masked(k)) {
            metrics_->ObserveStep(instance.data->solver_statistics, seconds_per_step);
          }
          if (final_writer) final_writer->Write(k, *instance.data);
          if (reset_after[k]) {
            PreparedReset reset;
            if (PrepareReset(*instance.model, instance.rng, request.reset_noise(), &reset)) {
              CommitReset(instance, std::move(reset));
            } else {  // noise that overflows this scene's state: it stays truncated, unreset
              reset_out[k] = false;
            }
          }
          writer.Write(k, *instance.data);
        });
        google::protobuf::RepeatedPtrField<alsim::v1::SolverDiagnostics>* out =
            response->mutable_diagnostics();
        out->Reserve(batch);
        for (auto& filled : diagnostics) out->AddAllocated(filled.release());
        return grpc::Status::OK;
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
    if (grpc::Status noise = CheckResetNoise(request->noise(), "reset noise"); !noise.ok()) {
      return noise;
    }
    return registry_.WithInstances(
        tenant, Ids(request->instances()), request->instances().group_id(),
        [&](std::vector<Instance*>& instances) -> grpc::Status {
          if (request->seeds_size() != 0 &&
              request->seeds_size() != static_cast<int>(instances.size())) {
            return {grpc::StatusCode::INVALID_ARGUMENT,
                    std::to_string(request->seeds_size()) + " seeds for " +
                        std::to_string(instances.size()) +
                        " instances; give one per instance or none"};
          }
          bool one_scene = true;
          for (const Instance* instance : instances) {
            one_scene = one_scene && instance->model == instances.front()->model;
          }
          if (!observations.empty() && !one_scene) {
            return {grpc::StatusCode::INVALID_ARGUMENT,
                    "observations can only be returned for instances of one scene; nothing "
                    "was reset"};
          }
          const std::size_t reply_bytes = EstimateObservationBytes(
              *instances.front()->model, static_cast<int>(instances.size()), observations);
          grpc::Status fits = CheckMessageSize("reply", reply_bytes, limits_.max_message_bytes,
                                               "nothing was reset");
          if (!fits.ok()) return fits;
          // Every instance's reset is computed before any is applied: all or nothing.
          // Per instance as parallel tasks, as in a batched step; the error names the first
          // failing instance in request order.
          const int batch = static_cast<int>(instances.size());
          std::vector<PreparedReset> prepared(instances.size());
          std::vector<char> finite(instances.size(), 0);
          auto for_each_instance = [batch](const auto& body) {
            tbb::this_task_arena::isolate([&] { ParallelFor(0, batch, 1, body); });
          };
          for_each_instance([&](int k) {
            const Instance& instance = *instances[k];
            const std::mt19937_64 rng =
                request->seeds_size() != 0 ? std::mt19937_64(request->seeds(k)) : instance.rng;
            finite[k] = PrepareReset(*instance.model, rng, request->noise(), &prepared[k]);
          });
          for (int k = 0; k < batch; ++k) {
            if (finite[k]) continue;
            return {grpc::StatusCode::INVALID_ARGUMENT,
                    "reset noise " + std::to_string(request->noise()) + " leaves instance " +
                        std::to_string(instances[k]->id) +
                        " with a position or velocity that is not finite; nothing was reset"};
          }
          for_each_instance([&](int k) { CommitReset(*instances[k], std::move(prepared[k])); });
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
        try {
          return RunStep(tenant, request, watched->ticket(), response);
        } catch (const std::bad_alloc&) {
          return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                              "the server ran out of memory for this message");
        }
      },
      admitted);
}

}  // namespace alsim::server
