// The engine on the simulator: seeded engine workloads end clean, with no oracle finding, bare and under
// every built-in fault plan through Validator<Injector<sim::Device>> (no violation), and deterministically.
#include <gtest/gtest.h>

#include "engine_sim_harness.h"

namespace quiesce::test {
namespace {

constexpr std::uint32_t kOperations = 1000;

TEST(EngineSim, WorkloadOnTheBareSimulatorIsClean) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const EngineRunVerdict verdict = run_engine_on_sim(seed, kOperations);
    ASSERT_TRUE(verdict.held()) << "seed " << seed << "\n" << verdict.report;
    EXPECT_GT(verdict.result.bytes_checked, 0U) << "seed " << seed;
  }
}

TEST(EngineSim, SameSeedSameDigest) {
  const EngineRunVerdict first = run_engine_under_plan("default", 7, kOperations);
  const EngineRunVerdict second = run_engine_under_plan("default", 7, kOperations);
  EXPECT_EQ(first.digest, second.digest) << "R20";
  const EngineRunVerdict other = run_engine_under_plan("default", 8, kOperations);
  EXPECT_NE(first.digest, other.digest);
}

class EngineUnderPlan : public ::testing::TestWithParam<const char*> {};

TEST_P(EngineUnderPlan, TwoHundredSeedsHold) {
  std::uint64_t injected = 0;
  std::uint64_t checked = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const EngineRunVerdict verdict = run_engine_under_plan(GetParam(), seed, kOperations);
    ASSERT_TRUE(verdict.held()) << "plan " << GetParam() << " seed " << seed << "\n" << verdict.report;
    injected += verdict.injected;
    checked += verdict.result.bytes_checked;
  }
  EXPECT_GT(checked, 0U);
  if (std::string_view(GetParam()) != "none") {
    EXPECT_GT(injected, 0U) << "the plan injected nothing";
  }
}

INSTANTIATE_TEST_SUITE_P(BuiltinPlans, EngineUnderPlan, ::testing::Values("none", "default", "all"));

}  // namespace
}  // namespace quiesce::test
