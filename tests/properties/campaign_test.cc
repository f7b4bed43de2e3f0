// The campaign runner: seeds, jobs, GoogleTest sharding, reports, merging.
#include "quiesce/properties/campaign.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "quiesce/core/prng.h"

namespace quiesce::properties {
namespace {

// A case that is a pure function of its seed: fails on every seventh seed, reaches a probe on every third.
CaseResult synthetic_case(std::uint64_t seed) {
  CaseResult result;
  std::uint64_t state = seed;
  result.digest = splitmix64(state);
  result.operations = seed % 100;
  if (seed % 7 == 3) result.failures.push_back({Invariant::R4, "invocation executed twice"});
  if (seed % 3 == 0) result.probes_hit.push_back("rare state");
  return result;
}

CampaignOptions options_for(SeedRange seeds, Shard shard, std::uint32_t jobs) {
  CampaignOptions options;
  options.name = "synthetic";
  options.seeds = seeds;
  options.shard = shard;
  options.jobs = jobs;
  options.probes_expected = {"rare state", "never state"};
  return options;
}

TEST(Campaign, RunsEverySeedOfTheRangeInOrder) {
  const CampaignReport report = run_campaign(options_for({10, 59}, {}, 1), synthetic_case);
  ASSERT_EQ(report.cases.size(), 50U);
  for (std::size_t i = 0; i < report.cases.size(); ++i) EXPECT_EQ(report.cases[i].seed, 10 + i);
  EXPECT_EQ(report.failures(), 8U);  // 10, 17, 24, 31, 38, 45, 52, 59 are 3 mod 7
  EXPECT_EQ(report.probe_hits.at("rare state"), 16U);
  EXPECT_EQ(report.probes_never_reached(), std::vector<std::string>{"never state"});
}

TEST(Campaign, ReportDoesNotDependOnJobs) {
  const CampaignReport one = run_campaign(options_for({0, 199}, {}, 1), synthetic_case);
  const CampaignReport four = run_campaign(options_for({0, 199}, {}, 4), synthetic_case);
  EXPECT_EQ(one, four);
  EXPECT_EQ(to_json(one).dump(), to_json(four).dump());
}

TEST(Campaign, TwoShardsCoverTheRangeExactlyOnceAndMergeIntoTheUnshardedReport) {
  const SeedRange seeds{0, 99};
  const CampaignReport whole = run_campaign(options_for(seeds, {}, 2), synthetic_case);
  const CampaignReport first = run_campaign(options_for(seeds, {0, 2}, 2), synthetic_case);
  const CampaignReport second = run_campaign(options_for(seeds, {1, 2}, 2), synthetic_case);
  EXPECT_EQ(first.cases.size() + second.cases.size(), 100U);
  for (const CaseResult& result : first.cases) {
    for (const CaseResult& other : second.cases) ASSERT_NE(result.seed, other.seed);
  }
  auto merged = merge_reports({second, first});
  ASSERT_TRUE(merged.ok()) << merged.error();
  EXPECT_EQ(merged.value(), whole);
  EXPECT_EQ(to_json(merged.value()).dump(), to_json(whole).dump());
}

TEST(Campaign, MergeRefusesOverlapsGapsAndOtherCampaigns) {
  const SeedRange seeds{0, 9};
  const CampaignReport first = run_campaign(options_for(seeds, {0, 2}, 1), synthetic_case);
  auto gap = merge_reports({first});
  ASSERT_FALSE(gap.ok());
  EXPECT_NE(gap.error().find("cover 5 of the campaign's 10 seeds"), std::string::npos) << gap.error();
  auto overlap = merge_reports({first, first});
  ASSERT_FALSE(overlap.ok());
  EXPECT_NE(overlap.error().find("more than one shard"), std::string::npos) << overlap.error();
  CampaignReport other = first;
  other.name = "another";
  EXPECT_FALSE(merge_reports({first, other}).ok());
}

TEST(Campaign, JsonRoundTripsAndJUnitNamesEveryFailure) {
  const CampaignReport report = run_campaign(options_for({0, 20}, {}, 1), synthetic_case);
  auto back = report_from_json(nlohmann::json::parse(to_json(report).dump()));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value(), report);
  const std::string junit = to_junit(report);
  EXPECT_NE(junit.find("tests=\"21\" failures=\"3\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("name=\"seed_17\""), std::string::npos);
  EXPECT_NE(junit.find("<failure type=\"R4\""), std::string::npos);
  EXPECT_FALSE(report_from_json(nlohmann::json{{"format", "other"}}).ok());
}

TEST(Campaign, TheStreamedJsonIsTheSameDocumentWithACaseALine) {
  const CampaignReport report = run_campaign(options_for({0, 20}, {}, 1), synthetic_case);
  std::ostringstream streamed;
  write_json(report, streamed);
  const nlohmann::json parsed = nlohmann::json::parse(streamed.str(), nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << streamed.str();
  EXPECT_EQ(parsed, to_json(report));
  auto back = report_from_json(parsed);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value(), report);
  // Each case is one line: 21 lines name a seed, and the three failing seeds' lines say so.
  std::istringstream lines(streamed.str());
  std::size_t case_lines = 0;
  std::size_t failing_lines = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"seed\":") == std::string::npos) continue;
    case_lines++;
    if (line.find("\"passed\":false") != std::string::npos) failing_lines++;
  }
  EXPECT_EQ(case_lines, 21U);
  EXPECT_EQ(failing_lines, 3U);
  // An empty report is still a document.
  std::ostringstream empty;
  write_json(CampaignReport{}, empty);
  EXPECT_EQ(nlohmann::json::parse(empty.str()), to_json(CampaignReport{}));
  std::ostringstream junit;
  write_junit(report, junit);
  EXPECT_EQ(junit.str(), to_junit(report));
}

TEST(Campaign, SeedRangesParseAndRefuseNonsense) {
  EXPECT_EQ(parse_seed_range("0..999").value(), (SeedRange{0, 999}));
  EXPECT_EQ(parse_seed_range("5").value(), (SeedRange{5, 5}));
  EXPECT_FALSE(parse_seed_range("9..3").ok());
  EXPECT_FALSE(parse_seed_range("a..3").ok());
  EXPECT_FALSE(parse_seed_range("").ok());
  auto bad = parse_seed_range("1..x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("'x'"), std::string::npos) << bad.error();
}

TEST(Campaign, ShardComesFromTheGoogleTestEnvironment) {
  ::unsetenv("GTEST_TOTAL_SHARDS");
  ::unsetenv("GTEST_SHARD_INDEX");
  EXPECT_EQ(shard_from_environment().value(), (Shard{0, 1}));
  ::setenv("GTEST_TOTAL_SHARDS", "4", 1);
  ::setenv("GTEST_SHARD_INDEX", "3", 1);
  EXPECT_EQ(shard_from_environment().value(), (Shard{3, 4}));
  ::setenv("GTEST_SHARD_INDEX", "4", 1);
  EXPECT_FALSE(shard_from_environment().ok());
  ::unsetenv("GTEST_TOTAL_SHARDS");
  ::unsetenv("GTEST_SHARD_INDEX");
}

}  // namespace
}  // namespace quiesce::properties
