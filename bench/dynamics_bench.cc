// Per-step dynamics pipeline, alsim vs libmujoco 2.2.2 side by side on the same states:
//   alsim:  Kinematics, Velocity, MassMatrix, FactorMassMatrix, BiasForces
//   MuJoCo: mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_comVel, mj_rne (no acceleration)
// plus the three stage groups separately (kinematics, mass matrix + factor, velocity + bias).
// After the runs it prints each pair's times and the ratio alsim / MuJoCo.
#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/ratio_reporter.h"
#include "engine/data/data.h"
#include "engine/dynamics/bias_forces.h"
#include "engine/dynamics/kinematics.h"
#include "engine/dynamics/mass_matrix.h"
#include "engine/dynamics/velocity.h"
#include "engine/linalg/tree_ldl.h"
#include "engine/math/spatial.h"
#include "engine/model/model_import.h"

namespace {

const std::string kSamples = "/usr/share/mujoco/model/";
constexpr int kStates = 16;

// One scene in both engines with a fixed set of random states (qpos, qvel) that both step through.
struct Scene {
  std::shared_ptr<const alsim::Model> model;
  std::unique_ptr<alsim::Data> data;
  mjModel* mj_model = nullptr;
  mjData* mj_data = nullptr;
  std::vector<std::vector<double>> qpos, qvel;

  ~Scene() {
    if (mj_data != nullptr) mj_deleteData(mj_data);
    if (mj_model != nullptr) mj_deleteModel(mj_model);
  }
};

std::vector<double> RandomQpos(const alsim::Model& m, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::normal_distribution<double> normal;
  std::vector<double> qpos = m.qpos0;
  for (int j = 0; j < m.njnt; ++j) {
    double* q = qpos.data() + m.jnt_qpos_adr[j];
    switch (m.jnt_type[j]) {
      case alsim::JointType::kFree:
        for (int k = 0; k < 3; ++k) q[k] += uniform(rng);
        q += 3;
        [[fallthrough]];
      case alsim::JointType::kBall: {
        // Drawn w, x, y, z into locals: constructor arguments are evaluated in no set order.
        const double w = normal(rng), x = normal(rng), y = normal(rng), z = normal(rng);
        const alsim::Quat r = alsim::QuatNormalize(alsim::Quat(w, x, y, z));
        std::copy(r.data(), r.data() + 4, q);
        break;
      }
      case alsim::JointType::kHinge:
      case alsim::JointType::kSlide:
        q[0] = m.jnt_limited[j]
                   ? m.jnt_range_lower[j] +
                         0.5 * (1 + uniform(rng)) * (m.jnt_range_upper[j] - m.jnt_range_lower[j])
                   : q[0] + uniform(rng);
        break;
    }
  }
  return qpos;
}

Scene& GetScene(const std::string& file) {
  static std::map<std::string, std::unique_ptr<Scene>> scenes;
  std::unique_ptr<Scene>& scene = scenes[file];
  if (scene != nullptr) return *scene;
  scene = std::make_unique<Scene>();
  const std::string path = kSamples + file;
  alsim::ModelImport imported = alsim::ImportModelFromFile(path);
  if (!imported) {
    std::fprintf(stderr, "import of %s failed: %s\n", path.c_str(), imported.error.c_str());
    std::abort();
  }
  scene->model = imported.model;
  scene->data = std::make_unique<alsim::Data>(*scene->model);
  char error[1000] = "";
  scene->mj_model = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
  if (scene->mj_model == nullptr) {
    std::fprintf(stderr, "MuJoCo load of %s failed: %s\n", path.c_str(), error);
    std::abort();
  }
  scene->mj_data = mj_makeData(scene->mj_model);
  std::mt19937 rng(1);
  std::normal_distribution<double> normal;
  for (int s = 0; s < kStates; ++s) {
    scene->qpos.push_back(RandomQpos(*scene->model, rng));
    std::vector<double> qvel(scene->model->nv);
    for (double& v : qvel) v = normal(rng);
    scene->qvel.push_back(qvel);
  }
  return *scene;
}

void SetAlsimState(Scene& scene, int s) {
  std::copy(scene.qpos[s].begin(), scene.qpos[s].end(), scene.data->qpos.begin());
  std::copy(scene.qvel[s].begin(), scene.qvel[s].end(), scene.data->qvel.begin());
}

void SetMujocoState(Scene& scene, int s) {
  std::copy(scene.qpos[s].begin(), scene.qpos[s].end(), scene.mj_data->qpos);
  std::copy(scene.qvel[s].begin(), scene.qvel[s].end(), scene.mj_data->qvel);
}

void AlsimPipeline(const alsim::Model& m, alsim::Data& d) {
  alsim::Kinematics(m, d);
  alsim::Velocity(m, d);
  alsim::MassMatrix(m, d);
  alsim::FactorMassMatrix(m, d);
  alsim::BiasForces(m, d);
}

void MujocoPipeline(const mjModel* m, mjData* d) {
  mj_kinematics(m, d);
  mj_comPos(m, d);
  mj_crb(m, d);
  mj_factorM(m, d);
  mj_comVel(m, d);
  mj_rne(m, d, 0, d->qfrc_bias);
}

// ---- full pipeline, cycling through the states

void BM_Pipeline_alsim(benchmark::State& state, const std::string& file) {
  Scene& scene = GetScene(file);
  int s = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    SetAlsimState(scene, s);
    AlsimPipeline(*scene.model, *scene.data);
    benchmark::DoNotOptimize(scene.data->qfrc_bias.data());
    s = (s + 1) % kStates;
  }
}

void BM_Pipeline_mujoco(benchmark::State& state, const std::string& file) {
  Scene& scene = GetScene(file);
  int s = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    SetMujocoState(scene, s);
    MujocoPipeline(scene.mj_model, scene.mj_data);
    benchmark::DoNotOptimize(scene.mj_data->qfrc_bias);
    s = (s + 1) % kStates;
  }
}

// ---- stages at one state (prerequisites computed once)

void BM_Kinematics_alsim(benchmark::State& state, const std::string& file) {
  Scene& scene = GetScene(file);
  SetAlsimState(scene, 0);
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    alsim::Kinematics(*scene.model, *scene.data);
    benchmark::DoNotOptimize(scene.data->cdof.data());
  }
}

void BM_Kinematics_mujoco(benchmark::State& state, const std::string& file) {
  Scene& scene = GetScene(file);
  SetMujocoState(scene, 0);
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    mj_kinematics(scene.mj_model, scene.mj_data);
    mj_comPos(scene.mj_model, scene.mj_data);
    benchmark::DoNotOptimize(scene.mj_data->cdof);
  }
}

void BM_MassMatrixFactor_alsim(benchmark::State& state, const std::string& file) {
  Scene& scene = GetScene(file);
  SetAlsimState(scene, 0);
  AlsimPipeline(*scene.model, *scene.data);
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    alsim::MassMatrix(*scene.model, *scene.data);
    alsim::FactorMassMatrix(*scene.model, *scene.data);
    benchmark::DoNotOptimize(scene.data->qLD.data());
  }
}

void BM_MassMatrixFactor_mujoco(benchmark::State& state, const std::string& file) {
  Scene& scene = GetScene(file);
  SetMujocoState(scene, 0);
  MujocoPipeline(scene.mj_model, scene.mj_data);
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    mj_crb(scene.mj_model, scene.mj_data);
    mj_factorM(scene.mj_model, scene.mj_data);
    benchmark::DoNotOptimize(scene.mj_data->qLD);
  }
}

void BM_VelocityBias_alsim(benchmark::State& state, const std::string& file) {
  Scene& scene = GetScene(file);
  SetAlsimState(scene, 0);
  AlsimPipeline(*scene.model, *scene.data);
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    alsim::Velocity(*scene.model, *scene.data);
    alsim::BiasForces(*scene.model, *scene.data);
    benchmark::DoNotOptimize(scene.data->qfrc_bias.data());
  }
}

void BM_VelocityBias_mujoco(benchmark::State& state, const std::string& file) {
  Scene& scene = GetScene(file);
  SetMujocoState(scene, 0);
  MujocoPipeline(scene.mj_model, scene.mj_data);
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    mj_comVel(scene.mj_model, scene.mj_data);
    mj_rne(scene.mj_model, scene.mj_data, 0, scene.mj_data->qfrc_bias);
    benchmark::DoNotOptimize(scene.mj_data->qfrc_bias);
  }
}

// Collects each benchmark's time per iteration (the median when repeated) to print the ratios.
void RegisterAll() {
  using Fn = void (*)(benchmark::State&, const std::string&);
  const std::vector<std::pair<std::string, Fn>> benchmarks = {
      {"Pipeline_alsim", BM_Pipeline_alsim},
      {"Pipeline_mujoco", BM_Pipeline_mujoco},
      {"Kinematics_alsim", BM_Kinematics_alsim},
      {"Kinematics_mujoco", BM_Kinematics_mujoco},
      {"MassMatrixFactor_alsim", BM_MassMatrixFactor_alsim},
      {"MassMatrixFactor_mujoco", BM_MassMatrixFactor_mujoco},
      {"VelocityBias_alsim", BM_VelocityBias_alsim},
      {"VelocityBias_mujoco", BM_VelocityBias_mujoco},
  };
  for (const std::string scene : {"humanoid", "22_humanoids"}) {
    const std::string file = "humanoid/" + scene + ".xml";
    for (const auto& [name, fn] : benchmarks) {
      benchmark::RegisterBenchmark((name + "/" + scene).c_str(), fn, file)
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return alsim::bench::RunWithRatios(argc, argv, RegisterAll); }
