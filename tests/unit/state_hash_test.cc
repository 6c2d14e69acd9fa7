#include "engine/sim/state_hash.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

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

TEST(StateHashTest, FormatsSixteenLowercaseHexDigits) {
  EXPECT_EQ(FormatStateHash(0), "0000000000000000");
  EXPECT_EQ(FormatStateHash(0xABCDEF0123456789ull), "abcdef0123456789");
}

}  // namespace
}  // namespace alsim
