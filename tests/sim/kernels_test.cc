// The builtin kernels' bytes on the simulated device (docs/kernels.md), dry runs, launch validation and
// program loading.
#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace quiesce::sim {
namespace {

using testing::Harness;
using testing::u32_words;
using testing::u64_bytes;
using testing::word_at;

TEST(Kernels, FillWritesEveryWordAndLeavesTheTail) {
  Harness h;
  Buffer out = h.allocate(18);
  h.write(out, std::vector<std::byte>(18, std::byte{0x11}));
  Program fill = h.load("fill");
  Queue queue = h.queue();
  const Binding bindings[] = {{out.ref(), Access::Write}};
  const std::vector<std::byte> value = u32_words({0xA1B2C3D4});
  const Command launch = Command::launch(fill.ref(), {}, bindings, value);
  Event event = h.submit(queue, {&launch, 1});
  EXPECT_EQ(h.wait(event).state, EventState::Complete);
  const std::vector<std::byte> bytes = h.read(out, 18);
  for (std::size_t word = 0; word < 4; ++word) EXPECT_EQ(word_at(bytes, word), 0xA1B2C3D4U);
  EXPECT_EQ(bytes[16], std::byte{0x11});  // 18 bytes hold 4 whole words
  EXPECT_EQ(bytes[17], std::byte{0x11});
  EXPECT_TRUE(h.device.findings().empty());
}

TEST(Kernels, CopyMovesMinimumOfBothSizes) {
  Harness h;
  Buffer source = h.allocate(8);
  Buffer target = h.allocate(12);
  h.write(source, u32_words({1, 2}));
  h.write(target, u32_words({9, 9, 9}));
  Program copy = h.load("copy");
  Queue queue = h.queue();
  const Binding bindings[] = {{source.ref(), Access::Read}, {target.ref(), Access::Write}};
  const Command launch = Command::launch(copy.ref(), {}, bindings, {});
  Event event = h.submit(queue, {&launch, 1});
  (void)h.wait(event);
  const std::vector<std::byte> bytes = h.read(target, 12);
  EXPECT_EQ(word_at(bytes, 0), 1U);
  EXPECT_EQ(word_at(bytes, 1), 2U);
  EXPECT_EQ(word_at(bytes, 2), 9U);
  EXPECT_TRUE(h.device.findings().empty());
}

TEST(Kernels, SaxpyWrapsModulo2To32) {
  Harness h;
  Buffer x = h.allocate(12);
  Buffer y = h.allocate(8);
  h.write(x, u32_words({1, 0x80000000U, 7}));
  h.write(y, u32_words({5, 3}));
  Program saxpy = h.load("saxpy");
  Queue queue = h.queue();
  const Binding bindings[] = {{x.ref(), Access::Read}, {y.ref(), Access::ReadWrite}};
  const std::vector<std::byte> a = u32_words({3});
  const Command launch = Command::launch(saxpy.ref(), {}, bindings, a);
  Event event = h.submit(queue, {&launch, 1});
  (void)h.wait(event);
  const std::vector<std::byte> bytes = h.read(y, 8);
  EXPECT_EQ(word_at(bytes, 0), 3U * 1U + 5U);
  EXPECT_EQ(word_at(bytes, 1), static_cast<std::uint32_t>(3U * 0x80000000U + 3U));
  EXPECT_TRUE(h.device.findings().empty());
}

TEST(Kernels, ChecksumIsWeightedSumModulo2To64) {
  Harness h;
  Buffer data = h.allocate(12);
  Buffer out = h.allocate(8);
  h.write(data, u32_words({0xFFFFFFFFU, 2, 3}));
  Program checksum = h.load("checksum");
  Queue queue = h.queue();
  const Binding bindings[] = {{data.ref(), Access::Read}, {out.ref(), Access::Write}};
  const Command launch = Command::launch(checksum.ref(), {}, bindings, {});
  Event event = h.submit(queue, {&launch, 1});
  (void)h.wait(event);
  const std::uint64_t expected = 1ULL * 0xFFFFFFFFULL + 2ULL * 2 + 3ULL * 3;
  EXPECT_EQ(h.read(out, 8), u64_bytes(expected));
  EXPECT_TRUE(h.device.findings().empty());
}

TEST(Kernels, DelayTakesItsDurationPlusLaunchLatencyAndTouchesNothing) {
  Harness h;
  Buffer untouched = h.allocate(4);
  h.write(untouched, u32_words({77}));
  Program delay = h.load("delay");
  Queue queue = h.queue();
  const Binding bindings[] = {{untouched.ref(), Access::ReadWrite}};
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const Command launch = Command::launch(delay.ref(), {}, bindings, duration);
  const std::uint64_t start_ns = h.device.now_ns();
  Event event = h.submit(queue, {&launch, 1}, SubmitOptions{0, true, 0});
  const Receipt receipt = h.wait(event);
  ASSERT_TRUE(receipt.timing.has_value());
  EXPECT_EQ(receipt.timing->elapsed_ns(), 1'000'000U + h.device.config().costs.launch_latency_ns);
  EXPECT_EQ(h.device.now_ns(), start_ns + receipt.timing->elapsed_ns());
  EXPECT_EQ(word_at(h.read(untouched, 4), 0), 77U);
}

TEST(Kernels, DryRunValidatesAndChangesNoBytes) {
  Harness h;
  Buffer out = h.allocate(8);
  h.write(out, u32_words({5, 6}));
  Program fill = h.load("fill");
  Queue queue = h.queue();
  const Binding bindings[] = {{out.ref(), Access::Write}};
  const std::vector<std::byte> value = u32_words({0});
  const Command dry = Command::launch(fill.ref(), {}, bindings, value, LaunchMode::DryRun);
  Event event = h.submit(queue, {&dry, 1});
  EXPECT_EQ(h.wait(event).state, EventState::Complete);
  EXPECT_EQ(h.read(out, 8), u32_words({5, 6}));
  // A dry run is validated like a real launch: a wrong parameter size is still refused.
  const Command bad = Command::launch(fill.ref(), {}, bindings, {}, LaunchMode::DryRun);
  EXPECT_EQ(h.device.submit(queue, {&bad, 1}, {}).status, SubmitStatus::Rejected);
  EXPECT_TRUE(h.device.findings().empty());
}

TEST(Kernels, AbiAndConfigurationErrorsAreSynchronousRejectionsAndNotSticky) {
  Harness h;
  Buffer out = h.allocate(16);
  Program fill = h.load("fill");
  Program checksum = h.load("checksum");
  Queue queue = h.queue();
  const Binding one[] = {{out.ref(), Access::Write}};
  const Binding two[] = {{out.ref(), Access::Read}, {out.ref(), Access::Write}};
  const std::vector<std::byte> value = u32_words({1});
  LaunchDims too_wide;
  too_wide.block_x = 2048;
  Buffer small = h.allocate(4);
  const Binding short_out[] = {{out.ref(), Access::Read}, {small.ref(), Access::Write}};
  const Command wrong[] = {
      Command::launch(fill.ref(), {}, two, value),            // binding count
      Command::launch(fill.ref(), {}, one, {}),               // parameter bytes
      Command::launch(fill.ref(), too_wide, one, value),      // threads per block
      Command::launch(checksum.ref(), {}, short_out, {}),     // output under 8 bytes
  };
  for (const Command& command : wrong) {
    const SubmitResult result = h.device.submit(queue, {&command, 1}, {});
    EXPECT_EQ(result.status, SubmitStatus::Rejected);
    EXPECT_EQ(result.error.kind, ErrorKind::InvalidArgument);
    EXPECT_EQ(result.commands_enqueued, 0U);
  }
  const Command right = Command::launch(fill.ref(), {}, one, value);
  Event event = h.submit(queue, {&right, 1});
  EXPECT_EQ(h.wait(event).state, EventState::Complete);
  EXPECT_FALSE(h.device.queue_state(queue).lost);
}

TEST(Kernels, AccessModeMustMatchBufferUsage) {
  Harness h;
  Buffer input_only = h.allocate(8, BufferUsage::ProgramInput | BufferUsage::TransferTarget);
  Program fill = h.load("fill");
  Queue queue = h.queue();
  const Binding bindings[] = {{input_only.ref(), Access::Write}};
  const std::vector<std::byte> value = u32_words({1});
  const Command launch = Command::launch(fill.ref(), {}, bindings, value);
  const SubmitResult result = h.device.submit(queue, {&launch, 1}, {});
  EXPECT_EQ(result.status, SubmitStatus::Rejected);
  EXPECT_EQ(result.error.kind, ErrorKind::PermissionDenied);
}

TEST(Programs, LoadRules) {
  Harness h;
  const auto load = [&](std::string_view name, ArtifactFormat format, std::uint64_t resident) {
    return h.device.load_program(h.context, ArtifactRef{name, format, {}, resident});
  };
  Result<Program> unknown = load("matmul", ArtifactFormat::Builtin, 1U << 20U);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(unknown.error().native_code, static_cast<std::int32_t>(Code::NotFound));
  Result<Program> cubin = load("fill", ArtifactFormat::Cubin, 1U << 20U);
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.error().kind, ErrorKind::Unsupported);
  Result<Program> too_small = load("fill", ArtifactFormat::Builtin, kProgramResidentBytes - 1);
  ASSERT_FALSE(too_small.ok());
  EXPECT_EQ(too_small.error().native_code, static_cast<std::int32_t>(Code::ResidentLimit));
  Result<Program> exact = load("fill", ArtifactFormat::Builtin, kProgramResidentBytes);
  ASSERT_TRUE(exact.ok());
  EXPECT_TRUE(h.device.unload_program(std::move(exact).value()).ok());
}

TEST(Programs, UnloadOfAProgramInFlightIsRejectedWithTheSameHandle) {
  Harness h;
  Program delay = h.load("delay");
  Queue queue = h.queue();
  const std::vector<std::byte> duration = u64_bytes(1'000);
  const Command launch = Command::launch(delay.ref(), {}, {}, duration);
  Event event = h.submit(queue, {&launch, 1});
  const std::uint64_t id = delay.id();
  ReleaseResult<Program> refused = h.device.unload_program(std::move(delay));
  ASSERT_EQ(refused.status, ReleaseStatus::Rejected);
  EXPECT_EQ(refused.handle.id(), id);
  (void)h.wait(event);
  EXPECT_TRUE(h.device.unload_program(std::move(refused.handle)).ok());
}

}  // namespace
}  // namespace quiesce::sim
