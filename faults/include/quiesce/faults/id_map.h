// IdMap<V>: an open-addressing hash map from a nonzero handle id to a value, for the injector's hot path.
//
// std::unordered_map allocates a node per insert; the injector inserts and erases one entry per submitted
// event, so a flat table (linear probing, backward-shift deletion, no tombstones) keeps the decorator cheap.
// Iteration order depends on the ids' hashes, so callers only iterate to apply order-independent updates.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace quiesce::faults {

template <class V>
class IdMap {
 public:
  // The most entries one map holds: a run that needs more is refused with a message.
  static constexpr std::size_t kEntriesMax = std::size_t{1} << 26U;

  IdMap() : slots_(kInitialSlots) {}

  V* find(std::uint64_t id) {
    if (id == 0) return nullptr;  // the id of an empty (moved-from) handle names nothing
    for (std::size_t index = home(id);; index = next(index)) {
      if (slots_[index].id == id) return &slots_[index].value;
      if (slots_[index].id == 0) return nullptr;
    }
  }
  const V* find(std::uint64_t id) const { return const_cast<IdMap*>(this)->find(id); }

  // The entry of `id`, value-initialised when new.
  V& operator[](std::uint64_t id) {
    assert(id != 0);
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    std::size_t index = home(id);
    for (; slots_[index].id != 0; index = next(index)) {
      if (slots_[index].id == id) return slots_[index].value;
    }
    slots_[index].id = id;
    slots_[index].value = V{};
    size_++;
    return slots_[index].value;
  }

  void erase(std::uint64_t id) {
    if (id == 0) return;
    std::size_t hole = home(id);
    for (; slots_[hole].id != id; hole = next(hole)) {
      if (slots_[hole].id == 0) return;
    }
    // Backward shift: move later entries of the probe run into the hole so lookups never stop early.
    for (std::size_t index = next(hole); slots_[index].id != 0; index = next(index)) {
      const std::size_t wanted = home(slots_[index].id);
      // Movable unless its home lies cyclically in (hole, index]: then the hole is before its probe start.
      const bool movable = hole <= index ? (wanted <= hole || wanted > index) : (wanted <= hole && wanted > index);
      if (movable) {
        slots_[hole] = std::move(slots_[index]);
        hole = index;
      }
    }
    slots_[hole].id = 0;
    slots_[hole].value = V{};
    size_--;
  }

  // Erases every entry for which `condition(id, value)` holds.
  template <class Condition>
  void erase_if(Condition condition) {
    std::vector<std::uint64_t> doomed;
    for (const Slot& slot : slots_) {
      if (slot.id != 0 && condition(slot.id, slot.value)) doomed.push_back(slot.id);
    }
    for (const std::uint64_t id : doomed) erase(id);
  }

  // Calls `update(value)` on every entry; the update must not depend on the order.
  template <class Update>
  void for_each(Update update) {
    for (Slot& slot : slots_) {
      if (slot.id != 0) update(slot.value);
    }
  }

  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kInitialSlots = 64;

  struct Slot {
    std::uint64_t id = 0;
    V value{};
  };

  std::size_t home(std::uint64_t id) const {
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ULL) >> 7U) & (slots_.size() - 1);
  }
  std::size_t next(std::size_t index) const { return (index + 1) & (slots_.size() - 1); }

  void grow() {
    if (size_ >= kEntriesMax) {
      throw std::length_error("the fault injector tracks " + std::to_string(size_) +
                              " live handles of one kind, its bound; release handles or discard contexts");
    }
    std::vector<Slot> old = std::move(slots_);
    slots_ = std::vector<Slot>(old.size() * 2);
    size_ = 0;
    for (Slot& slot : old) {
      if (slot.id != 0) (*this)[slot.id] = std::move(slot.value);
    }
    assert(slots_.size() > old.size());
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace quiesce::faults
