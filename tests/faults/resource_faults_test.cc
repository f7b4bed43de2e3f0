// Release, resource, transfer and device-loss fault families: exactly the legal outcome of each header, and
// nothing leaked in the inner backend afterwards.
#include <gtest/gtest.h>

#include "test_support.h"

namespace quiesce::faults::testing {
namespace {

TEST(ReleaseFaults, RejectedReturnsTheSameLiveHandle) {
  ToyStack stack(scripted(Site::FreeBuffer, 1, FaultKind::ReleaseRejected));
  const BufferRef ref = stack.buffers[0].ref();
  ReleaseResult<Buffer> result = stack.injector.free_buffer(std::move(stack.buffers[0]));
  EXPECT_EQ(result.status, ReleaseStatus::Rejected);
  EXPECT_EQ(result.handle.ref(), ref);
  expect_injected(result.error, ErrorKind::Busy);
  EXPECT_TRUE(result.error.retryable);
  EXPECT_EQ(stack.toy.live_buffers(), 1U);
  // The handle is live: it still works, and the retry releases it.
  EXPECT_TRUE(stack.injector.buffer_info(result.handle).ok());
  ReleaseResult<Buffer> retried = stack.injector.free_buffer(std::move(result.handle));
  EXPECT_EQ(retried.status, ReleaseStatus::Released);
  EXPECT_EQ(stack.toy.live_buffers(), 0U);
}

TEST(ReleaseFaults, IndeterminateThatReallyReleased) {
  ToyStack stack(scripted(Site::FreeBuffer, 1, FaultKind::ReleaseIndeterminate, 1));
  ReleaseResult<Buffer> result = stack.injector.free_buffer(std::move(stack.buffers[0]));
  EXPECT_EQ(result.status, ReleaseStatus::Indeterminate);
  EXPECT_FALSE(result.handle.valid());
  expect_injected(result.error, ErrorKind::Internal);
  EXPECT_EQ(stack.toy.live_buffers(), 0U);
  EXPECT_EQ(stack.injector.limbo_size(), 0U);
  EXPECT_EQ(stack.injector.injected()[0].parameter, 1U);
}

TEST(ReleaseFaults, IndeterminateThatDidNotReleaseIsDrainedAtDiscard) {
  ToyStack stack(scripted(Site::FreeBuffer, 1, FaultKind::ReleaseIndeterminate, 0));
  ReleaseResult<Buffer> result = stack.injector.free_buffer(std::move(stack.buffers[0]));
  EXPECT_EQ(result.status, ReleaseStatus::Indeterminate);
  EXPECT_EQ(stack.toy.live_buffers(), 1U);  // hidden truth: still allocated in the inner backend
  EXPECT_EQ(stack.injector.limbo_size(), 1U);
  ASSERT_TRUE(stack.injector.discard_context(std::move(stack.context)).ok());
  EXPECT_EQ(stack.toy.live_buffers(), 0U);
  EXPECT_EQ(stack.toy.live_contexts(), 0U);
  EXPECT_EQ(stack.injector.limbo_size(), 0U);
}

TEST(ReleaseFaults, LimboIsReleasedBeforeItsContextIsDestroyed) {
  ToyStack stack(scripted(Site::FreeBuffer, 1, FaultKind::ReleaseIndeterminate, 0));
  EXPECT_EQ(stack.injector.free_buffer(std::move(stack.buffers[0])).status, ReleaseStatus::Indeterminate);
  EXPECT_EQ(stack.injector.destroy_queue(std::move(stack.queue)).status, ReleaseStatus::Released);
  EXPECT_EQ(stack.toy.live_buffers(), 0U);
  EXPECT_EQ(stack.injector.destroy_context(std::move(stack.context)).status, ReleaseStatus::Released);
  EXPECT_EQ(stack.toy.live_contexts(), 0U);
}

TEST(ReleaseFaults, TheInjectorsEndReleasesWhatLimboHolds) {
  ToyBackend toy;
  {
    Injector<ToyBackend> injector(toy, scripted(Site::DestroyQueue, 1, FaultKind::ReleaseIndeterminate, 0));
    Context context = injector.create_context(ContextDesc{}).value();
    Queue queue = injector.create_queue(context, QueueDesc{}).value();
    EXPECT_EQ(injector.destroy_queue(std::move(queue)).status, ReleaseStatus::Indeterminate);
    EXPECT_EQ(toy.live_queues(), 1U);
    EXPECT_EQ(injector.limbo_size(), 1U);
  }
  EXPECT_EQ(toy.live_queues(), 0U);
  EXPECT_EQ(toy.live_contexts(), 1U);  // the caller still owns the context; the injector only drained limbo
}

TEST(ReleaseFaults, EveryHandleKindCanBeRejected) {
  Plan plan = Plan::none();
  plan.set_rate(FaultKind::ReleaseRejected, Ratio::always());
  ToyStack stack(plan);
  const std::array<Command, 1> batch = {Command::zero(stack.buffers[0].ref(), 0, 4)};
  SubmitResult submitted = stack.injector.submit(stack.queue, batch, SubmitOptions{});
  ASSERT_TRUE(stack.injector.wait_event(submitted.event, 1000).ok());
  Program program = stack.injector.load_program(stack.context, ArtifactRef{"fill"}).value();
  EXPECT_EQ(stack.injector.destroy_event(std::move(submitted.event)).status, ReleaseStatus::Rejected);
  EXPECT_EQ(stack.injector.unload_program(std::move(program)).status, ReleaseStatus::Rejected);
  EXPECT_EQ(stack.injector.destroy_queue(std::move(stack.queue)).status, ReleaseStatus::Rejected);
  EXPECT_EQ(stack.injector.destroy_context(std::move(stack.context)).status, ReleaseStatus::Rejected);
  EXPECT_EQ(stack.injector.injected_count(FaultKind::ReleaseRejected), 4U);
  EXPECT_EQ(stack.toy.live_events(), 1U);
  EXPECT_EQ(stack.toy.live_programs(), 1U);
}

TEST(ResourceFaults, AllocationFailureIsOutOfMemoryAndRetainsNothing) {
  ToyStack stack(scripted(Site::AllocateBuffer, 2, FaultKind::AllocationFailure), 1);
  Result<Buffer> failed = stack.allocate();
  ASSERT_FALSE(failed.ok());
  expect_injected(failed.error(), ErrorKind::OutOfMemory);
  EXPECT_TRUE(failed.error().retryable);
  EXPECT_EQ(stack.toy.live_buffers(), 1U);
  EXPECT_EQ(stack.budget.charged_bytes(), 16U);  // the transaction gave the charge back
  EXPECT_TRUE(stack.allocate().ok());
}

TEST(ResourceFaults, ProgramLoadFailureRetainsNothing) {
  ToyStack stack(scripted(Site::LoadProgram, 1, FaultKind::ProgramLoadFailure));
  Result<Program> failed = stack.injector.load_program(stack.context, ArtifactRef{"fill"});
  ASSERT_FALSE(failed.ok());
  expect_injected(failed.error(), ErrorKind::Internal);
  EXPECT_EQ(stack.toy.live_programs(), 0U);
  EXPECT_TRUE(stack.injector.load_program(stack.context, ArtifactRef{"fill"}).ok());
}

TEST(TransferFaults, PartialWriteWritesExactlyThePrefix) {
  ToyStack stack(scripted(Site::WriteBuffer, 1, FaultKind::PartialWrite, 5));
  const auto first = byte_range(3, 100);
  const auto second = byte_range(5, 110);
  const std::array<std::span<const std::byte>, 2> segments = {std::span<const std::byte>(first),
                                                              std::span<const std::byte>(second)};
  Status written = stack.injector.write_buffer(stack.buffers[0], 2, ByteSource{segments});
  ASSERT_FALSE(written.ok());
  expect_injected(written.error(), ErrorKind::Internal);
  const auto data = stack.toy.bytes(stack.buffers[0].ref());
  EXPECT_EQ(data[2], first[0]);
  EXPECT_EQ(data[5], second[0]);
  EXPECT_EQ(data[6], second[1]);   // byte 5 of the source: the last of the prefix
  EXPECT_EQ(data[7], std::byte{0});  // beyond the prefix: never written
  EXPECT_EQ(stack.injector.injected()[0].parameter, 5U);
}

TEST(TransferFaults, PartialReadCopiesExactlyThePrefix) {
  ToyStack stack(scripted(Site::ReadBuffer, 1, FaultKind::PartialRead, 4));
  const auto pattern = byte_range(16, 1);
  const std::array<std::span<const std::byte>, 1> source = {std::span<const std::byte>(pattern)};
  ASSERT_TRUE(stack.injector.write_buffer(stack.buffers[0], 0, ByteSource{source}).ok());
  std::vector<std::byte> sink(8, std::byte{0xEE});
  const std::array<std::span<std::byte>, 1> segments = {std::span<std::byte>(sink)};
  Status read = stack.injector.read_buffer(stack.buffers[0], 0, ByteSink{segments});
  ASSERT_FALSE(read.ok());
  expect_injected(read.error(), ErrorKind::Internal);
  EXPECT_EQ(sink[3], pattern[3]);
  EXPECT_EQ(sink[4], std::byte{0xEE});
}

TEST(DeviceLoss, EveryLaterCallOnTheContextFailsUntilDiscard) {
  ToyStack stack(scripted(Site::Submit, 2, FaultKind::DeviceLost), 2);
  SubmitResult before = stack.upload(byte_range(4, 1));
  ASSERT_EQ(before.status, SubmitStatus::Submitted);
  SubmitResult lost = stack.upload(byte_range(4, 1));
  EXPECT_EQ(lost.status, SubmitStatus::Rejected);
  expect_injected(lost.error, ErrorKind::DeviceLost);
  EXPECT_EQ(stack.toy.submits(), 1U);
  EXPECT_EQ(stack.injector.poll_event(before.event).state, EventState::Indeterminate);
  EXPECT_FALSE(stack.injector.wait_event(before.event, 1000).ok());
  EXPECT_EQ(stack.upload(byte_range(4, 1)).error.kind, ErrorKind::DeviceLost);
  EXPECT_FALSE(stack.allocate().ok());
  EXPECT_TRUE(stack.injector.queue_state(stack.queue).lost);
  EXPECT_EQ(stack.injector.free_buffer(std::move(stack.buffers[1])).status, ReleaseStatus::Indeterminate);
  EXPECT_EQ(stack.injector.destroy_event(std::move(before.event)).status, ReleaseStatus::Indeterminate);
  ASSERT_TRUE(stack.injector.discard_context(std::move(stack.context)).ok());
  EXPECT_EQ(stack.toy.live_buffers(), 0U);
  EXPECT_EQ(stack.toy.live_events(), 0U);
  // Recovery on a fresh context works.
  Context fresh = stack.injector.create_context(ContextDesc{}).value();
  Queue queue = stack.injector.create_queue(fresh, QueueDesc{}).value();
  EXPECT_EQ(stack.injector.queue_state(queue).lost, false);
  ASSERT_EQ(stack.injector.injected().size(), 1U);
}

TEST(DeviceLoss, ATerminalAlreadyReportedStaysAndOtherContextsAreUntouched) {
  ToyStack stack(scripted(Site::Synchronize, 1, FaultKind::DeviceLost));
  stack.toy.polls_to_complete = 1;
  Context other = stack.injector.create_context(ContextDesc{}).value();
  Queue other_queue = stack.injector.create_queue(other, QueueDesc{}).value();
  SubmitResult done = stack.upload(byte_range(4, 1));
  EXPECT_EQ(stack.injector.poll_event(done.event).state, EventState::Complete);
  EXPECT_FALSE(stack.injector.synchronize(stack.queue, 1000).ok());
  EXPECT_EQ(stack.injector.poll_event(done.event).state, EventState::Complete);  // R7
  const std::array<Command, 1> batch = {Command::zero(stack.buffers[0].ref(), 0, 4)};
  EXPECT_EQ(stack.injector.submit(other_queue, batch, SubmitOptions{}).status, SubmitStatus::Submitted);
  EXPECT_TRUE(stack.injector.synchronize(other_queue, 1000).ok());
}

TEST(DeviceLoss, DestroyingALostContextDiscardsItInTheInnerBackend) {
  ToyStack stack(scripted(Site::Synchronize, 1, FaultKind::DeviceLost));
  EXPECT_FALSE(stack.injector.synchronize(stack.queue, 1000).ok());
  ReleaseResult<Context> result = stack.injector.destroy_context(std::move(stack.context));
  EXPECT_EQ(result.status, ReleaseStatus::Indeterminate);
  EXPECT_EQ(stack.toy.live_contexts(), 0U);
  EXPECT_EQ(stack.toy.live_buffers(), 0U);
}

TEST(Phases, SetInjectingFalseStopsEveryInjection) {
  Plan plan = Plan::all();
  plan.seed = 3;
  ToyStack stack(plan, 0);
  for (int round = 0; round < 200; ++round) (void)stack.allocate();
  const std::size_t injected = stack.injector.injected().size();
  EXPECT_GT(injected, 0U);
  stack.injector.set_injecting(false);
  for (int round = 0; round < 200; ++round) (void)stack.allocate();
  EXPECT_EQ(stack.injector.injected().size(), injected);
}

}  // namespace
}  // namespace quiesce::faults::testing
