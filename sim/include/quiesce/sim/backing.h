// Host backing of the simulated device's memory and the oracle's "ever written" shadow.
//
// One anonymous, lazily committed mapping holds the bytes of the whole address space, so a buffer's data
// lives at its device address: a use after free really writes into whatever now occupies the range, as
// on hardware. A second mapping holds one bit per byte saying whether the byte was ever written since its
// range was last allocated; the oracle reads it to report reads of never-written bytes. Pages that are
// never touched cost no host memory.
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

 private:
  void set_bits(std::uint64_t address, std::uint64_t size, bool value);

  std::uint64_t capacity_bytes_;
  std::byte* data_ = nullptr;
  std::uint64_t* written_ = nullptr;  // one bit per byte
  std::size_t data_mapping_bytes_ = 0;
  std::size_t written_mapping_bytes_ = 0;
};

}  // namespace quiesce::sim
