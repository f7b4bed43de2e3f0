// The Decider: numbering of calls and fault sites, the injection decision, parameters and the fault log.
#include "quiesce/faults/decider.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>
#include <utility>

namespace quiesce::faults {
namespace {

constexpr Error injected_error(ErrorKind kind, bool retryable, std::string_view what) {
  return Error{kind, NativeDomain::None, 0, true, retryable, what};
}

constexpr std::array<Error, kFaultKindCount> kErrors = {
    injected_error(ErrorKind::Busy, true, "injected fault: the submission was rejected; nothing ran"),
    injected_error(ErrorKind::Timeout, true, "injected fault: admission timed out before the queue had room"),
    injected_error(ErrorKind::Internal, false, "injected fault: the outcome of a real submission was lost"),
    injected_error(ErrorKind::Internal, false, "injected fault: only a prefix of the batch was submitted"),
    injected_error(ErrorKind::Internal, false, "injected fault: the event's state could not be observed"),
    injected_error(ErrorKind::Internal, false, "injected fault: the wait could not prove quiescence"),
    injected_error(ErrorKind::Internal, false, "injected fault: the completion is reported late"),
    injected_error(ErrorKind::Internal, false, "injected fault: the launch failed asynchronously"),
    injected_error(ErrorKind::Busy, true, "injected fault: the release was refused; the handle is still live"),
    injected_error(ErrorKind::Internal, false, "injected fault: the release may or may not have happened"),
    injected_error(ErrorKind::OutOfMemory, true, "injected fault: the device is out of memory"),
    injected_error(ErrorKind::Internal, false, "injected fault: the program failed to load"),
    injected_error(ErrorKind::Internal, true, "injected fault: the write failed part-way"),
    injected_error(ErrorKind::Internal, true, "injected fault: the read failed part-way"),
    injected_error(ErrorKind::Busy, false, "injected fault: cancellation lost the race; the work finishes"),
    injected_error(ErrorKind::DeviceLost, false, "injected fault: the context is lost (sticky device fault)"),
};

}  // namespace

Decider::Decider(Plan plan) : plan_(std::move(plan)), prng_(Prng(plan_.seed).derive("faults.injector")) {
  if (plan_.swarm_from_seed) apply_swarm(plan_, plan_.seed);
  std::stable_sort(plan_.replay_faults.begin(), plan_.replay_faults.end(),
                   [](const InjectedFault& a, const InjectedFault& b) { return a.call_index < b.call_index; });
  assert(!plan_.swarm_from_seed);
  static_assert(kFaultKindCount <= 32, "armed_kinds_ holds one bit per fault kind");
  rates_only_ = !plan_.replaying && plan_.script.empty() && !plan_.failing_site.has_value();
  for (std::uint32_t index = 0; index < kFaultKindCount; ++index) {
    const auto kind = static_cast<FaultKind>(index);
    if (plan_.family_enabled(family_of(kind)) && plan_.rate(kind).numerator != 0) armed_kinds_ |= 1U << index;
  }
}

std::optional<Verdict> Decider::consider_planned(FaultKind kind, std::uint64_t site_index) {
  if (plan_.replaying) return consider_replay(kind);
  if (const auto scripted = consider_script(kind)) return scripted;
  if (plan_.failing_site.has_value() && *plan_.failing_site == site_index) return Verdict{};
  if (!plan_.family_enabled(family_of(kind))) return std::nullopt;
  const Ratio rate = plan_.rate(kind);
  if (rate.numerator == 0) return std::nullopt;
  if (prng_.chance(rate)) return Verdict{};
  return std::nullopt;
}

std::optional<Verdict> Decider::consider_replay(FaultKind kind) const {
  if (replay_next_ >= plan_.replay_faults.size()) return std::nullopt;
  const InjectedFault& next = plan_.replay_faults[replay_next_];
  if (next.call_index != call_index_ || next.kind != kind) return std::nullopt;
  return Verdict{next.parameter};
}

std::optional<Verdict> Decider::consider_script(FaultKind kind) const {
  const std::uint64_t ordinal = site_calls_[static_cast<std::uint32_t>(site_)];
  for (const ScriptedFault& scripted : plan_.script) {
    if (scripted.site == site_ && scripted.ordinal == ordinal && scripted.kind == kind) {
      return Verdict{scripted.parameter};
    }
  }
  return std::nullopt;
}

std::uint64_t Decider::choose(const Verdict& verdict, std::uint64_t low, std::uint64_t high) {
  assert(low <= high);
  if (verdict.parameter.has_value()) return std::clamp(*verdict.parameter, low, high);
  return prng_.range(low, high);
}

Error Decider::record(FaultKind kind, std::uint64_t parameter) {
  const auto kind_index = static_cast<std::uint32_t>(kind);
  assert(kind_index < kFaultKindCount);
  const std::uint64_t ordinal = site_calls_[static_cast<std::uint32_t>(site_)];
  if (injected_.size() >= kInjectedMax) {
    throw std::length_error("the fault injector has logged " + std::to_string(injected_.size()) +
                            " faults, its bound; lower the plan's rates or shorten the run");
  }
  injected_.push_back(InjectedFault{call_index_, site_, ordinal, kind, parameter});
  counts_[kind_index]++;
  if (plan_.replaying && replay_next_ < plan_.replay_faults.size()) {
    const InjectedFault& next = plan_.replay_faults[replay_next_];
    if (next.call_index == call_index_ && next.kind == kind) replay_next_++;
  }
  return kErrors[kind_index];
}

Error Decider::error_of(FaultKind kind) {
  const auto kind_index = static_cast<std::uint32_t>(kind);
  assert(kind_index < kFaultKindCount);
  return kErrors[kind_index];
}

Error Decider::lost_error() { return kErrors[static_cast<std::uint32_t>(FaultKind::DeviceLost)]; }

std::uint64_t Decider::replay_unapplied() const {
  std::uint64_t unapplied = replay_skipped_;
  for (std::size_t index = replay_next_; index < plan_.replay_faults.size(); ++index) {
    if (plan_.replay_faults[index].call_index < calls_) unapplied++;
  }
  return unapplied;
}

}  // namespace quiesce::faults
