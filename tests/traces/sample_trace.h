// A hand-built trace that uses every op, every command kind and every note kind, so that encoding tests
// cover every field of the format (a recorded run covers what a workload happens to do).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "quiesce/traces/codec.h"
#include "quiesce/traces/record.h"

namespace quiesce::traces::testing {

inline Record call_record(Op op, std::uint64_t subject, std::uint64_t result_id = 0) {
  Record record;
  record.kind = RecordKind::Call;
  record.call.op = op;
  record.call.subject = subject;
  record.call.result_id = result_id;
  record.call.result_epoch = result_id != 0 ? 1 : 0;
  return record;
}

inline Record note_record(RecordKind kind, std::uint64_t call_index, std::string name, std::uint64_t value) {
  Record record;
  record.kind = kind;
  record.note.call_index = call_index;
  record.note.name = std::move(name);
  record.note.value = value;
  return record;
}

inline CommandRecord launch_command() {
  CommandRecord launch;
  launch.kind = CommandKind::Launch;
  launch.program = 1;
  launch.dims = LaunchDims{2, 1, 1, 64, 1, 1};
  launch.bindings = {BindingRecord{1, Access::Read}, BindingRecord{2, Access::ReadWrite}};
  launch.data = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  return launch;
}

inline std::vector<CommandRecord> every_command() {
  std::vector<CommandRecord> commands{launch_command()};
  CommandRecord copy;
  copy.kind = CommandKind::Copy;
  copy.source = 1;
  copy.target = 2;
  copy.source_offset = 8;
  copy.target_offset = 16;
  copy.bytes = 64;
  commands.push_back(copy);
  CommandRecord upload;
  upload.kind = CommandKind::Upload;
  upload.target = 2;
  upload.data = {std::byte{0xAB}, std::byte{0xCD}};
  upload.bytes = 2;
  commands.push_back(upload);
  CommandRecord zero;
  zero.kind = CommandKind::Zero;
  zero.target = 1;
  zero.bytes = 128;
  commands.push_back(zero);
  CommandRecord wait;
  wait.kind = CommandKind::Wait;
  wait.event = 1;
  commands.push_back(wait);
  return commands;
}

inline Trace sample_trace() {
  Trace trace;
  trace.header = make_header(42);
  trace.header.device = "memory_bytes = 1048576\n";
  trace.header.fault_plan = "plan text\n";
  trace.header.workload = "kind = raw\n";
  std::vector<Record>& records = trace.records;
  Record info = call_record(Op::DeviceInfo, 0);
  info.call.output_text = "quiesce simulated device";
  info.call.outputs = {1, 9, 0, 31, 1U << 30U};
  records.push_back(info);
  records.push_back(note_record(RecordKind::Clock, 1, "", 1000));
  Record context = call_record(Op::CreateContext, 0, 1);
  records.push_back(context);
  Record queue = call_record(Op::CreateQueue, 1, 1);
  queue.call.priority = -3;
  records.push_back(queue);
  for (std::uint64_t buffer = 1; buffer <= 2; ++buffer) {
    Record allocate = call_record(Op::AllocateBuffer, 1, buffer);
    allocate.call.size = 4096;
    allocate.call.flags = 31;
    allocate.call.queue = buffer == 2 ? 1 : 0;
    allocate.call.mode = buffer == 2 ? 1 : 0;
    records.push_back(allocate);
  }
  Record write = call_record(Op::WriteBuffer, 1);
  write.call.offset = 12;
  write.call.data = {std::byte{7}, std::byte{8}, std::byte{9}};
  records.push_back(write);
  Record program = call_record(Op::LoadProgram, 1, 1);
  program.call.name = "saxpy";
  program.call.payload_hash = 0x0123456789ABCDEFULL;
  program.call.resident_bytes = 1024;
  records.push_back(program);
  Record submit = call_record(Op::Submit, 1, 1);
  submit.call.commands = every_command();
  submit.call.commands.pop_back();  // the wait names event 1, which this submit creates
  submit.call.invocation = 77;
  submit.call.timing_requested = true;
  submit.call.status = 2;
  submit.call.has_error = true;
  submit.call.error = ErrorValue{ErrorKind::Busy, NativeDomain::Simulator, -5, true, true, "an injected lie"};
  submit.call.commands_enqueued = 2;
  records.push_back(submit);
  records.push_back(note_record(RecordKind::Fault, 7, "PartialSubmit", 2));
  records.back().note.detail = "submit";
  records.back().note.count = 9;
  records.back().note.ordinal = 1;
  Record poll = call_record(Op::PollEvent, 1);
  poll.call.status = static_cast<std::uint8_t>(EventState::Complete);
  poll.call.timing = TimingReceipt{100, 200, 350};
  records.push_back(poll);
  Record wait = call_record(Op::WaitEvent, 1);
  wait.call.timeout_ns = 5000;
  wait.call.state = EventState::Complete;
  records.push_back(wait);
  Record read = call_record(Op::ReadBuffer, 2);
  read.call.size = 64;
  read.call.data_hash = 0xFEDCBA9876543210ULL;
  records.push_back(read);
  records.push_back(note_record(RecordKind::Schedule, 11, "pct", 2));
  records.back().note.count = 3;
  records.push_back(call_record(Op::BeginCapture, 1));
  Record capture = call_record(Op::Capture, 1);
  capture.call.commands = every_command();
  records.push_back(capture);
  records.push_back(call_record(Op::EndCapture, 1, 1));
  Record replay = call_record(Op::Submit, 1, 2);
  CommandRecord replay_command;
  replay_command.kind = CommandKind::Replay;
  replay_command.executable = 1;
  replay.call.commands = {replay_command};
  replay.call.commands_enqueued = 1;
  records.push_back(replay);
  Record pools = call_record(Op::InstallPools, 1);
  pools.call.layout = {256, 4096, 65536};
  records.push_back(pools);
  Record free = call_record(Op::FreeBuffer, 1, 1);
  free.call.status = 1;  // rejected: the same handle back
  free.call.has_error = true;
  free.call.error.kind = ErrorKind::Busy;
  records.push_back(free);
  records.push_back(note_record(RecordKind::Finding, 16, "use-after-free", 0));
  records.back().note.detail = "a device command touched buffer 1 after it was released";
  records.push_back(note_record(RecordKind::Violation, 16, "caller.release-while-pinned", 0));
  records.back().note.detail = "free_buffer of buffer 1 while event 2 is live";
  for (const Op op : {Op::BufferInfo, Op::MemoryUsageOf, Op::MemoryReportOf, Op::QueueStateOf, Op::Synchronize,
                      Op::CancelEvent, Op::MemoryCleanup}) {
    const std::uint64_t subject = op == Op::BufferInfo ? 2 : 1;
    Record query = call_record(op, subject);
    if (op != Op::Synchronize && op != Op::CancelEvent && op != Op::MemoryCleanup) query.call.outputs = {1, 2, 3};
    records.push_back(query);
  }
  for (const Op op : {Op::DestroyEvent, Op::DestroyExecutable, Op::UnloadProgram, Op::DestroyQueue, Op::DestroyContext}) {
    records.push_back(call_record(op, 1));
  }
  records.push_back(call_record(Op::DiscardContext, 1));
  trace.footer = compute_footer(trace.header, trace.records);
  return trace;
}

}  // namespace quiesce::traces::testing
