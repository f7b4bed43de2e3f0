// Shrinking: a failing trace of hundreds of calls down to the few that cause the failure, still failing
// the same way, and itself a faithful recording.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "quiesce/properties/replay.h"
#include "scenario.h"

namespace quiesce::traces {
namespace {

Trace decoded(const std::vector<std::byte>& bytes) {
  TraceResult<Trace> trace = decode_binary(bytes);
  EXPECT_TRUE(trace.ok());
  return trace.ok() ? std::move(trace).value() : Trace{};
}

bool has_note(const Trace& trace, RecordKind kind, const std::string& name) {
  for (const Record& record : trace.records) {
    if (record.kind == kind && record.note.name == name) return true;
  }
  return false;
}

// Writes `trace` into the corpus when QUIESCE_WRITE_CORPUS names a folder (a maintainer's step).
void maybe_keep(const Trace& trace, const std::string& name) {
  const char* folder = std::getenv("QUIESCE_WRITE_CORPUS");
  if (folder == nullptr) return;
  ASSERT_TRUE(write_trace_file((std::filesystem::path(folder) / name).string(), trace, Encoding::JsonLines).ok());
}

TEST(Shrink, AReleaseWhilePinnedShrinksToAHandfulOfCalls) {
  const properties::RunConfig config = *properties::make_run_config(17, "none", 0);
  const Trace trace = decoded(testing::record_scenario(config, testing::Scenario{}));
  ASSERT_GT(trace.call_count(), 240U);
  const TraceResult<properties::ShrinkReport> report = properties::shrink_trace(trace);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report->failure.rfind("violation ", 0), 0U) << report->failure;
  EXPECT_EQ(report->calls_before, trace.call_count());
  EXPECT_LE(report->calls_after, 7U) << "shrinking stopped early";
  EXPECT_GE(report->calls_after, 4U) << "context, queue, allocation, submit and the early free are all needed";
  EXPECT_TRUE(has_note(report->minimal, RecordKind::Violation, report->failure.substr(10)));
  const TraceResult<properties::ReplayReport> replayed = properties::replay_trace(report->minimal);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message();
  EXPECT_TRUE(replayed->faithful());
  maybe_keep(report->minimal, "release_while_pinned.jsonl");
}

TEST(Shrink, AUseAfterFreeFindingShrinksWhenTheValidatorOnlyWatches) {
  properties::RunConfig config = *properties::make_run_config(23, "none", 0);
  config.validator.mode = ViolationMode::CollectAll;  // the early free reaches the device
  const Trace trace = decoded(testing::record_scenario(config, testing::Scenario{60, true}));
  properties::ShrinkOptions options;
  options.failure = "finding use-after-free";
  const TraceResult<properties::ShrinkReport> report = properties::shrink_trace(trace, options);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report->failure, "finding use-after-free");
  EXPECT_LE(report->calls_after, 9U);
  EXPECT_TRUE(has_note(report->minimal, RecordKind::Finding, "use-after-free"));
  const TraceResult<properties::ReplayReport> replayed = properties::replay_trace(report->minimal);
  ASSERT_TRUE(replayed.ok());
  EXPECT_TRUE(replayed->faithful());
  maybe_keep(report->minimal, "use_after_free.jsonl");
}

TEST(Shrink, ACleanTraceHasNothingToShrink) {
  const properties::RunConfig config = *properties::make_run_config(29, "none", 0);
  const Trace trace = decoded(testing::record_scenario(config, testing::Scenario{10, false}));
  const TraceResult<properties::ShrinkReport> report = properties::shrink_trace(trace);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().message().find("no failure to shrink"), std::string::npos) << report.error().message();
}

TEST(Shrink, AFaultyRunIsKeptAsARegressionTrace) {
  const properties::RecordedRun run = properties::record_raw_run(*properties::make_run_config(31, "all", 40));
  const Trace trace = decoded(run.trace);
  EXPECT_GT(run.faults, 0U);
  const TraceResult<properties::ReplayReport> replayed = properties::replay_trace(trace);
  ASSERT_TRUE(replayed.ok());
  EXPECT_TRUE(replayed->faithful());
  maybe_keep(trace, "faults_all_plan.qtrace");
}

// Not a test of shrinking but the step that keeps what a campaign found: the raw workload's seed 11 under
// the default plan made the oracle report an unordered conflict between queues; its minimal trace is kept.
TEST(Shrink, KeepTheRawWorkloadConflict) {
  if (std::getenv("QUIESCE_WRITE_CORPUS") == nullptr) GTEST_SKIP() << "set QUIESCE_WRITE_CORPUS=DIR to write the corpus";
  const properties::RecordedRun run = properties::record_raw_run(*properties::make_run_config(11, "default", 2000));
  ASSERT_GT(run.findings, 0U) << "the raw workload no longer produces this finding";
  const TraceResult<properties::ShrinkReport> report = properties::shrink_trace(decoded(run.trace));
  ASSERT_TRUE(report.ok()) << report.error().message();
  std::printf("shrank %llu calls to %llu in %llu replays: %s\n", static_cast<unsigned long long>(report->calls_before),
              static_cast<unsigned long long>(report->calls_after), static_cast<unsigned long long>(report->replays),
              report->failure.c_str());
  maybe_keep(report->minimal, "raw_workload_unordered_conflict.jsonl");
}

}  // namespace
}  // namespace quiesce::traces
