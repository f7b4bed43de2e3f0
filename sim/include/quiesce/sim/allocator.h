// First-fit allocation over the simulated device's address space.
//
// The free list is a vector of disjoint address ranges sorted by address; a release merges with its
// neighbours. This gives the simulator real capacity limits, real fragmentation (a request can fail while
// enough total bytes are free but no single range fits) and real OutOfMemory. No allocation happens per
// operation once the free list's capacity is warm.
#pragma once

#include <cstdint>
#include <vector>

namespace quiesce::sim {

class AddressAllocator {
 public:
  static constexpr std::uint64_t kNoAddress = UINT64_MAX;

  // Manages [0, capacity_bytes); every request is rounded up to `alignment` (a power of two).
  AddressAllocator(std::uint64_t capacity_bytes, std::uint64_t alignment);

  // The lowest aligned address with `bytes` free after it, or kNoAddress when no free range fits.
  std::uint64_t allocate(std::uint64_t bytes);
  // Gives a range back; it must be exactly one earlier allocation.
  void release(std::uint64_t address, std::uint64_t bytes);

  std::uint64_t round_up(std::uint64_t bytes) const { return (bytes + alignment_ - 1) & ~(alignment_ - 1); }
  std::uint64_t capacity_bytes() const { return capacity_bytes_; }
  std::uint64_t free_bytes() const { return free_bytes_; }
  std::uint64_t largest_free_range() const;
  std::size_t free_ranges() const { return free_.size(); }

 private:
  struct Range {
    std::uint64_t address;
    std::uint64_t bytes;
  };

  std::uint64_t capacity_bytes_;
  std::uint64_t alignment_;
  std::uint64_t free_bytes_;
  std::vector<Range> free_;
};

}  // namespace quiesce::sim
