#include "server/memory_budget.h"

#include <gtest/gtest.h>

namespace alsim::server {
namespace {

TEST(MemoryBudgetTest, ReservesOnlyWhatFits) {
  MemoryBudget budget(100);
  EXPECT_TRUE(budget.TryReserve(60));
  EXPECT_FALSE(budget.TryReserve(41)) << "nothing is reserved by a refusal";
  EXPECT_EQ(budget.used(), 60u);
  EXPECT_TRUE(budget.TryReserve(40));
  EXPECT_FALSE(budget.TryReserve(1));
  budget.Release(50);
  EXPECT_TRUE(budget.TryReserve(50));
  EXPECT_FALSE(budget.TryReserve(~0ull)) << "no overflow";
  budget.Release(1000);
  EXPECT_EQ(budget.used(), 0u) << "never below zero";
}

TEST(MemoryBudgetTest, ZeroMeansUnlimitedButCounted) {
  MemoryBudget budget(0);
  EXPECT_TRUE(budget.TryReserve(1ull << 50));
  EXPECT_EQ(budget.used(), 1ull << 50);
}

}  // namespace
}  // namespace alsim::server
