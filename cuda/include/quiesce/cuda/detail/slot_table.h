// A dense table of live objects named by stable 64-bit ids: the low 32 bits are the slot index plus one,
// the high 32 bits the slot's generation. A freed slot is reused with the next generation, so an old id
// never resolves to a new object, and a lookup is one bounds check and one compare.
#pragma once

#include <cassert>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

namespace quiesce::cuda::detail {

template <class T>
class SlotTable {
 public:
  explicit SlotTable(std::uint32_t capacity_max) : capacity_max_(capacity_max) {}
  // A moved-from table is empty (its slot count goes with its slots).
  SlotTable(SlotTable&& other) noexcept
      : slots_(std::move(other.slots_)),
        slot_count_(std::exchange(other.slot_count_, 0)),
        free_(std::move(other.free_)),
        capacity_max_(other.capacity_max_),
        live_count_(std::exchange(other.live_count_, 0)) {}
  SlotTable& operator=(SlotTable&& other) noexcept {
    slots_ = std::move(other.slots_);
    slot_count_ = std::exchange(other.slot_count_, 0);
    free_ = std::move(other.free_);
    capacity_max_ = other.capacity_max_;
    live_count_ = std::exchange(other.live_count_, 0);
    return *this;
  }

  // The id of a new live slot holding `value`; std::nullopt when the table is at its bound.
  std::optional<std::uint64_t> insert(T value) {
    const std::optional<std::uint64_t> id = insert_default();
    if (id) *find(*id) = std::move(value);
    return id;
  }

  // The id of a new live slot holding T{} (erase resets a freed slot), for the caller to fill in place
  // through find(); std::nullopt when the table is at its bound.
  std::optional<std::uint64_t> insert_default() {
    std::uint32_t index = 0;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      if (slot_count_ >= capacity_max_) return std::nullopt;
      index = slot_count_;
      slots_.push_back(Slot{});
      slot_count_++;
    }
    Slot& slot = slots_[index];
    assert(!slot.live);
    slot.generation++;
    slot.live = true;
    live_count_++;
    return (std::uint64_t{slot.generation} << 32U) | (std::uint64_t{index} + 1);
  }

  T* find(std::uint64_t id) {
    const std::uint64_t index_plus_one = id & 0xFFFFFFFFULL;
    if (index_plus_one == 0 || index_plus_one > slot_count_) return nullptr;
    Slot& slot = slots_[index_plus_one - 1];
    if (!slot.live || slot.generation != static_cast<std::uint32_t>(id >> 32U)) return nullptr;
    return &slot.value;
  }
  const T* find(std::uint64_t id) const { return const_cast<SlotTable*>(this)->find(id); }

  // For ids the caller knows are live (a child's context, a validated command's buffer): a miss is a broken
  // invariant of the Device, reported and fatal rather than a null dereference.
  T& get(std::uint64_t id) {
    T* value = find(id);
    if (value == nullptr) {
      std::fprintf(stderr, "quiesce::cuda: internal invariant broken: id %llu names no live slot\n",
                   static_cast<unsigned long long>(id));
      std::abort();
    }
    return *value;
  }

  void erase(std::uint64_t id) {
    T* value = find(id);
    assert(value != nullptr);
    if (value == nullptr) return;
    const auto index = static_cast<std::uint32_t>((id & 0xFFFFFFFFULL) - 1);
    slots_[index].live = false;
    slots_[index].value = T{};
    free_.push_back(index);
    live_count_--;
  }

  // Calls visit(id, value) for every live slot, in index order (deterministic).
  template <class Visit>
  void for_each(Visit&& visit) {
    for (std::uint32_t index = 0; index < slot_count_; ++index) {
      Slot& slot = slots_[index];
      if (slot.live) visit((std::uint64_t{slot.generation} << 32U) | (std::uint64_t{index} + 1), slot.value);
    }
  }

  std::uint32_t live_count() const { return live_count_; }

 private:
  // The generation and live flag first: an insert or a lookup then reads and writes the slot's first cache
  // line only, where the value's leading fields are too.
  struct Slot {
    std::uint32_t generation = 0;
    bool live = false;
    T value{};
  };

  std::vector<Slot> slots_;
  std::uint32_t slot_count_ = 0;  // slots_.size(), kept so that a lookup needs no division by sizeof(Slot)
  std::vector<std::uint32_t> free_;
  std::uint32_t capacity_max_;
  std::uint32_t live_count_ = 0;
};

}  // namespace quiesce::cuda::detail
