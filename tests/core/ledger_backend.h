// LedgerBackend: a small Backend for the admission tests (MemoryBudget, ResourceTransaction).
//
// It models only what a transaction touches: one context, buffers with host backing, and frees whose
// outcome a test scripts per buffer ("reject the first two frees of buffer 3", "free of buffer 2 is
// indeterminate"). It records every permit it saw and every free call, so a test can check that the
// transaction asked for exactly the requested allocation and retried exactly as often as allowed. Every
// call outside admission answers Unsupported: this is not a device, and it says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "quiesce/core/backend.h"

namespace quiesce::testing {

class LedgerBackend {
 public:
  struct PermitSeen {
    BufferDesc desc;
    std::uint64_t transaction_id = 0;
  };
  struct FreeScript {
    std::uint32_t rejections = 0;  // reject this many frees first, handing the buffer back
    bool indeterminate = false;    // then answer Indeterminate instead of Released
  };

  // ---- what tests script and inspect ----
  void fail_next_allocation(ErrorKind kind) { allocation_failure_ = kind; failing_ = true; }
  void script_free(std::uint64_t buffer_id, FreeScript script) { scripts_[buffer_id] = script; }
  std::size_t live_buffers() const { return backing_.size(); }
  bool is_live(std::uint64_t buffer_id) const { return backing_.count(buffer_id) != 0; }
  const std::vector<PermitSeen>& permits_seen() const { return permits_seen_; }
  std::uint32_t free_calls(std::uint64_t buffer_id) const {
    const auto found = free_calls_.find(buffer_id);
    return found == free_calls_.end() ? 0 : found->second;
  }
  const std::vector<std::byte>& bytes_of(std::uint64_t buffer_id) const { return backing_.at(buffer_id); }

  // ---- the Backend concept ----
  Result<DeviceInfo> device_info() { return DeviceInfo{.name = "ledger", .limits = {.memory_bytes = 1U << 20}}; }
  std::string describe_error(const Error& error) const { return quiesce::describe_error(error); }

  Result<Context> create_context(ContextDesc desc) {
    if (desc.flags != 0) return unsupported();
    return Context(next_id_++, 1);
  }
  ReleaseResult<Context> destroy_context(Context&& context) {
    if (!backing_.empty()) return ReleaseResult<Context>::rejected(std::move(context), busy());
    return ReleaseResult<Context>::released();
  }
  Status discard_context(Context&&) { backing_.clear(); return ok_status(); }

  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit& permit) {
    if (!context.valid()) return make_error(ErrorKind::InvalidArgument, "the context handle is empty");
    permits_seen_.push_back(PermitSeen{permit.desc(), permit.transaction_id()});
    if (failing_) {
      failing_ = false;
      return make_error(allocation_failure_, "the ledger backend was told to fail this allocation");
    }
    const std::uint64_t id = next_id_++;
    backing_[id].resize(permit.desc().bytes);
    return Buffer(id, 1);
  }
  Result<BufferInfo> buffer_info(const Buffer& buffer) {
    const auto found = backing_.find(buffer.id());
    if (found == backing_.end()) return make_error(ErrorKind::InvalidArgument, "the buffer is not live");
    return BufferInfo{.bytes = found->second.size(), .backing_bytes = found->second.size(), .alignment = 1};
  }
  Status write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source) {
    const auto found = backing_.find(buffer.id());
    if (found == backing_.end()) return make_error(ErrorKind::InvalidArgument, "the buffer is not live");
    if (offset > found->second.size() || source.size() > found->second.size() - offset) {
      return make_error(ErrorKind::InvalidArgument, "the write runs past the end of the buffer");
    }
    for (const auto& segment : source.segments) {
      for (const std::byte value : segment) found->second[offset++] = value;
    }
    return ok_status();
  }
  Status read_buffer(const Buffer&, std::uint64_t, ByteSink) { return unsupported(); }
  // Consumes the handle, as every release of the contract does: the caller's handle is empty afterwards
  // unless the same live handle comes back in a Rejected result.
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer_owned) {
    Buffer buffer = std::move(buffer_owned);
    const std::uint64_t id = buffer.id();
    free_calls_[id]++;
    FreeScript& script = scripts_[id];
    if (script.rejections > 0) {
      script.rejections--;
      return ReleaseResult<Buffer>::rejected(std::move(buffer), busy());
    }
    backing_.erase(id);  // an indeterminate free may or may not have happened; here it did
    if (script.indeterminate) {
      return ReleaseResult<Buffer>::indeterminate(make_error(ErrorKind::Internal, "the free could not be confirmed"));
    }
    return ReleaseResult<Buffer>::released();
  }

  Result<Program> load_program(const Context&, const ArtifactRef&) { return unsupported(); }
  ReleaseResult<Program> unload_program(Program&& program) { return reject(std::move(program)); }
  Result<Queue> create_queue(const Context&, QueueDesc) { return unsupported(); }
  ReleaseResult<Queue> destroy_queue(Queue&& queue) { return reject(std::move(queue)); }
  QueueState queue_state(const Queue&) { return QueueState{}; }
  SubmitResult submit(const Queue&, Batch, SubmitOptions) { return SubmitResult::rejected(unsupported()); }
  Status synchronize(const Queue&, std::uint64_t) { return unsupported(); }
  Observation poll_event(const Event&) { return Observation{EventState::Indeterminate, unsupported(), {}}; }
  WaitResult wait_event(const Event&, std::uint64_t) { return FenceIndeterminate{unsupported()}; }
  Status cancel_event(const Event&) { return unsupported(); }
  ReleaseResult<Event> destroy_event(Event&& event) { return reject(std::move(event)); }
  Status begin_capture(const Queue&) { return unsupported(); }
  Status capture(const Queue&, Batch) { return unsupported(); }
  Result<Executable> end_capture(const Queue&) { return unsupported(); }
  ReleaseResult<Executable> destroy_executable(Executable&& executable) { return reject(std::move(executable)); }
  Result<MemoryUsage> memory_usage(const Context&) { return unsupported(); }
  Result<MemoryReport> memory_report(const Context&) { return unsupported(); }
  Status install_pools(const Context&, const PoolLayout&) { return unsupported(); }
  Status memory_cleanup(const Context&) { return unsupported(); }

 private:
  static Error unsupported() {
    return make_error(ErrorKind::Unsupported, "the ledger backend models admission only");
  }
  static Error busy() { return make_error(ErrorKind::Busy, "the ledger backend was told to reject this free", true); }
  template <class H>
  static ReleaseResult<H> reject(H&& handle) {
    return ReleaseResult<H>::rejected(std::move(handle), unsupported());
  }

  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::vector<std::byte>> backing_;
  std::map<std::uint64_t, FreeScript> scripts_;
  std::map<std::uint64_t, std::uint32_t> free_calls_;
  std::vector<PermitSeen> permits_seen_;
  ErrorKind allocation_failure_ = ErrorKind::Internal;
  bool failing_ = false;
};

static_assert(Backend<LedgerBackend>);

}  // namespace quiesce::testing
