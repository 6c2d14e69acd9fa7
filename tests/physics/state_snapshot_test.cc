// State snapshots (engine/sim/state_snapshot.h): resuming from a saved state is bit-exact for
// every solver, into a fresh instance and into one that has moved on; a snapshot survives a round
// trip byte for byte; broken or foreign snapshots are refused with a reason and change nothing.
#include "engine/sim/state_snapshot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/data/constraint_set.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"

namespace alsim {
namespace {

const std::string kScenes = std::string(ALSIM_SCENES_DIR) + "/";

// Each scene is imported once for the whole test program.
const Model& Scene(const std::string& file) {
  static std::map<std::string, std::shared_ptr<const Model>> models;
  auto& model = models[file];
  if (model == nullptr) {
    const ModelImport imported = ImportModelFromFile(kScenes + file);
    if (!imported) throw std::runtime_error(imported.error);
    model = imported.model;
  }
  return *model;
}

std::shared_ptr<const Model> FromString(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml);
  if (!imported) throw std::runtime_error(imported.error);
  return imported.model;
}

StepOptions Options(SolverType type) {
  StepOptions options;
  options.solver.type = type;
  options.solver.compute_residual = false;  // diagnostics only; saves time
  return options;
}

// Nonzero controls: the quadrupeds' servos hold a posture other than q = 0.
void SetControls(const Model& m, Data& d) {
  for (int u = 0; u < m.nu; ++u) d.ctrl[u] = 0.3 * std::sin(1.0 + u);
}

void StepMany(const Model& m, Data& d, const StepOptions& options, int steps) {
  for (int n = 0; n < steps; ++n) {
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk) << "step " << n << " at t = " << d.time;
  }
}

bool SameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
}

// ---- bit-exact resume --------------------------------------------------------------------------

// Steps before and after the snapshot. Quadrupeds at step 150 (0.625 s): landed, feet in contact,
// servos and limits active. Ball pile at step 100: 180 contacts in 7 islands that merge into one
// within the next 20 steps; fewer steps there, as its 600-dof "No Sub" steps are slow.
struct ResumeSteps {
  int before, after;
};
ResumeSteps StepsOf(const std::string& scene) {
  return scene == "ball_pile.xml" ? ResumeSteps{100, 50} : ResumeSteps{150, 100};
}

class StateSnapshotResumeTest
    : public ::testing::TestWithParam<std::tuple<const char*, SolverType>> {};

TEST_P(StateSnapshotResumeTest, ResumesBitExactly) {
  const Model& m = Scene(std::get<0>(GetParam()));
  const StepOptions options = Options(std::get<1>(GetParam()));
  const ResumeSteps steps = StepsOf(std::get<0>(GetParam()));

  Data original(m);
  SetControls(m, original);
  StepMany(m, original, options, steps.before);
  ASSERT_GT(original.solver_statistics.contacts, 0) << "the snapshot should be mid-contact";
  ASSERT_FALSE(original.warm_start.key.empty());
  const std::string snapshot = SaveStateSnapshot(m, original);

  StepMany(m, original, options, steps.after);
  const std::vector<double> qpos = original.qpos, qvel = original.qvel;
  const std::string final_state = SaveStateSnapshot(m, original);

  // A fresh instance (no solver yet, no history).
  Data fresh(m);
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(m, snapshot, fresh, &error)) << error;
  EXPECT_EQ(SaveStateSnapshot(m, fresh), snapshot) << "round trip";
  StepMany(m, fresh, options, steps.after);
  EXPECT_TRUE(SameBits(fresh.qpos, qpos));
  EXPECT_TRUE(SameBits(fresh.qvel, qvel));
  EXPECT_EQ(fresh.time, original.time);
  EXPECT_EQ(SaveStateSnapshot(m, fresh), final_state) << "warm start and margins too";

  // The original instance, which has moved on: its solver keeps whatever caches it has.
  ASSERT_TRUE(RestoreStateSnapshot(m, snapshot, original, &error)) << error;
  EXPECT_EQ(SaveStateSnapshot(m, original), snapshot) << "round trip";
  StepMany(m, original, options, steps.after);
  EXPECT_TRUE(SameBits(original.qpos, qpos));
  EXPECT_TRUE(SameBits(original.qvel, qvel));
  EXPECT_EQ(SaveStateSnapshot(m, original), final_state);
}

std::string StateSnapshotResumeTestName(
    const ::testing::TestParamInfo<std::tuple<const char*, SolverType>>& info) {
  std::string name =
      std::string(std::get<0>(info.param)) + "_" + SolverName(std::get<1>(info.param));
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    ScenesAndSolvers, StateSnapshotResumeTest,
    ::testing::Combine(::testing::Values("quadruped_drop_8.xml", "ball_pile.xml"),
                       ::testing::Values(SolverType::kSubAdmm, SolverType::kPgs,
                                         SolverType::kAdmmNoSub, SolverType::kAdmmNoBody)),
    StateSnapshotResumeTestName);

// A step without speculative contacts keeps the margins of the last step that had them: they are
// state, and a restored instance must get them back rather than zeros.
TEST(StateSnapshotTest, KeepsTheSpeculativeMarginsOfTheLastStep) {
  const Model& m = Scene("quadruped_drop_8.xml");
  StepOptions options = Options(SolverType::kSubAdmm);
  Data original(m);
  SetControls(m, original);
  StepMany(m, original, options, 60);
  const std::string snapshot = SaveStateSnapshot(m, original);
  options.constraints.speculative_contacts = false;
  StepMany(m, original, options, 40);

  Data restored(m);
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(m, snapshot, restored, &error)) << error;
  StepMany(m, restored, options, 40);
  EXPECT_TRUE(SameBits(restored.qpos, original.qpos));
  EXPECT_TRUE(SameBits(restored.qvel, original.qvel));
}

// After a restore the derived quantities describe the restored state, and the last step's outputs
// are gone, as in a new instance.
TEST(StateSnapshotTest, RestoreLeavesConsistentDerivedQuantities) {
  const Model& m = Scene("quadruped_drop_8.xml");
  const StepOptions options = Options(SolverType::kSubAdmm);
  Data source(m);
  SetControls(m, source);
  StepMany(m, source, options, 120);
  const std::string snapshot = SaveStateSnapshot(m, source);

  Data target(m);
  StepMany(m, target, options, 30);  // somewhere else, with contacts of its own
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(m, snapshot, target, &error)) << error;
  Data expected(m);
  expected.qpos = source.qpos;
  expected.qvel = source.qvel;
  expected.ctrl = source.ctrl;
  Forward(m, expected);
  for (int b = 0; b < m.nbody; ++b) {
    EXPECT_EQ(target.xpos[b], expected.xpos[b]) << m.body_name[b];
    EXPECT_EQ(target.xquat[b], expected.xquat[b]) << m.body_name[b];
    EXPECT_EQ(target.cvel[b], expected.cvel[b]) << m.body_name[b];
  }
  EXPECT_TRUE(SameBits(target.qacc, expected.qacc));
  EXPECT_TRUE(target.contact.empty());
  EXPECT_TRUE(target.constraints.constraints.empty());
  EXPECT_EQ(target.islands.num, 0);
  EXPECT_EQ(target.solver_statistics.contacts, 0);
}

TEST(StateSnapshotTest, RoundTripIsByteForByte) {
  const Model& m = Scene("ball_pile.xml");
  Data d(m);
  StepMany(m, d, Options(SolverType::kSubAdmm), 60);
  ASSERT_GT(d.solver_statistics.contacts, 0);
  d.qvel[0] = -0.0;  // bit patterns survive, signed zeros included
  const std::string saved = SaveStateSnapshot(m, d);
  Data restored(m);
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(m, saved, restored, &error)) << error;
  EXPECT_EQ(SaveStateSnapshot(m, restored), saved);
  EXPECT_TRUE(std::signbit(restored.qvel[0]));
  EXPECT_EQ(StateHash(m, restored), StateHash(m, d));
  // The documented size: header 60, five counted arrays (xfrc_applied empty: no forces), the
  // warm start, the checksum.
  const size_t doubles = static_cast<size_t>(m.nq) + m.nv + m.nu + m.ngeom;
  // The angular impulses (condim 4/6 only) and the vertex state (no deformables) cost their
  // counts' 4 bytes each here.
  EXPECT_EQ(saved.size(), 60 + 20 + 8 * doubles + 4 + 72 * d.warm_start.key.size() + 4 + 4 + 8);
  EXPECT_EQ(saved.compare(0, 8, "ALSIMST1"), 0);
}

// xfrc_applied is an input that stays until changed, as ctrl: saved with the state (every body's
// six numbers as soon as one is not +0.0), and a resumed instance steps on under the same forces.
TEST(StateSnapshotTest, KeepsTheAppliedForces) {
  const Model& m = Scene("quadruped_drop_8.xml");
  const StepOptions options = Options(SolverType::kSubAdmm);
  Data original(m);
  SetControls(m, original);
  for (int b = 1; b < m.nbody; ++b) {
    original.xfrc_applied[b] << 3.0 * std::sin(b), 0.0, 20.0, 0.1, -0.2 * std::cos(b), 0.0;
  }
  original.xfrc_applied[0][4] = -0.0;  // bit patterns survive here too
  StepMany(m, original, options, 80);
  const std::string snapshot = SaveStateSnapshot(m, original);
  const size_t doubles = static_cast<size_t>(m.nq) + m.nv + m.nu + 6 * m.nbody + m.ngeom;
  EXPECT_EQ(snapshot.size(),
            60 + 20 + 8 * doubles + 4 + 72 * original.warm_start.key.size() + 4 + 4 + 8);
  StepMany(m, original, options, 60);

  Data restored(m);
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(m, snapshot, restored, &error)) << error;
  EXPECT_EQ(SaveStateSnapshot(m, restored), snapshot) << "round trip";
  EXPECT_TRUE(std::signbit(restored.xfrc_applied[0][4]));
  EXPECT_EQ(restored.xfrc_applied[5], original.xfrc_applied[5]);
  StepMany(m, restored, options, 60);
  EXPECT_TRUE(SameBits(restored.qpos, original.qpos));
  EXPECT_TRUE(SameBits(restored.qvel, original.qvel));

  // A snapshot without forces clears the forces of the instance it is restored into.
  Data plain(m);
  ASSERT_TRUE(RestoreStateSnapshot(m, SaveStateSnapshot(m, plain), restored, &error)) << error;
  for (int b = 0; b < m.nbody; ++b) {
    EXPECT_EQ(restored.xfrc_applied[b], Vec6::Zero()) << b;
    EXPECT_FALSE(std::signbit(restored.xfrc_applied[b][4])) << b;
  }
}

// Format version 2 (no xfrc_applied) is still read: a snapshot written by the server before
// version 3 (box_stack, builtin defaults, 40 steps without actions, then GetState) restores to the
// state that 40 in-process steps reach today, with no applied forces.
TEST(StateSnapshotTest, ReadsVersion2SnapshotsWithoutForces) {
  const std::string path = std::string(ALSIM_TEST_DATA_DIR) + "/box_stack_40_steps_v2.snapshot";
  std::FILE* file = std::fopen(path.c_str(), "rb");
  ASSERT_NE(file, nullptr) << path;
  std::string bytes;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) bytes.append(buffer, n);
  std::fclose(file);
  std::uint32_t version = 0;
  ASSERT_GE(bytes.size(), 12u);
  std::memcpy(&version, bytes.data() + 8, sizeof version);
  ASSERT_EQ(version, 2u);

  const Model& m = Scene("box_stack.xml");
  Data expected(m);
  StepMany(m, expected, StepOptions{}, 40);
  Data restored(m);
  restored.xfrc_applied[1] << 1, 2, 3, 4, 5, 6;  // cleared by the restore
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(m, bytes, restored, &error)) << error;
  EXPECT_EQ(SaveStateSnapshot(m, restored), SaveStateSnapshot(m, expected));
  EXPECT_EQ(restored.xfrc_applied[1], Vec6::Zero());
}

// ---- the deformables' vertex state (format version 5) ------------------------------------------

// The last 8 bytes recomputed: the 64-bit FNV-1a of every byte before them.
void Rechecksum(std::string* bytes) {
  const std::uint64_t hash = HashBytes(kFnvOffsetBasis, bytes->data(), bytes->size() - 8);
  std::memcpy(&(*bytes)[bytes->size() - 8], &hash, 8);
}

// A version 5 snapshot as version 4 wrote it: version 4 in the header, no vertex section (which
// is the last field before the checksum), a new checksum.
std::string AsVersion4(const std::string& v5, int nvert) {
  std::string bytes = v5;
  const std::uint32_t version = 4;
  std::memcpy(&bytes[8], &version, sizeof version);
  const size_t vertex_bytes = 4 + 48 * static_cast<size_t>(nvert);
  bytes.erase(bytes.size() - 8 - vertex_bytes, vertex_bytes);
  Rechecksum(&bytes);
  return bytes;
}

// A rigid scene (a free box resting on the floor) with or without one deformable: a tet with one
// vertex pinned in the world and two carried by the box, from a companion file (custom text
// alsim:deformables, engine/model/deformable_spec.h).
constexpr char kRigidPart[] =
    "<worldbody><geom type='plane' size='5 5 0.1'/>"
    "<body name='box' pos='0 0 0.1'><freejoint/><geom type='box' size='.1 .1 .1'/></body>"
    "</worldbody></mujoco>";

std::shared_ptr<const Model> WithDeformable() {
  const std::string scene =
      std::string("<mujoco><custom><text name='alsim:deformables' data='soft.xml'/></custom>") +
      kRigidPart;
  const std::string soft =
      "<deformables><deformable name='pad' young='1e5' density='800'>"
      "<tetmesh vertices='1 0 0.2  0.05 0 0.2  0 0.05 0.2  1 0 0.3' tets='0 2 1 3'/>"
      "<pin vertices='3'/><attach body='box' vertices='1 2'/></deformable></deformables>";
  const ModelImport imported = ImportModelFromString(scene, {{"soft.xml", soft}}, "scene.xml");
  if (!imported) throw std::runtime_error(imported.error);
  return imported.model;
}

std::shared_ptr<const Model> WithoutDeformable() {
  return FromString(std::string("<mujoco>") + kRigidPart);
}

// Every bit of the vertex state, -0.0 included, not only what a step would produce.
void SetVertexState(Data& d) {
  for (size_t v = 0; v < d.vert_xpos.size(); ++v) {
    d.vert_xpos[v] += Vec3(0.01 * std::sin(1.0 + v), -0.02 * std::cos(2.0 + v), 1e-3 * v);
    d.vert_xvel[v] = Vec3(0.3 * std::sin(3.0 + v), 0.1 * v, -0.5 / (1.0 + v));
  }
  d.vert_xvel[0].x() = -0.0;
}

bool SameBits(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(Vec3) * a.size()) == 0;
}

TEST(StateSnapshotTest, KeepsTheVertexStateBitForBit) {
  const auto model = WithDeformable();
  const Model& m = *model;
  ASSERT_EQ(m.nvert, 4);
  Data original(m);
  StepMany(m, original, Options(SolverType::kSubAdmm), 20);
  SetVertexState(original);
  const std::string saved = SaveStateSnapshot(m, original);
  std::uint32_t version = 0;
  std::memcpy(&version, saved.data() + 8, sizeof version);
  EXPECT_EQ(version, 5u);
  EXPECT_EQ(version, kStateSnapshotVersion);
  // The documented size: the vertex section is its count and 6 doubles per vertex.
  const size_t doubles = static_cast<size_t>(m.nq) + m.nv + m.nu + m.ngeom;
  EXPECT_EQ(saved.size(), 60 + 20 + 8 * doubles + 4 + 72 * original.warm_start.key.size() + 4 + 4 +
                              48 * static_cast<size_t>(m.nvert) + 8);

  Data restored(m);
  ASSERT_TRUE(SameBits(restored.vert_xpos, m.vert_pos0));
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(m, saved, restored, &error)) << error;
  EXPECT_TRUE(SameBits(restored.vert_xpos, original.vert_xpos));
  EXPECT_TRUE(SameBits(restored.vert_xvel, original.vert_xvel));
  EXPECT_TRUE(std::signbit(restored.vert_xvel[0].x()));
  EXPECT_TRUE(SameBits(restored.qpos, original.qpos));
  EXPECT_TRUE(SameBits(restored.qvel, original.qvel));
  EXPECT_EQ(StateHash(m, restored), StateHash(m, original));
  EXPECT_EQ(SaveStateSnapshot(m, restored), saved) << "round trip";
  // The vertex state is in the hash: the fresh instance's differs.
  EXPECT_NE(StateHash(m, Data(m)), StateHash(m, original));

  // A fresh instance's snapshot puts the vertices back at rest, not moving.
  ASSERT_TRUE(RestoreStateSnapshot(m, SaveStateSnapshot(m, Data(m)), restored, &error)) << error;
  EXPECT_TRUE(SameBits(restored.vert_xpos, m.vert_pos0));
  EXPECT_EQ(restored.vert_xvel, std::vector<Vec3>(4, Vec3::Zero()));
}

// Version 4 had no vertex state: it is still read, the vertices then at rest and not moving.
TEST(StateSnapshotTest, ReadsVersion4Snapshots) {
  // Without deformables: the version 4 bytes restore to the state they were taken from.
  const Model& rigid = Scene("quadruped_drop_8.xml");
  Data source(rigid);
  SetControls(rigid, source);
  StepMany(rigid, source, Options(SolverType::kSubAdmm), 30);
  const std::string v5 = SaveStateSnapshot(rigid, source);
  const std::string v4 = AsVersion4(v5, 0);
  ASSERT_EQ(v4.size(), v5.size() - 4);
  Data restored(rigid);
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(rigid, v4, restored, &error)) << error;
  EXPECT_EQ(SaveStateSnapshot(rigid, restored), v5);
  EXPECT_EQ(StateHash(rigid, restored), StateHash(rigid, source));

  // With a deformable: the rest positions and zero velocities.
  const auto model = WithDeformable();
  Data moved(*model);
  SetVertexState(moved);
  Data target(*model);
  SetVertexState(target);
  ASSERT_TRUE(
      RestoreStateSnapshot(*model, AsVersion4(SaveStateSnapshot(*model, moved), 4), target, &error))
      << error;
  EXPECT_TRUE(SameBits(target.vert_xpos, model->vert_pos0));
  EXPECT_EQ(target.vert_xvel, std::vector<Vec3>(4, Vec3::Zero()));
  EXPECT_TRUE(SameBits(target.qpos, moved.qpos));
}

// The fingerprint leaves deformables out (so that the fingerprints of scenes without them stay
// what they were); the vertex count is checked instead, with a reason that names it.
TEST(StateSnapshotTest, RefusesAnotherVertexCount) {
  const auto soft = WithDeformable();
  const auto rigid = WithoutDeformable();
  ASSERT_EQ(ModelFingerprint(*soft), ModelFingerprint(*rigid));
  Data with(*soft), without(*rigid);
  SetVertexState(with);
  const std::string without_state = SaveStateSnapshot(*rigid, without);
  const std::string with_state = SaveStateSnapshot(*soft, with);
  std::string error;
  EXPECT_FALSE(RestoreStateSnapshot(*rigid, with_state, without, &error));
  EXPECT_NE(error.find("deformable vertex state has 4 vertices, this model has 0"),
            std::string::npos)
      << error;
  EXPECT_EQ(SaveStateSnapshot(*rigid, without), without_state);
  const std::string before = SaveStateSnapshot(*soft, with);
  EXPECT_FALSE(RestoreStateSnapshot(*soft, without_state, with, &error));
  EXPECT_NE(error.find("deformable vertex state has 0 vertices, this model has 4"),
            std::string::npos)
      << error;
  EXPECT_EQ(SaveStateSnapshot(*soft, with), before) << "a refusal changed the Data";
}

TEST(StateSnapshotTest, RefusesANonFiniteVertexState) {
  const auto model = WithDeformable();
  Data source(*model), target(*model);
  const std::string before = SaveStateSnapshot(*model, target);
  std::string error;
  for (const bool velocity : {false, true}) {
    Data bad(*model);
    (velocity ? bad.vert_xvel : bad.vert_xpos)[2].y() = std::numeric_limits<double>::quiet_NaN();
    EXPECT_FALSE(RestoreStateSnapshot(*model, SaveStateSnapshot(*model, bad), target, &error));
    EXPECT_NE(error.find(velocity ? "vert_xvel 2 is not finite" : "vert_xpos 2 is not finite"),
              std::string::npos)
        << error;
    EXPECT_EQ(SaveStateSnapshot(*model, target), before);
  }
  // A vertex count beyond the bytes: truncated.
  std::string bytes = SaveStateSnapshot(*model, source);
  bytes.erase(bytes.size() - 8 - 8, 8);
  Rechecksum(&bytes);
  EXPECT_FALSE(RestoreStateSnapshot(*model, bytes, target, &error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
}

TEST(StateSnapshotTest, FingerprintIsAFunctionOfTheScene) {
  const ModelImport again = ImportModelFromFile(kScenes + "quadruped_drop_8.xml");
  ASSERT_TRUE(again) << again.error;
  EXPECT_EQ(ModelFingerprint(*again.model), ModelFingerprint(Scene("quadruped_drop_8.xml")));
  EXPECT_NE(ModelFingerprint(Scene("quadruped_drop_8.xml")),
            ModelFingerprint(Scene("ball_pile.xml")));
}

// ---- refusals ----------------------------------------------------------------------------------

// A target instance, a valid snapshot for it, and a check that a refusal changed nothing.
class StateSnapshotRefusalTest : public ::testing::Test {
 protected:
  StateSnapshotRefusalTest() : m_(Scene("quadruped_drop_8.xml")), source_(m_), target_(m_) {
    SetControls(m_, source_);
    StepMany(m_, source_, Options(SolverType::kSubAdmm), 40);  // servo rows: a warm start
    snapshot_ = SaveStateSnapshot(m_, source_);
    StepMany(m_, target_, Options(SolverType::kSubAdmm), 10);
    target_hash_ = StateHash(m_, target_);
    target_state_ = SaveStateSnapshot(m_, target_);
    target_xpos_ = target_.xpos;
  }

  // Restores `bytes` into the target, expects a refusal whose message contains `reason`, and that
  // the target is unchanged.
  void ExpectRefused(const std::string& bytes, const std::string& reason) {
    std::string error;
    EXPECT_FALSE(RestoreStateSnapshot(m_, bytes, target_, &error));
    EXPECT_NE(error.find(reason), std::string::npos) << "message: " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "one line: " << error;
    EXPECT_EQ(StateHash(m_, target_), target_hash_);
    EXPECT_EQ(SaveStateSnapshot(m_, target_), target_state_);
    EXPECT_EQ(target_.xpos, target_xpos_);
  }

  // The snapshot with `value` written at `offset` and the checksum recomputed, so that only the
  // field itself is wrong.
  std::string Patched(size_t offset, const void* value, size_t size) const {
    std::string bytes = snapshot_;
    std::memcpy(&bytes[offset], value, size);
    std::uint64_t hash = 14695981039346656037ull;
    for (size_t i = 0; i + 8 < bytes.size(); ++i) {
      hash ^= static_cast<unsigned char>(bytes[i]);
      hash *= 1099511628211ull;
    }
    std::memcpy(&bytes[bytes.size() - 8], &hash, 8);
    return bytes;
  }

  const Model& m_;
  Data source_, target_;
  std::string snapshot_;
  std::uint64_t target_hash_ = 0;
  std::string target_state_;
  std::vector<Vec3> target_xpos_;
};

TEST_F(StateSnapshotRefusalTest, AcceptsTheUnmodifiedSnapshot) {
  EXPECT_FALSE(source_.warm_start.key.empty());
  std::string error = "unchanged?";
  EXPECT_TRUE(RestoreStateSnapshot(m_, snapshot_, target_, &error));
  EXPECT_TRUE(error.empty());
  EXPECT_EQ(StateHash(m_, target_), StateHash(m_, source_));
}

TEST_F(StateSnapshotRefusalTest, TruncatedBytes) {
  for (const size_t size :
       {size_t{0}, size_t{5}, size_t{8}, size_t{59}, size_t{60}, size_t{100}, snapshot_.size() / 2,
        snapshot_.size() - 9, snapshot_.size() - 8, snapshot_.size() - 1}) {
    SCOPED_TRACE(size);
    ExpectRefused(snapshot_.substr(0, size), "truncated");
  }
}

TEST_F(StateSnapshotRefusalTest, TrailingBytes) { ExpectRefused(snapshot_ + "extra", "trailing"); }

TEST_F(StateSnapshotRefusalTest, WrongMagic) {
  std::string bytes = snapshot_;
  bytes[0] = 'X';
  ExpectRefused(bytes, "magic");
  ExpectRefused("not a snapshot at all, but long enough to hold a header of sixty bytes.", "magic");
}

TEST_F(StateSnapshotRefusalTest, UnknownVersion) {
  // 1: before the warm start's Delassus traces; 6: a future version.
  for (const std::uint32_t version : {0u, 1u, 6u}) {
    ExpectRefused(Patched(8, &version, sizeof version), "version " + std::to_string(version));
  }
}

TEST_F(StateSnapshotRefusalTest, SnapshotOfAnotherScene) {
  const Model& other = Scene("ball_pile.xml");
  Data d(other);
  StepMany(other, d, Options(SolverType::kSubAdmm), 10);
  ExpectRefused(SaveStateSnapshot(other, d), "different model");
}

// Same sizes, other physics: a box of 1 kg and one of 2 kg.
TEST(StateSnapshotTest, RefusesAModelWithTheSameSizesButOtherParameters) {
  auto box = [](const char* mass) {
    return FromString(std::string(R"(
<mujoco>
  <worldbody>
    <geom type="plane" size="0 0 1"/>
    <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.05" mass=")") +
                      mass + R"("/></body>
  </worldbody>
</mujoco>)");
  };
  const auto light = box("1"), heavy = box("2");
  ASSERT_EQ(light->nq, heavy->nq);
  Data from(*light), into(*heavy);
  StepMany(*light, from, Options(SolverType::kSubAdmm), 80);
  StepMany(*heavy, into, Options(SolverType::kSubAdmm), 20);
  const std::string before = SaveStateSnapshot(*heavy, into);
  std::string error;
  EXPECT_FALSE(RestoreStateSnapshot(*heavy, SaveStateSnapshot(*light, from), into, &error));
  EXPECT_NE(error.find("different model"), std::string::npos) << error;
  EXPECT_EQ(SaveStateSnapshot(*heavy, into), before);
}

// Same bodies, other world: gravity, or contacts turned off, change what a state evolves into.
TEST(StateSnapshotTest, RefusesAModelThatDiffersInGravityOrFlags) {
  auto box = [](const char* option) {
    return FromString(std::string("<mujoco>") + option + R"(
  <worldbody>
    <geom type="plane" size="0 0 1"/>
    <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.05" mass="1"/></body>
  </worldbody>
</mujoco>)");
  };
  const auto earth = box(""), moon = box(R"(<option gravity="0 0 -1.62"/>)"),
             no_contact = box(R"(<option><flag contact="disable"/></option>)");
  EXPECT_NE(ModelFingerprint(*earth), ModelFingerprint(*moon));
  EXPECT_NE(ModelFingerprint(*earth), ModelFingerprint(*no_contact));
  Data from(*earth), into(*moon);
  StepMany(*earth, from, Options(SolverType::kSubAdmm), 20);
  const std::string before = SaveStateSnapshot(*moon, into);
  std::string error;
  EXPECT_FALSE(RestoreStateSnapshot(*moon, SaveStateSnapshot(*earth, from), into, &error));
  EXPECT_NE(error.find("different model"), std::string::npos) << error;
  EXPECT_EQ(SaveStateSnapshot(*moon, into), before);
}

TEST_F(StateSnapshotRefusalTest, NanInQvel) {
  source_.qvel[3] = std::numeric_limits<double>::quiet_NaN();  // a diverged instance saves as is
  ExpectRefused(SaveStateSnapshot(m_, source_), "qvel[3] is NaN");
}

TEST_F(StateSnapshotRefusalTest, InfiniteCtrl) {
  source_.ctrl[2] = std::numeric_limits<double>::infinity();
  ExpectRefused(SaveStateSnapshot(m_, source_), "ctrl[2] is infinite");
}

TEST_F(StateSnapshotRefusalTest, NanAppliedForce) {
  source_.xfrc_applied[2][5] = std::numeric_limits<double>::quiet_NaN();
  ExpectRefused(SaveStateSnapshot(m_, source_), "xfrc_applied[17] is NaN");
}

TEST_F(StateSnapshotRefusalTest, AppliedForcesOfAnotherBodyCount) {
  // The count after qpos, qvel and ctrl: 0 or nbody, nothing else.
  const size_t offset = 60 + 12 + 8 * (static_cast<size_t>(m_.nq) + m_.nv + m_.nu);
  const std::uint32_t count = static_cast<std::uint32_t>(m_.nbody) - 1;
  ExpectRefused(Patched(offset, &count, sizeof count), "xfrc_applied has");
}

TEST_F(StateSnapshotRefusalTest, NonUnitQuaternion) {
  source_.qpos[3] *= 1.001;  // the first robot's free-joint quaternion
  ExpectRefused(SaveStateSnapshot(m_, source_), "quaternion");
}

TEST_F(StateSnapshotRefusalTest, CorruptedBytes) {
  std::string bytes = snapshot_;
  bytes[100] ^= 0x10;  // inside qpos
  ExpectRefused(bytes, "checksum");
}

TEST_F(StateSnapshotRefusalTest, WrongArrayLength) {
  const std::uint32_t count = static_cast<std::uint32_t>(m_.nq) + 1;
  ExpectRefused(Patched(60, &count, sizeof count), "qpos has");
}

// The warm start is saved in key order, which the next step's binary search needs: contacts,
// then joint limits and servos.
TEST_F(StateSnapshotRefusalTest, SavedWarmStartKeysAscend) {
  const std::vector<ConstraintKey>& keys = source_.warm_start.key;
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end(), ConstraintKeyLess));
  EXPECT_LT(keys.front().kind, keys.back().kind) << "more than one kind of constraint";
}

TEST_F(StateSnapshotRefusalTest, WarmStartKeysOutOfOrder) {
  std::vector<ConstraintKey>& keys = source_.warm_start.key;
  ASSERT_TRUE(ConstraintKeyLess(keys.front(), keys.back()));
  std::swap(keys.front(), keys.back());
  ExpectRefused(SaveStateSnapshot(m_, source_), "out of order");
}

TEST_F(StateSnapshotRefusalTest, UnknownWarmStartKind) {
  source_.warm_start.key.back().kind = 99;
  ExpectRefused(SaveStateSnapshot(m_, source_), "unknown kind 99");
}

// The solver's Delassus traces travel with the warm start (SolverOptions::delassus_refresh_steps):
// the quadrupeds' trees keep theirs, so some are set, and some are older than one step.
TEST_F(StateSnapshotRefusalTest, WarmStartDelassusTraces) {
  const WarmStart& warm = source_.warm_start;
  ASSERT_EQ(warm.delassus_trace.size(), warm.key.size());
  ASSERT_EQ(warm.delassus_age.size(), warm.key.size());
  EXPECT_GT(*std::max_element(warm.delassus_trace.begin(), warm.delassus_trace.end()), 0);
  EXPECT_GT(*std::max_element(warm.delassus_age.begin(), warm.delassus_age.end()), 0);
  source_.warm_start.delassus_trace.back() = std::numeric_limits<double>::quiet_NaN();
  ExpectRefused(SaveStateSnapshot(m_, source_),
                "Delassus trace[" + std::to_string(warm.key.size() - 1) + "]");
  source_.warm_start.delassus_trace.back() = 1;
  source_.warm_start.delassus_age.front() = -1;
  ExpectRefused(SaveStateSnapshot(m_, source_), "Delassus trace age 0 is negative");
}

TEST_F(StateSnapshotRefusalTest, WarmStartCountBeyondTheBytes) {
  const size_t count_offset = 60 + 20 + 8 * (static_cast<size_t>(m_.nq) + m_.nv + m_.nu + m_.ngeom);
  const std::uint32_t count = 0xffffffffu;
  ExpectRefused(Patched(count_offset, &count, sizeof count), "truncated");
}

}  // namespace
}  // namespace alsim
