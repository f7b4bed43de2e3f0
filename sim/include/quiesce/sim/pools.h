// Per-context memory pools: size classes from a PoolLayout plus one pool of large direct allocations.
//
// A request no larger than the biggest class is rounded up to its class and served from that class's
// cached blocks, or from a new block carved out of the address space; a freed block stays cached (reserved)
// until memory_cleanup gives it back. Larger requests, and every request when no layout is installed, go
// to the large pool, whose blocks return to the address space at once. The layout changes only when
// nothing is live (R18). Statistics follow ComputeServer's memory_usage and memory_report.
#pragma once

#include <cstdint>
#include <vector>

#include "quiesce/core/types.h"
#include "quiesce/sim/allocator.h"

namespace quiesce::sim {

class PoolSet {
 public:
  static constexpr std::size_t kClassesMax = 32;

  PoolSet();

  // The pool a request of `bytes` routes to (the large pool is the last).
  std::uint32_t route(std::uint64_t bytes) const;
  std::uint64_t block_bytes(std::uint32_t pool) const { return pools_[pool].block_bytes; }
  bool is_large(std::uint32_t pool) const { return pools_[pool].block_bytes == 0; }

  // A cached block of `pool`, or AddressAllocator::kNoAddress when none is cached.
  std::uint64_t take_cached(std::uint32_t pool);
  // Book-keeping of a block that now backs a live buffer (reserved says whether it was just carved).
  void note_allocated(std::uint32_t pool, std::uint64_t backing_bytes, bool newly_reserved);
  // A live block is freed: a class block is cached, a large block is forgotten (its range returns to the
  // allocator, which the caller does).
  void note_freed(std::uint32_t pool, std::uint64_t address, std::uint64_t backing_bytes);
  // Gives every cached block back to `allocator`; returns the bytes released.
  std::uint64_t release_cached(AddressAllocator& allocator);

  std::uint64_t live_blocks() const;
  // Replaces the classes; only when nothing is live. Cached blocks go back to `allocator` first.
  void install(const PoolLayout& layout, std::uint64_t alignment, AddressAllocator& allocator);

  MemoryUsage usage() const;
  MemoryReport report() const;

 private:
  struct Pool {
    std::uint64_t block_bytes = 0;
    std::vector<std::uint64_t> cached;  // addresses of reserved, unused blocks
    std::uint64_t blocks_reserved = 0;
    std::uint64_t blocks_in_use = 0;
    std::uint64_t bytes_reserved = 0;
    std::uint64_t bytes_in_use = 0;
    std::uint64_t bytes_in_use_max = 0;
  };

  std::vector<Pool> pools_;
  std::uint64_t bytes_in_use_ = 0;
  std::uint64_t bytes_in_use_max_ = 0;
};

}  // namespace quiesce::sim
