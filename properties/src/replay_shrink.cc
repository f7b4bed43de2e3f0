// Shrinking a failing trace: delta debugging (ddmin) over its recorded calls.
//
// A candidate keeps a subset of the current trace's calls, minus every call that names a handle created
// by a dropped call (transitively), with the faults of the kept calls. Their injector call indices are
// predicted from which kept calls reached the injector last time (the validator refuses some before they
// do). The candidate runs on a fresh stack and is re-recorded; it stops at the first record of the same
// failure (same kind, same rule or finding name), so trailing calls fall away. A reproducing candidate's
// re-recording becomes the current trace: every accepted step is itself a faithful recording.
//
// Each kept call starts no earlier than it did in the trace it comes from (RecordedSimStack::follow_clock):
// time an engine let pass between calls (sleeps, waits for a retry) passes again, so an engine trace
// shrinks like a raw one. Schedule records are not kept: the minimal trace is one host thread's calls.
#include <set>
#include <string>
#include <utility>

#include "quiesce/traces/validate.h"
#include "replay_internal.h"

namespace quiesce::properties {
namespace {

using replay_detail::CallExecutor;
using replay_detail::ComparingSink;
using replay_detail::SimStack;
using traces::Record;
using traces::RecordKind;

struct Failure {
  RecordKind kind = RecordKind::Finding;
  std::string name;
  bool matches(const Record& record) const { return record.kind == kind && record.note.name == name; }
  std::string describe() const { return std::string(traces::to_string(kind)) + " " + name; }
};

// The first failure of the trace, or the first one that `wanted` ("finding NAME", "violation NAME") names.
std::optional<Failure> find_failure(const std::vector<Record>& records, const std::string& wanted) {
  for (const Record& record : records) {
    if (record.kind != RecordKind::Finding && record.kind != RecordKind::Violation) continue;
    Failure failure{record.kind, record.note.name};
    if (wanted.empty() || wanted == failure.describe()) return failure;
  }
  return std::nullopt;
}

struct Attempt {
  bool reproduced = false;
  std::vector<Record> records;
  std::vector<bool> reached;
};

class Shrinker {
 public:
  Shrinker(const traces::TraceHeader& header, RunConfig config, Failure failure)
      : header_(header), config_(std::move(config)), failure_(std::move(failure)) {}

  // Runs the calls of `base` that `keep` marks (after the dependency closure).
  Attempt attempt(const Attempt& base, std::vector<bool> keep) {
    close_dependencies(base.records, keep);
    std::vector<faults::InjectedFault> faults;
    std::vector<const traces::CallRecord*> calls;
    std::vector<std::uint64_t> clocks;
    std::uint64_t clock_ns = 0;
    std::uint64_t call = 0;
    std::uint64_t reaching = 0;  // kept calls so far that reached the injector
    for (const Record& record : base.records) {
      if (record.kind == RecordKind::Clock) clock_ns = record.note.value;
      if (record.kind == RecordKind::Call) {
        if (keep[call]) {
          calls.push_back(&record.call);
          clocks.push_back(clock_ns);
        }
        reaching += keep[call] && base.reached[call] ? 1 : 0;
        ++call;
      } else if (record.kind == RecordKind::Fault && record.note.call_index < keep.size() && keep[record.note.call_index] &&
                 reaching > 0) {
        std::vector<faults::InjectedFault> one = replay_detail::replay_faults_of({record});
        one[0].call_index = reaching - 1;
        faults.push_back(one[0]);
      }
    }
    return run(calls, faults, std::move(clocks));
  }

  // `clocks[n]`: the virtual time kept call n began at in the trace it comes from. Time that passed
  // between calls there (an engine's sleeps) passes again before the call; a dropped call's own time does not.
  Attempt run(const std::vector<const traces::CallRecord*>& calls, std::vector<faults::InjectedFault> faults,
              std::vector<std::uint64_t> clocks) {
    ++replays_;
    ComparingSink sink(header_, nullptr);
    Attempt result;
    {
      SimStack stack(config_, replay_detail::replay_plan(config_.plan, std::move(faults)), sink);
      stack.follow_clock(std::move(clocks));
      CallExecutor executor(stack.top());
      std::string problem;
      for (const traces::CallRecord* call : calls) {
        if (!executor.execute(*call, problem)) break;
        if (reproduced(sink.records())) break;
      }
      result.reached = stack.reached_injector();
    }
    result.reproduced = reproduced(sink.records());
    result.records = std::move(sink.records());
    return result;
  }

  std::uint64_t replays() const { return replays_; }
  // Each run records into a fresh sink: the scan for the failure starts again.
  void begin_attempt() {
    scanned_ = 0;
    found_ = false;
  }

 private:
  bool reproduced(const std::vector<Record>& records) {
    // Only the records appended since the last look can be new; a failure found stays found.
    for (; scanned_ < records.size(); ++scanned_) {
      if (failure_.matches(records[scanned_])) found_ = true;
    }
    return found_;
  }

  // A call naming a handle whose creator was dropped is dropped too; what it created dies with it.
  static void close_dependencies(const std::vector<Record>& records, std::vector<bool>& keep) {
    std::set<std::pair<traces::HandleKind, std::uint64_t>> dead;
    const auto is_dead = [&dead](traces::HandleKind kind, std::uint64_t id) { return id != 0 && dead.contains({kind, id}); };
    std::uint64_t call = 0;
    for (const Record& record : records) {
      if (record.kind != RecordKind::Call) continue;
      const traces::CallRecord& c = record.call;
      bool uses_dead = is_dead(traces::subject_kind(c.op), c.subject) || is_dead(traces::HandleKind::Queue, c.queue);
      for (const traces::CommandRecord& command : c.commands) {
        uses_dead = uses_dead || is_dead(traces::HandleKind::Program, command.program) ||
                    is_dead(traces::HandleKind::Executable, command.executable) || is_dead(traces::HandleKind::Event, command.event) ||
                    is_dead(traces::HandleKind::Buffer, command.source) || is_dead(traces::HandleKind::Buffer, command.target);
        for (const traces::BindingRecord& binding : command.bindings) uses_dead = uses_dead || is_dead(traces::HandleKind::Buffer, binding.buffer);
      }
      if (uses_dead) keep[call] = false;
      const bool creates = c.result_id != 0 && traces::result_kind(c.op) != traces::subject_kind(c.op);
      if (!keep[call] && creates) dead.insert({traces::result_kind(c.op), c.result_id});
      ++call;
    }
  }

  traces::TraceHeader header_;
  RunConfig config_;
  Failure failure_;
  std::uint64_t replays_ = 0;
  std::size_t scanned_ = 0;
  bool found_ = false;
};

std::uint64_t calls_in(const std::vector<Record>& records) {
  std::uint64_t calls = 0;
  for (const Record& record : records) calls += record.kind == RecordKind::Call ? 1 : 0;
  return calls;
}

}  // namespace

traces::TraceResult<ShrinkReport> shrink_trace(const traces::Trace& trace, const ShrinkOptions& options) {
  traces::TraceResult<void> valid = traces::validate_trace(trace);
  if (!valid.ok()) return valid.error();
  traces::TraceResult<std::vector<faults::InjectedFault>> recorded_faults = replay_detail::faults_to_replay(trace);
  if (!recorded_faults.ok()) return recorded_faults.error();
  traces::TraceResult<RunConfig> config = config_from_header(trace.header);
  if (!config.ok()) return config.error();
  const std::optional<Failure> failure = find_failure(trace.records, options.failure);
  if (!failure.has_value()) {
    const std::string what = options.failure.empty() ? "no finding and no violation" : "no " + options.failure;
    return traces::TraceError{"the trace holds " + what + ": there is no failure to shrink towards",
                              traces::TraceError::Where::Record, trace.records.size()};
  }
  Shrinker shrinker(trace.header, config.value(), *failure);
  ShrinkReport report;
  report.failure = failure->describe();
  report.calls_before = trace.call_count();

  // The first attempt replays everything with the recorded faults; it must reproduce the failure.
  std::vector<const traces::CallRecord*> all_calls;
  std::vector<std::uint64_t> clocks;
  std::uint64_t clock_ns = 0;
  for (const Record& record : trace.records) {
    if (record.kind == RecordKind::Clock) clock_ns = record.note.value;
    if (record.kind == RecordKind::Call) {
      all_calls.push_back(&record.call);
      clocks.push_back(clock_ns);
    }
  }
  shrinker.begin_attempt();
  Attempt current = shrinker.run(all_calls, std::move(recorded_faults).value(), std::move(clocks));
  if (!current.reproduced) {
    return traces::TraceError{"the " + failure->describe() + " did not reproduce when the trace was replayed", traces::TraceError::Where::File, 0};
  }
  std::uint64_t granularity = 2;
  while (shrinker.replays() < options.replays_max) {
    const std::uint64_t calls = calls_in(current.records);
    if (calls <= 1) break;
    const std::uint64_t chunk = (calls + granularity - 1) / granularity;
    bool progressed = false;
    for (std::uint64_t start = 0; start < calls && shrinker.replays() < options.replays_max; start += chunk) {
      std::vector<bool> keep(calls, true);
      for (std::uint64_t index = start; index < std::min(calls, start + chunk); ++index) keep[index] = false;
      shrinker.begin_attempt();
      Attempt candidate = shrinker.attempt(current, std::move(keep));
      if (candidate.reproduced && calls_in(candidate.records) < calls) {
        current = std::move(candidate);
        granularity = std::max<std::uint64_t>(granularity - 1, 2);
        progressed = true;
        break;
      }
    }
    if (progressed) continue;
    if (granularity >= calls) break;
    granularity = std::min(granularity * 2, calls);
  }
  report.minimal.header = trace.header;
  report.minimal.records = std::move(current.records);
  report.minimal.footer = traces::compute_footer(report.minimal.header, report.minimal.records);
  report.calls_after = report.minimal.call_count();
  report.replays = shrinker.replays();
  return report;
}

}  // namespace quiesce::properties
