// The Chrome trace-event timeline of a trace, in virtual time.
//
// Chrome's "ts" and "dur" are microseconds; virtual time is integer nanoseconds, so both are written as
// exact decimals ("12.345") from integers, never through floating point.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "quiesce/traces/print.h"

namespace quiesce::traces {
namespace {

constexpr std::uint64_t kHostTrack = 0;

std::string micros(std::uint64_t ns) {
  std::string fraction = std::to_string(ns % 1000);
  fraction.insert(0, 3 - fraction.size(), '0');
  return std::to_string(ns / 1000) + "." + fraction;
}

std::string json_string(const std::string& text) { return nlohmann::json(text).dump(); }

struct Slice {
  std::uint64_t queue = 0;
  std::uint64_t event = 0;
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = 0;
  bool ended = false;
  bool observed = false;
  std::string name;
  std::string commands;
  std::string outcome;
};

class Timeline {
 public:
  explicit Timeline(std::ostream& out) : out_(out) {}

  void run(const Trace& trace) {
    out_ << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"seed\":" << trace.header.seed
         << ",\"quiesce_version\":" << json_string(trace.header.quiesce_version) << "},\"traceEvents\":[\n";
    track_name(kHostTrack, "host calls");
    for (const Record& record : trace.records) {
      if (record.kind == RecordKind::Clock) {
        now_ns_ = record.note.value;
      } else if (record.kind == RecordKind::Call) {
        settle();
        call(record.call);
        ++calls_;
      } else {
        note(record);
      }
    }
    settle();
    finish();
    out_ << "\n]}\n";
  }

 private:
  void emit(const std::string& event) {
    out_ << (first_ ? "" : ",\n") << event;
    first_ = false;
  }
  void track_name(std::uint64_t tid, const std::string& name) {
    emit("{\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(tid) + ",\"name\":\"thread_name\",\"args\":{\"name\":" +
         json_string(name) + "}}");
    emit("{\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(tid) + ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" +
         std::to_string(tid) + "}}");
  }
  void span(const char* phase, HandleKind kind, std::uint64_t id, const std::string& name) {
    emit("{\"ph\":\"" + std::string(phase) + "\",\"pid\":1,\"tid\":" + std::to_string(kHostTrack) + ",\"cat\":\"" +
         std::string(to_string(kind)) + "\",\"id\":\"" + std::string(to_string(kind)) + "-" + std::to_string(id) +
         "\",\"name\":" + json_string(name) + ",\"ts\":" + micros(now_ns_) + "}");
  }
  void instant(const char* category, std::uint64_t tid, const std::string& name, const std::string& detail) {
    emit("{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":" + std::to_string(tid) + ",\"cat\":\"" + category + "\",\"name\":" +
         json_string(name) + ",\"ts\":" + micros(now_ns_) + ",\"args\":{\"detail\":" + json_string(detail) + "}}");
  }

  // A terminal observed during the previous call ends its slice at the time the next call starts.
  void settle() {
    for (const std::size_t index : settling_) {
      slices_[index].end_ns = now_ns_;
      slices_[index].ended = true;
    }
    settling_.clear();
  }

  void call(const CallRecord& call);
  void lifetime(const CallRecord& call);
  void note(const Record& record);
  void finish();
  std::string batch_name(const CallRecord& call) const;
  std::uint64_t track_of(const CallRecord& call) const;

  std::ostream& out_;
  bool first_ = true;
  std::uint64_t now_ns_ = 0;
  std::uint64_t calls_ = 0;
  std::map<std::uint64_t, std::string> kernels_;      // program id -> kernel name
  std::map<std::uint64_t, std::size_t> event_slice_;  // event id -> its batch slice
  std::set<std::uint64_t> queues_;
  std::map<std::uint64_t, std::uint64_t> call_track_;  // call index -> track of a call that faulted
  std::vector<Slice> slices_;
  std::vector<std::size_t> settling_;
  std::map<std::pair<HandleKind, std::uint64_t>, std::string> live_;  // open lifetime spans
};

std::string Timeline::batch_name(const CallRecord& call) const {
  std::string name;
  for (std::size_t index = 0; index < call.commands.size() && index < 4; ++index) {
    const CommandRecord& command = call.commands[index];
    std::string part(to_string(command.kind));
    if (command.kind == CommandKind::Launch) {
      const auto kernel = kernels_.find(command.program);
      part = kernel != kernels_.end() ? kernel->second : "launch";
    }
    name += (index == 0 ? "" : " + ") + part;
  }
  if (call.commands.size() > 4) name += " + " + std::to_string(call.commands.size() - 4) + " more";
  return name;
}

std::uint64_t Timeline::track_of(const CallRecord& call) const {
  const HandleKind kind = subject_kind(call.op);
  if (kind == HandleKind::Queue) return call.subject;
  if (kind == HandleKind::Event) {
    const auto slice = event_slice_.find(call.subject);
    if (slice != event_slice_.end()) return slices_[slice->second].queue;
  }
  return kHostTrack;
}

void Timeline::call(const CallRecord& call) {
  call_track_[calls_] = track_of(call);
  if (call.op == Op::CreateQueue && call.status == 0 && call.result_id != 0 && queues_.insert(call.result_id).second) {
    track_name(call.result_id, "queue " + std::to_string(call.result_id));
  }
  if (call.op == Op::LoadProgram && call.status == 0) kernels_[call.result_id] = call.name;
  if (call.op == Op::Submit && call.result_id != 0) {
    Slice slice{call.subject, call.result_id, now_ns_, now_ns_, false, false, batch_name(call), describe_record(Record{RecordKind::Call, call, {}}), ""};
    if (queues_.insert(call.subject).second) track_name(call.subject, "queue " + std::to_string(call.subject));
    event_slice_[call.result_id] = slices_.size();
    slices_.push_back(std::move(slice));
  }
  const bool polled_terminal = call.op == Op::PollEvent && is_terminal(static_cast<EventState>(call.status));
  const bool waited_terminal = call.op == Op::WaitEvent && call.status == 0;
  if (polled_terminal || waited_terminal) {
    const auto found = event_slice_.find(call.subject);
    if (found != event_slice_.end() && !slices_[found->second].observed) {
      Slice& slice = slices_[found->second];
      slice.observed = true;
      slice.outcome = std::string(status_name(call.op, call.status));
      if (waited_terminal) slice.outcome = std::string(to_string(call.state));
      if (call.timing.has_value()) {
        slice.begin_ns = call.timing->started_ns;
        slice.end_ns = call.timing->finished_ns;
        slice.ended = true;
      } else {
        settling_.push_back(found->second);
      }
    }
  }
  lifetime(call);
}

void Timeline::lifetime(const CallRecord& call) {
  const HandleKind created = result_kind(call.op);
  const bool creates = call.status == 0 && call.result_id != 0 && created != HandleKind::None &&
                       created != subject_kind(call.op) && created != HandleKind::Event;
  if (creates) {
    std::string name = std::string(to_string(created)) + " " + std::to_string(call.result_id);
    if (call.op == Op::AllocateBuffer) name += " (" + std::to_string(call.size) + " B)";
    if (call.op == Op::LoadProgram) name += " (" + call.name + ")";
    live_[{created, call.result_id}] = name;
    span("b", created, call.result_id, name);
  }
  const bool releases = status_kind(call.op) == StatusKind::Release && call.status != 1;
  if (releases) {
    const auto found = live_.find({subject_kind(call.op), call.subject});
    if (found != live_.end()) {
      span("e", found->first.first, found->first.second, found->second);
      live_.erase(found);
    }
  }
}

void Timeline::note(const Record& record) {
  const NoteRecord& note = record.note;
  const auto track = call_track_.find(note.call_index);
  const std::uint64_t tid = track != call_track_.end() ? track->second : kHostTrack;
  switch (record.kind) {
    case RecordKind::Fault: instant("fault", tid, "fault " + note.name, note.detail + ", parameter " + std::to_string(note.value)); break;
    case RecordKind::Finding: instant("finding", tid, "finding " + note.name, note.detail); break;
    case RecordKind::Violation: instant("violation", tid, "violation " + note.name, note.detail); break;
    case RecordKind::Schedule: instant("schedule", kHostTrack, "schedule thread " + std::to_string(note.value), note.name); break;
    default: break;
  }
}

void Timeline::finish() {
  for (Slice& slice : slices_) {
    if (!slice.ended) slice.end_ns = now_ns_;
    const std::uint64_t duration = slice.end_ns >= slice.begin_ns ? slice.end_ns - slice.begin_ns : 0;
    emit("{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(slice.queue) + ",\"cat\":\"batch\",\"name\":" + json_string(slice.name) +
         ",\"ts\":" + micros(slice.begin_ns) + ",\"dur\":" + micros(duration) + ",\"args\":{\"event\":" + std::to_string(slice.event) +
         ",\"outcome\":" + json_string(slice.observed ? slice.outcome : "never observed terminal") + ",\"call\":" + json_string(slice.commands) + "}}");
  }
  for (const auto& [key, name] : live_) span("e", key.first, key.second, name);
}

}  // namespace

void write_timeline(const Trace& trace, std::ostream& out) {
  Timeline timeline(out);
  timeline.run(trace);
}

}  // namespace quiesce::traces
