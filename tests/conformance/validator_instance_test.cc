// The conformance suite through the contract validator: Validator<sim::Device>, and
// Validator<faults::Injector<sim::Device>> under each built-in fault plan.
//
// The legal-use suites make only calls the contract allows, so after every test the validator must hold
// zero violations, counting the end-of-run checks (leaked handles, open capture windows), and the
// simulator's oracle zero findings. Under injected faults a device loss ends a test early with its
// handles still live (nothing on a lost context can be released), so the leak checks are skipped for a test
// in which the injector made the device lost; every other check stays. The misuse suite breaks one caller
// obligation per test on purpose: there the validator (collecting, so the backend still answers the way
// the suite checks) must report at least one caller violation and no provider violation.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "conformance_suite.h"
#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/sim/device.h"

namespace quiesce::conformance {
namespace {

constexpr std::uint64_t kSettleEventsMax = 10'000'000;

std::string sim_findings(const sim::Device& device) {
  std::string report;
  for (const sim::Finding& finding : device.findings()) report += "sim finding: " + finding.message + "\n";
  return report;
}

std::string violation_lines(const std::vector<Violation>& violations, bool providers_only) {
  std::string report;
  for (const Violation& violation : violations) {
    if (providers_only && rule_info(violation.rule).party == Party::Caller) continue;
    report += describe_violation(violation) + "\n";
  }
  return report;
}

// Every violation so far plus what finish() would add now (or only the former when `with_leaks` is false).
template <class V>
std::string all_violations(const V& validator, bool with_leaks) {
  std::string report = violation_lines(validator.violations(), false);
  if (with_leaks) report += violation_lines(validator.end_of_run(), false);
  return report;
}

// Owns the simulated device the injector wraps (the injector holds a reference to its inner backend, so the
// device is a base initialised before it and destroyed after it).
struct OwnedDevice {
  sim::Device device;
};

class InjectedDevice : private OwnedDevice, public faults::Injector<sim::Device> {
 public:
  explicit InjectedDevice(faults::Plan plan) : faults::Injector<sim::Device>(OwnedDevice::device, std::move(plan)) {}
  sim::Device& device() { return OwnedDevice::device; }
  const sim::Device& device() const { return OwnedDevice::device; }

  bool device_loss_injected() const {
    for (const faults::InjectedFault& fault : injected()) {
      if (fault.kind == faults::FaultKind::DeviceLost) return true;
    }
    return false;
  }
};

static_assert(Backend<Validator<sim::Device>>);
static_assert(Backend<Validator<InjectedDevice>>);
static_assert(Backend<Validator<faults::Injector<sim::Device>>>);

// ---- the validator over the bare simulator ----

template <ViolationMode kMode>
struct ValidatedSimFixture {
  using Backend = Validator<sim::Device>;
  static constexpr bool kMayInjectFaults = false;
  static constexpr bool kHoldsWorkUntilDriven = true;

  static std::unique_ptr<Backend> make() { return std::make_unique<Backend>(ValidatorOptions{.mode = kMode}); }
  static void settle(Backend& backend) { (void)backend.inner().run_until_idle(kSettleEventsMax); }
  static std::string findings(const Backend& backend) {
    std::string report = sim_findings(backend.inner());
    if constexpr (kMode == ViolationMode::StopAtFirst) {
      report += all_violations(backend, true);  // legal use: not one violation, leaks included
    } else {
      report += violation_lines(backend.violations(), true);  // misuse: no provider violation ...
      bool caller_reported = false;
      for (const Violation& violation : backend.violations()) {
        caller_reported = caller_reported || rule_info(violation.rule).party == Party::Caller;
      }
      if (!caller_reported) report += "the validator reported no caller violation for a deliberate misuse\n";
    }
    return report;
  }
};

using ValidatedSim = ValidatedSimFixture<ViolationMode::StopAtFirst>;
using ValidatedSimCollecting = ValidatedSimFixture<ViolationMode::CollectAll>;

// ---- the validator over the injector over the simulator, per built-in plan ----

enum class BuiltinPlan { None, Default, All };

template <BuiltinPlan kPlan>
struct ValidatedInjectorFixture {
  using Backend = Validator<InjectedDevice>;
  static constexpr bool kMayInjectFaults = kPlan != BuiltinPlan::None;
  static constexpr bool kHoldsWorkUntilDriven = true;
  static constexpr std::uint64_t kSeed = 20261202;

  static std::unique_ptr<Backend> make() {
    faults::Plan plan = kPlan == BuiltinPlan::None      ? faults::Plan::none()
                        : kPlan == BuiltinPlan::Default ? faults::Plan::standard()
                                                        : faults::Plan::all();
    plan.seed = kSeed;
    return std::make_unique<Backend>(ValidatorOptions{}, std::move(plan));
  }
  static void settle(Backend& backend) { (void)backend.inner().device().run_until_idle(kSettleEventsMax); }
  static std::string findings(const Backend& backend) {
    const bool lost = backend.inner().device_loss_injected();
    return sim_findings(backend.inner().device()) + all_violations(backend, !lost);
  }
};

using ValidatedInjectorNone = ValidatedInjectorFixture<BuiltinPlan::None>;
using ValidatedInjectorDefault = ValidatedInjectorFixture<BuiltinPlan::Default>;
using ValidatedInjectorAll = ValidatedInjectorFixture<BuiltinPlan::All>;

}  // namespace

QUIESCE_INSTANTIATE_CONFORMANCE_LEGAL_USE(Validator, ValidatedSim, ValidatedInjectorNone, ValidatedInjectorDefault,
                                          ValidatedInjectorAll);
QUIESCE_INSTANTIATE_CONFORMANCE_MISUSE(ValidatorMisuse, ValidatedSimCollecting);

}  // namespace quiesce::conformance
