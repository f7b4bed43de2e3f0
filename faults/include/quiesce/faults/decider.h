// The Decider: the non-template heart of every Injector. It numbers calls and fault sites, decides at each
// site whether to inject (replay, script, count-then-inject, rate, in that order), chooses the fault's
// parameters from its own Prng, builds the tagged error, and keeps the log of what it injected.
//
// What must hold: a site is counted whether or not anything is injected, so a counting run (Plan::none) and
// a run of Plan::fail_site(k) number sites identically up to k; the same plan and seed give the same log; in
// replay mode nothing outside the recorded list is ever injected.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <optional>
#include <vector>

#include "quiesce/core/prng.h"
#include "quiesce/core/result.h"
#include "quiesce/faults/fault.h"
#include "quiesce/faults/plan.h"

namespace quiesce::faults {

// A decision to inject, with the parameter a script or a replay fixed (nullopt: the injector chooses).
struct Verdict {
  std::optional<std::uint64_t> parameter = std::nullopt;
};

class Decider {
 public:
  // The most faults one injector logs; a run that tells more is refused with a message.
  static constexpr std::size_t kInjectedMax = std::size_t{1} << 24U;

  explicit Decider(Plan plan);

  // Starts one non-const backend call: numbers it and counts it against its site. Inline: every call runs it.
  void begin_call(Site site) {
    const auto site_index = static_cast<std::uint32_t>(site);
    assert(site_index < kSiteCount);
    call_index_ = calls_++;
    site_ = site;
    site_calls_[site_index]++;
    // A recorded fault whose call has passed was not told: the run diverged from its recording.
    while (replay_next_ < plan_.replay_faults.size() && plan_.replay_faults[replay_next_].call_index < call_index_) {
      replay_skipped_++;
      replay_next_++;
    }
  }

  // One fault site of the current call: may `kind` be injected here? Counts the site either way. Inline:
  // it runs several times per backend call, and a plan of rates alone (every built-in plan) needs only a
  // mask test and, for an armed kind, one draw.
  std::optional<Verdict> consider(FaultKind kind) {
    const std::uint64_t site_index = sites_seen_++;
    if (!injecting_) return std::nullopt;
    if (!rates_only_) return consider_planned(kind, site_index);
    if ((armed_kinds_ & (1U << static_cast<std::uint32_t>(kind))) == 0) return std::nullopt;
    if (prng_.chance(plan_.rate(kind))) return Verdict{};
    return std::nullopt;
  }

  // The parameter of a fault to inject, in [low, high]: the verdict's (clamped into range) or a draw.
  std::uint64_t choose(const Verdict& verdict, std::uint64_t low, std::uint64_t high);

  // Logs a fault that was really told and returns its tagged error.
  Error record(FaultKind kind, std::uint64_t parameter);

  // The error every injected fault of `kind` carries (injected = true).
  static Error error_of(FaultKind kind);
  // The error of a call on a context the injector has declared lost.
  static Error lost_error();

  void set_injecting(bool injecting) { injecting_ = injecting; }
  bool injecting() const { return injecting_; }

  const Plan& plan() const { return plan_; }
  std::uint64_t calls() const { return calls_; }
  std::uint64_t sites_seen() const { return sites_seen_; }
  std::uint64_t call_index() const { return call_index_; }
  Site site() const { return site_; }
  const std::vector<InjectedFault>& injected() const { return injected_; }
  std::uint64_t injected_count(FaultKind kind) const { return counts_[static_cast<std::uint32_t>(kind)]; }
  // Replay entries whose call passed without the fault being told: a divergence from the recording.
  std::uint64_t replay_unapplied() const;

 private:
  // consider() for a plan that replays, scripts or counts sites to fail.
  std::optional<Verdict> consider_planned(FaultKind kind, std::uint64_t site_index);
  std::optional<Verdict> consider_replay(FaultKind kind) const;
  std::optional<Verdict> consider_script(FaultKind kind) const;

  Plan plan_;
  Prng prng_;
  bool injecting_ = true;
  // Fixed at construction (the plan never changes): no replay, script or failing site, so consider() only
  // consults the rates; and the bit of every kind whose rate is nonzero and whose family is enabled.
  bool rates_only_ = false;
  std::uint32_t armed_kinds_ = 0;
  std::uint64_t calls_ = 0;
  std::uint64_t call_index_ = 0;
  Site site_ = Site::DeviceInfo;
  std::array<std::uint64_t, kSiteCount> site_calls_ = {};
  std::uint64_t sites_seen_ = 0;
  std::size_t replay_next_ = 0;
  std::uint64_t replay_skipped_ = 0;
  std::vector<InjectedFault> injected_;
  std::array<std::uint64_t, kFaultKindCount> counts_ = {};
};

}  // namespace quiesce::faults
