// Lazily committed host backing and the written-bytes shadow; see backing.h.
#include "quiesce/sim/backing.h"

#include <sys/mman.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>
#include <vector>

namespace quiesce::sim {
namespace {

void* map_lazily(std::size_t bytes) {
  void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) throw std::bad_alloc();
  return mapping;
}

// An all-zero pair of mappings (data and written-bits shadow) of one capacity.
struct ZeroedMappings {
  std::uint64_t capacity_bytes = 0;
  std::byte* data = nullptr;
  std::uint64_t* written = nullptr;
  std::size_t data_mapping_bytes = 0;
  std::size_t written_mapping_bytes = 0;
};

// The per-thread cache of zeroed mappings (see backing.h). Bounded: two sets, the most one thread of a
// campaign uses at a time (a case and, for a determinism check, its rerun follow one another).
class MappingCache {
 public:
  static constexpr std::size_t kEntriesMax = 2;

  MappingCache() = default;
  MappingCache(const MappingCache&) = delete;
  MappingCache& operator=(const MappingCache&) = delete;
  ~MappingCache() {
    for (const ZeroedMappings& entry : entries_) unmap(entry);
  }

  bool take(std::uint64_t capacity_bytes, ZeroedMappings& out) {
    for (std::size_t index = 0; index < entries_.size(); ++index) {
      if (entries_[index].capacity_bytes != capacity_bytes) continue;
      out = entries_[index];
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(index));
      return true;
    }
    return false;
  }

  // Keeps `entry` when there is room; unmaps it otherwise.
  void give(const ZeroedMappings& entry) {
    if (entries_.size() < kEntriesMax) {
      entries_.push_back(entry);
    } else {
      unmap(entry);
    }
  }

  static void unmap(const ZeroedMappings& entry) {
    munmap(entry.data, entry.data_mapping_bytes);
    munmap(entry.written, entry.written_mapping_bytes);
  }

 private:
  std::vector<ZeroedMappings> entries_;
};

MappingCache& mapping_cache() {
  thread_local MappingCache cache;
  return cache;
}

}  // namespace

Backing::Backing(std::uint64_t capacity_bytes) : capacity_bytes_(capacity_bytes) {
  assert(capacity_bytes > 0);
  data_mapping_bytes_ = capacity_bytes;
  written_mapping_bytes_ = ((capacity_bytes + 63) / 64) * sizeof(std::uint64_t);
  ZeroedMappings cached;
  if (mapping_cache().take(capacity_bytes, cached)) {
    data_ = cached.data;
    written_ = cached.written;
    return;
  }
  data_ = static_cast<std::byte*>(map_lazily(data_mapping_bytes_));
  written_ = static_cast<std::uint64_t*>(map_lazily(written_mapping_bytes_));
}

Backing::~Backing() {
  const ZeroedMappings mappings{capacity_bytes_, data_, written_, data_mapping_bytes_, written_mapping_bytes_};
  if (dirty_high_ <= dirty_low_) {
    mapping_cache().give(mappings);
    return;
  }
  if (dirty_high_ - dirty_low_ > kRecycleSpanMax) {
    MappingCache::unmap(mappings);
    return;
  }
  std::memset(data_ + dirty_low_, 0, dirty_high_ - dirty_low_);
  const std::uint64_t first_word = dirty_low_ / 64;
  const std::uint64_t end_word = (dirty_high_ + 63) / 64;
  std::memset(written_ + first_word, 0, (end_word - first_word) * sizeof(std::uint64_t));
  mapping_cache().give(mappings);
}

std::span<std::byte> Backing::bytes(std::uint64_t address, std::uint64_t size) {
  assert(address <= capacity_bytes_ && size <= capacity_bytes_ - address);
  note_dirty(address, size);
  return {data_ + address, size};
}

std::span<const std::byte> Backing::bytes(std::uint64_t address, std::uint64_t size) const {
  assert(address <= capacity_bytes_ && size <= capacity_bytes_ - address);
  return {data_ + address, size};
}

void Backing::mark_written(std::uint64_t address, std::uint64_t size) { set_bits(address, size, true); }
void Backing::mark_unwritten(std::uint64_t address, std::uint64_t size) { set_bits(address, size, false); }

namespace {

// The bits [first, first + count) of a word; 0 < count <= 64 - first.
std::uint64_t range_mask(std::uint64_t first, std::uint64_t count) {
  assert(count > 0 && first + count <= 64);
  return (count == 64 ? ~0ULL : ((1ULL << count) - 1)) << first;
}

}  // namespace

void Backing::set_bits(std::uint64_t address, std::uint64_t size, bool value) {
  assert(address <= capacity_bytes_ && size <= capacity_bytes_ - address);
  note_dirty(address, size);
  const auto apply = [&](std::uint64_t word, std::uint64_t mask) {
    written_[word] = value ? (written_[word] | mask) : (written_[word] & ~mask);
  };
  std::uint64_t bit = address;
  const std::uint64_t end = address + size;
  // Leading partial word, whole words by memset, trailing partial word; partial words by one mask each.
  if (bit < end && bit % 64 != 0) {
    const std::uint64_t count = std::min<std::uint64_t>(64 - bit % 64, end - bit);
    apply(bit / 64, range_mask(bit % 64, count));
    bit += count;
  }
  const std::uint64_t whole_words = (end - bit) / 64;
  if (whole_words > 0) {
    std::memset(written_ + bit / 64, value ? 0xFF : 0x00, whole_words * sizeof(std::uint64_t));
    bit += whole_words * 64;
  }
  if (bit < end) apply(bit / 64, range_mask(0, end - bit));
}

std::uint64_t Backing::first_unwritten(std::uint64_t address, std::uint64_t size) const {
  assert(address <= capacity_bytes_ && size <= capacity_bytes_ - address);
  // The offset of the first set bit of `unwritten`, the unwritten bits of the word that holds `bit`.
  const auto offset_of = [&](std::uint64_t bit, std::uint64_t unwritten) {
    return (bit / 64) * 64 + static_cast<std::uint64_t>(__builtin_ctzll(unwritten)) - address;
  };
  std::uint64_t bit = address;
  const std::uint64_t end = address + size;
  // Leading partial word, whole words, trailing partial word, as set_bits goes: the whole words, most of a
  // read and usually all written, need one test each and no mask.
  if (bit < end && bit % 64 != 0) {
    const std::uint64_t count = std::min<std::uint64_t>(64 - bit % 64, end - bit);
    const std::uint64_t unwritten = ~written_[bit / 64] & range_mask(bit % 64, count);
    if (unwritten != 0) return offset_of(bit, unwritten);
    bit += count;
  }
  // Four whole words are and-ed and tested at once (all written: all ones), so a long written read takes
  // one branch per 256 bytes; the block that has an unwritten byte is looked at again word by word.
  constexpr std::uint64_t kBlockBits = 4 * 64;
  for (; end - bit >= kBlockBits; bit += kBlockBits) {
    const std::uint64_t* const block = written_ + bit / 64;
    if ((block[0] & block[1] & block[2] & block[3]) != ~0ULL) break;
  }
  for (; end - bit >= 64; bit += 64) {
    const std::uint64_t unwritten = ~written_[bit / 64];
    if (unwritten != 0) return offset_of(bit, unwritten);
  }
  if (bit < end) {
    const std::uint64_t unwritten = ~written_[bit / 64] & range_mask(0, end - bit);
    if (unwritten != 0) return offset_of(bit, unwritten);
  }
  return size;
}

}  // namespace quiesce::sim
