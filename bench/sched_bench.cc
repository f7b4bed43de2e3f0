// A context switch through sim::FiberEnv's deterministic scheduler beside a raw boost::context::fiber
// switch, measured in the same run and reported as a ratio of medians (DESIGN §9: ≤ 50 ns median through
// the scheduler; a raw Boost.Context switch is about 9 ns).
//
// One iteration is a round trip between two fibers: two switches. The raw benchmark resumes a fiber that
// resumes straight back; the scheduler benchmark has two fibers calling yield() under round robin with
// quantum 1, so every yield is a real switch that also passes the step bound check, the strategy's choice
// and the recording of that choice. Iteration counts are fixed so that the recorded decision list (4 bytes
// per choice) stays bounded. Run with the defaults below (9 repetitions) or pass Google Benchmark flags.
#include <benchmark/benchmark.h>

#include <boost/context/fiber.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "quiesce/sim/fiber_env.h"

namespace {

constexpr benchmark::IterationCount kRoundTrips = 2'000'000;
constexpr int kRepetitions = 9;

void raw_fiber_switch(benchmark::State& state) {
  namespace context = boost::context;
  bool stop = false;
  context::fiber partner([&stop](context::fiber&& back) {
    while (!stop) back = std::move(back).resume();
    return std::move(back);
  });
  for (auto _ : state) partner = std::move(partner).resume();
  stop = true;
  partner = std::move(partner).resume();
  state.counters["switch_ns"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 2, benchmark::Counter::kIsRate |
                                                                           benchmark::Counter::kInvert);
}

void run_yield_pair(benchmark::State& state, quiesce::sim::Schedule schedule) {
  quiesce::sim::VirtualClock clock;
  quiesce::sim::FiberEnvOptions options;
  options.steps_max = 4 * static_cast<std::uint64_t>(kRoundTrips) + 1000;
  quiesce::sim::FiberEnv env(clock, std::move(schedule), options);
  bool stop = false;
  env.spawn("measured", [&] {
    for (auto _ : state) env.yield();
    stop = true;
  });
  env.spawn("partner", [&] {
    while (!stop) env.yield();
  });
  auto result = env.run();
  if (!result.ok()) {
    state.SkipWithError(result.error().report().c_str());
    return;
  }
  state.counters["switches_per_iteration"] =
      static_cast<double>(result->switches) / static_cast<double>(state.iterations());
  state.counters["switch_ns"] = benchmark::Counter(static_cast<double>(result->switches),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void scheduler_switch_round_robin(benchmark::State& state) {
  run_yield_pair(state, quiesce::sim::Schedule::round_robin(1));
}

void scheduler_yield_random_walk(benchmark::State& state) {
  run_yield_pair(state, quiesce::sim::Schedule::random_walk(1, quiesce::Ratio::never()));
}

void scheduler_yield_pct(benchmark::State& state) {
  run_yield_pair(state, quiesce::sim::Schedule::pct(1, 3, 4 * static_cast<std::uint64_t>(kRoundTrips)));
}

// Spawning a fiber (a guard-paged stack is mapped) and joining it after it ran: what each simulated host
// thread costs a campaign case.
void scheduler_spawn_join(benchmark::State& state) {
  quiesce::sim::VirtualClock clock;
  quiesce::sim::FiberEnvOptions options;
  options.fibers_max = static_cast<std::size_t>(state.max_iterations) + 2;
  options.steps_max = 8 * static_cast<std::uint64_t>(state.max_iterations) + 1000;
  quiesce::sim::FiberEnv env(clock, quiesce::sim::Schedule::round_robin(1), options);
  env.spawn("measured", [&] {
    for (auto _ : state) {
      quiesce::sim::FiberEnv::Thread child = env.spawn([] {});
      env.join(child);
    }
  });
  auto result = env.run();
  if (!result.ok()) state.SkipWithError(result.error().report().c_str());
}

BENCHMARK(scheduler_spawn_join)->Iterations(20'000)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
BENCHMARK(raw_fiber_switch)->Iterations(kRoundTrips)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
BENCHMARK(scheduler_switch_round_robin)->Iterations(kRoundTrips)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
BENCHMARK(scheduler_yield_random_walk)->Iterations(kRoundTrips)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
BENCHMARK(scheduler_yield_pct)->Iterations(kRoundTrips)->Repetitions(kRepetitions)->ReportAggregatesOnly(true);

// Prints the usual table, then the median round trip of each benchmark against the raw switch's.
class RatioReporter final : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& reports) override {
    for (const Run& run : reports) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        medians_[run.run_name.function_name] = Median{run.GetAdjustedRealTime(), run.GetAdjustedCPUTime()};
      }
    }
    ConsoleReporter::ReportRuns(reports);
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    const auto raw = medians_.find("raw_fiber_switch");
    if (raw == medians_.end() || raw->second.real_ns <= 0 || raw->second.cpu_ns <= 0) return;
    // Raw and round robin switch twice per iteration; random walk and PCT yield twice and switch less.
    // CPU time is printed beside real time because on a shared machine real time also counts waiting for
    // a core.
    std::printf("\nmedians per iteration (two yields or switches) against a raw boost::context::fiber round trip:\n");
    for (const auto& [name, median] : medians_) {
      std::printf("  %-30s real %8.2f ns (%5.2fx raw)   cpu %8.2f ns (%5.2fx raw)\n", name.c_str(), median.real_ns,
                  median.real_ns / raw->second.real_ns, median.cpu_ns, median.cpu_ns / raw->second.cpu_ns);
    }
  }

 private:
  struct Median {
    double real_ns = 0;
    double cpu_ns = 0;
  };
  std::map<std::string, Median> medians_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
