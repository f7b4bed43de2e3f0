// Plans: the built-in plans, swarm testing, and the text format of docs/faults.md (accepted as documented,
// each malformed line refused with its line number, to_text round-tripping).
#include <gtest/gtest.h>

#include <string>

#include "quiesce/faults/plan.h"

namespace quiesce::faults {
namespace {

// The example of docs/faults.md, verbatim.
constexpr std::string_view kDocumentedExample = R"(# a campaign plan: moderate faults, no device loss, two scripted ones
plan default
seed 42
swarm on
rate submit_rejected 1/50
rate device_lost 0/1
family transfer off
commands replay off
delay_polls_max 8
script free_buffer 7 rejected
script submit 3 partial_submit 2   # the 3rd submit keeps a prefix of 2 commands
)";

TEST(PlanText, TheDocumentedExampleParses) {
  const auto parsed = parse_plan(kDocumentedExample);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Plan& plan = parsed.value();
  EXPECT_EQ(plan.seed, 42U);
  EXPECT_TRUE(plan.swarm_from_seed);
  EXPECT_EQ(plan.rate(FaultKind::SubmitRejected), (Ratio{1, 50}));
  EXPECT_EQ(plan.rate(FaultKind::DeviceLost), (Ratio{0, 1}));
  EXPECT_EQ(plan.rate(FaultKind::PollIndeterminate), Plan::standard().rate(FaultKind::PollIndeterminate));
  EXPECT_FALSE(plan.family_enabled(FaultFamily::Transfer));
  EXPECT_TRUE(plan.family_enabled(FaultFamily::Submit));
  EXPECT_FALSE(plan.command_kind_enabled(CommandKind::Replay));
  EXPECT_EQ(plan.delay_polls_max, 8U);
  ASSERT_EQ(plan.script.size(), 2U);
  EXPECT_EQ(plan.script[0], (ScriptedFault{Site::FreeBuffer, 7, FaultKind::ReleaseRejected, std::nullopt}));
  EXPECT_EQ(plan.script[1], (ScriptedFault{Site::Submit, 3, FaultKind::PartialSubmit, 2}));
}

TEST(PlanText, AliasesResolveByTheSite) {
  const auto parsed = parse_plan("script submit 1 rejected\nscript poll_event 2 indeterminate\n"
                                 "script read_buffer 1 partial\nscript allocate_buffer 4 oom\n"
                                 "script cancel_event 1 lost\nscript wait_event 1 lost\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const auto& script = parsed.value().script;
  ASSERT_EQ(script.size(), 6U);
  EXPECT_EQ(script[0].kind, FaultKind::SubmitRejected);
  EXPECT_EQ(script[1].kind, FaultKind::PollIndeterminate);
  EXPECT_EQ(script[2].kind, FaultKind::PartialRead);
  EXPECT_EQ(script[3].kind, FaultKind::AllocationFailure);
  EXPECT_EQ(script[4].kind, FaultKind::CancelLost);
  EXPECT_EQ(script[5].kind, FaultKind::DeviceLost);
}

TEST(PlanText, BuiltinsSwarmScriptsAndReplayRoundTrip) {
  Plan custom = Plan::swarm(77);
  custom.delay_polls_max = 9;
  custom.script.push_back(ScriptedFault{Site::ReadBuffer, 3, FaultKind::PartialRead, 5});
  custom.script.push_back(ScriptedFault{Site::DestroyEvent, 1, FaultKind::ReleaseIndeterminate, std::nullopt});
  custom.failing_site = 12;
  Plan replay = Plan::replay({InjectedFault{4, Site::Submit, 2, FaultKind::PartialSubmit, 1},
                              InjectedFault{9, Site::FreeBuffer, 1, FaultKind::ReleaseIndeterminate, 0}});
  for (const Plan& plan : {Plan::none(), Plan::standard(), Plan::all(), custom, replay}) {
    const std::string text = to_text(plan);
    const auto parsed = parse_plan(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message << "\n" << text;
    EXPECT_EQ(parsed.value(), plan) << text;
  }
}

TEST(PlanText, BuiltinNamesAndPlanDirective) {
  EXPECT_EQ(builtin_plan("default"), Plan::standard());
  EXPECT_EQ(builtin_plan("all"), Plan::all());
  EXPECT_EQ(builtin_plan("none"), Plan::none());
  EXPECT_FALSE(builtin_plan("most").has_value());
  const auto parsed = parse_plan("\n# comment only\nplan all\n");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.value(), Plan::all());
}

struct Malformed {
  std::string_view text;
  std::uint32_t line;
  std::string_view reason;  // a piece of the message that names the value or the rule
};

TEST(PlanText, EachMalformedLineIsRefusedWithItsLineNumber) {
  const Malformed cases[] = {
      {"seed 1\nrate submit_rejectd 1/2\n", 2, "'submit_rejectd' is not a fault kind"},
      {"rate submit_rejected 3/2\n", 1, "above 1"},
      {"rate submit_rejected 1/0\n", 1, "zero denominator"},
      {"rate submit_rejected half\n", 1, "not an integer ratio"},
      {"rate submit_rejected\n", 1, "expects"},
      {"seed 1\n\nseed -4\n", 3, "'-4' is not an unsigned integer"},
      {"seed 12x\n", 1, "'12x' is not an unsigned integer"},
      {"swarm maybe\n", 1, "neither 'on' nor 'off'"},
      {"family gpu off\n", 1, "'gpu' is not a fault family"},
      {"commands teleport off\n", 1, "'teleport' is not a command kind"},
      {"script free_bufer 7 rejected\n", 1, "'free_bufer' is not a backend method"},
      {"script free_buffer 0 rejected\n", 1, "counts from 1"},
      {"script free_buffer 7 partial_write\n", 1, "never happens at free_buffer"},
      {"script free_buffer 7 delayed\n", 1, "names no fault that can happen at free_buffer"},
      {"seed 1\nplan all\n", 2, "must be the first directive"},
      {"plan some\n", 1, "'some' is not a built-in plan"},
      {"delay_polls_max 0\n", 1, "outside 1 to 1000"},
      {"fault 3 submit 1 release_rejected 0\n", 1, "never happens at submit"},
      {"fault 3 submit 1\n", 1, "expects"},
      {"bogus 1\n", 1, "'bogus' is not a directive"},
      {"a b c d e f g h i\n", 1, "at most 8 words"},
      // A setting given twice is refused at the second line, naming the first.
      {"seed 1\nswarm on\nseed 2\n", 3, "'seed' is set again; line 1 set it already"},
      {"plan default\nrate device_lost 0/1\nrate device_lost 1/2\n", 3, "'rate device_lost' is set again; line 2"},
      {"family transfer off\nfamily transfer on\n", 2, "'family transfer' is set again"},
      {"commands replay off\n# twice\ncommands replay off\n", 3, "'commands replay' is set again; line 1"},
      {"script submit 3 partial\nscript submit 03 partial_submit 2\n", 2,
       "'script submit 3 partial_submit' is set again; line 1"},
      {"replay on\nreplay off\n", 2, "'replay' is set again"},
      {"delay_polls_max 4\ndelay_polls_max 4\n", 2, "'delay_polls_max' is set again"},
      {"fail_site 1\nfail_site 2\n", 2, "'fail_site' is set again"},
  };
  for (const Malformed& malformed : cases) {
    const auto parsed = parse_plan(malformed.text);
    ASSERT_FALSE(parsed.ok()) << malformed.text;
    EXPECT_EQ(parsed.error().line, malformed.line) << malformed.text;
    EXPECT_NE(parsed.error().message.find(malformed.reason), std::string::npos)
        << "message: " << parsed.error().message;
    EXPECT_EQ(parsed.error().message.rfind("line " + std::to_string(malformed.line) + ": ", 0), 0U);
  }
}

TEST(PlanText, WhatMayRepeatRepeats) {
  // Scripts differ by site, ordinal or kind; fault lines are a recording and may share anything.
  const auto parsed = parse_plan(
      "script submit 3 partial\nscript submit 3 rejected\nscript submit 4 partial\nscript poll_event 3 indeterminate\n"
      "rate submit_rejected 1/9\nrate device_lost 0/1\nfault 1 submit 1 partial_submit 1\n"
      "fault 1 submit 1 partial_submit 1\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed.value().script.size(), 4U);
  EXPECT_EQ(parsed.value().replay_faults.size(), 2U);
}

TEST(FaultNames, EveryNameRoundTripsAndAFaultDescribesItself) {
  for (std::uint32_t site = 0; site < kSiteCount; ++site) {
    EXPECT_EQ(site_from_string(to_string(static_cast<Site>(site))), static_cast<Site>(site));
  }
  for (std::uint32_t kind = 0; kind < kFaultKindCount; ++kind) {
    const auto fault = static_cast<FaultKind>(kind);
    EXPECT_EQ(fault_kind_from_string(to_string(fault)), fault);
    std::uint32_t sites = 0;
    for (std::uint32_t site = 0; site < kSiteCount; ++site) sites += fault_possible_at(fault, static_cast<Site>(site));
    EXPECT_GT(sites, 0U) << to_string(fault) << " can happen nowhere";
  }
  for (std::uint32_t family = 0; family < kFaultFamilyCount; ++family) {
    EXPECT_EQ(fault_family_from_string(to_string(static_cast<FaultFamily>(family))), static_cast<FaultFamily>(family));
  }
  EXPECT_FALSE(site_from_string("free").has_value());
  EXPECT_EQ(describe(InjectedFault{17, Site::FreeBuffer, 3, FaultKind::ReleaseIndeterminate, 0}),
            "call 17: free_buffer #3 release_indeterminate (parameter 0)");
}

TEST(Swarm, ChoosesFromTheSeedAndKeepsSomethingOn) {
  std::uint32_t distinct_masks = 0;
  std::uint32_t previous = 0;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    const Plan plan = Plan::swarm(seed);
    EXPECT_NE(plan.families_enabled, 0U);
    EXPECT_NE(plan.command_kinds_enabled, 0U);
    EXPECT_EQ(plan.families_enabled & ~kAllFamilies, 0U);
    EXPECT_EQ(Plan::swarm(seed), plan);  // the same seed chooses the same
    if (plan.families_enabled != previous) distinct_masks++;
    previous = plan.families_enabled;
  }
  EXPECT_GT(distinct_masks, 16U);  // whole families really switch, seed to seed
}

TEST(BuiltinPlans, DefaultHasEveryFamilyAndRareDeviceLoss) {
  const Plan standard = Plan::standard();
  const Plan all = Plan::all();
  for (std::uint32_t kind = 0; kind < kFaultKindCount; ++kind) {
    const Ratio rate = standard.rates[kind];
    EXPECT_GT(rate.numerator, 0U) << to_string(static_cast<FaultKind>(kind));
    // "all" is at least as aggressive as "default" for every kind: a/b >= c/d.
    const Ratio higher = all.rates[kind];
    EXPECT_GE(higher.numerator * rate.denominator, rate.numerator * higher.denominator);
  }
  EXPECT_LE(standard.rate(FaultKind::DeviceLost).numerator * 1000,
            standard.rate(FaultKind::DeviceLost).denominator);
  for (std::uint32_t kind = 0; kind < kFaultKindCount; ++kind) EXPECT_EQ(Plan::none().rates[kind].numerator, 0U);
}

}  // namespace
}  // namespace quiesce::faults
