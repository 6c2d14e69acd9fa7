// alsim.v1.Simulator end to end: a real server on an ephemeral loopback port, called through the
// generated stubs. Results are compared with the same scene stepped in process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <grpcpp/grpcpp.h>
#include <Eigen/Geometry>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>
#include <vector>

#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"
#include "engine/sim/reset.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/sim/step_gradients.h"
#include "server/batch_step.h"
#include "server/server.h"
#include "server/simulator_service.h"
#include "tests/support/http_get.h"
#include "tests/support/kuhn_grid.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
namespace v1 = alsim::v1;

const std::string kScenes = std::string(ALSIM_SCENES_DIR) + "/";

// ThreadSanitizer slows the server about tenfold: rates and step lengths are scaled for it.
#if defined(__SANITIZE_THREAD__)
constexpr bool kUnderTsan = true;
#else
constexpr bool kUnderTsan = false;
#endif
// The AddressSanitizer build (Debug) steps quadruped_drop_27 about as slowly: 3000 substeps took
// over 30 s, the RPC deadline, on a busy machine.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAsan = true;
#else
constexpr bool kUnderAsan = false;
#endif

// A free box on a slide-joint motor: a huge control drives it to non-finite values (divergence).
const char* kMotorScene = R"(<mujoco><worldbody><geom type="plane" size="5 5 0.1"/>
  <body name="cart" pos="0 0 0.2"><joint name="x" type="slide" axis="1 0 0"/>
    <geom type="box" size="0.1 0.1 0.1" mass="1"/></body></worldbody>
  <actuator><motor joint="x" gear="10"/></actuator></mujoco>)";

class ServiceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { StartServer(64); }
  static void StartServer(int max_instances, std::size_t max_gradient_doubles =
                                                 server::ServerConfig{}.max_gradient_doubles) {
    server::ServerConfig config;
    config.listen_address = "127.0.0.1:0";
    config.metrics_address = "127.0.0.1:0";
    config.max_instances = max_instances;
    config.max_gradient_doubles = max_gradient_doubles;
    config.threads = 2;
    std::string error;
    server_ = server::Server::Start(config, &error).release();
    ASSERT_NE(server_, nullptr) << error;
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    channel_ = grpc::CreateCustomChannel(server_->grpc_address(),
                                         grpc::InsecureChannelCredentials(), args);
    stub_ = v1::Simulator::NewStub(channel_);
  }

  std::unique_ptr<grpc::ClientContext> Context(double seconds = 30) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<long>(seconds * 1000)));
    return context;
  }

  grpc::Status CreateBuiltin(const std::string& name, int count, std::uint64_t seed,
                             v1::CreateResponse* response) {
    v1::CreateRequest request;
    request.mutable_scene()->set_builtin(name);
    request.set_count(count);
    request.set_seed(seed);
    return stub_->Create(Context().get(), request, response);
  }

  grpc::Status CreateText(const std::string& text, int count, v1::CreateResponse* response) {
    v1::CreateRequest request;
    request.mutable_scene()->mutable_text()->set_text(text);
    request.mutable_scene()->mutable_text()->set_filename("motor.xml");
    request.set_count(count);
    return stub_->Create(Context().get(), request, response);
  }

  // Steps `ids` once with float64 actions (K x nu values), returning qpos and qvel.
  grpc::Status StepIds(const std::vector<std::uint64_t>& ids, const std::vector<double>& actions,
                       int nu, v1::StepResponse* response, int substeps = 1) {
    v1::StepRequest request;
    for (const auto id : ids) request.mutable_instances()->add_instance_ids(id);
    if (!actions.empty()) {
      v1::Tensor* tensor = request.mutable_actions();
      tensor->set_dtype(v1::DTYPE_FLOAT64);
      tensor->add_shape(static_cast<long>(ids.size()));
      tensor->add_shape(nu);
      tensor->set_data(std::string(reinterpret_cast<const char*>(actions.data()),
                                   actions.size() * sizeof(double)));
    }
    request.set_substeps(substeps);
    request.add_observations(v1::OBSERVATION_QPOS);
    request.add_observations(v1::OBSERVATION_QVEL);
    return stub_->Step(Context().get(), request, response);
  }

  static std::vector<double> Doubles(const v1::Tensor& tensor) {
    std::vector<double> values(tensor.data().size() / sizeof(double));
    std::memcpy(values.data(), tensor.data().data(), tensor.data().size());
    return values;
  }

  // The service's final qpos (`response`, after `steps` steps of the scene from scenes/) is the one
  // an in-process run with `options` reaches, bit for bit, and not the defaults' one: the options
  // make a difference, so the comparison can tell whether they arrived.
  static void ExpectOptionsNotDefaults(const std::string& scene, const StepOptions& options,
                                       int steps, const v1::StepResponse& response) {
    const auto model = ImportModelFromFile(kScenes + scene).model;
    Data with(*model), defaults(*model);
    for (int n = 0; n < steps; ++n) {
      ASSERT_EQ(Step(*model, with, options), StepStatus::kOk);
      ASSERT_EQ(Step(*model, defaults), StepStatus::kOk);
    }
    const std::vector<double> qpos = Doubles(response.observations().at("qpos"));
    ASSERT_EQ(qpos.size(), static_cast<size_t>(model->nq));
    EXPECT_EQ(0, std::memcmp(qpos.data(), with.qpos.data(), model->nq * sizeof(double)));
    EXPECT_NE(0, std::memcmp(qpos.data(), defaults.qpos.data(), model->nq * sizeof(double)))
        << "the options make a difference, so the test can tell";
  }

  // quadruped_drop_8 created with `config` and stepped 120 times (the robots land at about 60)
  // ends where an in-process run with `options` does, and not where the defaults' run does.
  void ExpectQuadrupedsLandAsInProcess(const v1::SolverConfig& config, const StepOptions& options) {
    v1::CreateRequest request;
    request.mutable_scene()->set_builtin("quadruped_drop_8");
    *request.mutable_solver() = config;
    v1::CreateResponse created;
    ASSERT_TRUE(stub_->Create(Context().get(), request, &created).ok());
    constexpr int kSteps = 120;
    v1::StepResponse response;
    ASSERT_TRUE(StepIds({created.instance_ids(0)}, {}, 0, &response, kSteps).ok());
    ExpectOptionsNotDefaults("quadruped_drop_8.xml", options, kSteps, response);
  }

  // Create with `config` fails with INVALID_ARGUMENT, and the message names `field`.
  void ExpectCreateRefused(const v1::SolverConfig& config, const std::string& field) {
    v1::CreateRequest request;
    request.mutable_scene()->set_builtin("quadruped_drop_8");
    *request.mutable_solver() = config;
    v1::CreateResponse created;
    const grpc::Status status = stub_->Create(Context().get(), request, &created);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find(field), std::string::npos) << status.error_message();
  }

  std::string GetState(std::uint64_t id) {
    v1::GetStateRequest request;
    request.set_instance_id(id);
    v1::GetStateResponse response;
    EXPECT_TRUE(stub_->GetState(Context().get(), request, &response).ok());
    return response.state();
  }

  static server::Server* server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Simulator::Stub> stub_;
};

server::Server* ServiceTest::server_ = nullptr;

std::vector<double> ActionsFor(int batch, int nu, int step) {
  std::vector<double> actions(static_cast<size_t>(batch) * nu);
  for (size_t i = 0; i < actions.size(); ++i) actions[i] = 0.3 * std::sin(0.1 * step + i);
  return actions;
}

TEST_F(ServiceTest, CreateReturnsIdsGroupAndSpecs) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("quadruped_drop_8", 3, 7, &created).ok());
  ASSERT_EQ(created.instance_ids_size(), 3);
  EXPECT_NE(created.group_id(), 0u);
  const auto model = ImportModelFromFile(kScenes + "quadruped_drop_8.xml").model;
  EXPECT_EQ(created.specs().nq(), static_cast<unsigned>(model->nq));
  EXPECT_EQ(created.specs().nu(), static_cast<unsigned>(model->nu));
  EXPECT_EQ(created.specs().action().shape(0), model->nu);
  EXPECT_EQ(created.specs().action().element_names_size(), model->nu);
  EXPECT_DOUBLE_EQ(created.specs().timestep(), model->timestep);
  EXPECT_EQ(created.specs().nbody(), static_cast<unsigned>(model->nbody));
  ASSERT_EQ(created.specs().body_names_size(), model->nbody);
  for (int b = 0; b < model->nbody; ++b)
    EXPECT_EQ(created.specs().body_names(b), model->body_name[b]);

  v1::ListResponse list;
  ASSERT_TRUE(stub_->List(Context().get(), v1::ListRequest(), &list).ok());
  int mine = 0;
  for (const auto& info : list.instances()) mine += info.group_id() == created.group_id();
  EXPECT_EQ(mine, 3);

  v1::DestroyRequest destroy;
  destroy.mutable_instances()->set_group_id(created.group_id());
  v1::DestroyResponse destroyed;
  ASSERT_TRUE(stub_->Destroy(Context().get(), destroy, &destroyed).ok());
  EXPECT_EQ(destroyed.destroyed(), 3u);
  v1::StepResponse step;
  EXPECT_EQ(StepIds({created.instance_ids(0)}, {}, 0, &step).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// The server's batched step is the engine's Step: bit-identical to stepping in process.
TEST_F(ServiceTest, BatchedRemoteStepsMatchInProcessStepsBitForBit) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("quadruped_drop_8", 4, 1, &created).ok());
  const int nu = static_cast<int>(created.specs().nu());
  const std::vector<std::uint64_t> ids(created.instance_ids().begin(),
                                       created.instance_ids().end());
  const auto model = ImportModelFromFile(kScenes + "quadruped_drop_8.xml").model;
  std::vector<Data> local;
  for (int k = 0; k < 4; ++k) local.emplace_back(*model);
  v1::StepResponse response;
  for (int n = 0; n < 60; ++n) {
    const std::vector<double> actions = ActionsFor(4, nu, n);
    ASSERT_TRUE(StepIds(ids, actions, nu, &response).ok());
    for (int k = 0; k < 4; ++k) {
      std::copy_n(actions.begin() + k * nu, nu, local[k].ctrl.begin());
      ASSERT_EQ(Step(*model, local[k]), StepStatus::kOk);
    }
  }
  const std::vector<double> qpos = Doubles(response.observations().at("qpos"));
  ASSERT_EQ(qpos.size(), static_cast<size_t>(4 * model->nq));
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(0, std::memcmp(qpos.data() + k * model->nq, local[k].qpos.data(),
                             model->nq * sizeof(double)))
        << "instance " << k;
  }
  ASSERT_EQ(response.status_size(), 4);
  EXPECT_EQ(response.status(0), v1::INSTANCE_STATUS_OK);
  EXPECT_GT(response.diagnostics(0).contacts(), 0u) << "the robots have landed by 60 steps";
}

// Episodes and in-call resets (Gymnasium's autoreset on the server): max_episode_steps truncates
// by Step calls whatever the substeps; reset_mask resets instead of stepping, from the instance's
// own generator exactly as Reset does; reset_truncated starts the next episode in the same call
// and hands the truncated state back in final_observations.
class EpisodeTest : public ServiceTest {
 protected:
  // A group of `count` quadruped_drop_8 instances with seed 7 and the episode limit.
  v1::CreateResponse CreateEpisodes(int count, std::uint32_t max_episode_steps) {
    v1::CreateRequest request;
    request.mutable_scene()->set_builtin("quadruped_drop_8");
    request.set_count(count);
    request.set_seed(7);
    request.set_max_episode_steps(max_episode_steps);
    v1::CreateResponse response;
    EXPECT_TRUE(stub_->Create(Context().get(), request, &response).ok());
    return response;
  }
  static v1::StepRequest StepOf(const v1::CreateResponse& group, int substeps = 1) {
    v1::StepRequest request;
    request.mutable_instances()->set_group_id(group.group_id());
    request.set_substeps(substeps);
    request.add_observations(v1::OBSERVATION_QPOS);
    request.add_observations(v1::OBSERVATION_TIME);
    return request;
  }
  grpc::Status Call(const v1::StepRequest& request, v1::StepResponse* response) {
    response->Clear();
    return stub_->Step(Context().get(), request, response);
  }
  // qpos of a fresh instance of the scene reset with `noise` from seed 7 + k (a Reset call on a
  // twin group), the independent answer for the in-call resets.
  std::vector<double> TwinReset(int count, double noise) {
    const v1::CreateResponse twin = CreateEpisodes(count, 0);
    v1::ResetRequest reset;
    reset.mutable_instances()->set_group_id(twin.group_id());
    reset.set_noise(noise);
    reset.add_observations(v1::OBSERVATION_QPOS);
    v1::ResetResponse response;
    EXPECT_TRUE(stub_->Reset(Context().get(), reset, &response).ok());
    return Doubles(response.observations().at("qpos"));
  }
};

TEST_F(EpisodeTest, MaxEpisodeStepsTruncatesByCallsUntilAReset) {
  const v1::CreateResponse group = CreateEpisodes(2, 3);
  v1::StepResponse response;
  for (int call = 1; call <= 4; ++call) {
    ASSERT_TRUE(Call(StepOf(group, 2), &response).ok());
    ASSERT_EQ(response.truncated_size(), 2);
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(response.truncated(k), call >= 3) << "call " << call << ", instance " << k;
      EXPECT_FALSE(response.reset(k));
    }
  }
  EXPECT_EQ(response.final_observations_size(), 0) << "nothing was reset";
  // Reset starts a new episode: three more calls before the next truncation.
  v1::ResetRequest reset;
  reset.mutable_instances()->set_group_id(group.group_id());
  v1::ResetResponse reset_response;
  ASSERT_TRUE(stub_->Reset(Context().get(), reset, &reset_response).ok());
  for (int call = 1; call <= 3; ++call) {
    ASSERT_TRUE(Call(StepOf(group), &response).ok());
    EXPECT_EQ(response.truncated(0), call == 3) << "call " << call;
  }
  // Without a limit nothing is ever truncated.
  const v1::CreateResponse unlimited = CreateEpisodes(1, 0);
  for (int call = 0; call < 5; ++call) {
    ASSERT_TRUE(Call(StepOf(unlimited), &response).ok());
    EXPECT_FALSE(response.truncated(0));
  }
}

TEST_F(EpisodeTest, ResetMaskResetsLikeResetAndStepsTheOthers) {
  const v1::CreateResponse group = CreateEpisodes(2, 4);
  v1::StepResponse response;
  for (int call = 0; call < 3; ++call) ASSERT_TRUE(Call(StepOf(group), &response).ok());
  const std::vector<double> before = Doubles(response.observations().at("qpos"));
  v1::StepRequest request = StepOf(group);
  request.add_reset_mask(true);
  request.add_reset_mask(false);
  request.set_reset_noise(0.05);
  ASSERT_TRUE(Call(request, &response).ok());
  const size_t nq = before.size() / 2;
  const std::vector<double> qpos = Doubles(response.observations().at("qpos"));
  const std::vector<double> time = Doubles(response.observations().at("time"));
  const std::vector<double> expected = TwinReset(2, 0.05);
  EXPECT_TRUE(std::equal(qpos.begin(), qpos.begin() + nq, expected.begin()))
      << "instance 0 is its generator's reset, bit for bit";
  EXPECT_EQ(time[0], 0.0);
  EXPECT_NEAR(time[1], 4 * group.specs().timestep(), 1e-12) << "instance 1 stepped on";
  EXPECT_FALSE(std::equal(qpos.begin() + nq, qpos.end(), before.begin() + nq));
  EXPECT_TRUE(response.reset(0));
  EXPECT_FALSE(response.reset(1));
  EXPECT_EQ(response.status(0), v1::INSTANCE_STATUS_OK);
  EXPECT_EQ(response.diagnostics(0).contacts(), 0u) << "a reset state's diagnostics are zero";
  // Instance 0 began a new episode (4 calls to go); instance 1 reached 4 calls now.
  EXPECT_FALSE(response.truncated(0));
  EXPECT_TRUE(response.truncated(1));

  // A mask of the wrong length, or bad noise, is refused and changes nothing.
  const std::string state = GetState(group.instance_ids(0));
  v1::StepRequest wrong = StepOf(group);
  wrong.add_reset_mask(true);
  EXPECT_EQ(Call(wrong, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::StepRequest noisy = StepOf(group);
  noisy.add_reset_mask(true);
  noisy.add_reset_mask(true);
  noisy.set_reset_noise(-1);
  EXPECT_EQ(Call(noisy, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(GetState(group.instance_ids(0)), state);
}

TEST_F(EpisodeTest, ResetMaskRecoversADivergedInstance) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateText(kMotorScene, 2, &created).ok());
  const std::vector<std::uint64_t> ids(created.instance_ids().begin(),
                                       created.instance_ids().end());
  v1::StepResponse response;
  ASSERT_TRUE(StepIds(ids, {1e308, 0}, 1, &response, 3).ok());
  ASSERT_EQ(response.status(0), v1::INSTANCE_STATUS_DIVERGED);
  // Stepping it is refused, unless this very call resets it.
  EXPECT_EQ(StepIds(ids, {0, 0}, 1, &response).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  v1::StepRequest request;
  for (const auto id : ids) request.mutable_instances()->add_instance_ids(id);
  request.add_reset_mask(true);
  request.add_reset_mask(false);
  request.add_observations(v1::OBSERVATION_QPOS);
  ASSERT_TRUE(stub_->Step(Context().get(), request, &response).ok());
  EXPECT_EQ(response.status(0), v1::INSTANCE_STATUS_OK);
  const std::vector<double> qpos = Doubles(response.observations().at("qpos"));
  EXPECT_EQ(qpos[0], 0.0) << "the slide starts at 0";
  ASSERT_TRUE(StepIds(ids, {0, 0}, 1, &response).ok()) << "it steps again";
}

TEST_F(EpisodeTest, ResetTruncatedStartsTheNextEpisodeInTheSameCall) {
  const v1::CreateResponse group = CreateEpisodes(2, 2);
  const v1::CreateResponse twin = CreateEpisodes(2, 0);  // the same trajectory, never reset
  v1::StepRequest request = StepOf(group);
  request.set_reset_truncated(true);
  v1::StepResponse response, twin_response;
  ASSERT_TRUE(Call(request, &response).ok());
  EXPECT_FALSE(response.reset(0));
  EXPECT_EQ(response.final_observations_size(), 0);
  ASSERT_TRUE(Call(StepOf(twin), &twin_response).ok());
  ASSERT_TRUE(Call(request, &response).ok());
  ASSERT_TRUE(Call(StepOf(twin), &twin_response).ok());
  for (int k = 0; k < 2; ++k) {
    EXPECT_TRUE(response.truncated(k));
    EXPECT_TRUE(response.reset(k));
    EXPECT_EQ(response.status(k), v1::INSTANCE_STATUS_OK);
  }
  EXPECT_EQ(Doubles(response.final_observations().at("qpos")),
            Doubles(twin_response.observations().at("qpos")))
      << "the truncated state is the twin's after two calls";
  EXPECT_EQ(Doubles(response.observations().at("qpos")), TwinReset(2, 0))
      << "the observations are the new episode's start";
  EXPECT_EQ(Doubles(response.observations().at("time")), std::vector<double>(2, 0.0));
  // The new episode runs its two calls again.
  ASSERT_TRUE(Call(request, &response).ok());
  EXPECT_FALSE(response.truncated(0));
  ASSERT_TRUE(Call(request, &response).ok());
  EXPECT_TRUE(response.truncated(0));
  EXPECT_TRUE(response.reset(0));
}

// Large batches: the server decodes each instance's row of actions and forces, steps it and
// writes its rows of the reply in that instance's own parallel task. The reply is still the
// in-process result row for row, and a refusal still names the first bad element in batch order
// and changes nothing, wherever in the batch the element is.
class LargeBatchTest : public ServiceTest {
 protected:
  // A batch holds one lock per instance on the thread that runs it, and ThreadSanitizer's
  // deadlock detector tracks at most 64 locks held by one thread: a few fewer instances under it.
  static constexpr int kBatch = kUnderTsan ? 56 : 64;
  static void SetUpTestSuite() { StartServer(4 * kBatch); }

  // kBatch humanoids (the builtin "humanoid": MuJoCo's humanoid.xml), seed 11.
  v1::CreateResponse CreateHumanoids(std::uint32_t max_episode_steps) {
    v1::CreateRequest request;
    request.mutable_scene()->set_builtin("humanoid");
    request.set_count(kBatch);
    request.set_seed(11);
    request.set_max_episode_steps(max_episode_steps);
    v1::CreateResponse response;
    EXPECT_TRUE(stub_->Create(Context().get(), request, &response).ok());
    EXPECT_EQ(response.instance_ids_size(), kBatch);
    return response;
  }

  // `values` (K rows) as a [K, per...] tensor of float32 (`single`) or float64.
  static v1::Tensor TensorOf(const std::vector<double>& values, std::vector<long> shape,
                             bool single) {
    v1::Tensor tensor;
    tensor.set_dtype(single ? v1::DTYPE_FLOAT32 : v1::DTYPE_FLOAT64);
    for (const long n : shape) tensor.add_shape(n);
    if (single) {
      const std::vector<float> floats(values.begin(), values.end());
      tensor.set_data(
          std::string(reinterpret_cast<const char*>(floats.data()), floats.size() * sizeof(float)));
    } else {
      tensor.set_data(std::string(reinterpret_cast<const char*>(values.data()),
                                  values.size() * sizeof(double)));
    }
    return tensor;
  }

  // Every observation of `data` (instance k of `batch`) appended to `rows`, by tensor name, as
  // the bytes of its row; body poses recompute the kinematics, as the server does.
  static void AppendRows(const Model& m, Data& data, std::map<std::string, std::string>* rows) {
    auto doubles = [&](const char* name, const double* values, std::size_t n) {
      (*rows)[name].append(reinterpret_cast<const char*>(values), n * sizeof(double));
    };
    doubles("qpos", data.qpos.data(), m.nq);
    doubles("qvel", data.qvel.data(), m.nv);
    Kinematics(m, data);
    for (int b = 0; b < m.nbody; ++b) {
      doubles("body_pos", data.xpos[b].data(), 3);
      doubles("body_quat", data.xquat[b].data(), 4);
    }
    doubles("ctrl", data.ctrl.data(), m.nu);
    doubles("actuator_force", data.actuator_force.data(), m.nu);
    const auto contacts = static_cast<std::int32_t>(data.contact.size());
    (*rows)["contact_count"].append(reinterpret_cast<const char*>(&contacts), sizeof(contacts));
    double deepest = 0;
    for (const Contact& c : data.contact) deepest = std::max(deepest, -c.dist);
    doubles("max_penetration", &deepest, 1);
    doubles("time", &data.time, 1);
  }

  // `tensors` hold exactly `rows` (by name, K rows each), with batch dimension K.
  static void ExpectTensors(const google::protobuf::Map<std::string, v1::Tensor>& tensors,
                            const std::map<std::string, std::string>& rows, const char* what,
                            int call) {
    ASSERT_EQ(tensors.size(), rows.size()) << what << ", call " << call;
    for (const auto& [name, bytes] : rows) {
      ASSERT_EQ(tensors.count(name), 1u) << what << " " << name << ", call " << call;
      const v1::Tensor& tensor = tensors.at(name);
      ASSERT_GE(tensor.shape_size(), 1);
      EXPECT_EQ(tensor.shape(0), kBatch) << name;
      EXPECT_TRUE(tensor.data() == bytes) << what << " " << name << ", call " << call;
    }
  }
};

// 64 humanoids (56 under TSan) with every kind of row in one batch: float32 and float64 actions,
// external forces on some instances, instances reset by the mask (NEXT_STEP) and after their
// truncation (SAME_STEP, with final observations), every observation. Each call's reply equals
// in-process stepping of the same instances, bit for bit, row for row.
TEST_F(LargeBatchTest, SixtyFourInstancesObserveAsInProcessBitForBit) {
  constexpr std::uint32_t kEpisode = 30;
  const v1::CreateResponse group = CreateHumanoids(kEpisode);
  const auto model = ImportModelFromFile("/usr/share/mujoco/model/humanoid/humanoid.xml").model;
  const int nu = model->nu, nbody = model->nbody;
  ASSERT_EQ(group.specs().nu(), static_cast<unsigned>(nu));
  std::vector<Data> local;
  for (int k = 0; k < kBatch; ++k) local.emplace_back(*model);
  std::vector<std::uint32_t> episode(kBatch, 0);
  // The resets use no noise: the expected state is a fresh Data with the engine's reset.
  auto reset = [&](int k) {
    std::mt19937_64 rng(11 + k);
    Data fresh(*model);
    ASSERT_TRUE(ApplyResetNoise(*model, 0.0, rng, &fresh));
    local[k] = std::move(fresh);
    episode[k] = 0;
  };
  int truncation_resets = 0, mask_resets = 0, rows_with_contacts = 0;
  for (int call = 0; call < 40; ++call) {
    v1::StepRequest request;
    request.mutable_instances()->set_group_id(group.group_id());
    for (const auto kind :
         {v1::OBSERVATION_QPOS, v1::OBSERVATION_QVEL, v1::OBSERVATION_BODY_POSES,
          v1::OBSERVATION_ACTUATOR_STATE, v1::OBSERVATION_CONTACT_SUMMARY, v1::OBSERVATION_TIME}) {
      request.add_observations(kind);
    }
    request.set_reset_truncated(true);
    const bool single = call % 2 == 1;
    std::vector<double> actions = ActionsFor(kBatch, nu, call);
    *request.mutable_actions() = TensorOf(actions, {kBatch, nu}, single);
    if (single) {
      for (double& a : actions) a = static_cast<float>(a);
    }
    std::vector<double> forces(static_cast<size_t>(kBatch) * nbody * 6, 0.0);
    const bool pushed = call % 3 == 0;
    if (pushed) {
      for (int k = 0; k < kBatch; k += 3) {
        forces[(static_cast<size_t>(k) * nbody + 1) * 6 + k % 6] = 20.0 + k;
      }
      *request.mutable_external_forces() = TensorOf(forces, {kBatch, nbody, 6}, false);
    }
    const bool masking = call == 3 || call == 11;
    for (int k = 0; masking && k < kBatch; ++k) request.add_reset_mask(k % 5 == 0);

    v1::StepResponse response;
    ASSERT_TRUE(stub_->Step(Context().get(), request, &response).ok()) << "call " << call;

    std::map<std::string, std::string> expected, expected_final;
    std::vector<char> truncated(kBatch, 0), was_reset(kBatch, 0);
    for (int k = 0; k < kBatch; ++k) {
      Data& d = local[k];
      if (masking && k % 5 == 0) {
        reset(k);
        was_reset[k] = 1;
        ++mask_resets;
        continue;
      }
      std::copy_n(actions.begin() + static_cast<long>(k) * nu, nu, d.ctrl.begin());
      for (int b = 0; pushed && b < nbody; ++b) {
        d.xfrc_applied[b] =
            Eigen::Map<const Vec6>(&forces[(static_cast<size_t>(k) * nbody + b) * 6]);
      }
      ASSERT_EQ(Step(*model, d), StepStatus::kOk) << "instance " << k << ", call " << call;
      for (Vec6& f : d.xfrc_applied) f.setZero();
      truncated[k] = ++episode[k] >= kEpisode;
    }
    const bool any_truncated = std::count(truncated.begin(), truncated.end(), 1) > 0;
    for (int k = 0; k < kBatch; ++k) {
      const v1::SolverDiagnostics& got = response.diagnostics(k);
      const SolverStatistics& want = local[k].solver_statistics;
      EXPECT_EQ(got.contacts(), static_cast<unsigned>(want.contacts)) << k << ", call " << call;
      EXPECT_EQ(got.islands(), static_cast<unsigned>(want.islands));
      EXPECT_EQ(got.max_iterations(), static_cast<unsigned>(want.max_iterations));
      EXPECT_EQ(got.mean_iterations(), want.mean_iterations);
      EXPECT_EQ(got.primal_residual(), want.primal_residual);
      EXPECT_EQ(got.dual_residual(), want.dual_residual);
      EXPECT_EQ(got.contact_residual(), want.contact_residual);
      EXPECT_EQ(got.split(), want.split);
      ASSERT_EQ(got.figures_size(), want.num_figures);
      for (int f = 0; f < want.num_figures; ++f) {
        EXPECT_EQ(got.figures().at(want.figures[f].name), want.figures[f].value);
      }
      rows_with_contacts += want.contacts > 0;
      if (any_truncated) AppendRows(*model, local[k], &expected_final);
      if (truncated[k]) {
        reset(k);
        was_reset[k] = 1;
        ++truncation_resets;
      }
      AppendRows(*model, local[k], &expected);
      EXPECT_EQ(response.status(k), v1::INSTANCE_STATUS_OK);
      EXPECT_EQ(response.truncated(k), truncated[k] != 0) << k << ", call " << call;
      EXPECT_EQ(response.reset(k), was_reset[k] != 0) << k << ", call " << call;
    }
    ASSERT_EQ(response.status_size(), kBatch);
    ASSERT_EQ(response.diagnostics_size(), kBatch);
    ExpectTensors(response.observations(), expected, "observations", call);
    if (any_truncated) {
      ExpectTensors(response.final_observations(), expected_final, "final_observations", call);
    } else {
      EXPECT_EQ(response.final_observations_size(), 0) << "call " << call;
    }
  }
  // The batch really held every kind of row.
  EXPECT_GT(truncation_resets, 0);
  EXPECT_GT(mask_resets, 0);
  EXPECT_GT(rows_with_contacts, 0) << "the humanoids touch the floor";
}

// A NaN or Inf refuses the whole batch wherever it is: the error names the first bad element in
// batch order (actions before forces), and no instance moves, is reset or takes its controls.
TEST_F(LargeBatchTest, ANonFiniteValueAnywhereInALargeBatchIsRefusedAndNothingMoves) {
  const v1::CreateResponse group = CreateHumanoids(0);
  const int nu = static_cast<int>(group.specs().nu());
  const int nbody = static_cast<int>(group.specs().nbody());
  v1::StepRequest request;
  request.mutable_instances()->set_group_id(group.group_id());
  v1::StepResponse response;
  for (int call = 0; call < 3; ++call) {
    *request.mutable_actions() =
        LargeBatchTest::TensorOf(ActionsFor(kBatch, nu, call), {kBatch, nu}, false);
    ASSERT_TRUE(stub_->Step(Context().get(), request, &response).ok());
  }
  std::vector<std::string> before;
  for (const auto id : group.instance_ids()) before.push_back(GetState(id));

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> forces(static_cast<size_t>(kBatch) * nbody * 6, 1.0);
  // (bad actions, bad forces, reset every instance, float32, the element the error names)
  struct Case {
    std::vector<std::pair<int, double>> actions, forces;  // flat index, value
    bool mask_all;
    bool single;
    std::string named;
  };
  const int last_action = kBatch * nu - 1;
  const int last_force = kBatch * nbody * 6 - 1;
  const int late = kBatch - 4;  // a late row with bad actions, an early one with bad forces
  const std::vector<Case> cases = {
      {{{last_action, nan}},
       {},
       false,
       false,
       "action [" + std::to_string(kBatch - 1) + ", " + std::to_string(nu - 1) + "]"},
      {{{40 * nu + 2, inf}, {9 * nu + 5, nan}, {9 * nu + 1, -inf}},
       {},
       false,
       true,
       "action [9, 1]"},
      {{},
       {{last_force, nan}},
       false,
       true,
       "external force [" + std::to_string(kBatch - 1) + ", " + std::to_string(nbody - 1) + ", 5]"},
      {{{late * nu, nan}},
       {{2 * nbody * 6, inf}},
       false,
       false,
       "action [" + std::to_string(late) + ", 0]"},
      {{{last_action, inf}},
       {},
       true,
       false,
       "action [" + std::to_string(kBatch - 1) + ", " + std::to_string(nu - 1) + "]"},
  };
  for (const Case& c : cases) {
    v1::StepRequest bad = request;
    std::vector<double> actions = ActionsFor(kBatch, nu, 7);
    for (const auto& [i, value] : c.actions) actions[i] = value;
    *bad.mutable_actions() = LargeBatchTest::TensorOf(actions, {kBatch, nu}, c.single);
    std::vector<double> bad_forces = forces;
    for (const auto& [i, value] : c.forces) bad_forces[i] = value;
    *bad.mutable_external_forces() =
        LargeBatchTest::TensorOf(bad_forces, {kBatch, nbody, 6}, c.single);
    for (int k = 0; c.mask_all && k < kBatch; ++k) bad.add_reset_mask(true);
    const grpc::Status status = stub_->Step(Context().get(), bad, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.named;
    EXPECT_THAT(status.error_message(), HasSubstr(c.named + " "));
    EXPECT_THAT(status.error_message(), HasSubstr("not finite; no instance was stepped"));
  }
  for (int k = 0; k < kBatch; ++k) {
    EXPECT_EQ(GetState(group.instance_ids(k)), before[k]) << "instance " << k << " moved";
  }
  v1::ListResponse list;
  ASSERT_TRUE(stub_->List(Context().get(), v1::ListRequest(), &list).ok());
  for (const auto& info : list.instances()) {
    if (info.group_id() == group.group_id()) {
      EXPECT_EQ(info.steps(), 3u);
    }
  }
}

// The solver options of Create reach the engine: the paper's settings (no over-relaxation, one
// beta) give the in-process trajectory with the same options, and bad values are refused.
TEST_F(ServiceTest, SolverConfigReachesTheEngineAndBadValuesAreRefused) {
  v1::CreateRequest request;
  request.mutable_scene()->set_builtin("box_stack");
  request.mutable_solver()->set_relaxation(1.0);
  request.mutable_solver()->set_penalty_scaling("pseudo-density");
  request.mutable_solver()->mutable_anderson_memory()->set_value(0);
  v1::CreateResponse created;
  ASSERT_TRUE(stub_->Create(Context().get(), request, &created).ok());
  v1::StepResponse response;
  ASSERT_TRUE(StepIds({created.instance_ids(0)}, {}, 0, &response, 30).ok());
  StepOptions options;
  options.solver.admm.relaxation = 1.0;
  options.solver.admm.penalty_scaling = PenaltyScaling::kPseudoDensity;
  options.solver.subadmm.anderson_memory = 0;
  ExpectOptionsNotDefaults("box_stack.xml", options, 30, response);

  for (const double relaxation : {2.0, -0.5, std::nan("")}) {
    v1::CreateRequest bad = request;
    bad.mutable_solver()->set_relaxation(relaxation);
    EXPECT_EQ(stub_->Create(Context().get(), bad, &created).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT)
        << relaxation;
  }
  v1::CreateRequest too_much = request;
  too_much.mutable_solver()->mutable_anderson_memory()->set_value(9);
  EXPECT_EQ(stub_->Create(Context().get(), too_much, &created).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  v1::CreateRequest bad = request;
  bad.mutable_solver()->set_penalty_scaling("unit");
  const grpc::Status status = stub_->Create(Context().get(), bad, &created);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("pseudo-density"), std::string::npos);
}

// A solver that cannot express condim 4/6 contacts (the CANAL family) is refused at Create, with
// the solver and the geom named; a solver that can creates and steps the same scene.
TEST_F(ServiceTest, CreateRefusesASolverWithoutTorsionalRowsOnACondimSixScene) {
  v1::CreateRequest request;
  request.mutable_scene()->set_builtin("spinning_top");
  request.mutable_solver()->set_solver("canal");
  v1::CreateResponse created;
  const grpc::Status status = stub_->Create(Context().get(), request, &created);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("'canal'"), std::string::npos) << status.error_message();
  EXPECT_NE(status.error_message().find("'tip'"), std::string::npos) << status.error_message();
  EXPECT_EQ(created.instance_ids_size(), 0);
  request.mutable_solver()->set_solver("pgs");
  ASSERT_TRUE(stub_->Create(Context().get(), request, &created).ok());
  v1::StepResponse response;
  EXPECT_TRUE(StepIds({created.instance_ids(0)}, {}, 0, &response, 10).ok());
}

// SolverConfig.parameters reaches any option of the engine's table by name: options without a
// typed field (beta_gamma, the eq. 43 check interval) change the trajectory exactly as in
// process; an unknown name or a value out of range is refused with the option's name and range.
TEST_F(ServiceTest, SolverParametersReachTheEngineByName) {
  v1::CreateRequest request;
  request.mutable_scene()->set_builtin("box_stack");
  (*request.mutable_solver()->mutable_parameters())["beta_gamma"] = "3";
  (*request.mutable_solver()->mutable_parameters())["beta_update_interval"] = "1";
  v1::CreateResponse created;
  ASSERT_TRUE(stub_->Create(Context().get(), request, &created).ok());
  v1::StepResponse response;
  ASSERT_TRUE(StepIds({created.instance_ids(0)}, {}, 0, &response, 30).ok());
  StepOptions options;
  options.solver.admm.beta_gamma = 3;
  options.solver.admm.beta_update_interval = 1;
  ExpectOptionsNotDefaults("box_stack.xml", options, 30, response);

  v1::CreateRequest unknown = request;
  (*unknown.mutable_solver()->mutable_parameters())["no_such_option"] = "1";
  grpc::Status status = stub_->Create(Context().get(), unknown, &created);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("no_such_option"), std::string::npos);
  v1::CreateRequest out_of_range = request;
  (*out_of_range.mutable_solver()->mutable_parameters())["beta_gamma"] = "1";
  status = stub_->Create(Context().get(), out_of_range, &created);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("beta_gamma must be a number, more than 1, not '1'"),
            std::string::npos)
      << status.error_message();
}

// The Newton kit's contact models by name through the service: MuJoCo's (`mujoco`) and SAP's
// (`sap`, with a stiffness among its parameters) give the in-process trajectories bit for bit.
TEST_F(ServiceTest, MujocoAndSapSolversReachTheEngineByName) {
  v1::SolverConfig mujoco;
  mujoco.set_solver("mujoco");
  StepOptions mujoco_options;
  mujoco_options.solver.type = SolverType::kMujoco;
  ExpectQuadrupedsLandAsInProcess(mujoco, mujoco_options);
  v1::SolverConfig sap;
  sap.set_solver("sap");
  (*sap.mutable_parameters())["sap_stiffness"] = "100000";
  StepOptions sap_options;
  sap_options.solver.type = SolverType::kSap;
  sap_options.solver.sap.stiffness = 1e5;
  ExpectQuadrupedsLandAsInProcess(sap, sap_options);
}

// SolverConfig.delassus_refresh_steps reaches SubADMM: quadrupeds (trees, whose constraints keep
// their traces) land the same as in-process with the same value, not as with the default; 0 is
// refused.
TEST_F(ServiceTest, DelassusRefreshReachesTheEngine) {
  v1::SolverConfig config;
  config.mutable_delassus_refresh_steps()->set_value(1);
  StepOptions options;
  options.solver.subadmm.delassus_refresh_steps = 1;
  ExpectQuadrupedsLandAsInProcess(config, options);
  config.mutable_delassus_refresh_steps()->set_value(0);
  ExpectCreateRefused(config, "delassus_refresh_steps");
}

// SolverConfig.response_after_iterations reaches SubADMM: with 1, the quadrupeds' islands move
// to the constraint-space response after their first iteration, which changes the rounding, so
// the robots land as in-process with 1 and not bit for bit as with the default (24); a value
// beyond the engine's int is refused.
TEST_F(ServiceTest, ResponseSwitchReachesTheEngine) {
  v1::SolverConfig config;
  config.mutable_response_after_iterations()->set_value(1);
  StepOptions options;
  options.solver.subadmm.response_after_iterations = 1;
  ExpectQuadrupedsLandAsInProcess(config, options);
  config.mutable_response_after_iterations()->set_value(4000000000u);
  ExpectCreateRefused(config, "response_after_iterations");
}

TEST_F(ServiceTest, GetStateSetStateResumesBitExactly) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("quadruped_drop_8", 1, 1, &created).ok());
  const std::uint64_t id = created.instance_ids(0);
  const int nu = static_cast<int>(created.specs().nu());
  v1::StepResponse response;
  for (int n = 0; n < 120; ++n)
    ASSERT_TRUE(StepIds({id}, ActionsFor(1, nu, n), nu, &response).ok());
  const std::string saved = GetState(id);
  for (int n = 0; n < 40; ++n) ASSERT_TRUE(StepIds({id}, ActionsFor(1, nu, n), nu, &response).ok());
  const std::vector<double> first = Doubles(response.observations().at("qvel"));

  v1::SetStateRequest set;
  set.set_instance_id(id);
  set.set_state(saved);
  v1::SetStateResponse set_response;
  ASSERT_TRUE(stub_->SetState(Context().get(), set, &set_response).ok());
  for (int n = 0; n < 40; ++n) ASSERT_TRUE(StepIds({id}, ActionsFor(1, nu, n), nu, &response).ok());
  const std::vector<double> second = Doubles(response.observations().at("qvel"));
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(0, std::memcmp(first.data(), second.data(), first.size() * sizeof(double)));

  set.set_state("not a state");
  EXPECT_EQ(stub_->SetState(Context().get(), set, &set_response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// A Reset of many instances runs per instance as parallel tasks: each row must equal a Reset of
// that instance alone with the same seed.
TEST_F(ServiceTest, LargeResetEqualsResetsOneByOne) {
  constexpr int kCount = 48;
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("quadruped_drop_8", kCount, 3, &created).ok());
  auto reset = [&](const std::vector<std::uint64_t>& ids, const std::vector<std::uint64_t>& seeds,
                   double noise, v1::ResetResponse* response) {
    v1::ResetRequest request;
    for (const auto id : ids) request.mutable_instances()->add_instance_ids(id);
    for (const auto seed : seeds) request.add_seeds(seed);
    request.set_noise(noise);
    request.add_observations(v1::OBSERVATION_QPOS);
    request.add_observations(v1::OBSERVATION_BODY_POSES);
    response->Clear();
    return stub_->Reset(Context().get(), request, response);
  };
  std::vector<std::uint64_t> ids, seeds;
  for (int k = 0; k < kCount; ++k) {
    ids.push_back(created.instance_ids(k));
    seeds.push_back(100 + 7 * k);
  }
  v1::ResetResponse all;
  ASSERT_TRUE(reset(ids, seeds, 0.05, &all).ok());
  const std::vector<double> qpos = Doubles(all.observations().at("qpos"));
  const std::vector<double> body_pos = Doubles(all.observations().at("body_pos"));
  ASSERT_EQ(qpos.size() % kCount, 0u);
  const size_t nq = qpos.size() / kCount, nb = body_pos.size() / kCount;
  for (int k = 0; k < kCount; ++k) {
    v1::ResetResponse one;
    ASSERT_TRUE(reset({ids[k]}, {seeds[k]}, 0.05, &one).ok());
    const std::vector<double> q = Doubles(one.observations().at("qpos"));
    const std::vector<double> x = Doubles(one.observations().at("body_pos"));
    EXPECT_TRUE(std::equal(q.begin(), q.end(), qpos.begin() + k * nq)) << "instance " << k;
    EXPECT_TRUE(std::equal(x.begin(), x.end(), body_pos.begin() + k * nb)) << "instance " << k;
  }
}

TEST_F(ServiceTest, ResetWithSeedsIsReproducibleAndNoiseDependsOnTheSeed) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("quadruped_drop_8", 2, 1, &created).ok());
  auto reset = [&](std::vector<std::uint64_t> seeds) {
    v1::ResetRequest request;
    request.mutable_instances()->set_group_id(created.group_id());
    for (const auto seed : seeds) request.add_seeds(seed);
    request.set_noise(0.05);
    request.add_observations(v1::OBSERVATION_QPOS);
    v1::ResetResponse response;
    EXPECT_TRUE(stub_->Reset(Context().get(), request, &response).ok());
    return Doubles(response.observations().at("qpos"));
  };
  const auto a = reset({5, 6});
  const auto b = reset({5, 6});
  const auto c = reset({5, 9});
  const size_t nq = a.size() / 2;
  EXPECT_EQ(a, b);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + nq, c.begin())) << "instance 0: same seed";
  EXPECT_FALSE(std::equal(a.begin() + nq, a.end(), c.begin() + nq)) << "instance 1: new seed";
  v1::ResetRequest bad;
  bad.mutable_instances()->set_group_id(created.group_id());
  bad.add_seeds(1);  // one seed for two instances
  v1::ResetResponse response;
  EXPECT_EQ(stub_->Reset(Context().get(), bad, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // Observations of two scenes at once are refused, and nothing is reset.
  v1::CreateResponse other;
  ASSERT_TRUE(CreateBuiltin("box_stack", 1, 0, &other).ok());
  v1::StepResponse stepped;
  ASSERT_TRUE(StepIds({other.instance_ids(0)}, {}, 0, &stepped, 10).ok());
  const std::string before = GetState(other.instance_ids(0));
  v1::ResetRequest mixed;
  mixed.mutable_instances()->add_instance_ids(created.instance_ids(0));
  mixed.mutable_instances()->add_instance_ids(other.instance_ids(0));
  mixed.add_observations(v1::OBSERVATION_QPOS);
  EXPECT_EQ(stub_->Reset(Context().get(), mixed, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(GetState(other.instance_ids(0)), before);
}

// Keyframes (issue 44): Create starts a group at one of its scene's keyframes, every reset that
// names none returns to it (Reset, Step's reset_mask), and a Reset may name another for that call
// alone; each state is MuJoCo's mj_resetDataKeyframe's, exactly. Unknown ones change nothing.
TEST_F(ServiceTest, CreateAndResetReachAScenesKeyframeAsMujocoDoes) {
  const std::string scene = R"(<mujoco><worldbody><geom type="plane" size="5 5 0.1"/>
    <body name="cart" pos="0 0 0.2"><joint name="x" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
    <body name="pole" pos="0 0 1"><joint name="h" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.5" size="0.05" mass="0.5"/></body></worldbody>
    <actuator><motor joint="x" gear="10"/></actuator>
    <keyframe><key name="home" time="1.5" qpos="0.3 0.4" qvel="0.1 -0.2" ctrl="0.25"/>
      <key qpos="-0.2 0.1"/></keyframe></mujoco>)";
  testing::OracleScene oracle(testing::WriteTempScene("keyframes.xml", scene));
  ASSERT_TRUE(oracle.ok());
  const mjModel* mj = oracle.mj_model();
  // qpos, qvel, time and ctrl: MuJoCo's at keyframe `key`, and the service's for instance k.
  auto mujoco = [&](int key) {
    mjData* d = oracle.mj_data();
    mj_resetDataKeyframe(mj, d, key);
    std::vector<double> state(d->qpos, d->qpos + mj->nq);
    state.insert(state.end(), d->qvel, d->qvel + mj->nv);
    state.push_back(d->time);
    state.insert(state.end(), d->ctrl, d->ctrl + mj->nu);
    return state;
  };
  auto served = [&](const google::protobuf::Map<std::string, v1::Tensor>& observations, int k) {
    std::vector<double> state;
    for (const auto& [name, per] : std::vector<std::pair<std::string, int>>{
             {"qpos", mj->nq}, {"qvel", mj->nv}, {"time", 1}, {"ctrl", mj->nu}}) {
      const std::vector<double> values = Doubles(observations.at(name));
      state.insert(state.end(), values.begin() + k * per, values.begin() + (k + 1) * per);
    }
    return state;
  };
  auto observe = [](auto* request) {
    for (const auto kind : {v1::OBSERVATION_QPOS, v1::OBSERVATION_QVEL, v1::OBSERVATION_TIME,
                            v1::OBSERVATION_ACTUATOR_STATE}) {
      request->add_observations(kind);
    }
  };

  v1::CreateRequest create;
  create.mutable_scene()->mutable_text()->set_text(scene);
  create.mutable_scene()->mutable_text()->set_filename("keyframes.xml");
  create.set_count(2);
  create.set_keyframe_name("home");
  v1::CreateResponse created;
  ASSERT_TRUE(stub_->Create(Context().get(), create, &created).ok());
  // Create's state, read back through GetState.
  Data restored(oracle.model());
  std::string error;
  ASSERT_TRUE(
      RestoreStateSnapshot(oracle.model(), GetState(created.instance_ids(1)), restored, &error))
      << error;
  const std::vector<double> home = mujoco(0);
  EXPECT_EQ(std::vector<double>(restored.qpos.begin(), restored.qpos.begin() + mj->nq),
            std::vector<double>(home.begin(), home.begin() + mj->nq));
  EXPECT_EQ(restored.time, 1.5);

  // Reset naming none returns to Create's keyframe; naming index 1, to that one.
  v1::ResetRequest reset;
  reset.mutable_instances()->set_group_id(created.group_id());
  observe(&reset);
  v1::ResetResponse reset_response;
  ASSERT_TRUE(stub_->Reset(Context().get(), reset, &reset_response).ok());
  for (int k = 0; k < 2; ++k) EXPECT_EQ(served(reset_response.observations(), k), home);
  reset.set_keyframe_index(1);
  ASSERT_TRUE(stub_->Reset(Context().get(), reset, &reset_response).ok());
  for (int k = 0; k < 2; ++k) EXPECT_EQ(served(reset_response.observations(), k), mujoco(1));

  // Step's masked resets return to Create's keyframe, not to the last Reset's.
  v1::StepRequest step;
  step.mutable_instances()->set_group_id(created.group_id());
  step.add_reset_mask(true);
  step.add_reset_mask(true);
  observe(&step);
  v1::StepResponse stepped;
  ASSERT_TRUE(stub_->Step(Context().get(), step, &stepped).ok());
  for (int k = 0; k < 2; ++k) EXPECT_EQ(served(stepped.observations(), k), home);

  // Unknown keyframes: nothing is created or reset, and the scene's keyframes are named.
  create.set_keyframe_name("away");
  v1::CreateResponse refused;
  grpc::Status status = stub_->Create(Context().get(), create, &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "no keyframe is named 'away'; the scene's keyframes: 0 'home', 1 (unnamed); nothing "
            "was created");
  const std::string before = GetState(created.instance_ids(0));
  reset.set_keyframe_index(2);
  status = stub_->Reset(Context().get(), reset, &reset_response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr(": keyframe index 2 is out of range; the scene's keyframes: 0 'home', 1 "
                        "(unnamed); nothing was reset"));
  EXPECT_EQ(GetState(created.instance_ids(0)), before);
}

TEST_F(ServiceTest, BadInputGetsActionableStatusesAndLeavesOtherInstancesAlone) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("quadruped_drop_8", 2, 1, &created).ok());
  const std::vector<std::uint64_t> ids(created.instance_ids().begin(),
                                       created.instance_ids().end());
  const int nu = static_cast<int>(created.specs().nu());
  const std::string before0 = GetState(ids[0]), before1 = GetState(ids[1]);

  v1::CreateResponse bad_scene;
  const grpc::Status malformed = CreateText("<mujoco>\n<worldbody>\n<bogus/>\n", 1, &bad_scene);
  EXPECT_EQ(malformed.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(malformed.error_message(), HasSubstr("motor.xml"));

  v1::CreateResponse unknown;
  EXPECT_EQ(CreateBuiltin("no_such_scene", 1, 0, &unknown).error_code(),
            grpc::StatusCode::NOT_FOUND);

  v1::StepResponse response;
  EXPECT_EQ(StepIds({ids[0], 999999}, ActionsFor(2, nu, 0), nu, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
  const grpc::Status wrong_size = StepIds(ids, ActionsFor(1, nu, 0), nu, &response);
  EXPECT_EQ(wrong_size.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(wrong_size.error_message(), HasSubstr("shape"));
  std::vector<double> nan_actions = ActionsFor(2, nu, 0);
  nan_actions[nu + 3] = std::numeric_limits<double>::quiet_NaN();
  const grpc::Status nan = StepIds(ids, nan_actions, nu, &response);
  EXPECT_EQ(nan.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(nan.error_message(), HasSubstr("[1, 3]"));
  EXPECT_EQ(StepIds({ids[0], ids[0]}, {}, nu, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(GetState(ids[0]), before0) << "refused batches change nothing";
  EXPECT_EQ(GetState(ids[1]), before1);

  // A diverged instance refuses Step until Reset; its neighbour in the batch is unaffected.
  v1::CreateResponse motors;
  ASSERT_TRUE(CreateText(kMotorScene, 2, &motors).ok());
  const std::vector<std::uint64_t> carts(motors.instance_ids().begin(),
                                         motors.instance_ids().end());
  ASSERT_TRUE(StepIds(carts, {1e308, 0.0}, 1, &response, 3).ok());
  EXPECT_EQ(response.status(0), v1::INSTANCE_STATUS_DIVERGED);
  EXPECT_EQ(response.status(1), v1::INSTANCE_STATUS_OK);
  EXPECT_EQ(StepIds({carts[0]}, {0.0}, 1, &response).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(StepIds({carts[1]}, {0.0}, 1, &response).ok());
  v1::ResetRequest reset;
  reset.mutable_instances()->add_instance_ids(carts[0]);
  v1::ResetResponse reset_response;
  ASSERT_TRUE(stub_->Reset(Context().get(), reset, &reset_response).ok());
  EXPECT_TRUE(StepIds({carts[0]}, {0.0}, 1, &response).ok());
}

// A free box in the air (no floor) and its weight.
const char* kFloatingBoxScene = R"(<mujoco><worldbody>
  <body name="box" pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.2 0.1" mass="2.5"/></body>
  </worldbody></mujoco>)";

// [batch, nbody, 6] float64 forces with `wrench` (force, torque) on body 1 of every instance
// listed in `on`, zero elsewhere.
v1::Tensor ForcesTensor(int batch, int nbody, const std::vector<int>& on, const Vec6& wrench) {
  std::vector<double> values(static_cast<size_t>(batch) * nbody * 6, 0.0);
  for (const int k : on) {
    for (int i = 0; i < 6; ++i) values[(static_cast<size_t>(k) * nbody + 1) * 6 + i] = wrench[i];
  }
  v1::Tensor tensor;
  tensor.set_dtype(v1::DTYPE_FLOAT64);
  tensor.add_shape(batch);
  tensor.add_shape(nbody);
  tensor.add_shape(6);
  tensor.set_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double)));
  return tensor;
}

// Step's external forces are the engine's xfrc_applied for that call's substeps: a force equal
// and opposite to the box's weight holds it where it is, bit for bit as in process; the next call
// without forces lets it fall, and the forces leave no trace in the state.
TEST_F(ServiceTest, ExternalForcesHoldAFreeBodyAgainstGravityForOneCall) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateText(kFloatingBoxScene, 2, &created).ok());
  const std::vector<std::uint64_t> ids(created.instance_ids().begin(),
                                       created.instance_ids().end());
  const auto model = ImportModelFromString(kFloatingBoxScene).model;
  const int nbody = static_cast<int>(created.specs().nbody());
  ASSERT_EQ(nbody, model->nbody);
  ASSERT_EQ(created.specs().body_names(1), "box");
  Vec6 weight = Vec6::Zero();
  weight.head<3>() = -model->body_mass[1] * model->gravity;

  v1::StepRequest request;
  for (const auto id : ids) request.mutable_instances()->add_instance_ids(id);
  request.set_substeps(100);
  request.add_observations(v1::OBSERVATION_QPOS);
  request.add_observations(v1::OBSERVATION_QVEL);
  *request.mutable_external_forces() = ForcesTensor(2, nbody, {0}, weight);  // instance 0 only
  v1::StepResponse response;
  for (int call = 0; call < 3; ++call) {
    ASSERT_TRUE(stub_->Step(Context().get(), request, &response).ok());
  }
  Data held(*model), fallen(*model);
  held.xfrc_applied[1] = weight;
  for (int n = 0; n < 300; ++n) {
    ASSERT_EQ(Step(*model, held), StepStatus::kOk);
    ASSERT_EQ(Step(*model, fallen), StepStatus::kOk);
  }
  const std::vector<double> qpos = Doubles(response.observations().at("qpos"));
  const std::vector<double> qvel = Doubles(response.observations().at("qvel"));
  ASSERT_EQ(qpos.size(), static_cast<size_t>(2 * model->nq));
  EXPECT_EQ(0, std::memcmp(qpos.data(), held.qpos.data(), model->nq * sizeof(double)));
  EXPECT_EQ(0,
            std::memcmp(qpos.data() + model->nq, fallen.qpos.data(), model->nq * sizeof(double)));
  EXPECT_NEAR(qpos[2], 1.0, 1e-12) << "held";
  for (int i = 0; i < model->nv; ++i) EXPECT_NEAR(qvel[i], 0.0, 1e-12) << i;
  EXPECT_LT(qpos[model->nq + 2], 0.0) << "the other box fell";

  // The forces were this call's: the state holds none, and the next call lets the box fall.
  held.xfrc_applied[1].setZero();
  EXPECT_EQ(GetState(ids[0]), SaveStateSnapshot(*model, held));
  ASSERT_TRUE(StepIds({ids[0]}, {}, 0, &response).ok());
  ASSERT_EQ(Step(*model, held), StepStatus::kOk);
  EXPECT_EQ(0, std::memcmp(Doubles(response.observations().at("qvel")).data(), held.qvel.data(),
                           model->nv * sizeof(double)));
  EXPECT_LT(held.qvel[2], 0.0);

  // float32 forces, through StepStream (the same StepRequest): the box is held again.
  request.clear_instances();
  request.mutable_instances()->add_instance_ids(ids[0]);
  request.set_substeps(10);
  const float weight32[6] = {0.0f, 0.0f, static_cast<float>(weight[2]), 0.0f, 0.0f, 0.0f};
  std::vector<float> values(static_cast<size_t>(nbody) * 6, 0.0f);
  std::copy_n(weight32, 6, values.begin() + 6);
  v1::Tensor* single = request.mutable_external_forces();
  single->Clear();
  single->set_dtype(v1::DTYPE_FLOAT32);
  single->add_shape(1);
  single->add_shape(nbody);
  single->add_shape(6);
  single->set_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  held.xfrc_applied[1].setZero();
  held.xfrc_applied[1][2] = static_cast<double>(weight32[2]);
  grpc::ClientContext context;
  auto stream = stub_->StepStream(&context);
  ASSERT_TRUE(stream->Write(request));
  ASSERT_TRUE(stream->Write(request));
  stream->WritesDone();
  int replies = 0;
  while (stream->Read(&response)) ++replies;
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(replies, 2);
  for (int n = 0; n < 20; ++n) ASSERT_EQ(Step(*model, held), StepStatus::kOk);
  EXPECT_EQ(0, std::memcmp(Doubles(response.observations().at("qvel")).data(), held.qvel.data(),
                           model->nv * sizeof(double)));
}

// A state saved in process with forces set is restored without them (SetStateRequest).
TEST_F(ServiceTest, SetStateDropsTheForcesOfAStateSavedInProcess) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateText(kFloatingBoxScene, 1, &created).ok());
  const auto model = ImportModelFromString(kFloatingBoxScene).model;
  Data local(*model);
  local.xfrc_applied[1] << 0, 0, 100, 0, 0, 0;
  ASSERT_EQ(Step(*model, local), StepStatus::kOk);
  v1::SetStateRequest set;
  set.set_instance_id(created.instance_ids(0));
  set.set_state(SaveStateSnapshot(*model, local));
  v1::SetStateResponse set_response;
  ASSERT_TRUE(stub_->SetState(Context().get(), set, &set_response).ok());
  local.xfrc_applied[1].setZero();
  EXPECT_EQ(GetState(created.instance_ids(0)), SaveStateSnapshot(*model, local));
}

// Bad external forces are INVALID_ARGUMENT naming the problem, and move nothing: neither the
// instances nor the controls of a valid actions tensor in the same request.
TEST_F(ServiceTest, BadExternalForcesAreRefusedAndChangeNothing) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateText(kMotorScene, 2, &created).ok());
  const std::vector<std::uint64_t> ids(created.instance_ids().begin(),
                                       created.instance_ids().end());
  const int nbody = static_cast<int>(created.specs().nbody());
  const std::string before0 = GetState(ids[0]), before1 = GetState(ids[1]);
  Vec6 push;
  push << 1, 0, 0, 0, 0, 0;
  auto refused = [&](const v1::Tensor& forces, const std::string& message) {
    SCOPED_TRACE(message);
    v1::StepRequest request;
    for (const auto id : ids) request.mutable_instances()->add_instance_ids(id);
    const double actions[2] = {0.5, -0.5};
    request.mutable_actions()->set_dtype(v1::DTYPE_FLOAT64);
    request.mutable_actions()->add_shape(2);
    request.mutable_actions()->add_shape(1);
    request.mutable_actions()->set_data(
        std::string(reinterpret_cast<const char*>(actions), sizeof actions));
    *request.mutable_external_forces() = forces;
    v1::StepResponse response;
    const grpc::Status status = stub_->Step(Context().get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr(message));
    EXPECT_EQ(GetState(ids[0]), before0) << "refused batches change nothing, ctrl included";
    EXPECT_EQ(GetState(ids[1]), before1);
  };
  refused(ForcesTensor(1, nbody, {0}, push), "external_forces have shape [1, 2, 6]");
  refused(ForcesTensor(2, nbody + 1, {0}, push), "this batch needs [2, 2, 6]");
  v1::Tensor flat = ForcesTensor(2, nbody, {0}, push);
  flat.clear_shape();
  flat.add_shape(2);
  flat.add_shape(nbody * 6);
  refused(flat, "have shape [2, 12]");
  v1::Tensor short_data = ForcesTensor(2, nbody, {0}, push);
  short_data.mutable_data()->resize(short_data.data().size() - 8);
  refused(short_data, "bytes");
  v1::Tensor integers = ForcesTensor(2, nbody, {0}, push);
  integers.set_dtype(v1::DTYPE_INT32);
  refused(integers, "float32 or float64");
  Vec6 nan = push;
  nan[4] = std::numeric_limits<double>::quiet_NaN();
  refused(ForcesTensor(2, nbody, {1}, nan), "external force [1, 1, 4] (body 'cart')");
  Vec6 inf = push;
  inf[0] = std::numeric_limits<double>::infinity();
  refused(ForcesTensor(2, nbody, {0}, inf), "is not finite");
}

TEST_F(ServiceTest, TheInstanceLimitIsResourceExhaustedAndCreatesNothing) {
  v1::ListResponse before;
  ASSERT_TRUE(stub_->List(Context().get(), v1::ListRequest(), &before).ok());
  v1::CreateResponse created;
  const grpc::Status status = CreateBuiltin("box_stack", 65, 0, &created);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("limit"));
  v1::ListResponse after;
  ASSERT_TRUE(stub_->List(Context().get(), v1::ListRequest(), &after).ok());
  EXPECT_EQ(after.instances_size(), before.instances_size());
}

// Several clients step disjoint and overlapping instance sets at once. Calls on one instance
// serialize, so each instance ends with exactly the steps it was sent, and (zero actions) the
// state of an instance stepped that often in process.
TEST_F(ServiceTest, ConcurrentClientsOnOverlappingInstancesSerializePerInstance) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("box_stack", 4, 0, &created).ok());
  const std::vector<std::uint64_t> ids(created.instance_ids().begin(),
                                       created.instance_ids().end());
  // Client c steps {ids[c], ids[(c + 1) % 4]} ten times: every instance gets 20 steps.
  std::vector<std::thread> clients;
  std::atomic<int> failures{0};
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      auto stub = v1::Simulator::NewStub(channel_);
      for (int n = 0; n < 10; ++n) {
        v1::StepRequest request;
        request.mutable_instances()->add_instance_ids(ids[c]);
        request.mutable_instances()->add_instance_ids(ids[(c + 1) % 4]);
        v1::StepResponse response;
        grpc::ClientContext context;
        if (!stub->Step(&context, request, &response).ok()) ++failures;
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(failures.load(), 0);
  const auto model = ImportModelFromFile(kScenes + "box_stack.xml").model;
  v1::ListResponse list;
  ASSERT_TRUE(stub_->List(Context().get(), v1::ListRequest(), &list).ok());
  for (const auto id : ids) {
    for (const auto& info : list.instances()) {
      if (info.instance_id() == id) {
        EXPECT_EQ(info.steps(), 20u) << "instance " << id;
      }
    }
    v1::StepResponse response;
    ASSERT_TRUE(StepIds({id}, {}, 0, &response).ok());  // one more, to read qpos: 21 in all
    Data check(*model);
    for (int n = 0; n < 21; ++n) Step(*model, check);
    const std::vector<double> qpos = Doubles(response.observations().at("qpos"));
    EXPECT_EQ(0, std::memcmp(qpos.data(), check.qpos.data(), model->nq * sizeof(double)))
        << "instance " << id;
  }
}

TEST_F(ServiceTest, StepStreamAnswersPipelinedRequestsInOrderAndEndsOnAnError) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("box_incline", 1, 0, &created).ok());
  const std::uint64_t id = created.instance_ids(0);
  grpc::ClientContext context;
  auto stream = stub_->StepStream(&context);
  for (int n = 0; n < 12; ++n) {  // all written before any reply is read
    v1::StepRequest request;
    request.mutable_instances()->add_instance_ids(id);
    request.add_observations(v1::OBSERVATION_TIME);
    ASSERT_TRUE(stream->Write(request));
  }
  v1::StepRequest bad;
  bad.mutable_instances()->add_instance_ids(987654);
  ASSERT_TRUE(stream->Write(bad));
  stream->WritesDone();
  v1::StepResponse response;
  double previous = 0;
  int replies = 0;
  while (stream->Read(&response)) {
    const double time = Doubles(response.observations().at("time"))[0];
    EXPECT_GT(time, previous) << "in request order";
    previous = time;
    ++replies;
  }
  EXPECT_EQ(replies, 12);
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NEAR(previous, 12 * created.specs().timestep(), 1e-12);
}

TEST_F(ServiceTest, StreamStatesKeepsTheRateAndDropsFramesForASlowConsumer) {
  if (kUnderTsan) {
    GTEST_SKIP() << "frame rates are not measurable under ThreadSanitizer's tenfold slowdown";
  }
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("22_humanoids", 1, 0, &created).ok());
  {  // a fast reader gets about rate x duration frames and no drops
    v1::StreamStatesRequest request;
    request.mutable_instances()->add_instance_ids(created.instance_ids(0));
    request.set_rate_hz(50);
    grpc::ClientContext context;
    auto reader = stub_->StreamStates(&context, request);
    v1::StateFrame frame;
    const auto start = std::chrono::steady_clock::now();
    int frames = 0;
    std::uint64_t dropped = 0;
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(600) &&
           reader->Read(&frame)) {
      ++frames;
      dropped += frame.dropped();
      EXPECT_EQ(frame.sequence(), static_cast<std::uint64_t>(frames));
      EXPECT_EQ(frame.observations().at("qpos").shape(0), 1);
    }
    context.TryCancel();
    EXPECT_GE(frames, 20);  // 0.6 s at 50 Hz = 30 (+1 at t = 0)
    EXPECT_LE(frames, 40);
    EXPECT_EQ(dropped, 0u);
    reader->Finish();
  }
  {  // a reader that sleeps 100 ms per frame at 200 Hz: large frames fill the flow-control
     // window, then frames are dropped, counted, and the ones that come are recent
    v1::StreamStatesRequest request;
    request.mutable_instances()->add_instance_ids(created.instance_ids(0));
    request.set_rate_hz(200);
    request.add_observations(v1::OBSERVATION_BODY_POSES);
    // A viewer's channel: no bandwidth probing and a small read-ahead, so the transport holds a
    // few frames, not megabytes of stale ones (see StreamStates in the proto).
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 65536);
    auto viewer = v1::Simulator::NewStub(grpc::CreateCustomChannel(
        server_->grpc_address(), grpc::InsecureChannelCredentials(), args));
    grpc::ClientContext context;
    auto reader = viewer->StreamStates(&context, request);
    v1::StateFrame frame;
    std::uint64_t dropped = 0;
    double last_server_time = 0;
    for (int n = 0; n < 12 && reader->Read(&frame); ++n) {
      dropped += frame.dropped();
      last_server_time = frame.server_time();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    context.TryCancel();
    reader->Finish();
    EXPECT_GT(dropped, 50u) << "about 20 frames are due per 100 ms and only one is taken";
    EXPECT_GT(last_server_time, 0.5);
  }
  const auto metrics = testing::HttpGet(server_->metrics_url());
  ASSERT_EQ(metrics.status, 200) << metrics.error;
  EXPECT_THAT(metrics.body, ContainsRegex("alsim_stream_frames_dropped_total [1-9]"));
}

// A long Step of one group stalls neither another group's stream nor List.
TEST_F(ServiceTest, ALongStepStallsNeitherOtherStreamsNorList) {
  v1::CreateResponse watched, busy;
  ASSERT_TRUE(CreateBuiltin("box_stack", 1, 0, &watched).ok());
  ASSERT_TRUE(CreateBuiltin("quadruped_drop_27", 1, 0, &busy).ok());
  // A stream of the busy instance, open before the long step starts: its frames are skipped
  // while the step runs, without holding up the other stream.
  v1::StreamStatesRequest busy_request;
  busy_request.mutable_instances()->add_instance_ids(busy.instance_ids(0));
  busy_request.set_rate_hz(50);
  grpc::ClientContext busy_context;
  auto busy_reader = stub_->StreamStates(&busy_context, busy_request);
  v1::StateFrame busy_frame;
  ASSERT_TRUE(busy_reader->Read(&busy_frame));
  std::atomic<bool> stepping_done{false};
  std::thread stepper([&] {
    v1::StepResponse response;
    EXPECT_TRUE(
        StepIds({busy.instance_ids(0)}, {}, 0, &response, kUnderTsan || kUnderAsan ? 300 : 3000)
            .ok());
    stepping_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the long step has started
  v1::StreamStatesRequest request;
  request.mutable_instances()->add_instance_ids(watched.instance_ids(0));
  request.set_rate_hz(50);
  grpc::ClientContext context;
  auto reader = stub_->StreamStates(&context, request);
  v1::StateFrame frame;
  int frames = 0;
  while (frames < 10 && reader->Read(&frame)) ++frames;
  v1::ListResponse list;
  ASSERT_TRUE(stub_->List(Context().get(), v1::ListRequest(), &list).ok());
  const bool overlapped = !stepping_done;
  context.TryCancel();
  reader->Finish();
  stepper.join();
  busy_context.TryCancel();
  busy_reader->Finish();
  EXPECT_EQ(frames, 10);
  EXPECT_TRUE(overlapped) << "the long call should outlast 10 frames at 50 Hz; the test did "
                             "not exercise the overlap";
  v1::StepRequest too_many;
  too_many.mutable_instances()->add_instance_ids(watched.instance_ids(0));
  too_many.set_substeps(4000000000u);
  v1::StepResponse response;
  EXPECT_EQ(stub_->Step(Context().get(), too_many, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// A scene without actuators: no actions, and the actuator observations are [K, 0].
TEST_F(ServiceTest, ASceneWithoutActuatorsStepsAndReportsEmptyActuatorState) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("box_stack", 2, 0, &created).ok());
  ASSERT_EQ(created.specs().nu(), 0u);
  v1::StepRequest request;
  request.mutable_instances()->set_group_id(created.group_id());
  request.add_observations(v1::OBSERVATION_ACTUATOR_STATE);
  request.add_observations(v1::OBSERVATION_CONTACT_SUMMARY);
  v1::StepResponse response;
  ASSERT_TRUE(stub_->Step(Context().get(), request, &response).ok());
  const v1::Tensor& ctrl = response.observations().at("ctrl");
  ASSERT_EQ(ctrl.shape_size(), 2);
  EXPECT_EQ(ctrl.shape(0), 2);
  EXPECT_EQ(ctrl.shape(1), 0);
  EXPECT_TRUE(ctrl.data().empty());
  EXPECT_EQ(response.observations().at("contact_count").shape(0), 2);
  // Actions of shape [2, 0] are this scene's: accepted, in either dtype (they used to reach a
  // memcpy into the empty ctrl's null data, which UBSan reports; found by step_fuzzer).
  for (const v1::DType dtype : {v1::DTYPE_FLOAT64, v1::DTYPE_FLOAT32}) {
    request.mutable_actions()->set_dtype(dtype);
    request.mutable_actions()->clear_shape();
    request.mutable_actions()->add_shape(2);
    request.mutable_actions()->add_shape(0);
    ASSERT_TRUE(stub_->Step(Context().get(), request, &response).ok());
  }
}

TEST_F(ServiceTest, MetricsSeriesExistAndMove) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("box_stack", 1, 0, &created).ok());
  v1::StepResponse response;
  ASSERT_TRUE(StepIds({created.instance_ids(0)}, {}, 0, &response, 5).ok());
  v1::StepResponse unused;
  StepIds({424242}, {}, 0, &unused);  // a NOT_FOUND for the code label
  const auto scrape = testing::HttpGet(server_->metrics_url());
  ASSERT_EQ(scrape.status, 200) << scrape.error;
  const std::string& body = scrape.body;
  for (const char* series :
       {"grpc_server_started_total", "grpc_server_handled_total", "grpc_server_handling_seconds",
        "alsim_step_duration_seconds", "alsim_solver_iterations", "alsim_solver_residual",
        "alsim_contacts", "alsim_islands", "alsim_instances", "alsim_steps_total",
        "alsim_stream_frames_dropped_total", "alsim_build_info"}) {
    EXPECT_THAT(body, HasSubstr(std::string("# TYPE ") + series)) << series;
  }
  EXPECT_THAT(body, ContainsRegex("grpc_server_handled_total\\{[^}]*grpc_code=\"NotFound\"[^}]*"
                                  "grpc_method=\"Step\""));
  EXPECT_THAT(body, ContainsRegex("alsim_steps_total [1-9]"));
  EXPECT_THAT(body, ContainsRegex("alsim_step_duration_seconds_count [1-9]"));
  EXPECT_THAT(body, ContainsRegex("alsim_instances [1-9]"));
}

// Destroys every instance of group `group_id` on the suite's server.
void DestroyGroup(v1::Simulator::Stub* stub, std::uint64_t group_id) {
  v1::DestroyRequest destroy;
  destroy.mutable_instances()->set_group_id(group_id);
  v1::DestroyResponse destroyed;
  grpc::ClientContext context;
  EXPECT_TRUE(stub->Destroy(&context, destroy, &destroyed).ok());
}

// The value of the unlabelled series `name` in a Prometheus text exposition; NaN when absent.
double SeriesValue(const std::string& body, const std::string& name) {
  std::istringstream lines(body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, name.size() + 1, name + " ") == 0) {
      return std::strtod(line.c_str() + name.size() + 1, nullptr);
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// This process's CPU time (user + system, s) as getrusage reports it: the server runs in this
// process, so its process_cpu_seconds_total must lie between two such readings.
double RusageCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

TEST_F(ServiceTest, ProcessSeriesAgreeWithGetrusage) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("box_stack", 4, 0, &created).ok());
  const std::vector<std::uint64_t> ids(created.instance_ids().begin(),
                                       created.instance_ids().end());
  v1::StepResponse response;
  ASSERT_TRUE(StepIds(ids, {}, 0, &response, 200).ok());
  v1::ServerInfoResponse info;
  ASSERT_TRUE(stub_->ServerInfo(Context().get(), v1::ServerInfoRequest(), &info).ok());
  const double cpu_before = RusageCpuSeconds();
  const auto scrape = testing::HttpGet(server_->metrics_url());
  const double cpu_after = RusageCpuSeconds();
  ASSERT_EQ(scrape.status, 200) << scrape.error;
  const std::string& body = scrape.body;
  EXPECT_THAT(body, HasSubstr("# TYPE process_cpu_seconds_total counter"));
  EXPECT_THAT(body, HasSubstr("# TYPE process_start_time_seconds gauge"));
  EXPECT_THAT(body, HasSubstr("# TYPE process_resident_memory_bytes gauge"));

  // /proc counts whole clock ticks (1/100 s) in user and system time each, getrusage microseconds.
  const double cpu = SeriesValue(body, "process_cpu_seconds_total");
  EXPECT_GT(cpu, 0.0);
  EXPECT_GE(cpu, cpu_before - 0.021);
  EXPECT_LE(cpu, cpu_after + 0.001);

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double resident = SeriesValue(body, "process_resident_memory_bytes");
  EXPECT_GT(resident, 1e6);
  // Not above the peak resident size getrusage reports, up to the kernel's per-CPU batching of
  // its resident-page counters (a few hundred kB seen).
  EXPECT_LE(resident, static_cast<double>(usage.ru_maxrss) * 1024.0 * 1.05) << "above the peak";
  EXPECT_GE(SeriesValue(body, "process_virtual_memory_bytes"), resident);

  // The process started before the server did (ServerInfo's uptime), and not in the future.
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double start = SeriesValue(body, "process_start_time_seconds");
  EXPECT_LE(start, now - info.uptime_seconds() + 1.0);
  EXPECT_GT(start, now - 24 * 3600.0);
  DestroyGroup(stub_.get(), created.group_id());
}

TEST_F(ServiceTest, InstancesLimitAndDivergedSeries) {
  const auto before = testing::HttpGet(server_->metrics_url());
  ASSERT_EQ(before.status, 200) << before.error;
  EXPECT_EQ(SeriesValue(before.body, "alsim_instances_limit"), 64.0) << "--max-instances";
  const double diverged_before = SeriesValue(before.body, "alsim_instances_diverged_total");
  ASSERT_FALSE(std::isnan(diverged_before)) << before.body;

  // One of two carts diverges; the refused Step that follows counts nothing more.
  v1::CreateResponse motors;
  ASSERT_TRUE(CreateText(kMotorScene, 2, &motors).ok());
  const std::vector<std::uint64_t> carts(motors.instance_ids().begin(),
                                         motors.instance_ids().end());
  v1::StepResponse response;
  ASSERT_TRUE(StepIds(carts, {1e308, 0.0}, 1, &response, 3).ok());
  ASSERT_EQ(response.status(0), v1::INSTANCE_STATUS_DIVERGED);
  ASSERT_EQ(response.status(1), v1::INSTANCE_STATUS_OK);
  EXPECT_EQ(StepIds({carts[0]}, {0.0}, 1, &response).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  const auto after = testing::HttpGet(server_->metrics_url());
  ASSERT_EQ(after.status, 200) << after.error;
  EXPECT_EQ(SeriesValue(after.body, "alsim_instances_diverged_total"), diverged_before + 1);
  EXPECT_EQ(SeriesValue(after.body, "alsim_instances_limit"), 64.0);
  DestroyGroup(stub_.get(), motors.group_id());
}

// GetScene against libmujoco's own compile of the same file (an independent oracle): every body,
// geom (type, body, size, local pose, colour, group, mesh) and mesh (vertices, faces, name).
void ExpectSceneMatchesMujoco(const v1::GetSceneResponse& scene, const mjModel* m) {
  ASSERT_EQ(scene.body_names_size(), m->nbody);
  for (int b = 0; b < m->nbody; ++b) {
    EXPECT_EQ(scene.body_names(b), std::string(m->names + m->name_bodyadr[b])) << "body " << b;
    EXPECT_EQ(scene.body_parent(b), b == 0 ? -1 : m->body_parentid[b]) << "body " << b;
  }
  ASSERT_EQ(scene.geoms_size(), m->ngeom);
  int planes = 0;
  for (int g = 0; g < m->ngeom; ++g) {
    const v1::SceneGeom& geom = scene.geoms(g);
    SCOPED_TRACE("geom " + std::to_string(g) + " '" + geom.name() + "'");
    EXPECT_EQ(geom.name(), std::string(m->names + m->name_geomadr[g]));
    EXPECT_EQ(static_cast<int>(geom.type()), m->geom_type[g] + 1);
    EXPECT_EQ(static_cast<int>(geom.body()), m->geom_bodyid[g]);
    ASSERT_EQ(geom.size_size(), 3);
    ASSERT_EQ(geom.pos_size(), 3);
    ASSERT_EQ(geom.quat_size(), 4);
    ASSERT_EQ(geom.rgba_size(), 4);
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(geom.size(i), m->geom_size[3 * g + i], 1e-12);
      EXPECT_NEAR(geom.pos(i), m->geom_pos[3 * g + i], 1e-12);
    }
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(geom.quat(i), m->geom_quat[4 * g + i], 1e-12);
    const int material = m->geom_matid[g];
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(geom.rgba(i),
                material >= 0 ? m->mat_rgba[4 * material + i] : m->geom_rgba[4 * g + i]);
    }
    EXPECT_EQ(geom.group(), m->geom_group[g]);
    EXPECT_EQ(geom.mesh(), m->geom_type[g] == mjGEOM_MESH ? m->geom_dataid[g] : -1);
    EXPECT_EQ(geom.collides(), m->geom_contype[g] != 0 || m->geom_conaffinity[g] != 0);
    if (geom.type() == v1::GEOM_TYPE_PLANE) {
      ++planes;
      EXPECT_EQ(geom.body(), 0u) << "the floor belongs to the world";
    }
  }
  EXPECT_EQ(planes, 1) << "both scenes have one floor";
  ASSERT_EQ(scene.meshes_size(), m->nmesh);
  for (int k = 0; k < m->nmesh; ++k) {
    const v1::SceneMesh& mesh = scene.meshes(k);
    SCOPED_TRACE("mesh " + std::to_string(k));
    EXPECT_EQ(mesh.name(), std::string(m->names + m->name_meshadr[k]));
    ASSERT_EQ(mesh.vertices_size(), 3 * m->mesh_vertnum[k]);
    ASSERT_EQ(mesh.faces_size(), 3 * m->mesh_facenum[k]);
    for (int i = 0; i < mesh.vertices_size(); ++i) {
      ASSERT_EQ(mesh.vertices(i), m->mesh_vert[3 * m->mesh_vertadr[k] + i]) << "coordinate " << i;
    }
    for (int i = 0; i < mesh.faces_size(); ++i) {
      ASSERT_EQ(static_cast<int>(mesh.faces(i)), m->mesh_face[3 * m->mesh_faceadr[k] + i])
          << "face index " << i;
    }
  }
  EXPECT_DOUBLE_EQ(scene.timestep(), m->opt.timestep);
  ASSERT_EQ(scene.gravity_size(), 3);
  EXPECT_DOUBLE_EQ(scene.gravity(2), m->opt.gravity[2]);
}

TEST_F(ServiceTest, GetSceneReturnsTheHumanoidsGeometryAsMujocoCompilesIt) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("humanoid", 2, 0, &created).ok());
  v1::GetSceneRequest request;
  request.set_instance_id(created.instance_ids(1));
  v1::GetSceneResponse scene;
  ASSERT_TRUE(stub_->GetScene(Context().get(), request, &scene).ok());
  EXPECT_EQ(scene.scene(), "humanoid");
  EXPECT_EQ(scene.body_names_size(), static_cast<int>(created.specs().nbody()));
  testing::OracleScene oracle(testing::kMujocoSamples + "humanoid/humanoid.xml");
  ASSERT_TRUE(oracle.ok());
  ExpectSceneMatchesMujoco(scene, oracle.mj_model());
  EXPECT_EQ(scene.meshes_size(), 0);
  // The floor's grid material makes it white, the bodies keep their own colour.
  EXPECT_EQ(scene.geoms(0).type(), v1::GEOM_TYPE_PLANE);
}

TEST_F(ServiceTest, GetSceneReturnsAMeshScenesMeshesAsMujocoCompilesThem) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("mesh_humanoid", 1, 0, &created).ok());
  v1::GetSceneRequest request;
  request.set_instance_id(created.instance_ids(0));
  v1::GetSceneResponse scene;
  ASSERT_TRUE(stub_->GetScene(Context().get(), request, &scene).ok());
  testing::OracleScene oracle(std::string(ALSIM_SCENES_DIR) + "/mesh_humanoid.xml");
  ASSERT_TRUE(oracle.ok());
  ASSERT_GT(oracle.mj_model()->nmesh, 0);
  ExpectSceneMatchesMujoco(scene, oracle.mj_model());
  int mesh_geoms = 0;
  for (const v1::SceneGeom& geom : scene.geoms()) mesh_geoms += geom.type() == v1::GEOM_TYPE_MESH;
  EXPECT_GT(mesh_geoms, 0);
}

// SDF geoms (alsim's own type) come as GEOM_TYPE_SDF naming their triangulation, a mesh after
// the scene's own: the model's vertices and triangles, closed and outward (a positive volume),
// so that a viewer draws the dishes and the bolt. A concave mesh (bolt_nut's nut) stays a mesh
// geom naming its own mesh.
TEST_F(ServiceTest, GetSceneSendsSdfGeomsWithTheirTriangulations) {
  for (const auto& [name, nsdf, concave] : {std::tuple("dish_pile", 4, 0), {"bolt_nut", 1, 1}}) {
    SCOPED_TRACE(name);
    v1::CreateResponse created;
    ASSERT_TRUE(CreateBuiltin(name, 1, 0, &created).ok());
    v1::GetSceneRequest request;
    request.set_instance_id(created.instance_ids(0));
    v1::GetSceneResponse scene;
    ASSERT_TRUE(stub_->GetScene(Context().get(), request, &scene).ok());
    const auto model = ImportModelFromFile(kScenes + name + ".xml").model;
    ASSERT_NE(model, nullptr);
    ASSERT_EQ(model->nsdf, nsdf);
    ASSERT_EQ(scene.geoms_size(), model->ngeom);
    ASSERT_EQ(scene.meshes_size(), model->nmesh + model->nsdf);
    int sdf_geoms = 0, concave_geoms = 0;
    for (int g = 0; g < model->ngeom; ++g) {
      const v1::SceneGeom& geom = scene.geoms(g);
      SCOPED_TRACE("geom " + std::to_string(g) + " '" + geom.name() + "'");
      const int k = model->geom_sdf[g];
      if (k < 0) {
        EXPECT_NE(geom.type(), v1::GEOM_TYPE_SDF);
        EXPECT_EQ(geom.mesh(), model->geom_mesh[g]);
        if (model->geom_concave[g]) {
          ++concave_geoms;
          EXPECT_EQ(geom.type(), v1::GEOM_TYPE_MESH);
          ASSERT_LT(geom.mesh(), model->nmesh);
          EXPECT_EQ(scene.meshes(geom.mesh()).faces_size(),
                    3 * model->mesh_face_num[model->geom_mesh[g]]);
        }
        continue;
      }
      ++sdf_geoms;
      EXPECT_EQ(geom.type(), v1::GEOM_TYPE_SDF);
      ASSERT_EQ(geom.mesh(), model->nmesh + k);
      const v1::SceneMesh& mesh = scene.meshes(geom.mesh());
      EXPECT_EQ(mesh.name(), "sdf:" + geom.name());
      ASSERT_GT(model->sdf_face_num[k], 0);
      ASSERT_EQ(mesh.vertices_size(), 3 * model->sdf_vert_num[k]);
      ASSERT_EQ(mesh.faces_size(), 3 * model->sdf_face_num[k]);
      for (int v = 0; v < model->sdf_vert_num[k]; ++v) {
        for (int i = 0; i < 3; ++i) {
          ASSERT_EQ(mesh.vertices(3 * v + i),
                    static_cast<float>(model->sdf_vert[model->sdf_vert_adr[k] + v][i]));
        }
      }
      double volume = 0;
      for (int f = 0; f < model->sdf_face_num[k]; ++f) {
        Vec3 corner[3];
        for (int i = 0; i < 3; ++i) {
          const std::uint32_t index = mesh.faces(3 * f + i);
          ASSERT_EQ(static_cast<int>(index), model->sdf_face[model->sdf_face_adr[k] + f][i]);
          ASSERT_LT(static_cast<int>(index), model->sdf_vert_num[k]);
          corner[i] = Vec3(mesh.vertices(3 * index), mesh.vertices(3 * index + 1),
                           mesh.vertices(3 * index + 2));
        }
        volume += corner[0].dot(corner[1].cross(corner[2])) / 6;
      }
      EXPECT_GT(volume, 0) << "counter-clockwise seen from outside";
    }
    EXPECT_EQ(sdf_geoms, nsdf);
    EXPECT_EQ(concave_geoms, concave);
    DestroyGroup(stub_.get(), created.group_id());
  }
}

// Tetrahedral deformables (issue 48): a scene naming a voxel cube's companion file among its
// assets. GetScene sends the cube's name, colour and 12 n^2 surface triangles over its own
// vertices, wound outward (the divergence theorem over them gives the cube's volume), and
// OBSERVATION_DEFORMABLE_VERTICES returns its (pinned) vertices, at rest, from Step, Reset and
// StreamStates. A scene without deformables has an empty [K, 0, 3] tensor.
TEST_F(ServiceTest, DeformablesComeWithGetSceneAndTheirVerticesAsAnObservation) {
  const int n = 2;
  const double a = 0.05;
  const Vec3 offset(0.25, -0.5, 0.75);
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(n, n, n, a, a, a);
  const int nvert = static_cast<int>(grid.points.size());
  // Every vertex pinned: they stay at rest however the deformables come to be stepped.
  std::string all;
  for (int v = 0; v < nvert; ++v) all += std::to_string(v) + " ";
  v1::CreateRequest create;
  v1::SceneText* text = create.mutable_scene()->mutable_text();
  text->set_text(
      "<mujoco><custom><text name='alsim:deformables' data='soft.xml'/></custom>"
      "<worldbody><geom type='plane' size='5 5 0.1'/><body name='box' pos='1 0 0.2'><freejoint/>"
      "<geom type='box' size='.1 .1 .1'/></body></worldbody></mujoco>");
  text->set_filename("soft_cube.xml");
  (*text->mutable_assets())["soft.xml"] =
      "<deformables><deformable name='jelly' young='1e5' density='1000' rgba='0.25 0.5 0.75 "
      "0.5' pos='0.25 -0.5 0.75'>" +
      testing::TetMeshXml(grid) + "<pin vertices='" + all + "'/></deformable></deformables>";
  create.set_count(2);
  v1::CreateResponse created;
  const grpc::Status status = stub_->Create(Context().get(), create, &created);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(created.specs().nvert(), static_cast<std::uint32_t>(nvert));
  bool specified = false;
  for (const v1::TensorSpec& spec : created.specs().observations()) {
    if (spec.name() != "deformable_vertices") continue;
    specified = true;
    EXPECT_EQ(spec.dtype(), v1::DTYPE_FLOAT64);
    ASSERT_EQ(spec.shape_size(), 2);
    EXPECT_EQ(spec.shape(0), nvert);
    EXPECT_EQ(spec.shape(1), 3);
  }
  EXPECT_TRUE(specified);

  v1::GetSceneRequest scene_request;
  scene_request.set_instance_id(created.instance_ids(1));
  v1::GetSceneResponse scene;
  ASSERT_TRUE(stub_->GetScene(Context().get(), scene_request, &scene).ok());
  ASSERT_EQ(scene.deformables_size(), 1);
  const v1::SceneDeformable& jelly = scene.deformables(0);
  EXPECT_EQ(jelly.name(), "jelly");
  ASSERT_EQ(jelly.rgba_size(), 4);
  EXPECT_FLOAT_EQ(jelly.rgba(0), 0.25f);
  EXPECT_FLOAT_EQ(jelly.rgba(1), 0.5f);
  EXPECT_FLOAT_EQ(jelly.rgba(2), 0.75f);
  EXPECT_FLOAT_EQ(jelly.rgba(3), 0.5f);
  EXPECT_EQ(jelly.vertex_start(), 0u);
  EXPECT_EQ(jelly.vertex_count(), static_cast<std::uint32_t>(nvert));
  ASSERT_EQ(jelly.faces_size(), 3 * 12 * n * n);
  double enclosed = 0;
  for (int t = 0; t < jelly.faces_size() / 3; ++t) {
    Vec3 x[3];
    for (int i = 0; i < 3; ++i) {
      const std::uint32_t v = jelly.faces(3 * t + i);
      ASSERT_LT(v, static_cast<std::uint32_t>(nvert)) << "triangle " << t;
      x[i] = grid.points[v] + offset;
    }
    enclosed += x[0].dot((x[1] - x[0]).cross(x[2] - x[0])) / 6;
  }
  EXPECT_NEAR(enclosed, n * n * n * a * a * a, 1e-15) << "closed and wound outward";

  // The vertices at rest: the companion's pos plus the mesh's coordinates, in the mesh's order.
  auto expect_at_rest = [&](const v1::Tensor& tensor, int batch, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(tensor.dtype(), v1::DTYPE_FLOAT64);
    ASSERT_EQ(tensor.shape_size(), 3);
    EXPECT_EQ(tensor.shape(0), batch);
    EXPECT_EQ(tensor.shape(1), nvert);
    EXPECT_EQ(tensor.shape(2), 3);
    const std::vector<double> values = Doubles(tensor);
    ASSERT_EQ(values.size(), static_cast<std::size_t>(batch * nvert * 3));
    for (int k = 0; k < batch; ++k) {
      for (int v = 0; v < nvert; ++v) {
        for (int i = 0; i < 3; ++i) {
          EXPECT_NEAR(values[(k * nvert + v) * 3 + i], grid.points[v][i] + offset[i], 1e-15)
              << "instance " << k << " vertex " << v;
        }
      }
    }
  };
  v1::StepRequest step;
  step.mutable_instances()->set_group_id(created.group_id());
  step.set_substeps(3);
  step.add_observations(v1::OBSERVATION_DEFORMABLE_VERTICES);
  step.add_observations(v1::OBSERVATION_QPOS);
  v1::StepResponse stepped;
  ASSERT_TRUE(stub_->Step(Context().get(), step, &stepped).ok());
  expect_at_rest(stepped.observations().at("deformable_vertices"), 2, "Step");
  EXPECT_EQ(stepped.observations().at("qpos").shape(1), 7);

  v1::ResetRequest reset;
  reset.mutable_instances()->add_instance_ids(created.instance_ids(1));
  reset.add_observations(v1::OBSERVATION_DEFORMABLE_VERTICES);
  v1::ResetResponse reset_response;
  ASSERT_TRUE(stub_->Reset(Context().get(), reset, &reset_response).ok());
  expect_at_rest(reset_response.observations().at("deformable_vertices"), 1, "Reset");

  {
    v1::StreamStatesRequest request;
    request.mutable_instances()->set_group_id(created.group_id());
    request.set_rate_hz(100);
    request.add_observations(v1::OBSERVATION_DEFORMABLE_VERTICES);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto reader = stub_->StreamStates(&context, request);
    v1::StateFrame frame;
    ASSERT_TRUE(reader->Read(&frame));
    expect_at_rest(frame.observations().at("deformable_vertices"), 2, "StreamStates");
    context.TryCancel();
    reader->Finish();
  }
  DestroyGroup(stub_.get(), created.group_id());

  // Without deformables: no SceneDeformable, nvert 0 and a [K, 0, 3] tensor without bytes.
  v1::CreateResponse plain;
  ASSERT_TRUE(CreateText(kMotorScene, 1, &plain).ok());
  EXPECT_EQ(plain.specs().nvert(), 0u);
  scene_request.set_instance_id(plain.instance_ids(0));
  ASSERT_TRUE(stub_->GetScene(Context().get(), scene_request, &scene).ok());
  EXPECT_EQ(scene.deformables_size(), 0);
  step.mutable_instances()->set_group_id(plain.group_id());
  ASSERT_TRUE(stub_->Step(Context().get(), step, &stepped).ok());
  const v1::Tensor& empty = stepped.observations().at("deformable_vertices");
  ASSERT_EQ(empty.shape_size(), 3);
  EXPECT_EQ(empty.shape(0), 1);
  EXPECT_EQ(empty.shape(1), 0);
  EXPECT_EQ(empty.shape(2), 3);
  EXPECT_TRUE(empty.data().empty());
  DestroyGroup(stub_.get(), plain.group_id());
}

// A deformable's activation is an action column (docs/engine.md "Deformables"): Specs.action
// names it after the scene's actuators with its range, and Step's actions grow its tets: a free
// soft cube (no gravity, --solver nsn) activated at 0.1 through the service spreads its
// vertices to 1.1 times their rest distance from its centroid.
TEST_F(ServiceTest, AnActivationIsAnActionColumnThatGrowsItsTets) {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(1, 1, 1, 0.1, 0.1, 0.1);
  std::string tets;
  for (size_t e = 0; e < grid.tets.size(); ++e) tets += std::to_string(e) + " ";
  v1::CreateRequest create;
  v1::SceneText* text = create.mutable_scene()->mutable_text();
  text->set_text(
      "<mujoco><option gravity='0 0 0' timestep='0.01'/><custom><text name='alsim:deformables' "
      "data='soft.xml'/></custom><worldbody><body name='arm'><joint name='j' type='slide'/>"
      "<geom type='sphere' size='.05' pos='5 0 0'/></body></worldbody><actuator>"
      "<motor name='push' joint='j' ctrlrange='-1 1' ctrllimited='true'/></actuator></mujoco>");
  text->set_filename("grow.xml");
  (*text->mutable_assets())["soft.xml"] =
      "<deformables><deformable name='jelly' young='1e5' density='1000' pos='0 0 1'>" +
      testing::TetMeshXml(grid) + "<activation name='grow' tets='" + tets +
      "' range='0 0.5'/></deformable></deformables>";
  create.mutable_solver()->set_solver("nsn");
  v1::CreateResponse created;
  const grpc::Status status = stub_->Create(Context().get(), create, &created);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const v1::TensorSpec& action = created.specs().action();
  ASSERT_EQ(action.shape_size(), 1);
  ASSERT_EQ(action.shape(0), 2);
  ASSERT_EQ(action.element_names_size(), 2);
  EXPECT_EQ(action.element_names(0), "push");
  EXPECT_EQ(action.element_names(1), "grow");
  EXPECT_EQ(action.lower(1), 0);
  EXPECT_EQ(action.upper(1), 0.5);
  EXPECT_EQ(created.specs().nu(), 2u);

  v1::StepRequest step;
  step.mutable_instances()->add_instance_ids(created.instance_ids(0));
  const double actions[2] = {0, 0.1};
  step.mutable_actions()->set_dtype(v1::DTYPE_FLOAT64);
  step.mutable_actions()->add_shape(1);
  step.mutable_actions()->add_shape(2);
  step.mutable_actions()->set_data(
      std::string(reinterpret_cast<const char*>(actions), sizeof actions));
  step.set_substeps(200);
  step.add_observations(v1::OBSERVATION_DEFORMABLE_VERTICES);
  v1::StepResponse stepped;
  const grpc::Status stepped_status = stub_->Step(Context().get(), step, &stepped);
  ASSERT_TRUE(stepped_status.ok()) << stepped_status.error_message();
  const std::vector<double> x = Doubles(stepped.observations().at("deformable_vertices"));
  const int nvert = static_cast<int>(grid.points.size());
  ASSERT_EQ(x.size(), static_cast<std::size_t>(3 * nvert));
  Vec3 centroid = Vec3::Zero(), rest_centroid = Vec3::Zero();
  for (int v = 0; v < nvert; ++v) {
    centroid += Vec3(x[3 * v], x[3 * v + 1], x[3 * v + 2]) / nvert;
    rest_centroid += grid.points[v] / nvert;
  }
  for (int v = 0; v < nvert; ++v) {
    const double now = (Vec3(x[3 * v], x[3 * v + 1], x[3 * v + 2]) - centroid).norm();
    const double rest = (grid.points[v] - rest_centroid).norm();
    EXPECT_NEAR(now / rest, 1.1, 1e-6) << "vertex " << v;
  }
}

TEST_F(ServiceTest, GetSceneRefusesUnknownAndUnsetIds) {
  v1::GetSceneRequest request;
  v1::GetSceneResponse scene;
  EXPECT_EQ(stub_->GetScene(Context().get(), request, &scene).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  request.set_instance_id(12345);
  const grpc::Status status = stub_->GetScene(Context().get(), request, &scene);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("12345"));
}

// Details and contacts ride along only when asked for, and match the instance: its steps, and
// contact points that lie where the instance's own collision found them (the same counts as the
// solver's diagnostics and the contact summary).
TEST_F(ServiceTest, StreamStatesSendsDiagnosticsAndContactsOnRequest) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateBuiltin("humanoid", 1, 0, &created).ok());
  const std::uint64_t id = created.instance_ids(0);
  v1::StepResponse stepped;
  // The humanoid stands on its feet at first; 200 steps with zero controls let it fall and touch.
  ASSERT_TRUE(StepIds({id}, {}, static_cast<int>(created.specs().nu()), &stepped, 200).ok());
  ASSERT_GT(stepped.diagnostics(0).contacts(), 0u);
  auto first_frame = [&](bool diagnostics, bool contacts) {
    v1::StreamStatesRequest request;
    request.mutable_instances()->add_instance_ids(id);
    request.add_observations(v1::OBSERVATION_CONTACT_SUMMARY);
    request.set_include_diagnostics(diagnostics);
    request.set_include_contacts(contacts);
    grpc::ClientContext context;
    auto reader = stub_->StreamStates(&context, request);
    v1::StateFrame frame;
    EXPECT_TRUE(reader->Read(&frame));
    context.TryCancel();
    while (reader->Read(&frame)) {
    }
    reader->Finish();
    return frame;
  };
  EXPECT_EQ(first_frame(false, false).details_size(), 0);
  const v1::StateFrame with_diagnostics = first_frame(true, false);
  ASSERT_EQ(with_diagnostics.details_size(), 1);
  EXPECT_EQ(with_diagnostics.details(0).steps(), 200u);
  EXPECT_EQ(with_diagnostics.details(0).status(), v1::INSTANCE_STATUS_OK);
  EXPECT_EQ(with_diagnostics.details(0).diagnostics().contacts(),
            stepped.diagnostics(0).contacts());
  EXPECT_EQ(with_diagnostics.details(0).diagnostics().max_iterations(),
            stepped.diagnostics(0).max_iterations());
  EXPECT_FALSE(with_diagnostics.details(0).has_contacts());

  const v1::StateFrame with_contacts = first_frame(false, true);
  ASSERT_EQ(with_contacts.details_size(), 1);
  const v1::ContactPoints& points = with_contacts.details(0).contacts();
  std::int32_t count = 0;
  std::memcpy(&count, with_contacts.observations().at("contact_count").data().data(), 4);
  ASSERT_GT(count, 0);
  ASSERT_EQ(points.distance_size(), count);
  ASSERT_EQ(points.position_size(), 3 * count);
  ASSERT_EQ(points.normal_size(), 3 * count);
  int on_floor = 0;
  for (int i = 0; i < count; ++i) {
    const double norm =
        std::hypot(points.normal(3 * i), points.normal(3 * i + 1), points.normal(3 * i + 2));
    EXPECT_NEAR(norm, 1.0, 1e-9) << "contact " << i;
    EXPECT_LT(points.distance(i), 0.05) << "contact " << i;  // within the geoms' margins
    // A floor contact (the floor is geom 0, so geom1): at z ~ 0 with the normal straight up.
    on_floor += std::abs(points.position(3 * i + 2)) < 0.02 && points.normal(3 * i + 2) > 0.999;
  }
  EXPECT_GT(on_floor, 0);
}

// ---- gradients through a step (StepRequest.gradients) ----------------------------------------

// A particle on slide joints x and z with a motor on each, resting on a floor: contact with
// friction, two controls.
const char* kParticleScene = R"(<mujoco><option timestep="0.002"/><worldbody>
  <geom name="floor" type="plane" size="5 5 0.1" friction="0.5"/>
  <body name="ball" pos="0 0 0.1"><joint name="x" type="slide" axis="1 0 0"/>
    <joint name="z" type="slide" axis="0 0 1"/>
    <geom name="ball" type="sphere" size="0.1" mass="2" friction="0.5"/></body></worldbody>
  <actuator><motor joint="x" gear="1"/><motor joint="z" gear="1"/></actuator></mujoco>)";

// A server whose replies may carry at most kLimit Jacobian values: the particle's state and
// controls blocks are nv (4 nv + 2 nu) = 2 x 12 = 24 values per instance, so 2 instances fit and
// 3 do not; with two parameters, nv (4 nv + 2 nu + 2 np) = 32 per instance, 2 reach the limit.
class GradientServiceTest : public ServiceTest {
 protected:
  static constexpr std::size_t kLimit = 64;
  static void SetUpTestSuite() { StartServer(64, kLimit); }

  grpc::Status CreateParticles(const std::string& solver, int count, v1::CreateResponse* created) {
    v1::CreateRequest request;
    request.mutable_scene()->mutable_text()->set_text(kParticleScene);
    request.mutable_scene()->mutable_text()->set_filename("particle.xml");
    request.mutable_solver()->set_solver(solver);
    request.set_count(count);
    return stub_->Create(Context().get(), request, created);
  }

  static v1::StepRequest StepOf(const v1::CreateResponse& group,
                                const std::vector<double>& actions) {
    v1::StepRequest request;
    request.mutable_instances()->set_group_id(group.group_id());
    v1::Tensor* tensor = request.mutable_actions();
    tensor->set_dtype(v1::DTYPE_FLOAT64);
    tensor->add_shape(group.instance_ids_size());
    tensor->add_shape(2);
    tensor->set_data(std::string(reinterpret_cast<const char*>(actions.data()),
                                 actions.size() * sizeof(double)));
    request.add_observations(v1::OBSERVATION_QPOS);
    request.add_observations(v1::OBSERVATION_QVEL);
    return request;
  }

  // The instance's step count (List), which a refused call leaves as it was.
  std::uint64_t StepsOf(std::uint64_t id) {
    v1::ListResponse list;
    EXPECT_TRUE(stub_->List(Context().get(), v1::ListRequest(), &list).ok());
    for (const v1::InstanceInfo& info : list.instances()) {
      if (info.instance_id() == id) return info.steps();
    }
    ADD_FAILURE() << "no instance " << id;
    return 0;
  }
};

// A gradient step returns, for the instances that ask, exactly what StepGradients computes in
// process from the same state (bit for bit, every block, shapes [K, nv, ...]); the instance that
// does not ask takes a plain step and gets NaN rows; both move as in process.
TEST_F(GradientServiceTest, JacobiansAreTheEnginesBitForBit) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateParticles("icf-lagged", 2, &created).ok());
  const auto model = ImportModelFromString(kParticleScene).model;
  StepOptions options;
  v1::SolverConfig config;
  config.set_solver("icf-lagged");
  ASSERT_TRUE(server::SolverOptionsOf(config, &options).ok());
  ASSERT_EQ(options.solver.type, SolverType::kIcfLagged);
  std::vector<Data> local;
  for (int k = 0; k < 2; ++k) local.emplace_back(*model);
  // Pushed along x by different controls: one sticks, one slides (the friction bound is 9.8 N).
  const std::vector<double> actions = {3.0, 0.5, 15.0, -1.0};
  v1::StepResponse response;
  for (int n = 0; n < 20; ++n) {
    ASSERT_TRUE(stub_->Step(Context().get(), StepOf(created, actions), &response).ok());
    for (int k = 0; k < 2; ++k) {
      std::copy_n(actions.begin() + 2 * k, 2, local[k].ctrl.begin());
      ASSERT_EQ(Step(*model, local[k], options), StepStatus::kOk);
    }
  }
  EXPECT_FALSE(response.has_gradients()) << "a plain step carries no Jacobians";

  v1::StepRequest request = StepOf(created, actions);
  v1::GradientRequest* asked = request.mutable_gradients();
  asked->set_state(true);
  asked->set_controls(true);
  asked->add_parameters("body_mass:ball");
  asked->add_parameters("geom_friction:floor");
  asked->add_instance_mask(true);
  asked->add_instance_mask(false);
  // Two parameters: 2 x 32 = 64 values, kLimit exactly.
  const grpc::Status stepped = stub_->Step(Context().get(), request, &response);
  ASSERT_TRUE(stepped.ok()) << stepped.error_message();

  GradientRequest engine_request;
  engine_request.parameters = {"body_mass:ball", "geom_friction:floor"};
  StepGradients gradients(*model, options.solver.type);
  StepJacobians expected;
  ASSERT_EQ(gradients.Step(*model, local[0], options, engine_request, &expected), StepStatus::kOk);
  ASSERT_EQ(Step(*model, local[1], options), StepStatus::kOk);

  // Both instances moved as in process.
  const std::vector<double> qpos = Doubles(response.observations().at("qpos"));
  ASSERT_EQ(qpos.size(), 4u);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(0, std::memcmp(qpos.data() + 2 * k, local[k].qpos.data(), 2 * sizeof(double)))
        << "instance " << k;
  }

  ASSERT_TRUE(response.has_gradients());
  const v1::Jacobians& jacobians = response.gradients();
  ASSERT_EQ(jacobians.computed_size(), 2);
  EXPECT_TRUE(jacobians.computed(0));
  EXPECT_FALSE(jacobians.computed(1));
  EXPECT_EQ(jacobians.residual(0), expected.residual);
  EXPECT_EQ(static_cast<int>(jacobians.constraint_changes(0)), expected.constraint_changes);
  ASSERT_EQ(jacobians.parameters_size(), 2);
  EXPECT_EQ(jacobians.parameters(1), "geom_friction:floor");
  const std::map<std::string, std::pair<const std::vector<double>*, int>> blocks = {
      {"dv_dv", {&expected.dv_dv, 2}}, {"dv_dq", {&expected.dv_dq, 2}},
      {"dq_dv", {&expected.dq_dv, 2}}, {"dq_dq", {&expected.dq_dq, 2}},
      {"dv_du", {&expected.dv_du, 2}}, {"dq_du", {&expected.dq_du, 2}},
      {"dv_dp", {&expected.dv_dp, 2}}, {"dq_dp", {&expected.dq_dp, 2}}};
  ASSERT_EQ(jacobians.tensors_size(), 8);
  for (const auto& [name, block] : blocks) {
    const v1::Tensor& tensor = jacobians.tensors().at(name);
    EXPECT_EQ(tensor.dtype(), v1::DTYPE_FLOAT64) << name;
    ASSERT_EQ(tensor.shape_size(), 3) << name;
    EXPECT_EQ(tensor.shape(0), 2) << name;
    EXPECT_EQ(tensor.shape(1), 2) << name;  // nv
    EXPECT_EQ(tensor.shape(2), block.second) << name;
    const std::vector<double> values = Doubles(tensor);
    ASSERT_EQ(values.size(), 8u) << name;
    ASSERT_EQ(block.first->size(), 4u) << name;
    EXPECT_EQ(0, std::memcmp(values.data(), block.first->data(), 4 * sizeof(double))) << name;
    for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(values[i])) << name << " " << i;
  }
  // Not a vacuous comparison: pushing harder along x speeds the particle up along x.
  EXPECT_GT(expected.dv_du[0], 0);
  EXPECT_GT(expected.dv_dv[0], 0);
}

// A StepGradients' memory is reserved from the budget (--max-memory) on an instance's first
// gradient step, more once parameters ask for a model copy, never twice, and returned with the
// instance; plain steps reserve nothing.
TEST_F(GradientServiceTest, GradientMemoryIsBudgetedOnceAndReturned) {
  auto reserved = [] {
    const auto scrape = testing::HttpGet(server_->metrics_url());
    EXPECT_EQ(scrape.status, 200) << scrape.error;
    return SeriesValue(scrape.body, "alsim_memory_reserved_bytes");
  };
  // A live instance of the scene first: the model's own charge is then made and stays.
  v1::CreateResponse keeper;
  ASSERT_TRUE(CreateParticles("icf-lagged", 1, &keeper).ok());
  const double start = reserved();
  v1::CreateResponse created;
  ASSERT_TRUE(CreateParticles("icf-lagged", 2, &created).ok());
  const double instances = reserved();
  ASSERT_GT(instances, start);
  const std::vector<double> actions = {1, 0, 1, 0};
  v1::StepResponse response;
  ASSERT_TRUE(stub_->Step(Context().get(), StepOf(created, actions), &response).ok());
  v1::StepRequest controls = StepOf(created, actions);
  controls.mutable_gradients()->set_controls(true);
  ASSERT_TRUE(stub_->Step(Context().get(), controls, &response).ok());
  EXPECT_EQ(reserved(), instances + 2 * (instances - start)) << "two instances' worth each";
  ASSERT_TRUE(stub_->Step(Context().get(), controls, &response).ok());
  EXPECT_EQ(reserved(), instances + 2 * (instances - start)) << "charged once";
  v1::StepRequest parameters = controls;
  parameters.mutable_gradients()->add_parameters("body_mass:ball");
  ASSERT_TRUE(stub_->Step(Context().get(), parameters, &response).ok());
  EXPECT_GT(reserved(), instances + 2 * (instances - start)) << "the model copies";
  DestroyGroup(stub_.get(), created.group_id());
  // Destroy publishes the budget after the instances are freed.
  EXPECT_EQ(reserved(), start);
  DestroyGroup(stub_.get(), keeper.group_id());
}

// An instance that a reset_mask flag resets takes no step and gets no Jacobians (NaN rows), even
// when it asks; its neighbour's are computed.
TEST_F(GradientServiceTest, AResetInsteadOfAStepHasNoJacobians) {
  v1::CreateResponse created;
  ASSERT_TRUE(CreateParticles("icf-lagged", 2, &created).ok());
  v1::StepRequest request = StepOf(created, {5, 0, 5, 0});
  request.add_reset_mask(true);
  request.add_reset_mask(false);
  request.mutable_gradients()->set_controls(true);
  v1::StepResponse response;
  ASSERT_TRUE(stub_->Step(Context().get(), request, &response).ok());
  ASSERT_EQ(response.reset_size(), 2);
  EXPECT_TRUE(response.reset(0));
  EXPECT_FALSE(response.reset(1));
  const v1::Jacobians& jacobians = response.gradients();
  ASSERT_EQ(jacobians.computed_size(), 2);
  EXPECT_FALSE(jacobians.computed(0));
  EXPECT_TRUE(jacobians.computed(1));
  const std::vector<double> dv_du = Doubles(jacobians.tensors().at("dv_du"));
  ASSERT_EQ(dv_du.size(), 8u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(dv_du[i])) << i;
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::isfinite(dv_du[i])) << i;
  DestroyGroup(stub_.get(), created.group_id());
}

// Refusals: past the size limit, a solver without gradients, an unknown parameter, several
// substeps, a request that asks for nothing. Each is INVALID_ARGUMENT and steps no instance.
TEST_F(GradientServiceTest, RefusalsStepNothing) {
  v1::CreateResponse icf, subadmm;
  ASSERT_TRUE(CreateParticles("icf-lagged", 3, &icf).ok());
  ASSERT_TRUE(CreateParticles("", 1, &subadmm).ok());
  const std::vector<double> actions = {1, 0, 1, 0, 1, 0};
  auto refused = [&](const v1::StepRequest& request, const std::string& words) {
    const std::uint64_t before =
        StepsOf(request.instances().group_id() == icf.group_id() ? icf.instance_ids(0)
                                                                 : subadmm.instance_ids(0));
    v1::StepResponse response;
    const grpc::Status status = stub_->Step(Context().get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << words;
    EXPECT_THAT(status.error_message(), HasSubstr(words));
    EXPECT_THAT(status.error_message(), HasSubstr("nothing was stepped"));
    EXPECT_EQ(StepsOf(request.instances().group_id() == icf.group_id() ? icf.instance_ids(0)
                                                                       : subadmm.instance_ids(0)),
              before)
        << words;
  };

  v1::ServerInfoResponse info;
  ASSERT_TRUE(stub_->ServerInfo(Context().get(), v1::ServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.max_gradient_doubles(), kLimit);
  // 3 instances x 24 values = 72 > 64; the message names both numbers and the flag.
  v1::StepRequest large = StepOf(icf, actions);
  large.mutable_gradients()->set_state(true);
  large.mutable_gradients()->set_controls(true);
  refused(large, "would be 72 float64 values");
  refused(large, "limit of 64 per reply (--max-gradient-doubles)");
  // The same request for two of the three instances fits (the limit counts K rows).
  v1::StepRequest two = large;
  two.mutable_instances()->clear_group_id();
  two.mutable_instances()->add_instance_ids(icf.instance_ids(0));
  two.mutable_instances()->add_instance_ids(icf.instance_ids(1));
  two.mutable_actions()->set_shape(0, 2);
  two.mutable_actions()->mutable_data()->resize(4 * sizeof(double));
  v1::StepResponse response;
  ASSERT_TRUE(stub_->Step(Context().get(), two, &response).ok());
  EXPECT_EQ(response.gradients().tensors().at("dv_du").shape(0), 2);
  // Without the position blocks, 3 x nv (2 nv + 2 nu) = 48 values fit for all three.
  v1::StepRequest velocities = large;
  velocities.mutable_gradients()->set_skip_positions(true);
  ASSERT_TRUE(stub_->Step(Context().get(), velocities, &response).ok());
  EXPECT_EQ(response.gradients().tensors_size(), 4);
  EXPECT_EQ(response.gradients().tensors().count("dv_dq"), 0u);
  EXPECT_EQ(response.gradients().tensors().count("dq_dq"), 0u);
  EXPECT_EQ(response.gradients().tensors().at("dq_dv").shape(0), 3);

  v1::StepRequest unknown = StepOf(icf, actions);
  unknown.mutable_gradients()->add_parameters("body_mass:nobody");
  refused(unknown, "instance " + std::to_string(icf.instance_ids(0)) +
                       ": parameter 'body_mass:nobody': no body named 'nobody'");

  v1::StepRequest substeps = StepOf(icf, actions);
  substeps.mutable_gradients()->set_controls(true);
  substeps.set_substeps(2);
  refused(substeps, "substeps must be 0 or 1");

  v1::StepRequest nothing = StepOf(icf, actions);
  nothing.mutable_gradients();  // present, asking for no block
  refused(nothing, "gradients ask for nothing");
  v1::StepRequest nobody = StepOf(icf, actions);
  nobody.mutable_gradients()->set_controls(true);
  for (int k = 0; k < 3; ++k) nobody.mutable_gradients()->add_instance_mask(false);
  refused(nobody, "sets no flag");

  v1::StepRequest wrong_solver = StepOf(subadmm, {1, 0});
  wrong_solver.mutable_gradients()->set_controls(true);
  StepOptions defaults;
  refused(wrong_solver, StepGradients::Validate(*ImportModelFromString(kParticleScene).model,
                                                defaults, GradientRequest{}));
  // Batched with an ICF instance of the same scene (one model), not asking, it takes its plain
  // step while the other gets its Jacobians.
  v1::StepRequest mixed = StepOf(subadmm, {1, 0, 1, 0});
  mixed.mutable_instances()->clear_group_id();
  mixed.mutable_instances()->add_instance_ids(icf.instance_ids(2));
  mixed.mutable_instances()->add_instance_ids(subadmm.instance_ids(0));
  mixed.mutable_actions()->set_shape(0, 2);
  mixed.mutable_gradients()->set_controls(true);
  mixed.mutable_gradients()->add_instance_mask(true);
  mixed.mutable_gradients()->add_instance_mask(false);
  const std::uint64_t before = StepsOf(subadmm.instance_ids(0));
  ASSERT_TRUE(stub_->Step(Context().get(), mixed, &response).ok());
  EXPECT_EQ(StepsOf(subadmm.instance_ids(0)), before + 1);
  ASSERT_EQ(response.gradients().computed_size(), 2);
  EXPECT_TRUE(response.gradients().computed(0));
  EXPECT_FALSE(response.gradients().computed(1));
}

}  // namespace
}  // namespace alsim
