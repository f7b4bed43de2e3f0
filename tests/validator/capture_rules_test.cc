// Caller rules of capture windows and executables on honest backends: pins of captured handles, no sync,
// poll or allocation inside a window, balanced begin and end. Each wrong sequence beside the correct one.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "harness.h"

namespace quiesce::testing {
namespace {

template <class F>
class CaptureRules : public ::testing::Test {
 protected:
  using V = Validator<typename F::Inner>;

  void open(V& validator) {
    Result<Context> created = validator.create_context(ContextDesc{});
    ASSERT_TRUE(created.ok());
    context = std::move(created).value();
    Result<Queue> queue_result = validator.create_queue(context, QueueDesc{});
    ASSERT_TRUE(queue_result.ok());
    queue = std::move(queue_result).value();
    buffer = allocate(validator, context, 256);
  }

  // Captures one upload into `buffer` and returns the executable.
  Executable capture_upload(V& validator) {
    EXPECT_TRUE(validator.begin_capture(queue).ok());
    const UploadBatch upload(buffer.ref(), 32, 9);
    EXPECT_TRUE(validator.capture(queue, upload.batch()).ok());
    Result<Executable> ended = validator.end_capture(queue);
    EXPECT_TRUE(ended.ok()) << (ended.ok() ? "" : validator.describe_error(ended.error()));
    return ended.ok() ? std::move(ended).value() : Executable{};
  }

  void close(V& validator) {
    if (buffer.valid()) {
      EXPECT_TRUE(validator.free_buffer(std::move(buffer)).ok()) << violation_report(validator);
    }
    EXPECT_TRUE(validator.destroy_queue(std::move(queue)).ok()) << violation_report(validator);
    EXPECT_TRUE(validator.destroy_context(std::move(context)).ok()) << violation_report(validator);
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
TYPED_TEST_SUITE(CaptureRules, Fixtures);

TYPED_TEST(CaptureRules, CapturedBufferOutlivesItsExecutable) {
  typename TestFixture::V validator;
  this->open(validator);
  Executable executable = this->capture_upload(validator);
  ReleaseResult<Buffer> freed = validator.free_buffer(std::move(this->buffer));
  ASSERT_EQ(freed.status, ReleaseStatus::Rejected);
  ASSERT_EQ(validator.violation_count(), 1U);
  EXPECT_EQ(validator.violations().front().rule, Rule::CallerReleaseWhileCaptured);
  EXPECT_EQ(validator.violations().front().handles[1].id, executable.id());
  this->buffer = std::move(freed.handle);
  EXPECT_TRUE(validator.destroy_executable(std::move(executable)).ok());
  this->close(validator);  // the buffer after its executable: correct
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CaptureRules, ReplayPinsTheExecutableAndWhatItCaptured) {
  typename TestFixture::V validator;
  this->open(validator);
  Executable executable = this->capture_upload(validator);
  const Command replay = Command::replay(executable.ref());
  SubmitResult submitted = validator.submit(this->queue, Batch(&replay, 1), SubmitOptions{});
  ASSERT_EQ(submitted.status, SubmitStatus::Submitted) << validator.describe_error(submitted.error);
  ReleaseResult<Executable> destroyed = validator.destroy_executable(std::move(executable));
  ASSERT_EQ(destroyed.status, ReleaseStatus::Rejected);
  EXPECT_EQ(rules_of(validator), std::vector<Rule>{Rule::CallerReleaseWhilePinned});
  ReleaseResult<Buffer> freed = validator.free_buffer(std::move(this->buffer));
  ASSERT_EQ(freed.status, ReleaseStatus::Rejected);
  EXPECT_EQ(rules_of(validator), (std::vector<Rule>{Rule::CallerReleaseWhilePinned, Rule::CallerReleaseWhilePinned,
                                                    Rule::CallerReleaseWhileCaptured}))
      << "the replay event pins the captured buffer as well as its executable";
  this->buffer = std::move(freed.handle);
  TypeParam::settle(validator.inner());
  EXPECT_TRUE(is_terminal(validator.poll_event(submitted.event).state));
  EXPECT_TRUE(validator.destroy_event(std::move(submitted.event)).ok());
  EXPECT_TRUE(validator.destroy_executable(std::move(destroyed.handle)).ok()) << violation_report(validator);
  this->close(validator);
  EXPECT_EQ(validator.finish(), 3U) << violation_report(validator);  // the free named two rules
}

TYPED_TEST(CaptureRules, SynchronizeInsideTheWindowIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  ASSERT_TRUE(validator.begin_capture(this->queue).ok());
  EXPECT_FALSE(validator.synchronize(this->queue, 1'000'000).ok());
  EXPECT_EQ(rules_of(validator), std::vector<Rule>{Rule::CallerSyncInsideCapture});
  // Refused, so the backend never saw it and the capture is still valid.
  const UploadBatch upload(this->buffer.ref(), 8, 1);
  EXPECT_TRUE(validator.capture(this->queue, upload.batch()).ok());
  Result<Executable> ended = validator.end_capture(this->queue);
  ASSERT_TRUE(ended.ok()) << validator.describe_error(ended.error());
  EXPECT_TRUE(validator.destroy_executable(std::move(ended).value()).ok());
  EXPECT_TRUE(validator.synchronize(this->queue, 1'000'000).ok()) << "after the window it is correct";
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CaptureRules, PollOfCapturingQueuesEventIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  const UploadBatch upload(this->buffer.ref(), 8, 1);
  SubmitResult submitted = validator.submit(this->queue, upload.batch(), SubmitOptions{});
  ASSERT_EQ(submitted.status, SubmitStatus::Submitted);
  ASSERT_TRUE(validator.begin_capture(this->queue).ok());
  EXPECT_EQ(validator.poll_event(submitted.event).state, EventState::Indeterminate);
  EXPECT_FALSE(validator.wait_event(submitted.event, 1'000'000).ok());
  EXPECT_EQ(rules_of(validator), (std::vector<Rule>{Rule::CallerSyncInsideCapture, Rule::CallerSyncInsideCapture}));
  Result<Executable> ended = validator.end_capture(this->queue);
  if (ended.ok()) {
    EXPECT_TRUE(validator.destroy_executable(std::move(ended).value()).ok());
  }
  TypeParam::settle(validator.inner());
  EXPECT_TRUE(is_terminal(validator.poll_event(submitted.event).state)) << "after the window it is correct";
  EXPECT_TRUE(validator.destroy_event(std::move(submitted.event)).ok());
  this->close(validator);
  EXPECT_EQ(validator.finish(), 2U) << violation_report(validator);
}

TYPED_TEST(CaptureRules, AllocationInsideTheWindowIsRefused) {
  typename TestFixture::V validator;
  this->open(validator);
  ASSERT_TRUE(validator.begin_capture(this->queue).ok());
  MemoryBudget budget(1U << 20);
  {
    ResourceTransaction<typename TestFixture::V> transaction(validator, this->context, budget, 7);
    EXPECT_FALSE(transaction.allocate(BufferDesc{64, kAllBufferUsage, AllocationMode::Direct, {}}).ok());
  }
  EXPECT_EQ(rules_of(validator), std::vector<Rule>{Rule::CallerAllocateInsideCapture});
  Result<Executable> ended = validator.end_capture(this->queue);
  if (ended.ok()) {
    EXPECT_TRUE(validator.destroy_executable(std::move(ended).value()).ok());
  }
  Buffer after = allocate(validator, this->context, 64);
  EXPECT_TRUE(validator.free_buffer(std::move(after)).ok());
  this->close(validator);
  EXPECT_EQ(validator.finish(), 1U) << violation_report(validator);
}

TYPED_TEST(CaptureRules, WindowsMustBeBalanced) {
  typename TestFixture::V validator;
  this->open(validator);
  EXPECT_FALSE(validator.end_capture(this->queue).ok());
  const UploadBatch upload(this->buffer.ref(), 8, 1);
  EXPECT_FALSE(validator.capture(this->queue, upload.batch()).ok());
  EXPECT_EQ(rules_of(validator), (std::vector<Rule>{Rule::CallerCaptureNotBegun, Rule::CallerCaptureNotBegun}));
  ASSERT_TRUE(validator.begin_capture(this->queue).ok());
  EXPECT_FALSE(validator.begin_capture(this->queue).ok());
  EXPECT_EQ(validator.violations().back().rule, Rule::CallerCaptureNotEnded);
  EXPECT_EQ(validator.finish(), 3U + 4U) << violation_report(validator);  // open window + 4 leaked handles
  EXPECT_EQ(validator.violations().back().rule, Rule::CallerCaptureNotEnded);
  TypeParam::settle(validator.inner());
}

TYPED_TEST(CaptureRules, SubmitInsideTheWindowIsTheBackendsToRefuse) {
  // Not a caller rule (R13 lists sync, query and allocation; the conformance suite treats a submit on a
  // capturing queue as a legal call that the backend answers Rejected): the validator forwards it and
  // checks only the shape of the answer.
  typename TestFixture::V validator;
  this->open(validator);
  ASSERT_TRUE(validator.begin_capture(this->queue).ok());
  const UploadBatch upload(this->buffer.ref(), 8, 1);
  SubmitResult during = validator.submit(this->queue, upload.batch(), SubmitOptions{});
  if (during.event.valid()) {  // a backend that accepts it (TinyBackend does): the event is a normal one
    TypeParam::settle(validator.inner());
    Result<Executable> ended = validator.end_capture(this->queue);
    ASSERT_TRUE(ended.ok());
    EXPECT_TRUE(validator.destroy_executable(std::move(ended).value()).ok());
    EXPECT_TRUE(is_terminal(validator.poll_event(during.event).state));
    EXPECT_TRUE(validator.destroy_event(std::move(during.event)).ok());
  } else {
    EXPECT_EQ(during.status, SubmitStatus::Rejected);
    Result<Executable> ended = validator.end_capture(this->queue);
    ASSERT_TRUE(ended.ok());
    EXPECT_TRUE(validator.destroy_executable(std::move(ended).value()).ok());
  }
  this->close(validator);
  EXPECT_EQ(validator.finish(), 0U) << violation_report(validator);
}

}  // namespace
}  // namespace quiesce::testing
