// Hardware-in-loop tests. Without a GPU the simulator side runs for real (the script generator is
// deterministic, the simulator agrees with itself, and the comparison catches a planted difference); the
// GPU parts skip with the driver's reason. On the GPU: the differential against the simulator, the
// calibration read back by sim::load_cost_profile, and hil_command end to end in a process of its own.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "quiesce/properties/hil_reference.h"
#include "quiesce/sim/config.h"

namespace quiesce::hil {
namespace {

cuda::ScriptOptions small_script(std::uint64_t seed) {
  cuda::ScriptOptions options;
  options.seed = seed;
  options.steps = 60;
  return options;
}

// Whether a driver is there, without initialising CUDA (hil_command forks before it does).
std::string skip_reason() {
  const std::optional<cuda::DriverUnavailable> missing = cuda::Driver::probe_library();
  return missing ? missing->message() : std::string();
}

TEST(DifferentialScript, TheSameSeedGivesTheSameScript) {
  const cuda::Script first = cuda::generate_script(small_script(7));
  const cuda::Script second = cuda::generate_script(small_script(7));
  const cuda::Script other = cuda::generate_script(small_script(8));
  ASSERT_EQ(first.steps.size(), second.steps.size());
  EXPECT_EQ(first.buffer_bytes, second.buffer_bytes);
  for (std::size_t index = 0; index < first.steps.size(); ++index) {
    EXPECT_EQ(first.steps[index].kind, second.steps[index].kind) << "step " << index;
    EXPECT_EQ(first.steps[index].batch.size(), second.steps[index].batch.size()) << "step " << index;
  }
  EXPECT_NE(first.buffer_bytes, other.buffer_bytes) << "two seeds gave the same buffers";
}

TEST(DifferentialScript, TheSimulatorAgreesWithItselfAndAPlantedDifferenceIsCaught) {
  const cuda::Script script = cuda::generate_script(small_script(11));
  const cuda::ScriptLog first = run_on_simulator(script);
  const cuda::ScriptLog second = run_on_simulator(script);
  ASSERT_TRUE(first.setup_failure.empty()) << first.setup_failure;
  std::size_t reads = 0;
  for (const cuda::ScriptRecord& record : first.records) {
    reads += record.bytes.empty() ? 0 : 1;
    EXPECT_NE(record.what, "simulator oracle finding") << record.outcome;
    if (record.what.rfind("terminal", 0) == 0) {
      EXPECT_EQ(record.outcome, "complete") << record.what;
    }
  }
  EXPECT_GT(reads, 5U);
  EXPECT_TRUE(cuda::compare_logs(first, second).empty());

  cuda::ScriptLog planted = second;
  for (cuda::ScriptRecord& record : planted.records) {
    if (record.bytes.size() > 10) {
      record.bytes[9] ^= std::byte{0x40};
      break;
    }
  }
  const std::vector<std::string> divergences = cuda::compare_logs(first, planted);
  ASSERT_EQ(divergences.size(), 1U);
  EXPECT_NE(divergences[0].find("first at offset 9"), std::string::npos) << divergences[0];
}

TEST(DifferentialGpu, TheGpuAgreesWithTheSimulator) {
  if (const std::string reason = skip_reason(); !reason.empty()) GTEST_SKIP() << reason;
  auto device = cuda::Device::open();
  ASSERT_TRUE(device.ok());
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const cuda::CheckResult check =
        cuda::differential_check(*device, cuda::generate_script(small_script(seed)), run_on_simulator);
    EXPECT_TRUE(check.passed) << check.name << ": " << check.detail;
    std::cout << check.name << ": " << check.detail << '\n';
  }
}

// The prediction probes run on the simulator without a GPU: every command class is timed, and the figures
// come from the cost profile given (a slower launch in the profile is a slower predicted launch).
TEST(Prediction, TheSimulatorTimesEveryClassFromTheProfile) {
  const sim::CostProfile defaults{};
  auto predicted = predict_on_simulator(sim::to_text(defaults));
  ASSERT_TRUE(predicted.ok()) << predicted.error();
  ASSERT_GE(predicted->size(), 10U);
  for (const cuda::ClassTiming& timing : *predicted) {
    EXPECT_TRUE(timing.failure.empty()) << timing.command_class << ": " << timing.failure;
    EXPECT_GT(timing.ns, 0U) << timing.command_class;
  }
  sim::CostProfile slow_launch = defaults;
  slow_launch.launch_latency_ns = defaults.launch_latency_ns * 4;
  auto slower = predict_on_simulator(sim::to_text(slow_launch));
  ASSERT_TRUE(slower.ok());
  const auto launch_ns = [](const std::vector<cuda::ClassTiming>& timings) {
    for (const cuda::ClassTiming& timing : timings) {
      if (timing.command_class == "launch") return timing.ns;
    }
    return std::uint64_t{0};
  };
  EXPECT_GT(launch_ns(*slower), launch_ns(*predicted) + 2 * defaults.launch_latency_ns);
  EXPECT_FALSE(predict_on_simulator("launch_latency_ns = banana\n").ok());
}

TEST(Prediction, TheReportGivesEachClassItsError) {
  const std::vector<cuda::ClassTiming> predicted = {{"launch", "p", 3000, {}}, {"zero", "p", 500, {}}};
  const std::vector<cuda::ClassTiming> measured = {{"launch", "p", 2000, {}}, {"zero", "p", 1000, {}},
                                                   {"free", "p", 10, {}}};
  std::ostringstream out;
  EXPECT_EQ(cuda::prediction_report(predicted, measured, out), 50U);
  EXPECT_NE(out.str().find("+50%"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("-50%"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("not compared: no prediction"), std::string::npos) << out.str();
  std::ostringstream same;
  EXPECT_EQ(cuda::prediction_report(predicted, predicted, same), 0U);
}

// The engine workload over Validator<Injector<cuda::Device>> on the GPU (one short seed; quiesce hil runs more).
TEST(EngineCampaign, OneSeedIsCleanOnTheGpu) {
  if (const std::string reason = skip_reason(); !reason.empty()) GTEST_SKIP() << reason;
  std::ostringstream log;
  const std::vector<cuda::CheckResult> checks = engine_fault_campaign(0, log, 7, 1, 200);
  ASSERT_EQ(checks.size(), 1U);
  EXPECT_TRUE(checks[0].passed) << checks[0].detail << "\n" << log.str();
  std::cout << checks[0].name << ": " << checks[0].detail << "\n";
}

TEST(Calibration, TheProfileLoadsIntoTheSimulator) {
  if (const std::string reason = skip_reason(); !reason.empty()) GTEST_SKIP() << reason;
  auto device = cuda::Device::open();
  ASSERT_TRUE(device.ok());
  const auto profile = cuda::calibrate(*device);
  ASSERT_TRUE(profile.ok()) << profile.error().reason;
  std::cout << profile.value();
  const auto loaded = sim::load_cost_profile(profile.value());
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  for (const std::string_view key : {"launch_latency_ns", "graph_node_ns", "copy_latency_ns", "copy_bytes_per_us",
                                     "upload_bytes_per_us", "kernel_bytes_per_us", "zero_bytes_per_us",
                                     "event_record_ns", "event_query_ns", "allocation_ns", "free_ns"}) {
    EXPECT_NE(profile.value().find(std::string(key) + " = "), std::string::npos) << key << " is missing";
  }
  EXPECT_GT(loaded->launch_latency_ns, 0U);
  EXPECT_GT(loaded->copy_bytes_per_us, 0U);
  EXPECT_GT(loaded->event_record_ns, 0U);
  if (const char* out = std::getenv("QUIESCE_CALIBRATE_OUT"); out != nullptr) std::ofstream(out) << profile.value();
}

// hil_command forks its sticky-fault child before it touches CUDA, so it runs in a fresh process: a
// death test in the "threadsafe" style re-executes this binary for just this statement.
TEST(HilCommand, EveryCheckPassesOnTheGpu) {
  if (const std::string reason = skip_reason(); !reason.empty()) GTEST_SKIP() << reason;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        cuda::HilOptions options;
        options.differential_runs = 6;
        options.reference = run_on_simulator;
        options.fault_campaign = [](int ordinal, std::ostream& log) { return fault_campaign(ordinal, log); };
        options.engine_campaign = [](int ordinal, std::ostream& log) {
          return engine_fault_campaign(ordinal, log, 20261202, 2, 300);
        };
        options.predict = predict_on_simulator;
        // The report goes to stdout (which a death test passes through); the verdict to stderr (which
        // the death test matches).
        const int status = cuda::hil_command(options, std::cout, std::cerr);
        std::cout.flush();
        std::cerr << (status == cuda::kExitOk ? "hil: every check passed" : "hil: a check FAILED") << std::endl;
        std::_Exit(status);
      },
      ::testing::ExitedWithCode(0), "hil: every check passed");
}

}  // namespace
}  // namespace quiesce::hil
