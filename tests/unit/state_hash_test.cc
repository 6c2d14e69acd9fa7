#include "engine/sim/state_hash.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "engine/model/model_import.h"
#include "engine/sim/step.h"

namespace alsim {
namespace {

constexpr char kFallingBox[] = R"(
<mujoco>
  <worldbody>
    <geom type="plane" size="0 0 1"/>
    <body pos="0 0 0.3" euler="10 20 30">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.05" mass="1"/>
    </body>
  </worldbody>
</mujoco>)";

std::shared_ptr<const Model> Import(const char* xml) {
  ModelImport imported = ImportModelFromString(xml);
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

// Flips the least significant bit of the mantissa: the smallest change a double can make.
void FlipLowestBit(double& value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  bits ^= 1u;
  std::memcpy(&value, &bits, sizeof bits);
}

TEST(StateHashTest, EqualStatesHashEqual) {
  const auto model = Import(kFallingBox);
  ASSERT_NE(model, nullptr);
  Data a(*model), b(*model);
  EXPECT_EQ(StateHash(*model, a), StateHash(*model, b));
  for (int k = 0; k < 50; ++k) {
    ASSERT_EQ(Step(*model, a), StepStatus::kOk);
    ASSERT_EQ(Step(*model, b), StepStatus::kOk);
  }
  EXPECT_EQ(StateHash(*model, a), StateHash(*model, b));
}

TEST(StateHashTest, OneBitOfQvelChangesIt) {
  const auto model = Import(kFallingBox);
  ASSERT_NE(model, nullptr);
  Data d(*model);
  for (int k = 0; k < 20; ++k) ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  const std::uint64_t before = StateHash(*model, d);
  for (int i = 0; i < model->nv; ++i) {
    FlipLowestBit(d.qvel[i]);
    EXPECT_NE(StateHash(*model, d), before) << "qvel " << i;
    FlipLowestBit(d.qvel[i]);
  }
  EXPECT_EQ(StateHash(*model, d), before);
}

TEST(StateHashTest, QposAndTimeCount) {
  const auto model = Import(kFallingBox);
  ASSERT_NE(model, nullptr);
  Data d(*model);
  const std::uint64_t before = StateHash(*model, d);
  FlipLowestBit(d.qpos[model->nq - 1]);
  EXPECT_NE(StateHash(*model, d), before);
  FlipLowestBit(d.qpos[model->nq - 1]);
  d.time = model->timestep;
  EXPECT_NE(StateHash(*model, d), before);
}

// A scene without dofs hashes only the 8 bytes of time: FNV-1a-64 values computed independently
// (Python, from the published offset basis and prime) pin the algorithm and byte order.
TEST(StateHashTest, MatchesFnv1aOfTheTimeBytes) {
  const auto model = Import(R"(<mujoco><worldbody><geom type="plane" size="1 1 1"/></worldbody>
                               </mujoco>)");
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->nq, 0);
  ASSERT_EQ(model->nv, 0);
  Data d(*model);
  EXPECT_EQ(FormatStateHash(StateHash(*model, d)), "a8c7f832281a39c5");  // 8 zero bytes
  d.time = 0.5;
  EXPECT_EQ(FormatStateHash(StateHash(*model, d)), "aae7e93229e886a8");  // 0.5, little-endian
}

// A scene without deformables hashes qpos, qvel and time alone, exactly as before the vertex
// state existed, so that recorded hashes stay valid.
TEST(StateHashTest, WithoutDeformablesHashesQposQvelAndTimeOnly) {
  const auto model = Import(kFallingBox);
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->nvert, 0);
  Data d(*model);
  for (int k = 0; k < 10; ++k) ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  std::uint64_t expected = kFnvOffsetBasis;
  expected = HashBytes(expected, d.qpos.data(), sizeof(double) * d.qpos.size());
  expected = HashBytes(expected, d.qvel.data(), sizeof(double) * d.qvel.size());
  expected = HashBytes(expected, &d.time, sizeof d.time);
  EXPECT_EQ(StateHash(*model, d), expected);
}

// A tet pinned at one vertex to the world, one at a free body (companion file, custom text
// alsim:deformables; engine/model/deformable_spec.h).
std::shared_ptr<const Model> ImportWithDeformable() {
  const char* scene =
      "<mujoco><custom><text name='alsim:deformables' data='soft.xml'/></custom>"
      "<worldbody><geom type='plane' size='5 5 0.1'/>"
      "<body name='box' pos='0 0 0.3'><freejoint/><geom type='box' size='.1 .1 .1'/></body>"
      "</worldbody></mujoco>";
  const char* soft =
      "<deformables><deformable name='tet' young='1e5' density='1000'>"
      "<tetmesh vertices='1 0 0.2  1.1 0 0.2  1 0.1 0.2  1 0 0.3' tets='0 1 2 3'/>"
      "<pin vertices='3'/></deformable></deformables>";
  ModelImport imported = ImportModelFromString(scene, {{"soft.xml", soft}}, "scene.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

// Two instances that differ only in one bit of one vertex's position or velocity hash
// differently; the vertex state is hashed after time, positions then velocities.
TEST(StateHashTest, VertexStateCounts) {
  const auto model = ImportWithDeformable();
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->nvert, 4);
  Data a(*model), b(*model);
  ASSERT_EQ(a.vert_xpos.size(), 4u);
  ASSERT_EQ(a.vert_xvel.size(), 4u);
  EXPECT_EQ(a.vert_xpos, model->vert_pos0);
  const std::uint64_t before = StateHash(*model, a);
  EXPECT_EQ(StateHash(*model, b), before);
  for (int v = 0; v < model->nvert; ++v) {
    for (int c = 0; c < 3; ++c) {
      FlipLowestBit(b.vert_xpos[v][c]);
      EXPECT_NE(StateHash(*model, b), before) << "vert_xpos " << v << " " << c;
      FlipLowestBit(b.vert_xpos[v][c]);
      b.vert_xvel[v][c] = -0.0;  // the sign of a zero counts too
      EXPECT_NE(StateHash(*model, b), before) << "vert_xvel " << v << " " << c;
      b.vert_xvel[v][c] = 0.0;
    }
  }
  EXPECT_EQ(StateHash(*model, b), before);
  // Positions and velocities are not interchangeable.
  std::swap(b.vert_xpos, b.vert_xvel);
  EXPECT_NE(StateHash(*model, b), before);

  std::uint64_t expected = kFnvOffsetBasis;
  expected = HashBytes(expected, a.qpos.data(), sizeof(double) * a.qpos.size());
  expected = HashBytes(expected, a.qvel.data(), sizeof(double) * a.qvel.size());
  expected = HashBytes(expected, &a.time, sizeof a.time);
  expected = HashBytes(expected, a.vert_xpos.data(), 3 * sizeof(double) * a.vert_xpos.size());
  expected = HashBytes(expected, a.vert_xvel.data(), 3 * sizeof(double) * a.vert_xvel.size());
  EXPECT_EQ(before, expected);
}

TEST(StateHashTest, FormatsSixteenLowercaseHexDigits) {
  EXPECT_EQ(FormatStateHash(0), "0000000000000000");
  EXPECT_EQ(FormatStateHash(0xABCDEF0123456789ull), "abcdef0123456789");
}

}  // namespace
}  // namespace alsim
