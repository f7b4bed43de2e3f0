// Every trace in traces/corpus/ replays faithfully: the corpus is the regression suite of past failures.
#include <gtest/gtest.h>

#include <filesystem>

#include "quiesce/properties/replay.h"
#include "quiesce/traces/validate.h"

namespace quiesce::traces {
namespace {

namespace fs = std::filesystem;

TEST(Corpus, EveryTraceReplaysFaithfully) {
  std::size_t traces = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(QUIESCE_TRACES_CORPUS_DIR)) {
    const std::string extension = entry.path().extension().string();
    if (extension != ".qtrace" && extension != ".jsonl") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const TraceResult<Trace> trace = load_trace(entry.path().string());
    ASSERT_TRUE(trace.ok()) << trace.error().message();
    const TraceResult<properties::ReplayReport> report = properties::replay_trace(trace.value());
    ASSERT_TRUE(report.ok()) << report.error().message();
    if (report->divergence.has_value()) {
      ADD_FAILURE() << "divergence at record " << report->divergence->record_index << "\n expected: "
                    << report->divergence->expected << "\n actual:   " << report->divergence->actual;
    }
    EXPECT_TRUE(report->faithful());
    ++traces;
  }
  EXPECT_GE(traces, 3U) << "the corpus in " << QUIESCE_TRACES_CORPUS_DIR << " is missing";
}

}  // namespace
}  // namespace quiesce::traces
