// The conformance suite on the real GPU: cuda::Device through the CUDA Driver API, and
// Validator<faults::Injector<cuda::Device>> under the "none" and "default" fault plans.
//
// The validated stacks run the legal-use suites: after every test the validator must hold zero violations,
// leak checks included unless the injector made the device lost (then the test ends early with handles
// live, as in validator_instance_test.cc). Under "default" the injector lies and every lie must be a legal
// outcome; the real GPU still runs the work underneath.
//
// The fixtures assume a GPU: whoever runs them checks for the driver first. The test binary's main
// (cuda_instance_main.cc) skips every test with the reason ("no CUDA driver: ...") on a machine without
// one, so it starts and reports cleanly anywhere; `quiesce conformance --backend cuda` and `quiesce hil`
// (conformance_runner.h) say that there is no driver instead of running. On the GPU host (the HIL bundle)
// the whole suite runs against the hardware.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "conformance_suite.h"
#include "quiesce/core/validator.h"
#include "quiesce/cuda/device.h"
#include "quiesce/faults/injector.h"

namespace quiesce::conformance {

struct CudaFixture {
  using Backend = quiesce::cuda::Device;
  static constexpr bool kMayInjectFaults = false;
  static constexpr bool kHoldsWorkUntilDriven = false;  // real hardware runs work on its own
  static constexpr std::uint64_t kLongWorkNs = 200'000'000;   // a delay kernel that stays pending meanwhile
  static constexpr std::uint64_t kWaitTimeoutNs = 30'000'000'000;

  static std::unique_ptr<Backend> make() {
    auto device = quiesce::cuda::Device::open();
    if (!device.ok()) return nullptr;  // the harness fails the case; callers check for a driver first
    return std::make_unique<Backend>(std::move(device).value());
  }
  // Real work needs no driving: settling is letting real time pass (the suite polls up to 64 settles, so
  // 10 ms each covers kLongWorkNs three times over).
  static void settle(Backend& backend) {
    (void)backend;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
};

QUIESCE_INSTANTIATE_CONFORMANCE(Cuda, CudaFixture);

namespace {

// Owns the GPU device the injector wraps (the injector keeps a reference to its inner backend, so the
// device is a base initialised before it and destroyed after it).
struct OwnedCudaDevice {
  quiesce::cuda::Device device = std::move(quiesce::cuda::Device::open()).value();
};

class InjectedCuda : private OwnedCudaDevice, public faults::Injector<quiesce::cuda::Device> {
 public:
  explicit InjectedCuda(faults::Plan plan)
      : faults::Injector<quiesce::cuda::Device>(OwnedCudaDevice::device, std::move(plan)) {}
  bool device_loss_injected() const {
    for (const faults::InjectedFault& fault : injected()) {
      if (fault.kind == faults::FaultKind::DeviceLost) return true;
    }
    return false;
  }
};

static_assert(Backend<Validator<InjectedCuda>>);

std::string violation_report(const Validator<InjectedCuda>& validator, bool with_leaks) {
  std::string report;
  for (const Violation& violation : validator.violations()) report += describe_violation(violation) + "\n";
  if (with_leaks) {
    for (const Violation& violation : validator.end_of_run()) report += describe_violation(violation) + "\n";
  }
  return report;
}

template <bool kInject>
struct ValidatedInjectedCudaFixture {
  using Backend = Validator<InjectedCuda>;
  static constexpr bool kMayInjectFaults = kInject;
  static constexpr bool kHoldsWorkUntilDriven = false;
  static constexpr std::uint64_t kLongWorkNs = 200'000'000;
  static constexpr std::uint64_t kWaitTimeoutNs = 30'000'000'000;
  static constexpr std::uint64_t kSeed = 20261202;

  static std::unique_ptr<Backend> make() {
    faults::Plan plan = kInject ? faults::Plan::standard() : faults::Plan::none();
    plan.seed = kSeed;
    return std::make_unique<Backend>(ValidatorOptions{}, std::move(plan));
  }
  static void settle(Backend& backend) {
    (void)backend;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  static std::string findings(const Backend& backend) {
    return violation_report(backend, !backend.inner().device_loss_injected());
  }
};

using ValidatedCudaNone = ValidatedInjectedCudaFixture<false>;
using ValidatedCudaDefault = ValidatedInjectedCudaFixture<true>;

}  // namespace

QUIESCE_INSTANTIATE_CONFORMANCE_LEGAL_USE(ValidatedCuda, ValidatedCudaNone, ValidatedCudaDefault);

}  // namespace quiesce::conformance

