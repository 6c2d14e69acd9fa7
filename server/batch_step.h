// The batch-step core of the service, in plain C++ (no protobuf, no gRPC): the batched step of
// Step and StepStream and the batched reset of Reset, on instances the caller has selected and
// locked (server/instance_registry.h). The gRPC layer (server/simulator_service.cc) translates
// requests into these inputs, replies from StepReply's calls and the statuses one to one.
//
// Every per-instance pass runs as the batch's parallel tasks, one instance per task, so that
// nothing walks K instances' data one after another. Isolated: while the calling thread waits for
// the batch's tasks it must not pick up other queued work, which could block on an instance lock
// that thread holds. Nothing is allocated per substep beyond what the engine's Step allocates.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/sim/step_gradients.h"
#include "server/instance.h"

namespace alsim::server::batch {

// The codes the core returns, numbered as gRPC's status codes.
enum class Code : int {
  kOk = 0,
  kInvalidArgument = 3,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  // The caller's interrupt flag rose during a step: the steps taken are kept and counted, no
  // reply is written. The caller knows why the flag rose and words the status.
  kInterrupted = -1,
};

struct Status {
  Code code = Code::kOk;
  std::string message;

  bool ok() const { return code == Code::kOk; }
};

// ---- inputs ---------------------------------------------------------------------------------

enum class DType { kAbsent, kFloat32, kFloat64, kOther };

// An input tensor as a request carries it (alsim.v1.Tensor): `rank` dimensions, the values
// row-major and little-endian in `bytes` bytes that need not be aligned. It points into the
// request, which must outlive it.
struct TensorView {
  DType dtype = DType::kAbsent;
  const std::int64_t* shape = nullptr;
  int rank = 0;
  const char* data = nullptr;
  std::size_t bytes = 0;
};

// A checked [K, ...] float32 or float64 input tensor (actions, external forces), read row by row
// straight from the request's bytes: instance k's row is decoded by the batch's task for k, into
// the instance's own arrays, with no intermediate K-row copy. Empty (present() false) for an
// absent tensor. It points into the request, which must outlive it.
class BatchRows {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  bool present() const { return bytes_ != nullptr; }
  // Values per row (instance).
  std::size_t row_size() const { return row_; }
  // The flat index (over the whole tensor) of row k's first value that is NaN or Inf, or kNone.
  std::size_t FirstNonFinite(int k) const;
  // Row k as row_size() doubles into `out` (float32 widened exactly as a cast does).
  void Read(int k, double* out) const;
  // INVALID_ARGUMENT naming the value at flat index `i` as not finite ("no instance was stepped").
  Status NonFinite(std::size_t i) const;

 private:
  friend Status CheckActions(const TensorView&, int, int, BatchRows*);
  friend Status CheckExternalForces(const TensorView&, int, const Model&, BatchRows*);
  const char* bytes_ = nullptr;
  bool single_ = false;  // float32
  std::size_t row_ = 0;
  std::function<std::string(std::size_t)> describe_;  // names the value at a flat index
};

// Checks actions [K, nu] (float32 or float64): INVALID_ARGUMENT, naming the problem, for a wrong
// dtype, shape or byte count. The values are not looked at: the step scans them per row
// (FirstNonFinite; a NaN or Inf is named by the instance's batch index and the actuator).
Status CheckActions(const TensorView& actions, int batch, int nu, BatchRows* rows);

// Checks external forces [K, nbody, 6] (float32 or float64; per body (force, torque), as
// Data::xfrc_applied) as CheckActions does; a NaN or Inf is named by batch index, body and
// component.
Status CheckExternalForces(const TensorView& forces, int batch, const Model& m, BatchRows* rows);

// Which observations a reply carries (alsim.v1.Observation, each at most once). The core only
// sizes them, to refuse a reply too large to send before anything moves; the reply writes them.
struct ObservationKinds {
  bool qpos = false;
  bool qvel = false;
  bool body_poses = false;       // body_pos and body_quat
  bool actuator_state = false;   // ctrl and actuator_force
  bool contact_summary = false;  // contact_count and max_penetration
  bool time = false;
  bool deformable_vertices = false;

  int count() const;
  bool any() const { return count() > 0; }
};

// About how many bytes the observations `kinds` of `batch` instances of `m` take in a reply (the
// values exactly, plus a small allowance per kind).
std::size_t ObservationBytes(const Model& m, int batch, const ObservationKinds& kinds);

// RESOURCE_EXHAUSTED when a `what` ("reply", "frame") of about `bytes` exceeds the server's message
// limit (--max-message-bytes); `consequence` ends the message (what to do, what did not happen).
Status CheckMessageSize(const char* what, std::size_t bytes, std::size_t limit,
                        const std::string& consequence);

// A keyframe (MJCF <key>) as a request names it: by name, or by index from 0 in the scene's order.
struct KeyframeRef {
  enum class By { kNone, kName, kIndex };
  By by = By::kNone;
  std::string name;
  std::uint32_t index = 0;
};

// The keyframe `ref` names in `m` into *key (-1 for kNone); INVALID_ARGUMENT for an unknown name
// (an empty one finds none) or an index out of range, naming the scene's keyframes and ending
// with `consequence`.
Status ResolveKeyframe(const Model& m, const KeyframeRef& ref, const std::string& consequence,
                       int* key);

// Reset noise draws are uniform in [-noise, noise]: 2 noise must be a finite double.
// INVALID_ARGUMENT otherwise, naming the input `what`.
Status CheckResetNoise(double noise, const std::string& what);

// ---- the batched step -------------------------------------------------------------------------

// A gradient step (alsim.v1.GradientRequest): which Jacobians, for which instances.
struct GradientInputs {
  bool requested = false;  // false: a plain step, none of the below looked at
  GradientRequest request;
  // None, or one flag per instance: only the flagged ones ask.
  const bool* mask = nullptr;
  int mask_size = 0;

  bool asks(int k) const { return requested && (mask_size == 0 || mask[k]); }
};

// The float64 values of a reply's Jacobian tensors for `batch` instances of `m`: every asked
// block, K rows each (instances that do not ask included).
std::size_t GradientDoubles(const Model& m, int batch, const GradientRequest& request);

// The default of StepLimits::max_gradient_doubles (--max-gradient-doubles): 4 Mi doubles, 32
// MiB, half the default message limit, so that a reply at the limit still carries observations.
inline constexpr std::size_t kDefaultMaxGradientDoubles = std::size_t{1} << 22;

// One call of Step (alsim.v1.StepRequest without the selection).
struct StepInputs {
  TensorView actions;          // [K, nu]; absent: every instance keeps its controls
  TensorView external_forces;  // [K, nbody, 6]; absent: none. They act during this call only.
  std::uint32_t substeps = 0;  // 0 = 1
  // None, or one flag per instance: a flagged instance is reset instead of stepped (its
  // diverged state is no refusal then).
  const bool* reset_mask = nullptr;
  int reset_mask_size = 0;
  // Of every reset this call makes, to the instance's keyframe (Instance::keyframe).
  double reset_noise = 0;
  bool reset_truncated = false;  // reset an instance in the call that ends its episode
  ObservationKinds observations;
  GradientInputs gradients;  // one substep only
};

// The server's limits on one call.
struct StepLimits {
  std::uint64_t max_call_iterations = 1000000000;  // substeps x max_iterations x instances
  std::size_t max_message_bytes = 64u << 20;
  std::size_t max_gradient_doubles = kDefaultMaxGradientDoubles;  // GradientDoubles of a reply
};

inline constexpr std::uint32_t kMaxSubsteps = 1000000;

// What one instance's part of a call did.
struct InstanceStep {
  bool masked = false;     // reset by its reset_mask flag, not stepped
  bool diverged = false;   // its state is no longer finite: it refuses steps until reset
  bool truncated = false;  // this call ended its episode (max_episode_steps)
  bool reset = false;      // masked, or reset after its truncation
  // A gradient step's Jacobians of this instance's step (in Ended only); null when it did not
  // ask, was not stepped, diverged, or its Hessian could not be factored.
  const StepJacobians* jacobians = nullptr;
};

// Where a successful step's reply goes (the service: a StepResponse, written in place).
class StepReply {
 public:
  virtual ~StepReply() = default;
  // Once, on the calling thread, before any instance's entries: `batch` instances of `m`, the
  // substeps' wall time; `final_observations`: an instance is reset after its truncation, so the
  // reply carries every instance's state before such resets too.
  virtual void Begin(const Model& m, int batch, double seconds, bool final_observations) = 0;
  // Instance k's entries, from its task (tasks of distinct k run concurrently). First the state
  // the call left, with the solver statistics of its last solve, before any reset after its
  // truncation (`step.reset` is the reset meant); then the state the reply observes, after that
  // reset (`step.reset` is final: false when the reset noise left a state that is not finite).
  virtual void Ended(int k, const InstanceStep& step, Data& data) = 0;
  virtual void Observed(int k, const InstanceStep& step, Data& data) = 0;
};

// What a step reports to the server's metrics.
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void Diverged() = 0;             // an instance's step diverged (from its task)
  virtual void Stepped(double steps) = 0;  // instance steps the call took
  // An instance that was stepped: its last solve and the call's wall time per instance step
  // (from its task; also when the call was interrupted).
  virtual void Solved(const SolverStatistics& statistics, double seconds_per_step) = 0;
};

// What Step checks before looking at any instance (the service checks it before selecting them,
// so that its errors come in the same order): the substeps, the reset noise, and that a gradient
// request asks for something in a call of one substep.
Status CheckStepInputs(const StepInputs& in);

// The batched step: validates everything first (nothing moves on an error), then steps every
// instance substeps times, all in parallel, and writes the reply through `reply`. With
// in.gradients, each asking instance takes its step with its StepGradients
// (Instance::gradients, made on its first gradient step), after StepGradients::Validate accepted
// every asking instance's options and the reply's Jacobians fit limits.max_gradient_doubles
// (INVALID_ARGUMENT otherwise).
// `instances` are the caller's, locked, in batch order, all of one scene. `interrupt` (may be
// null) stops the call inside a solve and between substeps; every instance then has taken the same
// number of substeps, and Code::kInterrupted is returned. `observer` may be null.
Status Step(const std::vector<Instance*>& instances, const StepInputs& in, const StepLimits& limits,
            const std::atomic<bool>* interrupt, StepReply& reply, StepObserver* observer = nullptr);

// ---- the batched reset ------------------------------------------------------------------------

// One call of Reset (alsim.v1.ResetRequest without the selection).
struct ResetInputs {
  double noise = 0;
  // The state each instance is reset to, for this call: a keyframe of its scene; kNone: the
  // instance's own (Instance::keyframe).
  KeyframeRef keyframe;
  // None, or one per instance: instance k's generator is seeded with seeds[k] before its noise is
  // drawn; without seeds each draws from its own generator.
  const std::uint64_t* seeds = nullptr;
  int seeds_size = 0;
  ObservationKinds observations;
};

// What Reset checks before looking at any instance: the noise.
Status CheckResetInputs(const ResetInputs& in);

// Resets every instance, all or nothing (each reset is computed, in parallel, before any is
// applied; the error names the first failing instance in request order: a keyframe its scene
// lacks, else noise that leaves a state that is not finite). The caller writes the
// observations of the reply afterwards; they are refused for instances of more than one scene.
Status Reset(const std::vector<Instance*>& instances, const ResetInputs& in,
             std::size_t max_message_bytes);

}  // namespace alsim::server::batch
