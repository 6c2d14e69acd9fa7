// Collision detection per step, alsim's Collision() against MuJoCo's mj_collision() on the same
// states in one binary: humanoid100 and 22_humanoids, falling (shortly after the start) and
// settled (after MuJoCo has simulated them to rest). States come from MuJoCo's own simulation, so
// both engines see exactly the same geometry.
//
// ConvexPairs/*: the general convex routine alone, per pair type, on the pairs of alsim's own
// trajectory (below), where resting objects are apart by a speculative margin's worth or less.
#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>
#include <oneapi/tbb/global_control.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/ratio_reporter.h"
#include "engine/collision/broadphase.h"
#include "engine/collision/collision.h"
#include "engine/collision/collision_filter.h"
#include "engine/collision/narrowphase.h"
#include "engine/data/data.h"
#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"

namespace {

const std::string kSamples = "/usr/share/mujoco/model/";

// One scene in both engines at one state.
struct SceneState {
  std::shared_ptr<const alsim::Model> model;
  std::unique_ptr<alsim::Data> data;
  mjModel* mj_model = nullptr;
  mjData* mj_data = nullptr;

  SceneState(const std::string& file, int mujoco_steps) {
    const alsim::ModelImport imported = alsim::ImportModelFromFile(kSamples + file);
    if (!imported) throw std::runtime_error(imported.error);
    model = imported.model;
    data = std::make_unique<alsim::Data>(*model);
    char error[1000] = "";
    mj_model = mj_loadXML((kSamples + file).c_str(), nullptr, error, sizeof error);
    if (mj_model == nullptr) throw std::runtime_error(error);
    mj_data = mj_makeData(mj_model);
    for (int n = 0; n < mujoco_steps; ++n) mj_step(mj_model, mj_data);
    mj_forward(mj_model, mj_data);
    std::copy(mj_data->qpos, mj_data->qpos + mj_model->nq, data->qpos.begin());
    alsim::Kinematics(*model, *data);
    alsim::Collision(*model, *data);  // warm-up: sizes the buffers
  }
  ~SceneState() {
    mj_deleteData(mj_data);
    mj_deleteModel(mj_model);
  }
  SceneState(const SceneState&) = delete;
  SceneState& operator=(const SceneState&) = delete;
};

// The scene in both engines after MuJoCo has simulated it: falling, 0.6 s in (the first bodies
// landing), or settled, 4 s in.
std::unique_ptr<SceneState> SceneAt(const std::string& file, bool settled) {
  const double seconds = settled ? 4.0 : 0.6;
  char error[1000] = "";
  mjModel* probe = mj_loadXML((kSamples + file).c_str(), nullptr, error, sizeof error);
  if (probe == nullptr) throw std::runtime_error(error);
  const int steps = static_cast<int>(seconds / probe->opt.timestep);
  mj_deleteModel(probe);
  return std::make_unique<SceneState>(file, steps);
}

// threads = 0: TBB's default (all cores); 1: the narrowphase on the calling thread only.
void RunAlsim(benchmark::State& state, const std::string& file, bool settled, int threads) {
  std::unique_ptr<tbb::global_control> limit;
  if (threads > 0) {
    limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                  threads);
  }
  const auto scene_ptr = SceneAt(file, settled);
  SceneState& scene = *scene_ptr;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    alsim::Collision(*scene.model, *scene.data);
    benchmark::DoNotOptimize(scene.data->contact.data());
  }
  state.counters["contacts"] = static_cast<double>(scene.data->contact.size());
  state.counters["candidates"] = static_cast<double>(scene.data->collision_candidates.size());
}

void BM_Collision_alsim(benchmark::State& state, const std::string& file, bool settled) {
  RunAlsim(state, file, settled, 0);
}

void BM_CollisionOneThread(benchmark::State& state, const std::string& file, bool settled) {
  RunAlsim(state, file, settled, 1);
}

void BM_Collision_mujoco(benchmark::State& state, const std::string& file, bool settled) {
  const auto scene_ptr = SceneAt(file, settled);
  SceneState& scene = *scene_ptr;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    mj_collision(scene.mj_model, scene.mj_data);
    benchmark::DoNotOptimize(scene.mj_data->ncon);
  }
  state.counters["contacts"] = scene.mj_data->ncon;
}

// The broadphase alone, and the all-pairs box test it replaces (same boxes, same filter): the
// measurement behind choosing sweep and prune.
void BM_BroadphaseSweep(benchmark::State& state, const std::string& file, bool settled) {
  const auto scene_ptr = SceneAt(file, settled);
  SceneState& scene = *scene_ptr;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    alsim::Broadphase(*scene.model, *scene.data);
    benchmark::DoNotOptimize(scene.data->collision_candidates.data());
  }
}

void BM_BroadphaseAllPairs(benchmark::State& state, const std::string& file, bool settled) {
  const auto scene_ptr = SceneAt(file, settled);
  SceneState& scene = *scene_ptr;
  const alsim::Model& m = *scene.model;
  const alsim::Data& d = *scene.data;  // boxes from the warm-up Collision() call
  const std::vector<int>& geoms = d.sweep_order;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    int overlapping = 0;
    for (size_t i = 0; i < geoms.size(); ++i) {
      for (size_t j = i + 1; j < geoms.size(); ++j) {
        const int a = geoms[i], b = geoms[j];
        if ((d.geom_aabb_lo[a].array() <= d.geom_aabb_hi[b].array()).all() &&
            (d.geom_aabb_lo[b].array() <= d.geom_aabb_hi[a].array()).all() &&
            alsim::MayCollide(m, a, b)) {
          ++overlapping;
        }
      }
    }
    benchmark::DoNotOptimize(overlapping);
  }
}

// One candidate of the general convex routine as the narrowphase saw it.
struct RecordedPair {
  alsim::GeomShape a;
  alsim::GeomShape b;
  double margin;
};

const char* TypeName(alsim::GeomType type) {
  static const char* const kNames[] = {"plane",     "hfield",   "sphere", "capsule",
                                       "ellipsoid", "cylinder", "box",    "mesh"};
  return kNames[static_cast<int>(type)];
}

// The general-convex candidates of humanoid100's first 500 steps in alsim (1 thread, default
// options), by pair type ("ellipsoid-cylinder", lower type first). MuJoCo's states above have the
// objects resting in penetration, so they never reach the apart pairs that the certificates of
// smooth_pair_distance.h take off GJK.
std::map<std::string, std::vector<RecordedPair>> RecordTrajectoryPairs() {
  const tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
  const alsim::ModelImport imported =
      alsim::ImportModelFromFile(kSamples + "humanoid100/humanoid100.xml");
  if (!imported) throw std::runtime_error(imported.error);
  const alsim::Model& m = *imported.model;
  alsim::Data d(m);
  std::map<std::string, std::vector<RecordedPair>> pairs;
  for (int step = 0; step < 500; ++step) {
    if (alsim::Step(m, d) != alsim::StepStatus::kOk) throw std::runtime_error("step failed");
    for (const alsim::CollisionCandidate& c : d.collision_candidates) {
      alsim::GeomType t1 = m.geom_type[c.geom1], t2 = m.geom_type[c.geom2];
      if (alsim::CollideShapesCost(t1, t2) < alsim::kGeneralConvexPairCost) continue;
      if (t1 > t2) std::swap(t1, t2);
      pairs[std::string(TypeName(t1)) + "-" + TypeName(t2)].push_back(
          {alsim::ShapeOfGeom(m, d, c.geom1), alsim::ShapeOfGeom(m, d, c.geom2), c.margin});
    }
  }
  return pairs;
}

void BM_ConvexPairs(benchmark::State& state, const std::vector<RecordedPair>* pairs) {
  alsim::Contact out[alsim::kMaxContactsPerPair];
  int contacts = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    contacts = 0;
    for (const RecordedPair& p : *pairs) contacts += alsim::CollideShapes(p.a, p.b, p.margin, out);
    benchmark::DoNotOptimize(contacts);
  }
  state.counters["pairs"] = static_cast<double>(pairs->size());
  state.counters["contacts"] = contacts;
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(pairs->size()));  // pairs/s
}

void RegisterAll() {
  static const std::map<std::string, std::vector<RecordedPair>> trajectory_pairs =
      RecordTrajectoryPairs();
  for (const auto& [type, pairs] : trajectory_pairs) {
    benchmark::RegisterBenchmark(("ConvexPairs/humanoid100_alsim/" + type).c_str(), BM_ConvexPairs,
                                 &pairs)
        ->Unit(benchmark::kMicrosecond);
  }
  for (const char* scene : {"humanoid100/humanoid100.xml", "humanoid/22_humanoids.xml"}) {
    for (const bool settled : {false, true}) {
      std::string label = scene;
      label = label.substr(label.find('/') + 1);
      label = label.substr(0, label.find('.')) + (settled ? "_settled" : "_falling");
      benchmark::RegisterBenchmark(("Collision_alsim/" + label).c_str(), BM_Collision_alsim,
                                   std::string(scene), settled)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("Collision_mujoco/" + label).c_str(), BM_Collision_mujoco,
                                   std::string(scene), settled)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("CollisionOneThread/" + label).c_str(), BM_CollisionOneThread,
                                   std::string(scene), settled)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("BroadphaseSweep/" + label).c_str(), BM_BroadphaseSweep,
                                   std::string(scene), settled)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("BroadphaseAllPairs/" + label).c_str(), BM_BroadphaseAllPairs,
                                   std::string(scene), settled)
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) { return alsim::bench::RunWithRatios(argc, argv, RegisterAll); }
