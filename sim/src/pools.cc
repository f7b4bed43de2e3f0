// Per-context pools and their statistics; see pools.h.
#include "quiesce/sim/pools.h"

#include <algorithm>
#include <cassert>

namespace quiesce::sim {

PoolSet::PoolSet() {
  pools_.reserve(kClassesMax + 1);
  pools_.push_back(Pool{});  // the large pool
}

std::uint32_t PoolSet::route(std::uint64_t bytes) const {
  for (std::uint32_t index = 0; index + 1 < pools_.size(); ++index) {
    if (bytes <= pools_[index].block_bytes) return index;
  }
  return static_cast<std::uint32_t>(pools_.size() - 1);
}

std::uint64_t PoolSet::take_cached(std::uint32_t pool) {
  assert(pool < pools_.size());
  std::vector<std::uint64_t>& cached = pools_[pool].cached;
  if (cached.empty()) return AddressAllocator::kNoAddress;
  const std::uint64_t address = cached.back();
  cached.pop_back();
  return address;
}

void PoolSet::note_allocated(std::uint32_t pool, std::uint64_t backing_bytes, bool newly_reserved) {
  assert(pool < pools_.size());
  Pool& entry = pools_[pool];
  if (newly_reserved) {
    entry.blocks_reserved++;
    entry.bytes_reserved += backing_bytes;
  }
  entry.blocks_in_use++;
  entry.bytes_in_use += backing_bytes;
  entry.bytes_in_use_max = std::max(entry.bytes_in_use_max, entry.bytes_in_use);
  bytes_in_use_ += backing_bytes;
  bytes_in_use_max_ = std::max(bytes_in_use_max_, bytes_in_use_);
}

void PoolSet::note_freed(std::uint32_t pool, std::uint64_t address, std::uint64_t backing_bytes) {
  assert(pool < pools_.size());
  Pool& entry = pools_[pool];
  assert(entry.blocks_in_use > 0 && entry.bytes_in_use >= backing_bytes);
  entry.blocks_in_use--;
  entry.bytes_in_use -= backing_bytes;
  bytes_in_use_ -= backing_bytes;
  if (entry.block_bytes == 0) {
    entry.blocks_reserved--;
    entry.bytes_reserved -= backing_bytes;
  } else {
    entry.cached.push_back(address);
  }
}

std::uint64_t PoolSet::release_cached(AddressAllocator& allocator) {
  std::uint64_t released = 0;
  for (Pool& entry : pools_) {
    for (const std::uint64_t address : entry.cached) {
      allocator.release(address, entry.block_bytes);
      released += entry.block_bytes;
    }
    entry.blocks_reserved -= entry.cached.size();
    entry.bytes_reserved -= entry.cached.size() * entry.block_bytes;
    entry.cached.clear();
  }
  return released;
}

std::uint64_t PoolSet::live_blocks() const {
  std::uint64_t live = 0;
  for (const Pool& entry : pools_) live += entry.blocks_in_use;
  return live;
}

void PoolSet::install(const PoolLayout& layout, std::uint64_t alignment, AddressAllocator& allocator) {
  assert(live_blocks() == 0);
  assert(layout.block_bytes.size() <= kClassesMax);
  (void)release_cached(allocator);
  const Pool large = pools_.back();
  pools_.clear();
  for (const std::uint64_t block : layout.block_bytes) {
    Pool entry;
    entry.block_bytes = (block + alignment - 1) & ~(alignment - 1);
    entry.cached.reserve(64);
    pools_.push_back(std::move(entry));
  }
  pools_.push_back(large);
}

MemoryUsage PoolSet::usage() const {
  MemoryUsage usage;
  for (const Pool& entry : pools_) {
    usage.bytes_reserved += entry.bytes_reserved;
    usage.allocations += entry.blocks_in_use;
  }
  usage.bytes_in_use = bytes_in_use_;
  usage.bytes_in_use_max = bytes_in_use_max_;
  return usage;
}

MemoryReport PoolSet::report() const {
  MemoryReport report;
  report.pools.reserve(pools_.size());
  for (const Pool& entry : pools_) {
    report.pools.push_back(PoolReport{entry.block_bytes, entry.blocks_reserved, entry.blocks_in_use,
                                      entry.bytes_reserved, entry.bytes_in_use, entry.bytes_in_use_max});
  }
  return report;
}

}  // namespace quiesce::sim
