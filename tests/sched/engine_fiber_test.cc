// quiesce::Engine on sim::Device under sim::FiberEnv: the engine's background completion poller and several
// submitting fibers share one engine, across many seeds (each seed picks a schedule strategy and the
// device's cost jitter). Every run must finish (no deadlock, no livelock), every read must return what was
// written, the device's oracle must report nothing (no access to released memory, no unordered conflict,
// no double execution) and the shutdown report must be clean (R19).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "quiesce/core/engine.h"
#include "quiesce/sim/device.h"
#include "quiesce/sim/fiber_env.h"

namespace quiesce::sim {
namespace {

using FiberEngine = Engine<Device, FiberEnv>;

constexpr int kRounds = 4;

// The shape of one run: the default spreads three submitters over two queues; the admission variant puts
// four on one queue of depth 1, so submits wait for admission through the FiberEnv's Waiter.
struct Workload {
  int submitters = 3;
  std::uint32_t queue_depth_max = 8;
  std::uint64_t admission_timeout_ns = 0;
  bool one_queue = false;
  bool poll_only = false;  // observe completion by polling only, never by a blocking wait
};
constexpr std::uint64_t kBufferBytes = 256;
constexpr std::uint64_t kWaitTimeoutNs = 1'000'000'000;

struct SeedOutcome {
  bool run_ok = false;
  std::string run_report;
  std::vector<std::string> problems;  // what a submitter saw go wrong, in sentences
  std::vector<Finding> findings;
  bool shutdown_clean = false;
  std::string shutdown_report;
  std::uint64_t digest = 0;
  std::uint64_t end_time_ns = 0;
  std::uint64_t device_digest = 0;
  std::size_t decisions = 0;
  std::uint64_t device_waits = 0;
};

std::array<std::byte, 4> word_bytes(std::uint32_t value) {
  std::array<std::byte, 4> bytes{};
  std::memcpy(bytes.data(), &value, bytes.size());  // the kernel ABI is little-endian, as this host is
  return bytes;
}

// One submitter: create a buffer, fill it on the device, observe completion (by waiting, or by polling
// while the poller fiber makes progress), read it back, release it; then flush.
void submitter(FiberEngine& engine, FiberEnv& env, ProgramId fill, int index, const Workload& workload,
               std::vector<std::string>& problems) {
  for (int round = 0; round < kRounds; ++round) {
    const auto value = static_cast<std::uint32_t>(1000 * (index + 1) + round);
    const std::string where = "submitter " + std::to_string(index) + " round " + std::to_string(round);
    Result<BufferId> buffer = engine.create_buffer(BufferRequest{kBufferBytes, kAllBufferUsage});
    if (!buffer.ok()) {
      problems.push_back(where + ": create_buffer failed: " + quiesce::describe_error(buffer.error()));
      return;
    }
    const std::array<std::byte, 4> parameters = word_bytes(value);
    const EngineBinding binding{buffer.value(), Access::Write};
    const EngineOp op = EngineOp::launch(fill, LaunchDims{}, std::span<const EngineBinding>(&binding, 1), parameters);
    const auto queue = static_cast<QueueIndex>(workload.one_queue ? 0 : (index + round) % 2);
    SubmitRequest request;
    request.admission_timeout_ns = workload.admission_timeout_ns;
    Result<SubmissionId> submission = engine.submit(queue, std::span<const EngineOp>(&op, 1), request);
    if (!submission.ok()) {
      problems.push_back(where + ": submit failed: " + quiesce::describe_error(submission.error()));
      return;
    }
    if (round % 2 == 0 && !workload.poll_only) {
      Result<SubmissionReceipt> receipt = engine.wait(submission.value(), kWaitTimeoutNs);
      if (!receipt.ok()) problems.push_back(where + ": wait failed: " + quiesce::describe_error(receipt.error()));
    } else {
      // Polling leaves the progress to the poller fiber; the bound is far above the fill's cost.
      SubmissionFate fate = engine.poll(submission.value());
      for (int attempt = 0; attempt < 1000 && fate == SubmissionFate::Pending; ++attempt) {
        env.sleep_until(env.now_ns() + 10'000);
        fate = engine.poll(submission.value());
      }
      if (fate != SubmissionFate::Complete) {
        problems.push_back(where + ": the submission ended " + std::string(to_string(fate)));
      }
    }
    std::vector<std::byte> data(kBufferBytes);
    const std::array<std::span<std::byte>, 1> segments{std::span<std::byte>(data)};
    const Status read = engine.read(buffer.value(), 0, ByteSink{segments});
    if (!read.ok()) problems.push_back(where + ": read failed: " + quiesce::describe_error(read.error()));
    for (std::size_t offset = 0; read.ok() && offset < data.size(); offset += 4) {
      if (std::memcmp(data.data() + offset, parameters.data(), 4) != 0) {
        problems.push_back(where + ": byte " + std::to_string(offset) + " does not hold the filled value");
        break;
      }
    }
    const Status released = engine.release(buffer.value());
    if (!released.ok()) problems.push_back(where + ": release failed: " + quiesce::describe_error(released.error()));
  }
  const FlushResult flushed = engine.flush();
  if (!flushed.ok()) problems.push_back("submitter " + std::to_string(index) + ": flush reported failures");
}

SeedOutcome run_seed(std::uint64_t seed, const Workload& workload = {}) {
  Config config;
  config.seed = seed;
  config.queue_depth_max = workload.queue_depth_max;
  Device device(config);
  ScheduleKnobs knobs;
  knobs.pct_steps_estimate = 500;  // one run takes about 450 switch points
  FiberEnv env(device.clock(), Schedule::from_seed(seed, knobs));
  device.set_waiter(&env.waiter());
  EngineOptions options;
  options.poller_interval_ns = 20'000;
  SeedOutcome outcome;
  {
    FiberEngine engine(device, env, options);
    ShutdownReport report;
    env.spawn("main", [&] {
      const Status opened = engine.open();
      if (!opened.ok()) {
        outcome.problems.push_back("open failed: " + quiesce::describe_error(opened.error()));
        return;
      }
      ArtifactRef artifact;
      artifact.kernel_name = "fill";
      artifact.resident_bytes = kProgramResidentBytes;
      Result<ProgramId> fill = engine.load_program(artifact);
      if (!fill.ok()) {
        outcome.problems.push_back("load_program failed: " + quiesce::describe_error(fill.error()));
        return;
      }
      engine.start_poller();
      std::vector<FiberEnv::Thread> submitters;
      for (int index = 0; index < workload.submitters; ++index) {
        submitters.push_back(env.spawn("submitter-" + std::to_string(index), [&, index] {
          submitter(engine, env, fill.value(), index, workload, outcome.problems);
        }));
      }
      for (FiberEnv::Thread& thread : submitters) env.join(thread);
      if (!engine.release(fill.value()).ok()) outcome.problems.push_back("releasing the program failed");
      engine.stop_poller();
      report = engine.shutdown(kWaitTimeoutNs);
    });
    auto result = env.run();
    outcome.run_ok = result.ok();
    outcome.run_report = result.ok() ? env.describe() : env.describe() + "\n" + result.error().report();
    if (result.ok()) {
      outcome.digest = result->digest;
      outcome.end_time_ns = result->end_time_ns;
      outcome.decisions = result->decisions;
      outcome.device_waits = result->device_waits;
    }
    outcome.shutdown_clean = report.clean();
    outcome.shutdown_report = report.describe();
  }
  outcome.findings = device.findings();
  outcome.device_digest = device.digest();
  device.set_waiter(nullptr);
  return outcome;
}

TEST(EngineOnFibers, PollerAndSubmittersKeepEveryInvariantAcrossSeeds) {
  for (std::uint64_t seed = 0; seed < 48; ++seed) {
    const SeedOutcome outcome = run_seed(seed);
    ASSERT_TRUE(outcome.run_ok) << "seed " << seed << ": " << outcome.run_report;
    EXPECT_TRUE(outcome.problems.empty()) << "seed " << seed << ": " << outcome.problems.front();
    EXPECT_TRUE(outcome.findings.empty()) << "seed " << seed << ": " << outcome.findings.front().message;
    EXPECT_TRUE(outcome.shutdown_clean) << "seed " << seed << ": " << outcome.shutdown_report;
    EXPECT_GT(outcome.end_time_ns, 0U) << "seed " << seed << ": device work takes virtual time";
    EXPECT_GT(outcome.decisions, 50U) << "seed " << seed << ": the fibers should interleave";
  }
}

TEST(EngineOnFibers, AdmissionWaitsParkSubmittersOnAFullQueue) {
  Workload workload;
  workload.submitters = 4;
  workload.queue_depth_max = 1;
  workload.admission_timeout_ns = 10'000'000;
  workload.one_queue = true;
  workload.poll_only = true;  // so that the device waits counted below are admission waits
  std::uint64_t device_waits = 0;
  for (std::uint64_t seed = 100; seed < 124; ++seed) {
    const SeedOutcome outcome = run_seed(seed, workload);
    device_waits += outcome.device_waits;
    ASSERT_TRUE(outcome.run_ok) << "seed " << seed << ": " << outcome.run_report;
    EXPECT_TRUE(outcome.problems.empty()) << "seed " << seed << ": " << outcome.problems.front();
    EXPECT_TRUE(outcome.findings.empty()) << "seed " << seed << ": " << outcome.findings.front().message;
    EXPECT_TRUE(outcome.shutdown_clean) << "seed " << seed << ": " << outcome.shutdown_report;
  }
  EXPECT_GT(device_waits, 24U) << "a full queue of depth 1 should make submitters wait for admission";
  std::printf("admission variant: %llu parked device waits over 24 seeds\n", static_cast<unsigned long long>(device_waits));
}

TEST(EngineOnFibers, ASeedReproducesTheSameRun) {
  for (std::uint64_t seed = 3; seed < 6; ++seed) {
    const SeedOutcome first = run_seed(seed);
    const SeedOutcome second = run_seed(seed);
    ASSERT_TRUE(first.run_ok) << first.run_report;
    EXPECT_EQ(first.digest, second.digest) << "seed " << seed;
    EXPECT_EQ(first.end_time_ns, second.end_time_ns) << "seed " << seed;
    EXPECT_EQ(first.device_digest, second.device_digest) << "seed " << seed;
  }
}

}  // namespace
}  // namespace quiesce::sim
