// The shadow-state oracle: every finding kind, produced by a deliberately wrong call sequence, beside the
// correct sequence that produces none.
#include <gtest/gtest.h>

#include <deque>

#include "sim_test_support.h"

namespace quiesce::sim {
namespace {

using testing::count_findings;
using testing::Harness;
using testing::u32_words;
using testing::u64_bytes;

class OracleTest : public ::testing::Test {
 protected:
  OracleTest() {
    fill = h.load("fill");
    copy = h.load("copy");
    delay = h.load("delay");
    first = h.queue();
    second = h.queue();
  }

  Command fill_into(const Buffer& buffer, Access access) {
    bindings_storage.push_back({Binding{buffer.ref(), access}});
    return Command::launch(fill.ref(), {}, bindings_storage.back(), value);
  }

  Harness h;
  Program fill, copy, delay;
  Queue first, second;
  std::vector<std::byte> value = u32_words({3});
  std::vector<std::byte> long_duration = u64_bytes(1'000'000);
  std::deque<std::vector<Binding>> bindings_storage;
};

TEST_F(OracleTest, UseAfterFree) {
  Buffer correct = h.allocate(64);
  const Command slow = Command::launch(delay.ref(), {}, {}, long_duration);
  const Command commands_ok[] = {slow, fill_into(correct, Access::Write)};
  Event ok_event = h.submit(first, commands_ok);
  (void)h.wait(ok_event);
  ASSERT_TRUE(h.device.free_buffer(std::move(correct)).ok());
  EXPECT_TRUE(h.device.findings().empty());

  Buffer wrong = h.allocate(64);
  const Command commands[] = {slow, fill_into(wrong, Access::Write)};
  Event event = h.submit(first, commands);
  ASSERT_TRUE(h.device.free_buffer(std::move(wrong)).ok());  // before the batch is terminal
  (void)h.wait(event);
  ASSERT_EQ(count_findings(h.device, FindingKind::UseAfterFree), 1U);
  const Finding& finding = h.device.findings().front();
  EXPECT_EQ(finding.queue_id, first.id());
  EXPECT_EQ(finding.event_id, event.id());
  EXPECT_GT(finding.time_ns, 0U);
  EXPECT_FALSE(finding.message.empty());
}

TEST_F(OracleTest, StreamOrderedBufferTouchedFromAnotherQueueAfterItsFree) {
  Buffer ordered = h.allocate(64, kAllBufferUsage, AllocationMode::StreamOrdered, first.ref());
  const Command slow = Command::launch(delay.ref(), {}, {}, long_duration);
  Event first_busy = h.submit(first, {&slow, 1});
  const Command late[] = {slow, fill_into(ordered, Access::Write)};
  Event other = h.submit(second, late);
  ASSERT_TRUE(h.device.free_buffer(std::move(ordered)).ok());
  (void)h.wait(first_busy);
  (void)h.wait(other);
  EXPECT_EQ(count_findings(h.device, FindingKind::UseAfterFree), 1U);
}

TEST_F(OracleTest, UnorderedConflictBetweenQueues) {
  Buffer shared = h.allocate(64);
  h.write(shared, std::vector<std::byte>(64));
  Buffer sink = h.allocate(64);
  const Binding copy_bindings[] = {{shared.ref(), Access::Read}, {sink.ref(), Access::Write}};
  const Command read_shared = Command::launch(copy.ref(), {}, copy_bindings, {});

  // Correct: the reader waits for the writer's event.
  const Command write_shared = fill_into(shared, Access::Write);
  Event written = h.submit(first, {&write_shared, 1});
  const Command ordered[] = {Command::wait(written.ref()), read_shared};
  Event read = h.submit(second, ordered);
  (void)h.wait(read);
  EXPECT_EQ(count_findings(h.device, FindingKind::UnorderedConflict), 0U);

  // Wrong: the same two batches with no dependency between the queues.
  Event written_again = h.submit(first, {&write_shared, 1});
  Event read_again = h.submit(second, {&read_shared, 1});
  (void)h.wait(written_again);
  (void)h.wait(read_again);
  ASSERT_EQ(count_findings(h.device, FindingKind::UnorderedConflict), 1U);
  const Finding& finding = h.device.findings().back();
  EXPECT_EQ(finding.buffer_id, shared.id());
  EXPECT_NE(finding.queue_id, finding.other_queue_id);
}

TEST_F(OracleTest, UnorderedConflictBetweenHostAndDevice) {
  Buffer buffer = h.allocate(64);
  h.write(buffer, std::vector<std::byte>(64));
  const Command write_buffer = fill_into(buffer, Access::Write);
  // Correct: the host reads only after it observed the terminal.
  Event done = h.submit(first, {&write_buffer, 1});
  (void)h.wait(done);
  (void)h.read(buffer, 64);
  // Correct too: a host write before submit is ordered before the batch.
  h.write(buffer, std::vector<std::byte>(64));
  Event after_host = h.submit(first, {&write_buffer, 1});
  (void)h.wait(after_host);
  EXPECT_EQ(count_findings(h.device, FindingKind::UnorderedConflict), 0U);
  // Wrong: the host reads while the write it never waited for is on the device.
  Event unobserved = h.submit(first, {&write_buffer, 1});
  (void)h.read(buffer, 64);
  EXPECT_EQ(count_findings(h.device, FindingKind::UnorderedConflict), 1U);
  (void)h.wait(unobserved);
}

TEST_F(OracleTest, WriteThroughReadOnlyBinding) {
  Buffer buffer = h.allocate(64);
  const Command right = fill_into(buffer, Access::Write);
  Event ok_event = h.submit(first, {&right, 1});
  (void)h.wait(ok_event);
  EXPECT_EQ(count_findings(h.device, FindingKind::ReadOnlyWrite), 0U);
  const Command wrong = fill_into(buffer, Access::Read);  // fill writes binding 0
  Event event = h.submit(first, {&wrong, 1});
  (void)h.wait(event);
  ASSERT_EQ(count_findings(h.device, FindingKind::ReadOnlyWrite), 1U);
  EXPECT_EQ(h.device.findings().back().buffer_id, buffer.id());
}

TEST_F(OracleTest, ReadOfNeverWrittenBytes) {
  Buffer written = h.allocate(64);
  Buffer fresh = h.allocate(64);
  Buffer target = h.allocate(64);
  h.write(written, std::vector<std::byte>(64));
  const Command right = Command::copy(written.ref(), 0, target.ref(), 0, 64);
  Event ok_event = h.submit(first, {&right, 1});
  (void)h.wait(ok_event);
  (void)h.read(target, 64);
  EXPECT_EQ(count_findings(h.device, FindingKind::UninitializedRead), 0U);
  // Only the first half of `fresh` is ever written; a copy of all of it reads the rest.
  h.write(fresh, std::vector<std::byte>(32));
  const Command wrong = Command::copy(fresh.ref(), 0, target.ref(), 0, 64);
  Event event = h.submit(first, {&wrong, 1});
  (void)h.wait(event);
  ASSERT_EQ(count_findings(h.device, FindingKind::UninitializedRead), 1U);
  EXPECT_NE(h.device.findings().back().message.find("byte 32"), std::string::npos);
}

TEST_F(OracleTest, ExecutionOfARejectedBatchEitherOrder) {
  const Command quick = Command::launch(delay.ref(), {}, {}, long_duration);
  // Correct: a rejection reported for work that never ran, and work that ran without a report.
  h.device.note_reported_rejected(100);
  Event clean = h.submit(first, {&quick, 1}, SubmitOptions{0, false, 101});
  (void)h.wait(clean);
  EXPECT_EQ(count_findings(h.device, FindingKind::RejectedExecuted), 0U);
  // Wrong: the layer above reports Rejected for an invocation that did run, after or before it ran.
  Event ran = h.submit(first, {&quick, 1}, SubmitOptions{0, false, 7});
  (void)h.wait(ran);
  h.device.note_reported_rejected(7);
  EXPECT_EQ(count_findings(h.device, FindingKind::RejectedExecuted), 1U);
  h.device.note_reported_rejected(8);
  Event late = h.submit(first, {&quick, 1}, SubmitOptions{0, false, 8});
  (void)h.wait(late);
  EXPECT_EQ(count_findings(h.device, FindingKind::RejectedExecuted), 2U);
  EXPECT_EQ(h.device.findings().back().invocation, 8U);
}

TEST_F(OracleTest, DoubleExecutionOfOneInvocation) {
  const Command quick = Command::launch(delay.ref(), {}, {}, long_duration);
  Event a = h.submit(first, {&quick, 1}, SubmitOptions{0, false, 1});
  Event b = h.submit(first, {&quick, 1}, SubmitOptions{0, false, 2});
  Event untagged = h.submit(first, {&quick, 1}, SubmitOptions{0, false, 0});
  Event untagged_too = h.submit(first, {&quick, 1}, SubmitOptions{0, false, 0});
  ASSERT_TRUE(h.device.synchronize(first, 100'000'000).ok());
  for (const Event* event : {&a, &b, &untagged, &untagged_too}) {
    EXPECT_EQ(h.device.poll_event(*event).state, EventState::Complete);
  }
  EXPECT_EQ(count_findings(h.device, FindingKind::DoubleExecution), 0U);
  Event retried = h.submit(second, {&quick, 1}, SubmitOptions{0, false, 1});  // indeterminate work resubmitted
  (void)h.wait(retried);
  ASSERT_EQ(count_findings(h.device, FindingKind::DoubleExecution), 1U);
  EXPECT_EQ(h.device.findings().back().invocation, 1U);
  EXPECT_EQ(h.device.findings().back().queue_id, second.id());
}

TEST_F(OracleTest, CancelledWorkNeverCountsAsExecuted) {
  const Command quick = Command::launch(delay.ref(), {}, {}, long_duration);
  Event busy = h.submit(first, {&quick, 1});
  Event cancelled = h.submit(first, {&quick, 1}, SubmitOptions{0, false, 55});
  ASSERT_TRUE(h.device.cancel_event(cancelled).ok());
  Event retried = h.submit(first, {&quick, 1}, SubmitOptions{0, false, 55});  // a retry of cancelled work is fine
  ASSERT_TRUE(h.device.synchronize(first, 100'000'000).ok());
  EXPECT_TRUE(h.device.findings().empty());
  (void)busy;
  (void)retried;
}

}  // namespace
}  // namespace quiesce::sim
