// Built-in plans, swarm testing and the plan's accessors.
#include "quiesce/faults/plan.h"

#include <cassert>
#include <utility>

namespace quiesce::faults {
namespace {

struct RateEntry {
  FaultKind kind;
  Ratio standard;
  Ratio all;
};

// Moderate rates for "default"; several times higher for "all". Device loss ends a context, so it stays
// rare in both: a run must still get work done between losses.
constexpr RateEntry kBuiltinRates[kFaultKindCount] = {
    {FaultKind::SubmitRejected, {1, 100}, {1, 10}},
    {FaultKind::AdmissionTimeout, {1, 200}, {1, 20}},
    {FaultKind::SubmitIndeterminate, {1, 200}, {1, 20}},
    {FaultKind::PartialSubmit, {1, 200}, {1, 20}},
    {FaultKind::PollIndeterminate, {1, 50}, {1, 8}},
    {FaultKind::WaitIndeterminate, {1, 100}, {1, 10}},
    {FaultKind::DelayedCompletion, {1, 20}, {1, 4}},
    {FaultKind::AsyncLaunchFailure, {1, 200}, {1, 20}},
    {FaultKind::ReleaseRejected, {1, 50}, {1, 8}},
    {FaultKind::ReleaseIndeterminate, {1, 200}, {1, 20}},
    {FaultKind::AllocationFailure, {1, 100}, {1, 10}},
    {FaultKind::ProgramLoadFailure, {1, 100}, {1, 10}},
    {FaultKind::PartialWrite, {1, 100}, {1, 10}},
    {FaultKind::PartialRead, {1, 100}, {1, 10}},
    {FaultKind::CancelLost, {1, 10}, {1, 3}},
    {FaultKind::DeviceLost, {1, 5000}, {1, 500}},
};

}  // namespace

Plan Plan::none() { return Plan{}; }

Plan Plan::standard() {
  Plan plan;
  for (const RateEntry& entry : kBuiltinRates) plan.set_rate(entry.kind, entry.standard);
  return plan;
}

Plan Plan::all() {
  Plan plan;
  for (const RateEntry& entry : kBuiltinRates) plan.set_rate(entry.kind, entry.all);
  return plan;
}

Plan Plan::swarm(std::uint64_t seed) {
  Plan plan = standard();
  plan.seed = seed;
  apply_swarm(plan, seed);
  return plan;
}

Plan Plan::fail_site(std::uint64_t site_index) {
  Plan plan;
  plan.failing_site = site_index;
  return plan;
}

Plan Plan::replay(std::vector<InjectedFault> faults) {
  Plan plan;
  plan.replaying = true;
  plan.replay_faults = std::move(faults);
  return plan;
}

Plan& Plan::set_rate(FaultKind kind, Ratio rate) {
  assert(rate.denominator > 0);
  assert(rate.numerator <= rate.denominator);
  rates[static_cast<std::uint32_t>(kind)] = rate;
  return *this;
}

bool Plan::family_enabled(FaultFamily family) const {
  return (families_enabled & (1U << static_cast<std::uint32_t>(family))) != 0;
}

bool Plan::command_kind_enabled(CommandKind kind) const {
  return (command_kinds_enabled & (1U << static_cast<std::uint32_t>(kind))) != 0;
}

void apply_swarm(Plan& plan, std::uint64_t seed) {
  Prng prng(Prng(seed).derive("faults.swarm"));
  std::uint32_t families = 0;
  for (std::uint32_t family = 0; family < kFaultFamilyCount; ++family) {
    if (prng.coin()) families |= 1U << family;
  }
  if (families == 0) families = 1U << prng.below(kFaultFamilyCount);
  std::uint32_t command_kinds = 0;
  for (std::uint32_t kind = 0; kind < kCommandKindCount; ++kind) {
    if (prng.coin()) command_kinds |= 1U << kind;
  }
  if (command_kinds == 0) command_kinds = 1U << prng.below(kCommandKindCount);
  plan.families_enabled = families;
  plan.command_kinds_enabled = command_kinds;
  plan.swarm_from_seed = false;
  assert(plan.families_enabled != 0);
}

std::optional<Plan> builtin_plan(std::string_view name) {
  if (name == "none") return Plan::none();
  if (name == "default") return Plan::standard();
  if (name == "all") return Plan::all();
  return std::nullopt;
}

}  // namespace quiesce::faults
