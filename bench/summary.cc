// quiesce_bench_summary: the DESIGN §9 targets against what the benchmarks measured.
//
// Reads the Google Benchmark JSON reports that `./dev bench` writes (one <name>.json per quiesce_bench_<name>
// in the folder given) and prints one line per target: the figure measured (the median over repetitions
// where the report has aggregates, else the single run), the target, and whether it is met. A report that is
// missing leaves its targets "not measured"; nothing is assumed.
//
// Exit status: 0 when the reports were read (whatever the targets say), 1 with --strict when a target that
// was measured is missed, 2 for bad input (no folder, a report that is not Google Benchmark JSON), naming
// the file and what is wrong with it.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

constexpr int kExitRead = 0;
constexpr int kExitMissed = 1;
constexpr int kExitBadInput = 2;

// One benchmark's figures: its time per iteration in ns and its counters.
struct Run {
  double real_ns = 0;
  double cpu_ns = 0;
  std::map<std::string, double> counters;
};

// The runs of one report by run name: the median aggregate where there is one, else the run itself.
using Report = std::map<std::string, Run>;

double to_ns(double value, const std::string& unit) {
  if (unit == "us") return value * 1e3;
  if (unit == "ms") return value * 1e6;
  if (unit == "s") return value * 1e9;
  return value;
}

// Google Benchmark writes NaN or inf for a statistic it cannot compute (the cv of a counter whose mean is
// 0), which JSON has no literal for: such a value is read as null, and no target reads one.
std::string without_non_finite(const std::string& text) {
  static const std::regex non_finite(R"(:(\s*)-?(NaN|nan|inf|Infinity)\b)");
  return std::regex_replace(text, non_finite, ":$1null");
}

std::optional<Report> read_report(const std::filesystem::path& path, std::string& problem) {
  std::ifstream in(path);
  if (!in) return Report{};  // not written: its targets are not measured
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json document = nlohmann::json::parse(without_non_finite(text.str()), nullptr, false);
  if (document.is_discarded()) {
    problem = path.string() + ": not JSON";
    return std::nullopt;
  }
  if (!document.is_object() || !document.contains("benchmarks") || !document["benchmarks"].is_array()) {
    problem = path.string() + ": no \"benchmarks\" array (not a Google Benchmark JSON report)";
    return std::nullopt;
  }
  Report report;
  std::map<std::string, bool> has_median;
  for (const nlohmann::json& entry : document["benchmarks"]) {
    if (!entry.is_object() || !entry.contains("run_name") || !entry["run_name"].is_string()) {
      problem = path.string() + ": a benchmark entry without a \"run_name\"";
      return std::nullopt;
    }
    const std::string name = entry["run_name"].get<std::string>();
    const bool aggregate = entry.value("run_type", std::string()) == "aggregate";
    const std::string aggregate_name = entry.value("aggregate_name", std::string());
    if (aggregate && aggregate_name != "median") continue;
    if (!aggregate && has_median[name]) continue;
    if (entry.contains("error_occurred") && entry["error_occurred"].is_boolean() && entry["error_occurred"].get<bool>()) {
      continue;  // a benchmark that skipped (no GPU, an error) measured nothing
    }
    Run run;
    const std::string unit = entry.value("time_unit", std::string("ns"));
    for (const auto& [key, value] : entry.items()) {
      if (!value.is_number()) continue;
      if (key == "real_time") {
        run.real_ns = to_ns(value.get<double>(), unit);
      } else if (key == "cpu_time") {
        run.cpu_ns = to_ns(value.get<double>(), unit);
      } else {
        run.counters[key] = value.get<double>();
      }
    }
    report[name] = run;
    if (aggregate) has_median[name] = true;
  }
  return report;
}

// A target: a figure taken from the reports, and the bound it must meet.
struct Target {
  const char* what;
  const char* unit;
  bool at_least;  // the figure must be >= bound (else <= bound)
  double bound;
  // The figure, or nullopt when a report or run it needs is missing.
  std::optional<double> (*figure)(const std::map<std::string, Report>& reports);
};

const Run* find(const std::map<std::string, Report>& reports, const std::string& bench, const std::string& run) {
  const auto report = reports.find(bench);
  if (report == reports.end()) return nullptr;
  const auto found = report->second.find(run);
  return found == report->second.end() ? nullptr : &found->second;
}

std::optional<double> counter(const std::map<std::string, Report>& reports, const std::string& bench, const std::string& run,
                              const std::string& name, double scale = 1) {
  const Run* found = find(reports, bench, run);
  if (found == nullptr) return std::nullopt;
  const auto value = found->counters.find(name);
  if (value == found->counters.end()) return std::nullopt;
  return value->second * scale;
}

std::optional<double> real_time(const std::map<std::string, Report>& reports, const std::string& bench, const std::string& run,
                                double scale) {
  const Run* found = find(reports, bench, run);
  if (found == nullptr) return std::nullopt;
  return found->real_ns * scale;
}

const std::vector<Target>& targets() {
  static const std::vector<Target> list = {
      {"bare simulator, operation mix with waits", "M ops/s", true, 5,
       [](const auto& r) { return counter(r, "sim", "BM_SimOperationMixWaiting", "items_per_second", 1e-6); }},
      {"bare simulator, operation mix with polls", "M ops/s", true, 5,
       [](const auto& r) { return counter(r, "sim", "BM_SimOperationMixPolling", "items_per_second", 1e-6); }},
      {"an hour of simulated kernel time", "ms", false, 1000,
       [](const auto& r) { return real_time(r, "sim", "BM_HourOfKernelTime", 1e-6); }},
      {"full stack (recorder, validator, injector, simulator)", "M ops/s", true, 2,
       [](const auto& r) { return counter(r, "stack", "BM_FullStack", "items_per_second", 1e-6); }},
      {"full stack against the bare simulator (CPU time)", "x", false, 2.5,
       [](const auto& r) -> std::optional<double> {
         const Run* full = find(r, "stack", "BM_FullStack");
         const Run* bare = find(r, "stack", "BM_BareSimulator");
         if (full == nullptr || bare == nullptr || bare->cpu_ns <= 0) return std::nullopt;
         return full->cpu_ns / bare->cpu_ns;
       }},
      {"switch through the deterministic scheduler (CPU time)", "ns", false, 50,
       [](const auto& r) -> std::optional<double> {
         const Run* run = find(r, "sched", "scheduler_switch_round_robin/iterations:2000000/repeats:9");
         if (run == nullptr) return std::nullopt;
         const auto switches = run->counters.find("switches_per_iteration");
         if (switches == run->counters.end() || switches->second <= 0) return std::nullopt;
         return run->cpu_ns / switches->second;
       }},
      {"campaign, engine workload, 1,000-operation cases", "cases/s", true, 1000,
       [](const auto& r) { return counter(r, "campaign", "BM_CampaignCase/0", "items_per_second"); }},
      {"campaign, raw workload, 1,000-operation cases", "cases/s", true, 1000,
       [](const auto& r) { return counter(r, "campaign", "BM_CampaignCase/1", "items_per_second"); }},
      {"shrinking a failing 1,000-operation run: operations left", "ops", false, 12,
       [](const auto& r) { return counter(r, "campaign", "BM_ShrinkMutant/iterations:3", "calls_after"); }},
      {"shrinking a failing 1,000-operation run: time", "s", false, 10,
       [](const auto& r) { return real_time(r, "campaign", "BM_ShrinkMutant/iterations:3", 1e-9); }},
      {"trace size, binary", "bytes/event", false, 24,
       [](const auto& r) { return counter(r, "trace", "BM_TraceEncodeBinary", "bytes_per_event"); }},
      {"trace decode", "M events/s", true, 50,
       [](const auto& r) { return counter(r, "trace", "BM_TraceDecodeBinary", "events_per_s", 1e-6); }},
      {"trace replay on the simulator", "M events/s", true, 2,
       [](const auto& r) { return counter(r, "trace", "BM_TraceReplaySim", "events_per_s", 1e-6); }},
  };
  return list;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  bool strict = false;
  std::optional<std::filesystem::path> folder;
  for (const std::string& argument : arguments) {
    if (argument == "--strict") {
      strict = true;
    } else if (!argument.empty() && argument[0] == '-') {
      std::cerr << "quiesce_bench_summary: unknown option " << argument << "\nusage: quiesce_bench_summary [--strict] FOLDER\n";
      return kExitBadInput;
    } else if (folder.has_value()) {
      std::cerr << "quiesce_bench_summary: one folder only (got " << folder->string() << " and " << argument << ")\n";
      return kExitBadInput;
    } else {
      folder = argument;
    }
  }
  if (!folder.has_value() || !std::filesystem::is_directory(*folder)) {
    std::cerr << "quiesce_bench_summary: " << (folder ? folder->string() + " is not a folder" : std::string("no folder given"))
              << "\nusage: quiesce_bench_summary [--strict] FOLDER (of <name>.json Google Benchmark reports)\n";
    return kExitBadInput;
  }
  std::map<std::string, Report> reports;
  for (const char* name : {"sim", "stack", "sched", "campaign", "trace"}) {
    std::string problem;
    std::optional<Report> report = read_report(*folder / (std::string(name) + ".json"), problem);
    if (!report.has_value()) {
      std::cerr << "quiesce_bench_summary: " << problem << "\n";
      return kExitBadInput;
    }
    reports[name] = std::move(*report);
  }
  int met = 0;
  int missed = 0;
  int unmeasured = 0;
  std::printf("%-59s %12s  %-18s %s\n", "DESIGN §9 target", "measured", "target", "");  // § takes two bytes
  for (const Target& target : targets()) {
    const std::optional<double> figure = target.figure(reports);
    char bound[48];
    std::snprintf(bound, sizeof(bound), "%s %g %s", target.at_least ? ">=" : "<=", target.bound, target.unit);
    if (!figure.has_value()) {
      std::printf("%-58s %12s  %-18s not measured\n", target.what, "-", bound);
      ++unmeasured;
      continue;
    }
    const bool ok = target.at_least ? *figure >= target.bound : *figure <= target.bound;
    std::printf("%-58s %12.3f  %-18s %s\n", target.what, *figure, bound, ok ? "met" : "NOT MET");
    ok ? ++met : ++missed;
  }
  std::printf("%d met, %d not met, %d not measured (the GPU's targets are cuda_bench's: docs/hil/README.md)\n", met, missed,
              unmeasured);
  return strict && missed > 0 ? kExitMissed : kExitRead;
}
