// Shrinking: a failing trace of hundreds of calls down to the few that cause the failure, still failing
// the same way, and itself a faithful recording.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "quiesce/faults/plan.h"
#include "quiesce/properties/record_case.h"
#include "quiesce/properties/replay.h"
#include "scenario.h"

namespace quiesce::traces {
namespace {

Trace decoded(const std::vector<std::byte>& bytes) {
  TraceResult<Trace> trace = decode_binary(bytes);
  EXPECT_TRUE(trace.ok());
  return trace.ok() ? std::move(trace).value() : Trace{};
}

constexpr std::uint64_t kEngineCorpusSeed = 55433;  // see AnEngineRunIsKeptAsARegressionTrace

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

// A fault this build's injector cannot tell makes the trace unreplayable: shrinking refuses it just as
// replaying does, naming the same record, rather than shrinking without that fault.
TEST(Shrink, AFaultTheInjectorCannotTellIsRefusedAsReplayRefusesIt) {
  const properties::RunConfig config = *properties::make_run_config(17, "none", 0);
  Trace trace = decoded(testing::record_scenario(config, testing::Scenario{}));
  Record fault;
  fault.kind = RecordKind::Fault;
  fault.note.name = "su`mit_indeterminate";
  fault.note.detail = "submit";
  fault.note.count = 3;
  trace.records.insert(trace.records.begin() + 2, fault);
  trace.footer.record_count++;
  const TraceResult<properties::ReplayReport> replayed = properties::replay_trace(trace);
  ASSERT_FALSE(replayed.ok());
  const TraceResult<properties::ShrinkReport> shrunk = properties::shrink_trace(trace);
  ASSERT_FALSE(shrunk.ok()) << "shrank " << shrunk->calls_before << " calls to " << shrunk->calls_after;
  EXPECT_EQ(shrunk.error().message(), replayed.error().message());
  EXPECT_NE(shrunk.error().message().find("is not a fault this build's injector can tell"), std::string::npos)
      << shrunk.error().message();
  EXPECT_EQ(shrunk.error().where, TraceError::Where::Record);
  EXPECT_EQ(shrunk.error().position, 2U);
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

// An engine trace: the engine never frees a buffer its unobserved batch uses, so the bug is planted in the
// recording. Right after a submit of the second half, the trace is cut and a free of the batch's target is
// appended with the violation it causes. Shrinking replays the engine's calls (no engine, no fibers), each
// at the virtual time it began at, and drops everything the failure does not need.
TEST(Shrink, AnEngineTraceWithAPlantedFreeWhilePinnedShrinks) {
  properties::CaseOptions options;
  options.plan = *faults::builtin_plan("none");
  options.operations = 300;
  options.determinism_every = 0;
  const Trace engine = decoded(properties::record_case(19, options).trace);
  std::size_t cut = 0;
  std::uint64_t target = 0;
  std::uint64_t calls = 0;
  std::uint64_t call_of_cut = 0;
  for (std::size_t index = 0; index < engine.records.size(); ++index) {
    const Record& record = engine.records[index];
    if (record.kind != RecordKind::Call) continue;
    ++calls;
    if (cut == 0 && index > engine.records.size() / 2 && record.call.op == Op::Submit && record.call.status == 0 &&
        !record.call.commands.empty() && record.call.commands.back().target != 0) {
      cut = index + 1;
      target = record.call.commands.back().target;
      call_of_cut = calls;
    }
  }
  ASSERT_NE(cut, 0U) << "no submit with a target buffer in the second half";
  Trace planted;
  planted.header = engine.header;
  planted.records.assign(engine.records.begin(), engine.records.begin() + static_cast<std::ptrdiff_t>(cut));
  // Notes after the submit that name it (faults, findings) are dropped with the rest: the cut is a call.
  Record free_call;
  free_call.kind = RecordKind::Call;
  free_call.call.op = Op::FreeBuffer;
  free_call.call.subject = target;
  planted.records.push_back(free_call);
  Record violation;
  violation.kind = RecordKind::Violation;
  violation.note.call_index = call_of_cut;
  violation.note.name = "caller.release-while-pinned";
  planted.records.push_back(violation);
  planted.footer = compute_footer(planted.header, planted.records);
  ASSERT_GT(planted.call_count(), 100U);
  const TraceResult<properties::ShrinkReport> report = properties::shrink_trace(planted);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(report->failure, "violation caller.release-while-pinned");
  std::printf("engine trace: shrank %llu calls to %llu in %llu replays\n", static_cast<unsigned long long>(report->calls_before),
              static_cast<unsigned long long>(report->calls_after), static_cast<unsigned long long>(report->replays));
  EXPECT_LE(report->calls_after, 8U) << "shrinking stopped early at " << report->calls_after << " of "
                                     << report->calls_before << " calls";
  EXPECT_GE(report->calls_after, 4U) << "context, queue, allocation, submit and the free are all needed";
  const TraceResult<properties::ReplayReport> replayed = properties::replay_trace(report->minimal);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message();
  EXPECT_TRUE(replayed->faithful());
  maybe_keep(report->minimal, "engine_free_while_pinned.jsonl");
}

// Not minimal: an engine run (seed 55433, the `default` plan, 300 operations: the case `quiesce run --seed
// 55433 --operations 300 --trace` records). Between two of its calls the engine let virtual time pass that
// no call accounts for; a replay that did not move the clock to where each call began diverged at its
// record 1402. Kept so that engine replay stays exact.
TEST(Shrink, AnEngineRunIsKeptAsARegressionTrace) {
  properties::CaseOptions options;
  options.plan = *faults::builtin_plan("default");
  options.operations = 300;
  options.determinism_every = 0;
  const Trace trace = decoded(properties::record_case(kEngineCorpusSeed, options).trace);
  EXPECT_GT(trace.records.size(), 1402U);
  const TraceResult<properties::ReplayReport> replayed = properties::replay_trace(trace);
  ASSERT_TRUE(replayed.ok());
  EXPECT_TRUE(replayed->faithful());
  // Kept in the binary encoding at format version 1, which every reader since the first one reads.
  const char* folder = std::getenv("QUIESCE_WRITE_CORPUS");
  if (folder == nullptr) return;
  Trace kept = trace;
  kept.header.format_version = 1;
  kept.footer = compute_footer(kept.header, kept.records);
  ASSERT_TRUE(write_trace_file((std::filesystem::path(folder) / "engine_default_plan.qtrace").string(), kept, Encoding::Binary).ok());
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
