// A recorded run's configuration as the text of a trace header, and back, with bounds on what a replay of
// a stranger's trace may make this process allocate.
#include <charconv>
#include <map>
#include <string>

#include "quiesce/core/prng.h"
#include "quiesce/faults/plan.h"
#include "quiesce/properties/engine_workload.h"
#include "quiesce/properties/record_case.h"
#include "quiesce/properties/replay.h"
#include "quiesce/sim/config.h"
#include "quiesce/sim/schedule.h"

namespace quiesce::properties {
namespace {

constexpr std::uint64_t kDeviceMemoryMax = std::uint64_t{4} << 30U;  // host pages a replay may touch
constexpr std::uint64_t kOperationsMax = 10'000'000;
constexpr std::size_t kConfigLinesMax = 256;

using Fields = std::map<std::string, std::string, std::less<>>;

std::string line(std::string_view key, std::uint64_t value) { return std::string(key) + " = " + std::to_string(value) + "\n"; }
std::string ratio(Ratio value) { return std::to_string(value.numerator) + "/" + std::to_string(value.denominator); }

// `key = value` lines; `#` comments and blank lines are skipped.
bool parse_fields(std::string_view text, Fields& fields, std::string& problem) {
  std::size_t start = 0;
  for (std::size_t count = 0; start < text.size(); ++count) {
    if (count == kConfigLinesMax) {
      problem = "has more than " + std::to_string(kConfigLinesMax) + " lines";
      return false;
    }
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view row = text.substr(start, end - start);
    start = end + 1;
    if (row.empty() || row[0] == '#') continue;
    const std::size_t equals = row.find(" = ");
    if (equals == std::string_view::npos) {
      problem = "has the line '" + std::string(row) + "', which is not 'key = value'";
      return false;
    }
    fields[std::string(row.substr(0, equals))] = std::string(row.substr(equals + 3));
  }
  return true;
}

class FieldReader {
 public:
  FieldReader(const Fields& fields, std::string section) : fields_(fields), section_(std::move(section)) {}

  template <class T>
  void number(std::string_view key, T& value, std::uint64_t maximum) {
    const auto found = fields_.find(key);
    if (found == fields_.end() || !problem.empty()) return;
    std::uint64_t parsed = 0;
    const std::string& text = found->second;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (error != std::errc{} || end != text.data() + text.size()) {
      problem = "the " + section_ + " field '" + std::string(key) + "' is '" + text + "', not an unsigned integer";
    } else if (parsed > maximum) {
      problem = "the " + section_ + " field '" + std::string(key) + "' is " + text + ", above the bound " + std::to_string(maximum);
    } else {
      value = static_cast<T>(parsed);
    }
  }
  void flag(std::string_view key, bool& value) {
    std::uint64_t parsed = value ? 1 : 0;
    number(key, parsed, 1);
    value = parsed != 0;
  }
  void fraction(std::string_view key, Ratio& value) {
    const auto found = fields_.find(key);
    if (found == fields_.end() || !problem.empty()) return;
    const std::size_t slash = found->second.find('/');
    Ratio parsed;
    const std::string& text = found->second;
    const auto first = std::from_chars(text.data(), text.data() + slash, parsed.numerator);
    const auto second = slash == std::string::npos ? first : std::from_chars(text.data() + slash + 1, text.data() + text.size(), parsed.denominator);
    if (slash == std::string::npos || first.ec != std::errc{} || second.ec != std::errc{} || parsed.denominator == 0 ||
        parsed.numerator > parsed.denominator) {
      problem = "the " + section_ + " field '" + std::string(key) + "' is '" + text + "', not a ratio n/d with n <= d";
      return;
    }
    value = parsed;
  }

  std::string problem;

 private:
  const Fields& fields_;
  std::string section_;
};

std::string device_text(const sim::Config& device) {
  return line("seed", device.seed) + line("memory_bytes", device.memory_bytes) + line("buffer_alignment", device.buffer_alignment) +
         line("queue_depth_max", device.queue_depth_max) + line("queues_max", device.queues_max) +
         line("execution_engines", device.execution_engines) + line("copy_engines", device.copy_engines) +
         line("batch_commands_max", device.batch_commands_max) + line("bindings_max", device.bindings_max) +
         line("parameter_bytes_max", device.parameter_bytes_max) + line("launch_threads_max", device.launch_threads_max) +
         line("upload_bytes_max", device.upload_bytes_max) + line("capabilities", static_cast<std::uint32_t>(device.capabilities)) +
         line("free_synchronizes", device.free_synchronizes ? 1 : 0) + line("host_costs", device.host_costs ? 1 : 0) +
         line("implicit_wait_max_ns", device.implicit_wait_max_ns) + "cost_jitter = " + ratio(device.cost_jitter) + "\n";
}

std::string device_problem(const Fields& fields, sim::Config& device) {
  FieldReader in(fields, "device");
  in.number("seed", device.seed, UINT64_MAX);
  in.number("memory_bytes", device.memory_bytes, kDeviceMemoryMax);
  in.number("buffer_alignment", device.buffer_alignment, std::uint64_t{1} << 20U);
  in.number("queue_depth_max", device.queue_depth_max, 1U << 16U);
  in.number("queues_max", device.queues_max, 31);
  in.number("execution_engines", device.execution_engines, 256);
  in.number("copy_engines", device.copy_engines, 256);
  in.number("batch_commands_max", device.batch_commands_max, traces::kCommandsMax);
  in.number("bindings_max", device.bindings_max, traces::kBindingsMax);
  in.number("parameter_bytes_max", device.parameter_bytes_max, 1U << 20U);
  in.number("launch_threads_max", device.launch_threads_max, 1U << 20U);
  in.number("upload_bytes_max", device.upload_bytes_max, traces::kDataBytesMax);
  std::uint32_t capabilities = static_cast<std::uint32_t>(device.capabilities);
  in.number("capabilities", capabilities, static_cast<std::uint32_t>(sim::kAllCapabilities));
  device.capabilities = static_cast<Capability>(capabilities);
  in.flag("free_synchronizes", device.free_synchronizes);
  in.flag("host_costs", device.host_costs);
  in.number("implicit_wait_max_ns", device.implicit_wait_max_ns, UINT64_MAX);
  in.fraction("cost_jitter", device.cost_jitter);
  if (!in.problem.empty()) return in.problem;
  const std::string invalid = sim::validate(device);
  return invalid.empty() ? std::string() : "the device configuration is invalid: " + invalid;
}

std::string validator_text(const ValidatorOptions& validator) {
  return line("validator_collect_all", validator.mode == ViolationMode::CollectAll ? 1 : 0) +
         line("validator_identical_resubmit", validator.check_identical_resubmit ? 1 : 0) +
         line("validator_read_initialised", validator.check_read_initialised ? 1 : 0);
}

std::string workload_text(const RunConfig& config) {
  const RawWorkloadOptions& workload = config.workload;
  return std::string("kind = raw\n") + line("operations", workload.operations) + line("queues", workload.queues) +
         line("buffers_max", workload.buffers_max) + line("buffer_bytes_max", workload.buffer_bytes_max) +
         line("memory_budget_bytes", workload.memory_budget_bytes) + line("wait_timeout_ns", workload.wait_timeout_ns) +
         line("liveness_rounds_max", workload.liveness_rounds_max) + "device_fault = " + ratio(workload.device_fault) + "\n" +
         validator_text(config.validator);
}

// The engine workload's options. A replay does not run the engine (it re-issues the recorded calls), so
// only the validator lines and the bounds below are read back; the rest says what was run.
std::string engine_workload_text(const EngineWorkloadOptions& workload, const ValidatorOptions& validator) {
  return std::string("kind = engine\n") + line("operations", workload.operations) + line("queues", workload.queues) +
         line("buffers_max", workload.buffers_max) + line("buffer_bytes_max", workload.buffer_bytes_max) +
         line("memory_budget_bytes", workload.memory_budget_bytes) + line("wait_timeout_ns", workload.wait_timeout_ns) +
         line("liveness_timeout_ns", workload.liveness_timeout_ns) + "device_fault = " + ratio(workload.device_fault) + "\n" +
         validator_text(validator);
}

std::string workload_problem(const Fields& fields, RunConfig& config) {
  FieldReader in(fields, "workload");
  RawWorkloadOptions& workload = config.workload;
  in.number("operations", workload.operations, kOperationsMax);
  in.number("queues", workload.queues, 16);
  in.number("buffers_max", workload.buffers_max, 4096);
  in.number("buffer_bytes_max", workload.buffer_bytes_max, traces::kDataBytesMax);
  in.number("memory_budget_bytes", workload.memory_budget_bytes, kDeviceMemoryMax);
  in.number("wait_timeout_ns", workload.wait_timeout_ns, UINT64_MAX);
  in.number("liveness_rounds_max", workload.liveness_rounds_max, 1U << 20U);
  in.fraction("device_fault", workload.device_fault);
  bool collect_all = config.validator.mode == ViolationMode::CollectAll;
  in.flag("validator_collect_all", collect_all);
  config.validator.mode = collect_all ? ViolationMode::CollectAll : ViolationMode::StopAtFirst;
  in.flag("validator_identical_resubmit", config.validator.check_identical_resubmit);
  in.flag("validator_read_initialised", config.validator.check_read_initialised);
  return in.problem;
}

}  // namespace

std::optional<RunConfig> make_run_config(std::uint64_t seed, std::string_view plan_name, std::uint32_t operations) {
  std::optional<faults::Plan> plan = faults::builtin_plan(plan_name);
  if (!plan.has_value()) return std::nullopt;
  RunConfig config;
  config.seed = seed;
  config.device.seed = seed;
  config.plan = std::move(*plan);
  config.plan.seed = seed;
  config.workload.seed = seed;
  config.workload.operations = operations;
  return config;
}

RunConfig case_run_config(std::uint64_t seed, const CaseOptions& options) {
  RunConfig config;
  config.seed = seed;
  config.device.seed = seed;
  config.plan = options.plan;
  if (options.swarm) faults::apply_swarm(config.plan, seed);
  config.plan.seed = Prng(seed).derive("faults");
  config.validator = ValidatorOptions{ViolationMode::CollectAll};
  config.workload.seed = seed;
  config.workload.operations = options.operations;
  return config;
}

traces::TraceHeader case_header(std::uint64_t seed, const CaseOptions& options) {
  const RunConfig config = case_run_config(seed, options);
  traces::TraceHeader header = header_of(config);
  if (options.workload == WorkloadKind::Engine) {
    EngineWorkloadOptions workload;
    workload.seed = seed;
    workload.operations = options.operations;
    header.workload = engine_workload_text(workload, config.validator);
    header.schedule = "fibers: " + sim::Schedule::from_seed(Prng(seed).derive("schedule")).describe();
  }
  return header;
}

traces::TraceHeader header_of(const RunConfig& config) {
  traces::TraceHeader header = traces::make_header(config.seed);
  header.device = device_text(config.device);
  header.cost_profile = sim::to_text(config.device.costs);
  header.fault_plan = faults::to_text(config.plan);
  header.schedule = "single host thread";
  header.workload = workload_text(config);
  return header;
}

traces::TraceResult<RunConfig> config_from_header(const traces::TraceHeader& header) {
  const auto refuse = [](const std::string& what) { return traces::TraceError{what, traces::TraceError::Where::Record, 0}; };
  RunConfig config;
  config.seed = header.seed;
  config.workload.seed = header.seed;
  Fields device_fields;
  Fields workload_fields;
  std::string problem;
  if (!parse_fields(header.device, device_fields, problem)) return refuse("the header's device configuration " + problem);
  if (!parse_fields(header.workload, workload_fields, problem)) return refuse("the header's workload " + problem);
  if (workload_fields.contains("kind") && workload_fields.at("kind") != "raw" && workload_fields.at("kind") != "engine") {
    return refuse("the header's workload kind '" + workload_fields.at("kind") + "' cannot be replayed by this build");
  }
  problem = device_problem(device_fields, config.device);
  if (problem.empty()) problem = workload_problem(workload_fields, config);
  if (!problem.empty()) return refuse("the header is refused: " + problem);
  Result<sim::CostProfile, std::string> costs = sim::load_cost_profile(header.cost_profile);
  if (!costs.ok()) return refuse("the header's cost profile is refused: " + costs.error());
  config.device.costs = costs.value();
  Result<faults::Plan, faults::PlanError> plan = faults::parse_plan(header.fault_plan);
  if (!plan.ok()) {
    return refuse("the header's fault plan is refused at its line " + std::to_string(plan.error().line) + ": " + plan.error().message);
  }
  config.plan = std::move(plan).value();
  return config;
}

}  // namespace quiesce::properties
