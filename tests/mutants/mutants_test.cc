// Every mutant must be caught within a small seed budget, by a check of one of the invariants it declares,
// and the careful runtime must pass the same seeds (otherwise "caught" would prove nothing).
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "quiesce/properties/mutants.h"

namespace quiesce::properties {
namespace {

constexpr std::uint32_t kSeedsPerMutant = 24;

class EveryMutant : public ::testing::TestWithParam<std::size_t> {};

TEST_P(EveryMutant, IsCaughtByAnExpectedInvariant) {
  const Mutant& mutant = all_mutants().at(GetParam());
  MutantOptions options;
  options.seeds_max = kSeedsPerMutant;
  options.only = {std::string(mutant.name)};
  const MutantReport report = run_mutants(options);
  ASSERT_EQ(report.total(), 1U);
  const MutantResult& result = report.mutants.front();
  std::ostringstream printed;
  print_report(report, printed);
  EXPECT_TRUE(result.caught) << printed.str();
  EXPECT_TRUE(result.as_expected) << printed.str();
  EXPECT_LE(result.cases, kSeedsPerMutant);
}

std::string mutant_test_name(const ::testing::TestParamInfo<std::size_t>& info) {
  std::string name(all_mutants().at(info.param).name);
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

INSTANTIATE_TEST_SUITE_P(Catalog, EveryMutant, ::testing::Range<std::size_t>(0, all_mutants().size()),
                         mutant_test_name);

// The canary: without a planted bug the same runtime passes every seed the mutants are hunted on.
TEST(CarefulRuntime, PassesTheSeedsTheMutantsAreHuntedOn) {
  const Mutant careful{"careful", "no bug", Mutation::None, ProviderBug::None, {}, {}, {}, false, 1, false,
                       EngineBug::None};
  for (std::uint64_t seed = 1; seed <= kSeedsPerMutant; ++seed) {
    const CaseResult result = run_mutant_case(careful, seed, MutantCaseOptions{});
    ASSERT_TRUE(result.passed()) << "seed " << seed << ": " << result.failures.front().message;
  }
}

// The engine canary: the reference engine, run exactly as the engine mutants are (engine-facing layer and
// derived engine included, with no bug), passes the same seeds.
TEST(CarefulEngine, PassesTheSeedsTheEngineMutantsAreHuntedOn) {
  const Mutant careful{"careful-engine", "no bug", Mutation::None, ProviderBug::None, {}, {}, {}, false, 0, true,
                       EngineBug::None};
  for (std::uint64_t seed = 1; seed <= kSeedsPerMutant; ++seed) {
    const CaseResult result = run_mutant_case(careful, seed, MutantCaseOptions{});
    ASSERT_TRUE(result.passed()) << "seed " << seed << ": " << result.failures.front().message;
  }
}

TEST(Catalog, CoversEveryInvariantWithAtLeast25Mutants) {
  std::set<Invariant> covered;
  std::set<std::string_view> names;
  for (const Mutant& mutant : all_mutants()) {
    ASSERT_FALSE(mutant.expected.empty()) << mutant.name;
    covered.insert(mutant.expected.front());
    EXPECT_TRUE(names.insert(mutant.name).second) << "two mutants are called " << mutant.name;
    const int bugs = (mutant.mutation != Mutation::None ? 1 : 0) + (mutant.provider != ProviderBug::None ? 1 : 0) +
                     (mutant.engine != EngineBug::None ? 1 : 0);
    EXPECT_EQ(bugs, 1) << mutant.name << " must plant exactly one bug";
    EXPECT_EQ(mutant.on_engine, mutant.engine != EngineBug::None) << mutant.name << " runs the wrong workload";
  }
  EXPECT_GE(all_mutants().size(), 25U);
  for (std::uint8_t r = 1; r <= kInvariantCount; ++r) {
    const auto invariant = static_cast<Invariant>(r);
    EXPECT_TRUE(covered.contains(invariant)) << invariant_id(invariant) << " has no mutant";
  }
}

}  // namespace
}  // namespace quiesce::properties
