// One seeded engine workload on the simulator, bare or under Validator<Injector<sim::Device>> with a
// built-in fault plan, and the verdict every engine test asks of it.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "quiesce/core/engine.h"
#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/faults/plan.h"
#include "quiesce/properties/engine_workload.h"
#include "quiesce/sim/device.h"
#include "quiesce/sim/fiber_env.h"

namespace quiesce::test {

struct EngineRunVerdict {
  properties::EngineWorkloadResult result;
  std::uint64_t violations = 0;
  std::uint64_t findings = 0;
  std::uint64_t injected = 0;
  std::uint64_t digest = 0;
  std::string report;  // the workload result, every violation and every finding, for a failure message

  bool held() const { return result.clean() && violations == 0 && findings == 0; }
};

inline properties::EngineWorkloadOptions workload_options(std::uint64_t seed, std::uint32_t operations) {
  properties::EngineWorkloadOptions options;
  options.seed = seed;
  options.operations = operations;
  return options;
}

// The bare simulator: no injector, no validator.
inline EngineRunVerdict run_engine_on_sim(std::uint64_t seed, std::uint32_t operations) {
  sim::Config config;
  config.seed = seed;
  sim::Device device(config);
  sim::FiberEnv env(device.clock(), sim::Schedule::from_seed(seed));
  Digest digest;
  EngineRunVerdict verdict;
  verdict.result = properties::run_engine_workload(device, env, workload_options(seed, operations), digest);
  verdict.findings = device.findings().size();
  digest.add(device.digest());
  verdict.digest = digest.value();
  std::ostringstream out;
  properties::print_result(verdict.result, out);
  for (const sim::Finding& finding : device.findings()) out << "finding: " << finding.message << "\n";
  verdict.report = out.str();
  return verdict;
}

// Validator<Injector<sim::Device>> under the named built-in plan; injection stops for the liveness phase.
inline EngineRunVerdict run_engine_under_plan(std::string_view plan_name, std::uint64_t seed,
                                              std::uint32_t operations) {
  sim::Config config;
  config.seed = seed;
  sim::Device device(config);
  std::optional<faults::Plan> plan = faults::builtin_plan(plan_name);
  EngineRunVerdict verdict;
  if (!plan) {
    verdict.report = "no built-in plan is named " + std::string(plan_name);
    verdict.violations = 1;
    return verdict;
  }
  Validator<faults::Injector<sim::Device>> stack(ValidatorOptions{}, device, *plan, seed);
  sim::FiberEnv env(device.clock(), sim::Schedule::from_seed(seed));
  properties::EngineWorkloadOptions options = workload_options(seed, operations);
  options.on_liveness = [&stack] { stack.inner().set_injecting(false); };
  Digest digest;
  verdict.result = properties::run_engine_workload(stack, env, options, digest);
  verdict.violations = stack.finish();
  verdict.findings = device.findings().size();
  verdict.injected = stack.inner().injected().size();
  digest.add(device.digest());
  verdict.digest = digest.value();
  std::ostringstream out;
  properties::print_result(verdict.result, out);
  for (const Violation& violation : stack.violations()) out << "violation: " << stack.describe(violation) << "\n";
  for (const sim::Finding& finding : device.findings()) out << "finding: " << finding.message << "\n";
  verdict.report = out.str();
  return verdict;
}

}  // namespace quiesce::test
