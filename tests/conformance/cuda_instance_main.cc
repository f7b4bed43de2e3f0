// The main of the quiesce_conformance_cuda test binary (the linker then leaves gtest_main's out): without a
// CUDA driver a global environment skips every case with the reason before any runs, so the binary starts
// and reports cleanly on any machine. (`quiesce conformance --backend cuda` checks for the driver itself.)
#include <gtest/gtest.h>

#include "quiesce/cuda/driver.h"

namespace quiesce::conformance {
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

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new quiesce::conformance::CudaDriverEnvironment());
  return RUN_ALL_TESTS();
}
