// The recorded simulator stack: what each call caused below the recorder becomes records after it.
#include <algorithm>
#include <string>

#include "quiesce/traces/codec.h"
#include "quiesce/traces/print.h"
#include "replay_internal.h"

namespace quiesce::properties {

RecordedSimStack::RecordedSimStack(const RunConfig& config, const faults::Plan& plan, traces::TraceSink& sink)
    : device_(config.device), top_(sink, config.validator, device_, plan) {
  top_.set_hooks(this);
}

RecordedSimStack::~RecordedSimStack() {
  // Schedule records after the last call (a decision made once every call was done) end the recording.
  if (followed_ != nullptr) walk_recording(kNoCall);
  top_.set_hooks(nullptr);
}

void RecordedSimStack::on_decision(sim::FiberId chosen, std::size_t runnable, std::uint64_t /*now_ns*/) {
  top_.record_schedule(schedule_name_, chosen, runnable);
}

void RecordedSimStack::follow(const std::vector<traces::Record>& records) {
  following_ = true;
  followed_ = &records;
  followed_next_ = 0;
  followed_calls_ = 0;
  followed_clock_ns_ = 0;
  clock_before_.clear();
}

void RecordedSimStack::follow_clock(std::vector<std::uint64_t> clock_before_call) {
  following_ = true;
  followed_ = nullptr;
  clock_before_ = std::move(clock_before_call);
}

void RecordedSimStack::catch_up(std::uint64_t call_index) {
  // advance_to fires every device event due by then, in the order the recording's run fired them.
  if (followed_ != nullptr) {
    if (walk_recording(call_index)) device_.advance_to(followed_clock_ns_);
    return;
  }
  if (call_index < clock_before_.size()) device_.advance_to(clock_before_[call_index]);
}

// The records are walked once, alongside the replay, rather than listed beforehand: the replay has just read
// the records before call `call_index`, so they are still in the cache.
bool RecordedSimStack::walk_recording(std::uint64_t call_index) {
  const std::vector<traces::Record>& records = *followed_;
  for (; followed_next_ < records.size(); ++followed_next_) {
    const traces::Record& record = records[followed_next_];
    if (record.kind == traces::RecordKind::Call) {
      if (followed_calls_ == call_index) return true;  // stays here: the next walk passes over it
      ++followed_calls_;
    } else if (record.kind == traces::RecordKind::Clock) {
      followed_clock_ns_ = record.note.value;
    } else if (record.kind == traces::RecordKind::Schedule) {
      top_.record_schedule(record.note.name, record.note.value, record.note.count);
    }
  }
  return false;
}

void RecordedSimStack::after_call(std::uint64_t call_index) {
  reached_.push_back(injector().calls() > injector_calls_before_);
  const std::vector<faults::InjectedFault>& injected = injector().injected();
  for (; faults_seen_ < injected.size(); ++faults_seen_) {
    const faults::InjectedFault& fault = injected[faults_seen_];
    top_.record_fault(call_index, faults::to_string(fault.kind), faults::to_string(fault.site), fault.parameter,
                      fault.call_index, fault.site_ordinal);
  }
  const std::vector<sim::Finding>& findings = device_.findings();
  for (; findings_seen_ < findings.size(); ++findings_seen_) {
    const sim::Finding& finding = findings[findings_seen_];
    top_.record_finding(call_index, sim::to_string(finding.kind), finding.message);
  }
  const std::vector<Violation>& violations = validator().violations();
  for (; violations_seen_ < violations.size(); ++violations_seen_) {
    const Violation& violation = violations[violations_seen_];
    top_.record_violation(violation.call_index, rule_info(violation.rule).name, describe_violation(violation));
  }
}

}  // namespace quiesce::properties

namespace quiesce::properties::replay_detail {

ComparingSink::ComparingSink(const traces::TraceHeader& header, const std::vector<traces::Record>* expected)
    : writer_(header), expected_(expected) {}

// A record equal to the expected one has the same encoding, so the expected one is written instead: its
// seeded payloads are held as seeds and need no looking at.
void ComparingSink::append(const traces::Record& record) {
  const std::uint64_t index = writer_.record_count();
  if (expected_ == nullptr) {
    writer_.append(record);
    records_.push_back(record);
    return;
  }
  if (divergence_.has_value()) return writer_.append(record);
  if (index >= expected_->size()) {
    divergence_ = Divergence{index, "(nothing: the trace ends here)", printed(record)};
  } else if ((*expected_)[index] == record) {
    return writer_.append((*expected_)[index]);
  } else {
    divergence_ = divergence_between(index, (*expected_)[index], record);
  }
  writer_.append(record);
}

// The two records printed; where the printed forms are equal (they leave out a device name, an error's
// text, payload bytes), each also shows its JSON Lines form around the first character where they differ.
Divergence divergence_between(std::uint64_t index, const traces::Record& expected, const traces::Record& actual) {
  Divergence divergence{index, printed(expected), printed(actual)};
  if (divergence.expected != divergence.actual) return divergence;
  const std::string expected_json = traces::record_jsonl(expected);
  const std::string actual_json = traces::record_jsonl(actual);
  const auto [differs, unused] = std::mismatch(expected_json.begin(), expected_json.end(), actual_json.begin(),
                                               actual_json.end());
  const std::size_t at = static_cast<std::size_t>(differs - expected_json.begin());
  constexpr std::size_t kBefore = 32;
  constexpr std::size_t kAfter = 48;
  const std::size_t from = at > kBefore ? at - kBefore : 0;
  const auto excerpt = [&](const std::string& json) {
    std::string text = "; as JSON, from character " + std::to_string(from) + ": " + (from > 0 ? "..." : "");
    text += json.substr(from, at - from + kAfter);
    if (from + (at - from + kAfter) < json.size()) text += "...";
    return text;
  };
  divergence.expected += excerpt(expected_json);
  divergence.actual += excerpt(actual_json);
  return divergence;
}

std::string printed(const traces::Record& record) { return traces::describe_record(record); }

constexpr std::uint64_t kKindPrefetchAhead = 64;

// Fault records name their kind and site; a replay hands them to the injector, so both must be known. One
// pass both checks the names and lists the faults for the injector.
traces::TraceResult<std::vector<faults::InjectedFault>> faults_to_replay(const traces::Trace& trace) {
  std::vector<faults::InjectedFault> list;
  for (std::uint64_t index = 0; index < trace.records.size(); ++index) {
    const traces::Record& record = trace.records[index];
    // Only the kind is read of most records, one cache line each, far apart: fetched far enough ahead to
    // cover a miss to memory, since checking a kind takes a few cycles.
    if (index + kKindPrefetchAhead < trace.records.size()) __builtin_prefetch(&trace.records[index + kKindPrefetchAhead].kind);
    if (record.kind != traces::RecordKind::Fault) continue;
    const std::optional<faults::FaultKind> kind = faults::fault_kind_from_string(record.note.name);
    const std::optional<faults::Site> site = faults::site_from_string(record.note.detail);
    if (!kind.has_value() || !site.has_value()) {
      return traces::TraceError{"fault '" + record.note.name + "' at site '" + record.note.detail +
                                    "' is not a fault this build's injector can tell",
                                traces::TraceError::Where::Record, index};
    }
    faults::InjectedFault fault;
    fault.call_index = record.note.count;
    fault.site_ordinal = record.note.ordinal;
    fault.parameter = record.note.value;
    fault.kind = *kind;
    fault.site = *site;
    list.push_back(fault);
  }
  return list;
}

std::vector<faults::InjectedFault> replay_faults_of(const std::vector<traces::Record>& records) {
  std::vector<faults::InjectedFault> list;
  for (const traces::Record& record : records) {
    if (record.kind != traces::RecordKind::Fault) continue;
    faults::InjectedFault fault;
    fault.call_index = record.note.count;
    fault.site_ordinal = record.note.ordinal;
    fault.parameter = record.note.value;
    // Names were checked by faults_to_replay before any replay or shrink starts.
    fault.kind = faults::fault_kind_from_string(record.note.name).value_or(faults::FaultKind::SubmitRejected);
    fault.site = faults::site_from_string(record.note.detail).value_or(faults::Site::Submit);
    list.push_back(fault);
  }
  return list;
}

faults::Plan replay_plan(const faults::Plan& original, std::vector<faults::InjectedFault> faults) {
  faults::Plan plan = faults::Plan::replay(std::move(faults));
  plan.seed = original.seed;
  plan.delay_polls_max = original.delay_polls_max;
  return plan;
}

}  // namespace quiesce::properties::replay_detail
