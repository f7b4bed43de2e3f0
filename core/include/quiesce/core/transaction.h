// Admission: a memory budget (the runtime's own ledger) and all-or-nothing resource transactions.
//
// cuMemGetInfo is advisory and racy, so admission keeps its own ledger. A ResourceTransaction charges the
// budget, issues the AllocationPermit for the exact request, and stages the buffers it allocates: nothing
// is visible to the caller before commit() (the static weight import of DeviceRuntime). A transaction that
// is not committed rolls back: every staged buffer is freed, rejected frees are retried a bounded number of
// times, indeterminate frees move their charge to quarantine. Nothing is dropped silently: a buffer that
// still cannot be freed comes back in the rollback report for its owner to deal with.
#pragma once

#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/core/permit.h"

namespace quiesce {

class MemoryBudget {
 public:
  explicit MemoryBudget(std::uint64_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}

  // Charges `bytes` if live plus quarantined bytes stay within capacity.
  bool try_charge(std::uint64_t bytes) {
    if (bytes > capacity_bytes_ || charged_bytes_ + quarantined_bytes_ > capacity_bytes_ - bytes) {
      return false;
    }
    charged_bytes_ += bytes;
    if (charged_bytes_ > charged_bytes_max_) charged_bytes_max_ = charged_bytes_;
    return true;
  }
  // A definite release gives the bytes back.
  void discharge(std::uint64_t bytes) {
    assert(bytes <= charged_bytes_);
    charged_bytes_ -= bytes;
  }
  // An indeterminate release: the bytes stay charged, as quarantine (R2, R6).
  void quarantine(std::uint64_t bytes) {
    assert(bytes <= charged_bytes_);
    charged_bytes_ -= bytes;
    quarantined_bytes_ += bytes;
  }
  // A whole-device discard ends the quarantine of everything that device held.
  void forget_quarantine(std::uint64_t bytes) {
    assert(bytes <= quarantined_bytes_);
    quarantined_bytes_ -= bytes;
  }

  std::uint64_t capacity_bytes() const { return capacity_bytes_; }
  std::uint64_t charged_bytes() const { return charged_bytes_; }
  std::uint64_t quarantined_bytes() const { return quarantined_bytes_; }
  std::uint64_t charged_bytes_max() const { return charged_bytes_max_; }

 private:
  std::uint64_t capacity_bytes_;
  std::uint64_t charged_bytes_ = 0;
  std::uint64_t quarantined_bytes_ = 0;
  std::uint64_t charged_bytes_max_ = 0;
};

struct RollbackReport {
  std::uint32_t released = 0;
  std::uint32_t quarantined = 0;
  std::uint64_t quarantined_bytes = 0;
  std::vector<Buffer> still_live;  // rejected every retry: the caller owns them again
};

template <class B>
class ResourceTransaction {
 public:
  static constexpr std::uint32_t kReleaseAttemptsMax = 4;

  ResourceTransaction(B& backend, const Context& context, MemoryBudget& budget, std::uint64_t id)
      : backend_(&backend), context_(&context), budget_(&budget), id_(id) {}
  ResourceTransaction(const ResourceTransaction&) = delete;
  ResourceTransaction& operator=(const ResourceTransaction&) = delete;
  ~ResourceTransaction() {
    if (!finished_) (void)rollback();
  }

  // Allocates one buffer under a permit for exactly `desc`. The buffer stays staged until commit().
  Result<BufferRef> allocate(const BufferDesc& desc) {
    assert(!finished_);
    if (desc.bytes == 0) return make_error(ErrorKind::InvalidArgument, "a buffer of zero bytes was requested");
    if (!budget_->try_charge(desc.bytes)) {
      return make_error(ErrorKind::OutOfMemory, "the memory budget cannot admit this allocation", true);
    }
    const AllocationPermit permit(desc, id_);
    Result<Buffer> buffer = backend_->allocate_buffer(*context_, permit);
    if (!buffer.ok()) {
      budget_->discharge(desc.bytes);
      return buffer.error();
    }
    const BufferRef ref = buffer->ref();
    staged_.push_back(Staged{std::move(buffer).value(), desc.bytes});
    return ref;
  }

  // Writes import data into a staged buffer.
  Status write(BufferRef target, std::uint64_t offset, ByteSource source) {
    for (Staged& staged : staged_) {
      if (staged.buffer.ref() == target) return backend_->write_buffer(staged.buffer, offset, source);
    }
    return make_error(ErrorKind::InvalidArgument, "the buffer was not allocated by this transaction");
  }

  // Seals the transaction: every staged buffer becomes the caller's at once.
  std::vector<Buffer> commit() {
    assert(!finished_);
    finished_ = true;
    std::vector<Buffer> buffers;
    buffers.reserve(staged_.size());
    for (Staged& staged : staged_) buffers.push_back(std::move(staged.buffer));
    staged_.clear();
    return buffers;
  }

  // Frees everything staged; nothing is left behind silently.
  RollbackReport rollback() {
    finished_ = true;
    RollbackReport report;
    for (Staged& staged : staged_) {
      Buffer buffer = std::move(staged.buffer);
      for (std::uint32_t attempt = 0; attempt < kReleaseAttemptsMax; ++attempt) {
        ReleaseResult<Buffer> released = backend_->free_buffer(std::move(buffer));
        if (released.status == ReleaseStatus::Released) {
          budget_->discharge(staged.bytes);
          report.released++;
          buffer = Buffer{};  // consumed, whether or not the backend moved from its rvalue
          break;
        }
        if (released.status == ReleaseStatus::Indeterminate) {
          buffer = Buffer{};
          budget_->quarantine(staged.bytes);
          report.quarantined++;
          report.quarantined_bytes += staged.bytes;
          break;
        }
        buffer = std::move(released.handle);
      }
      if (buffer.valid()) report.still_live.push_back(std::move(buffer));
    }
    staged_.clear();
    return report;
  }

  std::uint64_t id() const { return id_; }
  std::size_t staged_count() const { return staged_.size(); }

 private:
  struct Staged {
    Buffer buffer;
    std::uint64_t bytes;
  };

  B* backend_;
  const Context* context_;
  MemoryBudget* budget_;
  std::uint64_t id_;
  std::vector<Staged> staged_;
  bool finished_ = false;
};

}  // namespace quiesce
