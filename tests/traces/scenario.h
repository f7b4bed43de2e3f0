// A failing run built by hand on the recorded simulator stack: a long stretch of harmless calls around one
// caller bug (a buffer freed while the batch that uses it, a delay then a zero, is still live). The shrink and corpus tests start
// from it; the workload generators never make this mistake on purpose.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "quiesce/core/transaction.h"
#include "quiesce/properties/recorded_stack.h"
#include "quiesce/properties/replay.h"

namespace quiesce::traces::testing {

struct Scenario {
  std::uint32_t noise_calls = 120;  // harmless calls before and after the bug
  bool free_while_pinned = true;    // the planted caller bug
};

// Runs the scenario and returns its trace (binary). `config` decides the stack (validator mode, device).
inline std::vector<std::byte> record_scenario(const properties::RunConfig& config, const Scenario& scenario) {
  BinaryWriter writer(properties::header_of(config));
  {
    properties::RecordedSimStack stack(config, config.plan, writer);
    auto& top = stack.top();
    Result<Context> context = top.create_context(ContextDesc{});
    Result<Queue> queue = top.create_queue(context.value(), QueueDesc{});
    MemoryBudget budget(1ULL << 30U);
    std::vector<Buffer> buffers;
    for (std::uint64_t id = 1; id <= 3; ++id) {
      ResourceTransaction<properties::RecordedSimStack::Top> transaction(top, context.value(), budget, id);
      (void)transaction.allocate(BufferDesc{4096, kAllBufferUsage});
      for (Buffer& buffer : transaction.commit()) buffers.push_back(std::move(buffer));
    }
    std::vector<std::byte> bytes(256, std::byte{0x5A});
    const std::span<const std::byte> segment(bytes);
    const auto noise = [&](std::uint32_t count) {
      for (std::uint32_t index = 0; index < count; ++index) {
        Buffer& buffer = buffers[index % 2 + 1];
        switch (index % 3) {
          case 0: (void)top.write_buffer(buffer, 0, ByteSource{std::span(&segment, 1)}); break;
          case 1: (void)top.buffer_info(buffer); break;
          default: (void)top.memory_usage(context.value()); break;
        }
      }
    };
    ArtifactRef delay_kernel;
    delay_kernel.kernel_name = "delay";
    delay_kernel.resident_bytes = 1U << 20U;
    Result<Program> delay = top.load_program(context.value(), delay_kernel);
    noise(scenario.noise_calls);
    // A millisecond of delay first, so that the zero still has to run when the free comes (a free charges
    // its own host cost of virtual time before it looks at the buffer).
    const std::uint64_t delay_ns = 1'000'000;
    std::array<std::byte, 8> parameters{};
    std::memcpy(parameters.data(), &delay_ns, sizeof(delay_ns));
    const std::array<Command, 2> batch = {Command::launch(delay.value().ref(), LaunchDims{}, {}, parameters),
                                          Command::zero(buffers[0].ref(), 0, 4096)};
    SubmitResult submitted = top.submit(queue.value(), batch, SubmitOptions{});
    if (scenario.free_while_pinned) {
      ReleaseResult<Buffer> freed = top.free_buffer(std::move(buffers[0]));
      if (freed.status == ReleaseStatus::Rejected) buffers[0] = std::move(freed.handle);
    }
    noise(scenario.noise_calls);
    (void)top.wait_event(submitted.event, 1'000'000'000);
    (void)top.destroy_event(std::move(submitted.event));
    for (Buffer& buffer : buffers) {
      if (buffer.valid()) (void)top.free_buffer(std::move(buffer));
    }
    (void)top.unload_program(std::move(delay.value()));
    (void)top.destroy_queue(std::move(queue.value()));
    (void)top.destroy_context(std::move(context.value()));
  }
  return writer.finish();
}

}  // namespace quiesce::traces::testing
