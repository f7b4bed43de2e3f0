// The recorded simulator stack and the call executor shared by record, replay, shrink and determinism.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "quiesce/core/transaction.h"
#include "quiesce/properties/recorded_stack.h"
#include "quiesce/properties/replay.h"

namespace quiesce::properties::replay_detail {

using SimStack = RecordedSimStack;
using RecordedStack = RecordedSimStack::Top;

// Re-issues recorded calls on a stack, mapping recorded handle ids to the handles the stack hands out.
class CallExecutor {
 public:
  explicit CallExecutor(RecordedStack& top);

  // Issues `call`. False with `problem` set when the record asks for more than a replay may allocate.
  bool execute(const traces::CallRecord& call, std::string& problem);
  // Fetches into the cache the map slots that executing `call` will look up or fill (its subject and the
  // handle it creates): the maps are far larger than the caches by the end of a long trace.
  void prefetch(const traces::CallRecord& call) const;

 private:
  struct Mapped {
    std::uint64_t id = 0;
    std::uint32_t epoch = 0;
  };
  // Recorded id (never 0) to mapped handle: open addressing in a power-of-two table, half full at most.
  // Looked up, never iterated, so no order can reach a result.
  class IdMap {
   public:
    void prefetch(std::uint64_t key) const { __builtin_prefetch(&slots_[slot_of(key)]); }
    const Mapped* find(std::uint64_t key) const {
      for (std::size_t at = slot_of(key);; at = (at + 1) & (slots_.size() - 1)) {
        if (slots_[at].key == key) return &slots_[at].value;
        if (slots_[at].key == 0) return nullptr;
      }
    }
    void set(std::uint64_t key, Mapped value) {
      if (2 * (used_ + 1) > slots_.size()) grow();
      std::size_t at = slot_of(key);
      while (slots_[at].key != 0 && slots_[at].key != key) at = (at + 1) & (slots_.size() - 1);
      if (slots_[at].key == 0) ++used_;
      slots_[at] = Slot{key, value};
    }

   private:
    struct Slot {
      std::uint64_t key = 0;
      Mapped value;
    };
    std::size_t slot_of(std::uint64_t key) const {
      return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
    }
    void grow() {
      std::vector<Slot> old(slots_.size() * 2);
      old.swap(slots_);
      --shift_;
      used_ = 0;
      for (const Slot& slot : old) {
        if (slot.key != 0) set(slot.key, slot.value);
      }
    }
    std::vector<Slot> slots_ = std::vector<Slot>(64);
    unsigned shift_ = 58;  // 64 - log2(slots_.size())
    std::size_t used_ = 0;
  };
  template <class Tag>
  Handle<Tag> handle(traces::HandleKind kind, std::uint64_t recorded) const;
  template <class Tag>
  Ref<Tag> ref(traces::HandleKind kind, std::uint64_t recorded) const {
    const Handle<Tag> mapped = handle<Tag>(kind, recorded);
    return mapped.ref();
  }
  void learn(traces::HandleKind kind, std::uint64_t recorded, std::uint64_t id, std::uint32_t epoch);
  void build_batch(const traces::CallRecord& call);
  void execute_resources(const traces::CallRecord& call);
  void execute_queues(const traces::CallRecord& call);
  void execute_events(const traces::CallRecord& call);

  RecordedStack* top_;
  MemoryBudget budget_;
  std::uint64_t transactions_ = 0;
  std::array<IdMap, traces::kHandleKindCount> maps_;
  std::vector<Command> commands_;
  std::vector<std::vector<Binding>> bindings_;
  std::vector<std::vector<std::byte>> data_;  // the bytes of seeded payloads, per command of the batch
  std::vector<std::byte> write_bytes_;         // the bytes of a seeded write
  std::vector<std::byte> sink_bytes_;
};

// Collects records in memory and, optionally, compares each with the expected one as it arrives.
class ComparingSink final : public traces::TraceSink {
 public:
  ComparingSink(const traces::TraceHeader& header, const std::vector<traces::Record>* expected);
  void append(const traces::Record& record) override;

  bool diverged() const { return divergence_.has_value(); }
  const std::optional<Divergence>& divergence() const { return divergence_; }
  void set_divergence(Divergence divergence) { divergence_ = std::move(divergence); }
  std::uint64_t count() const { return writer_.record_count(); }
  std::vector<traces::Record>& records() { return records_; }
  traces::BinaryWriter& writer() { return writer_; }

 private:
  traces::BinaryWriter writer_;
  const std::vector<traces::Record>* expected_;
  std::vector<traces::Record> records_;  // kept only when there is nothing to compare with
  std::optional<Divergence> divergence_;
};

std::string printed(const traces::Record& record);
Divergence divergence_between(std::uint64_t index, const traces::Record& expected, const traces::Record& actual);
// The faults of a trace as the injector's replay list, or the record of a fault whose kind or site this
// build's injector does not know (a replay or a shrink of such a trace is refused, never run without it).
traces::TraceResult<std::vector<faults::InjectedFault>> faults_to_replay(const traces::Trace& trace);
// The faults of records whose names faults_to_replay has accepted.
std::vector<faults::InjectedFault> replay_faults_of(const std::vector<traces::Record>& records);
faults::Plan replay_plan(const faults::Plan& original, std::vector<faults::InjectedFault> faults);

}  // namespace quiesce::properties::replay_detail
