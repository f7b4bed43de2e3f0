// MemoryBudget: admission's own ledger. Quarantined bytes count against capacity until a whole-device
// discard forgets them (R2, R6, R19).
#include <gtest/gtest.h>

#include <cstdint>

#include "quiesce/core/transaction.h"

namespace quiesce {
namespace {

TEST(MemoryBudgetTest, ChargesUpToCapacityAndNoFurther) {
  MemoryBudget budget(1000);
  EXPECT_TRUE(budget.try_charge(600));
  EXPECT_TRUE(budget.try_charge(400));  // exactly full
  EXPECT_EQ(budget.charged_bytes(), 1000U);
  EXPECT_FALSE(budget.try_charge(1));
  EXPECT_EQ(budget.charged_bytes(), 1000U);  // a refused charge changes nothing
}

TEST(MemoryBudgetTest, RefusesARequestLargerThanCapacityWithoutOverflow) {
  MemoryBudget budget(1000);
  EXPECT_FALSE(budget.try_charge(1001));
  EXPECT_FALSE(budget.try_charge(UINT64_MAX));
  EXPECT_EQ(budget.charged_bytes(), 0U);
  EXPECT_TRUE(budget.try_charge(1000));
}

TEST(MemoryBudgetTest, DischargeGivesBytesBackAndKeepsTheHighWaterMark) {
  MemoryBudget budget(1000);
  ASSERT_TRUE(budget.try_charge(700));
  budget.discharge(500);
  EXPECT_EQ(budget.charged_bytes(), 200U);
  EXPECT_EQ(budget.charged_bytes_max(), 700U);
  ASSERT_TRUE(budget.try_charge(800));
  EXPECT_EQ(budget.charged_bytes_max(), 1000U);
  EXPECT_EQ(budget.capacity_bytes(), 1000U);
}

TEST(MemoryBudgetTest, QuarantinedBytesStillOccupyCapacity) {
  MemoryBudget budget(1000);
  ASSERT_TRUE(budget.try_charge(600));
  budget.quarantine(600);
  EXPECT_EQ(budget.charged_bytes(), 0U);
  EXPECT_EQ(budget.quarantined_bytes(), 600U);
  EXPECT_FALSE(budget.try_charge(401));  // 600 quarantined + 401 > 1000
  EXPECT_TRUE(budget.try_charge(400));
}

TEST(MemoryBudgetTest, ForgettingQuarantineFreesItsCapacity) {
  MemoryBudget budget(1000);
  ASSERT_TRUE(budget.try_charge(1000));
  budget.quarantine(1000);
  EXPECT_FALSE(budget.try_charge(1));
  budget.forget_quarantine(1000);
  EXPECT_EQ(budget.quarantined_bytes(), 0U);
  EXPECT_TRUE(budget.try_charge(1000));
}

}  // namespace
}  // namespace quiesce
