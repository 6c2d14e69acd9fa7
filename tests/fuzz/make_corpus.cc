// Writes the seed corpora of the fuzz targets: tests/fuzz/corpus/<target>/<seed>, a few dozen small
// files per target. `make fuzz-corpus` runs it (it replaces the directory); the seeds are
// committed, so run it again only when a format changes (the proto, the snapshot format, the
// scene input encoding).
//
// Usage: alsim_fuzz_make_corpus OUTPUT_DIR SCENES_DIR
//
// Requests address the pool of rpc_harness.h by small ids: instance k (1-based) is the k-th of
// box_stack x2, quadruped_drop_8 x2, box_stack x1 (pgs), box_incline x1 (admm-nosub); group k the
// k-th of those four groups. Snapshots (state_snapshot_fuzzer, set_state_fuzzer) are real ones,
// taken after a few steps, with their checksum and with it zeroed (snapshot_checksum.h).
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "alsim/v1/alsim.pb.h"
#include "engine/data/data.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "tests/fuzz/fuzz_models.h"
#include "tests/fuzz/scene_input.h"

namespace {

using alsim::ModelAsset;
using alsim::fuzz::SceneInput;

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "alsim_fuzz_make_corpus: " << what << "\n";
  std::exit(1);
}

std::string output_dir;

void MakeDirectory(const std::string& path) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    Die("cannot create " + path + ": " + std::strerror(errno));
  }
}

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  MakeDirectory(output_dir + "/" + target);
  const std::string path = output_dir + "/" + target + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out) Die("cannot write " + path);
}

void WriteMessage(const std::string& target, const std::string& name,
                  const google::protobuf::Message& message) {
  Write(target, name, message.SerializeAsString());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Die("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---- scenes ----------------------------------------------------------------------------------

std::string Floats(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), sizeof(float) * values.size());
}

// A binary STL tetrahedron of edge ~h.
std::string TetrahedronStl(float h) {
  const float v[4][3] = {{0, 0, 0}, {h, 0, 0}, {0, h, 0}, {0, 0, h}};
  const int faces[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  std::string stl(80, '\0');
  const std::uint32_t count = 4;
  stl.append(reinterpret_cast<const char*>(&count), 4);
  for (const auto& face : faces) {
    stl += Floats({0, 0, 0});
    for (const int k : face) stl += Floats({v[k][0], v[k][1], v[k][2]});
    stl.append(2, '\0');
  }
  return stl;
}

struct NamedScene {
  std::string name;
  SceneInput scene;
};

std::vector<NamedScene> Scenes(const std::string& scenes_dir) {
  std::vector<NamedScene> scenes;
  auto add = [&](const std::string& name, const std::string& text,
                 std::vector<ModelAsset> assets = {}) {
    scenes.push_back({name, SceneInput{text, std::move(assets)}});
  };
  add("empty", "<mujoco/>");
  add("malformed", "<mujoco><worldbody><body><geom size='0.1'></worldbody>");
  add("box_on_plane", R"(<mujoco>
  <worldbody>
    <geom type="plane" size="1 1 0.1"/>
    <body pos="0 0 0.2"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
  </worldbody>
</mujoco>)");
  add("primitives", R"(<mujoco>
  <option timestep="0.002" gravity="0 0 -9.81"/>
  <default><geom friction="0.7 0.01 0.001" condim="3"/></default>
  <worldbody>
    <geom type="plane" size="0 0 1"/>
    <body pos="0 0 0.3"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body pos="0.3 0 0.3"><freejoint/><geom type="capsule" size="0.05 0.1" euler="0 90 0"/></body>
    <body pos="-0.3 0 0.3"><freejoint/><geom type="cylinder" size="0.08 0.05"/></body>
    <body pos="0 0.3 0.3"><freejoint/><geom type="ellipsoid" size="0.1 0.07 0.05"/></body>
    <body pos="0 -0.3 0.3"><freejoint/><geom type="box" size="0.05 0.05 0.05" margin="0.01"/></body>
  </worldbody>
</mujoco>)");
  add("pendulum_actuators", R"(<mujoco>
  <worldbody>
    <body name="link1" pos="0 0 1">
      <joint name="hinge1" type="hinge" axis="0 1 0" limited="true" range="-90 90" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04"/>
      <body name="link2" pos="0.5 0 0">
        <joint name="hinge2" type="hinge" axis="0 1 0" stiffness="2" armature="0.01"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
      </body>
    </body>
    <body name="cart" pos="0 1 0.5">
      <joint name="slide" type="slide" axis="1 0 0" limited="true" range="-0.5 0.5"/>
      <geom type="box" size="0.1 0.1 0.05"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="hinge1" gear="2" ctrllimited="true" ctrlrange="-1 1"/>
    <position joint="hinge2" kp="30"/>
    <velocity joint="slide" kv="5"/>
  </actuator>
</mujoco>)");
  add("ball_and_free", R"(<mujoco>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
    <body pos="0 0 1">
      <joint type="ball" limited="true" range="0 60"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.05"/>
      <body pos="0 0 -0.4"><joint type="ball"/><geom type="sphere" size="0.08"/></body>
    </body>
    <body pos="0.5 0 0.5"><freejoint/><geom type="sphere" size="0.1" mass="2"/></body>
  </worldbody>
</mujoco>)");
  add("equalities", R"(<mujoco>
  <worldbody>
    <body name="a" pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body name="b" pos="0.3 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body name="c" pos="0 0.5 1"><joint type="hinge" axis="1 0 0"/><geom size="0.05"/></body>
  </worldbody>
  <equality>
    <connect body1="a" body2="b" anchor="0.15 0 0"/>
    <weld body1="c"/>
  </equality>
</mujoco>)");
  add("slider_crank", R"(<mujoco>
  <worldbody>
    <body name="crank" pos="0 0 0.5">
      <joint name="crank" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
      <site name="crank" pos="0.2 0 0"/>
    </body>
    <site name="slider" pos="0 0 1"/>
  </worldbody>
  <actuator>
    <general cranksite="crank" slidersite="slider" cranklength="0.6" gear="1"/>
  </actuator>
</mujoco>)");
  add("filtering", R"(<mujoco>
  <option><flag gravity="enable" contact="enable" limit="disable"/></option>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1" contype="1" conaffinity="1"/>
    <body name="a" pos="0 0 0.2"><freejoint/><geom name="a" size="0.1" contype="2" conaffinity="1"/></body>
    <body name="b" pos="0 0 0.5"><freejoint/><geom name="b" size="0.1" contype="2" conaffinity="2"/></body>
  </worldbody>
  <contact>
    <exclude body1="a" body2="b"/>
    <pair geom1="floor" geom2="b" friction="1 1 0.005 0.0001 0.0001"/>
  </contact>
</mujoco>)");
  add("no_contact_no_gravity", R"(<mujoco>
  <option gravity="0 0 0"><flag contact="disable" constraint="disable"/></option>
  <worldbody><body><freejoint/><geom type="box" size="0.1 0.2 0.3"/></body></worldbody>
</mujoco>)");
  add("fixed_tendon", R"(<mujoco>
  <worldbody>
    <body><joint name="j1" type="hinge"/><geom size="0.1"/></body>
    <body pos="1 0 0"><joint name="j2" type="hinge"/><geom size="0.1"/></body>
  </worldbody>
  <tendon><fixed stiffness="10"><joint joint="j1" coef="1"/><joint joint="j2" coef="-1"/></fixed></tendon>
</mujoco>)");
  add("zero_timestep",
      R"(<mujoco><option timestep="0"/><worldbody><body><freejoint/><geom size="1"/></body></worldbody></mujoco>)");
  add("urdf", R"(<robot name="two_links">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="arm"><inertial><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><cylinder radius="0.05" length="0.5"/></geometry></collision></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>)");
  add("include_asset",
      R"(<mujoco><include file="parts/options.xml"/><worldbody><include file="body.xml"/></worldbody></mujoco>)",
      {{"options.xml", R"(<mujoco><option timestep="0.001"/></mujoco>)"},
       {"body.xml",
        R"(<mujoco><body pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/></body></mujoco>)"}});
  add("mesh_stl",
      R"(<mujoco>
  <asset><mesh name="tet" file="meshes/tet.stl" scale="2 2 2"/></asset>
  <worldbody>
    <geom type="plane" size="1 1 0.1"/>
    <body pos="0 0 0.5"><freejoint/><geom type="mesh" mesh="tet"/></body>
  </worldbody>
</mujoco>)",
      {{"tet.stl", TetrahedronStl(0.2f)}});
  add("mesh_missing", R"(<mujoco><asset><mesh file="missing.stl"/></asset></mujoco>)");
  add("asset_empty", "<mujoco/>", {{"empty.stl", ""}});
  // Files outside the assets: the sandbox makes them fail as missing files.
  add("include_etc_passwd", R"(<mujoco><include file="/etc/passwd"/></mujoco>)");
  add("include_dev_zero", R"(<mujoco><include file="/dev/zero"/></mujoco>)");
  add("mesh_from_disk",
      R"(<mujoco><asset><mesh file="/usr/share/mujoco/model/humanoid/humanoid.xml"/></asset></mujoco>)");
  add("hfield_refused", R"(<mujoco>
  <asset><hfield name="h" nrow="3" ncol="3" size="1 1 0.1 0.1"/></asset>
  <worldbody><geom type="hfield" hfield="h"/></worldbody>
</mujoco>)");
  add("box_incline", ReadFile(scenes_dir + "/box_incline.xml"));
  add("box_stack", ReadFile(scenes_dir + "/box_stack.xml"));
  return scenes;
}

void SceneImportCorpus(const std::vector<NamedScene>& scenes) {
  for (const NamedScene& scene : scenes) {
    Write("scene_import_fuzzer", scene.name, alsim::fuzz::EncodeSceneInput(scene.scene));
  }
}

// ---- the pool's scenes -------------------------------------------------------------------------

struct PoolScene {
  std::shared_ptr<const alsim::Model> model;
};

std::shared_ptr<const alsim::Model> Import(const std::string& path) {
  const alsim::ModelImport imported = alsim::ImportModelFromFile(path);
  if (!imported) Die(path + ": " + imported.error);
  return imported.model;
}

// A snapshot of `model` after `steps` steps with controls `ctrl` (repeated over the actuators).
std::string Snapshot(const alsim::Model& model, int steps, double ctrl) {
  alsim::Data data(model);
  for (int u = 0; u < model.nu; ++u) data.ctrl[u] = ctrl * std::sin(1.0 + u);
  for (int k = 0; k < steps; ++k) {
    if (alsim::Step(model, data) != alsim::StepStatus::kOk) Die("a seed scene diverged");
  }
  return alsim::SaveStateSnapshot(model, data);
}

std::string ZeroChecksum(std::string snapshot) {
  std::memset(snapshot.data() + snapshot.size() - 8, 0, 8);
  return snapshot;
}

// A tensor of `shape` holding value * sin(1 + k) at flat index k.
alsim::v1::Tensor Filled(alsim::v1::DType dtype, std::initializer_list<int> shape, double value) {
  alsim::v1::Tensor tensor;
  tensor.set_dtype(dtype);
  int count = 1;
  for (const int n : shape) {
    tensor.add_shape(n);
    count *= n;
  }
  std::string bytes;
  for (int k = 0; k < count; ++k) {
    const double v = value * std::sin(1.0 + k);
    if (dtype == alsim::v1::DTYPE_FLOAT32) {
      const float f = static_cast<float>(v);
      bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
    } else {
      bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
  }
  tensor.set_data(bytes);
  return tensor;
}

alsim::v1::Tensor Actions(alsim::v1::DType dtype, int batch, int nu, double value) {
  return Filled(dtype, {batch, nu}, value);
}

alsim::v1::InstanceSelection Ids(std::initializer_list<std::uint64_t> ids) {
  alsim::v1::InstanceSelection selection;
  for (const std::uint64_t id : ids) selection.add_instance_ids(id);
  return selection;
}

alsim::v1::InstanceSelection Group(std::uint64_t group) {
  alsim::v1::InstanceSelection selection;
  selection.set_group_id(group);
  return selection;
}

void AllObservations(google::protobuf::RepeatedField<int>* observations) {
  for (int o = alsim::v1::OBSERVATION_QPOS; o <= alsim::v1::OBSERVATION_TIME; ++o) {
    observations->Add(o);
  }
}

// ---- RPC corpora -------------------------------------------------------------------------------

void CreateCorpus(const std::vector<NamedScene>& scenes) {
  const char* const target = "create_fuzzer";
  auto builtin = [&](const std::string& name, const char* scene, std::uint32_t count,
                     const char* solver) {
    alsim::v1::CreateRequest request;
    request.mutable_scene()->set_builtin(scene);
    request.set_count(count);
    request.set_seed(count * 7);
    if (solver != nullptr) request.mutable_solver()->set_solver(solver);
    WriteMessage(target, name, request);
    return request;
  };
  builtin("builtin_box_stack", "box_stack", 1, nullptr);
  builtin("builtin_quadruped_x2", "quadruped_drop_8", 2, nullptr);
  builtin("builtin_box_incline_pgs", "box_incline", 1, "pgs");
  builtin("builtin_ball_pile_nobody", "ball_pile", 1, "admm-nobody");
  builtin("builtin_humanoid", "humanoid", 1, "admm-nosub");
  builtin("builtin_unknown", "no_such_scene", 1, nullptr);
  builtin("builtin_empty", "", 1, nullptr);
  builtin("count_above_limit", "box_stack", 65, nullptr);
  builtin("count_0", "box_stack", 0, nullptr);
  builtin("unknown_solver", "box_stack", 1, "newton");
  alsim::v1::CreateRequest tuned = builtin("solver_config", "box_stack", 3, "subadmm");
  alsim::v1::SolverConfig* solver = tuned.mutable_solver();
  solver->set_max_iterations(50);
  solver->set_tolerance(1e-5);
  solver->set_time_budget_us(0);
  solver->set_relaxation(1.2);
  solver->set_penalty_scaling("pseudo-density");
  solver->mutable_anderson_memory()->set_value(3);
  solver->mutable_delassus_refresh_steps()->set_value(1);
  solver->mutable_response_after_iterations()->set_value(0);
  WriteMessage(target, "solver_config", tuned);
  solver->set_relaxation(2.5);
  solver->mutable_anderson_memory()->set_value(9);
  WriteMessage(target, "solver_config_refused", tuned);
  solver->set_relaxation(0);
  solver->set_max_iterations(5000);
  WriteMessage(target, "solver_iterations_above_limit", tuned);
  alsim::v1::CreateRequest no_scene;
  WriteMessage(target, "no_scene", no_scene);
  // Text scenes, compiled by alsim-scene-compiler (a few: each compile is a process).
  for (const char* name : {"box_on_plane", "pendulum_actuators", "include_asset", "mesh_stl",
                           "malformed", "include_etc_passwd", "urdf", "asset_empty"}) {
    for (const NamedScene& scene : scenes) {
      if (scene.name != name) continue;
      alsim::v1::CreateRequest request;
      alsim::v1::SceneText* text = request.mutable_scene()->mutable_text();
      text->set_text(scene.scene.text);
      text->set_filename(scene.name + ".xml");
      for (const ModelAsset& asset : scene.scene.assets) {
        (*text->mutable_assets())[asset.name] = asset.bytes;
      }
      request.set_count(2);
      WriteMessage(target, std::string("text_") + name, request);
    }
  }
}

void StepCorpus(int quadruped_nu, int quadruped_nbody, int incline_nu) {
  const char* const target = "step_fuzzer";
  auto write = [&](const std::string& name, const alsim::v1::InstanceSelection& selection,
                   std::uint32_t substeps, const alsim::v1::Tensor* actions, bool observe) {
    alsim::v1::StepRequest request;
    *request.mutable_instances() = selection;
    request.set_substeps(substeps);
    if (actions != nullptr) *request.mutable_actions() = *actions;
    if (observe) AllObservations(request.mutable_observations());
    WriteMessage(target, name, request);
    return request;
  };
  write("box_stack_group", Group(1), 1, nullptr, true);
  write("box_stack_ids", Ids({1, 2}), 2, nullptr, false);
  const alsim::v1::Tensor quad64 = Actions(alsim::v1::DTYPE_FLOAT64, 2, quadruped_nu, 0.3);
  const alsim::v1::Tensor quad32 = Actions(alsim::v1::DTYPE_FLOAT32, 1, quadruped_nu, 0.5);
  write("quadruped_group_f64", Group(2), 3, &quad64, true);
  write("quadruped_id_f32", Ids({3}), 1, &quad32, true);
  write("quadruped_wrong_batch", Ids({3}), 1, &quad64, false);
  alsim::v1::Tensor nan = quad32;
  const float not_a_number = std::nanf("");
  nan.mutable_data()->replace(0, sizeof not_a_number, reinterpret_cast<const char*>(&not_a_number),
                              sizeof not_a_number);
  write("quadruped_nan_action", Ids({4}), 1, &nan, false);
  alsim::v1::Tensor int_actions = quad32;
  int_actions.set_dtype(alsim::v1::DTYPE_INT32);
  write("quadruped_int_actions", Ids({4}), 1, &int_actions, false);
  // External forces [K, nbody, 6]: valid in both dtypes, NaN, and a shape that drops a dimension.
  alsim::v1::StepRequest forces;
  *forces.mutable_instances() = Group(2);
  forces.set_substeps(2);
  *forces.mutable_actions() = quad64;
  *forces.mutable_external_forces() =
      Filled(alsim::v1::DTYPE_FLOAT64, {2, quadruped_nbody, 6}, 5.0);
  WriteMessage(target, "quadruped_forces_f64", forces);
  forces.clear_actions();
  *forces.mutable_instances() = Ids({3});
  *forces.mutable_external_forces() =
      Filled(alsim::v1::DTYPE_FLOAT32, {1, quadruped_nbody, 6}, 5.0);
  WriteMessage(target, "quadruped_forces_f32", forces);
  forces.mutable_external_forces()->mutable_data()->replace(
      0, sizeof not_a_number, reinterpret_cast<const char*>(&not_a_number), sizeof not_a_number);
  WriteMessage(target, "quadruped_nan_force", forces);
  *forces.mutable_external_forces() = Filled(alsim::v1::DTYPE_FLOAT32, {1, quadruped_nbody}, 5.0);
  WriteMessage(target, "quadruped_forces_wrong_shape", forces);
  const alsim::v1::Tensor empty = Actions(alsim::v1::DTYPE_FLOAT64, 1, incline_nu, 0);
  write("pgs_group", Group(3), 4, nullptr, true);
  write("incline_nosub", Ids({6}), 5, &empty, true);
  write("different_scenes", Ids({1, 3}), 1, nullptr, false);
  write("repeated_id", Ids({1, 1}), 1, nullptr, false);
  write("unknown_id", Ids({123456789}), 1, nullptr, false);
  write("substeps_above_limit", Group(1), 2000000, nullptr, false);
  alsim::v1::InstanceSelection both = Ids({1});
  both.set_group_id(1);
  write("both_selectors", both, 1, nullptr, false);
  write("no_selection", alsim::v1::InstanceSelection(), 1, nullptr, false);
  alsim::v1::StepRequest bad_observation;
  *bad_observation.mutable_instances() = Group(1);
  bad_observation.add_observations(static_cast<alsim::v1::Observation>(99));
  WriteMessage(target, "unknown_observation", bad_observation);
}

void ResetCorpus() {
  const char* const target = "reset_fuzzer";
  auto write = [&](const std::string& name, const alsim::v1::InstanceSelection& selection,
                   std::vector<std::uint64_t> seeds, double noise, bool observe) {
    alsim::v1::ResetRequest request;
    *request.mutable_instances() = selection;
    for (const std::uint64_t seed : seeds) request.add_seeds(seed);
    request.set_noise(noise);
    if (observe) AllObservations(request.mutable_observations());
    WriteMessage(target, name, request);
  };
  write("group_exact", Group(1), {}, 0, true);
  write("quadrupeds_seeded_noise", Ids({3, 4}), {1, 2}, 0.01, true);
  write("group_noise", Group(2), {}, 0.1, false);
  write("seed_count_mismatch", Ids({1, 2}), {5}, 0, false);
  write("negative_noise", Group(1), {}, -1, false);
  write("huge_noise", Group(1), {}, 1e308, false);
  write("large_noise", Ids({6}), {9}, 1e6, true);
  write("mixed_scenes_observed", Ids({1, 3}), {}, 0, true);
  write("mixed_scenes", Ids({1, 3, 6}), {}, 0.05, false);
  write("unknown_group", Group(987654321), {}, 0, false);
}

void GetStateCorpus() {
  for (std::uint64_t id : {0ull, 1ull, 3ull, 5ull, 6ull, 123456789ull}) {
    alsim::v1::GetStateRequest request;
    request.set_instance_id(id);
    WriteMessage("get_state_fuzzer", "instance_" + std::to_string(id), request);
  }
}

void SetStateCorpus(const std::map<std::string, std::shared_ptr<const alsim::Model>>& models) {
  const char* const target = "set_state_fuzzer";
  auto write = [&](const std::string& name, std::uint64_t id, const std::string& state) {
    alsim::v1::SetStateRequest request;
    request.set_instance_id(id);
    request.set_state(state);
    WriteMessage(target, name, request);
  };
  const struct {
    const char* scene;
    std::uint64_t id;
  } pool[] = {{"box_stack", 1}, {"quadruped_drop_8", 3}, {"box_incline", 6}};
  for (const auto& [scene, id] : pool) {
    const alsim::Model& model = *models.at(scene);
    for (const int steps : {0, 20}) {
      const std::string snapshot = Snapshot(model, steps, 0.3);
      const std::string name = std::string(scene) + "_" + std::to_string(steps);
      write(name, id, snapshot);
      write(name + "_zero_checksum", id, ZeroChecksum(snapshot));
    }
  }
  const std::string quadruped = Snapshot(*models.at("quadruped_drop_8"), 5, 0.3);
  write("foreign_model", 1, ZeroChecksum(quadruped));
  write("truncated", 3, quadruped.substr(0, quadruped.size() / 2));
  write("empty", 3, "");
  write("unknown_id", 123456789, ZeroChecksum(quadruped));
}

void DestroyCorpus() {
  const char* const target = "destroy_fuzzer";
  auto write = [&](const std::string& name, const alsim::v1::InstanceSelection& selection) {
    alsim::v1::DestroyRequest request;
    *request.mutable_instances() = selection;
    WriteMessage(target, name, request);
  };
  write("one_instance", Ids({1}));
  write("group", Group(2));
  write("several", Ids({3, 5, 6}));
  write("repeated", Ids({2, 2}));
  write("unknown_id", Ids({123456789}));
  write("nothing", alsim::v1::InstanceSelection());
  alsim::v1::InstanceSelection both = Ids({1});
  both.set_group_id(1);
  write("both_selectors", both);
}

void StreamStatesCorpus() {
  const char* const target = "stream_states_fuzzer";
  auto write = [&](const std::string& name, const alsim::v1::InstanceSelection& selection,
                   double rate, bool observe) {
    alsim::v1::StreamStatesRequest request;
    *request.mutable_instances() = selection;
    request.set_rate_hz(rate);
    if (observe) AllObservations(request.mutable_observations());
    WriteMessage(target, name, request);
  };
  write("group_default", Group(1), 0, false);
  write("quadrupeds_fast_all", Ids({3, 4}), 1000, true);
  write("mixed_scenes", Ids({1, 3}), 200, false);
  write("rate_negative", Group(2), -5, false);
  write("rate_above_limit", Group(2), 5000, false);
  write("unknown_id", Ids({123456789}), 100, false);
  write("nothing", alsim::v1::InstanceSelection(), 100, false);
}

void StepStreamCorpus(int quadruped_nu) {
  const char* const target = "step_stream_fuzzer";
  auto write = [&](const std::string& name, const std::vector<alsim::v1::StepRequest>& requests) {
    std::string bytes;
    for (const alsim::v1::StepRequest& request : requests) {
      const std::string message = request.SerializeAsString();
      bytes += '\x0a';
      std::uint32_t length = static_cast<std::uint32_t>(message.size());
      do {
        const std::uint8_t low = length & 0x7f;
        length >>= 7;
        bytes += static_cast<char>(length != 0 ? (low | 0x80) : low);
      } while (length != 0);
      bytes += message;
    }
    Write(target, name, bytes);
  };
  alsim::v1::StepRequest box;
  *box.mutable_instances() = Group(1);
  box.add_observations(alsim::v1::OBSERVATION_QPOS);
  alsim::v1::StepRequest quad;
  *quad.mutable_instances() = Ids({3, 4});
  *quad.mutable_actions() = Actions(alsim::v1::DTYPE_FLOAT64, 2, quadruped_nu, 0.2);
  quad.set_substeps(2);
  AllObservations(quad.mutable_observations());
  alsim::v1::StepRequest bad;
  *bad.mutable_instances() = Ids({1, 3});
  write("one", {box});
  write("three", {box, quad, box});
  write("error_in_middle", {box, bad, quad});
  write("empty_stream", {});
  std::vector<alsim::v1::StepRequest> many(10, box);
  write("ten", many);
}

void InfoListCorpus() {
  Write("info_list_fuzzer", "empty", "");
  // Unknown fields: a varint, a string and a fixed64.
  Write("info_list_fuzzer", "unknown_fields",
        std::string("\x08\x01\x12\x03"
                    "abc\x19",
                    8) +
            std::string(8, '\x01'));
}

void StateSnapshotCorpus() {
  const alsim::ModelImport imported = alsim::ImportModelFromString(alsim::fuzz::kSnapshotModelXml);
  if (!imported) Die("the snapshot model does not import: " + imported.error);
  for (const int steps : alsim::fuzz::kSnapshotSeedSteps) {
    const std::string snapshot = Snapshot(*imported.model, steps, 0.8);
    const std::string name = "steps_" + std::to_string(steps);
    Write("state_snapshot_fuzzer", name, snapshot);
    Write("state_snapshot_fuzzer", name + "_zero_checksum", ZeroChecksum(snapshot));
  }
  Write("state_snapshot_fuzzer", "magic_only", std::string(alsim::kStateSnapshotMagic, 8));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) Die("usage: alsim_fuzz_make_corpus OUTPUT_DIR SCENES_DIR");
  output_dir = argv[1];
  const std::string scenes_dir = argv[2];
  alsim::InstallMujocoHandlers();
  MakeDirectory(output_dir);
  std::map<std::string, std::shared_ptr<const alsim::Model>> models;
  for (const char* scene : {"box_stack", "quadruped_drop_8", "box_incline"}) {
    models[scene] = Import(scenes_dir + "/" + scene + ".xml");
  }
  const std::vector<NamedScene> scenes = Scenes(scenes_dir);
  SceneImportCorpus(scenes);
  StateSnapshotCorpus();
  CreateCorpus(scenes);
  StepCorpus(models.at("quadruped_drop_8")->nu, models.at("quadruped_drop_8")->nbody,
             models.at("box_incline")->nu);
  ResetCorpus();
  GetStateCorpus();
  SetStateCorpus(models);
  DestroyCorpus();
  StreamStatesCorpus();
  StepStreamCorpus(models.at("quadruped_drop_8")->nu);
  InfoListCorpus();
  return 0;
}
