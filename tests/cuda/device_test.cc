// cuda::Device on a GPU: the builtin kernels compute what the simulator computes, timing receipts, capture
// and replay with pinned buffers, waits with deadlines, stream-ordered allocation. Skipped without a driver.
#include <array>
#include <cstring>

#include "cuda_test_support.h"

namespace quiesce::cuda::testing {
namespace {

using DeviceKernels = GpuTest;
using DeviceEvents = GpuTest;

// Host references of docs/kernels.md, on data from the project PRNG.
std::vector<std::uint32_t> random_words(std::size_t count, std::uint64_t seed) {
  Prng prng(seed);
  std::vector<std::uint32_t> values(count);
  for (std::uint32_t& value : values) value = static_cast<std::uint32_t>(prng.next());
  return values;
}

TEST_F(DeviceKernels, FillCopySaxpyChecksumMatchTheHostReference) {
  constexpr std::size_t kWords = 10'007;  // not a multiple of any block size
  const std::vector<std::uint32_t> x = random_words(kWords, 1);
  const std::vector<std::uint32_t> y = random_words(kWords, 2);
  Buffer bx = allocate(kWords * 4 + 3);  // three trailing bytes that fill must leave alone
  Buffer by = allocate(kWords * 4);
  Buffer bcopy = allocate(kWords * 4);
  Buffer bsum = allocate(8);
  write(bx, words(x));
  write(by, words(y));
  const Program fill = load("fill");
  const Program copy = load("copy");
  const Program saxpy = load("saxpy");
  const Program checksum = load("checksum");

  const std::uint32_t a = 2'654'435'761U;
  const std::array<Binding, 2> copy_bindings = {Binding{bx.ref(), Access::Read}, Binding{bcopy.ref(), Access::Write}};
  const std::array<Binding, 2> saxpy_bindings = {Binding{bx.ref(), Access::Read}, Binding{by.ref(), Access::ReadWrite}};
  const std::array<Binding, 2> sum_bindings = {Binding{by.ref(), Access::Read}, Binding{bsum.ref(), Access::Write}};
  std::array<std::byte, 4> a_bytes{};
  std::memcpy(a_bytes.data(), &a, 4);
  const std::array<Command, 3> batch = {
      Command::launch(copy.ref(), dims(7, 128), copy_bindings, {}),
      Command::launch(saxpy.ref(), dims(3, 96), saxpy_bindings, a_bytes),
      Command::launch(checksum.ref(), dims(1, 256), sum_bindings, {}),
  };
  EXPECT_EQ(run(batch).state, EventState::Complete);

  std::vector<std::uint32_t> expected_y(kWords);
  std::uint64_t expected_sum = 0;
  for (std::size_t i = 0; i < kWords; ++i) {
    expected_y[i] = a * x[i] + y[i];
    expected_sum += (i + 1) * std::uint64_t{expected_y[i]};
  }
  const std::vector<std::byte> copied = read(bcopy, kWords * 4);
  const std::vector<std::byte> saxpied = read(by, kWords * 4);
  for (std::size_t i = 0; i < kWords; ++i) {
    ASSERT_EQ(word(copied, i), x[i]) << "copy differs at word " << i;
    ASSERT_EQ(word(saxpied, i), expected_y[i]) << "saxpy differs at word " << i;
  }
  std::uint64_t sum = 0;
  std::memcpy(&sum, read(bsum, 8).data(), 8);
  EXPECT_EQ(sum, expected_sum);

  // fill writes every whole word and nothing else.
  const std::vector<std::byte> before = read(bx, kWords * 4 + 3);
  const std::array<Binding, 1> fill_binding = {Binding{bx.ref(), Access::Write}};
  const std::uint32_t value = 0xC0FFEE11U;
  std::array<std::byte, 4> value_bytes{};
  std::memcpy(value_bytes.data(), &value, 4);
  const std::array<Command, 1> fill_batch = {Command::launch(fill.ref(), dims(2, 64), fill_binding, value_bytes)};
  EXPECT_EQ(run(fill_batch).state, EventState::Complete);
  const std::vector<std::byte> after = read(bx, kWords * 4 + 3);
  for (std::size_t i = 0; i < kWords; ++i) ASSERT_EQ(word(after, i), value) << "fill missed word " << i;
  EXPECT_TRUE(std::equal(after.end() - 3, after.end(), before.end() - 3)) << "fill wrote past the last whole word";
}

TEST_F(DeviceKernels, DryRunChangesNoBytesAndUploadZeroCopyWork) {
  Buffer target = allocate(4096);
  const std::vector<std::byte> content(4096, std::byte{0x5C});
  write(target, content);
  const Program fill = load("fill");
  const std::array<Binding, 1> binding = {Binding{target.ref(), Access::Write}};
  const std::array<std::byte, 4> value = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  const std::array<Command, 1> dry = {Command::launch(fill.ref(), dims(4, 256), binding, value, LaunchMode::DryRun)};
  EXPECT_EQ(run(dry).state, EventState::Complete);
  EXPECT_EQ(read(target, 4096), content);

  const std::vector<std::byte> upload(100, std::byte{0x77});
  Buffer other = allocate(4096);
  const std::array<Command, 3> batch = {Command::zero(target.ref(), 0, 4096), Command::upload(upload, target.ref(), 10),
                                        Command::copy(target.ref(), 0, other.ref(), 0, 4096)};
  EXPECT_EQ(run(batch).state, EventState::Complete);
  const std::vector<std::byte> result = read(other, 4096);
  for (std::size_t i = 0; i < 4096; ++i) {
    ASSERT_EQ(result[i], i >= 10 && i < 110 ? std::byte{0x77} : std::byte{0}) << "byte " << i;
  }
}

TEST_F(DeviceEvents, TimingOnlyWhenAskedAndAfterTheTerminal) {
  const Program delay = load("delay");
  const std::uint64_t duration_ns = 2'000'000;
  std::array<std::byte, 8> duration{};
  std::memcpy(duration.data(), &duration_ns, 8);
  const std::array<Command, 1> batch = {Command::launch(delay.ref(), dims(1, 1), {}, duration)};
  const Receipt untimed = run(batch);
  EXPECT_FALSE(untimed.timing.has_value());
  const Receipt timed = run(batch, SubmitOptions{.timing = true});
  ASSERT_TRUE(timed.timing.has_value());
  EXPECT_GE(timed.timing->started_ns, timed.timing->submitted_ns);
  EXPECT_GE(timed.timing->elapsed_ns(), duration_ns - 50'000) << "a 2 ms delay kernel measured shorter";
  EXPECT_LT(timed.timing->elapsed_ns(), 1'000'000'000U);
}

TEST_F(DeviceEvents, WaitPastItsDeadlineIsFenceIndeterminateAndRetainsTheEvent) {
  const Program delay = load("delay");
  const std::uint64_t duration_ns = 300'000'000;
  std::array<std::byte, 8> duration{};
  std::memcpy(duration.data(), &duration_ns, 8);
  const std::array<Command, 1> batch = {Command::launch(delay.ref(), dims(1, 1), {}, duration)};
  SubmitResult submitted = device().submit(queue_, batch, {});
  ASSERT_EQ(submitted.status, SubmitStatus::Submitted);
  EXPECT_EQ(device().poll_event(submitted.event).state, EventState::Pending);
  const WaitResult early = device().wait_event(submitted.event, 1'000'000);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().error.kind, ErrorKind::Timeout);
  EXPECT_EQ(device().cancel_event(submitted.event).error().kind, ErrorKind::Unsupported);
  ReleaseResult<Event> refused = device().destroy_event(std::move(submitted.event));
  ASSERT_EQ(refused.status, ReleaseStatus::Rejected);
  EXPECT_EQ(refused.error.kind, ErrorKind::Busy);
  EXPECT_EQ(device().queue_state(queue_).batches_in_flight, 1U);
  const WaitResult later = device().wait_event(refused.handle, 10'000'000'000ULL);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->state, EventState::Complete);
  EXPECT_EQ(device().poll_event(refused.handle).state, EventState::Complete);
  EXPECT_TRUE(device().destroy_event(std::move(refused.handle)).ok());
  EXPECT_EQ(device().queue_state(queue_).batches_in_flight, 0U);
}

TEST_F(DeviceEvents, CaptureReplaysAndPinsItsBuffersUntilDestroyed) {
  Buffer data = allocate(1024);
  write(data, std::vector<std::byte>(1024, std::byte{0}));
  const Program saxpy = load("saxpy");
  Buffer ones = allocate(1024);
  std::vector<std::uint32_t> one_words(256, 1);
  write(ones, words(one_words));
  const std::array<Binding, 2> bindings = {Binding{ones.ref(), Access::Read}, Binding{data.ref(), Access::ReadWrite}};
  const std::array<std::byte, 4> a = {std::byte{3}, std::byte{0}, std::byte{0}, std::byte{0}};
  ASSERT_TRUE(device().begin_capture(queue_).ok());
  EXPECT_EQ(device().queue_state(queue_).capturing, true);
  const std::array<Command, 1> step = {Command::launch(saxpy.ref(), dims(1, 256), bindings, a)};
  ASSERT_TRUE(device().capture(queue_, step).ok());
  Result<Executable> executable = device().end_capture(queue_);
  ASSERT_TRUE(executable.ok()) << device().describe_error(executable.error());
  EXPECT_EQ(read(data, 1024), std::vector<std::byte>(1024, std::byte{0})) << "capture ran the work";

  const std::array<Command, 2> replays = {Command::replay(executable->ref()), Command::replay(executable->ref())};
  EXPECT_EQ(run(replays).state, EventState::Complete);
  const std::vector<std::byte> after = read(data, 1024);
  for (std::size_t i = 0; i < 256; ++i) ASSERT_EQ(word(after, i), 6U) << "word " << i;

  ReleaseResult<Buffer> pinned = device().free_buffer(std::move(data));
  ASSERT_EQ(pinned.status, ReleaseStatus::Rejected) << "a buffer baked into a live graph was freed";
  EXPECT_EQ(pinned.error.kind, ErrorKind::Busy);
  EXPECT_TRUE(device().destroy_executable(std::move(executable).value()).ok());
  EXPECT_TRUE(device().free_buffer(std::move(pinned.handle)).ok());
}

TEST_F(DeviceEvents, StreamOrderedBuffersFollowTheirQueue) {
  if (!has_capability(device().device_info()->capabilities, Capability::StreamOrderedAllocation)) {
    GTEST_SKIP() << "this GPU has no memory pools";
  }
  Buffer buffer = allocate(1 << 20, AllocationMode::StreamOrdered);
  ASSERT_TRUE(buffer.valid());
  EXPECT_EQ(device().buffer_info(buffer)->mode, AllocationMode::StreamOrdered);
  const Program fill = load("fill");
  const std::array<Binding, 1> binding = {Binding{buffer.ref(), Access::Write}};
  const std::array<std::byte, 4> value = {std::byte{9}, std::byte{9}, std::byte{9}, std::byte{9}};
  const std::array<Command, 1> batch = {Command::launch(fill.ref(), dims(64, 256), binding, value)};
  EXPECT_EQ(run(batch).state, EventState::Complete);
  EXPECT_EQ(read(buffer, 1 << 20), std::vector<std::byte>(1 << 20, std::byte{9}));
  EXPECT_EQ(device().memory_usage(context_)->bytes_in_use, 1U << 20);
  EXPECT_TRUE(device().free_buffer(std::move(buffer)).ok());
  EXPECT_EQ(device().memory_usage(context_)->bytes_in_use, 0U);
  EXPECT_TRUE(device().memory_cleanup(context_).ok());
}

}  // namespace
}  // namespace quiesce::cuda::testing
