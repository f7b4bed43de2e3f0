// Helpers shared by the simulated device's tests: a device with exact costs, one context, allocation
// through a real ResourceTransaction (the only way to get a permit), and byte helpers.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "quiesce/core/transaction.h"
#include "quiesce/sim/device.h"

namespace quiesce::sim::testing {

inline Config exact_config(std::uint64_t seed = 1) {
  Config config;
  config.seed = seed;
  config.memory_bytes = 64ULL << 20U;
  config.cost_jitter = Ratio{0, 1};
  config.host_costs = false;
  return config;
}

class Harness {
 public:
  explicit Harness(const Config& config = exact_config()) : device(config), budget(UINT64_MAX / 4) {
    Result<Context> created = device.create_context(ContextDesc{});
    EXPECT_TRUE(created.ok());
    context = std::move(created).value();
  }

  Result<Buffer> try_allocate(const BufferDesc& desc) {
    ResourceTransaction<Device> transaction(device, context, budget, ++transactions_);
    Result<BufferRef> staged = transaction.allocate(desc);
    if (!staged.ok()) return staged.error();
    std::vector<Buffer> buffers = transaction.commit();
    return std::move(buffers.front());
  }

  Buffer allocate(std::uint64_t bytes, BufferUsage usage = kAllBufferUsage,
                  AllocationMode mode = AllocationMode::Direct, QueueRef queue = {}) {
    Result<Buffer> buffer = try_allocate(BufferDesc{bytes, usage, mode, queue});
    EXPECT_TRUE(buffer.ok()) << (buffer.ok() ? "" : device.describe_error(buffer.error()));
    return buffer.ok() ? std::move(buffer).value() : Buffer{};
  }

  Program load(std::string_view kernel) {
    Result<Program> program = device.load_program(context, ArtifactRef{kernel, ArtifactFormat::Builtin, {}, 1U << 20U});
    EXPECT_TRUE(program.ok());
    return program.ok() ? std::move(program).value() : Program{};
  }

  Queue queue() {
    Result<Queue> created = device.create_queue(context, QueueDesc{});
    EXPECT_TRUE(created.ok());
    return created.ok() ? std::move(created).value() : Queue{};
  }

  void write(Buffer& buffer, std::span<const std::byte> bytes, std::uint64_t offset = 0) {
    const std::span<const std::byte> segments[] = {bytes};
    ASSERT_TRUE(device.write_buffer(buffer, offset, ByteSource{segments}).ok());
  }

  std::vector<std::byte> read(const Buffer& buffer, std::uint64_t bytes, std::uint64_t offset = 0) {
    std::vector<std::byte> out(bytes, std::byte{0xEE});
    const std::span<std::byte> segments[] = {out};
    EXPECT_TRUE(device.read_buffer(buffer, offset, ByteSink{segments}).ok());
    return out;
  }

  // Submits and expects Submitted; returns the event.
  Event submit(const Queue& queue, std::span<const Command> batch, SubmitOptions options = {}) {
    SubmitResult result = device.submit(queue, batch, options);
    EXPECT_EQ(result.status, SubmitStatus::Submitted) << device.describe_error(result.error);
    return std::move(result.event);
  }

  Receipt wait(const Event& event, std::uint64_t timeout_ns = 3'600'000'000'000ULL) {
    WaitResult waited = device.wait_event(event, timeout_ns);
    EXPECT_TRUE(waited.ok());
    return waited.ok() ? waited.value() : Receipt{};
  }

  void destroy(Event&& event) { EXPECT_TRUE(device.destroy_event(std::move(event)).ok()); }

  Device device;
  MemoryBudget budget;
  Context context;

 private:
  std::uint64_t transactions_ = 0;
};

inline std::vector<std::byte> u32_words(std::initializer_list<std::uint32_t> words) {
  std::vector<std::byte> bytes;
  for (const std::uint32_t word : words) {
    for (unsigned i = 0; i < 4; ++i) bytes.push_back(static_cast<std::byte>(word >> (8U * i)));
  }
  return bytes;
}

inline std::vector<std::byte> u64_bytes(std::uint64_t value) {
  std::vector<std::byte> bytes;
  for (unsigned i = 0; i < 8; ++i) bytes.push_back(static_cast<std::byte>(value >> (8U * i)));
  return bytes;
}

inline std::uint32_t word_at(const std::vector<std::byte>& bytes, std::size_t index) {
  std::uint32_t word = 0;
  for (unsigned i = 0; i < 4; ++i) word |= std::to_integer<std::uint32_t>(bytes[4 * index + i]) << (8U * i);
  return word;
}

inline std::size_t count_findings(const Device& device, FindingKind kind) {
  std::size_t count = 0;
  for (const Finding& finding : device.findings()) count += finding.kind == kind ? 1 : 0;
  return count;
}

}  // namespace quiesce::sim::testing
