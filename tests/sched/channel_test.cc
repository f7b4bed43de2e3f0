// The same generic code (bounded_channel.h, written against the Env concept) under quiesce::RealEnv with
// std::thread and under sim::FiberEnv across many seeds.
#include <gtest/gtest.h>

#include <set>

#include "bounded_channel.h"
#include "quiesce/core/env.h"
#include "quiesce/sim/fiber_env.h"

namespace quiesce::testing {
namespace {

void expect_conserved(const PipelineTotals& totals, const PipelineShape& shape) {
  const auto expected_count = static_cast<std::uint64_t>(shape.producers) * static_cast<std::uint64_t>(shape.items_per_producer);
  EXPECT_EQ(totals.sent_count, expected_count);
  EXPECT_EQ(totals.received_count, totals.sent_count);
  EXPECT_EQ(totals.received_sum, totals.sent_sum);
  EXPECT_GE(totals.depth_max, 1U);
  EXPECT_LE(totals.depth_max, shape.capacity);
}

TEST(GenericPipeline, RunsOnRealThreads) {
  RealEnv env;
  PipelineShape shape;
  shape.producers = 4;
  shape.consumers = 3;
  shape.items_per_producer = 2000;
  shape.capacity = 8;
  const PipelineTotals totals = run_pipeline(env, shape);
  expect_conserved(totals, shape);
}

TEST(GenericPipeline, RunsOnFibersUnderManySeeds) {
  const PipelineShape shape;
  std::set<std::uint64_t> digests;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    sim::VirtualClock clock;
    sim::FiberEnv env(clock, sim::Schedule::from_seed(seed));
    PipelineTotals totals;
    env.spawn("main", [&] { totals = run_pipeline(env, shape); });
    auto result = env.run();
    ASSERT_TRUE(result.ok()) << "seed " << seed << " " << env.describe() << "\n" << result.error().report();
    expect_conserved(totals, shape);
    // 40 items per producer, a 1000 ns pause after every 8: at least 5 pauses of virtual time.
    EXPECT_GE(result->end_time_ns, 5000U) << "seed " << seed;
    digests.insert(result->digest);
  }
  EXPECT_GT(digests.size(), 50U) << "seeds should give different interleavings";
}

TEST(GenericPipeline, ASeedReproducesItsDigestOnFibers) {
  auto digest_of = [](std::uint64_t seed) {
    sim::VirtualClock clock;
    sim::FiberEnv env(clock, sim::Schedule::from_seed(seed));
    env.spawn("main", [&] { (void)run_pipeline(env, PipelineShape{}); });
    auto result = env.run();
    EXPECT_TRUE(result.ok());
    return result.ok() ? result->digest : 0;
  };
  for (std::uint64_t seed = 7; seed < 12; ++seed) EXPECT_EQ(digest_of(seed), digest_of(seed)) << "seed " << seed;
}

}  // namespace
}  // namespace quiesce::testing
