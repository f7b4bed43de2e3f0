// Genuine faults on a GPU, not injected ones: an out-of-memory allocation, a partial submit (an invalid
// launch in the middle of a batch), a rejected submit (the invalid launch first), and a sticky device fault
// (the illegal-address kernel) after which the context fails closed, in a child process, and a fresh process
// works; and the same sticky fault under quiesce::Engine. Skipped without a driver.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cuda_test_support.h"
#include "quiesce/cuda/hil.h"

namespace quiesce::cuda::testing {
namespace {

using DeviceFaults = GpuTest;

TEST_F(DeviceFaults, AnAllocationBeyondTheDeviceIsOutOfMemoryAndRetainsNothing) {
  const std::uint64_t memory_bytes = device().device_info()->limits.memory_bytes;
  MemoryBudget budget(UINT64_MAX);
  ResourceTransaction<Device> transaction(device(), context_, budget, 1);
  const Result<BufferRef> huge = transaction.allocate(BufferDesc{memory_bytes * 2, kAllBufferUsage});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().kind, ErrorKind::OutOfMemory);
  EXPECT_EQ(huge.error().native_code, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(device().memory_usage(context_)->allocations, 0U);
  // The context is not lost: a reasonable allocation still works.
  Buffer small = allocate(4096);
  EXPECT_TRUE(small.valid());
  EXPECT_FALSE(device().context_lost(context_));
}

// More threads per block than the device allows fails cuLaunchKernel synchronously (not sticky).
Command invalid_launch(const Program& program, std::span<const Binding> bindings, std::span<const std::byte> value) {
  LaunchDims too_many;
  too_many.block_x = 4096;
  return Command::launch(program.ref(), too_many, bindings, value);
}

TEST_F(DeviceFaults, AnInvalidLaunchMidBatchIsAPartialSubmitNeverARejection) {
  Buffer first = allocate(4096);
  Buffer second = allocate(4096);
  write(first, std::vector<std::byte>(4096, std::byte{0}));
  write(second, std::vector<std::byte>(4096, std::byte{0}));
  const Program fill = load("fill");
  const std::array<Binding, 1> first_binding = {Binding{first.ref(), Access::Write}};
  const std::array<Binding, 1> second_binding = {Binding{second.ref(), Access::Write}};
  const std::array<std::byte, 4> value = {std::byte{7}, std::byte{7}, std::byte{7}, std::byte{7}};
  const std::array<Command, 3> batch = {Command::launch(fill.ref(), dims(4, 256), first_binding, value),
                                        invalid_launch(fill, second_binding, value),
                                        Command::launch(fill.ref(), dims(4, 256), second_binding, value)};
  SubmitResult submitted = device().submit(queue_, batch, {});
  ASSERT_EQ(submitted.status, SubmitStatus::Indeterminate) << "a partial submit was " << to_string(submitted.status);
  EXPECT_EQ(submitted.commands_enqueued, 1U);
  EXPECT_EQ(submitted.error.domain, NativeDomain::Cuda);
  EXPECT_EQ(submitted.error.native_code, CUDA_ERROR_INVALID_VALUE);
  ASSERT_TRUE(submitted.event.valid()) << "a partial submit must retain an event for its prefix";
  const WaitResult waited = device().wait_event(submitted.event, 10'000'000'000ULL);
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->state, EventState::FailedButQuiescent);
  EXPECT_TRUE(device().destroy_event(std::move(submitted.event)).ok());
  EXPECT_EQ(read(first, 4096), std::vector<std::byte>(4096, std::byte{7})) << "the prefix did not run";
  EXPECT_EQ(read(second, 4096), std::vector<std::byte>(4096, std::byte{0})) << "work after the failure ran";
  EXPECT_FALSE(device().context_lost(context_)) << "a launch configuration error is not sticky";
}

TEST_F(DeviceFaults, AnInvalidFirstLaunchIsRejectedAndNothingRan) {
  Buffer target = allocate(4096);
  write(target, std::vector<std::byte>(4096, std::byte{0}));
  const Program fill = load("fill");
  const std::array<Binding, 1> binding = {Binding{target.ref(), Access::Write}};
  const std::array<std::byte, 4> value = {std::byte{5}, std::byte{5}, std::byte{5}, std::byte{5}};
  const std::array<Command, 2> batch = {invalid_launch(fill, binding, value),
                                        Command::launch(fill.ref(), dims(4, 256), binding, value)};
  SubmitResult submitted = device().submit(queue_, batch, {});
  ASSERT_EQ(submitted.status, SubmitStatus::Rejected);
  EXPECT_FALSE(submitted.event.valid());
  EXPECT_EQ(submitted.commands_enqueued, 0U);
  EXPECT_EQ(device().queue_state(queue_).batches_in_flight, 0U);
  EXPECT_TRUE(device().synchronize(queue_, 10'000'000'000ULL).ok());
  EXPECT_EQ(read(target, 4096), std::vector<std::byte>(4096, std::byte{0})) << "a rejected batch ran";
}

// The sticky fault poisons the CUDA state of its whole process (seen on the H200: after it, even a new
// context is refused with CUDA_ERROR_ILLEGAL_ADDRESS), so it runs in a child process of its own: a death
// test in the "threadsafe" style re-executes this binary for just that statement. This process is then
// the fresh process in which recovery must work.
TEST_F(DeviceFaults, AStickyFaultFailsClosedAndAFreshProcessRecovers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const CheckResult check = sticky_fault_scenario(device());
        std::fprintf(stderr, "%s: %s\n", check.passed ? "sticky scenario held" : "sticky scenario FAILED",
                     check.detail.c_str());
        std::fflush(stderr);
        std::_Exit(check.passed ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "sticky scenario held");
  EXPECT_FALSE(device().context_lost(context_));
  Buffer buffer = allocate(4096);
  const Program fill = load("fill");
  const std::array<Binding, 1> binding = {Binding{buffer.ref(), Access::Write}};
  const std::array<std::byte, 4> value = {std::byte{3}, std::byte{3}, std::byte{3}, std::byte{3}};
  const std::array<Command, 1> batch = {Command::launch(fill.ref(), dims(4, 256), binding, value)};
  EXPECT_EQ(run(batch).state, EventState::Complete);
  EXPECT_EQ(read(buffer, 4096), std::vector<std::byte>(4096, std::byte{3}));
}

// The same genuine fault under quiesce::Engine<cuda::Device>: in a child process the engine sees the loss,
// surfaces the failure exactly once as a device loss, discards what the lost context held and accounts for
// every resource at shutdown (its in-process recovery is tried and reported); then in this fresh process a
// fresh engine completes the same work and shuts down clean.
TEST_F(DeviceFaults, UnderTheEngineAStickyFaultIsReportedAndAFreshEngineRecovers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const CheckResult check = engine_sticky_fault_scenario(device());
        std::fprintf(stderr, "%s: %s\n", check.passed ? "engine sticky scenario held" : "engine sticky scenario FAILED",
                     check.detail.c_str());
        std::fflush(stderr);
        std::_Exit(check.passed ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "engine sticky scenario held");
  const CheckResult fresh = engine_recovery_check(device());
  EXPECT_TRUE(fresh.passed) << fresh.detail;
}

}  // namespace
}  // namespace quiesce::cuda::testing
