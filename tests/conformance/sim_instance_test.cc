// The conformance suite on the simulated device: sim::Device with every capability, and with none (the
// Unsupported side of every capability test). No test is skipped here. After each test the simulator's
// shadow-state oracle must have no findings: what the contract promises is checked on ground truth too.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "conformance_suite.h"
#include "quiesce/sim/device.h"

namespace quiesce::conformance {

namespace {

constexpr std::uint64_t kSettleEventsMax = 10'000'000;

std::string describe_findings(const sim::Device& device) {
  std::string report;
  for (const sim::Finding& finding : device.findings()) {
    report += std::string(sim::to_string(finding.kind)) + " at " + std::to_string(finding.time_ns) + " ns: " +
              finding.message + "\n";
  }
  return report;
}

void run_until_idle(sim::Device& device) {
  ASSERT_TRUE(device.run_until_idle(kSettleEventsMax))
      << "the simulator still had work after " << kSettleEventsMax << " events";
}

}  // namespace

// The default simulator: all five capabilities, work waits on the virtual clock.
struct SimFixture {
  using Backend = sim::Device;
  static constexpr bool kMayInjectFaults = false;
  static constexpr bool kHoldsWorkUntilDriven = true;

  static std::unique_ptr<Backend> make() { return std::make_unique<sim::Device>(); }
  static void settle(Backend& device) { run_until_idle(device); }
  static std::string findings(const Backend& device) { return describe_findings(device); }
};

// A simulator without any capability: each capability test checks the Unsupported answer.
struct SimWithoutCapabilitiesFixture {
  using Backend = sim::Device;
  static constexpr bool kMayInjectFaults = false;
  static constexpr bool kHoldsWorkUntilDriven = true;

  static std::unique_ptr<Backend> make() {
    sim::Config config;
    config.seed = 7;
    config.capabilities = Capability::None;
    return std::make_unique<sim::Device>(config);
  }
  static void settle(Backend& device) { run_until_idle(device); }
  static std::string findings(const Backend& device) { return describe_findings(device); }
};

QUIESCE_INSTANTIATE_CONFORMANCE(Sim, SimFixture, SimWithoutCapabilitiesFixture);

}  // namespace quiesce::conformance
