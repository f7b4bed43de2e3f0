// First-fit allocation over the simulated address space; see allocator.h.
#include "quiesce/sim/allocator.h"

#include <algorithm>
#include <cassert>

namespace quiesce::sim {

AddressAllocator::AddressAllocator(std::uint64_t capacity_bytes, std::uint64_t alignment)
    : capacity_bytes_(capacity_bytes), alignment_(alignment), free_bytes_(capacity_bytes) {
  assert(alignment != 0 && (alignment & (alignment - 1)) == 0);
  assert(capacity_bytes % alignment == 0);
  free_.reserve(256);
  if (capacity_bytes > 0) free_.push_back(Range{0, capacity_bytes});
}

std::uint64_t AddressAllocator::allocate(std::uint64_t bytes) {
  if (bytes == 0 || bytes > capacity_bytes_) return kNoAddress;
  const std::uint64_t rounded = round_up(bytes);
  for (std::size_t index = 0; index < free_.size(); ++index) {
    Range& range = free_[index];
    if (range.bytes < rounded) continue;
    const std::uint64_t address = range.address;
    range.address += rounded;
    range.bytes -= rounded;
    if (range.bytes == 0) free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(index));
    free_bytes_ -= rounded;
    assert(address % alignment_ == 0);
    return address;
  }
  return kNoAddress;
}

void AddressAllocator::release(std::uint64_t address, std::uint64_t bytes) {
  const std::uint64_t rounded = round_up(bytes);
  assert(address % alignment_ == 0);
  assert(address + rounded <= capacity_bytes_);
  auto next = std::lower_bound(free_.begin(), free_.end(), address,
                               [](const Range& range, std::uint64_t value) { return range.address < value; });
  // The released range must not overlap a free one: that would be a double release.
  assert(next == free_.end() || address + rounded <= next->address);
  const bool joins_next = next != free_.end() && address + rounded == next->address;
  const bool joins_previous = next != free_.begin() && std::prev(next)->address + std::prev(next)->bytes == address;
  assert(next == free_.begin() || std::prev(next)->address + std::prev(next)->bytes <= address);
  if (joins_previous && joins_next) {
    std::prev(next)->bytes += rounded + next->bytes;
    free_.erase(next);
  } else if (joins_previous) {
    std::prev(next)->bytes += rounded;
  } else if (joins_next) {
    next->address = address;
    next->bytes += rounded;
  } else {
    free_.insert(next, Range{address, rounded});
  }
  free_bytes_ += rounded;
}

std::uint64_t AddressAllocator::largest_free_range() const {
  std::uint64_t largest = 0;
  for (const Range& range : free_) largest = std::max(largest, range.bytes);
  return largest;
}

}  // namespace quiesce::sim
