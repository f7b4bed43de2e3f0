// The cost profile's text format and the configuration's description and validation.
#include "quiesce/sim/config.h"

#include <array>
#include <charconv>

#include "quiesce/core/prng.h"

namespace quiesce::sim {
namespace {

struct ProfileKey {
  std::string_view name;
  std::uint64_t CostProfile::*field;
  bool bandwidth;  // bytes per microsecond, at least 1 (it divides); otherwise a cost in ns, at most kCostNsMax
};

constexpr std::array<ProfileKey, 11> kProfileKeys = {{
    {"launch_latency_ns", &CostProfile::launch_latency_ns, false},
    {"graph_node_ns", &CostProfile::graph_node_ns, false},
    {"copy_latency_ns", &CostProfile::copy_latency_ns, false},
    {"copy_bytes_per_us", &CostProfile::copy_bytes_per_us, true},
    {"upload_bytes_per_us", &CostProfile::upload_bytes_per_us, true},
    {"kernel_bytes_per_us", &CostProfile::kernel_bytes_per_us, true},
    {"zero_bytes_per_us", &CostProfile::zero_bytes_per_us, true},
    {"event_record_ns", &CostProfile::event_record_ns, false},
    {"event_query_ns", &CostProfile::event_query_ns, false},
    {"allocation_ns", &CostProfile::allocation_ns, false},
    {"free_ns", &CostProfile::free_ns, false},
}};

std::string_view trim(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

std::string line_error(std::size_t line_number, std::string_view reason, std::string_view line) {
  std::string message = "cost profile line " + std::to_string(line_number) + " is refused: ";
  message += reason;
  message += " (the line reads \"";
  message += line;
  message += "\")";
  return message;
}

// Parses one non-comment line into `profile`; returns an empty string or the reason it was refused.
std::string parse_line(std::string_view line, CostProfile& profile, std::uint32_t& seen_mask) {
  const std::size_t equals = line.find('=');
  if (equals == std::string_view::npos) return "it has no '=' between a key and a value";
  const std::string_view key = trim(line.substr(0, equals));
  const std::string_view value = trim(line.substr(equals + 1));
  for (std::size_t index = 0; index < kProfileKeys.size(); ++index) {
    const ProfileKey& entry = kProfileKeys[index];
    if (entry.name != key) continue;
    if ((seen_mask & (1U << index)) != 0) return "the key appears twice";
    std::uint64_t parsed = 0;
    const auto [end, status] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (status != std::errc{} || end != value.data() + value.size() || value.empty()) {
      return "the value is not an unsigned 64-bit integer";
    }
    if (entry.bandwidth && parsed == 0) return "the bandwidth " + std::string(key) + " must be greater than zero";
    if (!entry.bandwidth && parsed > kCostNsMax) {
      return "the cost " + std::string(key) + " is above " + std::to_string(kCostNsMax) + " ns (an hour)";
    }
    profile.*entry.field = parsed;
    seen_mask |= 1U << index;
    return {};
  }
  return "the key is not one of the cost profile's keys";
}

}  // namespace

Result<CostProfile, std::string> load_cost_profile(std::string_view text) {
  CostProfile profile;
  std::uint32_t seen_mask = 0;
  std::size_t line_number = 0;
  constexpr std::size_t kLinesMax = 10'000;
  while (!text.empty()) {
    ++line_number;
    if (line_number > kLinesMax) return std::string("a cost profile has at most 10000 lines");
    const std::size_t newline = text.find('\n');
    const std::string_view raw = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    std::string_view line = raw;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    std::string reason = parse_line(line, profile, seen_mask);
    if (!reason.empty()) return line_error(line_number, reason, trim(raw));
  }
  return profile;
}

std::string to_text(const CostProfile& profile) {
  std::string text = "# quiesce simulator cost profile: integer nanoseconds and bytes per microsecond\n";
  for (const ProfileKey& entry : kProfileKeys) {
    text += entry.name;
    text += " = ";
    text += std::to_string(profile.*entry.field);
    text += "\n";
  }
  return text;
}

std::string validate(const Config& config) {
  const auto power_of_two = [](std::uint64_t value) { return value != 0 && (value & (value - 1)) == 0; };
  if (!power_of_two(config.buffer_alignment)) {
    return "buffer_alignment " + std::to_string(config.buffer_alignment) + " is not a power of two";
  }
  if (config.memory_bytes < config.buffer_alignment || config.memory_bytes % config.buffer_alignment != 0) {
    return "memory_bytes " + std::to_string(config.memory_bytes) + " is not a nonzero multiple of the alignment";
  }
  if (config.queues_max == 0 || config.queues_max > 31) {
    return "queues_max " + std::to_string(config.queues_max) + " is outside 1..31";
  }
  if (config.queue_depth_max == 0 || config.queue_depth_max > 4096) {
    return "queue_depth_max " + std::to_string(config.queue_depth_max) + " is outside 1..4096";
  }
  if (config.execution_engines == 0 || config.copy_engines == 0) {
    return "execution_engines and copy_engines must both be at least 1";
  }
  if (config.batch_commands_max == 0 || config.batch_commands_max > 65536) {
    return "batch_commands_max " + std::to_string(config.batch_commands_max) + " is outside 1..65536";
  }
  if (config.cost_jitter.denominator == 0 || config.cost_jitter.numerator > config.cost_jitter.denominator) {
    return "cost_jitter must be a ratio between 0 and 1 with a nonzero denominator";
  }
  if (config.bindings_max == 0 || config.bindings_max > 64) {
    return "bindings_max " + std::to_string(config.bindings_max) + " is outside 1..64";
  }
  const CostProfile& costs = config.costs;
  if (costs.copy_bytes_per_us == 0 || costs.upload_bytes_per_us == 0 || costs.kernel_bytes_per_us == 0 ||
      costs.zero_bytes_per_us == 0) {
    return "every bandwidth of the cost profile must be greater than zero";
  }
  for (const ProfileKey& entry : kProfileKeys) {
    if (!entry.bandwidth && costs.*entry.field > kCostNsMax) {
      return "the cost profile's " + std::string(entry.name) + " " + std::to_string(costs.*entry.field) +
             " is above " + std::to_string(kCostNsMax) + " ns (an hour)";
    }
  }
  return {};
}

std::string describe(const Config& config) {
  const Prng prng(config.seed);
  std::string text = "seed = " + std::to_string(config.seed) + "\n";
  const auto line = [&text](std::string_view key, std::uint64_t value) {
    text += key;
    text += " = ";
    text += std::to_string(value);
    text += "\n";
  };
  line("seed.cost", prng.derive("cost"));
  line("memory_bytes", config.memory_bytes);
  line("buffer_alignment", config.buffer_alignment);
  line("queue_depth_max", config.queue_depth_max);
  line("queues_max", config.queues_max);
  line("execution_engines", config.execution_engines);
  line("copy_engines", config.copy_engines);
  line("batch_commands_max", config.batch_commands_max);
  line("bindings_max", config.bindings_max);
  line("parameter_bytes_max", config.parameter_bytes_max);
  line("launch_threads_max", config.launch_threads_max);
  line("upload_bytes_max", config.upload_bytes_max);
  line("capabilities", static_cast<std::uint32_t>(config.capabilities));
  line("free_synchronizes", config.free_synchronizes ? 1 : 0);
  line("host_costs", config.host_costs ? 1 : 0);
  line("implicit_wait_max_ns", config.implicit_wait_max_ns);
  line("cost_jitter.numerator", config.cost_jitter.numerator);
  line("cost_jitter.denominator", config.cost_jitter.denominator);
  text += to_text(config.costs);
  return text;
}

}  // namespace quiesce::sim
