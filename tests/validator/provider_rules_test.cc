// Provider rules: each test runs a correct call sequence on a TinyBackend with one deliberate flaw and
// checks that the validator names the broken rule, beside the same sequence on the honest TinyBackend,
// which must give zero violations.
#include <gtest/gtest.h>

#include <array>
#include <span>

#include "harness.h"
#include "tiny_backend.h"

namespace quiesce::testing {
namespace {

using Checked = Validator<TinyBackend>;

struct Stage {
  Context context;
  Queue queue;
  Buffer buffer;
};

Stage open_stage(Checked& validator) {
  Stage stage;
  stage.context = validator.create_context(ContextDesc{}).value();
  stage.queue = validator.create_queue(stage.context, QueueDesc{}).value();
  stage.buffer = allocate(validator, stage.context, 256);
  return stage;
}

// Submit, let it finish, observe it twice by poll and once by wait, destroy it.
void observe_twice(Checked& validator, Stage& stage, SubmitOptions options = {}) {
  const UploadBatch upload(stage.buffer.ref(), 32, 5);
  SubmitResult submitted = validator.submit(stage.queue, upload.batch(), options);
  ASSERT_TRUE(submitted.event.valid());
  validator.inner().complete_all();
  (void)validator.poll_event(submitted.event);
  (void)validator.poll_event(submitted.event);
  (void)validator.wait_event(submitted.event, 1000);
  (void)validator.destroy_event(std::move(submitted.event));
}

// Runs `body` on an honest backend (expects no violation) and on one with `flaw` (expects `rule`).
template <class Body>
void honest_then_flawed(Flaw flaw, Rule rule, Body&& body) {
  Checked honest(ValidatorOptions{.mode = ViolationMode::CollectAll});
  body(honest);
  EXPECT_EQ(honest.violation_count(), 0U) << "honest backend:\n" << violation_report(honest);
  Checked flawed(ValidatorOptions{.mode = ViolationMode::CollectAll}, flaw);
  body(flawed);
  EXPECT_TRUE(reported(flawed, rule)) << "expected " << to_string(rule) << ", got:\n" << violation_report(flawed);
  for (const Violation& violation : flawed.violations()) {
    EXPECT_EQ(rule_info(violation.rule).party, Party::Provider) << describe_violation(violation);
  }
}

TEST(ProviderRules, TerminalStateIsStable) {
  honest_then_flawed(Flaw::PollContradictsTerminal, Rule::ProviderTerminalUnstable, [](Checked& validator) {
    Stage stage = open_stage(validator);
    observe_twice(validator, stage);
  });
}

TEST(ProviderRules, RejectedReleaseReturnsTheSameHandle) {
  honest_then_flawed(Flaw::RejectedReleaseOtherHandle, Rule::ProviderReleaseHandle, [](Checked& validator) {
    Stage stage = open_stage(validator);
    validator.inner().reject_next_free();
    ReleaseResult<Buffer> refused = validator.free_buffer(std::move(stage.buffer));
    EXPECT_EQ(refused.status, ReleaseStatus::Rejected);
  });
}

TEST(ProviderRules, SuccessfulReadInitialisesEverySinkByte) {
  honest_then_flawed(Flaw::ReadLeavesTail, Rule::ProviderReadUninitialised, [](Checked& validator) {
    Stage stage = open_stage(validator);
    std::array<std::byte, 40> first{};
    std::array<std::byte, 24> second{};
    const std::array<std::span<std::byte>, 2> segments = {std::span<std::byte>(first), std::span<std::byte>(second)};
    EXPECT_TRUE(validator.read_buffer(stage.buffer, 0, ByteSink{segments}).ok());
  });
  // The report names where the unwritten run starts: the flaw leaves the last 16 of 64 bytes.
  Checked flawed(ValidatorOptions{}, Flaw::ReadLeavesTail);
  Stage stage = open_stage(flawed);
  std::array<std::byte, 64> bytes{};
  const std::span<std::byte> segment(bytes);
  EXPECT_TRUE(flawed.read_buffer(stage.buffer, 0, ByteSink{std::span(&segment, 1)}).ok());
  ASSERT_EQ(flawed.violation_count(), 1U);
  EXPECT_EQ(flawed.violations().front().value, 48U);
}

TEST(ProviderRules, ReadOfDataThatLooksLikeAnyFixedPoisonIsNotAViolation) {
  // The honest device holds bytes a fixed poison would collide with; the position-keyed poison never does.
  Checked validator;
  Stage stage = open_stage(validator);
  for (const std::uint8_t value : {0x00, 0xA5, 0xFF, 0x5A}) {
    std::array<std::byte, 256> content{};
    content.fill(static_cast<std::byte>(value));
    const std::span<const std::byte> source_segment(content);
    ASSERT_TRUE(validator.write_buffer(stage.buffer, 0, ByteSource{std::span(&source_segment, 1)}).ok());
    std::array<std::byte, 256> sink{};
    const std::span<std::byte> sink_segment(sink);
    ASSERT_TRUE(validator.read_buffer(stage.buffer, 0, ByteSink{std::span(&sink_segment, 1)}).ok());
    EXPECT_EQ(sink, content) << "the poison never reaches the caller of a successful read";
  }
  EXPECT_EQ(validator.violation_count(), 0U) << violation_report(validator);
}

TEST(ProviderRules, WonCancelEndsCancelled) {
  honest_then_flawed(Flaw::CancelWinsButCompletes, Rule::ProviderCancelInconsistent, [](Checked& validator) {
    Stage stage = open_stage(validator);
    const UploadBatch upload(stage.buffer.ref(), 32, 5);
    SubmitResult submitted = validator.submit(stage.queue, upload.batch(), SubmitOptions{});
    EXPECT_TRUE(validator.cancel_event(submitted.event).ok());
    (void)validator.poll_event(submitted.event);
  });
}

TEST(ProviderRules, LostCancelNeverEndsCancelled) {
  honest_then_flawed(Flaw::CancelBusyButCancels, Rule::ProviderCancelInconsistent, [](Checked& validator) {
    Stage stage = open_stage(validator);
    const UploadBatch upload(stage.buffer.ref(), 32, 5);
    SubmitResult submitted = validator.submit(stage.queue, upload.batch(), SubmitOptions{});
    validator.inner().complete_all();
    EXPECT_FALSE(validator.cancel_event(submitted.event).ok());
    (void)validator.poll_event(submitted.event);
  });
}

TEST(ProviderRules, CancelledOnlyAfterAWonCancel) {
  honest_then_flawed(Flaw::CancelledWithoutCancel, Rule::ProviderIllegalTransition, [](Checked& validator) {
    Stage stage = open_stage(validator);
    observe_twice(validator, stage);
  });
}

TEST(ProviderRules, WaitReachesOnlyTerminals) {
  honest_then_flawed(Flaw::WaitReturnsPending, Rule::ProviderIllegalTransition, [](Checked& validator) {
    Stage stage = open_stage(validator);
    const UploadBatch upload(stage.buffer.ref(), 32, 5);
    SubmitResult submitted = validator.submit(stage.queue, upload.batch(), SubmitOptions{});
    (void)validator.wait_event(submitted.event, 1000);
  });
}

TEST(ProviderRules, RejectedSubmitRetainsNothing) {
  honest_then_flawed(Flaw::RejectedSubmitWithEvent, Rule::ProviderRejectedSubmitRetained, [](Checked& validator) {
    Stage stage = open_stage(validator);
    validator.inner().reject_next_submit();
    const UploadBatch upload(stage.buffer.ref(), 32, 5);
    EXPECT_EQ(validator.submit(stage.queue, upload.batch(), SubmitOptions{}).status, SubmitStatus::Rejected);
  });
}

TEST(ProviderRules, IndeterminateSubmitCarriesAnEvent) {
  honest_then_flawed(Flaw::IndeterminateWithoutEvent, Rule::ProviderIndeterminateWithoutEvent,
                     [](Checked& validator) {
                       Stage stage = open_stage(validator);
                       validator.inner().indeterminate_next_submit();
                       const UploadBatch upload(stage.buffer.ref(), 32, 5);
                       const SubmitResult result = validator.submit(stage.queue, upload.batch(), SubmitOptions{});
                       EXPECT_EQ(result.status, SubmitStatus::Indeterminate);
                     });
}

TEST(ProviderRules, SubmittedCountsEveryCommand) {
  honest_then_flawed(Flaw::SubmittedShortCount, Rule::ProviderSubmittedCountMismatch, [](Checked& validator) {
    Stage stage = open_stage(validator);
    observe_twice(validator, stage);
  });
}

TEST(ProviderRules, TimingOnlyWithATerminal) {
  honest_then_flawed(Flaw::TimingWhilePending, Rule::ProviderTimingWithoutTerminal, [](Checked& validator) {
    Stage stage = open_stage(validator);
    const UploadBatch upload(stage.buffer.ref(), 32, 5);
    SubmitResult submitted = validator.submit(stage.queue, upload.batch(), SubmitOptions{.timing = true});
    const Observation pending = validator.poll_event(submitted.event);
    EXPECT_EQ(pending.state, EventState::Pending);
    validator.inner().complete_all();
    EXPECT_TRUE(validator.poll_event(submitted.event).timing.has_value()) << "asked for, after a terminal: legal";
  });
}

TEST(ProviderRules, TimingOnlyWhenAsked) {
  honest_then_flawed(Flaw::TimingUnrequested, Rule::ProviderTimingNotRequested, [](Checked& validator) {
    Stage stage = open_stage(validator);
    observe_twice(validator, stage);
  });
}

TEST(ProviderRules, CreatedHandlesAreFresh) {
  honest_then_flawed(Flaw::CreatedHandleReused, Rule::ProviderInvalidCreatedHandle, [](Checked& validator) {
    Stage stage = open_stage(validator);
    Buffer second = allocate(validator, stage.context, 64);
    EXPECT_TRUE(second.valid());
  });
}

}  // namespace
}  // namespace quiesce::testing
