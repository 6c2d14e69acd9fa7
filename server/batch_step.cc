#include "server/batch_step.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>

#include <oneapi/tbb/task_arena.h>

#include "engine/core/parallel.h"
#include "engine/model/model.h"

namespace alsim::server::batch {
namespace {

using Clock = std::chrono::steady_clock;

Status Invalid(std::string message) { return {Code::kInvalidArgument, std::move(message)}; }

// Runs body(k) for every instance k of a batch as parallel tasks, isolated (see the header).
template <class Body>
void ForEachInstance(int batch, const Body& body) {
  tbb::this_task_arena::isolate([&] { ParallelFor(0, batch, 1, body); });
}

// Lowers `lowest` to `value` if it is lower: tasks finish in any order, and each failure kind
// keeps its lowest index, so that an error names the first bad element in batch order, as a
// serial scan would.
template <class T>
void KeepLowest(std::atomic<T>& lowest, T value) {
  T seen = lowest.load(std::memory_order_relaxed);
  while (value < seen && !lowest.compare_exchange_weak(seen, value)) {
  }
}

// "[a, b, c]".
template <class It>
std::string ShapeText(It begin, It end) {
  std::string text;
  for (It n = begin; n != end; ++n) text += (text.empty() ? "" : ", ") + std::to_string(*n);
  return "[" + text + "]";
}

// Checks that `tensor` is float32 or float64 of exactly `shape` and holds its bytes;
// INVALID_ARGUMENT, with a message that starts with `what`, otherwise (`meaning` names the
// dimensions). Its values are left to BatchRows, read per row.
Status CheckBatch(const TensorView& tensor, const std::string& what, const std::vector<long>& shape,
                  const char* meaning, bool* single) {
  *single = tensor.dtype == DType::kFloat32;
  if (!*single && tensor.dtype != DType::kFloat64) {
    return Invalid(what + " must be float32 or float64");
  }
  bool same = tensor.rank == static_cast<int>(shape.size());
  for (int i = 0; same && i < tensor.rank; ++i) same = tensor.shape[i] == shape[i];
  if (!same) {
    return Invalid(what + " have shape " + ShapeText(tensor.shape, tensor.shape + tensor.rank) +
                   "; this batch needs " + ShapeText(shape.begin(), shape.end()) + " " + meaning);
  }
  std::size_t count = 1;
  for (const long n : shape) count *= static_cast<std::size_t>(n);
  const std::size_t element = *single ? sizeof(float) : sizeof(double);
  if (tensor.bytes != count * element) {
    return Invalid(what + " hold " + std::to_string(tensor.bytes) + " bytes; shape " +
                   ShapeText(shape.begin(), shape.end()) + " of " +
                   (*single ? "float32" : "float64") + " needs " + std::to_string(count * element));
  }
  return {};
}

// The one reset path of Step's masked and truncated instances and of Reset: `instance` reset to
// `keyframe` (null: its own, Instance::keyframe) with `noise` on top, drawn from its own generator
// or, when `seed` is given, from a new one seeded with it.
bool PrepareInstanceReset(const Instance& instance, double noise, const int* keyframe,
                          const std::uint64_t* seed, PreparedReset* out) {
  const ResetSpec spec{noise, keyframe != nullptr ? *keyframe : instance.keyframe};
  return seed != nullptr ? PrepareReset(*instance.model, std::mt19937_64(*seed), spec, out)
                         : PrepareReset(*instance.model, instance.rng, spec, out);
}

// INVALID_ARGUMENT: the noise (the input `what`) leaves `instance` with a state that is not finite.
Status ResetNotFinite(const std::string& what, double noise, const Instance& instance,
                      const char* consequence) {
  return Invalid(what + " " + std::to_string(noise) + " leaves instance " +
                 std::to_string(instance.id) + " with a position or velocity that is not finite; " +
                 consequence);
}

}  // namespace

// ---- inputs ---------------------------------------------------------------------------------

std::size_t BatchRows::FirstNonFinite(int k) const {
  if (bytes_ == nullptr) return kNone;
  const std::size_t first = static_cast<std::size_t>(k) * row_;
  for (std::size_t i = first; i < first + row_; ++i) {
    double value;
    if (single_) {
      float f;
      std::memcpy(&f, bytes_ + i * sizeof(float), sizeof(float));
      value = f;
    } else {
      std::memcpy(&value, bytes_ + i * sizeof(double), sizeof(double));
    }
    if (!std::isfinite(value)) return i;
  }
  return kNone;
}

void BatchRows::Read(int k, double* out) const {
  if (row_ == 0) return;  // a scene without actuators: `out` may be null, and memcpy wants none
  const std::size_t first = static_cast<std::size_t>(k) * row_;
  if (!single_) {  // the request's bytes need not be aligned for doubles: memcpy
    std::memcpy(out, bytes_ + first * sizeof(double), row_ * sizeof(double));
    return;
  }
  for (std::size_t i = 0; i < row_; ++i) {
    float f;
    std::memcpy(&f, bytes_ + (first + i) * sizeof(float), sizeof(float));
    out[i] = f;
  }
}

Status BatchRows::NonFinite(std::size_t i) const {
  return Invalid(describe_(i) + " is not finite; no instance was stepped");
}

Status CheckActions(const TensorView& actions, int batch, int nu, BatchRows* rows) {
  Status status =
      CheckBatch(actions, "actions", {batch, nu}, "(instances, actuators)", &rows->single_);
  if (!status.ok()) return status;
  rows->bytes_ = actions.data;
  rows->row_ = static_cast<std::size_t>(nu);
  rows->describe_ = [nu](std::size_t i) {
    return "action [" + std::to_string(i / nu) + ", " + std::to_string(i % nu) + "]";
  };
  return {};
}

Status CheckExternalForces(const TensorView& forces, int batch, const Model& m, BatchRows* rows) {
  Status status = CheckBatch(forces, "external_forces", {batch, m.nbody, 6},
                             "(instances, bodies, force and torque)", &rows->single_);
  if (!status.ok()) return status;
  rows->bytes_ = forces.data;
  rows->row_ = static_cast<std::size_t>(m.nbody) * 6;
  rows->describe_ = [&m](std::size_t i) {
    const std::size_t body = i / 6 % m.nbody;
    return "external force [" + std::to_string(i / (6 * m.nbody)) + ", " + std::to_string(body) +
           ", " + std::to_string(i % 6) + "] (body '" + m.body_name[body] + "')";
  };
  return {};
}

int ObservationKinds::count() const {
  return static_cast<int>(qpos) + static_cast<int>(qvel) + static_cast<int>(body_poses) +
         static_cast<int>(actuator_state) + static_cast<int>(contact_summary) +
         static_cast<int>(time) + static_cast<int>(deformable_vertices);
}

std::size_t ObservationBytes(const Model& m, int batch, const ObservationKinds& kinds) {
  std::size_t per_instance = 0;  // bytes of one instance's values
  if (kinds.qpos) per_instance += 8u * m.nq;
  if (kinds.qvel) per_instance += 8u * m.nv;
  if (kinds.body_poses) per_instance += 8u * 7u * m.nbody;
  if (kinds.actuator_state) per_instance += 8u * 2u * m.nu;
  if (kinds.contact_summary) per_instance += 4 + 8;
  if (kinds.time) per_instance += 8;
  if (kinds.deformable_vertices) per_instance += 8u * 3u * m.nvert;
  // Each tensor adds a name, a dtype and a shape: a few dozen bytes.
  return per_instance * static_cast<std::size_t>(batch) +
         64 * static_cast<std::size_t>(kinds.count());
}

Status CheckMessageSize(const char* what, std::size_t bytes, std::size_t limit,
                        const std::string& consequence) {
  if (bytes <= limit) return {};
  return {Code::kResourceExhausted,
          std::string("the ") + what + " would be about " + std::to_string(bytes) +
              " bytes, above the server's message limit of " + std::to_string(limit) +
              " (--max-message-bytes); " + consequence};
}

Status ResolveKeyframe(const Model& m, const KeyframeRef& ref, const std::string& consequence,
                       int* key) {
  std::string what;
  switch (ref.by) {
    case KeyframeRef::By::kNone:
      *key = -1;
      return {};
    case KeyframeRef::By::kName:
      if (const int found = KeyframeId(m, ref.name); found >= 0) {
        *key = found;
        return {};
      }
      what = "no keyframe is named '" + ref.name + "'";
      break;
    case KeyframeRef::By::kIndex:
      if (ref.index < static_cast<std::uint32_t>(m.nkey)) {
        *key = static_cast<int>(ref.index);
        return {};
      }
      what = "keyframe index " + std::to_string(ref.index) + " is out of range";
      break;
  }
  return Invalid(what + "; the scene's keyframes: " + DescribeKeyframes(m) + "; " + consequence);
}

Status CheckResetNoise(double noise, const std::string& what) {
  if (noise >= 0 && std::isfinite(2 * noise)) return {};
  return Invalid(what + " must be finite, >= 0 and below 8.9e307");
}

// ---- the batched step -------------------------------------------------------------------------

std::size_t GradientDoubles(const Model& m, int batch, const GradientRequest& request) {
  const std::size_t nv = static_cast<std::size_t>(m.nv);
  std::size_t columns = 0;  // per instance, over the blocks' dv and dq halves
  if (request.state) columns += (request.positions ? 4 : 2) * nv;
  if (request.controls) columns += 2 * static_cast<std::size_t>(m.nu);
  columns += 2 * request.parameters.size();
  return static_cast<std::size_t>(batch) * nv * columns;
}

Status CheckStepInputs(const StepInputs& in) {
  if (in.substeps > kMaxSubsteps) {
    return Invalid("substeps " + std::to_string(in.substeps) + " is above the limit of " +
                   std::to_string(kMaxSubsteps) + " per call");
  }
  const GradientInputs& gradients = in.gradients;
  if (gradients.requested) {
    // A call's Jacobians are those of one step: chaining substeps' would need every block.
    if (in.substeps > 1) {
      return Invalid("gradients are those of one step: substeps must be 0 or 1, not " +
                     std::to_string(in.substeps) + "; nothing was stepped");
    }
    if (!gradients.request.state && !gradients.request.controls &&
        gradients.request.parameters.empty()) {
      return Invalid(
          "gradients ask for nothing: set state, controls or parameters; nothing was stepped");
    }
  }
  return CheckResetNoise(in.reset_noise, "reset_noise");
}

namespace {

// One call of Step, in its three phases: Check (nothing moves on an error), Run (the substeps)
// and Reply. Every per-instance pass is the batch's parallel tasks.
class StepCall {
 public:
  StepCall(const std::vector<Instance*>& instances, const StepInputs& in,
           const std::atomic<bool>* interrupt, StepObserver* observer)
      : instances_(instances),
        in_(in),
        interrupt_(interrupt),
        observer_(observer),
        batch_(static_cast<int>(instances.size())),
        substeps_(in.substeps == 0 ? 1 : static_cast<int>(in.substeps)),
        noise_(in.reset_noise) {}

  Status Check(const StepLimits& limits);
  // False when the interrupt flag stopped it.
  bool Run();
  void Reply(StepReply& reply);

 private:
  bool masked(int k) const { return in_.reset_mask_size != 0 && in_.reset_mask[k]; }
  Status CheckInstances(const StepLimits& limits) const;
  Status CheckGradients(const StepLimits& limits) const;
  Status CheckValues();
  Status ReserveGradients();
  StepStatus GradientStep(int k, const StepOptions& options);
  void BeginCall(int k);
  void EndStepping(int k);

  const std::vector<Instance*>& instances_;
  const StepInputs& in_;
  const std::atomic<bool>* interrupt_;
  StepObserver* observer_;
  const int batch_;
  const int substeps_;
  const double noise_;  // of the masked and truncated resets
  BatchRows actions_, forces_;
  std::vector<PreparedReset> prepared_;  // the masked instances' resets
  int stepped_ = 0;                      // instances stepped (not masked)
  // Per instance (chars: a vector<bool> shares bytes): this call ended its episode; it is reset
  // after the substeps (reset_truncated).
  std::vector<char> truncated_, reset_after_;
  std::atomic<bool> any_reset_after_{false};
  // A gradient step's Jacobians per instance, and whether instance k's were computed (sized only
  // when the call asks for gradients).
  std::vector<StepJacobians> jacobians_;
  std::vector<char> computed_;
  double seconds_ = 0;
};

Status StepCall::CheckInstances(const StepLimits& limits) const {
  if (in_.reset_mask_size != 0 && in_.reset_mask_size != batch_) {
    return Invalid("reset_mask has " + std::to_string(in_.reset_mask_size) + " flags for " +
                   std::to_string(batch_) + " instances; give one per instance or none");
  }
  const Instance& first = *instances_.front();
  for (int k = 0; k < batch_; ++k) {
    const Instance* instance = instances_[k];
    if (instance->model != first.model) {
      return Invalid("instances " + std::to_string(first.id) + " and " +
                     std::to_string(instance->id) +
                     " run different scenes; a batch steps instances of one scene");
    }
    if (instance->diverged && !masked(k)) {
      return {Code::kFailedPrecondition,
              "instance " + std::to_string(instance->id) +
                  " diverged; Reset or SetState it (or set its reset_mask flag) before stepping"};
    }
  }
  // Work and reply size are bounded before anything moves.
  double iterations = 0;
  for (const Instance* instance : instances_) {
    iterations += static_cast<double>(substeps_) * instance->options.solver.max_iterations;
  }
  if (iterations > static_cast<double>(limits.max_call_iterations)) {
    return Invalid("this call may take up to " +
                   std::to_string(static_cast<long long>(iterations)) +
                   " solver iterations (substeps x max_iterations x instances); the server "
                   "allows " +
                   std::to_string(limits.max_call_iterations) +
                   " per call (--max-call-iterations): take fewer substeps per call");
  }
  if (Status checked = CheckGradients(limits); !checked.ok()) return checked;
  // Final observations double the reply when reset_truncated may reset someone.
  const bool may_truncate = in_.reset_truncated && first.max_episode_steps > 0;
  std::size_t reply_bytes =
      ObservationBytes(*first.model, batch_, in_.observations) * (may_truncate ? 2 : 1) +
      static_cast<std::size_t>(batch_) * 96;
  if (in_.gradients.requested) {
    // The Jacobians' values, a name and shape per tensor, and per instance a flag, a residual
    // and a count.
    reply_bytes += sizeof(double) * GradientDoubles(*first.model, batch_, in_.gradients.request) +
                   8 * 64 + static_cast<std::size_t>(batch_) * 24;
    for (const std::string& name : in_.gradients.request.parameters) reply_bytes += name.size() + 8;
  }
  return CheckMessageSize("reply", reply_bytes, limits.max_message_bytes,
                          "ask for fewer observations or instances; nothing was stepped");
}

Status StepCall::CheckGradients(const StepLimits& limits) const {
  const GradientInputs& gradients = in_.gradients;
  if (!gradients.requested) return {};
  if (gradients.mask_size != 0) {
    if (gradients.mask_size != batch_) {
      return Invalid("gradients.instance_mask has " + std::to_string(gradients.mask_size) +
                     " flags for " + std::to_string(batch_) +
                     " instances; give one per instance or none");
    }
    if (std::none_of(gradients.mask, gradients.mask + batch_, [](bool set) { return set; })) {
      return Invalid(
          "gradients.instance_mask sets no flag: no instance asks for gradients; nothing was "
          "stepped");
    }
  }
  const Model& model = *instances_.front()->model;
  const std::size_t doubles = GradientDoubles(model, batch_, gradients.request);
  if (doubles > limits.max_gradient_doubles) {
    return Invalid(
        "the gradients asked for would be " + std::to_string(doubles) + " float64 values (" +
        std::to_string(batch_) + " instances, nv " + std::to_string(model.nv) + ", nu " +
        std::to_string(model.nu) + ", " + std::to_string(gradients.request.parameters.size()) +
        " parameters), above the server's limit of " + std::to_string(limits.max_gradient_doubles) +
        " per reply (--max-gradient-doubles); ask for fewer instances or blocks per "
        "call; nothing was stepped");
  }
  // An instance that a reset_mask flag resets takes no step: its options are not looked at.
  for (int k = 0; k < batch_; ++k) {
    if (!gradients.asks(k) || masked(k)) continue;
    const Instance& instance = *instances_[k];
    const std::string refused =
        StepGradients::Validate(*instance.model, instance.options, gradients.request);
    if (!refused.empty()) {
      return Invalid("instance " + std::to_string(instance.id) + ": " + refused +
                     "; nothing was stepped");
    }
  }
  return {};
}

Status StepCall::CheckValues() {
  // Both inputs' dtypes, shapes and sizes first; their values are read per instance, by the
  // batch's tasks, straight from the request's bytes.
  const Model& model = *instances_.front()->model;
  if (in_.actions.dtype != DType::kAbsent) {
    Status checked = CheckActions(in_.actions, batch_, model.nu, &actions_);
    if (!checked.ok()) return checked;
  }
  if (in_.external_forces.dtype != DType::kAbsent) {
    Status checked = CheckExternalForces(in_.external_forces, batch_, model, &forces_);
    if (!checked.ok()) return checked;
  }
  // Every value of both inputs finite (the masked instances' rows too: NaN or Inf anywhere
  // refuses the request), every masked instance's reset computable; the error names the
  // actions' first bad value, then the forces', then the first reset.
  prepared_.resize(in_.reset_mask_size != 0 ? batch_ : 0);
  std::atomic<std::size_t> bad_action{BatchRows::kNone}, bad_force{BatchRows::kNone};
  std::atomic<int> bad_reset{batch_};
  std::atomic<int> resets{0};
  if (actions_.present() || forces_.present() || !prepared_.empty()) {
    ForEachInstance(batch_, [&](int k) {
      KeepLowest(bad_action, actions_.FirstNonFinite(k));
      KeepLowest(bad_force, forces_.FirstNonFinite(k));
      if (!masked(k)) return;
      resets.fetch_add(1, std::memory_order_relaxed);
      if (!PrepareInstanceReset(*instances_[k], noise_, nullptr, nullptr, &prepared_[k])) {
        KeepLowest(bad_reset, k);
      }
    });
  }
  if (bad_action != BatchRows::kNone) return actions_.NonFinite(bad_action);
  if (bad_force != BatchRows::kNone) return forces_.NonFinite(bad_force);
  if (bad_reset < batch_) {
    return ResetNotFinite("reset_noise", noise_, *instances_[bad_reset], "nothing was stepped");
  }
  stepped_ = batch_ - resets;
  return {};
}

Status StepCall::Check(const StepLimits& limits) {
  if (Status checked = CheckStepInputs(in_); !checked.ok()) return checked;
  if (Status checked = CheckInstances(limits); !checked.ok()) return checked;
  if (Status checked = CheckValues(); !checked.ok()) return checked;
  return ReserveGradients();
}

// The memory of the asking instances' StepGradients, from the budget that holds the instances
// (--max-memory), before any is made: about two instances' worth (a second Data, two solvers),
// and the model's once parameters are asked for (a copy to perturb). Kept by the instance until
// it is freed; each instance is charged once. Last of the checks, so that a refused call
// reserves nothing.
Status StepCall::ReserveGradients() {
  if (!in_.gradients.requested) return {};
  const bool copy = !in_.gradients.request.parameters.empty();
  std::vector<std::uint64_t> more(batch_, 0);
  std::uint64_t total = 0;
  MemoryBudget* budget = nullptr;
  for (int k = 0; k < batch_; ++k) {
    const Instance& instance = *instances_[k];
    if (!in_.gradients.asks(k) || masked(k) || instance.budget == nullptr) continue;
    const std::uint64_t need = 2 * instance.instance_bytes + (copy ? instance.model_bytes : 0);
    if (need <= instance.gradient_bytes) continue;
    more[k] = need - instance.gradient_bytes;
    total += more[k];
    budget = instance.budget;
  }
  if (total == 0) return {};
  if (!budget->TryReserve(total)) {
    return {Code::kResourceExhausted,
            "gradient steps of these instances need about " + std::to_string(total >> 10) +
                " KiB more, more than is left of the server's memory budget (" +
                std::to_string(budget->limit() >> 20) + " MiB, --max-memory); nothing was stepped"};
  }
  for (int k = 0; k < batch_; ++k) {
    instances_[k]->gradient_bytes += more[k];
    instances_[k]->reserved_bytes += more[k];
  }
  return {};
}

// The first substep's pass also applies the masked instances' resets (they take no substep) and
// reads each other instance's row of actions into its ctrl and of forces into its xfrc_applied.
void StepCall::BeginCall(int k) {
  Instance& instance = *instances_[k];
  if (masked(k)) {
    CommitReset(instance, std::move(prepared_[k]));
    return;
  }
  static_assert(sizeof(Vec6) == 6 * sizeof(double), "xfrc_applied rows are 6 doubles");
  if (actions_.present()) actions_.Read(k, instance.data->ctrl.data());
  if (forces_.present()) forces_.Read(k, instance.data->xfrc_applied.front().data());
  ++instance.episode_steps;
  truncated_[k] =
      instance.max_episode_steps > 0 && instance.episode_steps >= instance.max_episode_steps;
  reset_after_[k] = truncated_[k] && in_.reset_truncated;
  if (reset_after_[k]) any_reset_after_.store(true, std::memory_order_relaxed);
}

// External forces act during this call's substeps only (alsim.proto, StepRequest): an instance
// holds none between calls (zero, as a new Data), so they are cleared when its stepping ends, an
// interrupted call included.
void StepCall::EndStepping(int k) {
  Instance& instance = *instances_[k];
  if (forces_.present() && !masked(k)) {
    std::fill(instance.data->xfrc_applied.begin(), instance.data->xfrc_applied.end(), Vec6::Zero());
  }
  instance.published_time = instance.data->time;
}

// Instance k's step with its StepGradients, made for its model and solver when it has none or
// one for another; its Jacobians into jacobians_[k].
StepStatus StepCall::GradientStep(int k, const StepOptions& options) {
  Instance& instance = *instances_[k];
  const SolverType solver = instance.options.solver.type;
  if (instance.gradients == nullptr || instance.gradients_model != instance.model.get() ||
      instance.gradients_solver != solver) {
    instance.gradients.reset();  // before the new one: never two at once
    instance.gradients = std::make_unique<StepGradients>(*instance.model, solver);
    instance.gradients_model = instance.model.get();
    instance.gradients_solver = solver;
  }
  StepJacobians& out = jacobians_[k];
  const StepStatus result = instance.gradients->Step(*instance.model, *instance.data, options,
                                                     in_.gradients.request, &out);
  // Without a linearization (a Hessian that could not be factored) the step is taken and `out`
  // is left empty: nv 0.
  computed_[k] = result == StepStatus::kOk && out.nv == instance.model->nv;
  return result;
}

bool StepCall::Run() {
  // The passes stay separate (a barrier between substeps) so that an interruption stops every
  // instance after the same number of substeps.
  truncated_.assign(batch_, 0);
  reset_after_.assign(batch_, 0);
  if (in_.gradients.requested) {
    jacobians_.resize(batch_);
    computed_.assign(batch_, 0);
  }
  auto interrupted = [this] { return interrupt_ != nullptr && interrupt_->load(); };
  const auto start = Clock::now();
  bool stop = interrupted();
  bool ended = false;
  // The first pass runs even when the call is already interrupted (without its substep): the
  // resets and inputs are applied as by an uninterrupted call.
  for (int n = 0; n == 0 || (n < substeps_ && !stop); ++n) {
    const bool step = !stop;
    const bool last = n == substeps_ - 1 || !step;
    ForEachInstance(batch_, [&](int k) {
      if (n == 0) BeginCall(k);
      Instance& instance = *instances_[k];
      if (step && !instance.diverged && !masked(k)) {
        StepOptions step_options = instance.options;
        step_options.solver.interrupt = interrupt_;
        const StepStatus result = in_.gradients.asks(k)
                                      ? GradientStep(k, step_options)
                                      : alsim::Step(*instance.model, *instance.data, step_options);
        ++instance.steps;
        if (result != StepStatus::kOk) {
          instance.diverged = true;
          if (observer_ != nullptr) observer_->Diverged();
        }
      }
      if (last) EndStepping(k);
    });
    ended = last;
    stop = interrupted();
  }
  if (!ended) ForEachInstance(batch_, [this](int k) { EndStepping(k); });
  seconds_ = std::chrono::duration<double>(Clock::now() - start).count();
  if (observer_ == nullptr || stepped_ == 0) return !stop;
  observer_->Stepped(static_cast<double>(stepped_) * substeps_);
  if (stop) {  // no reply; the steps taken are kept and counted
    const double seconds_per_step = seconds_ / (static_cast<double>(stepped_) * substeps_);
    ForEachInstance(batch_, [&](int k) {
      if (!masked(k)) observer_->Solved(instances_[k]->data->solver_statistics, seconds_per_step);
    });
  }
  return !stop;
}

// Each instance's task writes its own entries. SAME_STEP: an instance reset after its truncation
// has its truncated state written first, then starts the new episode; its reset draws from the
// instance's generator with the call's noise, as for the masked ones.
void StepCall::Reply(StepReply& reply) {
  const double seconds_per_step =
      stepped_ > 0 ? seconds_ / (static_cast<double>(stepped_) * substeps_) : 0;
  const bool observe = observer_ != nullptr && stepped_ > 0;
  reply.Begin(*instances_.front()->model, batch_, seconds_, any_reset_after_);
  ForEachInstance(batch_, [&](int k) {
    Instance& instance = *instances_[k];
    InstanceStep outcome;
    outcome.masked = masked(k);
    outcome.diverged = instance.diverged;
    outcome.truncated = truncated_[k] != 0;
    outcome.reset = masked(k) || reset_after_[k] != 0;
    if (!computed_.empty() && computed_[k] && !outcome.masked && !outcome.diverged) {
      outcome.jacobians = &jacobians_[k];
    }
    reply.Ended(k, outcome, *instance.data);
    if (observe && !outcome.masked) {
      observer_->Solved(instance.data->solver_statistics, seconds_per_step);
    }
    if (reset_after_[k]) {
      PreparedReset reset;
      if (PrepareInstanceReset(instance, noise_, nullptr, nullptr, &reset)) {
        CommitReset(instance, std::move(reset));
      } else {  // noise that overflows this scene's state: it stays truncated, unreset
        outcome.reset = false;
      }
    }
    reply.Observed(k, outcome, *instance.data);
  });
}

}  // namespace

Status Step(const std::vector<Instance*>& instances, const StepInputs& in, const StepLimits& limits,
            const std::atomic<bool>* interrupt, StepReply& reply, StepObserver* observer) {
  if (instances.empty()) return Invalid("the call selects no instance");
  StepCall call(instances, in, interrupt, observer);
  if (Status checked = call.Check(limits); !checked.ok()) return checked;
  if (!call.Run()) return {Code::kInterrupted, "interrupted"};
  call.Reply(reply);
  return {};
}

// ---- the batched reset ------------------------------------------------------------------------

Status CheckResetInputs(const ResetInputs& in) { return CheckResetNoise(in.noise, "reset noise"); }

Status Reset(const std::vector<Instance*>& instances, const ResetInputs& in,
             std::size_t max_message_bytes) {
  if (Status checked = CheckResetInputs(in); !checked.ok()) return checked;
  if (instances.empty()) return Invalid("the call selects no instance");
  const int batch = static_cast<int>(instances.size());
  if (in.seeds_size != 0 && in.seeds_size != batch) {
    return Invalid(std::to_string(in.seeds_size) + " seeds for " + std::to_string(batch) +
                   " instances; give one per instance or none");
  }
  bool one_scene = true;
  for (const Instance* instance : instances) {
    one_scene = one_scene && instance->model == instances.front()->model;
  }
  if (in.observations.any() && !one_scene) {
    return Invalid(
        "observations can only be returned for instances of one scene; nothing was reset");
  }
  const std::size_t reply_bytes =
      ObservationBytes(*instances.front()->model, batch, in.observations);
  Status fits = CheckMessageSize("reply", reply_bytes, max_message_bytes, "nothing was reset");
  if (!fits.ok()) return fits;
  // Every instance's reset is computed before any is applied: all or nothing. The keyframe is
  // looked up in each instance's scene (instances of several scenes may be reset together).
  const std::string nothing = "nothing was reset";
  const bool own_keyframe = in.keyframe.by == KeyframeRef::By::kNone;
  std::vector<PreparedReset> prepared(batch);
  std::atomic<int> bad_keyframe{batch}, bad_reset{batch};
  ForEachInstance(batch, [&](int k) {
    const Instance& instance = *instances[k];
    int key = -1;
    if (!ResolveKeyframe(*instance.model, in.keyframe, nothing, &key).ok()) {
      KeepLowest(bad_keyframe, k);
      return;
    }
    const std::uint64_t* seed = in.seeds_size != 0 ? &in.seeds[k] : nullptr;
    if (!PrepareInstanceReset(instance, in.noise, own_keyframe ? nullptr : &key, seed,
                              &prepared[k])) {
      KeepLowest(bad_reset, k);
    }
  });
  if (bad_keyframe < batch) {
    const Instance& instance = *instances[bad_keyframe];
    int unused = -1;
    Status status = ResolveKeyframe(*instance.model, in.keyframe, nothing, &unused);
    status.message = "instance " + std::to_string(instance.id) + ": " + status.message;
    return status;
  }
  if (bad_reset < batch)
    return ResetNotFinite("reset noise", in.noise, *instances[bad_reset], nothing.c_str());
  ForEachInstance(batch, [&](int k) { CommitReset(*instances[k], std::move(prepared[k])); });
  return {};
}

}  // namespace alsim::server::batch
