// Record, then replay exactly: the same records, the same digest, across seeds and the built-in fault plans.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "quiesce/properties/recorded_stack.h"
#include "quiesce/properties/replay.h"
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
  trace.footer = compute_footer(trace.header, trace.records);
  const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace);
  ASSERT_TRUE(report.ok());
  ASSERT_TRUE(report->divergence.has_value());
  EXPECT_EQ(report->divergence->record_index, target);
  EXPECT_NE(report->divergence->expected, report->divergence->actual);
  EXPECT_NE(report->divergence->expected.find("submit"), std::string::npos);
  EXPECT_FALSE(report->faithful());
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

}  // namespace
}  // namespace quiesce::traces
