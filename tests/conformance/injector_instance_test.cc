// The conformance suite through faults::Injector<sim::Device>, once per built-in plan.
//
// Under "none" the injector must be invisible: the strict suite (kMayInjectFaults = false) passes, every
// outcome the plain successful one. Under "default" and "all" it lies, and every lie must be an outcome the
// contract allows: the harness tolerates exactly those (rejections retried, indeterminate results waited on
// or never retried, device loss ending the test) and still asserts each branch's guarantee. After every
// test the simulator's oracle must report no finding: the lies never made the suite's legal use unsafe.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "conformance_suite.h"
#include "quiesce/faults/injector.h"
#include "quiesce/sim/device.h"

namespace quiesce::conformance {

// Owns the simulated device that the injector wraps (the injector holds a reference to its inner backend,
// so the device is a base initialised before it and destroyed after it).
struct OwnedDevice {
  sim::Device device;
};

class InjectedSim : private OwnedDevice, public faults::Injector<sim::Device> {
 public:
  explicit InjectedSim(faults::Plan plan) : faults::Injector<sim::Device>(OwnedDevice::device, std::move(plan)) {}
  sim::Device& device() { return OwnedDevice::device; }
  const sim::Device& device() const { return OwnedDevice::device; }
};

static_assert(Backend<faults::Injector<sim::Device>>);
static_assert(Backend<InjectedSim>);

enum class BuiltinPlan { None, Default, All };

template <BuiltinPlan kPlan>
struct InjectorFixture {
  using Backend = InjectedSim;
  static constexpr bool kMayInjectFaults = kPlan != BuiltinPlan::None;
  static constexpr bool kHoldsWorkUntilDriven = true;  // the simulator's work waits for its virtual clock
  static constexpr std::uint64_t kSeed = 20261202;
  static constexpr std::uint64_t kSettleEventsMax = 10'000'000;

  static std::unique_ptr<Backend> make() {
    faults::Plan plan = kPlan == BuiltinPlan::None      ? faults::Plan::none()
                        : kPlan == BuiltinPlan::Default ? faults::Plan::standard()
                                                        : faults::Plan::all();
    plan.seed = kSeed;
    return std::make_unique<Backend>(std::move(plan));
  }
  static void settle(Backend& backend) { (void)backend.device().run_until_idle(kSettleEventsMax); }
  static std::string findings(const Backend& backend) {
    std::string report;
    for (const sim::Finding& finding : backend.device().findings()) report += finding.message + "\n";
    return report;
  }
};

using InjectorNone = InjectorFixture<BuiltinPlan::None>;
using InjectorDefault = InjectorFixture<BuiltinPlan::Default>;
using InjectorAll = InjectorFixture<BuiltinPlan::All>;

QUIESCE_INSTANTIATE_CONFORMANCE(Injector, InjectorNone, InjectorDefault, InjectorAll);

}  // namespace quiesce::conformance
