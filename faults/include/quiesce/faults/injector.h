// faults::Injector<B>: a Backend that wraps any Backend and tells lies the contract allows.
//
// Every lie is a *legal* outcome of the contract (the conformance suite passes through it under every
// built-in plan): a rejected submit never reached the inner backend, an indeterminate one carries a real
// event, a terminal once reported never changes, a handle the injector did not really release is released
// later so nothing leaks in the inner backend. The catalog lives in one module per family, each stating
// what can fail and what must still hold: submit_faults.h, event_faults.h, release_faults.h,
// resource_faults.h, transfer_faults.h, cancel_faults.h, device_loss.h. Plans are in plan.h.
//
// Every injected fault carries Error::injected = true, is counted and logged (injected()) with the call
// index, site, kind and every parameter chosen, so a trace can record it and Plan::replay tells it again.
// The injector holds a reference to its inner backend, which must outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/faults/cancel_faults.h"
#include "quiesce/faults/device_loss.h"
#include "quiesce/faults/event_faults.h"
#include "quiesce/faults/fault.h"
#include "quiesce/faults/plan.h"
#include "quiesce/faults/release_faults.h"
#include "quiesce/faults/resource_faults.h"
#include "quiesce/faults/state.h"
#include "quiesce/faults/submit_faults.h"
#include "quiesce/faults/transfer_faults.h"

namespace quiesce::faults {

template <Backend B>
class Injector {
 public:
  // The Prng is seeded from plan.seed ("faults.injector" sub-seed); a plan with swarm_from_seed switches
  // its families off from that seed first.
  Injector(B& inner, Plan plan) : inner_(&inner), state_(std::move(plan)) {}
  Injector(B& inner, Plan plan, std::uint64_t seed) : Injector(inner, with_seed(std::move(plan), seed)) {}
  Injector(const Injector&) = delete;
  Injector& operator=(const Injector&) = delete;
  ~Injector() { detail::drain_limbo(*inner_, state_); }

  // ---- the fault log and counters ----
  const std::vector<InjectedFault>& injected() const { return state_.decider.injected(); }
  std::uint64_t injected_count(FaultKind kind) const { return state_.decider.injected_count(kind); }
  std::uint64_t calls() const { return state_.decider.calls(); }
  std::uint64_t sites_seen() const { return state_.decider.sites_seen(); }
  std::uint64_t replay_unapplied() const { return state_.decider.replay_unapplied(); }
  std::size_t limbo_size() const { return state_.tracker.limbo_size(); }
  const Plan& plan() const { return state_.decider.plan(); }
  // Safety phase, then liveness phase: false stops every new injection so the runtime must drain.
  void set_injecting(bool injecting) { state_.decider.set_injecting(injecting); }
  bool injecting() const { return state_.decider.injecting(); }
  B& inner() { return *inner_; }

  // ---- the Backend concept ----
  Result<DeviceInfo> device_info() {
    begin(Site::DeviceInfo);
    return inner_->device_info();
  }
  std::string describe_error(const Error& error) const {
    return error.injected ? quiesce::describe_error(error) : inner_->describe_error(error);
  }

  Result<Context> create_context(ContextDesc desc) {
    begin(Site::CreateContext);
    return inner_->create_context(desc);
  }
  ReleaseResult<Context> destroy_context(Context&& context) {
    begin(Site::DestroyContext);
    return detail::release_with_faults(*inner_, state_, std::move(context),
                                       [this](Context&& c) { return inner_->destroy_context(std::move(c)); });
  }
  Status discard_context(Context&& context) {
    begin(Site::DiscardContext);
    return detail::discard_with_faults(*inner_, state_, std::move(context));
  }

  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit& permit) {
    begin(Site::AllocateBuffer);
    return detail::allocate_with_faults(*inner_, state_, context, permit);
  }
  Result<BufferInfo> buffer_info(const Buffer& buffer) {
    begin(Site::BufferInfo);
    if (lost_owner(HandleKind::Buffer, buffer.id())) return Decider::lost_error();
    return inner_->buffer_info(buffer);
  }
  Status write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source) {
    begin(Site::WriteBuffer);
    return detail::write_with_faults(*inner_, state_, buffer, offset, source);
  }
  Status read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink) {
    begin(Site::ReadBuffer);
    return detail::read_with_faults(*inner_, state_, buffer, offset, sink);
  }
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer) {
    begin(Site::FreeBuffer);
    return detail::release_with_faults(*inner_, state_, std::move(buffer),
                                       [this](Buffer&& b) { return inner_->free_buffer(std::move(b)); });
  }

  Result<Program> load_program(const Context& context, const ArtifactRef& artifact) {
    begin(Site::LoadProgram);
    return detail::load_with_faults(*inner_, state_, context, artifact);
  }
  ReleaseResult<Program> unload_program(Program&& program) {
    begin(Site::UnloadProgram);
    return detail::release_with_faults(*inner_, state_, std::move(program),
                                       [this](Program&& p) { return inner_->unload_program(std::move(p)); });
  }

  Result<Queue> create_queue(const Context& context, QueueDesc desc) {
    begin(Site::CreateQueue);
    return detail::create_queue_tracked(*inner_, state_, context, desc);
  }
  ReleaseResult<Queue> destroy_queue(Queue&& queue) {
    begin(Site::DestroyQueue);
    return detail::release_with_faults(*inner_, state_, std::move(queue),
                                       [this](Queue&& q) { return inner_->destroy_queue(std::move(q)); });
  }
  QueueState queue_state(const Queue& queue) {
    begin(Site::QueueState);
    QueueState state = inner_->queue_state(queue);
    if (lost_owner(HandleKind::Queue, queue.id())) state.lost = true;
    return state;
  }
  SubmitResult submit(const Queue& queue, Batch batch, SubmitOptions options) {
    begin(Site::Submit);
    return detail::submit_with_faults(*inner_, state_, queue, batch, options);
  }
  Status synchronize(const Queue& queue, std::uint64_t timeout_ns) {
    begin(Site::Synchronize);
    return detail::synchronize_with_faults(*inner_, state_, queue, timeout_ns);
  }

  Observation poll_event(const Event& event) {
    begin(Site::PollEvent);
    return detail::poll_with_faults(*inner_, state_, event);
  }
  WaitResult wait_event(const Event& event, std::uint64_t timeout_ns) {
    begin(Site::WaitEvent);
    return detail::wait_with_faults(*inner_, state_, event, timeout_ns);
  }
  Status cancel_event(const Event& event) {
    begin(Site::CancelEvent);
    return detail::cancel_with_faults(*inner_, state_, event);
  }
  ReleaseResult<Event> destroy_event(Event&& event) {
    begin(Site::DestroyEvent);
    return detail::release_with_faults(*inner_, state_, std::move(event),
                                       [this](Event&& e) { return inner_->destroy_event(std::move(e)); });
  }

  Status begin_capture(const Queue& queue) {
    begin(Site::BeginCapture);
    if (lost_owner(HandleKind::Queue, queue.id())) return Decider::lost_error();
    return inner_->begin_capture(queue);
  }
  Status capture(const Queue& queue, Batch batch) {
    begin(Site::Capture);
    if (lost_owner(HandleKind::Queue, queue.id())) return Decider::lost_error();
    return inner_->capture(queue, batch);
  }
  Result<Executable> end_capture(const Queue& queue) {
    begin(Site::EndCapture);
    const std::uint64_t context_id = state_.tracker.context_of(HandleKind::Queue, queue.id());
    if (detail::lost(state_, context_id)) return Decider::lost_error();
    Result<Executable> executable = inner_->end_capture(queue);
    if (executable.ok()) state_.tracker.adopt(HandleKind::Executable, executable->id(), context_id);
    return executable;
  }
  ReleaseResult<Executable> destroy_executable(Executable&& executable) {
    begin(Site::DestroyExecutable);
    return detail::release_with_faults(
        *inner_, state_, std::move(executable),
        [this](Executable&& e) { return inner_->destroy_executable(std::move(e)); });
  }

  Result<MemoryUsage> memory_usage(const Context& context) {
    begin(Site::MemoryUsage);
    if (detail::lost(state_, context.id())) return Decider::lost_error();
    return inner_->memory_usage(context);
  }
  Result<MemoryReport> memory_report(const Context& context) {
    begin(Site::MemoryReport);
    if (detail::lost(state_, context.id())) return Decider::lost_error();
    return inner_->memory_report(context);
  }
  Status install_pools(const Context& context, const PoolLayout& layout) {
    begin(Site::InstallPools);
    if (detail::lost(state_, context.id())) return Decider::lost_error();
    return inner_->install_pools(context, layout);
  }
  Status memory_cleanup(const Context& context) {
    begin(Site::MemoryCleanup);
    if (detail::lost(state_, context.id())) return Decider::lost_error();
    return inner_->memory_cleanup(context);
  }

 private:
  static Plan with_seed(Plan plan, std::uint64_t seed) {
    plan.seed = seed;
    return plan;
  }
  void begin(Site site) { state_.decider.begin_call(site); }
  bool lost_owner(HandleKind kind, std::uint64_t id) const {
    return detail::lost(state_, state_.tracker.context_of(kind, id));
  }

  B* inner_;
  InjectorState state_;
};

}  // namespace quiesce::faults
