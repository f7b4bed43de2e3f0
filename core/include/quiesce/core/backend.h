// The Backend concept: the one contract that unifies the DeviceRuntime, Accelerator and ComputeServer
// seeds (docs/contract-map.md maps every seed method to a member named here).
//
// Statically dispatched: the engine and every decorator are templates over a Backend. All backends share
// the handle types of handles.h, so a decorator (Recorder<Validator<Injector<sim::Device>>>) passes handles
// through untouched. Destroying calls consume their handle.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>

#include "quiesce/core/command.h"
#include "quiesce/core/handles.h"
#include "quiesce/core/outcome.h"
#include "quiesce/core/permit.h"
#include "quiesce/core/result.h"
#include "quiesce/core/types.h"

namespace quiesce {

template <class B>
concept Backend = requires(B& backend, const B& const_backend, Context&& context_owned,
                           const Context& context, Buffer&& buffer_owned, Buffer& buffer_mutable,
                           const Buffer& buffer, Program&& program_owned, Queue&& queue_owned,
                           const Queue& queue, Event&& event_owned, const Event& event,
                           Executable&& executable_owned, const AllocationPermit& permit,
                           const ArtifactRef& artifact, Batch batch, SubmitOptions options,
                           ByteSource source, ByteSink sink, const PoolLayout& layout, const Error& error,
                           std::uint64_t offset, std::uint64_t timeout_ns) {
  // identity, capabilities, limits
  { backend.device_info() } -> std::same_as<Result<DeviceInfo>>;
  { const_backend.describe_error(error) } -> std::same_as<std::string>;

  // contexts; discard abandons a (lost) context and every child at once, a whole-device discard
  { backend.create_context(ContextDesc{}) } -> std::same_as<Result<Context>>;
  { backend.destroy_context(std::move(context_owned)) } -> std::same_as<ReleaseResult<Context>>;
  { backend.discard_context(std::move(context_owned)) } -> std::same_as<Status>;

  // buffers, only under a permit
  { backend.allocate_buffer(context, permit) } -> std::same_as<Result<Buffer>>;
  { backend.buffer_info(buffer) } -> std::same_as<Result<BufferInfo>>;
  { backend.write_buffer(buffer_mutable, offset, source) } -> std::same_as<Status>;
  { backend.read_buffer(buffer, offset, sink) } -> std::same_as<Status>;
  { backend.free_buffer(std::move(buffer_owned)) } -> std::same_as<ReleaseResult<Buffer>>;

  // programs
  { backend.load_program(context, artifact) } -> std::same_as<Result<Program>>;
  { backend.unload_program(std::move(program_owned)) } -> std::same_as<ReleaseResult<Program>>;

  // queues and submission
  { backend.create_queue(context, QueueDesc{}) } -> std::same_as<Result<Queue>>;
  { backend.destroy_queue(std::move(queue_owned)) } -> std::same_as<ReleaseResult<Queue>>;
  { backend.queue_state(queue) } -> std::same_as<QueueState>;
  { backend.submit(queue, batch, options) } -> std::same_as<SubmitResult>;
  { backend.synchronize(queue, timeout_ns) } -> std::same_as<Status>;

  // events
  { backend.poll_event(event) } -> std::same_as<Observation>;
  { backend.wait_event(event, timeout_ns) } -> std::same_as<WaitResult>;
  { backend.cancel_event(event) } -> std::same_as<Status>;
  { backend.destroy_event(std::move(event_owned)) } -> std::same_as<ReleaseResult<Event>>;

  // reusable executables (captured graphs)
  { backend.begin_capture(queue) } -> std::same_as<Status>;
  { backend.capture(queue, batch) } -> std::same_as<Status>;
  { backend.end_capture(queue) } -> std::same_as<Result<Executable>>;
  { backend.destroy_executable(std::move(executable_owned)) } -> std::same_as<ReleaseResult<Executable>>;

  // memory
  { backend.memory_usage(context) } -> std::same_as<Result<MemoryUsage>>;
  { backend.memory_report(context) } -> std::same_as<Result<MemoryReport>>;
  { backend.install_pools(context, layout) } -> std::same_as<Status>;
  { backend.memory_cleanup(context) } -> std::same_as<Status>;
};

}  // namespace quiesce
