// sim::Schedule on its own: strategies and knobs from the seed, each strategy's rule, replay divergence.
#include "quiesce/sim/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace quiesce::sim {
namespace {

std::vector<FiberId> drive(Schedule& schedule, std::size_t choices) {
  const std::vector<FiberId> runnable = {0, 1, 2, 3};
  for (FiberId fiber = 0; fiber < 4; ++fiber) schedule.on_spawn(fiber);
  FiberId current = kNoFiber;
  for (std::size_t step = 1; step <= choices; ++step) current = schedule.choose(runnable, current, step);
  return schedule.decisions();
}

TEST(Schedule, SameSeedSameStrategyKnobsAndChoices) {
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    Schedule first = Schedule::from_seed(seed);
    Schedule second = Schedule::from_seed(seed);
    EXPECT_EQ(first.describe(), second.describe()) << "seed " << seed;
    EXPECT_EQ(drive(first, 200), drive(second, 200)) << "seed " << seed;
  }
}

TEST(Schedule, SeedsCoverEveryStrategy) {
  std::set<StrategyKind> kinds;
  std::set<std::string> descriptions;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    const Schedule schedule = Schedule::from_seed(seed);
    kinds.insert(schedule.kind());
    descriptions.insert(schedule.describe());
  }
  EXPECT_EQ(kinds.size(), 3U);
  EXPECT_FALSE(kinds.count(StrategyKind::Replay));
  EXPECT_GT(descriptions.size(), 40U) << "knobs should differ between seeds";
}

TEST(Schedule, DescribeNamesStrategyAndKnobs) {
  EXPECT_EQ(Schedule::round_robin(2).describe(), "round_robin(quantum=2)");
  const std::string walk = Schedule::random_walk(42, Ratio{1, 4}).describe();
  EXPECT_EQ(walk, "random_walk(seed=0x000000000000002a, stay=1/4)");
  const std::string pct = Schedule::pct(7, 3, 500).describe();
  EXPECT_NE(pct.find("pct(seed=0x0000000000000007, depth=3, steps_estimate=500, change_points=["), std::string::npos)
      << pct;
  EXPECT_EQ(Schedule::replay({1, 2, 3}).describe(), "replay(decisions=3)");
}

TEST(Schedule, RoundRobinRotatesInIdOrderWithItsQuantum) {
  Schedule schedule = Schedule::round_robin(2);
  const std::vector<FiberId> runnable = {2, 0, 1};
  std::vector<FiberId> chosen;
  FiberId current = 0;
  for (std::uint64_t step = 1; step <= 7; ++step) {
    current = schedule.choose(runnable, current, step);
    chosen.push_back(current);
  }
  EXPECT_EQ(chosen, (std::vector<FiberId>{0, 0, 1, 1, 2, 2, 0}));
}

TEST(Schedule, PctRunsTheHighestPriorityUntilAChangePointDemotesIt) {
  // Depth 1 has no change point: one fiber wins every choice it is runnable for.
  Schedule fixed = Schedule::pct(3, 1, 100);
  const std::vector<FiberId> decisions = drive(fixed, 100);
  EXPECT_EQ(std::set<FiberId>(decisions.begin(), decisions.end()).size(), 1U);

  // Depth 2: exactly one change point, after which the first winner never runs while others can.
  Schedule changing = Schedule::pct(3, 2, 100);
  const std::vector<FiberId> changed = drive(changing, 100);
  const FiberId first = changed.front();
  const auto switch_at = std::find_if(changed.begin(), changed.end(), [&](FiberId f) { return f != first; });
  ASSERT_NE(switch_at, changed.end()) << changing.describe();
  EXPECT_TRUE(std::none_of(switch_at, changed.end(), [&](FiberId f) { return f == first; }));
}

TEST(Schedule, RandomWalkSpreadsChoices) {
  Schedule schedule = Schedule::random_walk(9, Ratio::never());
  const std::vector<FiberId> decisions = drive(schedule, 400);
  std::vector<int> counts(4, 0);
  for (const FiberId fiber : decisions) ++counts[fiber];
  for (const int count : counts) EXPECT_GT(count, 50) << "a uniform choice among 4 fibers over 400 choices";
}

TEST(Schedule, ReplayRepeatsDecisionsAndReportsDivergence) {
  Schedule original = Schedule::from_seed(5);
  const std::vector<FiberId> recorded = drive(original, 50);
  Schedule replay = Schedule::replay(recorded);
  EXPECT_EQ(drive(replay, 50), recorded);
  EXPECT_TRUE(replay.divergence().empty());
  EXPECT_EQ(replay.replay_remaining(), 0U);

  Schedule short_replay = Schedule::replay({0});
  const std::vector<FiberId> two = {0, 1};
  EXPECT_EQ(short_replay.choose(two, kNoFiber, 1), 0U);
  EXPECT_EQ(short_replay.choose(two, 0, 2), kNoFiber);
  EXPECT_NE(short_replay.divergence().find("choice point 1"), std::string::npos) << short_replay.divergence();

  Schedule wrong = Schedule::replay({3});
  EXPECT_EQ(wrong.choose(two, kNoFiber, 1), kNoFiber);
  EXPECT_NE(wrong.divergence().find("recorded fiber 3 is not runnable (runnable: 0, 1)"), std::string::npos)
      << wrong.divergence();
}

}  // namespace
}  // namespace quiesce::sim
