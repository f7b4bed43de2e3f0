// The recorded simulator stack and the call executor shared by record, replay, shrink and determinism.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "quiesce/core/transaction.h"
#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/properties/replay.h"
#include "quiesce/sim/device.h"
#include "quiesce/traces/recorder.h"

namespace quiesce::properties::replay_detail {

using InjectorStack = faults::Injector<sim::Device>;
using ValidatorStack = Validator<InjectorStack>;
using RecordedStack = traces::Recorder<ValidatorStack>;

// Owns the device (the injector holds a reference to it) and the recorder on top of everything. After each
// call it appends the faults the injector told, the oracle's new findings and the validator's violations.
class SimStack final : public traces::RecorderHooks {
 public:
  SimStack(const RunConfig& config, const faults::Plan& plan, traces::TraceSink& sink);
  ~SimStack() override;
  SimStack(const SimStack&) = delete;
  SimStack& operator=(const SimStack&) = delete;

  RecordedStack& top() { return top_; }
  sim::Device& device() { return device_; }
  InjectorStack& injector() { return top_.inner().inner(); }
  ValidatorStack& validator() { return top_.inner(); }

  // Called once before each recorded call: also notes how many calls the injector has seen, so that
  // after_call knows whether this call reached it (the validator refuses some calls before they do).
  std::uint64_t now_ns() override {
    injector_calls_before_ = injector().calls();
    return device_.now_ns();
  }
  void after_call(std::uint64_t call_index) override;

  // Per recorded call: whether it reached the injector.
  const std::vector<bool>& reached_injector() const { return reached_; }

  std::uint64_t findings() const { return findings_seen_; }
  std::uint64_t violations() const { return violations_seen_; }
  std::uint64_t faults() const { return faults_seen_; }

 private:
  sim::Device device_;
  RecordedStack top_;
  std::size_t faults_seen_ = 0;
  std::size_t findings_seen_ = 0;
  std::size_t violations_seen_ = 0;
  std::uint64_t injector_calls_before_ = 0;
  std::vector<bool> reached_;
};

// Re-issues recorded calls on a stack, mapping recorded handle ids to the handles the stack hands out.
class CallExecutor {
 public:
  explicit CallExecutor(RecordedStack& top);

  // Issues `call`. False with `problem` set when the record asks for more than a replay may allocate.
  bool execute(const traces::CallRecord& call, std::string& problem);

 private:
  struct Mapped {
    std::uint64_t id = 0;
    std::uint32_t epoch = 0;
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
  std::array<std::map<std::uint64_t, Mapped>, traces::kHandleKindCount> maps_;
  std::vector<Command> commands_;
  std::vector<std::vector<Binding>> bindings_;
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
// The faults of a trace as the injector's replay list.
std::vector<faults::InjectedFault> replay_faults_of(const std::vector<traces::Record>& records);
faults::Plan replay_plan(const faults::Plan& original, std::vector<faults::InjectedFault> faults);

}  // namespace quiesce::properties::replay_detail
