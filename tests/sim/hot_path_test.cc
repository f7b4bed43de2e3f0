// The hot path allocates nothing per operation once warm: submit, poll, wait, destroy_event, cancel,
// queue_state, buffer_info and transfers on a warmed device make no heap allocation.
//
// The count needs a replaced global operator new, so this file is its own test executable; the counter is
// the one process global of this binary and only this test reads it.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "sim_test_support.h"

namespace {
std::atomic<std::uint64_t> allocations{0};
}  // namespace

void* operator new(std::size_t bytes) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
  throw std::bad_alloc();
}
// g++ cannot see that this pair replaces the global allocation functions together.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t /*bytes*/) noexcept { std::free(memory); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace quiesce::sim {
namespace {

using testing::Harness;
using testing::u32_words;
using testing::u64_bytes;

TEST(HotPath, SteadyStateOperationsAllocateNothing) {
  Config config = testing::exact_config();
  config.host_costs = true;
  config.cost_jitter = Ratio{1, 16};
  Harness h(config);
  Program fill = h.load("fill");
  Program delay = h.load("delay");
  Buffer buffer = h.allocate(256);
  Buffer other = h.allocate(256);
  Queue queue = h.queue();
  const std::vector<std::byte> value = u32_words({5});
  const std::vector<std::byte> duration = u64_bytes(10'000);
  const std::vector<std::byte> host_bytes(256);
  std::vector<std::byte> sink_bytes(256);
  const std::span<const std::byte> source[] = {host_bytes};
  const std::span<std::byte> sink[] = {sink_bytes};
  const Binding bindings[] = {{buffer.ref(), Access::Write}};
  const Command batch[] = {Command::launch(fill.ref(), {}, bindings, value),
                           Command::copy(buffer.ref(), 0, other.ref(), 0, 256)};
  const Command slow = Command::launch(delay.ref(), {}, {}, duration);
  const auto round = [&](std::uint64_t invocation) {
    ASSERT_TRUE(h.device.write_buffer(buffer, 0, ByteSource{source}).ok());
    SubmitResult first = h.device.submit(queue, batch, SubmitOptions{0, true, invocation});
    SubmitResult second = h.device.submit(queue, {&slow, 1}, SubmitOptions{});
    ASSERT_EQ(first.status, SubmitStatus::Submitted);
    (void)h.device.cancel_event(second.event);
    for (int poll = 0; poll < 64 && !is_terminal(h.device.poll_event(first.event).state); ++poll) {
    }
    ASSERT_TRUE(h.device.wait_event(first.event, 1'000'000'000).ok());
    ASSERT_TRUE(h.device.synchronize(queue, 1'000'000'000).ok());
    (void)h.device.queue_state(queue);
    (void)h.device.buffer_info(other);
    ASSERT_TRUE(h.device.read_buffer(other, 0, ByteSink{sink}).ok());
    ASSERT_TRUE(h.device.destroy_event(std::move(first.event)).ok());
    ASSERT_TRUE(h.device.destroy_event(std::move(second.event)).ok());
  };
  for (std::uint64_t warm = 0; warm < 64; ++warm) round(0);
  const std::uint64_t before = allocations.load();
  for (std::uint64_t measured = 0; measured < 1000; ++measured) round(0);
  const std::uint64_t during = allocations.load() - before;
  EXPECT_EQ(during, 0U) << "the steady-state loop allocated " << during << " times in 1000 rounds";
  // With invocation ids the oracle remembers every executed invocation (to catch a second execution):
  // its set doubles now and then, so 4000 tagged rounds may allocate a few times, never once per round.
  const std::uint64_t before_tagged = allocations.load();
  for (std::uint64_t invocation = 1; invocation <= 4000; ++invocation) round(invocation);
  const std::uint64_t tagged = allocations.load() - before_tagged;
  EXPECT_LE(tagged, 8U) << "4000 tagged rounds allocated " << tagged << " times";
  EXPECT_TRUE(h.device.findings().empty());
  // The counter works: a vector allocates.
  const std::uint64_t probe = allocations.load();
  std::vector<int> allocated(16);
  EXPECT_GT(allocations.load(), probe);
  EXPECT_EQ(allocated.size(), 16U);
}

}  // namespace
}  // namespace quiesce::sim
