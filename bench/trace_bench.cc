// Trace benchmarks (DESIGN §9): bytes per event of the binary encoding (target <= 24, data included),
// decode speed (target >= 50 M events/s), and replay speed on the simulated stack (target >= 2 M events/s).
// The trace is a recorded raw-workload run under the default fault plan; an "event" is one trace record.
// Encode also reports, for the same records, the bytes without any data field, the bytes in format
// version 1 (every payload byte for byte) and the data bytes the records carry once decoded.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "quiesce/properties/replay.h"
#include "quiesce/traces/codec.h"

namespace {

using namespace quiesce;  // NOLINT(google-build-using-namespace): a benchmark file

struct Recorded {
  properties::RecordedRun run;
  traces::Trace trace;
  std::uint64_t payload_bytes = 0;       // data bytes of every write, upload and launch, as replayed
  std::uint64_t without_data_bytes = 0;  // the encoding of the same records with every data field empty
  std::uint64_t version1_bytes = 0;      // the encoding of the same records in format version 1
};

const Recorded& recorded() {
  static const Recorded kRecorded = [] {
    Recorded result;
    result.run = properties::record_raw_run(*properties::make_run_config(11, "default", 20000));
    result.trace = traces::decode_binary(result.run.trace).value();
    traces::Trace without_data = result.trace;
    for (traces::Record& record : without_data.records) {
      result.payload_bytes += record.call.data.size();
      record.call.data.clear();
      for (traces::CommandRecord& command : record.call.commands) {
        result.payload_bytes += command.data.size();
        command.data.clear();
      }
    }
    result.without_data_bytes = traces::encode_binary(without_data).size();
    traces::Trace version1 = result.trace;
    version1.header.format_version = 1;
    result.version1_bytes = traces::encode_binary(version1).size();
    return result;
  }();
  return kRecorded;
}

void set_event_counters(benchmark::State& state, std::uint64_t events_per_iteration) {
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events_per_iteration),
                                                       benchmark::Counter::kIsIterationInvariantRate);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events_per_iteration));
}

void BM_TraceEncodeBinary(benchmark::State& state) {
  const Recorded& input = recorded();
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::vector<std::byte> encoded = traces::encode_binary(input.trace);
    bytes = encoded.size();
    benchmark::DoNotOptimize(encoded.data());
  }
  const auto records = static_cast<double>(input.trace.records.size());
  state.counters["records"] = records;
  state.counters["bytes_per_event"] = static_cast<double>(bytes) / records;
  state.counters["bytes_per_event_without_data"] = static_cast<double>(input.without_data_bytes) / records;
  state.counters["bytes_per_event_v1"] = static_cast<double>(input.version1_bytes) / records;
  state.counters["data_bytes_per_event"] = static_cast<double>(input.payload_bytes) / records;
  set_event_counters(state, input.trace.records.size());
}
BENCHMARK(BM_TraceEncodeBinary)->Unit(benchmark::kMillisecond);

void BM_TraceDecodeBinary(benchmark::State& state) {
  const Recorded& input = recorded();
  for (auto _ : state) {
    traces::BinaryReader reader = traces::BinaryReader::open(input.run.trace).value();
    std::uint64_t events = 0;
    while (reader.next().value() != nullptr) ++events;
    benchmark::DoNotOptimize(events);
  }
  set_event_counters(state, input.trace.records.size());
}
BENCHMARK(BM_TraceDecodeBinary)->Unit(benchmark::kMillisecond);

void BM_TraceReplaySim(benchmark::State& state) {
  const Recorded& input = recorded();
  for (auto _ : state) {
    const traces::TraceResult<properties::ReplayReport> report = properties::replay_trace(input.trace);
    if (!report.ok() || !report->faithful()) state.SkipWithError("the replay was not faithful");
    benchmark::DoNotOptimize(report.ok());
  }
  set_event_counters(state, input.trace.records.size());
}
BENCHMARK(BM_TraceReplaySim)->Unit(benchmark::kMillisecond);

void BM_TraceRecordRun(benchmark::State& state) {
  const properties::RunConfig config = *properties::make_run_config(11, "default", 20000);
  std::uint64_t records = 0;
  for (auto _ : state) {
    const properties::RecordedRun run = properties::record_raw_run(config);
    records = run.footer.record_count;
    benchmark::DoNotOptimize(run.trace.data());
  }
  set_event_counters(state, records);
}
BENCHMARK(BM_TraceRecordRun)->Unit(benchmark::kMillisecond);

}  // namespace
