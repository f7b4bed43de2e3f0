// Prng and Ratio: the one source of randomness in anything seeded. A change of the generator changes
// every recorded trace, so the first values of fixed seeds are pinned here.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>

#include "quiesce/core/prng.h"

namespace quiesce {
namespace {

TEST(PrngTest, SplitmixAndLabelHashMatchTheirPublishedReferenceValues) {
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xE220A8397B1DCDAFULL);  // splitmix64 reference output for state 0
  EXPECT_EQ(label_hash(""), 0xCBF29CE484222325ULL);      // the FNV-1a 64-bit offset basis
  EXPECT_EQ(label_hash("a"), 0xAF63DC4C8601EC8CULL);     // FNV-1a 64 of "a"
}

TEST(PrngTest, FixedSeedsGiveFixedFirstValues) {
  Prng zero(0);
  const std::array<std::uint64_t, 4> expected_zero = {0x99EC5F36CB75F2B4ULL, 0xBF6E1F784956452AULL,
                                                      0x1A5F849D4933E6E0ULL, 0x6AA594F1262D2D2CULL};
  for (const std::uint64_t expected : expected_zero) EXPECT_EQ(zero.next(), expected);

  Prng seeded(0x5EED);
  const std::array<std::uint64_t, 4> expected_seeded = {0xEF33F17055244B74ULL, 0xE1F591112FB5051BULL,
                                                        0xD8AB05640214863AULL, 0xF985E1F2FB897B03ULL};
  for (const std::uint64_t expected : expected_seeded) EXPECT_EQ(seeded.next(), expected);
  EXPECT_EQ(seeded.derive("cost"), 0xF7C9DC4F2432DEB0ULL);
}

TEST(PrngTest, SameSeedSameStreamDifferentSeedDifferentStream) {
  Prng first(1234);
  Prng second(1234);
  Prng other(1235);
  int equal_to_other = 0;
  for (int draw = 0; draw < 1000; ++draw) {
    const std::uint64_t value = first.next();
    EXPECT_EQ(value, second.next());
    if (value == other.next()) ++equal_to_other;
  }
  EXPECT_EQ(equal_to_other, 0);
  EXPECT_EQ(first.seed(), 1234U);
}

TEST(PrngTest, BelowStaysBelowItsBound) {
  Prng prng(7);
  const std::array<std::uint64_t, 7> bounds = {1, 2, 3, 7, 1000, (1ULL << 63) + 1, UINT64_MAX};
  for (const std::uint64_t bound : bounds) {
    for (int draw = 0; draw < 2000; ++draw) {
      const std::uint64_t value = prng.below(bound);
      ASSERT_LT(value, bound) << "bound " << bound;
    }
  }
  // A bound of one has exactly one answer.
  for (int draw = 0; draw < 100; ++draw) EXPECT_EQ(prng.below(1), 0U);
}

TEST(PrngTest, BelowReachesEveryValueOfASmallRange) {
  Prng prng(99);
  std::array<int, 6> hits = {};
  for (int draw = 0; draw < 6000; ++draw) hits.at(prng.below(6))++;
  for (const int count : hits) {
    EXPECT_GT(count, 800);  // uniform: about 1000 each
    EXPECT_LT(count, 1200);
  }
}

TEST(PrngTest, RangeIsInclusiveAtBothEnds) {
  Prng prng(5);
  std::set<std::uint64_t> seen;
  for (int draw = 0; draw < 1000; ++draw) {
    const std::uint64_t value = prng.range(10, 13);
    ASSERT_GE(value, 10U);
    ASSERT_LE(value, 13U);
    seen.insert(value);
  }
  EXPECT_EQ(seen.size(), 4U);
  EXPECT_EQ(prng.range(42, 42), 42U);
  (void)prng.range(0, UINT64_MAX);  // the full range must not divide by zero
}

TEST(PrngTest, ChanceOfNeverAndAlwaysIsExact) {
  Prng prng(11);
  for (int draw = 0; draw < 10000; ++draw) {
    ASSERT_FALSE(prng.chance(Ratio::never()));
    ASSERT_TRUE(prng.chance(Ratio::always()));
    ASSERT_FALSE(prng.chance(Ratio{0, 1000}));
    ASSERT_TRUE(prng.chance(Ratio{1000, 1000}));
  }
}

TEST(PrngTest, ChanceFollowsItsRatio) {
  Prng prng(13);
  int hits = 0;
  for (int draw = 0; draw < 10000; ++draw) {
    if (prng.chance(Ratio{1, 4})) ++hits;
  }
  EXPECT_GT(hits, 2300);  // about 2500
  EXPECT_LT(hits, 2700);
}

TEST(PrngTest, DeriveDependsOnTheLabelAndNotOnDrawsMade) {
  Prng prng(2024);
  const std::uint64_t cost = prng.derive("cost");
  const std::uint64_t faults = prng.derive("faults");
  EXPECT_NE(cost, faults);
  for (int draw = 0; draw < 50; ++draw) (void)prng.next();
  EXPECT_EQ(prng.derive("cost"), cost);
  EXPECT_NE(Prng(2025).derive("cost"), cost);
}

TEST(PrngTest, DerivedStreamsAreIndependentOfEachOther) {
  const Prng root(77);
  Prng cost(root.derive("cost"));
  Prng faults(root.derive("faults"));
  Prng again(root.derive("cost"));
  int equal = 0;
  for (int draw = 0; draw < 1000; ++draw) {
    const std::uint64_t value = cost.next();
    EXPECT_EQ(value, again.next());
    if (value == faults.next()) ++equal;
  }
  EXPECT_EQ(equal, 0);
  // A draw in one component does not shift another's stream: faults' next value depends on faults only.
  Prng faults_fresh(root.derive("faults"));
  for (int draw = 0; draw < 1000; ++draw) (void)faults_fresh.next();
  EXPECT_EQ(faults_fresh.next(), faults.next());
}

TEST(PrngTest, CoinIsBalanced) {
  Prng prng(21);
  int heads = 0;
  for (int draw = 0; draw < 10000; ++draw) heads += prng.coin() ? 1 : 0;
  EXPECT_GT(heads, 4700);
  EXPECT_LT(heads, 5300);
}

}  // namespace
}  // namespace quiesce
