// Shared helpers of the fault tests: a small stack (toy backend, injector, one context, queue and buffer),
// scripted plans, and byte helpers.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "quiesce/core/transaction.h"
#include "quiesce/faults/injector.h"
#include "toy_backend.h"

namespace quiesce::faults::testing {

static_assert(Backend<Injector<ToyBackend>>);

// A plan that injects exactly one scripted fault.
inline Plan scripted(Site site, std::uint64_t ordinal, FaultKind kind,
                     std::optional<std::uint64_t> parameter = std::nullopt) {
  Plan plan = Plan::none();
  plan.script.push_back(ScriptedFault{site, ordinal, kind, parameter});
  return plan;
}

inline std::vector<std::byte> byte_range(std::size_t count, std::uint32_t first) {
  std::vector<std::byte> bytes(count);
  for (std::size_t index = 0; index < count; ++index) bytes[index] = std::byte(first + index);
  return bytes;
}

// The toy backend under an injector, with one context, one queue and `buffer_count` buffers of 16 bytes.
struct ToyStack {
  explicit ToyStack(Plan plan, std::size_t buffer_count = 1) : injector(toy, std::move(plan)) {
    context = injector.create_context(ContextDesc{}).value();
    queue = injector.create_queue(context, QueueDesc{}).value();
    for (std::size_t index = 0; index < buffer_count; ++index) buffers.push_back(allocate().value());
  }

  Result<Buffer> allocate(std::uint64_t bytes = 16) {
    ResourceTransaction<Injector<ToyBackend>> transaction(injector, context, budget, ++transactions);
    Result<BufferRef> allocated =
        transaction.allocate(BufferDesc{bytes, kAllBufferUsage, AllocationMode::Direct, {}});
    if (!allocated.ok()) return allocated.error();
    std::vector<Buffer> committed = transaction.commit();
    return std::move(committed.front());
  }

  SubmitResult upload(std::span<const std::byte> bytes, std::size_t buffer = 0, std::uint64_t offset = 0) {
    const std::array<Command, 1> batch = {Command::upload(bytes, buffers[buffer].ref(), offset)};
    return injector.submit(queue, batch, SubmitOptions{});
  }

  ToyBackend toy;
  Injector<ToyBackend> injector;
  MemoryBudget budget{1U << 20U};
  std::uint64_t transactions = 0;
  Context context;
  Queue queue;
  std::vector<Buffer> buffers;
};

inline void expect_injected(const Error& error, ErrorKind kind) {
  EXPECT_TRUE(error.injected) << describe_error(error);
  EXPECT_EQ(error.kind, kind) << describe_error(error);
}

}  // namespace quiesce::faults::testing
