// Lazily committed host backing and the written-bytes shadow; see backing.h.
#include "quiesce/sim/backing.h"

#include <sys/mman.h>

#include <cassert>
#include <cstring>
#include <new>

namespace quiesce::sim {
namespace {

void* map_lazily(std::size_t bytes) {
  void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) throw std::bad_alloc();
  return mapping;
}

}  // namespace

Backing::Backing(std::uint64_t capacity_bytes) : capacity_bytes_(capacity_bytes) {
  assert(capacity_bytes > 0);
  data_mapping_bytes_ = capacity_bytes;
  written_mapping_bytes_ = ((capacity_bytes + 63) / 64) * sizeof(std::uint64_t);
  data_ = static_cast<std::byte*>(map_lazily(data_mapping_bytes_));
  written_ = static_cast<std::uint64_t*>(map_lazily(written_mapping_bytes_));
}

Backing::~Backing() {
  munmap(data_, data_mapping_bytes_);
  munmap(written_, written_mapping_bytes_);
}

std::span<std::byte> Backing::bytes(std::uint64_t address, std::uint64_t size) {
  assert(address <= capacity_bytes_ && size <= capacity_bytes_ - address);
  return {data_ + address, size};
}

std::span<const std::byte> Backing::bytes(std::uint64_t address, std::uint64_t size) const {
  assert(address <= capacity_bytes_ && size <= capacity_bytes_ - address);
  return {data_ + address, size};
}

void Backing::mark_written(std::uint64_t address, std::uint64_t size) { set_bits(address, size, true); }
void Backing::mark_unwritten(std::uint64_t address, std::uint64_t size) { set_bits(address, size, false); }

void Backing::set_bits(std::uint64_t address, std::uint64_t size, bool value) {
  assert(address <= capacity_bytes_ && size <= capacity_bytes_ - address);
  std::uint64_t bit = address;
  const std::uint64_t end = address + size;
  // Leading partial word, whole words by memset, trailing partial word.
  while (bit < end && bit % 64 != 0) {
    const std::uint64_t mask = 1ULL << (bit % 64);
    written_[bit / 64] = value ? (written_[bit / 64] | mask) : (written_[bit / 64] & ~mask);
    ++bit;
  }
  const std::uint64_t whole_words = (end - bit) / 64;
  if (whole_words > 0) {
    std::memset(written_ + bit / 64, value ? 0xFF : 0x00, whole_words * sizeof(std::uint64_t));
    bit += whole_words * 64;
  }
  while (bit < end) {
    const std::uint64_t mask = 1ULL << (bit % 64);
    written_[bit / 64] = value ? (written_[bit / 64] | mask) : (written_[bit / 64] & ~mask);
    ++bit;
  }
}

std::uint64_t Backing::first_unwritten(std::uint64_t address, std::uint64_t size) const {
  assert(address <= capacity_bytes_ && size <= capacity_bytes_ - address);
  std::uint64_t bit = address;
  const std::uint64_t end = address + size;
  while (bit < end) {
    if (bit % 64 == 0 && end - bit >= 64) {
      const std::uint64_t word = written_[bit / 64];
      if (word == ~0ULL) {
        bit += 64;
        continue;
      }
      return bit - address + static_cast<std::uint64_t>(__builtin_ctzll(~word));
    }
    if ((written_[bit / 64] & (1ULL << (bit % 64))) == 0) return bit - address;
    ++bit;
  }
  return size;
}

}  // namespace quiesce::sim
