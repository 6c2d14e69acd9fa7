// The pieces of bench/cluster_table.py, the box table of issue 33 (humanoid.xml, random actions).
// Each mode prints one JSON object on stdout:
//   mujoco       one MuJoCo 2.2.2 instance stepped with mj_step (run T of these side by side)
//   engine       K alsim instances stepped as one batch in this process on T threads, no gRPC
//   remote       K instances on S running alsim-servers (split evenly, one client thread per
//                server), stepped in lockstep (--pipeline 1: one batched Step call per step) or
//                with P sub-batches per server in flight over StepStream (--pipeline P); with
//                --server-pids, the CPU time per instance step of the servers, of this client,
//                and of the physics alone (the same steps replayed in process), and whether the
//                replay reproduced the served observations bit for bit
//   ping-server  a bare gRPC unary echo (no protobuf, no work) for the latency mode to call
//   latency      round trips, interleaved: the bare echo, ServerInfo, and a 1-instance Step
//
// Actions are a pure function of (seed, instance, step, actuator), uniform in the ctrlrange of
// humanoid.xml ([-1, 1]), so a remote run split any way over servers and sub-batches, and the
// in-process replay, step the same trajectories (client/cli/random_actions.h, shared with
// `alsim run --actions random` and solver_bench's random mode).
#include <mujoco/mujoco.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/codegen/server_callback_handlers.h>

#include "client/cli/random_actions.h"
#include "client/client.h"
#include "engine/core/parallel.h"
#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"

namespace alsim {
namespace {

using Clock = std::chrono::steady_clock;
const char* const kHumanoid = "/usr/share/mujoco/model/humanoid/humanoid.xml";
const char* const kPingMethod = "/alsim.bench.Ping/Echo";

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "cluster_bench: %s\n", message.c_str());
  std::exit(1);
}

// This process's CPU time (all threads, user + system), seconds.
double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Another process's CPU time (all its threads, live and exited; user + system) from
// /proc/PID/stat, in seconds (clock-tick resolution, 10 ms at 100 Hz).
double OtherProcessCpuSeconds(long pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::size_t close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) Fail("cannot read /proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
  for (int index = 3; index <= 15 && fields >> field; ++index) {
    if (index == 14 || index == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Uniform in [-1, 1] (humanoid.xml's ctrlrange): Action's default range.
using cli::Action;

struct Flags {
  std::vector<std::string> values;  // argv[2:]
  // Every argument must be one of `known` followed by its value.
  void Check(const std::string& mode, const std::vector<std::string>& known) const {
    for (std::size_t i = 0; i < values.size(); i += 2) {
      if (std::find(known.begin(), known.end(), values[i]) == known.end()) {
        Fail(mode + ": unknown argument '" + values[i] + "'");
      }
      if (i + 1 >= values.size()) Fail(mode + ": " + values[i] + " needs a value");
    }
  }
  std::string Get(const std::string& name, const std::string& fallback) const {
    for (std::size_t i = 0; i + 1 < values.size(); ++i) {
      if (values[i] == name) return values[i + 1];
    }
    return fallback;
  }
  long Int(const std::string& name, long fallback, long low) const {
    const std::string text = Get(name, std::to_string(fallback));
    char* end = nullptr;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (end == text.c_str() || *end != '\0' || value < low) {
      Fail(name + " '" + text + "' is not an integer of at least " + std::to_string(low));
    }
    return value;
  }
};

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// ---- mujoco ----

// Sleeps until CLOCK_MONOTONIC (steady_clock on Linux) reads `seconds`, so that processes
// started one after another begin their timed loops together.
void SleepUntil(double seconds) {
  const auto now = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  if (seconds > now) std::this_thread::sleep_for(std::chrono::duration<double>(seconds - now));
}

double Monotonic(Clock::time_point time) {
  return std::chrono::duration<double>(time.time_since_epoch()).count();
}

// Instances [first, first + count) with mj_step, one after another in each step.
int MujocoMode(const Flags& flags) {
  flags.Check("mujoco",
              {"--steps", "--warmup", "--seed", "--instances", "--first", "--start-at", "--scene"});
  const long steps = flags.Int("--steps", 1000, 1);
  const long warmup = flags.Int("--warmup", 0, 0);
  const auto seed = static_cast<std::uint64_t>(flags.Int("--seed", 0, 0));
  const int count = static_cast<int>(flags.Int("--instances", 1, 1));
  const auto first = static_cast<std::uint64_t>(flags.Int("--first", 0, 0));
  char error[1000] = "";
  mjModel* m = mj_loadXML(flags.Get("--scene", kHumanoid).c_str(), nullptr, error, sizeof(error));
  if (m == nullptr) Fail(std::string("MuJoCo: ") + error);
  std::vector<mjData*> instances;
  for (int k = 0; k < count; ++k) instances.push_back(mj_makeData(m));
  const auto step = [&](long n) {
    for (int k = 0; k < count; ++k) {
      for (int a = 0; a < m->nu; ++a) {
        instances[k]->ctrl[a] = Action(seed, first + k, static_cast<std::uint64_t>(n), a);
      }
      mj_step(m, instances[k]);
    }
  };
  SleepUntil(std::stod(flags.Get("--start-at", "0")));
  for (long n = 0; n < warmup; ++n) step(n);
  const double cpu = ProcessCpuSeconds();
  const auto start = Clock::now();
  for (long n = warmup; n < warmup + steps; ++n) step(n);
  const auto end = Clock::now();
  const double wall = std::chrono::duration<double>(end - start).count();
  const double instance_steps = static_cast<double>(count) * static_cast<double>(steps);
  std::printf(
      "{\"mode\": \"mujoco\", \"instances\": %d, \"steps\": %ld, \"wall_seconds\": %.6f, "
      "\"cpu_seconds\": %.6f, \"instance_steps_per_second\": %.1f, \"start_monotonic\": %.6f, "
      "\"end_monotonic\": %.6f}\n",
      count, steps, wall, ProcessCpuSeconds() - cpu, instance_steps / wall, Monotonic(start),
      Monotonic(end));
  for (mjData* d : instances) mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}

// ---- engine: in-process batched stepping ----

struct Replay {
  double start_monotonic = 0;
  double wall_seconds = 0;
  double cpu_seconds = 0;
  bool ok = true;
  std::vector<Data> instances;
};

// Steps instances [first, first + count) for warmup + steps steps as one batch per step on
// `threads` threads, from CLOCK_MONOTONIC `start_at` on; times the last `steps`.
Replay RunEngine(const Model& model, int first, int count, long warmup, long steps, int threads,
                 std::uint64_t seed, double start_at = 0) {
  Replay replay;
  replay.instances.reserve(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) {
    replay.instances.emplace_back(model);
    Kinematics(model, replay.instances.back());
  }
  std::atomic<bool> ok{true};
  SleepUntil(start_at);
  RunWithThreads(threads, [&] {
    Clock::time_point start;
    for (long n = 0; n < warmup + steps; ++n) {
      if (n == warmup) {
        replay.cpu_seconds = ProcessCpuSeconds();
        start = Clock::now();
        replay.start_monotonic = Monotonic(start);
      }
      ParallelFor(0, count, 1, [&](int k) {
        Data& data = replay.instances[static_cast<std::size_t>(k)];
        for (int a = 0; a < model.nu; ++a) {
          data.ctrl[static_cast<std::size_t>(a)] =
              Action(seed, static_cast<std::uint64_t>(first + k), static_cast<std::uint64_t>(n), a);
        }
        if (Step(model, data) != StepStatus::kOk) ok = false;
      });
    }
    replay.wall_seconds = Seconds(start);
    replay.cpu_seconds = ProcessCpuSeconds() - replay.cpu_seconds;
  });
  replay.ok = ok;
  return replay;
}

std::shared_ptr<const Model> LoadModel(const std::string& path) {
  ModelImport imported = ImportModelFromFile(path);
  if (imported.model == nullptr) Fail("cannot import " + path);
  return imported.model;
}

int EngineMode(const Flags& flags) {
  flags.Check("engine", {"--scene", "--instances", "--first", "--steps", "--warmup", "--threads",
                         "--seed", "--start-at"});
  const auto model = LoadModel(flags.Get("--scene", kHumanoid));
  const int count = static_cast<int>(flags.Int("--instances", 1, 1));
  const long steps = flags.Int("--steps", 100, 1);
  const long warmup = flags.Int("--warmup", 0, 0);
  const int threads = static_cast<int>(flags.Int("--threads", 1, 1));
  const auto seed = static_cast<std::uint64_t>(flags.Int("--seed", 0, 0));
  const int first = static_cast<int>(flags.Int("--first", 0, 0));
  const Replay replay = RunEngine(*model, first, count, warmup, steps, threads, seed,
                                  std::stod(flags.Get("--start-at", "0")));
  if (!replay.ok) Fail("an instance diverged");
  const double instance_steps = static_cast<double>(count) * static_cast<double>(steps);
  std::printf(
      "{\"mode\": \"engine\", \"instances\": %d, \"threads\": %d, \"steps\": %ld, "
      "\"wall_seconds\": %.6f, \"cpu_seconds\": %.6f, \"instance_steps_per_second\": %.1f, "
      "\"cpu_us_per_instance_step\": %.3f, \"start_monotonic\": %.6f, \"end_monotonic\": %.6f}\n",
      count, threads, steps, replay.wall_seconds, replay.cpu_seconds,
      instance_steps / replay.wall_seconds, 1e6 * replay.cpu_seconds / instance_steps,
      replay.start_monotonic, replay.start_monotonic + replay.wall_seconds);
  return 0;
}

// ---- remote ----

// A reusable barrier for the client threads of a lockstep run (C++17 has no std::barrier).
class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const long generation = generation_;
    if (++waiting_ == count_) {
      waiting_ = 0;
      ++generation_;
      done_.notify_all();
      return;
    }
    done_.wait(lock, [&] { return generation != generation_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  int count_;
  int waiting_ = 0;
  long generation_ = 0;
};

// One server's share of the instances: global instance indices [first, first + count).
struct Shard {
  std::unique_ptr<client::Client> client;
  std::vector<std::uint64_t> ids;
  int first = 0;
  double action_cpu_seconds = 0;  // spent making actions (the policy's part, not the service's)
  double step_seconds = 0;        // the server's stepping, as its replies report it
  std::string error;
};

alsim::v1::StepRequest MakeRequest(const Shard& shard, int begin, int end, int nu,
                                   std::uint64_t seed, long step, double* action_cpu) {
  const double cpu = ThreadCpuSeconds();
  alsim::v1::StepRequest request;
  for (int k = begin; k < end; ++k) request.mutable_instances()->add_instance_ids(shard.ids[k]);
  alsim::v1::Tensor* actions = request.mutable_actions();
  actions->set_dtype(alsim::v1::DTYPE_FLOAT64);
  actions->add_shape(end - begin);
  actions->add_shape(nu);
  std::string* bytes = actions->mutable_data();
  bytes->resize(static_cast<std::size_t>(end - begin) * nu * sizeof(double));
  auto* values = reinterpret_cast<double*>(bytes->data());
  for (int k = begin; k < end; ++k) {
    for (int a = 0; a < nu; ++a) {
      *values++ = Action(seed, static_cast<std::uint64_t>(shard.first + k),
                         static_cast<std::uint64_t>(step), a);
    }
  }
  request.add_observations(alsim::v1::OBSERVATION_QPOS);
  request.add_observations(alsim::v1::OBSERVATION_QVEL);
  *action_cpu += ThreadCpuSeconds() - cpu;
  return request;
}

// The client's decoding: the reply's tensors copied into the [K, n] arrays a vectorized
// environment returns.
bool StoreObservations(const alsim::v1::StepResponse& response, int first, int count, int nq,
                       int nv, std::vector<double>* qpos, std::vector<double>* qvel) {
  const auto found_qpos = response.observations().find("qpos");
  const auto found_qvel = response.observations().find("qvel");
  if (found_qpos == response.observations().end() || found_qvel == response.observations().end()) {
    return false;
  }
  const std::string& qpos_bytes = found_qpos->second.data();
  const std::string& qvel_bytes = found_qvel->second.data();
  if (qpos_bytes.size() != static_cast<std::size_t>(count) * nq * sizeof(double) ||
      qvel_bytes.size() != static_cast<std::size_t>(count) * nv * sizeof(double)) {
    return false;
  }
  std::memcpy(qpos->data() + static_cast<std::size_t>(first) * nq, qpos_bytes.data(),
              qpos_bytes.size());
  std::memcpy(qvel->data() + static_cast<std::size_t>(first) * nv, qvel_bytes.data(),
              qvel_bytes.size());
  return true;
}

int RemoteMode(const Flags& flags) {
  flags.Check("remote", {"--address", "--server-pids", "--instances", "--steps", "--warmup",
                         "--pipeline", "--replay-threads", "--seed", "--scene"});
  const std::vector<std::string> addresses = Split(flags.Get("--address", ""));
  if (addresses.empty()) Fail("--address needs one or more server addresses, comma-separated");
  std::vector<long> pids;
  for (const std::string& pid : Split(flags.Get("--server-pids", ""))) {
    pids.push_back(std::atol(pid.c_str()));
  }
  if (!pids.empty() && pids.size() != addresses.size()) {
    Fail("--server-pids needs one process id per --address");
  }
  const int count = static_cast<int>(flags.Int("--instances", 64, 1));
  const long steps = flags.Int("--steps", 100, 1);
  const long warmup = flags.Int("--warmup", 0, 0);
  const int pipeline = static_cast<int>(flags.Int("--pipeline", 1, 1));
  const int replay_threads = static_cast<int>(flags.Int("--replay-threads", 1, 1));
  const auto seed = static_cast<std::uint64_t>(flags.Int("--seed", 0, 0));
  const std::string scene = flags.Get("--scene", kHumanoid);
  const int servers = static_cast<int>(addresses.size());
  if (count < servers * pipeline) {
    Fail("--instances " + std::to_string(count) + " is fewer than one per sub-batch (" +
         std::to_string(servers) + " server(s) x --pipeline " + std::to_string(pipeline) + ")");
  }
  const auto model = LoadModel(scene);
  const int nq = model->nq, nv = model->nv, nu = model->nu;

  // Every server gets the same scene text, so both sides import one file.
  std::ifstream file(scene);
  const std::string xml((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<Shard> shards(static_cast<std::size_t>(servers));
  for (int s = 0; s < servers; ++s) {
    Shard& shard = shards[static_cast<std::size_t>(s)];
    shard.first = count * s / servers;
    const int share = count * (s + 1) / servers - shard.first;
    shard.client = std::make_unique<client::Client>(addresses[static_cast<std::size_t>(s)],
                                                    std::chrono::seconds(600));
    alsim::v1::CreateRequest create;
    create.mutable_scene()->mutable_text()->set_text(xml);
    create.mutable_scene()->mutable_text()->set_filename("humanoid.xml");
    create.set_count(static_cast<std::uint32_t>(share));
    alsim::v1::CreateResponse created;
    const grpc::Status status = shard.client->Create(create, &created);
    if (!status.ok()) Fail(addresses[s] + ": Create: " + status.error_message());
    shard.ids.assign(created.instance_ids().begin(), created.instance_ids().end());
  }

  std::vector<double> qpos(static_cast<std::size_t>(count) * nq);
  std::vector<double> qvel(static_cast<std::size_t>(count) * nv);
  // Warm-up, lockstep and unary: the timed part starts with every instance at step `warmup`.
  for (long n = 0; n < warmup; ++n) {
    for (Shard& shard : shards) {
      alsim::v1::StepResponse response;
      const grpc::Status status =
          shard.client->Step(MakeRequest(shard, 0, static_cast<int>(shard.ids.size()), nu, seed, n,
                                         &shard.action_cpu_seconds),
                             &response);
      if (!status.ok()) Fail("warm-up Step: " + status.error_message());
    }
  }

  Barrier barrier(servers);
  std::atomic<bool> failed{false};
  const auto run_shard = [&](Shard& shard) {
    const int size = static_cast<int>(shard.ids.size());
    if (pipeline == 1) {
      for (long n = warmup; n < warmup + steps; ++n) {
        alsim::v1::StepResponse response;
        const grpc::Status status = shard.client->Step(
            MakeRequest(shard, 0, size, nu, seed, n, &shard.action_cpu_seconds), &response);
        if (!status.ok()) {
          shard.error = "Step: " + status.error_message();
        } else if (!StoreObservations(response, shard.first, size, nq, nv, &qpos, &qvel)) {
          shard.error = "Step: a reply without qpos and qvel of the expected size";
        }
        shard.step_seconds += response.step_seconds();
        if (!shard.error.empty()) failed = true;
        barrier.Wait();      // one batch in env order per step, as a vectorized environment returns
        if (failed) return;  // every thread stops after the step in which any failed
      }
      return;
    }
    // `pipeline` sub-batches in flight on one stream: the replies come in request order, and
    // sub-batch j's next actions are made only once its observations are back.
    std::unique_ptr<client::StepStream> stream = shard.client->OpenStepStream();
    std::vector<int> bounds;
    for (int j = 0; j <= pipeline; ++j) bounds.push_back(size * j / pipeline);
    for (int j = 0; j < pipeline; ++j) {
      stream->Write(MakeRequest(shard, bounds[j], bounds[j + 1], nu, seed, warmup,
                                &shard.action_cpu_seconds));
    }
    for (long n = warmup; n < warmup + steps; ++n) {
      for (int j = 0; j < pipeline; ++j) {
        alsim::v1::StepResponse response;
        if (!stream->Read(&response)) {
          shard.error = "StepStream: " + stream->Finish().error_message();
          return;
        }
        if (!StoreObservations(response, shard.first + bounds[j], bounds[j + 1] - bounds[j], nq, nv,
                               &qpos, &qvel)) {
          shard.error = "StepStream: a reply without qpos and qvel of the expected size";
          return;
        }
        shard.step_seconds += response.step_seconds();
        if (n + 1 < warmup + steps) {
          stream->Write(MakeRequest(shard, bounds[j], bounds[j + 1], nu, seed, n + 1,
                                    &shard.action_cpu_seconds));
        }
      }
    }
    const grpc::Status finished = stream->Finish();
    if (!finished.ok()) shard.error = "StepStream: " + finished.error_message();
  };

  for (Shard& shard : shards) {
    shard.action_cpu_seconds = 0;
    shard.step_seconds = 0;
  }
  std::vector<double> server_cpu;
  for (const long pid : pids) server_cpu.push_back(OtherProcessCpuSeconds(pid));
  const double client_cpu = ProcessCpuSeconds();
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int s = 1; s < servers; ++s) {
    threads.emplace_back([&, s] { run_shard(shards[static_cast<std::size_t>(s)]); });
  }
  run_shard(shards.front());
  for (std::thread& thread : threads) thread.join();
  const double wall = Seconds(start);
  double client_seconds = ProcessCpuSeconds() - client_cpu;
  double server_seconds = 0;
  for (std::size_t s = 0; s < pids.size(); ++s) {
    server_seconds += OtherProcessCpuSeconds(pids[s]) - server_cpu[s];
  }
  for (std::size_t s = 0; s < shards.size(); ++s) {
    if (!shards[s].error.empty()) Fail(addresses[s] + ": " + shards[s].error);
    client_seconds -= shards[s].action_cpu_seconds;
  }
  for (Shard& shard : shards) {
    alsim::v1::DestroyRequest destroy;
    for (const std::uint64_t id : shard.ids) destroy.mutable_instances()->add_instance_ids(id);
    alsim::v1::DestroyResponse destroyed;
    shard.client->Destroy(destroy, &destroyed);
  }

  const double instance_steps = static_cast<double>(count) * static_cast<double>(steps);
  // The share of the wall time in which a server's arena was stepping (mean over servers): what
  // the service path leaves unoverlapped is the rest.
  double busy = 0;
  for (const Shard& shard : shards) busy += shard.step_seconds / wall / servers;
  std::printf(
      "{\"mode\": \"remote\", \"servers\": %d, \"instances\": %d, \"pipeline\": %d, "
      "\"steps\": %ld, \"wall_seconds\": %.6f, \"instance_steps_per_second\": %.1f, "
      "\"client_cpu_us_per_instance_step\": %.3f, \"server_stepping_share_of_wall\": %.4f",
      servers, count, pipeline, steps, wall, instance_steps / wall,
      1e6 * client_seconds / instance_steps, busy);
  if (!pids.empty()) {
    // The same steps in process: the physics' CPU time, and a check that the servers did exactly
    // this work (their observations equal the replay's bit for bit).
    const Replay replay = RunEngine(*model, 0, count, warmup, steps, replay_threads, seed);
    bool identical = replay.ok;
    for (int k = 0; k < count && identical; ++k) {
      const Data& data = replay.instances[static_cast<std::size_t>(k)];
      identical = std::memcmp(data.qpos.data(), qpos.data() + static_cast<std::size_t>(k) * nq,
                              sizeof(double) * nq) == 0 &&
                  std::memcmp(data.qvel.data(), qvel.data() + static_cast<std::size_t>(k) * nv,
                              sizeof(double) * nv) == 0;
    }
    std::printf(
        ", \"server_cpu_seconds\": %.3f, \"server_cpu_us_per_instance_step\": %.3f, "
        "\"physics_cpu_us_per_instance_step\": %.3f, "
        "\"physics_wall_seconds\": %.6f, \"replay_threads\": %d, \"identical_to_replay\": %s",
        server_seconds, 1e6 * server_seconds / instance_steps,
        1e6 * replay.cpu_seconds / instance_steps, replay.wall_seconds, replay_threads,
        identical ? "true" : "false");
    if (!identical) {
      std::printf("}\n");
      std::fprintf(stderr,
                   "cluster_bench: the served observations differ from the in-process replay\n");
      return 1;
    }
  }
  std::printf("}\n");
  return 0;
}

// ---- bare ping-pong ----

// A unary method on raw bytes, answered by echoing the request through the callback API (the
// API alsim-server's Step uses): gRPC's own cost of a round trip, without protobuf or work.
class PingService final : public grpc::Service {
 public:
  PingService() {
    AddMethod(new grpc::internal::RpcServiceMethod(kPingMethod,
                                                   grpc::internal::RpcMethod::NORMAL_RPC, nullptr));
    MarkMethodCallback(0,
                       new grpc::internal::CallbackUnaryHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
                           [](grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
                              grpc::ByteBuffer* response) {
                             *response = *request;
                             grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
                             reactor->Finish(grpc::Status::OK);
                             return reactor;
                           }));
  }
};

std::atomic<bool> stop_requested{false};

int PingServerMode(const Flags& flags) {
  flags.Check("ping-server", {"--listen"});
  PingService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(flags.Get("--listen", "127.0.0.1:0"), grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) Fail("ping-server: cannot listen on " + flags.Get("--listen", ""));
  std::signal(SIGTERM, [](int) { stop_requested = true; });
  std::signal(SIGINT, [](int) { stop_requested = true; });
  std::printf("ping-server serving on 127.0.0.1:%d\n", port);
  std::fflush(stdout);
  while (!stop_requested) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server->Shutdown();
  return 0;
}

double Percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1,
                         static_cast<std::size_t>(fraction * static_cast<double>(values.size())))];
}

int LatencyMode(const Flags& flags) {
  flags.Check("latency", {"--calls", "--seed", "--address", "--ping", "--scene"});
  const long calls = flags.Int("--calls", 1000, 100);
  const long warmup = 50;  // calls of each kind before the recorded ones (connections, caches)
  const auto seed = static_cast<std::uint64_t>(flags.Int("--seed", 0, 0));
  const std::string address = flags.Get("--address", "");
  const std::string ping_address = flags.Get("--ping", "");
  if (address.empty() || ping_address.empty()) Fail("latency needs --address and --ping");
  const auto model = LoadModel(flags.Get("--scene", kHumanoid));

  // The ping channel is set up as client::Client sets up its own (insecure, default arguments).
  const auto channel = grpc::CreateChannel(ping_address, grpc::InsecureChannelCredentials());
  const grpc::internal::RpcMethod ping_method(kPingMethod, grpc::internal::RpcMethod::NORMAL_RPC,
                                              channel);
  client::Client alsim_client(address, std::chrono::seconds(60));
  std::ifstream file(flags.Get("--scene", kHumanoid));
  const std::string xml((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  alsim::v1::CreateRequest create;
  create.mutable_scene()->mutable_text()->set_text(xml);
  create.mutable_scene()->mutable_text()->set_filename("humanoid.xml");
  create.set_count(1);
  alsim::v1::CreateResponse created;
  if (const grpc::Status status = alsim_client.Create(create, &created); !status.ok()) {
    Fail("Create: " + status.error_message());
  }
  Shard shard;
  shard.ids = {created.instance_ids(0)};

  std::vector<double> ping_us, info_us, step_us, step_server_us, overhead_us;
  grpc::Slice no_bytes(std::string{});
  const grpc::ByteBuffer empty(&no_bytes, 1);  // an empty message (a null buffer is not one)
  long step = 0;
  // The kinds alternate call by call, so each server has been idle for the same two calls
  // before each of its own, and a slow phase of the machine falls on all three alike.
  for (long done = -warmup; done < calls; ++done) {
    const bool record = done >= 0;
    {
      grpc::ClientContext context;
      grpc::ByteBuffer reply;
      const auto start = Clock::now();
      const grpc::Status status =
          grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
              channel.get(), ping_method, &context, empty, &reply);
      const double us = 1e6 * Seconds(start);
      if (!status.ok()) Fail("ping: " + status.error_message());
      if (record) ping_us.push_back(us);
    }
    {
      alsim::v1::ServerInfoResponse info;
      const auto start = Clock::now();
      const grpc::Status status = alsim_client.ServerInfo(&info);
      const double us = 1e6 * Seconds(start);
      if (!status.ok()) Fail("ServerInfo: " + status.error_message());
      if (record) info_us.push_back(us);
    }
    {
      double unused = 0;
      const alsim::v1::StepRequest request =
          MakeRequest(shard, 0, 1, model->nu, seed, step++, &unused);
      alsim::v1::StepResponse response;
      const auto start = Clock::now();
      const grpc::Status status = alsim_client.Step(request, &response);
      const double us = 1e6 * Seconds(start);
      if (!status.ok()) Fail("Step: " + status.error_message());
      if (record) {
        step_us.push_back(us);
        step_server_us.push_back(1e6 * response.step_seconds());
        overhead_us.push_back(us - 1e6 * response.step_seconds());
      }
    }
  }
  alsim::v1::DestroyRequest destroy;
  destroy.mutable_instances()->add_instance_ids(shard.ids[0]);
  alsim::v1::DestroyResponse destroyed;
  alsim_client.Destroy(destroy, &destroyed);
  const double ping = Percentile(ping_us, 0.5);
  std::printf(
      "{\"mode\": \"latency\", \"calls\": %ld, \"ping_p50_us\": %.1f, \"ping_p99_us\": %.1f, "
      "\"server_info_p50_us\": %.1f, \"step_p50_us\": %.1f, \"step_p99_us\": %.1f, "
      "\"step_physics_p50_us\": %.1f, \"step_overhead_p50_us\": %.1f, "
      "\"step_over_ping\": %.3f, \"overhead_over_ping\": %.3f}\n",
      calls, ping, Percentile(ping_us, 0.99), Percentile(info_us, 0.5), Percentile(step_us, 0.5),
      Percentile(step_us, 0.99), Percentile(step_server_us, 0.5), Percentile(overhead_us, 0.5),
      Percentile(step_us, 0.5) / ping, Percentile(overhead_us, 0.5) / ping);
  return 0;
}

}  // namespace
}  // namespace alsim

int main(int argc, char** argv) {
  const char* const usage =
      "usage: cluster_bench MODE [FLAGS]   (bench/cluster_table.py runs these)\n"
      "  mujoco  --instances K --first I --steps N --warmup W --seed S [--start-at MONOTONIC_S]\n"
      "          [--scene XML]\n"
      "  engine  --instances K --first I --threads T --steps N --warmup W --seed S\n"
      "          [--start-at MONOTONIC_S] [--scene XML]\n"
      "  remote  --address A[,A...] [--server-pids P[,P...] --replay-threads T] --instances K\n"
      "          --steps N --warmup W --pipeline P --seed S [--scene XML]\n"
      "  ping-server --listen ADDR\n"
      "  latency --address ALSIM_ADDR --ping PING_ADDR --calls N [--scene XML]\n";
  if (argc < 2) {  // as `make bench` runs every *_bench: the table is the script's to run
    std::fputs(usage, stdout);
    return 0;
  }
  const std::string mode = argv[1];
  alsim::Flags flags;
  flags.values.assign(argv + 2, argv + argc);
  if (mode == "mujoco") return alsim::MujocoMode(flags);
  if (mode == "engine") return alsim::EngineMode(flags);
  if (mode == "remote") return alsim::RemoteMode(flags);
  if (mode == "ping-server") return alsim::PingServerMode(flags);
  if (mode == "latency") return alsim::LatencyMode(flags);
  std::fputs(usage, mode == "--help" || mode == "-h" ? stdout : stderr);
  return mode == "--help" || mode == "-h" ? 0 : 2;
}
