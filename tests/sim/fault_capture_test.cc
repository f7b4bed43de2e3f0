// The sticky fault (device loss, discard, epochs) and capture rules (recording, invalidation, pinning,
// replays that never overlap).
#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace quiesce::sim {
namespace {

using testing::exact_config;
using testing::Harness;
using testing::u32_words;
using testing::u64_bytes;
using testing::word_at;

constexpr std::int32_t kIllegalAddress = 700;

TEST(StickyFault, LosesTheContextForEveryLaterCall) {
  Harness h;
  Program fault = h.load("fault");
  Program delay = h.load("delay");
  Buffer buffer = h.allocate(64);
  Queue queue = h.queue();
  Queue other = h.queue();
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const Command slow = Command::launch(delay.ref(), {}, {}, duration);
  Event bystander = h.submit(other, {&slow, 1});
  const Binding bindings[] = {{buffer.ref(), Access::ReadWrite}};
  const Command crash = Command::launch(fault.ref(), {}, bindings, {});
  Event crashed = h.submit(queue, {&crash, 1});  // accepted: the fault happens on the device
  h.device.advance_to(10);

  const Observation polled = h.device.poll_event(crashed);
  EXPECT_EQ(polled.state, EventState::Indeterminate);
  EXPECT_EQ(polled.error.kind, ErrorKind::DeviceLost);
  EXPECT_EQ(polled.error.native_code, kIllegalAddress);
  EXPECT_EQ(h.device.poll_event(bystander).state, EventState::Indeterminate);
  const WaitResult waited = h.device.wait_event(bystander, 10'000'000);
  ASSERT_FALSE(waited.ok());
  EXPECT_EQ(waited.error().error.kind, ErrorKind::DeviceLost);
  const SubmitResult refused = h.device.submit(queue, {&slow, 1}, {});
  EXPECT_EQ(refused.status, SubmitStatus::Rejected);
  EXPECT_EQ(refused.error.kind, ErrorKind::DeviceLost);
  EXPECT_TRUE(h.device.queue_state(queue).lost);
  EXPECT_EQ(h.try_allocate(BufferDesc{64, kAllBufferUsage}).error().kind, ErrorKind::DeviceLost);
  EXPECT_EQ(h.device.synchronize(other, 1000).error().native_code, kIllegalAddress);
  std::vector<std::byte> sink(8);
  const std::span<std::byte> segments[] = {sink};
  EXPECT_EQ(h.device.read_buffer(buffer, 0, ByteSink{segments}).error().kind, ErrorKind::DeviceLost);

  // Every release is indeterminate, never rejected or released.
  EXPECT_EQ(h.device.free_buffer(std::move(buffer)).status, ReleaseStatus::Indeterminate);
  EXPECT_EQ(h.device.destroy_event(std::move(crashed)).status, ReleaseStatus::Indeterminate);
  EXPECT_EQ(h.device.destroy_queue(std::move(queue)).status, ReleaseStatus::Indeterminate);
  EXPECT_EQ(h.device.unload_program(std::move(fault)).status, ReleaseStatus::Indeterminate);
  const std::uint64_t old_epoch = h.context.epoch();
  EXPECT_EQ(h.device.destroy_context(Context(h.context.id(), h.context.epoch())).status, ReleaseStatus::Indeterminate);

  // Recovery: discard, then a fresh context with a new epoch; nothing of the old epoch resolves.
  const Event stale(bystander.id(), bystander.epoch());
  ASSERT_TRUE(h.device.discard_context(std::move(h.context)).ok());
  EXPECT_EQ(h.device.poll_event(stale).error.kind, ErrorKind::InvalidArgument);
  Result<Context> fresh = h.device.create_context(ContextDesc{});
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->epoch(), old_epoch);
  EXPECT_EQ(h.device.poll_event(stale).error.kind, ErrorKind::InvalidArgument);
  h.context = std::move(fresh).value();
  Buffer again = h.allocate(64);
  EXPECT_TRUE(again.valid());
  EXPECT_EQ(h.device.address_space().free_bytes(),
            h.device.config().memory_bytes - 256);  // the lost context's memory came back
}

TEST(StickyFault, OtherContextsAreUnaffected) {
  Harness h;
  Program fault = h.load("fault");
  Buffer buffer = h.allocate(64);
  Queue queue = h.queue();
  Result<Context> second = h.device.create_context(ContextDesc{});
  ASSERT_TRUE(second.ok());
  Result<Queue> second_queue = h.device.create_queue(second.value(), QueueDesc{});
  ASSERT_TRUE(second_queue.ok());
  Result<Program> second_delay =
      h.device.load_program(second.value(), ArtifactRef{"delay", ArtifactFormat::Builtin, {}, 1U << 20U});
  ASSERT_TRUE(second_delay.ok());
  const std::vector<std::byte> duration = u64_bytes(100);
  const Command slow = Command::launch(second_delay->ref(), {}, {}, duration);
  SubmitResult survivor = h.device.submit(second_queue.value(), {&slow, 1}, {});
  const Binding bindings[] = {{buffer.ref(), Access::ReadWrite}};
  const Command crash = Command::launch(fault.ref(), {}, bindings, {});
  Event crashed = h.submit(queue, {&crash, 1});
  const WaitResult done = h.device.wait_event(survivor.event, 1'000'000);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, EventState::Complete);
  EXPECT_EQ(h.device.poll_event(crashed).state, EventState::Indeterminate);
}

class CaptureTest : public ::testing::Test {
 protected:
  CaptureTest() {
    fill = h.load("fill");
    target = h.allocate(16);
    queue = h.queue();
  }
  Harness h;
  Program fill;
  Buffer target;
  Queue queue;
  std::vector<std::byte> value = u32_words({5});
};

TEST_F(CaptureTest, RecordsWithoutRunningAndReplaysRun) {
  const Binding bindings[] = {{target.ref(), Access::Write}};
  const Command launch = Command::launch(fill.ref(), {}, bindings, value);
  h.write(target, u32_words({0, 0, 0, 0}));
  ASSERT_TRUE(h.device.begin_capture(queue).ok());
  EXPECT_TRUE(h.device.queue_state(queue).capturing);
  ASSERT_TRUE(h.device.capture(queue, {&launch, 1}).ok());
  EXPECT_EQ(h.device.submit(queue, {&launch, 1}, {}).status, SubmitStatus::Rejected);
  Result<Executable> executable = h.device.end_capture(queue);
  ASSERT_TRUE(executable.ok());
  h.device.run_until_idle(1000);
  EXPECT_EQ(h.read(target, 16), u32_words({0, 0, 0, 0}));  // nothing ran during the capture

  // The executable pins its buffers: the free is rejected with the same live handle.
  ReleaseResult<Buffer> pinned = h.device.free_buffer(std::move(target));
  ASSERT_EQ(pinned.status, ReleaseStatus::Rejected);
  target = std::move(pinned.handle);

  const Command replay = Command::replay(executable->ref());
  Event event = h.submit(queue, {&replay, 1}, SubmitOptions{0, true, 0});
  const Receipt receipt = h.wait(event);
  EXPECT_EQ(h.read(target, 16), u32_words({5, 5, 5, 5}));
  // A replayed node costs graph_node_ns instead of the launch latency.
  EXPECT_LT(receipt.timing->elapsed_ns(), h.device.config().costs.launch_latency_ns);
  h.destroy(std::move(event));
  ASSERT_TRUE(h.device.destroy_executable(std::move(executable).value()).ok());
  EXPECT_TRUE(h.device.free_buffer(std::move(target)).ok());
  // Replayed nodes are ordered after the host's writes before the replay's submit: no conflict.
  EXPECT_TRUE(h.device.findings().empty()) << h.device.findings().front().message;
}

TEST_F(CaptureTest, SynchronizeOrPollDuringCaptureFailsAndInvalidatesIt) {
  const Binding bindings[] = {{target.ref(), Access::Write}};
  const Command launch = Command::launch(fill.ref(), {}, bindings, value);
  Event before = h.submit(queue, {&launch, 1});
  ASSERT_TRUE(h.device.begin_capture(queue).ok());
  ASSERT_TRUE(h.device.capture(queue, {&launch, 1}).ok());
  const Observation polled = h.device.poll_event(before);
  EXPECT_EQ(polled.state, EventState::Indeterminate);
  EXPECT_EQ(polled.error.native_code, 900);
  const Result<Executable> ended = h.device.end_capture(queue);
  ASSERT_FALSE(ended.ok());
  EXPECT_EQ(ended.error().native_code, 901);
  EXPECT_FALSE(h.device.queue_state(queue).capturing);  // the capture ended anyway
  // Its pins were dropped: the buffer frees once the earlier batch is done.
  (void)h.wait(before);
  EXPECT_TRUE(h.device.free_buffer(std::move(target)).ok());

  ASSERT_TRUE(h.device.begin_capture(queue).ok());
  const Status synced = h.device.synchronize(queue, 1000);
  ASSERT_FALSE(synced.ok());
  EXPECT_EQ(synced.error().native_code, 900);
  EXPECT_EQ(h.device.end_capture(queue).error().native_code, 901);
}

TEST_F(CaptureTest, ReplaysOfOneExecutableNeverOverlap) {
  Program delay = h.load("delay");
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const Command slow = Command::launch(delay.ref(), {}, {}, duration);
  ASSERT_TRUE(h.device.begin_capture(queue).ok());
  ASSERT_TRUE(h.device.capture(queue, {&slow, 1}).ok());
  Result<Executable> executable = h.device.end_capture(queue);
  ASSERT_TRUE(executable.ok());
  Queue second = h.queue();
  const Command replay = Command::replay(executable->ref());
  Event first_run = h.submit(queue, {&replay, 1}, SubmitOptions{0, true, 0});
  Event second_run = h.submit(second, {&replay, 1}, SubmitOptions{0, true, 0});
  const Receipt a = h.wait(first_run), b = h.wait(second_run);
  EXPECT_GE(b.timing->started_ns, a.timing->finished_ns);
  ReleaseResult<Executable> busy_check = h.device.destroy_executable(std::move(executable).value());
  EXPECT_TRUE(busy_check.ok());
}

TEST_F(CaptureTest, DestroyWhileAReplayIsInFlightIsRejected) {
  const Binding bindings[] = {{target.ref(), Access::Write}};
  const Command launch = Command::launch(fill.ref(), {}, bindings, value);
  ASSERT_TRUE(h.device.begin_capture(queue).ok());
  ASSERT_TRUE(h.device.capture(queue, {&launch, 1}).ok());
  Result<Executable> executable = h.device.end_capture(queue);
  ASSERT_TRUE(executable.ok());
  const Command replay = Command::replay(executable->ref());
  Event event = h.submit(queue, {&replay, 1});
  ReleaseResult<Executable> refused = h.device.destroy_executable(std::move(executable).value());
  ASSERT_EQ(refused.status, ReleaseStatus::Rejected);
  EXPECT_EQ(refused.error.kind, ErrorKind::Busy);
  (void)h.wait(event);
  EXPECT_TRUE(h.device.destroy_executable(std::move(refused.handle)).ok());
}

TEST(Capture, CapabilityOffAnswersUnsupported) {
  Config config = exact_config();
  config.capabilities = Capability::Profiling;
  Harness h(config);
  Queue queue = h.queue();
  EXPECT_EQ(h.device.begin_capture(queue).error().kind, ErrorKind::Unsupported);
  EXPECT_EQ(h.device.end_capture(queue).error().kind, ErrorKind::Unsupported);
}

}  // namespace
}  // namespace quiesce::sim
