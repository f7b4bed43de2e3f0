// Shared by the GPU tests: a fixture that opens the GPU or skips with the driver's reason, and small helpers
// that allocate under a permit and move bytes.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "quiesce/core.h"
#include "quiesce/cuda/device.h"

namespace quiesce::cuda::testing {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = Device::open();
    if (!device.ok()) GTEST_SKIP() << device.error().message();
    device_.emplace(std::move(device).value());
    auto context = device_->create_context(ContextDesc{});
    ASSERT_TRUE(context.ok()) << device_->describe_error(context.error());
    context_ = std::move(context).value();
    auto queue = device_->create_queue(context_, QueueDesc{});
    ASSERT_TRUE(queue.ok()) << device_->describe_error(queue.error());
    queue_ = std::move(queue).value();
  }

  Device& device() { return *device_; }

  Buffer allocate(std::uint64_t bytes, AllocationMode mode = AllocationMode::Direct) {
    ResourceTransaction<Device> transaction(*device_, context_, budget_, ++transactions_);
    BufferDesc desc{bytes, kAllBufferUsage, mode, mode == AllocationMode::StreamOrdered ? queue_.ref() : QueueRef{}};
    Result<BufferRef> staged = transaction.allocate(desc);
    EXPECT_TRUE(staged.ok()) << device_->describe_error(staged.error());
    std::vector<Buffer> committed = transaction.commit();
    if (committed.empty()) return Buffer{};
    return std::move(committed.front());
  }
  Program load(std::string_view kernel) {
    ArtifactRef artifact{kernel, ArtifactFormat::Builtin, {}, 1U << 20};
    auto program = device_->load_program(context_, artifact);
    EXPECT_TRUE(program.ok()) << device_->describe_error(program.error());
    return program.ok() ? std::move(program).value() : Program{};
  }
  void write(Buffer& buffer, std::span<const std::byte> bytes) {
    const std::array<std::span<const std::byte>, 1> segments = {bytes};
    const Status written = device_->write_buffer(buffer, 0, ByteSource{segments});
    ASSERT_TRUE(written.ok()) << device_->describe_error(written.error());
  }
  std::vector<std::byte> read(const Buffer& buffer, std::uint64_t bytes) {
    std::vector<std::byte> sink(bytes, std::byte{0xA5});
    const std::array<std::span<std::byte>, 1> segments = {std::span<std::byte>(sink)};
    const Status done = device_->read_buffer(buffer, 0, ByteSink{segments});
    EXPECT_TRUE(done.ok()) << device_->describe_error(done.error());
    return sink;
  }
  Receipt run(std::span<const Command> batch, SubmitOptions options = {}) {
    SubmitResult submitted = device_->submit(queue_, batch, options);
    EXPECT_EQ(submitted.status, SubmitStatus::Submitted) << device_->describe_error(submitted.error);
    if (!submitted.event.valid()) return Receipt{EventState::FailedButQuiescent, submitted.error, std::nullopt};
    WaitResult waited = device_->wait_event(submitted.event, 30'000'000'000ULL);
    EXPECT_TRUE(waited.ok()) << device_->describe_error(waited.ok() ? Error{} : waited.error().error);
    const Receipt receipt = waited.ok() ? waited.value() : Receipt{EventState::FailedButQuiescent, {}, std::nullopt};
    EXPECT_TRUE(device_->destroy_event(std::move(submitted.event)).ok());
    return receipt;
  }

  static std::vector<std::byte> words(std::span<const std::uint32_t> values) {
    std::vector<std::byte> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  }
  static std::uint32_t word(std::span<const std::byte> bytes, std::size_t index) {
    std::uint32_t value = 0;
    std::memcpy(&value, bytes.data() + index * 4, 4);
    return value;
  }
  static LaunchDims dims(std::uint32_t grid, std::uint32_t block) {
    LaunchDims launch;
    launch.grid_x = grid;
    launch.block_x = block;
    return launch;
  }

  std::optional<Device> device_;
  Context context_;
  Queue queue_;
  MemoryBudget budget_{std::uint64_t{1} << 62};
  std::uint64_t transactions_ = 0;
};

}  // namespace quiesce::cuda::testing
