// Record, then replay exactly: the same records, the same digest, across seeds and the built-in fault plans,
// for the raw contract workload and for the engine workload (quiesce::Engine under FiberEnv, recorded
// through the campaign case it is: record_case.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "quiesce/faults/plan.h"
#include "quiesce/properties/record_case.h"
#include "quiesce/properties/recorded_stack.h"
#include "quiesce/properties/replay.h"
#include "quiesce/sim/fiber_env.h"
#include "quiesce/sim/device.h"
#include "quiesce/traces/recorder.h"
#include "quiesce/traces/validate.h"

namespace quiesce::traces {
namespace {

static_assert(Backend<Recorder<sim::Device>>);
static_assert(Backend<properties::RecordedSimStack::Top>);

// The default suite replays a short count; QUIESCE_TRACE_SEEDS=N replays N seeds per plan.
std::uint64_t seed_count() {
  const char* text = std::getenv("QUIESCE_TRACE_SEEDS");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 6;
}

Trace decoded(const std::vector<std::byte>& bytes) {
  TraceResult<Trace> trace = decode_binary(bytes);
  EXPECT_TRUE(trace.ok()) << (trace.ok() ? "" : trace.error().message());
  return trace.ok() ? std::move(trace).value() : Trace{};
}

// Replays a trace whose record `target` was changed (the footer is made again) and checks that the replay
// diverges there, with two different printed records; returns the divergence.
properties::Divergence divergence_after_change(Trace& trace, std::size_t target) {
  trace.footer = compute_footer(trace.header, trace.records);
  const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace);
  if (!report.ok() || !report->divergence.has_value()) {
    ADD_FAILURE() << "the changed trace replayed without a divergence";
    return {};
  }
  EXPECT_FALSE(report->faithful());
  EXPECT_EQ(report->divergence->record_index, target);
  EXPECT_NE(report->divergence->expected, report->divergence->actual);
  return *report->divergence;
}

class ReplayAcrossPlans : public ::testing::TestWithParam<const char*> {};

TEST_P(ReplayAcrossPlans, RecordThenReplayGivesTheSameTraceByteForByte) {
  std::uint64_t faults = 0;
  for (std::uint64_t seed = 1; seed <= seed_count(); ++seed) {
    const std::optional<properties::RunConfig> config = properties::make_run_config(seed * 7919, GetParam(), 300);
    ASSERT_TRUE(config.has_value());
    const properties::RecordedRun run = properties::record_raw_run(*config);
    faults += run.faults;
    const Trace trace = decoded(run.trace);
    ASSERT_TRUE(validate_trace(trace).ok());
    const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace);
    ASSERT_TRUE(report.ok()) << report.error().message();
    if (report->divergence.has_value()) {
      FAIL() << "seed " << seed * 7919 << " plan " << GetParam() << ": divergence at record "
             << report->divergence->record_index << "\n expected: " << report->divergence->expected
             << "\n actual:   " << report->divergence->actual;
    }
    EXPECT_TRUE(report->faithful());
    EXPECT_EQ(report->digest_actual, run.footer.digest);
    EXPECT_EQ(report->trace, run.trace) << "the replay's own recording differs from the original";
    EXPECT_EQ(report->calls_replayed, trace.call_count());
  }
  if (std::string(GetParam()) != "none") {
    EXPECT_GT(faults, 0U) << "the plan injected nothing: the test proves little";
  }
}

INSTANTIATE_TEST_SUITE_P(BuiltinPlans, ReplayAcrossPlans, ::testing::Values("none", "default", "all"));

TEST(Replay, JsonLinesReplaysToo) {
  const properties::RecordedRun run = properties::record_raw_run(*properties::make_run_config(5, "all", 200));
  const std::string text = encode_jsonl(decoded(run.trace));
  TraceResult<Trace> trace = decode_jsonl(text);
  ASSERT_TRUE(trace.ok()) << trace.error().message();
  const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace.value());
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->faithful());
}

TEST(Replay, ATamperedResultIsTheFirstDivergence) {
  const properties::RecordedRun run = properties::record_raw_run(*properties::make_run_config(11, "default", 200));
  Trace trace = decoded(run.trace);
  std::size_t target = 0;
  for (std::size_t index = trace.records.size() / 2; index < trace.records.size() && target == 0; ++index) {
    if (trace.records[index].kind == RecordKind::Call && trace.records[index].call.op == Op::Submit) target = index;
  }
  ASSERT_NE(target, 0U) << "the run made no submit in its second half";
  trace.records[target].call.commands_enqueued += 1;  // the recording claims another command was enqueued
  const properties::Divergence divergence = divergence_after_change(trace, target);
  EXPECT_NE(divergence.expected.find("submit"), std::string::npos);
}

TEST(Replay, ADivergenceThePrintedFormsHideShowsWhereTheRecordsDiffer) {
  const properties::RecordedRun run = properties::record_raw_run(*properties::make_run_config(11, "default", 50));
  Trace trace = decoded(run.trace);
  std::size_t target = trace.records.size();
  for (std::size_t index = 0; index < trace.records.size() && target == trace.records.size(); ++index) {
    if (trace.records[index].kind == RecordKind::Call && trace.records[index].call.has_error) target = index;
  }
  ASSERT_LT(target, trace.records.size()) << "no call of the run failed";
  // An error's native code is one of the fields describe_record leaves out.
  trace.records[target].call.error.native_code = 987654;
  const properties::Divergence divergence = divergence_after_change(trace, target);
  EXPECT_NE(divergence.expected.find("as JSON, from character"), std::string::npos) << divergence.expected;
  EXPECT_NE(divergence.expected.find("987654"), std::string::npos) << divergence.expected;
  EXPECT_EQ(divergence.actual.find("987654"), std::string::npos) << divergence.actual;
}

TEST(Replay, AnImpossibleTraceReplaysNothing) {
  const properties::RecordedRun run = properties::record_raw_run(*properties::make_run_config(3, "none", 50));
  Trace trace = decoded(run.trace);
  trace.records.back().call.subject = 1'000'000;
  trace.records.back().call.op = Op::FreeBuffer;
  trace.footer = compute_footer(trace.header, trace.records);
  const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().message().find("impossible sequence"), std::string::npos) << report.error().message();
}

TEST(Replay, AHeaderAskingForTooMuchIsRefused) {
  const properties::RecordedRun run = properties::record_raw_run(*properties::make_run_config(3, "none", 20));
  Trace trace = decoded(run.trace);
  trace.header.device += "memory_bytes = 1099511627776\n";
  trace.footer = compute_footer(trace.header, trace.records);
  const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().message().find("above the bound"), std::string::npos) << report.error().message();
}

TEST(Determinism, TheSameSeedWritesTheSameBytes) {
  for (const char* plan : {"none", "all"}) {
    const properties::DeterminismReport report = properties::check_determinism(*properties::make_run_config(99, plan, 300));
    EXPECT_TRUE(report.identical) << plan << ": first difference at record "
                                  << (report.difference ? report.difference->record_index : 0);
    EXPECT_GT(report.records, 300U);
  }
}

TEST(Determinism, DifferentSeedsWriteDifferentTraces) {
  const properties::RecordedRun first = properties::record_raw_run(*properties::make_run_config(1, "default", 200));
  const properties::RecordedRun second = properties::record_raw_run(*properties::make_run_config(2, "default", 200));
  EXPECT_NE(first.footer.digest, second.footer.digest);
}

// ---- the engine workload ----

properties::CaseOptions engine_case(const char* plan, std::uint32_t operations) {
  properties::CaseOptions options;
  options.plan = *faults::builtin_plan(plan);
  options.operations = operations;
  options.determinism_every = 0;
  return options;
}

void expect_faithful(const properties::RecordedCase& run, const std::string& what) {
  const Trace trace = decoded(run.trace);
  ASSERT_TRUE(validate_trace(trace).ok()) << what;
  const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace);
  ASSERT_TRUE(report.ok()) << what << ": " << report.error().message();
  if (report->divergence.has_value()) {
    FAIL() << what << ": divergence at record " << report->divergence->record_index << "\n expected: "
           << report->divergence->expected << "\n actual:   " << report->divergence->actual;
  }
  EXPECT_TRUE(report->faithful()) << what;
  EXPECT_EQ(report->trace, run.trace) << what << ": the replay's own recording differs from the original";
  EXPECT_EQ(report->calls_replayed, trace.call_count()) << what;
}

class EngineReplayAcrossPlans : public ::testing::TestWithParam<const char*> {};

TEST_P(EngineReplayAcrossPlans, RecordThenReplayGivesTheSameTraceByteForByte) {
  std::uint64_t faults = 0;
  for (std::uint64_t seed = 1; seed <= seed_count(); ++seed) {
    const std::string what = "engine seed " + std::to_string(seed * 7919) + " plan " + GetParam();
    const properties::RecordedCase run = properties::record_case(seed * 7919, engine_case(GetParam(), 300));
    const Trace trace = decoded(run.trace);
    for (const Record& record : trace.records) faults += record.kind == RecordKind::Fault ? 1 : 0;
    expect_faithful(run, what);
    if (HasFatalFailure()) return;
  }
  if (std::string(GetParam()) != "none") {
    EXPECT_GT(faults, 0U) << "the plan injected nothing: the test proves little";
  }
}

INSTANTIATE_TEST_SUITE_P(BuiltinPlans, EngineReplayAcrossPlans, ::testing::Values("none", "default", "all"));

TEST(EngineRecording, RecordingDoesNotChangeTheCase) {
  for (const char* plan : {"default", "all"}) {
    for (std::uint64_t seed : {3U, 17U}) {
      const properties::CaseOptions options = engine_case(plan, 400);
      const properties::RecordedCase recorded = properties::record_case(seed, options);
      const properties::CaseResult plain = properties::run_case(seed, options);
      EXPECT_EQ(recorded.result.digest, plain.digest) << plan << " seed " << seed;
      EXPECT_EQ(recorded.result.violations, plain.violations);
      EXPECT_EQ(recorded.result.findings, plain.findings);
      EXPECT_EQ(recorded.result.passed(), plain.passed());
    }
  }
}

TEST(EngineRecording, EveryCallKindTheEngineUsesIsRecordedAndReplayed) {
  std::set<Op> ops;
  bool stream_ordered = false;
  bool timed = false;
  bool discarded = false;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const properties::RecordedCase run = properties::record_case(seed, engine_case(seed % 2 == 0 ? "all" : "default", 600));
    const Trace trace = decoded(run.trace);
    for (const Record& record : trace.records) {
      if (record.kind != RecordKind::Call) continue;
      ops.insert(record.call.op);
      stream_ordered = stream_ordered || (record.call.op == Op::AllocateBuffer &&
                                          record.call.mode == static_cast<std::uint8_t>(AllocationMode::StreamOrdered));
      timed = timed || (record.call.op == Op::Submit && record.call.timing_requested);
      discarded = discarded || record.call.op == Op::DiscardContext;
    }
    expect_faithful(run, "seed " + std::to_string(seed));
    if (HasFatalFailure()) return;
  }
  for (const Op op : {Op::DeviceInfo, Op::CreateContext, Op::AllocateBuffer, Op::WriteBuffer, Op::ReadBuffer, Op::FreeBuffer,
                      Op::LoadProgram, Op::UnloadProgram, Op::CreateQueue, Op::DestroyQueue, Op::Submit, Op::PollEvent,
                      Op::DestroyEvent, Op::BeginCapture, Op::Capture, Op::EndCapture, Op::DestroyExecutable,
                      Op::DestroyContext}) {
    EXPECT_TRUE(ops.contains(op)) << "the engine workload made no " << to_string(op) << " call in 12 seeds";
  }
  EXPECT_TRUE(timed) << "no submit asked for a timing receipt (profiling)";
  std::string seen;
  for (const Op op : ops) seen += std::string(to_string(op)) + " ";
  RecordProperty("ops_seen", seen);
  RecordProperty("stream_ordered_seen", stream_ordered ? "yes" : "no");
  RecordProperty("discard_seen", discarded ? "yes" : "no");
}

TEST(EngineRecording, ATamperedResultIsTheFirstDivergence) {
  const properties::RecordedCase run = properties::record_case(21, engine_case("default", 300));
  Trace trace = decoded(run.trace);
  std::size_t target = 0;
  for (std::size_t index = trace.records.size() / 2; index < trace.records.size() && target == 0; ++index) {
    if (trace.records[index].kind == RecordKind::Call && trace.records[index].call.op == Op::Submit) target = index;
  }
  ASSERT_NE(target, 0U) << "the run made no submit in its second half";
  trace.records[target].call.commands_enqueued += 1;
  trace.footer = compute_footer(trace.header, trace.records);
  const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace);
  ASSERT_TRUE(report.ok());
  ASSERT_TRUE(report->divergence.has_value());
  EXPECT_EQ(report->divergence->record_index, target);
  EXPECT_FALSE(report->faithful());
}

TEST(EngineRecording, AMovedClockIsADivergence) {
  const properties::RecordedCase run = properties::record_case(5, engine_case("none", 300));
  Trace trace = decoded(run.trace);
  std::size_t target = 0;
  for (std::size_t index = trace.records.size() / 2; index < trace.records.size() && target == 0; ++index) {
    if (trace.records[index].kind == RecordKind::Clock) target = index;
  }
  ASSERT_NE(target, 0U);
  trace.records[target].note.value += 1;  // the recording claims the call began a nanosecond later
  trace.footer = compute_footer(trace.header, trace.records);
  const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace);
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_TRUE(report->divergence.has_value());
  EXPECT_GE(report->divergence->record_index, target);
}

TEST(EngineRecording, TheSameSeedWritesTheSameBytes) {
  for (const char* plan : {"none", "all"}) {
    const properties::DeterminismReport report = properties::check_case_determinism(42, engine_case(plan, 300));
    EXPECT_TRUE(report.identical) << plan << ": first difference at record "
                                  << (report.difference ? report.difference->record_index : 0);
    EXPECT_GT(report.records, 300U);
  }
  const properties::RecordedCase first = properties::record_case(1, engine_case("default", 200));
  const properties::RecordedCase second = properties::record_case(2, engine_case("default", 200));
  EXPECT_NE(first.footer.digest, second.footer.digest);
  EXPECT_TRUE(properties::first_difference(first.trace, second.trace).has_value());
}

TEST(EngineRecording, TheHeaderNamesTheEngineWorkloadAndItsSchedule) {
  const properties::RecordedCase run = properties::record_case(9, engine_case("default", 50));
  const Trace trace = decoded(run.trace);
  EXPECT_TRUE(trace.header.workload.starts_with("kind = engine\n")) << trace.header.workload;
  EXPECT_NE(trace.header.schedule.find("fibers: "), std::string::npos) << trace.header.schedule;
  EXPECT_TRUE(properties::config_from_header(trace.header).ok());
}

// Scheduling decisions: two fibers that call the recorded stack in turns. Each decision of the FiberEnv
// becomes a schedule record; the replay re-issues the calls in the order they were made and writes the
// recorded schedule records again where they were, so the trace replays byte for byte.
TEST(ScheduleRecords, DecisionsAreRecordedAndReplayed) {
  for (std::uint64_t seed : {1U, 2U, 3U}) {
    properties::RunConfig config = *properties::make_run_config(seed, "none", 10);
    TraceHeader header = properties::header_of(config);
    header.schedule = "fibers: random walk";
    BinaryWriter writer(header);
    {
      properties::RecordedSimStack stack(config, config.plan, writer);
      auto& top = stack.top();
      Result<Context> context = top.create_context(ContextDesc{});
      ASSERT_TRUE(context.ok());
      sim::FiberEnv env(stack.device().clock(), sim::Schedule::random_walk(seed, Ratio{1, 3}));
      env.set_observer(&stack);
      for (int fiber = 0; fiber < 2; ++fiber) {
        env.spawn("caller", [&top, &env, &context] {
          for (int round = 0; round < 6; ++round) {
            Result<Queue> queue = top.create_queue(context.value(), QueueDesc{});
            env.sleep_until(env.now_ns() + 1000);
            if (queue.ok()) (void)top.destroy_queue(std::move(queue.value()));
            env.yield();
          }
        });
      }
      ASSERT_TRUE(env.run().ok());
      EXPECT_GT(env.decisions().size(), 0U);
      (void)top.destroy_context(std::move(context.value()));
    }
    const std::vector<std::byte> bytes = writer.finish();
    const Trace trace = decoded(bytes);
    std::size_t schedules = 0;
    for (const Record& record : trace.records) schedules += record.kind == RecordKind::Schedule ? 1 : 0;
    EXPECT_GT(schedules, 0U);
    const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace);
    ASSERT_TRUE(report.ok()) << report.error().message();
    if (report->divergence.has_value()) {
      FAIL() << "divergence at record " << report->divergence->record_index << "\n expected: "
             << report->divergence->expected << "\n actual:   " << report->divergence->actual;
    }
    EXPECT_EQ(report->trace, bytes);
  }
}

}  // namespace
}  // namespace quiesce::traces
