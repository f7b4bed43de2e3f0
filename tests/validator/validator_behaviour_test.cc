// The validator itself: caller rules that need a rare outcome staged by hand (indeterminate submits,
// device loss), the two modes, refusal errors, readable reports and the storage bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness.h"
#include "quiesce/core/prng.h"
#include "quiesce/core/validator/checker.h"
#include "tiny_backend.h"

namespace quiesce::testing {
namespace {

using Checked = Validator<TinyBackend>;

static_assert(Backend<Checked>);
static_assert(Backend<Validator<Checked>>, "validators compose with themselves like any decorator");

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

TEST(ResubmitRule, SameInvocationAfterIndeterminateIsRefused) {
  Checked validator;
  Stage stage = open_stage(validator);
  const UploadBatch upload(stage.buffer.ref(), 32, 5);
  validator.inner().indeterminate_next_submit();
  SubmitResult first = validator.submit(stage.queue, upload.batch(), SubmitOptions{.invocation = 41});
  ASSERT_EQ(first.status, SubmitStatus::Indeterminate);
  const std::uint64_t submits_before = validator.inner().submits_seen();
  const SubmitResult again = validator.submit(stage.queue, upload.batch(), SubmitOptions{.invocation = 41});
  EXPECT_EQ(again.status, SubmitStatus::Rejected);
  EXPECT_EQ(validator.inner().submits_seen(), submits_before) << "a refused resubmission never reaches the device";
  ASSERT_EQ(rules_of(validator), std::vector<Rule>{Rule::CallerResubmitIndeterminate});
  EXPECT_EQ(validator.violations().front().value, 41U);
  // New work with a new identity is correct, and so is waiting on the indeterminate event.
  SubmitResult fresh = validator.submit(stage.queue, upload.batch(), SubmitOptions{.invocation = 42});
  EXPECT_EQ(fresh.status, SubmitStatus::Submitted);
  EXPECT_TRUE(validator.wait_event(first.event, 1000).ok());
  EXPECT_TRUE(validator.wait_event(fresh.event, 1000).ok());
  EXPECT_TRUE(validator.destroy_event(std::move(first.event)).ok());
  EXPECT_TRUE(validator.destroy_event(std::move(fresh.event)).ok());
  EXPECT_EQ(validator.violation_count(), 1U) << violation_report(validator);
}

TEST(ResubmitRule, RetryAfterRejectedIsAllowed) {
  Checked validator;
  Stage stage = open_stage(validator);
  const UploadBatch upload(stage.buffer.ref(), 32, 5);
  validator.inner().reject_next_submit();
  EXPECT_EQ(validator.submit(stage.queue, upload.batch(), SubmitOptions{.invocation = 7}).status,
            SubmitStatus::Rejected);
  SubmitResult retried = validator.submit(stage.queue, upload.batch(), SubmitOptions{.invocation = 7});
  EXPECT_EQ(retried.status, SubmitStatus::Submitted);
  EXPECT_TRUE(validator.wait_event(retried.event, 1000).ok());
  EXPECT_TRUE(validator.destroy_event(std::move(retried.event)).ok());
  EXPECT_EQ(validator.violation_count(), 0U) << violation_report(validator);
}

TEST(ResubmitRule, IdenticalBatchRightAfterIndeterminateIsABlindRetry) {
  Checked validator;
  Stage stage = open_stage(validator);
  const UploadBatch upload(stage.buffer.ref(), 32, 5);
  validator.inner().indeterminate_next_submit();
  SubmitResult first = validator.submit(stage.queue, upload.batch(), SubmitOptions{});
  ASSERT_EQ(first.status, SubmitStatus::Indeterminate);
  EXPECT_EQ(validator.submit(stage.queue, upload.batch(), SubmitOptions{}).status, SubmitStatus::Rejected);
  EXPECT_EQ(rules_of(validator), std::vector<Rule>{Rule::CallerResubmitIndeterminate});
  // Different content is different work.
  const UploadBatch other(stage.buffer.ref(), 32, 6);
  SubmitResult second = validator.submit(stage.queue, other.batch(), SubmitOptions{});
  EXPECT_EQ(second.status, SubmitStatus::Submitted);
  // Once a batch was submitted after it, the same content again is ordinary repeated work.
  SubmitResult third = validator.submit(stage.queue, upload.batch(), SubmitOptions{});
  EXPECT_EQ(third.status, SubmitStatus::Submitted);
  EXPECT_EQ(validator.violation_count(), 1U) << violation_report(validator);
  validator.inner().complete_all();
}

TEST(DeviceLostRule, OnlyReleasesAndDiscardAfterLoss) {
  Checked validator;
  Stage stage = open_stage(validator);
  const UploadBatch upload(stage.buffer.ref(), 32, 5);
  SubmitResult submitted = validator.submit(stage.queue, upload.batch(), SubmitOptions{});
  validator.inner().lose_context(stage.context);
  const Observation lost = validator.poll_event(submitted.event);
  EXPECT_EQ(lost.state, EventState::Indeterminate);
  EXPECT_EQ(lost.error.kind, ErrorKind::DeviceLost);
  EXPECT_EQ(validator.violation_count(), 0U) << "observing the loss is not a violation";
  EXPECT_TRUE(validator.queue_state(stage.queue).lost) << "queue_state stays allowed: it is how a loss is learned";
  EXPECT_FALSE(validator.memory_usage(stage.context).ok());
  EXPECT_EQ(validator.poll_event(submitted.event).state, EventState::Indeterminate);
  EXPECT_EQ(rules_of(validator),
            (std::vector<Rule>{Rule::CallerUseAfterDeviceLost, Rule::CallerUseAfterDeviceLost}));
  // The recovery path is correct: discard the lost context with everything in it.
  EXPECT_TRUE(validator.discard_context(std::move(stage.context)).ok());
  EXPECT_EQ(validator.finish(), 2U) << violation_report(validator);
}

TEST(Modes, CollectAllForwardsTheOffendingCall) {
  Checked validator(ValidatorOptions{.mode = ViolationMode::CollectAll});
  Stage stage = open_stage(validator);
  const UploadBatch upload(stage.buffer.ref(), 32, 5);
  SubmitResult submitted = validator.submit(stage.queue, upload.batch(), SubmitOptions{});
  // The backend itself answers the destroy of a pending event (Rejected, Busy), and the call is recorded.
  ReleaseResult<Event> destroyed = validator.destroy_event(std::move(submitted.event));
  EXPECT_EQ(destroyed.status, ReleaseStatus::Rejected);
  EXPECT_EQ(destroyed.error.kind, ErrorKind::Busy) << "the inner backend's own answer";
  EXPECT_EQ(destroyed.error.domain, NativeDomain::Core);
  EXPECT_NE(destroyed.error.native_code, kRefusalCodeBase + static_cast<int>(Rule::CallerDestroyUnobservedEvent));
  EXPECT_EQ(rules_of(validator), std::vector<Rule>{Rule::CallerDestroyUnobservedEvent});
  validator.inner().complete_all();
}

TEST(Modes, StopAtFirstAnswersWithARefusalNamingTheRule) {
  Checked validator;
  Stage stage = open_stage(validator);
  const UploadBatch upload(stage.buffer.ref(), 32, 5);
  SubmitResult submitted = validator.submit(stage.queue, upload.batch(), SubmitOptions{});
  ReleaseResult<Event> destroyed = validator.destroy_event(std::move(submitted.event));
  ASSERT_EQ(destroyed.status, ReleaseStatus::Rejected);
  EXPECT_EQ(destroyed.error.domain, NativeDomain::Core);
  EXPECT_EQ(destroyed.error.kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(destroyed.error.native_code, kRefusalCodeBase + static_cast<int>(Rule::CallerDestroyUnobservedEvent));
  EXPECT_EQ(destroyed.error.what, "caller.destroy-unobserved-event");
  const std::string text = validator.describe_error(destroyed.error);
  EXPECT_NE(text.find("validator refused"), std::string::npos) << text;
  EXPECT_NE(text.find("terminal state was observed"), std::string::npos) << text;
  validator.inner().complete_all();
}

TEST(Reports, DescribeNamesCallRuleHandlesAndExpectation) {
  Checked validator;
  Stage stage = open_stage(validator);
  const UploadBatch upload(stage.buffer.ref(), 32, 5);
  SubmitResult submitted = validator.submit(stage.queue, upload.batch(), SubmitOptions{});
  ReleaseResult<Buffer> refused = validator.free_buffer(std::move(stage.buffer));
  ASSERT_EQ(validator.violation_count(), 1U);
  const Violation& violation = validator.violations().front();
  const std::string text = validator.describe(violation);
  EXPECT_NE(text.find("call " + std::to_string(violation.call_index) + " (free_buffer)"), std::string::npos) << text;
  EXPECT_NE(text.find("caller.release-while-pinned"), std::string::npos) << text;
  EXPECT_NE(text.find("buffer " + std::to_string(refused.handle.id())), std::string::npos) << text;
  EXPECT_NE(text.find("event " + std::to_string(submitted.event.id())), std::string::npos) << text;
  EXPECT_NE(text.find("the caller must ensure that"), std::string::npos) << text;
  EXPECT_EQ(violation.call_index, validator.calls() - 1) << "the offending call was the last one";
  validator.inner().complete_all();
}

TEST(Reports, EveryRuleHasAStableNameAndSummary) {
  for (std::uint32_t number = 0; number < kRuleCount; ++number) {
    const RuleInfo& info = rule_info(static_cast<Rule>(number));
    EXPECT_EQ(static_cast<std::uint32_t>(info.rule), number);
    EXPECT_FALSE(info.summary.empty());
    const std::string_view prefix = info.party == Party::Caller     ? "caller."
                                    : info.party == Party::Provider ? "provider."
                                                                    : "validator.";
    EXPECT_TRUE(info.name.starts_with(prefix)) << info.name;
  }
  EXPECT_EQ(to_string(Rule::CallerReleaseWhilePinned), "caller.release-while-pinned");
  EXPECT_EQ(to_string(Rule::ProviderTerminalUnstable), "provider.terminal-unstable");
}

TEST(Reports, StoredViolationsAreBoundedButAllAreCounted) {
  Checked validator(ValidatorOptions{.mode = ViolationMode::StopAtFirst, .violations_stored_max = 3});
  const Stage stage = open_stage(validator);
  ASSERT_TRUE(stage.buffer.valid());
  for (int attempt = 0; attempt < 10; ++attempt) EXPECT_FALSE(validator.buffer_info(Buffer(999, 1)).ok());
  EXPECT_EQ(validator.violations().size(), 3U);
  EXPECT_EQ(validator.violation_count(), 10U);
}

TEST(Reports, ForgottenReleasedHandlesAreStillReported) {
  // With a window of one remembered release, an older consumed handle is reported as unknown: still caught.
  Checked validator(ValidatorOptions{.retired_remembered_max = 1});
  Stage stage = open_stage(validator);
  Buffer second = allocate(validator, stage.context, 64);
  const Buffer first_copy(stage.buffer.id(), stage.buffer.epoch());
  const Buffer second_copy(second.id(), second.epoch());
  ASSERT_TRUE(validator.free_buffer(std::move(stage.buffer)).ok());
  ASSERT_TRUE(validator.free_buffer(std::move(second)).ok());
  EXPECT_FALSE(validator.buffer_info(first_copy).ok());
  EXPECT_FALSE(validator.buffer_info(second_copy).ok());
  EXPECT_EQ(rules_of(validator), (std::vector<Rule>{Rule::CallerUnknownHandle, Rule::CallerUseAfterRelease}));
}

// The poison search against its definition, a byte at a time: the first run of at least kPoisonRunMin sink
// bytes that still equal their poison. The sinks mix the three things the word-at-a-time search tells apart:
// data bytes, single bytes that happen to equal their poison (one data byte in two here, far above real
// data's one in 256) and planted runs of every length around the minimum, across word and segment edges.
std::uint64_t first_poison_run_by_bytes(const std::vector<std::byte>& bytes, const std::vector<std::byte>& poison) {
  std::uint64_t run_length = 0;
  for (std::uint64_t position = 0; position < bytes.size(); ++position) {
    run_length = bytes[position] == poison[position] ? run_length + 1 : 0;
    if (run_length >= kPoisonRunMin) return position + 1 - run_length;
  }
  return UINT64_MAX;
}

TEST(ReadPoison, TheSearchFindsTheFirstRunExactlyAsByteByByte) {
  Prng prng(20261203);
  std::uint64_t runs_found = 0;
  for (std::uint64_t round = 0; round < 4000; ++round) {
    const std::size_t size = static_cast<std::size_t>(prng.below(300));
    const std::uint64_t salt = prng.next();
    std::vector<std::byte> poison(size);
    const std::span<std::byte> whole(poison);
    poison_sink(ByteSink{std::span(&whole, 1)}, salt);
    std::vector<std::byte> bytes(size);
    for (std::size_t position = 0; position < size; ++position) {
      bytes[position] = prng.below(2) == 0 ? poison[position] : static_cast<std::byte>(prng.below(256));
    }
    for (std::uint64_t plant = prng.below(3); plant > 0 && size > 0; --plant) {
      const std::size_t start = static_cast<std::size_t>(prng.below(size));
      const std::size_t length = std::min<std::size_t>(4 + prng.below(9), size - start);
      std::copy_n(poison.begin() + static_cast<std::ptrdiff_t>(start), length, bytes.begin() + static_cast<std::ptrdiff_t>(start));
      if (start + length < size) bytes[start + length] = poison[start + length] ^ std::byte{0x01};
    }
    // The same bytes cut into up to three segments at random places.
    std::size_t first_cut = size == 0 ? 0 : static_cast<std::size_t>(prng.below(size + 1));
    std::size_t second_cut = size == 0 ? 0 : static_cast<std::size_t>(prng.below(size + 1));
    if (first_cut > second_cut) std::swap(first_cut, second_cut);
    const std::array<std::span<std::byte>, 3> segments = {std::span<std::byte>(bytes).first(first_cut),
                                                          std::span<std::byte>(bytes).subspan(first_cut, second_cut - first_cut),
                                                          std::span<std::byte>(bytes).subspan(second_cut)};
    const std::uint64_t expected = first_poison_run_by_bytes(bytes, poison);
    const std::span<std::byte> single(bytes);
    EXPECT_EQ(find_poison_run(ByteSink{std::span(&single, 1)}, salt), expected) << "round " << round;
    EXPECT_EQ(find_poison_run(ByteSink{segments}, salt), expected) << "round " << round << ", in segments";
    std::vector<std::uint64_t> kept;
    std::vector<std::byte> scratch(size);
    const std::span<std::byte> scratch_segment(scratch);
    poison_sink(ByteSink{std::span(&scratch_segment, 1)}, salt, kept);
    EXPECT_EQ(find_poison_run(ByteSink{segments}, salt, kept), expected) << "round " << round << ", kept words";
    if (expected != UINT64_MAX) ++runs_found;
  }
  EXPECT_GT(runs_found, 1000U) << "the sinks must hold runs for the search to find";
}

TEST(Reports, AFullInvocationSetIsReportedNotIgnored) {
  Checked validator(ValidatorOptions{.indeterminate_invocations_max = 1});
  Stage stage = open_stage(validator);
  const UploadBatch upload(stage.buffer.ref(), 32, 5);
  validator.inner().indeterminate_next_submit();
  SubmitResult first = validator.submit(stage.queue, upload.batch(), SubmitOptions{.invocation = 1});
  EXPECT_EQ(validator.violation_count(), 0U) << "one remembered invocation fits";
  validator.inner().indeterminate_next_submit();
  SubmitResult second = validator.submit(stage.queue, upload.batch(), SubmitOptions{.invocation = 2});
  ASSERT_EQ(rules_of(validator), std::vector<Rule>{Rule::ValidatorBoundExceeded});
  EXPECT_EQ(validator.violations().front().value, 1U) << "the bound is named";
  EXPECT_TRUE(first.event.valid());
  EXPECT_TRUE(second.event.valid()) << "the validator's own bound never changes the backend's answer";
  validator.inner().complete_all();
}

}  // namespace
}  // namespace quiesce::testing
