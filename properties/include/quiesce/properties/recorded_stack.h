// The recorded simulator stack, for callers that drive it themselves (tests, a user's own runtime):
//   traces::Recorder< Validator< faults::Injector< sim::Device > > >
// Its records go to a TraceSink (a traces::BinaryWriter to keep them). After each call it appends the faults
// the injector told during that call, the oracle's new findings and the validator's new violations; before
// each call, a clock record when virtual time moved. record_raw_run and replay_trace (replay.h) use it.
#pragma once

#include <cstdint>
#include <vector>

#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/properties/replay.h"
#include "quiesce/sim/device.h"
#include "quiesce/traces/recorder.h"

namespace quiesce::properties {

// Owns the device (the injector holds a reference to it) and the recorder on top of everything. After each
// call it appends the faults the injector told, the oracle's new findings and the validator's violations.
class RecordedSimStack final : public traces::RecorderHooks {
 public:
  using Injector = faults::Injector<sim::Device>;
  using Checked = Validator<Injector>;
  using Top = traces::Recorder<Checked>;

  // `plan` is the injector's plan: config.plan to record a run, a replay plan to replay one.
  RecordedSimStack(const RunConfig& config, const faults::Plan& plan, traces::TraceSink& sink);
  ~RecordedSimStack() override;
  RecordedSimStack(const RecordedSimStack&) = delete;
  RecordedSimStack& operator=(const RecordedSimStack&) = delete;

  Top& top() { return top_; }
  sim::Device& device() { return device_; }
  Injector& injector() { return top_.inner().inner(); }
  Checked& validator() { return top_.inner(); }

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
  Top top_;
  std::size_t faults_seen_ = 0;
  std::size_t findings_seen_ = 0;
  std::size_t violations_seen_ = 0;
  std::uint64_t injector_calls_before_ = 0;
  std::vector<bool> reached_;
};

}  // namespace quiesce::properties
