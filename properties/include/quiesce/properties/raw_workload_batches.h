// The raw workload, part 2: planning batches (launches, transfers, waits), encoding them as contract
// commands, and submitting them with exact retries of rejected submits.
// Member definitions of raw_detail::RawWorkload (raw_workload_impl.h), which includes this header at its end.
#pragma once

#include "quiesce/properties/raw_workload_impl.h"

namespace quiesce::properties::raw_detail {

template <Backend B>
bool RawWorkload<B>::plan_launch(Plan& plan, std::uint32_t queue_index, bool allow_fault) {
  (void)queue_index;
  const auto readable = [](const BufferSlot& slot) {
    return slot.initialized && access_allowed(Access::Read, slot.usage);
  };
  const auto writable = [this](const BufferSlot& slot) {
    return mutated(Mutation::AccessModeForbidden) || access_allowed(Access::Write, slot.usage);
  };
  const auto read_writable = [](const BufferSlot& slot) {
    return slot.initialized && access_allowed(Access::ReadWrite, slot.usage);
  };
  Planned planned;
  planned.kind = CommandKind::Launch;
  const std::uint64_t pick = prng_.below(5);
  if (allow_fault && prng_.chance(options_.device_fault)) {
    planned.kernel = BuiltinKernel::Fault;
    const std::uint32_t target = pick_buffer(writable, plan.buffers);
    if (target == kNone) return false;
    planned.slots = {target};
  } else if (pick == 0) {
    planned.kernel = BuiltinKernel::Fill;
    const std::uint32_t target = pick_buffer(writable, plan.buffers);
    if (target == kNone) return false;
    planned.slots = {target};
    planned.data = u32_bytes(static_cast<std::uint32_t>(prng_.next()));
  } else if (pick == 1 || pick == 2) {
    planned.kernel = pick == 1 ? BuiltinKernel::Copy : BuiltinKernel::Saxpy;
    const std::uint32_t source = pick_buffer(readable, plan.buffers);
    if (source == kNone) return false;
    std::vector<std::uint32_t> exclude = plan.buffers;
    exclude.push_back(source);
    const std::uint32_t target = pick == 1 ? pick_buffer(writable, exclude) : pick_buffer(read_writable, exclude);
    if (target == kNone) return false;
    planned.slots = {source, target};
    if (pick == 2) planned.data = u32_bytes(static_cast<std::uint32_t>(prng_.below(7) + 1));
  } else if (pick == 3) {
    planned.kernel = BuiltinKernel::Checksum;
    const std::uint32_t source = pick_buffer(readable, plan.buffers);
    if (source == kNone) return false;
    std::vector<std::uint32_t> exclude = plan.buffers;
    exclude.push_back(source);
    const std::uint32_t target = pick_buffer(writable, exclude);
    if (target == kNone) return false;
    planned.slots = {source, target};
  } else {
    planned.kernel = BuiltinKernel::Delay;
    planned.data = u64_bytes(1000 * (1 + prng_.below(200)));
  }
  for (std::uint32_t slot : planned.slots) plan.buffers.push_back(slot);
  plan.commands.push_back(std::move(planned));
  return true;
}

template <Backend B>
bool RawWorkload<B>::plan_transfer(Plan& plan) {
  const auto target_ok = [](const BufferSlot& slot) { return has_usage(slot.usage, BufferUsage::TransferTarget); };
  const std::uint32_t target = pick_buffer(target_ok, plan.buffers);
  if (target == kNone) return false;
  Planned planned;
  const BufferSlot& slot = buffers_[target];
  planned.target_offset = slot.initialized ? 4 * prng_.below(slot.bytes / 4) : 0;
  planned.bytes = slot.bytes - planned.target_offset;
  const std::uint64_t pick = prng_.below(3);
  if (pick == 0) {
    planned.kind = CommandKind::Zero;
    planned.slots = {target};
  } else if (pick == 1) {
    planned.kind = CommandKind::Upload;
    planned.bytes = std::min<std::uint64_t>(planned.bytes, 256);
    if (!slot.initialized && planned.bytes != slot.bytes) return false;
    planned.data = random_bytes(planned.bytes);
    planned.slots = {target};
  } else {
    planned.kind = CommandKind::Copy;
    const auto source_ok = [](const BufferSlot& candidate) {
      return candidate.initialized && has_usage(candidate.usage, BufferUsage::TransferSource);
    };
    std::vector<std::uint32_t> exclude = plan.buffers;
    exclude.push_back(target);
    const std::uint32_t source = pick_buffer(source_ok, exclude);
    if (source == kNone) return false;
    planned.bytes = std::min(planned.bytes, buffers_[source].bytes);
    if (!slot.initialized && planned.bytes != slot.bytes) return false;
    planned.slots = {source, target};
  }
  for (std::uint32_t s : planned.slots) plan.buffers.push_back(s);
  plan.commands.push_back(std::move(planned));
  return true;
}

template <Backend B>
std::vector<std::byte> RawWorkload<B>::u32_bytes(std::uint32_t value) {
  std::vector<std::byte> bytes(4);
  for (unsigned i = 0; i < 4; ++i) bytes[i] = static_cast<std::byte>((value >> (8U * i)) & 0xFFU);
  return bytes;
}

template <Backend B>
std::vector<std::byte> RawWorkload<B>::u64_bytes(std::uint64_t value) {
  std::vector<std::byte> bytes(8);
  for (unsigned i = 0; i < 8; ++i) bytes[i] = static_cast<std::byte>((value >> (8U * i)) & 0xFFU);
  return bytes;
}

template <Backend B>
typename RawWorkload<B>::Plan RawWorkload<B>::plan_batch(std::uint32_t queue_index, bool for_capture) {
  Plan plan;
  const std::uint64_t count = 1 + prng_.below(4);
  for (std::uint64_t i = 0; i < count; ++i) {
    const bool launch = prng_.below(3) != 0;
    if (launch) (void)plan_launch(plan, queue_index, !for_capture);
    else if (!for_capture) (void)plan_transfer(plan);
  }
  if (!for_capture && !plan.commands.empty() && prng_.below(6) == 0) {
    const std::uint32_t waited = pick_waitable_event();
    if (waited != kNone) {
      Planned wait;
      wait.kind = CommandKind::Wait;
      plan.waited.push_back(waited);
      plan.commands.insert(plan.commands.begin(), std::move(wait));
    }
  }
  return plan;
}

template <Backend B>
std::uint32_t RawWorkload<B>::pick_waitable_event() {
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t i = 0; i < events_.size(); ++i) {
    if (!events_[i].dead && !events_[i].terminal_seen) candidates.push_back(i);
  }
  return candidates.empty() ? kNone : candidates[prng_.below(candidates.size())];
}

template <Backend B>
std::vector<Command> RawWorkload<B>::encode(const Plan& plan, std::vector<std::vector<Binding>>& bindings) {
  std::vector<Command> commands;
  bindings.assign(plan.commands.size(), {});
  std::size_t waited_index = 0;
  for (std::size_t i = 0; i < plan.commands.size(); ++i) {
    const Planned& planned = plan.commands[i];
    switch (planned.kind) {
      case CommandKind::Launch: {
        for (std::size_t b = 0; b < planned.slots.size(); ++b) {
          Access access = binding_access(planned.kernel, b);
          if (mutated(Mutation::WriteThroughReadBinding) && access == Access::Write) access = Access::Read;
          bindings[i].push_back(Binding{buffers_[planned.slots[b]].handle.ref(), access});
        }
        LaunchDims dims;
        dims.grid_x = 1 + static_cast<std::uint32_t>(prng_.below(64));
        dims.block_x = 128;
        commands.push_back(Command::launch(programs_[static_cast<std::size_t>(planned.kernel)].ref(), dims,
                                           bindings[i], planned.data));
        break;
      }
      case CommandKind::Copy:
        commands.push_back(Command::copy(buffers_[planned.slots[0]].handle.ref(), planned.source_offset,
                                         buffers_[planned.slots[1]].handle.ref(), planned.target_offset,
                                         planned.bytes));
        break;
      case CommandKind::Upload:
        commands.push_back(Command::upload(planned.data, buffers_[planned.slots[0]].handle.ref(), planned.target_offset));
        break;
      case CommandKind::Zero:
        commands.push_back(Command::zero(buffers_[planned.slots[0]].handle.ref(), planned.target_offset, planned.bytes));
        break;
      case CommandKind::Wait:
        commands.push_back(Command::wait(events_[plan.waited[waited_index++]].handle.ref()));
        break;
      case CommandKind::Replay:
        break;
    }
  }
  return commands;
}

template <Backend B>
Access RawWorkload<B>::binding_access(BuiltinKernel kernel, std::size_t binding) {
  switch (kernel) {
    case BuiltinKernel::Fill: return Access::Write;
    case BuiltinKernel::Copy:
    case BuiltinKernel::Checksum: return binding == 0 ? Access::Read : Access::Write;
    case BuiltinKernel::Saxpy: return binding == 0 ? Access::Read : Access::ReadWrite;
    case BuiltinKernel::Delay: return Access::Read;
    case BuiltinKernel::Fault: return Access::Write;
  }
  return Access::Read;
}

template <Backend B>
bool RawWorkload<B>::programs_loaded(const Plan& plan) const {
  for (const Planned& planned : plan.commands) {
    if (planned.kind == CommandKind::Launch && !programs_[static_cast<std::size_t>(planned.kernel)].valid()) {
      return false;
    }
  }
  return true;
}

template <Backend B>
void RawWorkload<B>::submit_batch() {
  if (queues_.empty()) return;
  auto queue_index = static_cast<std::uint32_t>(prng_.below(queues_.size()));
  if (queue_offset_ != 0) queue_index = (queue_index + queue_offset_) % static_cast<std::uint32_t>(queues_.size());
  Plan plan = plan_batch(queue_index, false);
  if (plan.commands.empty() || !programs_loaded(plan)) return;
  std::vector<std::vector<Binding>> bindings;
  const std::vector<Command> commands = encode(plan, bindings);
  SubmitOptions options;
  options.invocation = ++invocations_;
  options.timing = prng_.below(4) == 0;
  options.admission_timeout_ns = options_.wait_timeout_ns;
  submit(queues_[queue_index], commands, options, std::move(plan), kNone);
}

template <Backend B>
void RawWorkload<B>::submit(const Queue& queue, const std::vector<Command>& commands, const SubmitOptions& options,
                            Plan plan, std::uint32_t executable) {
  for (std::uint32_t attempt = 0; attempt < 3; ++attempt) {
    stats_.submits++;
    SubmitResult result = backend_.submit(queue, commands, options);
    note(9, static_cast<std::uint8_t>(result.status));
    if (result.status == SubmitStatus::Rejected) {
      stats_.submits_rejected++;
      if (lost(result.error)) return;
      if (mutated(Mutation::RejectedSubmitApplied)) {  // the bug: rejected work is taken as run
        for (const Planned& planned : executable == kNone ? plan.commands : executables_[executable].effects) {
          apply(planned);
        }
        return;
      }
      stats_.retries++;
      continue;
    }
    if (result.status == SubmitStatus::Indeterminate) stats_.submits_indeterminate++;
    if (mutated(Mutation::PartialSubmitAsRejected) && result.status == SubmitStatus::Indeterminate &&
        result.commands_enqueued < commands.size()) {
      result.event = Event{};  // the bug: a partial submit taken as rejected: its event dropped, batch retried
      stats_.retries++;
      continue;
    }
    const bool resubmit = mutated(Mutation::RetryIndeterminateSubmit) && result.status == SubmitStatus::Indeterminate;
    Plan again = resubmit ? plan : Plan{};
    EventSlot slot;
    slot.handle = std::move(result.event);
    slot.indeterminate = result.status == SubmitStatus::Indeterminate;
    slot.buffers = std::move(plan.buffers);
    slot.waited = std::move(plan.waited);
    slot.effects = std::move(plan.commands);
    slot.executable = executable;
    for (std::uint32_t b : slot.buffers) buffers_[b].pins++;
    for (std::uint32_t e : slot.waited) events_[e].pins++;
    if (executable != kNone) executables_[executable].live_replays++;
    if (slot.indeterminate) lost(result.error);
    if (mutated(Mutation::IndeterminateSubmitUnpinned) && slot.indeterminate) {
      for (std::uint32_t b : slot.buffers) buffers_[b].pins--;  // the bug: it may not have run, so pin nothing
      slot.buffers.clear();
    }
    events_.push_back(std::move(slot));
    if (resubmit) {  // the bug: indeterminate work submitted again with the same invocation
      plan = std::move(again);
      continue;
    }
    return;
  }
}

}  // namespace quiesce::properties::raw_detail
