// The simulated device's configuration: seed, capacities, capabilities, behaviour switches and the cost
// profile. describe(config) names the seed and every derived knob; callers print it first so that any run
// can be repeated from its log alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quiesce/core/prng.h"
#include "quiesce/core/result.h"
#include "quiesce/core/types.h"

namespace quiesce::sim {

// Virtual-time costs. Integers only: bandwidths are bytes per microsecond. The defaults are the H200
// figures of CUDA-FACTS.md where one was measured; docs/sim.md says which ones are assumptions.
struct CostProfile {
  std::uint64_t launch_latency_ns = 3340;        // measured: back-to-back cuLaunchKernel, end to end
  std::uint64_t graph_node_ns = 500;             // measured: per node of a replayed captured graph
  std::uint64_t copy_latency_ns = 0;             // fixed cost of a copy, upload or zero command
  std::uint64_t copy_bytes_per_us = 1'600'000;   // assumed: device-to-device copy (about 1/3 of HBM3e peak)
  std::uint64_t upload_bytes_per_us = 6'000;     // measured: pageable host to device, 6.0 GB/s
  std::uint64_t kernel_bytes_per_us = 2'400'000; // assumed: bytes a builtin kernel touches (1/2 of HBM3e peak)
  std::uint64_t zero_bytes_per_us = 2'400'000;   // assumed: memset bandwidth
  std::uint64_t event_record_ns = 1300;          // measured: host cost of cuEventRecord, charged per submit
  std::uint64_t event_query_ns = 230;            // measured: host cost of cuEventQuery, charged per poll
  std::uint64_t allocation_ns = 33'000;          // measured: cuMemAlloc of 1 MiB
  std::uint64_t free_ns = 15'000;                // measured: cuMemFree

  friend bool operator==(const CostProfile&, const CostProfile&) = default;
};

// The largest cost a profile may state for one thing, an hour of virtual time: far above any GPU's, yet a
// run of billions of operations still ends well inside the clock's range (about 584 years), so time never
// saturates (clock.h) under a profile that was read rather than built in code.
inline constexpr std::uint64_t kCostNsMax = 3'600'000'000'000ULL;

// Parses `key = value` lines; `#` starts a comment; blank lines are ignored; keys not named keep their
// defaults. A bad line is refused with its line number, its key and the reason. Every `_ns` cost is at most
// kCostNsMax and every bandwidth (`_bytes_per_us`) at least 1.
Result<CostProfile, std::string> load_cost_profile(std::string_view text);
// Writes every key, one per line, in the format load_cost_profile reads.
std::string to_text(const CostProfile& profile);

inline constexpr Capability kAllCapabilities = Capability::EventCancellation | Capability::ReusableExecutables |
                                               Capability::Profiling | Capability::MemoryPools |
                                               Capability::StreamOrderedAllocation;

struct Config {
  std::uint64_t seed = 0;
  std::uint64_t memory_bytes = 1ULL << 30U;
  std::uint64_t buffer_alignment = 256;
  std::uint32_t queue_depth_max = 8;        // batches in flight per queue before admission waits
  std::uint32_t queues_max = 16;            // at most 31: the oracle's vector clocks are fixed-width
  std::uint32_t execution_engines = 4;      // launches run concurrently on this many engines
  std::uint32_t copy_engines = 2;           // copy, upload and zero commands
  std::uint32_t batch_commands_max = 64;
  std::uint32_t bindings_max = 16;
  std::uint32_t parameter_bytes_max = 4096;
  std::uint32_t launch_threads_max = 1024;  // per block, like CUDA
  std::uint64_t upload_bytes_max = 64ULL << 20U;  // one Upload command's captured bytes
  Capability capabilities = kAllCapabilities;
  // A Direct free while work is in flight: true, an implicit device-wide wait; false (the default), the
  // memory is released at once and any later device access is a use after free that the oracle reports.
  bool free_synchronizes = false;
  // Charge host-side costs (allocation, free, event record, event query, transfers) as virtual time.
  bool host_costs = true;
  // The longest an implicit device-wide wait (free_synchronizes) may take before the free is refused.
  std::uint64_t implicit_wait_max_ns = 3'600'000'000'000ULL;
  CostProfile costs = {};
  // Each device command's cost grows by a draw in [0, cost * jitter] from the "cost" sub-seed, so seeds
  // explore different interleavings across queues. Ratio{0, 1} makes costs exact.
  Ratio cost_jitter = {1, 16};
};

// Checks the limits the simulator depends on (alignment a power of two, queues_max within the oracle's
// width, nonzero engines and bandwidths, every cost at most kCostNsMax). An empty string means valid; otherwise a sentence.
std::string validate(const Config& config);

// The seed, every knob and every derived sub-seed, one `key = value` per line.
std::string describe(const Config& config);

}  // namespace quiesce::sim
