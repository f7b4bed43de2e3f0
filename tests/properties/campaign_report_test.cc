// Campaign reports as input: what report_from_json and merge_reports refuse in a report that was edited,
// truncated or put together wrongly, each with a sentence that names the field and the case; and the
// bounds on seed ranges and shards that keep a campaign from running out of memory before its first case.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "quiesce/properties/campaign.h"

namespace quiesce::properties {
namespace {

CaseResult synthetic_case(std::uint64_t seed) {
  CaseResult result;
  result.digest = seed * 31;
  if (seed % 4 == 1) result.failures.push_back({Invariant::R7, "a query blocked"});
  if (seed % 2 == 0) result.probes_hit.push_back("even");
  return result;
}

CampaignReport campaign(SeedRange seeds, Shard shard) {
  CampaignOptions options;
  options.name = "synthetic";
  options.seeds = seeds;
  options.shard = shard;
  options.probes_expected = {"even", "never"};
  return run_campaign(options, synthetic_case);
}

// The error report_from_json gives for the report of seeds 0..7, shard 0 of 2, after `edit`.
std::string refusal(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json json = to_json(campaign({0, 7}, {0, 2}));
  edit(json);
  auto read = report_from_json(json);
  return read.ok() ? "(accepted)" : read.error();
}

void expect_refusal(const std::function<void(nlohmann::json&)>& edit, const std::string& expected) {
  const std::string error = refusal(edit);
  EXPECT_NE(error.find(expected), std::string::npos) << "expected '" << expected << "' in: " << error;
}

TEST(CampaignReport, AnUneditedReportReadsBack) {
  const CampaignReport report = campaign({0, 7}, {0, 2});
  auto back = report_from_json(to_json(report));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value(), report);
}

TEST(CampaignReport, MissingAndMistypedFieldsAreNamedWithTheirCase) {
  // The cases of shard 0 of 2 over 0..7 are seeds 0, 2, 4 and 6; case 1 is seed 2.
  expect_refusal([](nlohmann::json& j) { j["cases"][1].erase("digest"); },
                 "case for seed 2: field 'digest' is missing");
  expect_refusal([](nlohmann::json& j) { j["cases"][1]["operations"] = -1; },
                 "case for seed 2: field 'operations' is -1, not an unsigned integer");
  expect_refusal([](nlohmann::json& j) { j["cases"][1]["digest"] = 2.5; }, "field 'digest' is 2.5, not an unsigned");
  expect_refusal([](nlohmann::json& j) { j["cases"][2]["seed"] = -4; },
                 "case 2 of field 'cases': field 'seed' is -4, not an unsigned integer");
  expect_refusal([](nlohmann::json& j) { j["cases"][0]["probes"] = {1}; }, "field 'probes' holds 1, not a string");
  expect_refusal([](nlohmann::json& j) { j.erase("name"); }, "field 'name' is missing");
  expect_refusal([](nlohmann::json& j) { j["seeds"]["last"] = "7"; }, "field 'seeds': field 'last' is \"7\"");
  expect_refusal([](nlohmann::json& j) { j["shards"][0]["index"] = -1; }, "field 'index' is -1, not an unsigned");
  expect_refusal([](nlohmann::json& j) { j["cases_total"] = -1; }, "field 'cases_total' is -1");
  expect_refusal([](nlohmann::json& j) { j = nlohmann::json::array(); }, "the report is [], not a JSON object");
  // No raw nlohmann exception text.
  const std::string missing = refusal([](nlohmann::json& j) { j["cases"][1].erase("digest"); });
  EXPECT_EQ(missing.find("json.exception"), std::string::npos) << missing;
}

TEST(CampaignReport, CasesMustBeSeedsOfTheReportsRangeAndShard) {
  expect_refusal([](nlohmann::json& j) { j["cases"][3]["seed"] = 8; },
                 "case for seed 8: the seed is outside the report's range 0..7");
  expect_refusal([](nlohmann::json& j) { j["cases"][1]["seed"] = 3; },
                 "case for seed 3: the seed belongs to shard 1 of 2, which the report does not cover");
  expect_refusal([](nlohmann::json& j) { j["cases"][1] = j["cases"][0]; },
                 "case for seed 0: it follows the case for seed 0");
  expect_refusal([](nlohmann::json& j) { j["cases"].erase(1); },
                 "the report holds 3 cases, but its shards hold 4 seeds");
}

TEST(CampaignReport, ShardsMustBeOneShardingEachOnce) {
  expect_refusal([](nlohmann::json& j) { j["shards"] = nlohmann::json::array(); }, "field 'shards' is empty");
  expect_refusal([](nlohmann::json& j) { j["shards"][0]["total"] = 0; }, "names shard 0 of 0");
  expect_refusal([](nlohmann::json& j) { j["shards"][0]["index"] = 2; }, "names shard 2 of 2");
  expect_refusal([](nlohmann::json& j) { j["shards"][0]["total"] = 4294967298U; }, "names shard 0 of 4294967298");
  expect_refusal(
      [](nlohmann::json& j) {
        const nlohmann::json again = j["shards"][0];  // a copy: push_back may move the element it was given
        j["shards"].push_back(again);
      },
      "shard 0 of 2 appears twice");
  expect_refusal([](nlohmann::json& j) { j["shards"].push_back({{"index", 1}, {"total", 3}}); },
                 "are of different shardings");
}

TEST(CampaignReport, SummaryFieldsMustAgreeWithTheCases) {
  // Seed 2 passed; seed 4 passed; of 0, 2, 4, 6 none is 1 mod 4, so the shard has no failure.
  expect_refusal([](nlohmann::json& j) { j["cases"][1]["passed"] = false; },
                 "case for seed 2: field 'passed' is false but the case lists 0 failures");
  expect_refusal([](nlohmann::json& j) { j["cases_total"] = 5; }, "field 'cases_total' is 5 but the report holds 4");
  expect_refusal([](nlohmann::json& j) { j["failures"] = 1; }, "field 'failures' is 1 but 0 of the report's cases");
  expect_refusal([](nlohmann::json& j) { j["probe_hits"]["even"] = 9; }, "field 'probe_hits' does not count");
  expect_refusal([](nlohmann::json& j) { j["probes_never_reached"] = nlohmann::json::array(); },
                 "field 'probes_never_reached' does not match");
}

TEST(CampaignReport, ReversedAndUncountableRangesAreRefusedAsSuch) {
  expect_refusal([](nlohmann::json& j) { j["seeds"] = {{"first", 30}, {"last", 3}}; },
                 "the seed range 30..3 ends before it starts");
  // 0..2^64-1 holds 2^64 seeds: the count must not wrap to 0 and match an empty report.
  const std::string whole = refusal([](nlohmann::json& j) {
    j["seeds"] = {{"first", 0}, {"last", UINT64_MAX}};
    j["shards"] = {{{"index", 0}, {"total", 1}}};
    j["cases"] = nlohmann::json::array();
    j["cases_total"] = 0;
    j["failures"] = 0;
    j["probe_hits"] = nlohmann::json::object();
    j["probes_never_reached"] = {"even", "never"};
  });
  EXPECT_NE(whole.find("the report holds 0 cases, but its shards hold 2^64 seeds"), std::string::npos) << whole;
  CampaignReport reversed = campaign({0, 7}, {});
  reversed.seeds = {30, 3};
  auto merged = merge_reports({reversed});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.error().find("the seed range 30..3 ends before it starts"), std::string::npos) << merged.error();
}

TEST(CampaignReport, MergeRefusesReportsWithoutShardsAndMixedShardings) {
  CampaignReport no_shards = campaign({0, 3}, {});
  no_shards.shards.clear();
  auto merged = merge_reports({no_shards});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.error().find("names no shard"), std::string::npos) << merged.error();
  const CampaignReport halves = campaign({0, 11}, {0, 2});
  const CampaignReport thirds = campaign({0, 11}, {1, 3});
  merged = merge_reports({halves, thirds});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.error().find("different shardings"), std::string::npos) << merged.error();
  CampaignReport wrong_shard = campaign({0, 11}, {1, 2});
  wrong_shard.cases[0].seed = 0;  // seed 0 is shard 0's
  merged = merge_reports({halves, wrong_shard});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.error().find("seed 0 is not a seed of the shards of its report"), std::string::npos)
      << merged.error();
}

TEST(CampaignReport, MergeRefusesAMissingShardThatHoldsNoSeed) {
  // Two seeds in four shards: shards 2 and 3 hold none, but their reports are part of the campaign.
  auto merged = merge_reports({campaign({0, 1}, {0, 4}), campaign({0, 1}, {1, 4}), campaign({0, 1}, {3, 4})});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.error().find("leave out shard 2 of 4"), std::string::npos) << merged.error();
  merged = merge_reports(
      {campaign({0, 1}, {0, 4}), campaign({0, 1}, {1, 4}), campaign({0, 1}, {2, 4}), campaign({0, 1}, {3, 4})});
  ASSERT_TRUE(merged.ok()) << merged.error();
  EXPECT_EQ(merged.value(), campaign({0, 1}, {}));
}

TEST(CampaignReport, MergeRefusesProbeHitsThatAddUpPast64Bits) {
  CampaignReport first = campaign({0, 3}, {0, 2});
  CampaignReport second = campaign({0, 3}, {1, 2});
  first.probe_hits["even"] = UINT64_MAX;
  second.probe_hits["even"] = 1;
  auto merged = merge_reports({first, second});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.error().find("the hits of probe 'even' add up past 2^64-1"), std::string::npos) << merged.error();
}

TEST(CampaignReport, SeedsInAShardAreCountedWithoutWrapping) {
  EXPECT_EQ(seeds_in_shard({0, 9}, {}), 10U);
  EXPECT_EQ(seeds_in_shard({0, 9}, {1, 4}), 3U);  // 1, 5, 9
  EXPECT_EQ(seeds_in_shard({0, 1}, {3, 4}), 0U);
  EXPECT_EQ(seeds_in_shard({0, UINT64_MAX}, {}), UINT64_MAX);  // 2^64, saturated
  EXPECT_EQ(seeds_in_shard({0, UINT64_MAX}, {0, 2}), std::uint64_t{1} << 63);
  EXPECT_EQ(seeds_in_shard({UINT64_MAX, UINT64_MAX}, {}), 1U);
}

TEST(CampaignReport, ARangeAboveTheMaximumPerInvocationIsRefusedBeforeItRuns) {
  auto huge = parse_seed_range("0..1000000000");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().find("above the maximum of 100000000 for one invocation"), std::string::npos) << huge.error();
  EXPECT_NE(huge.error().find("GTEST_TOTAL_SHARDS"), std::string::npos) << huge.error();
  auto whole = parse_seed_range("0..18446744073709551615");
  ASSERT_FALSE(whole.ok());
  EXPECT_NE(whole.error().find("gives this run 2^64 seeds"), std::string::npos) << whole.error();
  // The bound counts the seeds of this shard: 20 shards of a billion seeds run 50 million each.
  EXPECT_TRUE(parse_seed_range("0..999999999", {3, 20}).ok());
  EXPECT_FALSE(parse_seed_range("0..999999999", {3, 5}).ok());
  EXPECT_TRUE(parse_seed_range("0..99999999").ok());
  EXPECT_FALSE(parse_seed_range("0..100000000").ok());
}

TEST(CampaignReport, ACampaignAtTheTopOfTheSeedSpaceRunsItsShardsSeeds) {
  const CampaignReport report = campaign({UINT64_MAX - 9, UINT64_MAX}, {1, 3});
  ASSERT_EQ(report.cases.size(), 3U);
  EXPECT_EQ(report.cases[0].seed, UINT64_MAX - 8);
  EXPECT_EQ(report.cases[2].seed, UINT64_MAX - 2);
}

TEST(CampaignReport, TooManyShardsSayTheMaximum) {
  ::setenv("GTEST_TOTAL_SHARDS", "2000000", 1);
  ::setenv("GTEST_SHARD_INDEX", "0", 1);
  auto shard = shard_from_environment();
  ASSERT_FALSE(shard.ok());
  EXPECT_EQ(shard.error(), "GTEST_TOTAL_SHARDS 2000000 is above the maximum of 1000000");
  ::setenv("GTEST_TOTAL_SHARDS", "0", 1);
  shard = shard_from_environment();
  ASSERT_FALSE(shard.ok());
  EXPECT_NE(shard.error().find("at least one shard"), std::string::npos) << shard.error();
  ::unsetenv("GTEST_TOTAL_SHARDS");
  ::unsetenv("GTEST_SHARD_INDEX");
}

}  // namespace
}  // namespace quiesce::properties
