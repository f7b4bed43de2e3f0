// Every fault family against the simulated device: the runtime-visible outcome is exactly the legal one of
// the family's header, the simulator's ground truth (bytes, memory usage, what executed) matches what the
// injector says really happened, and the simulator's oracle reports no finding.
#include <gtest/gtest.h>

#include <array>
#include <iostream>
#include <string>

#include "quiesce/core/transaction.h"
#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/sim/device.h"
#include "test_support.h"
#include "workload.h"

namespace quiesce::faults::testing {
namespace {

static_assert(Backend<Injector<sim::Device>>);

constexpr std::uint64_t kWaitNs = 1'000'000'000'000ULL;
constexpr std::uint64_t kBufferBytes = 64;

std::string findings_of(const sim::Device& device) {
  std::string report;
  for (const sim::Finding& finding : device.findings()) report += finding.message + "\n";
  return report;
}

struct SimStack {
  explicit SimStack(Plan plan) : injector(device, std::move(plan)) {
    context = injector.create_context(ContextDesc{}).value();
    queue = injector.create_queue(context, QueueDesc{}).value();
    buffer = allocate().value();
    const std::vector<std::byte> zeros(kBufferBytes);
    EXPECT_TRUE(write(buffer, zeros).ok());  // every byte initialised: reads are defined
  }
  ~SimStack() {
    (void)device.run_until_idle(1'000'000);
    EXPECT_EQ(findings_of(device), "") << "the simulator's oracle reported findings";
  }

  Result<Buffer> allocate() {
    ResourceTransaction<Injector<sim::Device>> transaction(injector, context, budget, ++transactions);
    Result<BufferRef> staged = transaction.allocate(BufferDesc{kBufferBytes, kAllBufferUsage, AllocationMode::Direct, {}});
    if (!staged.ok()) return staged.error();
    return std::move(transaction.commit().front());
  }
  Status write(Buffer& target, std::span<const std::byte> bytes) {
    const std::array<std::span<const std::byte>, 1> segments = {bytes};
    return injector.write_buffer(target, 0, ByteSource{segments});
  }
  // The simulator's own view of the bytes, past the injector.
  std::vector<std::byte> truth(const Buffer& source) {
    std::vector<std::byte> bytes(kBufferBytes);
    const std::array<std::span<std::byte>, 1> segments = {std::span<std::byte>(bytes)};
    EXPECT_TRUE(device.read_buffer(source, 0, ByteSink{segments}).ok());
    return bytes;
  }
  SubmitResult submit(std::span<const Command> batch) {
    return injector.submit(queue, batch, SubmitOptions{0, false, ++invocations});
  }
  Program fill_program() {
    ArtifactRef artifact{"fill", ArtifactFormat::Builtin, {}, 1U << 20U};
    return injector.load_program(context, artifact).value();
  }

  sim::Device device;
  Injector<sim::Device> injector;
  MemoryBudget budget{1U << 30U};
  std::uint64_t transactions = 0;
  std::uint64_t invocations = 0;
  Context context;
  Queue queue;
  Buffer buffer;
};

TEST(SimFaults, RejectedSubmitRanNothing) {
  SimStack stack(scripted(Site::Submit, 1, FaultKind::SubmitRejected));
  const auto bytes = byte_range(8, 1);
  const std::array<Command, 1> batch = {Command::upload(bytes, stack.buffer.ref(), 0)};
  SubmitResult result = stack.submit(batch);
  EXPECT_EQ(result.status, SubmitStatus::Rejected);
  expect_injected(result.error, ErrorKind::Busy);
  (void)stack.device.run_until_idle(1'000'000);
  EXPECT_EQ(stack.truth(stack.buffer)[0], std::byte{0});
}

TEST(SimFaults, PartialSubmitExecutesOnlyThePrefix) {
  SimStack stack(scripted(Site::Submit, 1, FaultKind::PartialSubmit, 1));
  const auto first = byte_range(8, 10);
  const auto second = byte_range(8, 20);
  const std::array<Command, 2> batch = {Command::upload(first, stack.buffer.ref(), 0),
                                        Command::upload(second, stack.buffer.ref(), 8)};
  SubmitResult result = stack.submit(batch);
  ASSERT_EQ(result.status, SubmitStatus::Indeterminate);
  EXPECT_EQ(result.commands_enqueued, 1U);
  WaitResult waited = stack.injector.wait_event(result.event, kWaitNs);
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->state, EventState::Complete);
  const auto truth = stack.truth(stack.buffer);
  EXPECT_EQ(truth[0], first[0]);
  EXPECT_EQ(truth[8], std::byte{0});
  EXPECT_EQ(stack.injector.destroy_event(std::move(result.event)).status, ReleaseStatus::Released);
}

TEST(SimFaults, DelayedCompletionHidesAFinishedEvent) {
  SimStack stack(scripted(Site::PollEvent, 1, FaultKind::DelayedCompletion, 2));
  const std::array<Command, 1> batch = {Command::zero(stack.buffer.ref(), 0, 16)};
  SubmitResult result = stack.submit(batch);
  (void)stack.device.run_until_idle(1'000'000);
  EXPECT_EQ(stack.device.poll_event(result.event).state, EventState::Complete);  // the truth
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Pending);
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Pending);
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Complete);
  EXPECT_EQ(stack.injector.destroy_event(std::move(result.event)).status, ReleaseStatus::Released);
}

TEST(SimFaults, AsyncLaunchFailureAfterTheKernelRan) {
  SimStack stack(scripted(Site::PollEvent, 1, FaultKind::AsyncLaunchFailure));
  Program program = stack.fill_program();
  const std::array<Binding, 1> bindings = {Binding{stack.buffer.ref(), Access::Write}};
  const std::array<std::byte, 4> value = {std::byte{0x11}, std::byte{0x22}, std::byte{0x33}, std::byte{0x44}};
  LaunchDims dims;
  dims.block_x = kBufferBytes / 4;
  const std::array<Command, 1> batch = {Command::launch(program.ref(), dims, bindings, value)};
  SubmitResult result = stack.submit(batch);
  ASSERT_EQ(result.status, SubmitStatus::Submitted);
  (void)stack.device.run_until_idle(1'000'000);
  const Observation observed = stack.injector.poll_event(result.event);
  EXPECT_EQ(observed.state, EventState::FailedButQuiescent);
  expect_injected(observed.error, ErrorKind::Internal);
  EXPECT_EQ(stack.truth(stack.buffer)[4], std::byte{0x11});  // the data effects happened
  EXPECT_EQ(stack.injector.wait_event(result.event, kWaitNs)->state, EventState::FailedButQuiescent);
  EXPECT_EQ(stack.injector.destroy_event(std::move(result.event)).status, ReleaseStatus::Released);
}

TEST(SimFaults, IndeterminatePollAndWaitLeaveTheEventLive) {
  Plan plan = scripted(Site::PollEvent, 1, FaultKind::PollIndeterminate);
  plan.script.push_back(ScriptedFault{Site::WaitEvent, 1, FaultKind::WaitIndeterminate, std::nullopt});
  SimStack stack(plan);
  const std::array<Command, 1> batch = {Command::zero(stack.buffer.ref(), 0, 16)};
  SubmitResult result = stack.submit(batch);
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Indeterminate);
  EXPECT_FALSE(stack.injector.wait_event(result.event, kWaitNs).ok());
  WaitResult waited = stack.injector.wait_event(result.event, kWaitNs);
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->state, EventState::Complete);
  EXPECT_EQ(stack.injector.destroy_event(std::move(result.event)).status, ReleaseStatus::Released);
}

TEST(SimFaults, IndeterminateReleaseKeepsTheMemoryUntilDiscard) {
  SimStack stack(scripted(Site::FreeBuffer, 1, FaultKind::ReleaseIndeterminate, 0));
  const std::uint64_t in_use = stack.device.memory_usage(stack.context)->bytes_in_use;
  ASSERT_GT(in_use, 0U);
  EXPECT_EQ(stack.injector.free_buffer(std::move(stack.buffer)).status, ReleaseStatus::Indeterminate);
  EXPECT_EQ(stack.device.memory_usage(stack.context)->bytes_in_use, in_use);  // hidden: not released
  EXPECT_EQ(stack.injector.limbo_size(), 1U);
  EXPECT_EQ(stack.injector.destroy_queue(std::move(stack.queue)).status, ReleaseStatus::Released);
  EXPECT_EQ(stack.device.memory_usage(stack.context)->bytes_in_use, 0U);  // limbo drained before the queue
  EXPECT_EQ(stack.injector.destroy_context(std::move(stack.context)).status, ReleaseStatus::Released);
}

TEST(SimFaults, RejectedReleaseAndFailedAllocationRetainNothingNew) {
  Plan plan = scripted(Site::FreeBuffer, 1, FaultKind::ReleaseRejected);
  plan.script.push_back(ScriptedFault{Site::AllocateBuffer, 2, FaultKind::AllocationFailure, std::nullopt});
  SimStack stack(plan);
  const std::uint64_t allocations = stack.device.memory_usage(stack.context)->allocations;
  EXPECT_FALSE(stack.allocate().ok());
  EXPECT_EQ(stack.device.memory_usage(stack.context)->allocations, allocations);
  ReleaseResult<Buffer> rejected = stack.injector.free_buffer(std::move(stack.buffer));
  ASSERT_EQ(rejected.status, ReleaseStatus::Rejected);
  EXPECT_TRUE(stack.device.buffer_info(rejected.handle).ok());
  EXPECT_EQ(stack.injector.free_buffer(std::move(rejected.handle)).status, ReleaseStatus::Released);
}

TEST(SimFaults, PartialTransfersMoveExactlyThePrefix) {
  Plan plan = scripted(Site::WriteBuffer, 2, FaultKind::PartialWrite, 6);
  plan.script.push_back(ScriptedFault{Site::ReadBuffer, 1, FaultKind::PartialRead, 3});
  SimStack stack(plan);
  const auto bytes = byte_range(kBufferBytes, 1);
  EXPECT_FALSE(stack.write(stack.buffer, bytes).ok());
  const auto truth = stack.truth(stack.buffer);
  EXPECT_EQ(truth[5], bytes[5]);
  EXPECT_EQ(truth[6], std::byte{0});
  std::vector<std::byte> sink(8, std::byte{0xEE});
  const std::array<std::span<std::byte>, 1> segments = {std::span<std::byte>(sink)};
  EXPECT_FALSE(stack.injector.read_buffer(stack.buffer, 0, ByteSink{segments}).ok());
  EXPECT_EQ(sink[2], bytes[2]);
  EXPECT_EQ(sink[3], std::byte{0xEE});
}

TEST(SimFaults, LostCancellationEndsNormally) {
  SimStack stack(scripted(Site::CancelEvent, 1, FaultKind::CancelLost));
  const std::array<Command, 1> batch = {Command::zero(stack.buffer.ref(), 0, 16)};
  SubmitResult result = stack.submit(batch);
  Status cancelled = stack.injector.cancel_event(result.event);
  ASSERT_FALSE(cancelled.ok());
  expect_injected(cancelled.error(), ErrorKind::Busy);
  WaitResult waited = stack.injector.wait_event(result.event, kWaitNs);
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->state, EventState::Complete);
  EXPECT_EQ(stack.injector.destroy_event(std::move(result.event)).status, ReleaseStatus::Released);
}

TEST(SimFaults, DeviceLossIsStickyUntilDiscardAndAFreshContextWorks) {
  SimStack stack(scripted(Site::Synchronize, 1, FaultKind::DeviceLost));
  const std::array<Command, 1> batch = {Command::zero(stack.buffer.ref(), 0, 16)};
  SubmitResult before = stack.submit(batch);
  ASSERT_EQ(before.status, SubmitStatus::Submitted);
  Status synchronized = stack.injector.synchronize(stack.queue, kWaitNs);
  ASSERT_FALSE(synchronized.ok());
  expect_injected(synchronized.error(), ErrorKind::DeviceLost);
  EXPECT_EQ(stack.submit(batch).status, SubmitStatus::Rejected);
  EXPECT_EQ(stack.injector.poll_event(before.event).state, EventState::Indeterminate);
  EXPECT_EQ(stack.injector.free_buffer(std::move(stack.buffer)).status, ReleaseStatus::Indeterminate);
  ASSERT_TRUE(stack.injector.discard_context(std::move(stack.context)).ok());
  stack.context = stack.injector.create_context(ContextDesc{}).value();
  stack.queue = stack.injector.create_queue(stack.context, QueueDesc{}).value();
  stack.buffer = stack.allocate().value();
  EXPECT_TRUE(stack.write(stack.buffer, byte_range(kBufferBytes, 3)).ok());
}

TEST(SimFaults, CampaignsLeaveNoFindingAndReplayExactly) {
  std::uint32_t faults_told = 0;
  std::uint32_t completed_runs = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    Plan plan = Plan::all();
    plan.seed = seed;
    std::string transcript;
    std::vector<InjectedFault> log;
    {
      sim::Device device;
      Injector<sim::Device> injector(device, plan);
      transcript = Workload<Injector<sim::Device>>(injector).run();
      log = injector.injected();
      (void)device.run_until_idle(1'000'000);
      EXPECT_EQ(findings_of(device), "") << "seed " << seed << ": " << transcript;
    }
    faults_told += static_cast<std::uint32_t>(log.size());
    if (transcript.find("complete") != std::string::npos) completed_runs++;
    sim::Device device;
    Injector<sim::Device> replay(device, Plan::replay(log));
    EXPECT_EQ(Workload<Injector<sim::Device>>(replay).run(), transcript) << "seed " << seed;
    EXPECT_EQ(replay.injected(), log) << "seed " << seed;
  }
  EXPECT_GT(faults_told, 60U);
  EXPECT_GT(completed_runs, 40U);  // the workload really ran work on the simulator, faults or not
}

TEST(SimFaults, CountThenInjectEverySiteIsLegal) {
  const auto run = [](const Plan& plan, std::uint64_t& sites) {
    sim::Device device;
    Validator<Injector<sim::Device>> validator(ValidatorOptions{}, device, plan);
    const std::string transcript = Workload<Validator<Injector<sim::Device>>>(validator).run();
    sites = validator.inner().sites_seen();
    const std::size_t told = validator.inner().injected().size();
    (void)device.run_until_idle(1'000'000);
    EXPECT_EQ(validator.finish(), 0U) << transcript;
    EXPECT_EQ(findings_of(device), "") << transcript;
    return told;
  };
  std::uint64_t sites = 0;
  ASSERT_EQ(run(Plan::none(), sites), 0U);
  ASSERT_GT(sites, 10U);
  std::cout << "count-then-inject on the simulator: the workload has " << sites << " fault sites\n";
  for (std::uint64_t site = 0; site < sites; ++site) {
    std::uint64_t unused = 0;
    EXPECT_EQ(run(Plan::fail_site(site), unused), 1U) << "site " << site;
  }
}

TEST(SimFaults, TheValidatorFindsEveryLieLegal) {
  // Validator<Injector<sim::Device>>: the contract checker sees only what the injector reports, so a lie
  // that broke a provider rule (terminal stability, a rejected release's handle, submit shapes, ...) or led
  // the careful workload into breaking a caller rule would be a violation here.
  std::uint64_t faults_told = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Plan plan = Plan::all();
    plan.seed = seed;
    sim::Device device;
    Validator<Injector<sim::Device>> validator(ValidatorOptions{}, device, plan);
    const std::string transcript = Workload<Validator<Injector<sim::Device>>>(validator).run();
    faults_told += validator.inner().injected().size();
    (void)device.run_until_idle(1'000'000);
    EXPECT_EQ(validator.finish(), 0U) << "seed " << seed << ": " << transcript << "\n"
                                      << (validator.violations().empty() ? std::string()
                                                                         : validator.describe(validator.violations()[0]));
    EXPECT_EQ(findings_of(device), "") << "seed " << seed;
  }
  EXPECT_GT(faults_told, 60U);
}

}  // namespace
}  // namespace quiesce::faults::testing
