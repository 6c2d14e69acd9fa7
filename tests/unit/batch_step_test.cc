// The batch-step core (server/batch_step.h) without a server, protobuf or gRPC: a batched step
// equals stepping each instance with the engine, bit for bit; every reset it makes (masked,
// truncated, Reset with and without seeds) equals the engine's reset with the same generator;
// bad input is refused with the service's words before anything moves.
#include "server/batch_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"
#include "engine/sim/reset.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"

namespace alsim::server {
namespace {

using ::testing::HasSubstr;

const std::string kScenes = std::string(ALSIM_SCENES_DIR) + "/";

// A slide-joint cart on a motor: a huge control drives it to non-finite values (divergence).
constexpr char kMotorScene[] = R"(<mujoco><worldbody><geom type="plane" size="5 5 0.1"/>
  <body name="cart" pos="0 0 0.2"><joint name="x" type="slide" axis="1 0 0"/>
    <geom type="box" size="0.1 0.1 0.1" mass="1"/></body></worldbody>
  <actuator><motor joint="x" gear="10"/></actuator></mujoco>)";

// Four slides whose initial positions are near the largest double.
constexpr char kFarSlidesScene[] = R"(<mujoco><worldbody>
  <body><joint type="slide" axis="1 0 0" ref="1.7e308"/><geom size="0.1" mass="1"/></body>
  <body><joint type="slide" axis="1 0 0" ref="1.7e308"/><geom size="0.1" mass="1"/></body>
  <body><joint type="slide" axis="1 0 0" ref="1.7e308"/><geom size="0.1" mass="1"/></body>
  <body><joint type="slide" axis="1 0 0" ref="1.7e308"/><geom size="0.1" mass="1"/></body>
  </worldbody></mujoco>)";

// A cart on a motor and a free pendulum; a keyframe setting every field, and an unnamed one
// setting qpos only.
constexpr char kKeyframeScene[] = R"(<mujoco><worldbody><geom type="plane" size="5 5 0.1"/>
  <body name="cart" pos="0 0 0.2"><joint name="x" type="slide" axis="1 0 0"/>
    <geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
  <body name="pole" pos="0 0 1"><joint name="h" type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.05" mass="0.5"/></body></worldbody>
  <actuator><motor joint="x" gear="10"/></actuator>
  <keyframe><key name="home" time="1.5" qpos="0.3 0.4" qvel="0.1 -0.2" ctrl="0.25"/>
    <key qpos="-0.2 0.1"/></keyframe></mujoco>)";

std::shared_ptr<const Model> Quadrupeds() {
  static const std::shared_ptr<const Model> model = [] {
    ModelImport imported = ImportModelFromFile(kScenes + "quadruped_drop_8.xml");
    EXPECT_TRUE(imported) << imported.error;
    return imported.model;
  }();
  return model;
}

std::shared_ptr<const Model> Carts() {
  static const std::shared_ptr<const Model> model = [] {
    ModelImport imported = ImportModelFromString(kMotorScene);
    EXPECT_TRUE(imported) << imported.error;
    return imported.model;
  }();
  return model;
}

// `count` instances of `model` as Create makes them: ids 1, 2, ..., generators seeded seed + k.
struct Batch {
  std::vector<std::unique_ptr<Instance>> owned;
  std::vector<Instance*> instances;

  Batch(const std::shared_ptr<const Model>& model, int count, std::uint64_t seed = 7,
        std::uint32_t max_episode_steps = 0, int keyframe = -1) {
    for (int k = 0; k < count; ++k) {
      auto instance = std::make_unique<Instance>();
      instance->id = static_cast<std::uint64_t>(k) + 1;
      instance->max_episode_steps = max_episode_steps;
      StartInstance(model, StepOptions{}, seed + k, keyframe, instance.get());
      instances.push_back(instance.get());
      owned.push_back(std::move(instance));
    }
  }
  std::vector<std::uint64_t> Hashes() const {
    std::vector<std::uint64_t> hashes;
    for (const Instance* instance : instances) {
      hashes.push_back(StateHash(*instance->model, *instance->data));
    }
    return hashes;
  }
};

// The engine's own instance, started as StartInstance starts one.
struct Direct {
  std::shared_ptr<const Model> model;
  Data data;
  std::mt19937_64 rng;

  Direct(const std::shared_ptr<const Model>& m, std::uint64_t seed)
      : model(m), data(*m), rng(seed) {
    EnsureSolver(*m, data, StepOptions{}.solver.type);
    Kinematics(*m, data);
  }
  std::uint64_t Hash() const { return StateHash(*model, data); }
};

// A [rows, columns] float64 tensor over `values`.
struct Doubles {
  std::vector<double> values;
  std::vector<std::int64_t> shape;

  batch::TensorView View() const {
    batch::TensorView view;
    view.dtype = batch::DType::kFloat64;
    view.shape = shape.data();
    view.rank = static_cast<int>(shape.size());
    view.data = reinterpret_cast<const char*>(values.data());
    view.bytes = values.size() * sizeof(double);
    return view;
  }
};

Doubles RandomRows(int rows, int columns, double scale, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-scale, scale);
  Doubles tensor{std::vector<double>(static_cast<std::size_t>(rows) * columns), {rows, columns}};
  for (double& value : tensor.values) value = uniform(rng);
  return tensor;
}

// A reply that keeps what the core hands it: each instance's outcome and qpos before and after a
// truncation reset.
class RecordingReply final : public batch::StepReply {
 public:
  void Begin(const Model& m, int batch, double seconds, bool final_observations) override {
    begun = true;
    nq = m.nq;
    step_seconds = seconds;
    finals = final_observations;
    ended.assign(batch, {});
    observed.assign(batch, {});
    ended_qpos.assign(batch, {});
    observed_qpos.assign(batch, {});
  }
  void Ended(int k, const batch::InstanceStep& step, Data& data) override {
    ended[k] = step;
    ended_qpos[k].assign(data.qpos.begin(), data.qpos.begin() + nq);
  }
  void Observed(int k, const batch::InstanceStep& step, Data& data) override {
    observed[k] = step;
    observed_qpos[k].assign(data.qpos.begin(), data.qpos.begin() + nq);
  }

  bool begun = false;
  int nq = 0;
  double step_seconds = -1;
  bool finals = false;
  std::vector<batch::InstanceStep> ended, observed;
  std::vector<std::vector<double>> ended_qpos, observed_qpos;
};

class CountingObserver final : public batch::StepObserver {
 public:
  void Diverged() override { ++diverged; }
  void Stepped(double steps) override { stepped += steps; }
  void Solved(const SolverStatistics&, double) override { ++solved; }

  std::atomic<int> diverged{0};
  double stepped = 0;
  std::atomic<int> solved{0};
};

batch::Status StepBatch(Batch& b, const batch::StepInputs& in, RecordingReply* reply = nullptr,
                        const std::atomic<bool>* interrupt = nullptr,
                        batch::StepObserver* observer = nullptr,
                        const batch::StepLimits& limits = {}) {
  RecordingReply unused;
  return batch::Step(b.instances, in, limits, interrupt, reply != nullptr ? *reply : unused,
                     observer);
}

TEST(BatchStepTest, StepsEveryInstanceAsTheEngineStepsIt) {
  const auto model = Quadrupeds();
  ASSERT_GT(model->nu, 0);
  constexpr int kInstances = 4;
  constexpr int kSubsteps = 5;
  Batch b(model, kInstances);
  std::vector<std::unique_ptr<Direct>> direct;
  for (int k = 0; k < kInstances; ++k) direct.push_back(std::make_unique<Direct>(model, 7 + k));
  CountingObserver observer;
  for (int call = 0; call < 4; ++call) {
    const Doubles actions = RandomRows(kInstances, model->nu, 20.0, 100 + call);
    // Forces on the second call only, as float32: they act during that call's substeps alone.
    std::vector<float> forces(static_cast<std::size_t>(kInstances) * model->nbody * 6, 0.0f);
    for (std::size_t i = 0; i < forces.size(); ++i) forces[i] = static_cast<float>(i % 7) - 3.0f;
    const std::vector<std::int64_t> force_shape = {kInstances, model->nbody, 6};
    batch::StepInputs in;
    in.actions = actions.View();
    in.substeps = kSubsteps;
    if (call == 1) {
      in.external_forces.dtype = batch::DType::kFloat32;
      in.external_forces.shape = force_shape.data();
      in.external_forces.rank = 3;
      in.external_forces.data = reinterpret_cast<const char*>(forces.data());
      in.external_forces.bytes = forces.size() * sizeof(float);
    }
    RecordingReply reply;
    const batch::Status status = StepBatch(b, in, &reply, nullptr, &observer);
    ASSERT_TRUE(status.ok()) << status.message;
    for (int k = 0; k < kInstances; ++k) {
      Direct& d = *direct[k];
      for (int a = 0; a < model->nu; ++a) d.data.ctrl[a] = actions.values[k * model->nu + a];
      for (int body = 0; body < model->nbody && call == 1; ++body) {
        for (int c = 0; c < 6; ++c) {
          d.data.xfrc_applied[body][c] =
              forces[(static_cast<std::size_t>(k) * model->nbody + body) * 6 + c];
        }
      }
      for (int n = 0; n < kSubsteps; ++n) {
        ASSERT_EQ(Step(*model, d.data, StepOptions{}), StepStatus::kOk);
      }
      for (auto& row : d.data.xfrc_applied) row.setZero();
      EXPECT_EQ(b.Hashes()[k], d.Hash()) << "call " << call << ", instance " << k;
      EXPECT_EQ(0, std::memcmp(reply.observed_qpos[k].data(), d.data.qpos.data(),
                               model->nq * sizeof(double)));
      EXPECT_FALSE(reply.observed[k].diverged);
      EXPECT_FALSE(reply.observed[k].reset);
      EXPECT_EQ(b.instances[k]->steps, static_cast<std::uint64_t>(kSubsteps) * (call + 1));
      EXPECT_EQ(b.instances[k]->published_time.load(), d.data.time);
      for (const auto& row : b.instances[k]->data->xfrc_applied) EXPECT_TRUE(row.isZero());
    }
    EXPECT_TRUE(reply.begun);
    EXPECT_FALSE(reply.finals);
    EXPECT_GE(reply.step_seconds, 0);
  }
  EXPECT_EQ(observer.stepped, 4.0 * kInstances * kSubsteps);
  EXPECT_EQ(observer.solved, 4 * kInstances);
  EXPECT_EQ(observer.diverged, 0);
}

TEST(BatchStepTest, ResetWithSeedsIsTheEnginesResetWithNoise) {
  const auto model = Quadrupeds();
  Batch b(model, 3);
  ASSERT_TRUE(StepBatch(b, batch::StepInputs{}).ok());
  const std::vector<std::uint64_t> seeds = {11, 12, 13};
  batch::ResetInputs in;
  in.noise = 0.05;
  in.seeds = seeds.data();
  in.seeds_size = 3;
  const batch::Status status = batch::Reset(b.instances, in, 1u << 20);
  ASSERT_TRUE(status.ok()) << status.message;
  for (int k = 0; k < 3; ++k) {
    Data d(*model);
    std::mt19937_64 rng(seeds[k]);
    ASSERT_TRUE(ResetWithNoise(*model, 0.05, rng, &d));
    EXPECT_EQ(b.Hashes()[k], StateHash(*model, d));
    EXPECT_TRUE(b.instances[k]->rng == rng) << "the generator continues from the reset's draws";
    EXPECT_EQ(b.instances[k]->episode_steps, 0u);
    EXPECT_EQ(b.instances[k]->published_time.load(), 0.0);
  }
}

TEST(BatchStepTest, ResetWithoutSeedsDrawsFromEachInstancesGenerator) {
  const auto model = Quadrupeds();
  Batch b(model, 2, /*seed=*/40);
  std::vector<std::mt19937_64> rngs = {std::mt19937_64(40), std::mt19937_64(41)};
  batch::ResetInputs in;
  in.noise = 0.02;
  for (int round = 0; round < 2; ++round) {  // the second reset continues each generator
    ASSERT_TRUE(batch::Reset(b.instances, in, 1u << 20).ok());
    for (int k = 0; k < 2; ++k) {
      Data d(*model);
      ASSERT_TRUE(ResetWithNoise(*model, 0.02, rngs[k], &d));
      EXPECT_EQ(b.Hashes()[k], StateHash(*model, d)) << "round " << round << ", instance " << k;
    }
  }
}

TEST(BatchStepTest, MaskedAndTruncatedResetsAreTheResetPath) {
  const auto model = Quadrupeds();
  // Twins: `stepped` takes the step's resets, `reset` the Reset path, from equal generators.
  Batch stepped(model, 3, 21, /*max_episode_steps=*/2);
  Batch reset(model, 3, 21, 2);
  batch::StepInputs in;
  in.reset_noise = 0.03;
  in.reset_truncated = true;
  in.substeps = 2;
  // Call 1: instance 1 masked (reset, not stepped); 0 and 2 take their first episode step.
  const bool mask[3] = {false, true, false};
  in.reset_mask = mask;
  in.reset_mask_size = 3;
  RecordingReply first;
  ASSERT_TRUE(StepBatch(stepped, in, &first).ok());
  batch::ResetInputs reset_in;
  reset_in.noise = 0.03;
  ASSERT_TRUE(batch::Reset({reset.instances[1]}, reset_in, 1u << 20).ok());
  EXPECT_EQ(stepped.Hashes()[1], reset.Hashes()[1]);
  EXPECT_TRUE(stepped.instances[1]->rng == reset.instances[1]->rng);
  EXPECT_EQ(stepped.instances[1]->steps, 0u);
  EXPECT_TRUE(first.observed[1].masked && first.observed[1].reset);
  EXPECT_FALSE(first.observed[0].reset || first.observed[0].truncated);
  EXPECT_FALSE(first.finals);

  // Call 2, no mask: instances 0 and 2 end their episode (2 calls) and are reset in the call; the
  // reply's first state is the truncated one, as the engine reaches it.
  in.reset_mask = nullptr;
  in.reset_mask_size = 0;
  std::vector<std::unique_ptr<Direct>> direct;
  for (int k = 0; k < 3; ++k) direct.push_back(std::make_unique<Direct>(model, 21 + k));
  for (int n = 0; n < 4; ++n) {
    ASSERT_EQ(Step(*model, direct[0]->data, StepOptions{}), StepStatus::kOk);
    ASSERT_EQ(Step(*model, direct[2]->data, StepOptions{}), StepStatus::kOk);
  }
  RecordingReply second;
  ASSERT_TRUE(StepBatch(stepped, in, &second).ok());
  EXPECT_TRUE(second.finals);
  ASSERT_TRUE(batch::Reset({reset.instances[0], reset.instances[2]}, reset_in, 1u << 20).ok());
  for (const int k : {0, 2}) {
    EXPECT_TRUE(second.ended[k].truncated && second.ended[k].reset);
    EXPECT_TRUE(second.observed[k].reset);
    EXPECT_EQ(0, std::memcmp(second.ended_qpos[k].data(), direct[k]->data.qpos.data(),
                             model->nq * sizeof(double)))
        << "the truncated state of instance " << k;
    EXPECT_EQ(stepped.Hashes()[k], reset.Hashes()[k]) << "instance " << k;
    EXPECT_TRUE(stepped.instances[k]->rng == reset.instances[k]->rng);
    EXPECT_EQ(stepped.instances[k]->episode_steps, 0u);
  }
  // Instance 1 took its first episode step in call 2: not truncated.
  EXPECT_FALSE(second.observed[1].truncated || second.observed[1].reset);
}

TEST(BatchStepTest, BadInputIsRefusedWithTheServicesWordsAndNothingMoves) {
  const auto model = Quadrupeds();
  const int nu = model->nu;
  Batch b(model, 2);
  const std::vector<std::uint64_t> before = b.Hashes();
  const std::string needs =
      "this batch needs [2, " + std::to_string(nu) + "] (instances, actuators)";
  auto refused = [&](const batch::StepInputs& in, batch::Code code, const std::string& words) {
    RecordingReply reply;
    const batch::Status status = StepBatch(b, in, &reply);
    EXPECT_EQ(status.code, code) << status.message;
    EXPECT_THAT(status.message, HasSubstr(words));
    EXPECT_FALSE(reply.begun);
    EXPECT_EQ(b.Hashes(), before) << "nothing moved for: " << words;
    for (const Instance* instance : b.instances) EXPECT_EQ(instance->steps, 0u);
  };

  // A wrong action length, by shape and by bytes.
  Doubles wide = RandomRows(2, nu + 1, 1.0, 1);
  batch::StepInputs in;
  in.actions = wide.View();
  refused(in, batch::Code::kInvalidArgument,
          "actions have shape [2, " + std::to_string(nu + 1) + "]; " + needs);
  Doubles actions = RandomRows(2, nu, 1.0, 2);
  in.actions = actions.View();
  in.actions.bytes -= sizeof(double);
  refused(in, batch::Code::kInvalidArgument,
          "actions hold " + std::to_string((2 * nu - 1) * 8) + " bytes; shape [2, " +
              std::to_string(nu) + "] of float64 needs " + std::to_string(2 * nu * 8));
  in.actions = actions.View();
  in.actions.dtype = batch::DType::kOther;
  refused(in, batch::Code::kInvalidArgument, "actions must be float32 or float64");

  // NaN and Inf, named by the first in batch order; the masked instance is not reset either.
  actions.values[nu + 3] = std::numeric_limits<double>::quiet_NaN();
  actions.values[nu + 5] = std::numeric_limits<double>::infinity();
  in.actions = actions.View();
  const bool mask[2] = {true, false};
  in.reset_mask = mask;
  in.reset_mask_size = 2;
  refused(in, batch::Code::kInvalidArgument,
          "action [1, 3] is not finite; no instance was stepped");
  in.actions = {};

  const bool short_mask[1] = {true};
  in.reset_mask = short_mask;
  in.reset_mask_size = 1;
  refused(in, batch::Code::kInvalidArgument,
          "reset_mask has 1 flags for 2 instances; give one per instance or none");
  in.reset_mask = nullptr;
  in.reset_mask_size = 0;

  in.substeps = batch::kMaxSubsteps + 1;
  refused(in, batch::Code::kInvalidArgument, "substeps 1000001 is above the limit of 1000000");
  in.substeps = 0;
  in.reset_noise = -1;
  refused(in, batch::Code::kInvalidArgument, "reset_noise must be finite, >= 0 and below 8.9e307");
  in.reset_noise = 0;

  // The server's limits.
  batch::StepLimits limits;
  limits.max_call_iterations = 10;
  RecordingReply reply;
  batch::Status status = StepBatch(b, in, &reply, nullptr, nullptr, limits);
  EXPECT_EQ(status.code, batch::Code::kInvalidArgument);
  EXPECT_THAT(status.message, HasSubstr("(--max-call-iterations)"));
  limits = {};
  limits.max_message_bytes = 100;
  in.observations.qpos = true;
  status = StepBatch(b, in, &reply, nullptr, nullptr, limits);
  EXPECT_EQ(status.code, batch::Code::kResourceExhausted);
  EXPECT_THAT(status.message, HasSubstr("above the server's message limit of 100 "
                                        "(--max-message-bytes); ask for fewer observations or "
                                        "instances; nothing was stepped"));
  EXPECT_FALSE(reply.begun);
  EXPECT_EQ(b.Hashes(), before);
}

TEST(BatchStepTest, ScenesDivergenceAndResetNoiseAreRefusedByName) {
  Batch carts(Carts(), 2);
  Batch quadrupeds(Quadrupeds(), 1);
  quadrupeds.instances[0]->id = 9;
  std::vector<Instance*> mixed = {carts.instances[0], quadrupeds.instances[0]};
  RecordingReply reply;
  batch::Status status = batch::Step(mixed, {}, {}, nullptr, reply);
  EXPECT_EQ(status.code, batch::Code::kInvalidArgument);
  EXPECT_EQ(status.message,
            "instances 1 and 9 run different scenes; a batch steps instances of one scene");
  batch::ResetInputs observe;
  observe.observations.qpos = true;
  status = batch::Reset(mixed, observe, 1u << 20);
  EXPECT_EQ(status.message,
            "observations can only be returned for instances of one scene; nothing was reset");
  EXPECT_TRUE(batch::Reset(mixed, {}, 1u << 20).ok()) << "without observations, any scenes";

  // A huge control diverges instance 2; it refuses steps until reset, by mask or by Reset.
  Doubles push{{0.0, 1e308}, {2, 1}};
  batch::StepInputs in;
  in.actions = push.View();
  in.substeps = 3;
  CountingObserver observer;
  ASSERT_TRUE(StepBatch(carts, in, &reply, nullptr, &observer).ok());
  EXPECT_TRUE(reply.observed[1].diverged);
  EXPECT_EQ(observer.diverged, 1);
  in = {};
  status = StepBatch(carts, in);
  EXPECT_EQ(status.code, batch::Code::kFailedPrecondition);
  EXPECT_EQ(status.message,
            "instance 2 diverged; Reset or SetState it (or set its reset_mask flag) before "
            "stepping");
  const bool mask[2] = {false, true};
  in.reset_mask = mask;
  in.reset_mask_size = 2;
  ASSERT_TRUE(StepBatch(carts, in, &reply).ok());
  EXPECT_FALSE(carts.instances[1]->diverged);

  const std::vector<std::uint64_t> one_seed = {5};
  batch::ResetInputs seeds;
  seeds.seeds = one_seed.data();
  seeds.seeds_size = 1;
  status = batch::Reset(carts.instances, seeds, 1u << 20);
  EXPECT_EQ(status.message, "1 seeds for 2 instances; give one per instance or none");
  batch::ResetInputs infinite;
  infinite.noise = std::numeric_limits<double>::infinity();
  EXPECT_EQ(batch::Reset(carts.instances, infinite, 1u << 20).message,
            "reset noise must be finite, >= 0 and below 8.9e307");
}

TEST(BatchStepTest, ResetNoiseThatLeavesNoFiniteStateResetsNothing) {
  // Slides whose initial position is near the largest double: noise of 8e307 overflows most.
  ModelImport imported = ImportModelFromString(kFarSlidesScene);
  ASSERT_TRUE(imported) << imported.error;
  Batch b(imported.model, 3);
  const std::vector<std::uint64_t> before = b.Hashes();
  batch::ResetInputs huge;
  huge.noise = 8e307;
  batch::Status status = batch::Reset(b.instances, huge, 1u << 20);
  EXPECT_EQ(status.code, batch::Code::kInvalidArgument);
  EXPECT_THAT(status.message, HasSubstr(" leaves instance 1 with a position or velocity that is "
                                        "not finite; nothing was reset"));
  EXPECT_THAT(status.message, ::testing::StartsWith("reset noise 7999"));
  // The same noise on a masked instance refuses the step.
  const bool mask[3] = {false, false, true};
  batch::StepInputs in;
  in.reset_mask = mask;
  in.reset_mask_size = 3;
  in.reset_noise = 8e307;
  RecordingReply reply;
  status = StepBatch(b, in, &reply);
  EXPECT_EQ(status.code, batch::Code::kInvalidArgument);
  EXPECT_THAT(status.message, HasSubstr(" leaves instance 3 with a position or velocity that is "
                                        "not finite; nothing was stepped"));
  EXPECT_THAT(status.message, ::testing::StartsWith("reset_noise 7999"));
  EXPECT_FALSE(reply.begun);
  EXPECT_EQ(b.Hashes(), before);
  for (const Instance* instance : b.instances) EXPECT_EQ(instance->steps, 0u);
}

// The engine's state of `m` at keyframe `key` (-1: none) with `noise` from `rng` on top.
std::uint64_t KeyframeHash(const Model& m, int key, double noise, std::mt19937_64& rng) {
  Data d(m);
  if (key >= 0) {
    EXPECT_TRUE(ResetDataKeyframe(m, &d, key));
  }
  EXPECT_TRUE(ApplyResetNoise(m, noise, rng, &d));
  return StateHash(m, d);
}

TEST(BatchStepTest, InstancesStartAtTheirKeyframeAndEveryResetReturnsToIt) {
  ModelImport imported = ImportModelFromString(kKeyframeScene);
  ASSERT_TRUE(imported) << imported.error;
  const std::shared_ptr<const Model> m = imported.model;
  ASSERT_EQ(m->nkey, 2);
  Batch b(m, 3, /*seed=*/5, /*max_episode_steps=*/1, /*keyframe=*/0);
  for (int k = 0; k < 3; ++k) {
    std::mt19937_64 unused;
    EXPECT_EQ(b.Hashes()[k], KeyframeHash(*m, 0, 0, unused)) << "Create's state, instance " << k;
    EXPECT_EQ(b.instances[k]->data->ctrl[0], 0.25);
    EXPECT_EQ(b.instances[k]->data->time, 1.5);
  }
  std::vector<std::mt19937_64> rngs = {std::mt19937_64(5), std::mt19937_64(6), std::mt19937_64(7)};

  // Reset naming none: each instance's own keyframe, the noise from its generator.
  batch::ResetInputs in;
  in.noise = 0.01;
  ASSERT_TRUE(batch::Reset(b.instances, in, 1u << 20).ok());
  for (int k = 0; k < 3; ++k) EXPECT_EQ(b.Hashes()[k], KeyframeHash(*m, 0, 0.01, rngs[k]));

  // Step's resets, masked and after a truncation (one call per episode), return to it too.
  const bool mask[3] = {true, false, false};
  batch::StepInputs step;
  step.reset_mask = mask;
  step.reset_mask_size = 3;
  step.reset_noise = 0.02;
  step.reset_truncated = true;
  RecordingReply reply;
  ASSERT_TRUE(StepBatch(b, step, &reply).ok());
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE(reply.observed[k].reset) << k;
    EXPECT_EQ(b.Hashes()[k], KeyframeHash(*m, 0, 0.02, rngs[k])) << "instance " << k;
  }

  // Reset naming a keyframe, by index and by name, for this call only, with seeds.
  const std::vector<std::uint64_t> seeds = {1, 2, 3};
  in.seeds = seeds.data();
  in.seeds_size = 3;
  in.keyframe.by = batch::KeyframeRef::By::kIndex;
  in.keyframe.index = 1;
  ASSERT_TRUE(batch::Reset(b.instances, in, 1u << 20).ok());
  for (int k = 0; k < 3; ++k) {
    std::mt19937_64 rng(seeds[k]);
    EXPECT_EQ(b.Hashes()[k], KeyframeHash(*m, 1, 0.01, rng)) << "instance " << k;
    rngs[k] = rng;
  }
  in.keyframe.by = batch::KeyframeRef::By::kName;
  in.keyframe.name = "home";
  in.seeds = nullptr;
  in.seeds_size = 0;
  ASSERT_TRUE(batch::Reset(b.instances, in, 1u << 20).ok());
  for (int k = 0; k < 3; ++k) EXPECT_EQ(b.Hashes()[k], KeyframeHash(*m, 0, 0.01, rngs[k]));
  EXPECT_EQ(b.instances[0]->keyframe, 0) << "a Reset's keyframe holds for that call only";

  // Unknown keyframes reset nothing and name the scene's.
  const std::vector<std::uint64_t> before = b.Hashes();
  in.keyframe.name = "away";
  batch::Status status = batch::Reset(b.instances, in, 1u << 20);
  EXPECT_EQ(status.code, batch::Code::kInvalidArgument);
  EXPECT_EQ(status.message,
            "instance 1: no keyframe is named 'away'; the scene's keyframes: 0 'home', 1 "
            "(unnamed); nothing was reset");
  in.keyframe.by = batch::KeyframeRef::By::kIndex;
  in.keyframe.index = 2;
  status = batch::Reset(b.instances, in, 1u << 20);
  EXPECT_EQ(status.message,
            "instance 1: keyframe index 2 is out of range; the scene's keyframes: 0 'home', 1 "
            "(unnamed); nothing was reset");
  EXPECT_EQ(b.Hashes(), before);
  int key = 7;
  status = batch::ResolveKeyframe(*Carts(), {batch::KeyframeRef::By::kName, "", 0},
                                  "nothing was created", &key);
  EXPECT_EQ(status.message,
            "no keyframe is named ''; the scene's keyframes: none; nothing was created");
  EXPECT_EQ(key, 7);
}

TEST(BatchStepTest, AnInterruptedCallAppliesItsInputsAndWritesNoReply) {
  const auto model = Quadrupeds();
  Batch b(model, 2);
  const Doubles actions = RandomRows(2, model->nu, 1.0, 3);
  batch::StepInputs in;
  in.actions = actions.View();
  in.substeps = 4;
  const std::atomic<bool> interrupt{true};
  RecordingReply reply;
  const batch::Status status = StepBatch(b, in, &reply, &interrupt);
  EXPECT_EQ(status.code, batch::Code::kInterrupted);
  EXPECT_FALSE(reply.begun);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(b.instances[k]->steps, 0u);
    EXPECT_EQ(b.instances[k]->data->time, 0.0);
    EXPECT_EQ(b.instances[k]->data->ctrl[0], actions.values[k * model->nu]);
  }
}

}  // namespace
}  // namespace alsim::server
