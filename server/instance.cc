#include "server/instance.h"

#include <utility>

#include "engine/dynamics/kinematics.h"
#include "engine/sim/reset.h"
#include "engine/solver/solver.h"

namespace alsim::server {

Instance::~Instance() {
  if (budget != nullptr) budget->Release(reserved_bytes);
}

void StartInstance(const std::shared_ptr<const Model>& model, const StepOptions& options,
                   std::uint64_t seed, int keyframe, Instance* instance) {
  instance->model = model;
  instance->options = options;
  instance->keyframe = keyframe;
  instance->data = std::make_unique<Data>(*model);
  if (keyframe >= 0) ResetDataKeyframe(*model, instance->data.get(), keyframe);
  EnsureSolver(*model, *instance->data, options.solver.type);
  instance->rng.seed(seed);
  Kinematics(*model, *instance->data);
  PlaceAttachedVertices(*model, instance->data.get());
}

bool PrepareReset(const Model& m, const std::mt19937_64& rng, const ResetSpec& spec,
                  PreparedReset* out) {
  out->rng = rng;
  out->data = std::make_unique<Data>(m);
  // A fresh Data is ResetData's state already; a key out of range fails as a state would.
  if (spec.keyframe >= 0 && !ResetDataKeyframe(m, out->data.get(), spec.keyframe)) return false;
  return ApplyResetNoise(m, spec.noise, out->rng, out->data.get());
}

void CommitReset(Instance& instance, PreparedReset&& prepared) {
  Data& d = *instance.data;
  SolverHandle solver = std::move(d.solver);
  d = std::move(*prepared.data);
  d.solver = std::move(solver);  // stateless between steps; keeps its allocations
  instance.rng = prepared.rng;
  instance.episode_steps = 0;
  instance.diverged = false;
  instance.published_time = d.time;
}

}  // namespace alsim::server
