// Campaign throughput and shrinking time (DESIGN §9: >= 1,000 cases/s per core for 1,000-operation cases;
// a failing run shrunk to <= 12 operations in <= 10 s).
//
// BM_CampaignCase/<workload>: one whole case per iteration (run_case: a seeded workload of 1,000 operations
// on Validator<Injector<sim::Device>> under the default plan with swarm testing, judged), seeds advancing;
// items_per_second is cases per second on one thread.
// BM_ShrinkMutant: records the raw workload with the free-while-pinned mutant (a planted R1 bug) for one
// seed of 1,000 operations, then shrinks the failing trace with properties::shrink_trace; the counters give
// the calls before and after.
#include <benchmark/benchmark.h>

#include "quiesce/properties/cases.h"
#include "quiesce/properties/replay.h"
#include "quiesce/traces/codec.h"

namespace quiesce::properties {
namespace {

void BM_CampaignCase(benchmark::State& state) {
  CaseOptions options;
  options.workload = state.range(0) == 0 ? WorkloadKind::Engine : WorkloadKind::Raw;
  options.operations = 1000;
  options.determinism_every = 0;
  std::uint64_t seed = 1;
  std::uint64_t failed = 0;
  for (auto _ : state) {
    const CaseResult result = run_case(seed++, options);
    failed += result.passed() ? 0 : 1;
    benchmark::DoNotOptimize(result.digest);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["failed_cases"] = static_cast<double>(failed);
  state.SetLabel(state.range(0) == 0 ? "engine workload" : "raw workload");
}
BENCHMARK(BM_CampaignCase)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_ShrinkMutant(benchmark::State& state) {
  std::optional<RunConfig> config = make_run_config(1, "default", 1000);
  if (!config) {
    state.SkipWithError("the built-in plan 'default' is missing.");
    return;
  }
  config->workload.mutation = Mutation::FreeWhilePinned;
  std::uint64_t calls_before = 0;
  std::uint64_t calls_after = 0;
  for (auto _ : state) {
    const RecordedRun run = record_raw_run(*config);
    if (run.held()) {
      state.SkipWithError("the free-while-pinned mutant was not caught on seed 1.");
      return;
    }
    traces::TraceResult<traces::Trace> trace = traces::decode_binary(run.trace);
    if (!trace.ok()) {
      state.SkipWithError("the recorded trace does not decode.");
      return;
    }
    traces::TraceResult<ShrinkReport> shrunk = shrink_trace(trace.value());
    if (!shrunk.ok()) {
      state.SkipWithError("shrinking failed.");
      return;
    }
    calls_before = shrunk.value().calls_before;
    calls_after = shrunk.value().calls_after;
  }
  state.counters["calls_before"] = static_cast<double>(calls_before);
  state.counters["calls_after"] = static_cast<double>(calls_after);
}
BENCHMARK(BM_ShrinkMutant)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace quiesce::properties
