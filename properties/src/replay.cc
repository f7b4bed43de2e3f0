// Recording a run, replaying a trace, the determinism check, and their command-line entry points.
#include "quiesce/properties/replay.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quiesce/core/digest.h"
#include "quiesce/core/files.h"
#include "quiesce/properties/record_case.h"
#include "quiesce/traces/commands.h"
#include "quiesce/traces/validate.h"
#include "replay_internal.h"

namespace quiesce::properties {
namespace {

using replay_detail::CallExecutor;
using replay_detail::ComparingSink;
using replay_detail::SimStack;

constexpr int kExitFaithful = 0;
constexpr int kExitDiverged = 1;
constexpr int kExitBadInput = 2;

// A record is several cache lines and the trace is far larger than the caches; the replay reads each
// record twice (to issue its call, then to compare what the call recorded), so later ones are fetched
// while this one runs.
void prefetch_record(const traces::Record& record) {
  const char* const bytes = reinterpret_cast<const char*>(&record);
  for (std::size_t offset = 0; offset < sizeof(traces::Record); offset += 64) __builtin_prefetch(bytes + offset);
}

std::string encoding_name(traces::Encoding encoding) {
  return encoding == traces::Encoding::Binary ? "binary" : "JSON Lines";
}

void print_divergence(const Divergence& divergence, std::ostream& out) {
  out << "divergence at record " << divergence.record_index << "\n  expected: " << divergence.expected
      << "\n  actual:   " << divergence.actual << "\n";
}

}  // namespace

RecordedRun record_raw_run(const RunConfig& config) {
  traces::BinaryWriter writer(header_of(config));
  RecordedRun run;
  {
    SimStack stack(config, config.plan, writer);
    RawWorkloadOptions options = config.workload;
    options.seed = config.seed;
    options.on_liveness = [&stack] { stack.injector().set_injecting(false); };
    Digest digest;
    run.stats = run_raw_workload(stack.top(), options, digest);
    run.findings = stack.findings();
    run.violations = stack.violations();
    run.faults = stack.faults();
  }
  run.footer = traces::TraceFooter{writer.record_count(), writer.digest()};
  run.trace = writer.finish();
  return run;
}

traces::TraceResult<ReplayReport> replay_trace(const traces::Trace& trace) {
  traces::TraceResult<void> valid = traces::validate_trace(trace);
  if (!valid.ok()) return valid.error();
  traces::TraceResult<std::vector<faults::InjectedFault>> faults = replay_detail::faults_to_replay(trace);
  if (!faults.ok()) return faults.error();
  traces::TraceResult<RunConfig> config = config_from_header(trace.header);
  if (!config.ok()) return config.error();

  ReplayReport report;
  report.digest_expected = trace.footer.digest;
  ComparingSink sink(trace.header, &trace.records);
  {
    const faults::Plan plan = replay_detail::replay_plan(config->plan, std::move(faults).value());
    SimStack stack(config.value(), plan, sink);
    stack.follow(trace.records);  // virtual time that passed between calls, and the schedule records
    CallExecutor executor(stack.top());
    std::string problem;
    for (std::uint64_t index = 0; index < trace.records.size() && !sink.diverged(); ++index) {
      const traces::Record& record = trace.records[index];
      // The record after next is fetched; the next one, fetched a record ago, names the map slots to fetch.
      if (index + 2 < trace.records.size()) prefetch_record(trace.records[index + 2]);
      if (index + 1 < trace.records.size() && trace.records[index + 1].kind == traces::RecordKind::Call) {
        executor.prefetch(trace.records[index + 1].call);
      }
      if (record.kind != traces::RecordKind::Call) continue;
      if (!executor.execute(record.call, problem)) return traces::TraceError{problem, traces::TraceError::Where::Record, index};
      report.calls_replayed++;
    }
  }
  if (!sink.diverged() && sink.count() < trace.records.size()) {
    sink.set_divergence(Divergence{sink.count(), replay_detail::printed(trace.records[sink.count()]),
                                   "(nothing: the replay produced no more records)"});
  }
  report.divergence = sink.divergence();
  report.records_compared = sink.count();
  report.digest_actual = sink.writer().digest();
  report.trace = sink.writer().finish();
  return report;
}

DeterminismReport check_determinism(const RunConfig& config) {
  const RecordedRun first = record_raw_run(config);
  const RecordedRun second = record_raw_run(config);
  DeterminismReport report;
  report.identical = first.trace == second.trace;
  report.bytes = first.trace.size();
  report.records = first.footer.record_count;
  if (report.identical) return report;
  report.difference = first_difference(first.trace, second.trace);
  return report;
}

int replay_command(const std::string& path, std::ostream& out, std::ostream& err) {
  traces::TraceResult<traces::Trace> trace = traces::load_trace(path);
  if (!trace.ok()) {
    err << "quiesce: " << path << ": " << trace.error().message() << "\n";
    return kExitBadInput;
  }
  traces::TraceResult<ReplayReport> report = replay_trace(trace.value());
  if (!report.ok()) {
    err << "quiesce: " << path << ": " << report.error().message() << "\n";
    return kExitBadInput;
  }
  out << "replayed " << report->calls_replayed << " calls, compared " << report->records_compared << " of "
      << trace->records.size() << " records\n";
  if (report->faithful()) {
    out << "faithful: digest " << to_hex(report->digest_actual) << " matches the recording\n";
    return kExitFaithful;
  }
  if (report->divergence.has_value()) print_divergence(*report->divergence, out);
  out << "digest expected " << to_hex(report->digest_expected) << ", actual " << to_hex(report->digest_actual) << "\n";
  return kExitDiverged;
}

int shrink_command(const std::string& path, const std::string& output_path, std::ostream& out, std::ostream& err) {
  // The failing trace is the evidence: the minimal one goes beside it, never over it.
  if (is_one_of(output_path, {path})) {
    err << "quiesce: the minimal trace's output '" << output_path << "' is the failing trace; name another file\n";
    return kExitBadInput;
  }
  traces::TraceResult<traces::Trace> trace = traces::load_trace(path);
  if (!trace.ok()) {
    err << "quiesce: " << path << ": " << trace.error().message() << "\n";
    return kExitBadInput;
  }
  traces::TraceResult<ShrinkReport> report = shrink_trace(trace.value());
  if (!report.ok()) {
    err << "quiesce: " << path << ": " << report.error().message() << "\n";
    return report.error().where == traces::TraceError::Where::File ? kExitDiverged : kExitBadInput;
  }
  traces::TraceResult<void> written =
      traces::write_trace_file(output_path, report->minimal, traces::encoding_for_path(output_path));
  if (!written.ok()) {
    err << "quiesce: " << written.error().message() << "\n";
    return kExitBadInput;
  }
  out << "shrank " << report->calls_before << " calls to " << report->calls_after << " in " << report->replays
      << " replays; the failure: " << report->failure << "\nwrote " << output_path << "\n";
  return kExitFaithful;
}

int record_command(const RunConfig& config, const std::string& trace_path, traces::Encoding encoding, std::ostream& out,
                   std::ostream& err) {
  const RecordedRun run = record_raw_run(config);
  traces::TraceResult<void> written = traces::write_bytes_file(trace_path, run.trace);
  if (written.ok() && encoding == traces::Encoding::JsonLines) {
    traces::TraceResult<traces::Trace> decoded = traces::decode_binary(run.trace);
    written = decoded.ok() ? traces::write_trace_file(trace_path, decoded.value(), encoding) : traces::TraceResult<void>(decoded.error());
  }
  if (!written.ok()) {
    err << "quiesce: " << written.error().message() << "\n";
    return kExitBadInput;
  }
  print_stats(run.stats, out);
  out << "trace: " << trace_path << " (" << encoding_name(encoding) << ", " << run.footer.record_count << " records, "
      << run.trace.size() << " bytes binary, digest " << to_hex(run.footer.digest) << ")\n"
      << "faults injected: " << run.faults << ", findings: " << run.findings << ", violations: " << run.violations << "\n";
  return run.held() ? kExitFaithful : kExitDiverged;
}

int determinism_command(const RunConfig& config, std::ostream& out, std::ostream& err) {
  const DeterminismReport report = check_determinism(config);
  if (report.identical) {
    out << "deterministic: two runs of seed " << config.seed << " wrote the same " << report.bytes << " bytes ("
        << report.records << " records)\n";
    return kExitFaithful;
  }
  err << "quiesce: two runs of seed " << config.seed << " differ\n";
  if (report.difference.has_value()) print_divergence(*report.difference, out);
  return kExitDiverged;
}

}  // namespace quiesce::properties
