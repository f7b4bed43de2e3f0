// Printing the raw workload's statistics.
#include "quiesce/properties/raw_workload.h"

namespace quiesce::properties {

void print_stats(const RawWorkloadStats& stats, std::ostream& out) {
  out << "operations: " << stats.operations << "\n"
      << "allocations: " << stats.allocations << " (" << stats.allocation_failures << " refused)\n"
      << "writes: " << stats.writes << ", reads checked: " << stats.reads_checked << "\n"
      << "submits: " << stats.submits << " (" << stats.submits_rejected << " rejected, "
      << stats.submits_indeterminate << " indeterminate, " << stats.retries << " exact retries)\n"
      << "terminals: " << stats.terminals_complete << " complete, " << stats.terminals_failed << " failed, "
      << stats.terminals_cancelled << " cancelled\n"
      << "polls: " << stats.polls << ", waits: " << stats.waits << " (" << stats.waits_indeterminate
      << " indeterminate)\n"
      << "captures: " << stats.captures << ", replays: " << stats.replays << "\n"
      << "releases: " << stats.releases << " (" << stats.releases_rejected << " rejected, "
      << stats.releases_indeterminate << " indeterminate)\n"
      << "device losses: " << stats.device_losses << ", quarantined handles: " << stats.quarantined_handles
      << ", leaked handles: " << stats.leaked_handles << "\n";
  for (const std::string& problem : stats.problems) out << "problem: " << problem << "\n";
}

}  // namespace quiesce::properties
