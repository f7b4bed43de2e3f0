// AllocationPermit: the only way to ask a backend for device memory.
//
// A permit authorises one exact allocation request. It has no public constructor and can be neither copied
// nor moved: only a ResourceTransaction issues one, on its own stack frame, for the duration of one
// allocate_buffer call, so a permit cannot bypass admission or outlive the transaction that issued it.
// tests/core/permit_compile_fail.cc proves that user code cannot construct one.
#pragma once

#include <cstdint>

#include "quiesce/core/types.h"

namespace quiesce {

template <class B>
class ResourceTransaction;

class AllocationPermit {
 public:
  AllocationPermit(const AllocationPermit&) = delete;
  AllocationPermit& operator=(const AllocationPermit&) = delete;
  AllocationPermit(AllocationPermit&&) = delete;
  AllocationPermit& operator=(AllocationPermit&&) = delete;
  ~AllocationPermit() = default;

  const BufferDesc& desc() const { return desc_; }
  std::uint64_t transaction_id() const { return transaction_id_; }

 private:
  template <class B>
  friend class ResourceTransaction;

  AllocationPermit(const BufferDesc& desc, std::uint64_t transaction_id)
      : desc_(desc), transaction_id_(transaction_id) {}

  BufferDesc desc_;
  std::uint64_t transaction_id_;
};

}  // namespace quiesce
