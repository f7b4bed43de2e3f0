// Ratios between benchmarks of one run: a console reporter that remembers each benchmark's CPU time per
// iteration and, once the run ends, prints every benchmark's time over its baseline's. DESIGN §9 states
// several targets as ratios (the full stack at most 2.5x the bare simulator); taking both figures from the
// same run keeps them comparable on a loaded machine. With --benchmark_repetitions the median is used.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace quiesce::bench {

class RatioReporter final : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const std::string name = run.run_name.str();
      if (run.run_type == Run::RT_Aggregate) {
        if (run.aggregate_name == "median") median_cpu_[name] = run.GetAdjustedCPUTime();
      } else {
        last_cpu_[name] = run.GetAdjustedCPUTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // The CPU time per iteration of `name` in this run (the median over repetitions), or 0 if it did not run.
  double cpu_time(const std::string& name) const {
    if (auto median = median_cpu_.find(name); median != median_cpu_.end()) return median->second;
    if (auto last = last_cpu_.find(name); last != last_cpu_.end()) return last->second;
    return 0;
  }

  // Prints "name / baseline = ratio" for each pair whose two benchmarks both ran (a filter may skip some).
  void print_ratios(const std::vector<std::pair<std::string, std::string>>& pairs) const {
    for (const auto& [name, baseline] : pairs) {
      const double numerator = cpu_time(name);
      const double denominator = cpu_time(baseline);
      if (numerator <= 0 || denominator <= 0) continue;
      std::printf("ratio %s / %s = %.2fx (CPU time per iteration, same run)\n", name.c_str(), baseline.c_str(),
                  numerator / denominator);
    }
    std::fflush(stdout);
  }

 private:
  std::map<std::string, double> median_cpu_;
  std::map<std::string, double> last_cpu_;
};

// main() of a bench that prints ratios: runs the benchmarks the command line selects, then the ratios.
inline int run_with_ratios(int argc, char** argv, const std::vector<std::pair<std::string, std::string>>& pairs) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios(pairs);
  benchmark::Shutdown();
  return 0;
}

}  // namespace quiesce::bench
