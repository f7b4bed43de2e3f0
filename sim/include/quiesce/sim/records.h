// The simulated device's per-handle state: what each dense table of sim::Device holds.
//
// Commands are staged at submit into a StagedCommand that names every resource by slot and id (so a later
// release is detectable) and carries what the command needs to run without looking anything up again:
// device addresses, byte counts and its vector clock. A batch lives in its queue's ring until the queue
// has run or skipped it; the event outlives it and keeps the terminal state and timing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "quiesce/core/command.h"
#include "quiesce/core/outcome.h"
#include "quiesce/core/types.h"
#include "quiesce/sim/kernels.h"
#include "quiesce/sim/oracle.h"
#include "quiesce/sim/pools.h"

namespace quiesce::sim {

struct ContextRecord {
  std::uint32_t epoch = 0;
  bool lost = false;
  std::uint64_t lost_ns = 0;
  PoolSet pools;
  std::uint32_t buffers = 0;  // live children, by kind
  std::uint32_t programs = 0;
  std::uint32_t queues = 0;
  std::uint32_t events = 0;
  std::uint32_t executables = 0;

  std::uint32_t children() const { return buffers + programs + queues + events + executables; }
};

enum class BufferPhase : std::uint8_t {
  Live,         // the handle is live
  FreePending,  // a stream-ordered free waits for its queue to reach it: the memory is not yet reusable
};

struct BufferRecord {
  std::uint64_t context_id = 0;
  BufferPhase phase = BufferPhase::Live;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::uint64_t backing_bytes = 0;
  std::uint32_t pool = 0;
  BufferUsage usage = BufferUsage::None;
  AllocationMode mode = AllocationMode::Direct;
  std::uint64_t queue_id = 0;       // the ordering queue of a stream-ordered buffer
  std::uint32_t in_flight = 0;      // references by staged, unfinished commands
  std::uint32_t pins = 0;           // references by executables and open captures
};

struct ProgramRecord {
  std::uint64_t context_id = 0;
  BuiltinKernel kernel = BuiltinKernel::Fill;
  std::uint64_t address = 0;  // its resident storage
  std::uint32_t in_flight = 0;
  std::uint32_t pins = 0;
};

// A buffer as a staged command sees it: where it is and how big, fixed at submit.
struct ResolvedBuffer {
  std::uint64_t id = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;  // the buffer's requested size
};

struct ResolvedBinding {
  ResolvedBuffer buffer;
  Access access = Access::Read;
};

struct StagedCommand {
  // Device::stage_command builds a command where it is kept and sets its clock whenever it has one (a
  // captured command's is zeroed), so it constructs it with this tag and the clock is not zeroed first.
  struct UnsetClock {};

  StagedCommand() = default;
  explicit StagedCommand(UnsetClock /*unset*/) : clock(VectorClock::Unset{}) {}

  CommandKind kind = CommandKind::Launch;
  LaunchMode mode = LaunchMode::Normal;
  BuiltinKernel kernel = BuiltinKernel::Fill;
  std::uint64_t program_id = 0;
  ResolvedBuffer source;
  ResolvedBuffer target;
  std::uint64_t source_offset = 0;
  std::uint64_t target_offset = 0;
  std::uint64_t bytes = 0;
  std::uint32_t bindings_begin = 0;  // into the owner's binding storage
  std::uint32_t bindings_count = 0;
  std::uint64_t data_begin = 0;      // into the owner's byte storage
  std::uint64_t data_size = 0;
  std::uint64_t wait_event_id = 0;
  std::uint64_t executable_id = 0;
  std::uint64_t replay_ticket = 0;
  std::uint32_t tick = 0;            // this command's tick of its queue's agent
  VectorClock clock;                 // what happens before it
};

// Where a staged command's bindings and bytes live: a batch, an open capture or an executable.
struct CommandStore {
  std::vector<StagedCommand> commands;
  std::vector<ResolvedBinding> bindings;
  std::vector<std::byte> data;

  void clear() {
    commands.clear();
    bindings.clear();
    data.clear();
  }
};

struct BatchRecord {
  std::uint64_t event_id = 0;
  std::uint64_t invocation = 0;
  CommandStore store;
  std::uint32_t next = 0;           // the next command to run
  std::uint32_t replay_cursor = 0;  // the next captured command of a Replay being run
  bool started = false;
  bool cancelled = false;
};

enum class QueueRun : std::uint8_t {
  Idle,
  Running,          // a command occupies an engine until its timer fires
  WaitingEngine,    // the head command is ready but every engine of its class is busy
  BlockedOnEvent,   // a Wait command's event is not terminal
  BlockedOnReplay,  // an earlier replay of the same executable has not finished
  Stopped,          // the context is lost: nothing here runs again
};

struct QueueRecord {
  std::uint64_t context_id = 0;
  std::uint32_t agent = 0;
  std::vector<BatchRecord> ring;  // queue_depth_max batches
  std::uint32_t head = 0;
  std::uint32_t count = 0;
  std::uint64_t batches_submitted = 0;
  std::uint64_t batches_retired = 0;
  QueueRun run = QueueRun::Idle;
  std::uint64_t run_token = 0;       // never reset, so a stale timer never matches a later run
  std::uint8_t engine_class = 0;     // 0 execution, 1 copy
  bool granted = false;              // an engine was handed to it while WaitingEngine
  std::uint64_t ready_order = 0;     // FIFO order among queues waiting for an engine
  std::uint64_t blocked_on_id = 0;   // the event or executable it is blocked on
  bool pump_pending = false;
  VectorClock clock;                 // the clock of the last staged command
  bool capturing = false;
  bool capture_invalidated = false;
  CommandStore capture;
};

struct EventRecord {
  std::uint64_t context_id = 0;
  std::uint64_t queue_id = 0;
  quiesce::EventState state = quiesce::EventState::Pending;
  Error error = {};
  bool timing = false;
  bool started = false;
  TimingReceipt receipt = {};
  VectorClock end_clock;
};

struct ExecutableRecord {
  std::uint64_t context_id = 0;
  CommandStore store;
  std::uint64_t tickets_issued = 0;
  std::uint64_t tickets_served = 0;
  std::vector<std::uint64_t> cancelled_tickets;
  std::uint32_t replays_in_flight = 0;
  VectorClock last_replay_clock;
};

struct DeferredFree {
  std::uint64_t buffer_id = 0;
  std::uint64_t queue_id = 0;
  std::uint64_t retire_threshold = 0;  // the queue reaches the free when batches_retired reaches this
};

}  // namespace quiesce::sim
