// The recorded simulator stack, for callers that drive it themselves (tests, a user's own runtime):
//   traces::Recorder< Validator< faults::Injector< sim::Device > > >
// Its records go to a TraceSink (a traces::BinaryWriter to keep them). After each call it appends the faults
// the injector told during that call, the oracle's new findings and the validator's new violations; before
// each call, a clock record when virtual time moved. record_raw_run and replay_trace (replay.h) use it, and
// a campaign case runs on it when it is recorded (CaseOptions::trace, record_case.h).
//
// It is also a sim::ScheduleObserver: handed to a FiberEnv, every scheduling decision becomes a schedule
// record (naming the next call). Replaying needs neither the engine nor fibers: follow(records) makes the
// stack reproduce what happened between calls. Before each call it writes again the recorded schedule
// records that name that call, then moves virtual time to where the recording says the call began (time a
// FiberEnv let pass outside any backend call: sleeps, the engine's waits for the next retry). A recording
// whose time moved only inside calls (the raw workload) finds its clock already there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/properties/replay.h"
#include "quiesce/sim/device.h"
#include "quiesce/sim/fiber_env.h"
#include "quiesce/traces/recorder.h"

namespace quiesce::properties {

// Owns the device (the injector holds a reference to it) and the recorder on top of everything. After each
// call it appends the faults the injector told, the oracle's new findings and the validator's violations.
class RecordedSimStack final : public traces::RecorderHooks, public sim::ScheduleObserver {
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
  // When following a recording, first replays what happened before the call (see follow).
  std::uint64_t now_ns() override {
    injector_calls_before_ = injector().calls();
    if (following_) catch_up(top_.calls());
    return device_.now_ns();
  }
  void after_call(std::uint64_t call_index) override;

  // sim::ScheduleObserver: a decision becomes a schedule record naming the next call. Clock jumps need no
  // record of their own: the next call's clock record says where time went.
  void on_decision(sim::FiberId chosen, std::size_t runnable, std::uint64_t now_ns) override;
  void on_clock_jump(std::uint64_t /*now_ns*/) override {}
  // The strategy named in schedule records (the schedule's describe()).
  void set_schedule_name(std::string name) { schedule_name_ = std::move(name); }

  // Replays a recording's notes that the calls themselves do not cause: before call n, the schedule
  // records naming n and the virtual time call n began at; after the last call, the schedule records left.
  // `records` must pass traces::validate_trace (each schedule record names the call after it) and outlive
  // the stack: they are walked alongside the calls, not copied.
  void follow(const std::vector<traces::Record>& records);
  // Only the time: `clock_before_call[n]` is when call n of this run began in the recording (shrinking,
  // which drops calls, keeps each kept call's own time).
  void follow_clock(std::vector<std::uint64_t> clock_before_call);

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
  std::string schedule_name_ = "fiber";
  // Following a recording.
  void catch_up(std::uint64_t call_index);
  // Writes the schedule records and notes the clock of the records up to the recording's call `call_index`;
  // true when there is such a call, false once the walk reached the end.
  bool walk_recording(std::uint64_t call_index);
  static constexpr std::uint64_t kNoCall = UINT64_MAX;
  bool following_ = false;
  const std::vector<traces::Record>* followed_ = nullptr;  // follow(records)
  std::size_t followed_next_ = 0;                          // the first record not walked yet
  std::uint64_t followed_calls_ = 0;                       // call records walked
  std::uint64_t followed_clock_ns_ = 0;                    // the last clock record walked
  std::vector<std::uint64_t> clock_before_;                // follow_clock: by call index of this run
};

}  // namespace quiesce::properties
