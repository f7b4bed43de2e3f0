// The Chrome trace-event timeline of a faulty run has the structure Perfetto needs.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "quiesce/faults/plan.h"
#include "quiesce/properties/record_case.h"
#include "quiesce/properties/replay.h"
#include "quiesce/traces/print.h"

namespace quiesce::traces {
namespace {

TEST(Timeline, AFaultyRunHasQueueTracksSlicesFaultInstantsAndLifetimes) {
  const properties::RecordedRun run = properties::record_raw_run(*properties::make_run_config(8, "all", 300));
  ASSERT_GT(run.faults, 0U);
  TraceResult<Trace> trace = decode_binary(run.trace);
  ASSERT_TRUE(trace.ok());
  std::ostringstream out;
  write_timeline(trace.value(), out);
  const nlohmann::json timeline = nlohmann::json::parse(out.str(), nullptr, false);
  ASSERT_FALSE(timeline.is_discarded()) << "the timeline is not JSON";
  ASSERT_TRUE(timeline.contains("traceEvents"));
  std::set<std::uint64_t> named_tracks;
  std::map<std::string, int> open_spans;
  std::size_t slices = 0;
  std::size_t fault_instants = 0;
  for (const nlohmann::json& event : timeline["traceEvents"]) {
    const std::string phase = event.at("ph");
    ASSERT_EQ(event.at("pid"), 1);
    if (phase == "M" && event.at("name") == "thread_name") named_tracks.insert(event.at("tid").get<std::uint64_t>());
    if (phase == "X") {
      ++slices;
      EXPECT_TRUE(named_tracks.contains(event.at("tid").get<std::uint64_t>())) << "a slice on an unnamed track";
      EXPECT_GE(event.at("dur").get<double>(), 0.0);
      EXPECT_GE(event.at("ts").get<double>(), 0.0);
    }
    if (phase == "i" && event.at("cat") == "fault") ++fault_instants;
    if (phase == "b") ++open_spans[event.at("id").get<std::string>()];
    if (phase == "e") --open_spans[event.at("id").get<std::string>()];
  }
  EXPECT_GE(named_tracks.size(), 2U) << "the host track and at least one queue";
  EXPECT_GT(slices, 10U);
  EXPECT_GT(fault_instants, 0U);
  for (const auto& [id, balance] : open_spans) EXPECT_EQ(balance, 0) << id << " is opened and closed unevenly";
  EXPECT_FALSE(open_spans.empty());
}

// The engine workload under the `all` plan: every queue the engine opened is a named track, every batch a
// slice on its queue's track with its commands as slices nested inside it (in order, within its bounds),
// faults are instants, and resource lifetimes are balanced spans.
TEST(Timeline, AFaultyEngineRunHasCommandSlicesInsideTheirBatches) {
  properties::CaseOptions options;
  options.plan = *faults::builtin_plan("all");
  options.operations = 400;
  options.determinism_every = 0;
  const properties::RecordedCase run = properties::record_case(12, options);
  TraceResult<Trace> trace = decode_binary(run.trace);
  ASSERT_TRUE(trace.ok());
  std::size_t queues_created = 0;
  std::size_t faults = 0;
  for (const Record& record : trace->records) {
    queues_created += record.kind == RecordKind::Call && record.call.op == Op::CreateQueue && record.call.status == 0 ? 1 : 0;
    faults += record.kind == RecordKind::Fault ? 1 : 0;
  }
  ASSERT_GT(faults, 0U);
  std::ostringstream out;
  write_timeline(trace.value(), out);
  const nlohmann::json timeline = nlohmann::json::parse(out.str(), nullptr, false);
  ASSERT_FALSE(timeline.is_discarded()) << "the timeline is not JSON";
  std::set<std::uint64_t> named_tracks;
  struct Span {
    double begin = 0;
    double end = 0;
  };
  std::map<std::uint64_t, Span> batches;                        // event id -> batch slice
  std::map<std::uint64_t, std::vector<Span>> commands;          // event id -> its command slices, in order
  std::map<std::string, int> open_spans;
  std::size_t fault_instants = 0;
  for (const nlohmann::json& event : timeline["traceEvents"]) {
    const std::string phase = event.at("ph");
    if (phase == "M" && event.at("name") == "thread_name") named_tracks.insert(event.at("tid").get<std::uint64_t>());
    if (phase == "X") {
      EXPECT_TRUE(named_tracks.contains(event.at("tid").get<std::uint64_t>())) << "a slice on an unnamed track";
      const double begin = event.at("ts").get<double>();
      const Span span{begin, begin + event.at("dur").get<double>()};
      const std::uint64_t id = event.at("args").at("event").get<std::uint64_t>();
      if (event.at("cat") == "batch") batches[id] = span;
      if (event.at("cat") == "command") {
        EXPECT_EQ(event.at("args").at("index").get<std::size_t>(), commands[id].size()) << "commands out of order";
        commands[id].push_back(span);
      }
    }
    if (phase == "i" && event.at("cat") == "fault") ++fault_instants;
    if (phase == "b") ++open_spans[event.at("id").get<std::string>()];
    if (phase == "e") --open_spans[event.at("id").get<std::string>()];
  }
  EXPECT_GE(named_tracks.size(), queues_created + 1) << "the host track and one per queue";
  EXPECT_GE(queues_created, 3U) << "the engine opens three queues";
  EXPECT_GT(batches.size(), 20U);
  EXPECT_GT(fault_instants, 0U);
  std::size_t nested = 0;
  constexpr double kSlack = 0.0015;  // the JSON's microseconds have three decimals
  for (const auto& [id, parts] : commands) {
    ASSERT_TRUE(batches.contains(id)) << "command slices of event " << id << " without their batch";
    const Span batch = batches.at(id);
    double previous_end = batch.begin;
    for (const Span& part : parts) {
      EXPECT_GE(part.begin + kSlack, previous_end) << "event " << id << ": commands overlap";
      EXPECT_LE(part.end, batch.end + kSlack) << "event " << id << ": a command ends after its batch";
      previous_end = part.end;
      ++nested;
    }
  }
  EXPECT_GT(nested, batches.size()) << "fewer command slices than batches";
  for (const auto& [id, balance] : open_spans) EXPECT_EQ(balance, 0) << id << " is opened and closed unevenly";
  EXPECT_FALSE(open_spans.empty());
}

}  // namespace
}  // namespace quiesce::traces
