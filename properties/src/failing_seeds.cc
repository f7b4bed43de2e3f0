// Failing seeds of a campaign: recorded, shrunk, and given the command that replays them.
#include "quiesce/properties/failing_seeds.h"

#include <filesystem>
#include <system_error>

#include "quiesce/properties/record_case.h"
#include "quiesce/properties/replay.h"
#include "quiesce/traces/codec.h"

namespace quiesce::properties {

std::string record_and_shrink(std::uint64_t seed, const CaseOptions& case_options, const std::string& folder,
                              std::ostream& out) {
  std::error_code created;
  std::filesystem::create_directories(folder, created);
  if (created) {
    out << "seed " << seed << ": no trace written: cannot create " << folder << ": " << created.message() << "\n";
    return {};
  }
  const std::filesystem::path base = std::filesystem::path(folder) / ("seed-" + std::to_string(seed));
  const std::string full = base.string() + ".qtrace";
  const RecordedCase recorded = record_case(seed, case_options);
  if (traces::TraceResult<void> written = traces::write_bytes_file(full, recorded.trace); !written.ok()) {
    out << "seed " << seed << ": no trace written: " << written.error().message() << "\n";
    return {};
  }
  if (recorded.result.passed()) {  // one seed, two verdicts: R20 itself is broken
    out << "seed " << seed << ": passed when recorded, so there is no failure to shrink (R20); trace " << full << "\n";
    return "quiesce replay " + full;
  }
  traces::TraceResult<traces::Trace> trace = traces::decode_binary(recorded.trace);
  traces::TraceResult<ShrinkReport> shrunk =
      trace.ok() ? shrink_trace(trace.value()) : traces::TraceResult<ShrinkReport>(trace.error());
  if (!shrunk.ok()) {
    out << "seed " << seed << ": recorded in " << full << " (" << recorded.footer.record_count
        << " records), not shrunk: " << shrunk.error().message() << "\n";
    return "quiesce replay " + full;
  }
  const std::string minimal = base.string() + ".min.qtrace";
  if (traces::TraceResult<void> written = traces::write_trace_file(minimal, shrunk->minimal, traces::Encoding::Binary);
      !written.ok()) {
    out << "seed " << seed << ": recorded in " << full << "; the minimal trace was not written: "
        << written.error().message() << "\n";
    return "quiesce replay " + full;
  }
  out << "seed " << seed << ": " << shrunk->failure << "; shrank " << shrunk->calls_before << " calls to "
      << shrunk->calls_after << " (" << shrunk->replays << " replays): quiesce replay " << minimal
      << "\n  its records: quiesce trace print " << minimal << "\n";
  return "quiesce replay " + minimal;
}

void handle_failing_seeds(CampaignReport& report, const CaseOptions& case_options, const FailingSeedOptions& options,
                          std::ostream& out) {
  std::size_t shrunk = 0;
  std::size_t left = 0;
  for (CaseResult& result : report.cases) {
    if (result.passed()) continue;
    if (shrunk < options.shrink_max) {
      shrunk++;
      result.replay_command = record_and_shrink(result.seed, case_options, options.folder, out);
    } else if (!options.rerun_flags.empty()) {
      result.replay_command = "quiesce run --seed " + std::to_string(result.seed) + " " + options.rerun_flags;
      out << "replay seed " << result.seed << ": " << result.replay_command << "\n";
    } else {
      left++;
    }
  }
  if (left != 0) {
    out << left << " more failing seeds were neither recorded nor shrunk (the first " << options.shrink_max
        << " are)\n";
  }
}

}  // namespace quiesce::properties
