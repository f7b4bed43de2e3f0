// Recording a campaign case as a trace, and the determinism check on two recordings of it.
#include "quiesce/properties/record_case.h"

#include <algorithm>
#include <sstream>

#include "quiesce/traces/print.h"
#include "replay_internal.h"

namespace quiesce::properties {

RecordedCase record_case(std::uint64_t seed, const CaseOptions& options) {
  traces::BinaryWriter writer(case_header(seed, options));
  std::ostringstream report;
  CaseOptions recorded = options;
  recorded.trace = &writer;
  recorded.detail = &report;
  recorded.determinism_every = 0;
  RecordedCase run;
  run.result = run_case(seed, recorded);
  run.report = report.str();
  run.footer = traces::TraceFooter{writer.record_count(), writer.digest()};
  run.trace = writer.finish();
  return run;
}

std::optional<Divergence> first_difference(const std::vector<std::byte>& first, const std::vector<std::byte>& second) {
  if (first == second) return std::nullopt;
  traces::TraceResult<traces::Trace> a = traces::decode_binary(first);
  traces::TraceResult<traces::Trace> b = traces::decode_binary(second);
  if (!a.ok() || !b.ok()) return Divergence{0, "(the first trace does not decode)", "(the second trace does not decode)"};
  const std::size_t common = std::min(a->records.size(), b->records.size());
  std::size_t index = 0;
  while (index < common && a->records[index] == b->records[index]) ++index;
  const std::string nothing = "(nothing: the trace ends here)";
  if (index == common && a->records.size() == b->records.size()) {
    return Divergence{index, "(the headers differ)", "(the headers differ)"};
  }
  if (index < common) return replay_detail::divergence_between(index, a->records[index], b->records[index]);
  return Divergence{index, index < a->records.size() ? traces::describe_record(a->records[index]) : nothing,
                    index < b->records.size() ? traces::describe_record(b->records[index]) : nothing};
}

DeterminismReport check_case_determinism(std::uint64_t seed, const CaseOptions& options) {
  const RecordedCase first = record_case(seed, options);
  const RecordedCase second = record_case(seed, options);
  DeterminismReport report;
  report.difference = first_difference(first.trace, second.trace);
  report.identical = !report.difference.has_value();
  report.bytes = first.trace.size();
  report.records = first.footer.record_count;
  return report;
}

}  // namespace quiesce::properties
