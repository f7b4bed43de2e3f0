// Dense tables indexed from handle ids, with ids that are never reused.
//
// An id is (generation << 32) | slot: the low half indexes the table, the high half counts how often that
// slot was handed out, so a stale id never resolves to a later occupant. Slots are recycled LIFO from a
// free list; the stored value is kept (with the capacity of its vectors) so recycling allocates nothing.
#pragma once

#include <cassert>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace quiesce::sim {

template <class T>
class SlotTable {
 public:
  static constexpr std::uint64_t kSlotMask = 0xFFFF'FFFFULL;

  explicit SlotTable(std::size_t reserve = 64) {
    entries_.reserve(reserve);
    free_.reserve(reserve);
  }

  // Occupies a slot and returns its new id; the caller initialises every field of value(slot).
  std::uint64_t acquire() {
    std::uint32_t slot = 0;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      assert(entries_.size() < kSlotMask);
      slot = static_cast<std::uint32_t>(entries_.size());
      entries_.emplace_back();
    }
    Entry& entry = entries_[slot];
    assert(!entry.live);
    entry.generation++;
    entry.live = true;
    entry.id = (std::uint64_t{entry.generation} << 32U) | slot;
    return entry.id;
  }

  void release(std::uint32_t slot) {
    assert(slot < entries_.size() && entries_[slot].live);
    entries_[slot].live = false;
    free_.push_back(slot);
  }

  // The live value named by `id`, or nullptr for an unknown, released or reused id.
  T* find(std::uint64_t id) {
    const std::uint64_t slot = id & kSlotMask;
    if (slot >= entries_.size()) return nullptr;
    Entry& entry = entries_[slot];
    return entry.live && entry.id == id ? &entry.value : nullptr;
  }
  const T* find(std::uint64_t id) const { return const_cast<SlotTable*>(this)->find(id); }

  // The live value named by an id the caller has already validated; a miss is a simulator bug.
  T& get(std::uint64_t id) {
    T* value = find(id);
    if (value == nullptr) {
      std::fprintf(stderr, "quiesce::sim internal error: id %llu was validated but no longer resolves.\n",
                   static_cast<unsigned long long>(id));
      std::abort();
    }
    return *value;
  }

  static std::uint32_t slot_of(std::uint64_t id) { return static_cast<std::uint32_t>(id & kSlotMask); }
  std::size_t slots() const { return entries_.size(); }
  bool live(std::uint32_t slot) const { return slot < entries_.size() && entries_[slot].live; }
  std::uint64_t id_at(std::uint32_t slot) const { return entries_[slot].id; }
  T& at(std::uint32_t slot) { return entries_[slot].value; }
  const T& at(std::uint32_t slot) const { return entries_[slot].value; }

 private:
  struct Entry {
    std::uint64_t id = 0;
    std::uint32_t generation = 0;
    bool live = false;
    T value{};
  };

  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_;
};

}  // namespace quiesce::sim
