// One simulation instance of the server, and its reset: plain C++ (no protobuf, no gRPC), shared
// by the instance registry (server/instance_registry.h) and the batch-step core
// (server/batch_step.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/sim/step.h"
#include "engine/sim/step_gradients.h"
#include "server/memory_budget.h"

namespace alsim::server {

struct SceneSource;  // server/scene_catalog.h
struct SceneLook;    // server/scene_look.h

struct Instance {
  ~Instance();

  std::uint64_t id = 0;        // random, never 0
  std::uint64_t group = 0;     // random, never 0
  std::string tenant;          // the owner; other tenants cannot see the instance
  std::uint64_t sequence = 0;  // creation order (List's order)
  std::shared_ptr<const Model> model;
  std::shared_ptr<const SceneSource> source;  // what the model was compiled from (drain/resume)
  std::string scene;                          // built-in name or file name, for List
  std::shared_ptr<const SceneLook> look;      // GetScene's colours and names (may be null)
  StepOptions options;
  std::unique_ptr<Data> data;
  std::mt19937_64 rng;  // reset noise; seeded at Create (seed + k) or by Reset
  // Written under `mutex`; atomic so that List reads them without waiting for a step.
  std::atomic<bool> diverged{false};      // refuses Step until Reset/SetState
  std::atomic<std::uint64_t> steps{0};    // since Create
  std::atomic<double> published_time{0};  // data->time after the last call that changed it
  std::atomic<bool> destroyed{false};     // a batch that raced Destroy sees NOT_FOUND
  // Episodes (CreateRequest.max_episode_steps): the limit in Step calls (0: none) and the calls
  // since the episode started (Create, any reset, SetState). Under `mutex`.
  std::uint32_t max_episode_steps = 0;
  std::uint64_t episode_steps = 0;
  // The keyframe (Model::key_*) Create started it from, which every reset that names none
  // returns to; -1: the model's initial state.
  int keyframe = -1;
  // Gradient steps (StepRequest.gradients), under `mutex`: made on the instance's first one, for
  // `gradients_model` and `gradients_solver`, made again if either differs; null for an instance
  // that never asked, so that plain steps cost nothing more.
  std::unique_ptr<StepGradients> gradients;
  const Model* gradients_model = nullptr;
  SolverType gradients_solver = SolverType::kSubAdmm;
  std::mutex mutex;
  // Bytes reserved from `budget` for this instance, returned when it is freed.
  MemoryBudget* budget = nullptr;
  std::uint64_t reserved_bytes = 0;
  // The scene compiler's estimates of one instance's and of the model's memory (0: unknown), and
  // the part of reserved_bytes that its gradient steps took (batch::Step): a StepGradients holds
  // a second Data and two solvers, and a copy of the model once parameters are asked for.
  std::uint64_t instance_bytes = 0;
  std::uint64_t model_bytes = 0;
  std::uint64_t gradient_bytes = 0;
};

// Gives `instance` its model, options and the state Create starts it in: a fresh Data at keyframe
// `keyframe` of `model` (-1: its initial state; else in [0, nkey)), with its solver made and the
// kinematics computed, the generator seeded with `seed`.
void StartInstance(const std::shared_ptr<const Model>& model, const StepOptions& options,
                   std::uint64_t seed, int keyframe, Instance* instance);

// How an instance is reset: the model's initial state or keyframe `keyframe` (-1: none; else in
// [0, nkey)), as MuJoCo's mj_resetDataKeyframe sets it, then uniform noise in [-noise, noise]
// (engine/sim/reset.h, ApplyResetNoise) drawn from the instance's generator.
struct ResetSpec {
  double noise = 0;
  int keyframe = -1;
};

// A reset computed but not yet applied: a batch changes no instance unless all of its resets are
// computable.
struct PreparedReset {
  std::unique_ptr<Data> data;
  std::mt19937_64 rng;
};

// Computes the reset of an instance of `m` whose generator is `rng`, without changing the
// instance: a fresh Data as `spec` says, the noise drawn from a copy of the generator. False when
// the noise leaves a position or velocity that is not finite.
bool PrepareReset(const Model& m, const std::mt19937_64& rng, const ResetSpec& spec,
                  PreparedReset* out);
// Applies a PrepareReset result: the new state and generator, a new episode, not diverged. The
// instance's solver is kept (it holds no state between steps, only its allocations).
void CommitReset(Instance& instance, PreparedReset&& prepared);

}  // namespace alsim::server
