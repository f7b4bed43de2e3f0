// Host backing of the simulated device's memory and the oracle's "ever written" shadow.
//
// One anonymous, lazily committed mapping holds the bytes of the whole address space, so a buffer's data
// lives at its device address: a use after free really writes into whatever now occupies the range, as
// on hardware. A second mapping holds one bit per byte saying whether the byte was ever written since its
// range was last allocated; the oracle reads it to report reads of never-written bytes. Pages that are
// never touched cost no host memory.
//
// Mapping and unmapping a gigabyte costs more than a whole short simulation (page-table teardown and a
// fault per touched page, dearer still in a virtual machine), so a Backing that ends gives its mappings to
// a small per-thread cache after zeroing every byte and bit it handed out for writing; the next Backing of
// the same capacity on that thread takes them. A recycled mapping is all zeros, as a fresh one is, so no
// simulated outcome can tell the difference; the cache holds no simulation state. A mapping whose written
// span is large (over kRecycleSpanMax) is unmapped instead: zeroing it would cost more than a fresh one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace quiesce::sim {

class Backing {
 public:
  explicit Backing(std::uint64_t capacity_bytes);
  ~Backing();
  Backing(const Backing&) = delete;
  Backing& operator=(const Backing&) = delete;

  std::span<std::byte> bytes(std::uint64_t address, std::uint64_t size);
  std::span<const std::byte> bytes(std::uint64_t address, std::uint64_t size) const;

  void mark_written(std::uint64_t address, std::uint64_t size);
  void mark_unwritten(std::uint64_t address, std::uint64_t size);
  // The offset (from `address`) of the first never-written byte in the range, or `size` if all were written.
  std::uint64_t first_unwritten(std::uint64_t address, std::uint64_t size) const;

  std::uint64_t capacity_bytes() const { return capacity_bytes_; }

  // The widest span of bytes handed out for writing that is zeroed for reuse rather than unmapped.
  static constexpr std::uint64_t kRecycleSpanMax = 64ULL << 20U;

 private:
  void set_bits(std::uint64_t address, std::uint64_t size, bool value);
  void note_dirty(std::uint64_t address, std::uint64_t size) {
    if (size == 0) return;
    if (address < dirty_low_) dirty_low_ = address;
    if (address + size > dirty_high_) dirty_high_ = address + size;
  }

  std::uint64_t capacity_bytes_;
  std::byte* data_ = nullptr;
  std::uint64_t* written_ = nullptr;  // one bit per byte
  std::size_t data_mapping_bytes_ = 0;
  std::size_t written_mapping_bytes_ = 0;
  // Bytes in [dirty_low_, dirty_high_) may have been written, in the data and (one bit each) the shadow.
  std::uint64_t dirty_low_ = UINT64_MAX;
  std::uint64_t dirty_high_ = 0;
};

}  // namespace quiesce::sim
