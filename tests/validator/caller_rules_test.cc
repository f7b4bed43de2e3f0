// Caller rules on honest backends: each test makes a wrong call sequence that the validator must report,
// beside the correct sequence that it must accept with zero violations. Typed over every honest backend
// of the build (fixtures.h), so the rules hold on the simulator as well as on the tiny in-test backend.
#include <gtest/gtest.h>

#include <optional>

#include "fixtures.h"
#include "harness.h"

namespace quiesce::testing {
namespace {

template <class F>
class CallerRules : public ::testing::Test {
 protected:
  using V = Validator<typename F::Inner>;

  // A context, a queue and a 256-byte buffer usable by every command.
  void open(V& validator) {
    Result<Context> created = validator.create_context(ContextDesc{});
    ASSERT_TRUE(created.ok());
    context = std::move(created).value();
    Result<Queue> queue_result = validator.create_queue(context, QueueDesc{});
    ASSERT_TRUE(queue_result.ok());
    queue = std::move(queue_result).value();
    buffer = allocate(validator, context, 256);
  }

  // Submits an upload into `buffer` and returns its event.
  Event submit_upload(V& validator, SubmitOptions options = {}) {
    const UploadBatch upload(buffer.ref(), 64, 7);
    SubmitResult result = validator.submit(queue, upload.batch(), options);
    EXPECT_EQ(result.status, SubmitStatus::Submitted) << validator.describe_error(result.error);
    return std::move(result.event);
  }

  // Lets the work finish and observes the terminal, then destroys the event.
  void retire(V& validator, Event&& event) {
    F::settle(validator.inner());
    const Observation observation = validator.poll_event(event);
    EXPECT_TRUE(is_terminal(observation.state)) << to_string(observation.state);
    EXPECT_TRUE(validator.destroy_event(std::move(event)).ok());
  }

  void close(V& validator) {
    if (buffer.valid()) {
      EXPECT_TRUE(validator.free_buffer(std::move(buffer)).ok()) << violation_report(validator);
    }
    if (queue.valid()) {
      EXPECT_TRUE(validator.destroy_queue(std::move(queue)).ok()) << violation_report(validator);
    }
    if (context.valid()) {
      EXPECT_TRUE(validator.destroy_context(std::move(context)).ok()) << violation_report(validator);
    }
  }

  Context context;
  Queue queue;
  Buffer buffer;
};

#if QUIESCE_VALIDATOR_WITH_SIM
using Fixtures = ::testing::Types<TinyFixture, SimFixture>;
#else
using Fixtures = ::testing::Types<TinyFixture>;
#endif
TYPED_TEST_SUITE(CallerRules, Fixtures);

TYPED_TEST(CallerRules, CorrectLifecycleHasNoViolation) {
  typename TestFixture::V validator;
  this->open(validator);
  Event event = this->submit_upload(validator);
  this->retire(validator, std::move(event));
  this->close(validator);
  EXPECT_EQ(validator.finish(), 0U) << violation_report(validator);
  EXPECT_GT(validator.calls(), 8U);
}

TYPED_TEST(CallerRules, FreeOfBufferPinnedByLiveEventIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  Event event = this->submit_upload(validator);
  const BufferRef ref = this->buffer.ref();
  ReleaseResult<Buffer> freed = validator.free_buffer(std::move(this->buffer));
  ASSERT_EQ(freed.status, ReleaseStatus::Rejected);
  EXPECT_EQ(freed.handle.ref(), ref) << "a refused release hands the same live handle back";
  EXPECT_EQ(freed.error.domain, NativeDomain::Core);
  ASSERT_EQ(validator.violation_count(), 1U);
  const Violation& violation = validator.violations().front();
  EXPECT_EQ(violation.rule, Rule::CallerReleaseWhilePinned);
  EXPECT_EQ(violation.handles[0].id, ref.id);
  EXPECT_EQ(violation.handles[1].kind, HandleKind::EventHandle);
  EXPECT_EQ(violation.handles[1].id, event.id());
  this->buffer = std::move(freed.handle);
  // The same release after the event is terminal and destroyed is correct.
  this->retire(validator, std::move(event));
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CallerRules, ReleaseAfterTerminalButBeforeEventDestroyIsStillPinned) {
  typename TestFixture::V validator;
  this->open(validator);
  Event event = this->submit_upload(validator);
  TypeParam::settle(validator.inner());
  EXPECT_TRUE(is_terminal(validator.poll_event(event).state));
  ReleaseResult<Buffer> freed = validator.free_buffer(std::move(this->buffer));
  EXPECT_EQ(freed.status, ReleaseStatus::Rejected);
  EXPECT_TRUE(reported(validator, Rule::CallerReleaseWhilePinned)) << violation_report(validator);
  this->buffer = std::move(freed.handle);
  EXPECT_TRUE(validator.destroy_event(std::move(event)).ok());
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CallerRules, UnloadOfProgramPinnedByLaunchIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  Result<Program> loaded = load_fill(validator, this->context);
  ASSERT_TRUE(loaded.ok()) << validator.describe_error(loaded.error());
  Program program = std::move(loaded).value();
  const FillLaunch launch(program.ref(), this->buffer.ref(), 0x01020304U);
  SubmitResult submitted = validator.submit(this->queue, launch.batch(), SubmitOptions{});
  ASSERT_EQ(submitted.status, SubmitStatus::Submitted) << validator.describe_error(submitted.error);
  ReleaseResult<Program> unloaded = validator.unload_program(std::move(program));
  ASSERT_EQ(unloaded.status, ReleaseStatus::Rejected);
  EXPECT_TRUE(reported(validator, Rule::CallerReleaseWhilePinned)) << violation_report(validator);
  this->retire(validator, std::move(submitted.event));
  EXPECT_TRUE(validator.unload_program(std::move(unloaded.handle)).ok()) << violation_report(validator);
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CallerRules, DestroyOfContextWithLiveBufferIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  const ContextRef ref = this->context.ref();
  ReleaseResult<Context> destroyed = validator.destroy_context(std::move(this->context));
  ASSERT_EQ(destroyed.status, ReleaseStatus::Rejected);
  EXPECT_EQ(destroyed.handle.ref(), ref);
  ASSERT_EQ(validator.violation_count(), 1U);
  EXPECT_EQ(validator.violations().front().rule, Rule::CallerDestroyParentWithChildren);
  EXPECT_NE(validator.violations().front().handles[1].kind, HandleKind::None) << "a live child is named";
  this->context = std::move(destroyed.handle);
  this->close(validator);  // children first, then the parent: correct
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CallerRules, DestroyOfQueueWithLiveEventIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  Event event = this->submit_upload(validator);
  ReleaseResult<Queue> destroyed = validator.destroy_queue(std::move(this->queue));
  ASSERT_EQ(destroyed.status, ReleaseStatus::Rejected);
  ASSERT_EQ(validator.violation_count(), 1U);
  EXPECT_EQ(validator.violations().front().rule, Rule::CallerDestroyParentWithChildren);
  EXPECT_EQ(validator.violations().front().handles[1].id, event.id());
  this->queue = std::move(destroyed.handle);
  this->retire(validator, std::move(event));
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CallerRules, UseOfReleasedBufferIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  const BufferRef ref = this->buffer.ref();
  ASSERT_TRUE(validator.free_buffer(std::move(this->buffer)).ok());
  EXPECT_EQ(validator.violation_count(), 0U);
  const Buffer forged(ref.id, ref.epoch);  // a copy of the consumed handle the runtime kept by mistake
  const UploadBatch upload(ref, 16, 1);
  const SubmitResult submitted = validator.submit(this->queue, upload.batch(), SubmitOptions{});
  EXPECT_EQ(submitted.status, SubmitStatus::Rejected);
  EXPECT_FALSE(submitted.event.valid());
  std::byte sink_bytes[16] = {};
  const std::span<std::byte> segment(sink_bytes);
  const Status read = validator.read_buffer(forged, 0, ByteSink{std::span(&segment, 1)});
  EXPECT_FALSE(read.ok());
  ASSERT_EQ(validator.violation_count(), 2U);
  EXPECT_EQ(validator.violations()[0].rule, Rule::CallerUseAfterRelease);
  EXPECT_EQ(validator.violations()[1].rule, Rule::CallerUseAfterRelease);
  this->close(validator);
  EXPECT_EQ(validator.finish(), 2U) << violation_report(validator);
}

TYPED_TEST(CallerRules, HandleOfDiscardedEpochIsStale) {
  typename TestFixture::V validator;
  this->open(validator);
  const BufferRef old_buffer = this->buffer.ref();
  (void)this->buffer;  // the discard takes the buffer with it
  ASSERT_TRUE(validator.discard_context(std::move(this->context)).ok());
  this->buffer = Buffer{};
  this->queue = Queue{};
  EXPECT_EQ(validator.violation_count(), 0U) << violation_report(validator);
  Result<Context> fresh = validator.create_context(ContextDesc{});
  ASSERT_TRUE(fresh.ok());
  this->context = std::move(fresh).value();
  const Buffer stale(old_buffer.id, old_buffer.epoch);
  EXPECT_FALSE(validator.buffer_info(stale).ok());
  ASSERT_EQ(validator.violation_count(), 1U);
  EXPECT_EQ(validator.violations().front().rule, Rule::CallerStaleEpoch);
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CallerRules, ForeignHandleIsUnknown) {
  typename TestFixture::V validator;
  this->open(validator);
  const Buffer foreign(987654, this->context.epoch());
  EXPECT_FALSE(validator.buffer_info(foreign).ok());
  EXPECT_FALSE(validator.buffer_info(Buffer{}).ok());
  ASSERT_EQ(validator.violation_count(), 2U);
  EXPECT_EQ(validator.violations()[0].rule, Rule::CallerUnknownHandle);
  EXPECT_EQ(validator.violations()[1].rule, Rule::CallerUnknownHandle);
  this->close(validator);
}

TYPED_TEST(CallerRules, DestroyOfUnobservedEventIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  Event event = this->submit_upload(validator);
  TypeParam::settle(validator.inner());  // it is terminal, but nobody observed it
  ReleaseResult<Event> destroyed = validator.destroy_event(std::move(event));
  ASSERT_EQ(destroyed.status, ReleaseStatus::Rejected);
  ASSERT_EQ(validator.violation_count(), 1U);
  EXPECT_EQ(validator.violations().front().rule, Rule::CallerDestroyUnobservedEvent);
  this->retire(validator, std::move(destroyed.handle));
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CallerRules, SynchronizeCountsAsObservingTheTerminal) {
  typename TestFixture::V validator;
  this->open(validator);
  Event first = this->submit_upload(validator);
  Event second = this->submit_upload(validator);
  ASSERT_TRUE(validator.synchronize(this->queue, 1'000'000'000).ok());
  EXPECT_TRUE(validator.destroy_event(std::move(first)).ok()) << violation_report(validator);
  EXPECT_TRUE(validator.destroy_event(std::move(second)).ok()) << violation_report(validator);
  // An event submitted after the synchronize is not covered by it.
  Event third = this->submit_upload(validator);
  EXPECT_EQ(validator.destroy_event(std::move(third)).status, ReleaseStatus::Rejected);
  EXPECT_TRUE(reported(validator, Rule::CallerDestroyUnobservedEvent));
  EXPECT_EQ(validator.violation_count(), 1U) << violation_report(validator);
}

TYPED_TEST(CallerRules, AccessModeIsCheckedBeforeTheBackend) {
  typename TestFixture::V validator;
  this->open(validator);
  Buffer input = allocate(validator, this->context, 256, BufferUsage::ProgramInput | kTransferUsage);
  Result<Program> loaded = load_fill(validator, this->context);
  ASSERT_TRUE(loaded.ok());
  Program program = std::move(loaded).value();
  const FillLaunch wrong(program.ref(), input.ref(), 5, Access::Write);  // Write needs ProgramOutput
  const SubmitResult refused = validator.submit(this->queue, wrong.batch(), SubmitOptions{});
  EXPECT_EQ(refused.status, SubmitStatus::Rejected);
  EXPECT_EQ(refused.error.kind, ErrorKind::PermissionDenied);
  ASSERT_EQ(validator.violation_count(), 1U);
  EXPECT_EQ(validator.violations().front().rule, Rule::CallerAccessMode);
  // R16: a refused submit retains nothing, so the buffer is free to release at once.
  EXPECT_TRUE(validator.free_buffer(std::move(input)).ok()) << violation_report(validator);
  const FillLaunch right(program.ref(), this->buffer.ref(), 5, Access::Write);
  SubmitResult accepted = validator.submit(this->queue, right.batch(), SubmitOptions{});
  ASSERT_EQ(accepted.status, SubmitStatus::Submitted) << validator.describe_error(accepted.error);
  this->retire(validator, std::move(accepted.event));
  EXPECT_TRUE(validator.unload_program(std::move(program)).ok());
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CallerRules, TransfersNeedTransferUsage) {
  typename TestFixture::V validator;
  this->open(validator);
  Buffer state = allocate(validator, this->context, 64, BufferUsage::MutableState);
  std::byte bytes[8] = {};
  const std::span<const std::byte> source_segment(bytes);
  EXPECT_FALSE(validator.write_buffer(state, 0, ByteSource{std::span(&source_segment, 1)}).ok());
  const std::span<std::byte> sink_segment(bytes);
  EXPECT_FALSE(validator.read_buffer(state, 0, ByteSink{std::span(&sink_segment, 1)}).ok());
  EXPECT_EQ(rules_of(validator), (std::vector<Rule>{Rule::CallerAccessMode, Rule::CallerAccessMode}));
  EXPECT_TRUE(validator.free_buffer(std::move(state)).ok());
  this->close(validator);
  EXPECT_EQ(validator.finish(), 2U) << violation_report(validator);
}

TYPED_TEST(CallerRules, OutOfRangeTransferIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  std::byte bytes[32] = {};
  const std::span<const std::byte> segment(bytes);
  EXPECT_FALSE(validator.write_buffer(this->buffer, 240, ByteSource{std::span(&segment, 1)}).ok());
  EXPECT_TRUE(validator.write_buffer(this->buffer, 224, ByteSource{std::span(&segment, 1)}).ok());
  ASSERT_EQ(validator.violation_count(), 1U);
  EXPECT_EQ(validator.violations().front().rule, Rule::CallerOutOfRange);
  EXPECT_EQ(validator.violations().front().value, 272U) << "the end of the requested range is named";
  this->close(validator);
}

TYPED_TEST(CallerRules, EmptyBatchIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  const SubmitResult refused = validator.submit(this->queue, Batch{}, SubmitOptions{});
  EXPECT_EQ(refused.status, SubmitStatus::Rejected);
  EXPECT_EQ(rules_of(validator), std::vector<Rule>{Rule::CallerEmptyBatch});
  this->close(validator);
}

TYPED_TEST(CallerRules, HandleOfAnotherContextIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  Result<Context> other_created = validator.create_context(ContextDesc{});
  ASSERT_TRUE(other_created.ok());
  Context other = std::move(other_created).value();
  Buffer foreign = allocate(validator, other, 64);
  const UploadBatch upload(foreign.ref(), 16, 3);
  EXPECT_EQ(validator.submit(this->queue, upload.batch(), SubmitOptions{}).status, SubmitStatus::Rejected);
  EXPECT_EQ(rules_of(validator), std::vector<Rule>{Rule::CallerCrossContext});
  EXPECT_TRUE(validator.free_buffer(std::move(foreign)).ok());
  EXPECT_TRUE(validator.destroy_context(std::move(other)).ok());
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CallerRules, LeaksAreReportedAtFinish) {
  typename TestFixture::V validator;
  this->open(validator);
  Event event = this->submit_upload(validator);
  EXPECT_EQ(validator.violation_count(), 0U);
  // Nothing released: the context, its queue, its buffer and the event all leak.
  EXPECT_EQ(validator.finish(), 4U) << violation_report(validator);
  for (const Violation& violation : validator.violations()) {
    EXPECT_EQ(violation.rule, Rule::CallerLeak);
    EXPECT_EQ(violation.call, Call::None);
    EXPECT_EQ(violation.call_index, validator.calls());
  }
  EXPECT_EQ(validator.finish(), 4U) << "finish is idempotent";
  TypeParam::settle(validator.inner());
  (void)event;
}

TYPED_TEST(CallerRules, DiscardedContextLeaksNothing) {
  typename TestFixture::V validator;
  this->open(validator);
  Event event = this->submit_upload(validator);
  TypeParam::settle(validator.inner());
  ASSERT_TRUE(validator.discard_context(std::move(this->context)).ok());
  this->buffer = Buffer{};
  this->queue = Queue{};
  (void)event;
  EXPECT_EQ(validator.finish(), 0U) << violation_report(validator);
}

TYPED_TEST(CallerRules, StreamOrderedFreeNeedsOnlyOtherQueuesToBeDone) {
  typename TestFixture::V validator;
  this->open(validator);
  Result<Queue> other_created = validator.create_queue(this->context, QueueDesc{});
  ASSERT_TRUE(other_created.ok());
  Queue other = std::move(other_created).value();
  // Work on the buffer's own queue: the free is ordered behind it (R12), so it is correct at once.
  Buffer ordered = allocate(validator, this->context, 128, kAllBufferUsage, this->queue.ref());
  const UploadBatch own(ordered.ref(), 16, 2);
  SubmitResult on_own_queue = validator.submit(this->queue, own.batch(), SubmitOptions{});
  ASSERT_EQ(on_own_queue.status, SubmitStatus::Submitted) << validator.describe_error(on_own_queue.error);
  EXPECT_TRUE(validator.free_buffer(std::move(ordered)).ok()) << violation_report(validator);
  EXPECT_EQ(validator.violation_count(), 0U) << violation_report(validator);
  // Work on another queue is not ordered before the free: that free must wait for its event.
  Buffer shared = allocate(validator, this->context, 128, kAllBufferUsage, this->queue.ref());
  const UploadBatch foreign(shared.ref(), 16, 3);
  SubmitResult on_other_queue = validator.submit(other, foreign.batch(), SubmitOptions{});
  ASSERT_EQ(on_other_queue.status, SubmitStatus::Submitted);
  ReleaseResult<Buffer> refused = validator.free_buffer(std::move(shared));
  ASSERT_EQ(refused.status, ReleaseStatus::Rejected);
  EXPECT_EQ(rules_of(validator), std::vector<Rule>{Rule::CallerReleaseWhilePinned});
  this->retire(validator, std::move(on_own_queue.event));
  this->retire(validator, std::move(on_other_queue.event));
  EXPECT_TRUE(validator.free_buffer(std::move(refused.handle)).ok());
  TypeParam::settle(validator.inner());
  EXPECT_TRUE(validator.destroy_queue(std::move(other)).ok());
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

}  // namespace
}  // namespace quiesce::testing
