// Whole-run properties of the injector over a fixed workload: scripted ordinals, count-then-inject
// enumeration, determinism, replay of a recorded fault log, swarm from the seed, and no leak in the inner
// backend whatever was injected.
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <utility>

#include "test_support.h"
#include "workload.h"

namespace quiesce::faults::testing {
namespace {

struct RunResult {
  std::string transcript;
  std::vector<InjectedFault> log;
  std::uint64_t sites = 0;
  std::uint64_t replay_unapplied = 0;
  std::size_t live_after = 0;  // handles the inner backend still holds once the injector is gone
};

RunResult run_workload(const Plan& plan) {
  ToyBackend toy;
  RunResult result;
  {
    Injector<ToyBackend> injector(toy, plan);
    Workload<Injector<ToyBackend>> workload(injector);
    result.transcript = workload.run();
    result.log = injector.injected();
    result.sites = injector.sites_seen();
    result.replay_unapplied = injector.replay_unapplied();
  }
  result.live_after = toy.live_buffers() + toy.live_contexts() + toy.live_queues() + toy.live_programs() +
                      toy.live_events();
  return result;
}

TEST(Scripted, TheSeventhFreeBufferIsRejectedAndNoOther) {
  ToyStack stack(scripted(Site::FreeBuffer, 7, FaultKind::ReleaseRejected), 10);
  for (std::size_t index = 0; index < 10; ++index) {
    ReleaseResult<Buffer> result = stack.injector.free_buffer(std::move(stack.buffers[index]));
    EXPECT_EQ(result.status, index == 6 ? ReleaseStatus::Rejected : ReleaseStatus::Released) << index;
  }
  ASSERT_EQ(stack.injector.injected().size(), 1U);
  EXPECT_EQ(stack.injector.injected()[0].site, Site::FreeBuffer);
  EXPECT_EQ(stack.injector.injected()[0].site_ordinal, 7U);
  EXPECT_EQ(stack.toy.live_buffers(), 1U);
}

TEST(CountThenInject, FailsEachSiteOfTheWorkloadInTurn) {
  const RunResult counting = run_workload(Plan::none());
  ASSERT_TRUE(counting.log.empty());
  ASSERT_GT(counting.sites, 10U);
  std::cout << "count-then-inject: the workload has " << counting.sites << " fault sites\n";
  std::set<std::pair<std::uint64_t, FaultKind>> faulted;
  for (std::uint64_t site = 0; site < counting.sites; ++site) {
    const RunResult run = run_workload(Plan::fail_site(site));
    ASSERT_EQ(run.log.size(), 1U) << "site " << site;
    faulted.insert({run.log[0].call_index, run.log[0].kind});
    EXPECT_NE(run.transcript, counting.transcript) << "site " << site << " changed nothing the runtime saw";
    EXPECT_EQ(run.live_after, 0U) << "site " << site << " leaked in the inner backend: " << run.transcript;
  }
  EXPECT_EQ(faulted.size(), counting.sites);  // every site is a distinct (call, fault) pair
}

TEST(Determinism, TheSameSeedTellsTheSameLies) {
  Plan plan = Plan::all();
  plan.seed = 5;
  const RunResult first = run_workload(plan);
  const RunResult second = run_workload(plan);
  ASSERT_FALSE(first.log.empty());
  EXPECT_EQ(first.log, second.log);
  EXPECT_EQ(first.transcript, second.transcript);
  plan.seed = 6;
  EXPECT_NE(run_workload(plan).log, first.log);
}

TEST(Replay, ARecordedLogIsToldAgainExactly) {
  std::uint32_t replayed = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    Plan plan = Plan::all();
    plan.seed = seed;
    const RunResult recorded = run_workload(plan);
    if (recorded.log.empty()) continue;
    // Through the text format too, as a trace would carry it.
    const auto reparsed = parse_plan(to_text(Plan::replay(recorded.log)));
    ASSERT_TRUE(reparsed.ok()) << reparsed.error().message;
    const RunResult replay = run_workload(reparsed.value());
    EXPECT_EQ(replay.log, recorded.log) << "seed " << seed;
    EXPECT_EQ(replay.transcript, recorded.transcript) << "seed " << seed;
    EXPECT_EQ(replay.replay_unapplied, 0U) << "seed " << seed;
    replayed++;
  }
  EXPECT_GT(replayed, 30U);
}

TEST(Replay, AFaultThatNoLongerFitsIsCountedAsUnapplied) {
  // A recorded partial submit at a call that is now a free_buffer cannot be told there.
  const RunResult run = run_workload(Plan::replay({InjectedFault{1, Site::Submit, 1, FaultKind::PartialSubmit, 1}}));
  EXPECT_TRUE(run.log.empty());
  EXPECT_EQ(run.replay_unapplied, 1U);
}

TEST(Swarm, TheInjectorAppliesTheSwarmFlagFromItsSeed) {
  ToyBackend toy;
  Plan plan = Plan::standard();
  plan.swarm_from_seed = true;
  Injector<ToyBackend> injector(toy, plan, 1234);
  EXPECT_FALSE(injector.plan().swarm_from_seed);
  EXPECT_EQ(injector.plan().families_enabled, Plan::swarm(1234).families_enabled);
  EXPECT_EQ(injector.plan().command_kinds_enabled, Plan::swarm(1234).command_kinds_enabled);
}

TEST(Campaign, EveryFaultKindIsToldAndNothingLeaks) {
  std::array<std::uint64_t, kFaultKindCount> told = {};
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    Plan plan = Plan::all();
    plan.seed = seed;
    plan.set_rate(FaultKind::DeviceLost, Ratio{1, 40});
    const RunResult run = run_workload(plan);
    EXPECT_EQ(run.live_after, 0U) << "seed " << seed << ": " << run.transcript;
    for (const InjectedFault& fault : run.log) told[static_cast<std::uint32_t>(fault.kind)]++;
  }
  for (std::uint32_t kind = 0; kind < kFaultKindCount; ++kind) {
    EXPECT_GT(told[kind], 0U) << to_string(static_cast<FaultKind>(kind)) << " was never told";
  }
}

}  // namespace
}  // namespace quiesce::faults::testing
