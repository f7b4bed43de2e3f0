// The Chrome trace-event timeline of a trace, in virtual time.
//
// Chrome's "ts" and "dur" are microseconds; virtual time is integer nanoseconds, so both are written as
// exact decimals ("12.345") from integers, never through floating point.
//
// Each batch is a slice on its queue's track, from its timing receipt (started, finished) when the trace
// has one, else from its submit to the call that first observed it terminal. Its commands are slices
// nested inside it, in order. The contract times a batch, not its commands, so the batch's interval is
// divided among its commands in proportion to what the header's cost profile says each costs (a launch's
// latency plus the bytes its bindings touch, a delay kernel's own duration, a transfer's latency and
// bytes): the batch's bounds are measured, the boundaries between its commands are that estimate, and
// each command slice says so in its args.
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
  std::vector<std::pair<std::string, std::uint64_t>> parts;  // each command's name and estimated cost (ns)
};

// The cost profile's figures the estimate uses, read from the header's `key = value` text; a key that is
// missing or unreadable keeps the simulator's default.
struct Costs {
  std::uint64_t launch_latency_ns = 3340;
  std::uint64_t graph_node_ns = 500;
  std::uint64_t copy_latency_ns = 0;
  std::uint64_t copy_bytes_per_us = 1'600'000;
  std::uint64_t upload_bytes_per_us = 6'000;
  std::uint64_t kernel_bytes_per_us = 2'400'000;
  std::uint64_t zero_bytes_per_us = 2'400'000;

  explicit Costs(const std::string& text) {
    const std::map<std::string, std::uint64_t*> keys = {
        {"launch_latency_ns", &launch_latency_ns},     {"graph_node_ns", &graph_node_ns},
        {"copy_latency_ns", &copy_latency_ns},         {"copy_bytes_per_us", &copy_bytes_per_us},
        {"upload_bytes_per_us", &upload_bytes_per_us}, {"kernel_bytes_per_us", &kernel_bytes_per_us},
        {"zero_bytes_per_us", &zero_bytes_per_us}};
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string row = text.substr(start, end - start);
      start = end + 1;
      const std::size_t equals = row.find(" = ");
      if (equals == std::string::npos) continue;
      const auto key = keys.find(row.substr(0, equals));
      const std::string value = row.substr(equals + 3);
      if (key == keys.end() || value.empty() || value.size() > 18 ||
          value.find_first_not_of("0123456789") != std::string::npos) {
        continue;
      }
      const std::uint64_t parsed = std::stoull(value);
      if (parsed != 0 || key->first.find("bytes_per_us") == std::string::npos) *key->second = parsed;
    }
  }

  static std::uint64_t transfer_ns(std::uint64_t bytes, std::uint64_t bytes_per_us) {
    return bytes / bytes_per_us * 1000 + bytes % bytes_per_us * 1000 / bytes_per_us;
  }
};

// begin + span * part / total without overflow (total <= 2^31 once scaled).
std::uint64_t share(std::uint64_t begin, std::uint64_t span, std::uint64_t part, std::uint64_t total) {
  return begin + span / total * part + span % total * part / total;
}

class Timeline {
 public:
  Timeline(std::ostream& out, const Costs& costs) : out_(out), costs_(costs) {}

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
  std::string command_name(const CommandRecord& command) const;
  std::uint64_t command_cost(const CommandRecord& command) const;
  void emit_commands(const Slice& slice);
  std::uint64_t track_of(const CallRecord& call) const;

  std::ostream& out_;
  Costs costs_;
  std::map<std::uint64_t, std::uint64_t> buffer_bytes_;  // buffer id -> size
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

std::string Timeline::command_name(const CommandRecord& command) const {
  if (command.kind != CommandKind::Launch) return std::string(to_string(command.kind));
  const auto kernel = kernels_.find(command.program);
  return kernel != kernels_.end() ? kernel->second : "launch";
}

std::uint64_t Timeline::command_cost(const CommandRecord& command) const {
  switch (command.kind) {
    case CommandKind::Launch: {
      std::uint64_t touched = 0;
      for (const BindingRecord& binding : command.bindings) {
        const auto bytes = buffer_bytes_.find(binding.buffer);
        if (bytes != buffer_bytes_.end()) touched += bytes->second;
      }
      std::uint64_t cost = costs_.launch_latency_ns + Costs::transfer_ns(touched, costs_.kernel_bytes_per_us);
      const auto kernel = kernels_.find(command.program);
      if (kernel != kernels_.end() && kernel->second == "delay" && command.data.size() >= sizeof(std::uint64_t)) {
        std::uint64_t delay_ns = 0;  // the delay kernel's parameter: its duration, little-endian
        for (std::size_t index = 0; index < sizeof(delay_ns); ++index) {
          delay_ns |= static_cast<std::uint64_t>(command.data[index]) << (8 * index);
        }
        cost += delay_ns;
      }
      return cost;
    }
    case CommandKind::Copy: return costs_.copy_latency_ns + Costs::transfer_ns(command.bytes, costs_.copy_bytes_per_us);
    case CommandKind::Upload: return costs_.copy_latency_ns + Costs::transfer_ns(command.bytes, costs_.upload_bytes_per_us);
    case CommandKind::Zero: return costs_.copy_latency_ns + Costs::transfer_ns(command.bytes, costs_.zero_bytes_per_us);
    case CommandKind::Replay: return costs_.graph_node_ns;
    default: return 0;
  }
}

std::string Timeline::batch_name(const CallRecord& call) const {
  std::string name;
  for (std::size_t index = 0; index < call.commands.size() && index < 4; ++index) {
    name += (index == 0 ? "" : " + ") + command_name(call.commands[index]);
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
  if (call.op == Op::AllocateBuffer && call.status == 0) buffer_bytes_[call.result_id] = call.size;
  if (call.op == Op::Submit && call.result_id != 0) {
    Slice slice{call.subject, call.result_id, now_ns_, now_ns_, false, false, batch_name(call), describe_record(Record{RecordKind::Call, call, {}}), "", {}};
    const std::uint32_t enqueued = call.status == static_cast<std::uint8_t>(SubmitStatus::Submitted)
                                       ? static_cast<std::uint32_t>(call.commands.size())
                                       : call.commands_enqueued;
    for (std::size_t index = 0; index < call.commands.size() && index < enqueued; ++index) {
      slice.parts.emplace_back(command_name(call.commands[index]), command_cost(call.commands[index]));
    }
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

// The commands of a batch, in order, as slices inside the batch's slice (see the file comment).
void Timeline::emit_commands(const Slice& slice) {
  if (slice.parts.empty()) return;
  std::vector<std::uint64_t> weights;
  std::uint64_t total = 0;
  for (const auto& [name, cost] : slice.parts) {
    weights.push_back(cost);
    total += cost;
  }
  while (total > (std::uint64_t{1} << 31U)) {
    total = 0;
    for (std::uint64_t& weight : weights) total += (weight >>= 1U);
  }
  if (total == 0) {  // nothing to go by: equal shares
    for (std::uint64_t& weight : weights) weight = 1;
    total = weights.size();
  }
  const std::uint64_t span = slice.end_ns >= slice.begin_ns ? slice.end_ns - slice.begin_ns : 0;
  std::uint64_t done = 0;
  for (std::size_t index = 0; index < slice.parts.size(); ++index) {
    const std::uint64_t begin = share(slice.begin_ns, span, done, total);
    done += weights[index];
    const std::uint64_t end = share(slice.begin_ns, span, done, total);
    emit("{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(slice.queue) + ",\"cat\":\"command\",\"name\":" +
         json_string(slice.parts[index].first) + ",\"ts\":" + micros(begin) + ",\"dur\":" + micros(end - begin) +
         ",\"args\":{\"event\":" + std::to_string(slice.event) + ",\"index\":" + std::to_string(index) +
         ",\"estimated_ns\":" + std::to_string(slice.parts[index].second) +
         ",\"timing\":\"bounds apportioned within the batch by the cost profile\"}}");
  }
}

void Timeline::finish() {
  for (Slice& slice : slices_) {
    if (!slice.ended) slice.end_ns = now_ns_;
    const std::uint64_t duration = slice.end_ns >= slice.begin_ns ? slice.end_ns - slice.begin_ns : 0;
    emit("{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(slice.queue) + ",\"cat\":\"batch\",\"name\":" + json_string(slice.name) +
         ",\"ts\":" + micros(slice.begin_ns) + ",\"dur\":" + micros(duration) + ",\"args\":{\"event\":" + std::to_string(slice.event) +
         ",\"outcome\":" + json_string(slice.observed ? slice.outcome : "never observed terminal") + ",\"call\":" + json_string(slice.commands) + "}}");
    emit_commands(slice);
  }
  for (const auto& [key, name] : live_) span("e", key.first, key.second, name);
}

}  // namespace

void write_timeline(const Trace& trace, std::ostream& out) {
  Timeline timeline(out, Costs(trace.header.cost_profile));
  timeline.run(trace);
}

}  // namespace quiesce::traces
