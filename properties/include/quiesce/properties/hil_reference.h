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
#include "quiesce/faults/injector.h"
#include "quiesce/properties/raw_workload.h"
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

}  // namespace quiesce::hil
