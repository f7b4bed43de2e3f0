// The Chrome trace-event timeline of a faulty run has the structure Perfetto needs.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace quiesce::traces
