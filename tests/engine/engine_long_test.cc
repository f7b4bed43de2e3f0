// The full campaign (label engine-long, left out of the default suite): 10,000 seeded engine workloads per
// built-in plan through Validator<Injector<sim::Device>>, each with no violation, no finding and a clean
// shutdown report. Failing seeds are listed, not just the first.
#include <gtest/gtest.h>

#include "engine_sim_harness.h"

namespace quiesce::test {
namespace {

class EngineLong : public ::testing::TestWithParam<const char*> {};

TEST_P(EngineLong, TenThousandSeedsHold) {
  std::vector<std::uint64_t> failing;
  std::string first_report;
  for (std::uint64_t seed = 1; seed <= 10'000; ++seed) {
    const EngineRunVerdict verdict = run_engine_under_plan(GetParam(), seed, 1000);
    if (verdict.held()) continue;
    if (failing.empty()) first_report = verdict.report;
    failing.push_back(seed);
  }
  std::string seeds;
  for (const std::uint64_t seed : failing) seeds += " " + std::to_string(seed);
  EXPECT_TRUE(failing.empty()) << failing.size() << " failing seeds:" << seeds << "\nfirst:\n" << first_report;
}

INSTANTIATE_TEST_SUITE_P(BuiltinPlans, EngineLong, ::testing::Values("none", "default", "all"));

}  // namespace
}  // namespace quiesce::test
