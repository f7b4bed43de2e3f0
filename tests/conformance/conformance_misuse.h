// Conformance, part 4: the provider's defence against a caller that breaks its obligations.
//
// Each test here deliberately makes one call the contract forbids the caller to make (destroying a parent
// with live children, destroying a pending event or a queue with work in flight, an empty batch, a
// transfer out of range, synchronizing a capturing queue, a handle of a discarded context) and checks that
// the provider refuses it the way the contract says: a rejected release hands back the same live handle,
// and nothing is lost. A Validator in the stack reports these calls as caller violations, so a validator
// instance runs this suite separately (QUIESCE_INSTANTIATE_CONFORMANCE_MISUSE) and expects exactly those.
#pragma once

#include "conformance_support.h"

namespace quiesce::conformance {

template <class F>
class ConformanceMisuse : public ConformanceBase<F> {
 protected:
  void SetUp() override {
    if constexpr (F::kMayInjectFaults) {
      GTEST_SKIP() << "the misuse tests expect exact refusals, which an injected fault may replace";
    }
    ConformanceBase<F>::SetUp();
  }
};
TYPED_TEST_SUITE_P(ConformanceMisuse);

// destroy_context with a live child: Rejected, with the same live handle, which a later retry (after the
// child is freed) releases.
TYPED_TEST_P(ConformanceMisuse, DestroyContextWithLiveChildIsRejectedWithTheSameHandle) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    (void)h.add_buffer(world, 512);
    const ContextRef ref = world.context.ref();
    ReleaseResult<Context> refused = h.backend().destroy_context(std::move(world.context));
    ASSERT_EQ(refused.status, ReleaseStatus::Rejected) << "a context with a live buffer was "
                                                       << to_string(refused.status);
    EXPECT_EQ(refused.handle.ref(), ref) << "a rejected release must hand back the same live handle (R6)";
    if (!refused.error.injected) {
      EXPECT_EQ(refused.error.kind, ErrorKind::Busy);
    }
    world.context = std::move(refused.handle);
    const std::vector<std::byte> content = pattern(512, 4);
    h.write(world.buffers.at(0), 0, content);  // the child is untouched by the refused destroy
    EXPECT_EQ(h.read(world.buffers.at(0), 0, 512), content);
    h.close_world(world);
  });
}

// destroy_queue with work in flight, and destroy_event of a pending event: Rejected, same live handle;
// both are released once the work is terminal.
TYPED_TEST_P(ConformanceMisuse, DestroyWhileWorkIsInFlightIsRejected) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    const ProgramRef delay = h.add_program(world, "delay");
    const std::array<std::byte, 8> duration = u64_le(long_work_ns<TypeParam>());
    const std::array<Command, 1> batch = {Command::launch(delay, LaunchDims{}, {}, duration)};
    SubmitResult submitted = h.submit_once(world.queue(), batch, {.invocation = h.next_invocation()});
    ASSERT_NE(submitted.status, SubmitStatus::Rejected) << h.backend().describe_error(submitted.error);

    const EventRef event_ref = submitted.event.ref();
    ReleaseResult<Event> event_refused = h.backend().destroy_event(std::move(submitted.event));
    ASSERT_EQ(event_refused.status, ReleaseStatus::Rejected) << "a pending event was "
                                                             << to_string(event_refused.status);
    EXPECT_EQ(event_refused.handle.ref(), event_ref);
    Event event = std::move(event_refused.handle);

    const QueueRef queue_ref = world.queue().ref();
    ReleaseResult<Queue> queue_refused = h.backend().destroy_queue(std::move(world.queues.at(0)));
    ASSERT_EQ(queue_refused.status, ReleaseStatus::Rejected) << "a queue with work in flight was "
                                                             << to_string(queue_refused.status);
    EXPECT_EQ(queue_refused.handle.ref(), queue_ref);
    world.queues.at(0) = std::move(queue_refused.handle);

    (void)h.finish(std::move(event));  // the event still works: it reaches a terminal and is released
    h.close_world(world);
  });
}

// A batch must be non-empty: an empty one is rejected, nothing is retained, and no event exists.
TYPED_TEST_P(ConformanceMisuse, EmptyBatchIsRejected) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    SubmitResult empty = h.submit_once(world.queue(), Batch{}, {.invocation = h.next_invocation()});
    ASSERT_EQ(empty.status, SubmitStatus::Rejected) << "an empty batch was " << to_string(empty.status);
    if (!empty.error.injected) {
      EXPECT_EQ(empty.error.kind, ErrorKind::InvalidArgument);
    }
    EXPECT_EQ(h.backend().queue_state(world.queue()).batches_in_flight, 0U);
    h.close_world(world);
  });
}

// A transfer outside the buffer fails, and the handle stays live and usable.
TYPED_TEST_P(ConformanceMisuse, TransfersOutOfRangeAreRefused) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    const BufferRef ref = h.add_buffer(world, 100);
    const std::vector<std::byte> content = pattern(100, 8);
    h.write(world.buffer(ref), 0, content);
    const std::vector<std::byte> too_long = pattern(60, 9);
    const std::array<std::span<const std::byte>, 1> source = {std::span<const std::byte>(too_long)};
    const Status written = h.backend().write_buffer(world.buffer(ref), 50, ByteSource{source});
    ASSERT_FALSE(written.ok()) << "a write of 60 bytes at offset 50 of a 100-byte buffer succeeded";
    if (!written.error().injected) {
      EXPECT_EQ(written.error().kind, ErrorKind::InvalidArgument);
    }
    std::vector<std::byte> sink(10);
    const std::array<std::span<std::byte>, 1> sinks = {std::span<std::byte>(sink)};
    const Status read = h.backend().read_buffer(world.buffer(ref), 95, ByteSink{sinks});
    ASSERT_FALSE(read.ok()) << "a read of 10 bytes at offset 95 of a 100-byte buffer succeeded";
    h.write(world.buffer(ref), 0, content);  // a later full-range write replaces whatever the failure left
    EXPECT_EQ(h.read(world.buffer(ref), 0, 100), content);
    h.close_world(world);
  });
}

// Synchronizing a capturing queue fails and invalidates the capture; end_capture still ends the window and
// yields no executable (R13).
TYPED_TEST_P(ConformanceMisuse, SynchronizeInsideACaptureInvalidatesIt) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    if (!h.has(Capability::ReusableExecutables)) {
      h.close_world(world);
      return;  // nothing to capture: CaptureRecordsAndReplayRuns checks the Unsupported answer
    }
    const Status begun = h.backend().begin_capture(world.queue());
    ASSERT_TRUE(begun.ok()) << h.backend().describe_error(begun.error());
    const Status synced = h.backend().synchronize(world.queue(), wait_timeout_ns<TypeParam>());
    EXPECT_FALSE(synced.ok()) << "synchronize of a capturing queue succeeded";
    Result<Executable> ended = h.backend().end_capture(world.queue());
    EXPECT_FALSE(h.backend().queue_state(world.queue()).capturing) << "end_capture left the window open";
    if (ended.ok()) {
      ADD_FAILURE() << "an invalidated capture yielded an executable";
      (void)h.destroy(std::move(ended).value());
    }
    h.close_world(world);
  });
}

// After discard_context no handle of that context resolves (R9).
TYPED_TEST_P(ConformanceMisuse, HandlesOfADiscardedContextDoNotResolve) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    const BufferRef ref = h.add_buffer(world, 256);
    const Status discarded = h.backend().discard_context(std::move(world.context));
    ASSERT_TRUE(discarded.ok()) << h.backend().describe_error(discarded.error());
    const Result<BufferInfo> stale = h.backend().buffer_info(world.buffer(ref));
    EXPECT_FALSE(stale.ok()) << "buffer " << ref.id << " of a discarded context still resolves";
    std::vector<std::byte> sink(16);
    const std::array<std::span<std::byte>, 1> sinks = {std::span<std::byte>(sink)};
    EXPECT_FALSE(h.backend().read_buffer(world.buffer(ref), 0, ByteSink{sinks}).ok());
    World fresh = h.open_world(0);
    EXPECT_NE(fresh.context.ref(), ContextRef{}) << "no new context after a discard";
    h.close_world(fresh);
  });
}

REGISTER_TYPED_TEST_SUITE_P(ConformanceMisuse, DestroyContextWithLiveChildIsRejectedWithTheSameHandle,
                            DestroyWhileWorkIsInFlightIsRejected, EmptyBatchIsRejected,
                            TransfersOutOfRangeAreRefused, SynchronizeInsideACaptureInvalidatesIt,
                            HandlesOfADiscardedContextDoNotResolve);

}  // namespace quiesce::conformance
