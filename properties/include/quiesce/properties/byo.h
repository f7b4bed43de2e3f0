// Bring your own runtime: put a runtime written against the Backend concept under the same campaigns as
// quiesce's own workloads (docs/properties.md, examples/my_runtime/).
//
// The runtime is any callable `(UserStack& backend, std::uint64_t seed, const std::function<void()>&
// on_liveness)`. It drives the stack as it likes (its own seeded choices come from `seed`), calls
// `on_liveness()` once when its safety phase is over (fault injection stops there), and must then release
// everything it holds, or discard the context. The verdict comes from outside the runtime: the Validator's
// caller and provider rules (its end-of-run check reports every handle still live, R19), the simulator's
// oracle (ground truth of what the device touched), and, every `determinism_every`-th seed, a second run
// that must leave the device in the same state (R20). Each failure names its invariant (cases.h mappings).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/properties/campaign.h"
#include "quiesce/properties/cases.h"
#include "quiesce/sim/device.h"

namespace quiesce::properties {

// The stack a user's runtime runs on: the validator over the fault injector over the simulated device.
using UserStack = Validator<faults::Injector<sim::Device>>;

struct UserCaseOptions {
  faults::Plan plan = faults::Plan::standard();
  bool swarm = true;                    // switch fault families off per seed (swarm testing)
  std::uint32_t determinism_every = 0;  // every n-th seed runs twice and must end in the same device state
  sim::Config device = {};              // its seed is replaced by the case's seed
};

namespace byo_detail {

template <class Runtime>
std::uint64_t run_user_once(std::uint64_t seed, const UserCaseOptions& options, Runtime& runtime,
                            CaseResult& result) {
  sim::Config config = options.device;
  config.seed = seed;
  sim::Device device(config);
  faults::Plan plan = options.plan;
  if (options.swarm) faults::apply_swarm(plan, seed);
  UserStack stack(ValidatorOptions{ViolationMode::CollectAll}, device, std::move(plan), Prng(seed).derive("faults"));
  const std::function<void()> on_liveness = [&stack] { stack.inner().set_injecting(false); };
  runtime(stack, seed, on_liveness);
  stack.inner().set_injecting(false);
  result.violations = stack.finish();
  result.findings = device.findings().size();
  for (const Violation& violation : stack.violations()) {
    result.failures.push_back(Failure{invariant_of(violation.rule), stack.describe(violation)});
  }
  for (const sim::Finding& finding : device.findings()) {
    result.failures.push_back(Failure{invariant_of(finding.kind), finding.message});
  }
  if (!stack.inner().injected().empty()) result.probes_hit.emplace_back("fault injected");
  return device.digest();
}

}  // namespace byo_detail

// One case of a user's runtime on the simulated stack, judged by the validator, the oracle and a leak check.
template <class Runtime>
CaseResult run_user_case(std::uint64_t seed, const UserCaseOptions& options, Runtime&& runtime) {
  CaseResult result;
  result.seed = seed;
  result.digest = byo_detail::run_user_once(seed, options, runtime, result);
  if (options.determinism_every != 0 && seed % options.determinism_every == 0) {
    CaseResult again;
    const std::uint64_t digest = byo_detail::run_user_once(seed, options, runtime, again);
    if (digest != result.digest) {
      result.failures.push_back(Failure{Invariant::R20, "seed " + std::to_string(seed) + " left the device in state " +
                                                            to_hex(result.digest) + " and then in " + to_hex(digest)});
    }
  }
  return result;
}

// A whole campaign of a user's runtime (seed range, jobs, shards, reports: campaign.h). The runtime is
// called from `campaign.jobs` threads at once, each with its own stack, so it must not share mutable state.
template <class Runtime>
CampaignReport run_user_campaign(const CampaignOptions& campaign, const UserCaseOptions& options, Runtime runtime) {
  return run_campaign(campaign, [&](std::uint64_t seed) { return run_user_case(seed, options, runtime); });
}

}  // namespace quiesce::properties
