// The two HIL parts that need modules cuda/ may not depend on, as hil_command wants them: the simulator as
// the differential reference, and the fault campaign through Validator<faults::Injector<cuda::Device>>.
// `quiesce hil` (cli/) can supply the same two functions.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "quiesce/core/digest.h"
#include "quiesce/core/validator.h"
#include "quiesce/cuda/hil.h"
#include "quiesce/cuda/prediction.h"
#include "quiesce/faults/injector.h"
#include "quiesce/properties/engine_workload.h"
#include "quiesce/properties/raw_workload.h"
#include "quiesce/sim/config.h"
#include "quiesce/sim/device.h"

namespace quiesce::hil {

// A fresh simulated device per script, seeded from the script (the script itself is seed-determined).
inline cuda::ScriptLog run_on_simulator(const cuda::Script& script) {
  sim::Config config;
  config.seed = script.options.seed;
  sim::Device device(config);
  cuda::ScriptLog log = cuda::run_script(device, script);
  for (const sim::Finding& finding : device.findings()) {
    log.records.push_back(cuda::ScriptRecord{UINT32_MAX, "simulator oracle finding", {}, finding.message});
  }
  return log;
}

// Owns the GPU device the injector wraps (the injector keeps a reference to its inner backend).
struct OwnedGpu {
  explicit OwnedGpu(int ordinal) : device(open(ordinal)) {}
  static cuda::Device open(int ordinal) {
    cuda::DeviceOptions options;
    options.ordinal = ordinal;
    return std::move(cuda::Device::open(options)).value();
  }
  cuda::Device device;
};

class InjectedGpu : private OwnedGpu, public faults::Injector<cuda::Device> {
 public:
  InjectedGpu(int ordinal, faults::Plan plan)
      : OwnedGpu(ordinal), faults::Injector<cuda::Device>(OwnedGpu::device, std::move(plan)) {}
  bool device_loss_injected() const {
    for (const faults::InjectedFault& fault : injected()) {
      if (fault.kind == faults::FaultKind::DeviceLost) return true;
    }
    return false;
  }
};

// The raw seeded workload (properties/raw_workload.h) through Validator<Injector<cuda::Device>>, one run per
// seed under the default fault plan: every read checked against the workload's model, zero contract
// violations (leaks included unless the injector made the device lost), nothing leaked after liveness.
// The genuine faulting kernel stays off: on the GPU it would poison the whole process.
inline std::vector<cuda::CheckResult> fault_campaign(int ordinal, std::ostream& log, std::uint64_t seed = 20261202,
                                                     std::uint32_t runs = 4) {
  std::vector<cuda::CheckResult> checks;
  for (std::uint32_t run = 0; run < runs; ++run) {
    faults::Plan plan = faults::Plan::standard();
    plan.seed = seed + run;
    Validator<InjectedGpu> stack(ValidatorOptions{}, ordinal, plan);
    properties::RawWorkloadOptions options;
    options.seed = seed + run;
    options.operations = 600;
    options.device_fault = Ratio::never();
    options.wait_timeout_ns = 2'000'000'000;
    Digest digest;
    const properties::RawWorkloadStats stats = properties::run_raw_workload(stack, options, digest);
    const bool lost = stack.inner().device_loss_injected();
    std::string violations;
    for (const Violation& violation : stack.violations()) violations += "\n      " + describe_violation(violation);
    if (!lost) {
      for (const Violation& violation : stack.end_of_run()) violations += "\n      " + describe_violation(violation);
    }
    std::ostringstream summary;
    properties::print_stats(stats, summary);
    log << "   fault campaign seed " << seed + run << ": " << stack.inner().injected().size() << " injected fault(s)\n";
    std::string problems;
    for (const std::string& problem : stats.problems) problems += "\n      " + problem;
    checks.push_back(cuda::CheckResult{
        "fault campaign seed " + std::to_string(seed + run) + " (raw workload, Validator<Injector<cuda::Device>>)",
        stats.clean() && violations.empty(),
        std::to_string(stats.operations) + " operations, " + std::to_string(stats.reads_checked) + " reads checked, " +
            std::to_string(stack.inner().injected().size()) + " faults injected" +
            (lost ? " (device loss among them)" : "") + (violations.empty() ? ", no violation" : ", violations:" + violations) +
            problems});
  }
  return checks;
}

// The simulator's prediction per command class: a sim::Device loaded with the cost profile (no cost jitter,
// so the figure is the model's own), the probes of cuda/prediction.h timed on its virtual clock.
inline Result<std::vector<cuda::ClassTiming>, std::string> predict_on_simulator(const std::string& profile_text) {
  Result<sim::CostProfile, std::string> profile = sim::load_cost_profile(profile_text);
  if (!profile.ok()) return profile.error();
  sim::Config config;
  config.seed = 20261202;
  config.costs = profile.value();
  config.cost_jitter = Ratio{0, 1};
  sim::Device device(config);
  return cuda::time_command_classes(device, [&device] { return device.clock().now_ns(); });
}

// The engine workload (properties/engine_workload.h) on the GPU: quiesce::Engine over
// Validator<faults::Injector<cuda::Device>> in real time (RealEnv), one run per seed under the default
// fault plan; injection stops for the liveness phase. Every read is checked against the workload's host
// model; the run must be clean (no data failure, no broken engine promise, liveness reached, shutdown
// clean) with zero contract violations. The genuine faulting kernel stays off (it would poison the
// process); the sticky fault under the engine is its own check, in a child process.
inline std::vector<cuda::CheckResult> engine_fault_campaign(int ordinal, std::ostream& log,
                                                            std::uint64_t seed = 20261202, std::uint32_t runs = 4,
                                                            std::uint32_t operations = 400) {
  std::vector<cuda::CheckResult> checks;
  for (std::uint32_t run = 0; run < runs; ++run) {
    faults::Plan plan = faults::Plan::standard();
    plan.seed = seed + run;
    Validator<InjectedGpu> stack(ValidatorOptions{}, ordinal, plan);
    RealEnv env;
    properties::EngineWorkloadOptions options;
    options.seed = seed + run;
    options.operations = operations;
    options.device_fault = Ratio::never();
    options.program_resident_bytes = 1ULL << 20U;  // the GPU's builtin module image is about 19 KB
    options.wait_timeout_ns = 2'000'000'000;
    options.liveness_timeout_ns = 60'000'000'000;
    options.on_liveness = [&stack] { stack.inner().set_injecting(false); };
    Digest digest;
    const properties::EngineWorkloadResult result = properties::run_engine_workload(stack, env, options, digest);
    const std::uint64_t violation_count = stack.finish();
    std::string violations;
    for (const Violation& violation : stack.violations()) violations += "\n      " + describe_violation(violation);
    std::string problems;
    for (const std::string& problem : result.problems) problems += "\n      " + problem;
    for (const std::string& failure : result.data_failures) problems += "\n      data: " + failure;
    if (!result.liveness.ok()) problems += "\n      liveness: " + describe_error(result.liveness.error());
    if (!result.shutdown.clean()) problems += "\n      " + result.shutdown.describe();
    const std::size_t injected = stack.inner().injected().size();
    log << "   engine fault campaign seed " << seed + run << ": " << injected << " injected fault(s), "
        << result.engine.device_losses << " device loss(es), " << result.engine.recoveries << " recover(ies)\n";
    checks.push_back(cuda::CheckResult{
        "engine fault campaign seed " + std::to_string(seed + run) +
            " (engine workload, Engine over Validator<Injector<cuda::Device>>)",
        result.clean() && violation_count == 0,
        std::to_string(result.operations) + " operations, " + std::to_string(result.reads_checked) + " reads (" +
            std::to_string(result.bytes_checked) + " known bytes) checked, " + std::to_string(result.launches) +
            " launches, " + std::to_string(result.batches) + " batches, " + std::to_string(result.replays) +
            " replays, " + std::to_string(result.failures_surfaced) + " failures surfaced, " +
            std::to_string(injected) + " faults injected, " + std::to_string(result.engine.device_losses) +
            " device losses and " + std::to_string(result.engine.recoveries) + " recoveries" +
            (violations.empty() ? ", no violation" : ", violations:" + violations) + problems});
  }
  return checks;
}

}  // namespace quiesce::hil
