// The coverage probes a campaign of one workload can reach, shared by `quiesce run` and `quiesce campaign`.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "quiesce/properties/cases.h"

namespace quiesce::cli {

// quiesce::Engine offers no cancellation (docs/engine.md), so the engine workload cannot win one: this probe
// belongs to the raw workload, which cancels (docs/properties.md, "Coverage probes").
inline constexpr std::string_view kRawOnlyProbe = "cancellation won";
// The raw workload drives the Backend directly: it has no engine whose submit could leave completions.
inline constexpr std::string_view kEngineOnlyProbe = "submit left its completions to a later call";

inline std::vector<std::string> probes_for(const std::string& workload) {
  std::vector<std::string> probes = properties::standard_probes();
  if (workload == "engine") std::erase(probes, std::string(kRawOnlyProbe));
  if (workload == "raw") std::erase(probes, std::string(kEngineOnlyProbe));
  return probes;
}

// The line after the probe report that names the probe this workload cannot reach, and why.
inline void print_probe_scope(const std::string& workload, std::ostream& out) {
  if (workload == "engine") {
    out << "  not a probe of the engine workload: " << kRawOnlyProbe << " (quiesce::Engine offers no cancellation)\n";
  } else if (workload == "raw") {
    out << "  not a probe of the raw workload: " << kEngineOnlyProbe << " (it drives no engine)\n";
  }
}

}  // namespace quiesce::cli
