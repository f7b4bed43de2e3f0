// Submit, event and cancel fault families: each produces exactly the legal outcome its module header states.
#include <gtest/gtest.h>

#include "test_support.h"

namespace quiesce::faults::testing {
namespace {

TEST(SubmitFaults, RejectedNeverReachesTheInnerBackend) {
  ToyStack stack(scripted(Site::Submit, 1, FaultKind::SubmitRejected));
  const auto bytes = byte_range(4, 1);
  SubmitResult result = stack.upload(bytes);
  EXPECT_EQ(result.status, SubmitStatus::Rejected);
  EXPECT_FALSE(result.event.valid());
  EXPECT_EQ(result.commands_enqueued, 0U);
  expect_injected(result.error, ErrorKind::Busy);
  EXPECT_TRUE(result.error.retryable);
  EXPECT_EQ(stack.toy.submits(), 0U);
  // The exact retry is allowed and goes through.
  SubmitResult retried = stack.upload(bytes);
  EXPECT_EQ(retried.status, SubmitStatus::Submitted);
  EXPECT_EQ(stack.toy.submits(), 1U);
  ASSERT_EQ(stack.injector.injected().size(), 1U);
  EXPECT_EQ(stack.injector.injected()[0].kind, FaultKind::SubmitRejected);
}

TEST(SubmitFaults, AdmissionTimeoutIsARetryableRejection) {
  ToyStack stack(scripted(Site::Submit, 1, FaultKind::AdmissionTimeout));
  SubmitResult result = stack.upload(byte_range(4, 1));
  EXPECT_EQ(result.status, SubmitStatus::Rejected);
  expect_injected(result.error, ErrorKind::Timeout);
  EXPECT_TRUE(result.error.retryable);
  EXPECT_EQ(stack.toy.submits(), 0U);
}

TEST(SubmitFaults, IndeterminateCarriesTheRealInnerEvent) {
  ToyStack stack(scripted(Site::Submit, 1, FaultKind::SubmitIndeterminate));
  const auto bytes = byte_range(4, 9);
  SubmitResult result = stack.upload(bytes);
  EXPECT_EQ(result.status, SubmitStatus::Indeterminate);
  ASSERT_TRUE(result.event.valid());
  expect_injected(result.error, ErrorKind::Internal);
  EXPECT_EQ(stack.toy.submits(), 1U);
  EXPECT_EQ(stack.toy.commands_submitted(), 1U);
  WaitResult waited = stack.injector.wait_event(result.event, 1000);
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->state, EventState::Complete);
  EXPECT_EQ(stack.toy.bytes(stack.buffers[0].ref())[0], bytes[0]);  // the work really ran
}

TEST(SubmitFaults, PartialSubmitRunsExactlyTheStrictPrefix) {
  ToyStack stack(scripted(Site::Submit, 1, FaultKind::PartialSubmit, 2));
  const auto first = byte_range(4, 10);
  const auto second = byte_range(4, 20);
  const auto third = byte_range(4, 30);
  const std::array<Command, 3> batch = {Command::upload(first, stack.buffers[0].ref(), 0),
                                        Command::upload(second, stack.buffers[0].ref(), 4),
                                        Command::upload(third, stack.buffers[0].ref(), 8)};
  SubmitResult result = stack.injector.submit(stack.queue, batch, SubmitOptions{});
  EXPECT_EQ(result.status, SubmitStatus::Indeterminate);
  EXPECT_EQ(result.commands_enqueued, 2U);
  ASSERT_TRUE(result.event.valid());
  EXPECT_EQ(stack.toy.commands_submitted(), 2U);
  ASSERT_TRUE(stack.injector.wait_event(result.event, 1000).ok());
  const auto data = stack.toy.bytes(stack.buffers[0].ref());
  EXPECT_EQ(data[4], second[0]);
  EXPECT_EQ(data[8], std::byte{0});  // the third command never ran
  ASSERT_EQ(stack.injector.injected().size(), 1U);
  EXPECT_EQ(stack.injector.injected()[0].kind, FaultKind::PartialSubmit);
  EXPECT_EQ(stack.injector.injected()[0].parameter, 2U);
}

TEST(SubmitFaults, PartialSubmitOfOneCommandIsPlainIndeterminate) {
  ToyStack stack(scripted(Site::Submit, 1, FaultKind::PartialSubmit));
  SubmitResult result = stack.upload(byte_range(4, 1));
  EXPECT_EQ(result.status, SubmitStatus::Indeterminate);
  EXPECT_TRUE(result.event.valid());
  EXPECT_EQ(stack.toy.commands_submitted(), 1U);
  ASSERT_EQ(stack.injector.injected().size(), 1U);
  EXPECT_EQ(stack.injector.injected()[0].kind, FaultKind::SubmitIndeterminate);
}

TEST(EventFaults, PollIndeterminateIsNotTerminalAndSkipsTheInnerPoll) {
  ToyStack stack(scripted(Site::PollEvent, 1, FaultKind::PollIndeterminate));
  SubmitResult result = stack.upload(byte_range(4, 1));
  const std::uint64_t inner_calls = stack.toy.inner_calls();
  const Observation observed = stack.injector.poll_event(result.event);
  EXPECT_EQ(observed.state, EventState::Indeterminate);
  expect_injected(observed.error, ErrorKind::Internal);
  EXPECT_EQ(stack.toy.inner_calls(), inner_calls);
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Pending);
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Complete);
}

TEST(EventFaults, WaitIndeterminateKeepsTheEventLive) {
  ToyStack stack(scripted(Site::WaitEvent, 1, FaultKind::WaitIndeterminate));
  SubmitResult result = stack.upload(byte_range(4, 1));
  WaitResult first = stack.injector.wait_event(result.event, 1000);
  ASSERT_FALSE(first.ok());
  expect_injected(first.error().error, ErrorKind::Internal);
  EXPECT_EQ(stack.toy.live_events(), 1U);
  WaitResult second = stack.injector.wait_event(result.event, 1000);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->state, EventState::Complete);
}

TEST(EventFaults, DelayedCompletionReportsPendingForExactlyTheChosenPolls) {
  ToyStack stack(scripted(Site::PollEvent, 2, FaultKind::DelayedCompletion, 3));
  stack.toy.polls_to_complete = 2;
  SubmitResult result = stack.upload(byte_range(4, 1));
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Pending);  // inner pending
  // The inner event is terminal from the second poll on; three polls still say Pending.
  for (int poll = 0; poll < 3; ++poll) EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Pending);
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Complete);
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Complete);
  ASSERT_EQ(stack.injector.injected().size(), 1U);
  EXPECT_EQ(stack.injector.injected()[0].parameter, 3U);
}

TEST(EventFaults, DelayedCompletionReordersCompletionsAcrossQueues) {
  ToyStack stack(scripted(Site::PollEvent, 1, FaultKind::DelayedCompletion, 2));
  stack.toy.polls_to_complete = 1;
  Queue second_queue = stack.injector.create_queue(stack.context, QueueDesc{}).value();
  SubmitResult early = stack.upload(byte_range(4, 1));
  const std::array<Command, 1> batch = {Command::zero(stack.buffers[0].ref(), 8, 4)};
  SubmitResult late = stack.injector.submit(second_queue, batch, SubmitOptions{});
  EXPECT_EQ(stack.injector.poll_event(early.event).state, EventState::Pending);  // finished first, seen later
  EXPECT_EQ(stack.injector.poll_event(late.event).state, EventState::Complete);
  EXPECT_EQ(stack.injector.poll_event(early.event).state, EventState::Pending);
  EXPECT_EQ(stack.injector.poll_event(early.event).state, EventState::Complete);
}

TEST(EventFaults, SynchronizeEndsEveryDelayOfItsQueue) {
  Plan plan = Plan::none();
  plan.set_rate(FaultKind::DelayedCompletion, Ratio::always());
  ToyStack stack(plan);
  SubmitResult result = stack.upload(byte_range(4, 1));
  ASSERT_TRUE(stack.injector.synchronize(stack.queue, 1000).ok());
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Complete);
  EXPECT_EQ(stack.injector.injected_count(FaultKind::DelayedCompletion), 0U);
}

TEST(EventFaults, AsyncLaunchFailureKeepsTheDataEffectsAndStaysFailed) {
  ToyStack stack(scripted(Site::WaitEvent, 1, FaultKind::AsyncLaunchFailure));
  Program program = stack.injector.load_program(stack.context, ArtifactRef{"fill"}).value();
  const std::array<Binding, 1> bindings = {Binding{stack.buffers[0].ref(), Access::Write}};
  const std::array<std::byte, 1> parameter = {std::byte{0x5A}};
  const std::array<Command, 1> batch = {Command::launch(program.ref(), LaunchDims{}, bindings, parameter)};
  SubmitResult result = stack.injector.submit(stack.queue, batch, SubmitOptions{});
  ASSERT_EQ(result.status, SubmitStatus::Submitted);
  WaitResult waited = stack.injector.wait_event(result.event, 1000);
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->state, EventState::FailedButQuiescent);
  expect_injected(waited->error, ErrorKind::Internal);
  EXPECT_EQ(stack.toy.bytes(stack.buffers[0].ref())[3], std::byte{0x5A});  // the kernel did run
  for (int poll = 0; poll < 3; ++poll) {
    EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::FailedButQuiescent);
  }
}

TEST(EventFaults, AsyncLaunchFailureNeverHitsABatchWithoutLaunch) {
  Plan plan = Plan::none();
  plan.set_rate(FaultKind::AsyncLaunchFailure, Ratio::always());
  ToyStack stack(plan);
  SubmitResult result = stack.upload(byte_range(4, 1));
  WaitResult waited = stack.injector.wait_event(result.event, 1000);
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->state, EventState::Complete);
}

TEST(EventFaults, TerminalsStayStableUnderEveryEventFault) {
  Plan plan = Plan::all();
  plan.families_enabled = 1U << static_cast<std::uint32_t>(FaultFamily::Event);
  plan.seed = 11;
  ToyStack stack(plan);
  std::uint32_t terminals_checked = 0;
  for (std::uint32_t round = 0; round < 50; ++round) {
    SubmitResult result = stack.upload(byte_range(4, round));
    ASSERT_TRUE(result.event.valid());
    std::optional<Observation> terminal;
    for (std::uint32_t poll = 0; poll < 40; ++poll) {
      const Observation observed = stack.injector.poll_event(result.event);
      if (terminal) {
        EXPECT_EQ(observed.state, terminal->state) << "round " << round << " poll " << poll;
        terminals_checked++;
      } else if (is_terminal(observed.state)) {
        terminal = observed;
      }
    }
    ASSERT_TRUE(terminal.has_value()) << "round " << round;
    WaitResult waited = stack.injector.wait_event(result.event, 1000);
    ASSERT_TRUE(waited.ok());
    EXPECT_EQ(waited->state, terminal->state);
  }
  EXPECT_GT(terminals_checked, 0U);
  EXPECT_GT(stack.injector.injected_count(FaultKind::DelayedCompletion), 0U);
}

TEST(CancelFaults, LostRaceAnswersBusyAndTheEventCompletesNormally) {
  ToyStack stack(scripted(Site::CancelEvent, 1, FaultKind::CancelLost));
  SubmitResult result = stack.upload(byte_range(4, 1));
  const std::uint64_t inner_calls = stack.toy.inner_calls();
  Status cancelled = stack.injector.cancel_event(result.event);
  ASSERT_FALSE(cancelled.ok());
  expect_injected(cancelled.error(), ErrorKind::Busy);
  EXPECT_EQ(stack.toy.inner_calls(), inner_calls);  // the inner cancel was never called
  Status again = stack.injector.cancel_event(result.event);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::Busy);  // decided exactly once
  WaitResult waited = stack.injector.wait_event(result.event, 1000);
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(waited->state, EventState::Complete);
}

TEST(CancelFaults, AnUninjectedCancelStillWins) {
  ToyStack stack(Plan::none());
  SubmitResult result = stack.upload(byte_range(4, 1));
  ASSERT_TRUE(stack.injector.cancel_event(result.event).ok());
  EXPECT_EQ(stack.injector.poll_event(result.event).state, EventState::Cancelled);
}

}  // namespace
}  // namespace quiesce::faults::testing
