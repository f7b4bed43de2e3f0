// The conformance suite on the real GPU: cuda::Device through the CUDA Driver API.
//
// On a machine without a driver every test is skipped with the reason ("no CUDA driver: ..."): a global
// environment calls GTEST_SKIP before any test runs, so this binary starts and reports cleanly anywhere.
// On the GPU host (the HIL bundle) it runs the whole suite against the hardware.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "conformance_suite.h"
#include "quiesce/cuda/device.h"

namespace quiesce::conformance {

struct CudaFixture {
  using Backend = quiesce::cuda::Device;
  static constexpr bool kMayInjectFaults = false;
  static constexpr bool kHoldsWorkUntilDriven = false;  // real hardware runs work on its own
  static constexpr std::uint64_t kLongWorkNs = 500'000'000;   // a delay kernel that stays pending meanwhile
  static constexpr std::uint64_t kWaitTimeoutNs = 30'000'000'000;

  static std::unique_ptr<Backend> make() {
    auto device = quiesce::cuda::Device::open();
    if (!device.ok()) return nullptr;  // unreachable: the environment skipped every test without a driver
    return std::make_unique<Backend>(std::move(device).value());
  }
  // Real work needs no driving; a short pause lets stray work finish before the teardown checks.
  static void settle(Backend& backend) {
    (void)backend;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
};

QUIESCE_INSTANTIATE_CONFORMANCE(Cuda, CudaFixture);

namespace {

class CudaDriverEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto driver = quiesce::cuda::Driver::load();
    if (!driver.ok()) GTEST_SKIP() << driver.error().message();
  }
};

}  // namespace
}  // namespace quiesce::conformance

// This binary's own main (the linker then leaves gtest_main's out): the driver check runs first.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new quiesce::conformance::CudaDriverEnvironment());
  return RUN_ALL_TESTS();
}
