// Commands and batches: what a submission carries.
//
// A submission is an ordered, non-empty batch of commands on one queue. Commands name resources by Ref
// (never by owning handle): the caller keeps every referenced handle alive until the batch's event is
// terminal and destroyed (R1). Byte spans (launch parameters, upload data, bindings) are borrowed for the
// duration of the submit call only; a backend copies what it needs to keep.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "quiesce/core/handles.h"
#include "quiesce/core/types.h"

namespace quiesce {

enum class CommandKind : std::uint8_t {
  Launch,  // run a program's kernel over bindings
  Copy,    // buffer to buffer
  Upload,  // host bytes to buffer, captured at submit
  Zero,    // fill a range with zero bytes
  Replay,  // run a captured executable
  Wait,    // wait for an event of another queue: an explicit cross-queue dependency
};

enum class LaunchMode : std::uint8_t {
  Normal,
  DryRun,  // validate, resolve and prepare everything, then drop the launch: no bytes change (R18)
};

struct Binding {
  BufferRef buffer = {};
  Access access = Access::Read;
};

struct Command {
  CommandKind kind = CommandKind::Launch;
  LaunchMode mode = LaunchMode::Normal;
  ProgramRef program = {};
  ExecutableRef executable = {};
  EventRef event = {};
  BufferRef source = {};
  BufferRef target = {};
  std::uint64_t source_offset = 0;
  std::uint64_t target_offset = 0;
  std::uint64_t bytes = 0;
  LaunchDims dims = {};
  std::span<const Binding> bindings = {};
  std::span<const std::byte> data = {};  // launch parameters or upload bytes

  static Command launch(ProgramRef program, LaunchDims dims, std::span<const Binding> bindings,
                        std::span<const std::byte> parameters, LaunchMode mode = LaunchMode::Normal) {
    Command command;
    command.kind = CommandKind::Launch;
    command.mode = mode;
    command.program = program;
    command.dims = dims;
    command.bindings = bindings;
    command.data = parameters;
    return command;
  }
  static Command copy(BufferRef source, std::uint64_t source_offset, BufferRef target,
                      std::uint64_t target_offset, std::uint64_t bytes) {
    Command command;
    command.kind = CommandKind::Copy;
    command.source = source;
    command.source_offset = source_offset;
    command.target = target;
    command.target_offset = target_offset;
    command.bytes = bytes;
    return command;
  }
  static Command upload(std::span<const std::byte> data, BufferRef target, std::uint64_t target_offset) {
    Command command;
    command.kind = CommandKind::Upload;
    command.data = data;
    command.target = target;
    command.target_offset = target_offset;
    command.bytes = data.size();
    return command;
  }
  static Command zero(BufferRef target, std::uint64_t target_offset, std::uint64_t bytes) {
    Command command;
    command.kind = CommandKind::Zero;
    command.target = target;
    command.target_offset = target_offset;
    command.bytes = bytes;
    return command;
  }
  static Command replay(ExecutableRef executable) {
    Command command;
    command.kind = CommandKind::Replay;
    command.executable = executable;
    return command;
  }
  static Command wait(EventRef event) {
    Command command;
    command.kind = CommandKind::Wait;
    command.event = event;
    return command;
  }
};

using Batch = std::span<const Command>;

struct SubmitOptions {
  std::uint64_t admission_timeout_ns = 0;  // how long a full queue may delay admission
  bool timing = false;                     // record a timing receipt (needs Capability::Profiling)
  // The caller's identity of this logical piece of work (0: none). Retrying a Rejected submission reuses
  // it; the simulator's oracle reports an invocation that executes twice (R4).
  std::uint64_t invocation = 0;
};

std::string_view to_string(CommandKind kind);

}  // namespace quiesce
