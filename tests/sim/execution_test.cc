// Execution in virtual time: the cost model, engines and queues, cross-queue waits, admission, cancellation,
// timing receipts, event and queue release rules, and time compression.
#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace quiesce::sim {
namespace {

using testing::exact_config;
using testing::Harness;
using testing::u32_words;
using testing::u64_bytes;

constexpr SubmitOptions kTimed{0, true, 0};

Command delay_launch(const Program& delay, const std::vector<std::byte>& duration) {
  return Command::launch(delay.ref(), {}, {}, duration);
}

TEST(CostModel, CopyUploadZeroAndKernelCosts) {
  Harness h;
  const CostProfile& costs = h.device.config().costs;
  Buffer a = h.allocate(1U << 20U);
  Buffer b = h.allocate(1U << 20U);
  h.write(a, std::vector<std::byte>(1U << 20U));
  Queue queue = h.queue();
  const std::vector<std::byte> upload(6000);
  const struct {
    Command command;
    std::uint64_t expected_ns;
  } cases[] = {
      {Command::copy(a.ref(), 0, b.ref(), 0, 1'600'000 / 2), 500},  // 800,000 bytes at 1.6 MB/us
      {Command::upload(upload, b.ref(), 0), 1000},                  // 6000 bytes at 6000 B/us
      {Command::zero(b.ref(), 0, 2'400'000 / 4), 250},
  };
  for (const auto& entry : cases) {
    Event event = h.submit(queue, {&entry.command, 1}, kTimed);
    const Receipt receipt = h.wait(event);
    ASSERT_TRUE(receipt.timing.has_value());
    EXPECT_EQ(receipt.timing->elapsed_ns(), costs.copy_latency_ns + entry.expected_ns) << to_string(entry.command.kind);
    h.destroy(std::move(event));
  }
  Program fill = h.load("fill");
  const Binding bindings[] = {{b.ref(), Access::Write}};
  const std::vector<std::byte> value = u32_words({1});
  const Command launch = Command::launch(fill.ref(), {}, bindings, value);
  Event event = h.submit(queue, {&launch, 1}, kTimed);
  // 1 MiB written at 2.4 MB/us, rounded up, plus the launch latency.
  const std::uint64_t bytes_ns = ((1ULL << 20U) * 1000 + 2'400'000 - 1) / 2'400'000;
  EXPECT_EQ(h.wait(event).timing->elapsed_ns(), costs.launch_latency_ns + bytes_ns);
}

TEST(Engines, QueuesRunConcurrentlyUpToTheEngineCount) {
  Config config = exact_config();
  config.execution_engines = 2;
  Harness h(config);
  Program delay = h.load("delay");
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const Command launch = delay_launch(delay, duration);
  Queue q1 = h.queue(), q2 = h.queue(), q3 = h.queue();
  Event e1 = h.submit(q1, {&launch, 1}, kTimed);
  Event e2 = h.submit(q2, {&launch, 1}, kTimed);
  Event e3 = h.submit(q3, {&launch, 1}, kTimed);
  const std::uint64_t one_ns = 1'000'000 + h.device.config().costs.launch_latency_ns;
  const Receipt r3 = h.wait(e3);
  EXPECT_EQ(h.wait(e1).timing->started_ns, 0U);
  EXPECT_EQ(h.wait(e2).timing->started_ns, 0U);
  EXPECT_EQ(r3.timing->started_ns, one_ns);  // the third waited for a free engine
  EXPECT_EQ(r3.timing->finished_ns, 2 * one_ns);
  EXPECT_EQ(r3.timing->submitted_ns, 0U);
}

TEST(Engines, CopiesAndLaunchesUseSeparateEngines) {
  Config config = exact_config();
  config.execution_engines = 1;
  config.copy_engines = 1;
  Harness h(config);
  Program delay = h.load("delay");
  Buffer target = h.allocate(6000);
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const std::vector<std::byte> bytes(6000);
  const Command launch = delay_launch(delay, duration);
  const Command upload = Command::upload(bytes, target.ref(), 0);
  Queue q1 = h.queue(), q2 = h.queue();
  Event e1 = h.submit(q1, {&launch, 1}, kTimed);
  Event e2 = h.submit(q2, {&upload, 1}, kTimed);
  EXPECT_EQ(h.wait(e2).timing->started_ns, 0U);
  EXPECT_EQ(h.wait(e1).timing->started_ns, 0U);
}

TEST(Queues, CommandsOfAQueueRunInOrder) {
  Harness h;
  Program delay = h.load("delay");
  const std::vector<std::byte> long_duration = u64_bytes(5'000'000), short_duration = u64_bytes(10);
  const Command slow = delay_launch(delay, long_duration), fast = delay_launch(delay, short_duration);
  Queue queue = h.queue();
  Event first = h.submit(queue, {&slow, 1}, kTimed);
  Event second = h.submit(queue, {&fast, 1}, kTimed);
  const Receipt a = h.wait(first), b = h.wait(second);
  EXPECT_GE(b.timing->started_ns, a.timing->finished_ns);
}

TEST(Queues, AWaitCommandOrdersAQueueBehindAnotherQueuesEvent) {
  Harness h;
  Program delay = h.load("delay");
  const std::vector<std::byte> duration = u64_bytes(3'000'000);
  const Command slow = delay_launch(delay, duration);
  Queue producer = h.queue(), consumer = h.queue();
  Event produced = h.submit(producer, {&slow, 1}, kTimed);
  const std::vector<std::byte> one = u64_bytes(1);
  const Command consume[] = {Command::wait(produced.ref()), delay_launch(delay, one)};
  Event consumed = h.submit(consumer, consume, kTimed);
  EXPECT_EQ(h.device.poll_event(consumed).state, EventState::Pending);
  const Receipt before = h.wait(produced), after = h.wait(consumed);
  EXPECT_GE(after.timing->started_ns, before.timing->finished_ns);
}

TEST(Admission, AFullQueueWaitsThenRejectsRetryablyWithTimeout) {
  Config config = exact_config();
  config.queue_depth_max = 2;
  Harness h(config);
  Program delay = h.load("delay");
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const Command launch = delay_launch(delay, duration);
  Queue queue = h.queue();
  Event e1 = h.submit(queue, {&launch, 1});
  Event e2 = h.submit(queue, {&launch, 1});
  EXPECT_EQ(h.device.queue_state(queue).batches_in_flight, 2U);
  const SubmitResult refused = h.device.submit(queue, {&launch, 1}, SubmitOptions{1000, false, 0});
  EXPECT_EQ(refused.status, SubmitStatus::Rejected);
  EXPECT_EQ(refused.error.kind, ErrorKind::Timeout);
  EXPECT_TRUE(refused.error.retryable);
  EXPECT_EQ(h.device.now_ns(), 1000U);  // it waited the whole admission timeout
  // With a timeout long enough for the first batch to finish, admission succeeds.
  const SubmitResult admitted = h.device.submit(queue, {&launch, 1}, SubmitOptions{10'000'000, false, 0});
  EXPECT_EQ(admitted.status, SubmitStatus::Submitted);
  EXPECT_EQ(h.device.poll_event(e1).state, EventState::Complete);
  EXPECT_EQ(h.wait(e2).state, EventState::Complete);
}

TEST(Cancellation, WinsBeforeAnyCommandStartedAndLosesAfter) {
  Harness h;
  Program delay = h.load("delay");
  Program fill = h.load("fill");
  Buffer target = h.allocate(8);
  h.write(target, u32_words({1, 1}));
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const std::vector<std::byte> value = u32_words({9});
  const Binding bindings[] = {{target.ref(), Access::Write}};
  const Command slow = delay_launch(delay, duration);
  const Command write = Command::launch(fill.ref(), {}, bindings, value);
  Queue queue = h.queue();
  Event running = h.submit(queue, {&slow, 1});
  Event queued = h.submit(queue, {&write, 1});
  // The first batch started at submit: cancellation loses, and the event completes normally.
  const Status lost = h.device.cancel_event(running);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.error().kind, ErrorKind::Busy);
  // The second has not started: cancellation wins and nothing of it ever runs.
  ASSERT_TRUE(h.device.cancel_event(queued).ok());
  EXPECT_EQ(h.device.poll_event(queued).state, EventState::Cancelled);
  EXPECT_TRUE(h.device.cancel_event(queued).ok());  // decided once: still cancelled
  EXPECT_EQ(h.wait(running).state, EventState::Complete);
  ASSERT_TRUE(h.device.synchronize(queue, 1'000'000'000).ok());
  EXPECT_EQ(h.device.poll_event(queued).state, EventState::Cancelled);
  EXPECT_EQ(h.read(target, 8), u32_words({1, 1}));
  EXPECT_FALSE(h.device.cancel_event(running).ok());  // later polls agree: Complete stays Complete
  EXPECT_EQ(h.device.poll_event(running).state, EventState::Complete);
}

TEST(Cancellation, CapabilityOffAnswersUnsupported) {
  Config config = exact_config();
  config.capabilities = Capability::Profiling;
  Harness h(config);
  Program delay = h.load("delay");
  const std::vector<std::byte> duration = u64_bytes(10);
  const Command launch = delay_launch(delay, duration);
  Queue queue = h.queue();
  Event event = h.submit(queue, {&launch, 1});
  EXPECT_EQ(h.device.cancel_event(event).error().kind, ErrorKind::Unsupported);
}

TEST(Timing, ReceiptsOnlyWhenAskedWithProfilingAndAfterATerminal) {
  Harness h;
  Program delay = h.load("delay");
  const std::vector<std::byte> duration = u64_bytes(1000);
  const Command launch = delay_launch(delay, duration);
  Queue queue = h.queue();
  Event timed = h.submit(queue, {&launch, 1}, kTimed);
  const Observation pending = h.device.poll_event(timed);
  EXPECT_EQ(pending.state, EventState::Pending);
  EXPECT_FALSE(pending.timing.has_value());
  EXPECT_TRUE(h.wait(timed).timing.has_value());
  EXPECT_TRUE(h.device.poll_event(timed).timing.has_value());
  Event untimed = h.submit(queue, {&launch, 1});
  EXPECT_FALSE(h.wait(untimed).timing.has_value());

  Config config = exact_config();
  config.capabilities = Capability::EventCancellation;
  Harness without(config);
  Program delay2 = without.load("delay");
  Queue queue2 = without.queue();
  const Command launch2 = delay_launch(delay2, duration);
  const SubmitResult refused = without.device.submit(queue2, {&launch2, 1}, kTimed);
  EXPECT_EQ(refused.status, SubmitStatus::Rejected);
  EXPECT_EQ(refused.error.kind, ErrorKind::Unsupported);
}

TEST(Events, WaitTimesOutIndeterminateWithTheEventStillLive) {
  Harness h;
  Program delay = h.load("delay");
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const Command launch = delay_launch(delay, duration);
  Queue queue = h.queue();
  Event event = h.submit(queue, {&launch, 1});
  const WaitResult early = h.device.wait_event(event, 1000);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().error.kind, ErrorKind::Timeout);
  EXPECT_EQ(h.device.now_ns(), 1000U);
  ReleaseResult<Event> refused = h.device.destroy_event(std::move(event));
  ASSERT_EQ(refused.status, ReleaseStatus::Rejected);
  EXPECT_EQ(refused.error.kind, ErrorKind::Busy);
  EXPECT_EQ(h.wait(refused.handle).state, EventState::Complete);
  EXPECT_TRUE(h.device.destroy_event(std::move(refused.handle)).ok());
}

TEST(Events, PollNeverAdvancesStateBackwardsAndNeverBlocks) {
  Harness h;
  Program delay = h.load("delay");
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const Command launch = delay_launch(delay, duration);
  Queue queue = h.queue();
  Event event = h.submit(queue, {&launch, 1});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(h.device.poll_event(event).state, EventState::Pending);
  EXPECT_EQ(h.device.now_ns(), 0U);
  h.device.advance_to(2'000'000);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(h.device.poll_event(event).state, EventState::Complete);
}

TEST(Queues, DestroyWithBatchesInFlightIsRejectedAndSynchronizeTimesOut) {
  Harness h;
  Program delay = h.load("delay");
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const Command launch = delay_launch(delay, duration);
  Queue queue = h.queue();
  Event event = h.submit(queue, {&launch, 1});
  const Status early = h.device.synchronize(queue, 10);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().kind, ErrorKind::Timeout);
  ReleaseResult<Queue> refused = h.device.destroy_queue(std::move(queue));
  ASSERT_EQ(refused.status, ReleaseStatus::Rejected);
  EXPECT_EQ(refused.error.kind, ErrorKind::Busy);
  ASSERT_TRUE(h.device.synchronize(refused.handle, 10'000'000).ok());
  EXPECT_EQ(h.device.poll_event(event).state, EventState::Complete);
  h.destroy(std::move(event));
  EXPECT_TRUE(h.device.destroy_queue(std::move(refused.handle)).ok());
}

// The real-time figure is measured by bench/sim_bench.cc (BM_HourOfKernelTime), never by a unit test.
TEST(TimeCompression, AnHourOfKernelTimeIsSimulatedEventByEvent) {
  Harness h;
  Program delay = h.load("delay");
  const std::vector<std::byte> minute = u64_bytes(60'000'000'000ULL);
  const Command launch = delay_launch(delay, minute);
  Queue queue = h.queue();
  for (int i = 0; i < 60; ++i) {
    Event event = h.submit(queue, {&launch, 1});
    (void)h.wait(event);
    h.destroy(std::move(event));
  }
  EXPECT_GE(h.device.now_ns(), 3'600'000'000'000ULL);
  EXPECT_LT(h.device.clock().events_fired(), 1000U);  // time jumps from event to event
}

}  // namespace
}  // namespace quiesce::sim
