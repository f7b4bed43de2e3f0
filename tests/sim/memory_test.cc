// Device memory: capacity, alignment, fragmentation and real OutOfMemory; pools, reports and cleanup;
// stream-ordered frees; the two behaviours of a Direct free while work is in flight.
#include <gtest/gtest.h>

#include "quiesce/sim/backing.h"
#include "sim_test_support.h"

namespace quiesce::sim {
namespace {

using testing::exact_config;
using testing::Harness;
using testing::u32_words;
using testing::u64_bytes;

Config small_memory(std::uint64_t bytes) {
  Config config = exact_config();
  config.memory_bytes = bytes;
  return config;
}

TEST(Memory, AllocationsAreAlignedAndReportTheirBacking) {
  Harness h;
  Buffer a = h.allocate(1);
  Buffer b = h.allocate(300);
  EXPECT_EQ(h.device.buffer_info(a)->backing_bytes, 256U);
  const Result<BufferInfo> info = h.device.buffer_info(b);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->bytes, 300U);
  EXPECT_EQ(info->backing_bytes, 512U);
  EXPECT_EQ(info->alignment, 256U);
  EXPECT_EQ(h.device.address_space().free_bytes(), h.device.config().memory_bytes - 256 - 512);
}

TEST(Memory, CapacityIsRealAndOutOfMemoryIsReported) {
  Harness h(small_memory(4096));
  Buffer a = h.allocate(4096);
  const Result<Buffer> more = h.try_allocate(BufferDesc{1, kAllBufferUsage});
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.error().kind, ErrorKind::OutOfMemory);
  EXPECT_EQ(more.error().domain, NativeDomain::Simulator);
  EXPECT_TRUE(h.device.free_buffer(std::move(a)).ok());
  EXPECT_TRUE(h.try_allocate(BufferDesc{4096, kAllBufferUsage}).ok());
}

TEST(Memory, FragmentationRefusesARequestThatFitsOnlyInTotal) {
  Harness h(small_memory(4 * 256));
  Buffer b0 = h.allocate(256);
  Buffer b1 = h.allocate(256);
  Buffer b2 = h.allocate(256);
  Buffer b3 = h.allocate(256);
  EXPECT_EQ(h.device.address_space().free_bytes(), 0U);
  EXPECT_TRUE(b3.valid());
  EXPECT_TRUE(h.device.free_buffer(std::move(b0)).ok());
  EXPECT_TRUE(h.device.free_buffer(std::move(b2)).ok());
  EXPECT_EQ(h.device.address_space().free_bytes(), 512U);
  EXPECT_EQ(h.device.address_space().largest_free_range(), 256U);
  const Result<Buffer> wide = h.try_allocate(BufferDesc{512, kAllBufferUsage});
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.error().kind, ErrorKind::OutOfMemory);
  EXPECT_TRUE(h.device.free_buffer(std::move(b1)).ok());  // merges the three lowest ranges
  EXPECT_TRUE(h.try_allocate(BufferDesc{768, kAllBufferUsage}).ok());
}

TEST(Memory, TransfersCheckUsageAndBoundsAndFillEverySinkByte) {
  Harness h;
  Buffer buffer = h.allocate(8, BufferUsage::TransferTarget | BufferUsage::TransferSource);
  h.write(buffer, u32_words({1, 2}));
  std::vector<std::byte> first(3), second(5);
  const std::span<std::byte> segments[] = {first, second};
  ASSERT_TRUE(h.device.read_buffer(buffer, 0, ByteSink{segments}).ok());
  std::vector<std::byte> joined = first;
  joined.insert(joined.end(), second.begin(), second.end());
  EXPECT_EQ(joined, u32_words({1, 2}));
  std::vector<std::byte> too_long(9);
  const std::span<std::byte> long_segments[] = {too_long};
  EXPECT_EQ(h.device.read_buffer(buffer, 0, ByteSink{long_segments}).error().kind, ErrorKind::InvalidArgument);
  Buffer device_only = h.allocate(8, BufferUsage::MutableState);
  const std::vector<std::byte> bytes = u32_words({3});
  const std::span<const std::byte> source[] = {bytes};
  EXPECT_EQ(h.device.write_buffer(device_only, 0, ByteSource{source}).error().kind, ErrorKind::PermissionDenied);
}

TEST(Memory, TransfersTakeVirtualTimeByTheCostModel) {
  Config config = exact_config();
  config.host_costs = true;
  Harness h(config);
  Buffer buffer = h.allocate(6000);
  const std::uint64_t before_ns = h.device.now_ns();
  h.write(buffer, std::vector<std::byte>(6000));
  // 6000 bytes at 6000 bytes per microsecond.
  EXPECT_EQ(h.device.now_ns() - before_ns, 1000U);
}

TEST(Pools, SizeClassesCacheBlocksUntilCleanup) {
  Harness h;
  ASSERT_TRUE(h.device.install_pools(h.context, PoolLayout{{1024, 65536}}).ok());
  Buffer small = h.allocate(100);
  Buffer large = h.allocate(1U << 20U);
  EXPECT_EQ(h.device.buffer_info(large)->backing_bytes, 1U << 20U);
  EXPECT_EQ(h.device.buffer_info(small)->backing_bytes, 1024U);
  Result<MemoryReport> report = h.device.memory_report(h.context);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->pools.size(), 3U);  // two classes, then large allocations
  EXPECT_EQ(report->pools[0].block_bytes, 1024U);
  EXPECT_EQ(report->pools[0].blocks_in_use, 1U);
  EXPECT_EQ(report->pools[2].block_bytes, 0U);
  EXPECT_EQ(report->pools[2].bytes_in_use, 1U << 20U);

  const std::uint64_t free_before = h.device.address_space().free_bytes();
  EXPECT_TRUE(h.device.free_buffer(std::move(small)).ok());
  EXPECT_EQ(h.device.address_space().free_bytes(), free_before);  // cached, still reserved
  MemoryUsage usage = h.device.memory_usage(h.context).value();
  EXPECT_EQ(usage.bytes_reserved, 1024U + (1U << 20U));
  EXPECT_EQ(usage.bytes_in_use, 1U << 20U);
  EXPECT_EQ(usage.bytes_in_use_max, 1024U + (1U << 20U));
  EXPECT_EQ(usage.allocations, 1U);

  Buffer again = h.allocate(900);  // served from the cached block
  EXPECT_EQ(h.device.address_space().free_bytes(), free_before);
  EXPECT_TRUE(h.device.free_buffer(std::move(again)).ok());
  ASSERT_TRUE(h.device.memory_cleanup(h.context).ok());
  EXPECT_EQ(h.device.address_space().free_bytes(), free_before + 1024U);
  EXPECT_EQ(h.device.memory_report(h.context)->pools[0].blocks_reserved, 0U);
  EXPECT_EQ(h.device.memory_report(h.context)->pools[0].bytes_in_use_max, 1024U);
}

TEST(Pools, InstallIsBusyWhileAnythingIsLiveAndValidatesTheLayout) {
  Harness h;
  Buffer live = h.allocate(64);
  const Status busy = h.device.install_pools(h.context, PoolLayout{{512}});
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().kind, ErrorKind::Busy);
  EXPECT_TRUE(h.device.free_buffer(std::move(live)).ok());
  EXPECT_EQ(h.device.install_pools(h.context, PoolLayout{{512, 256}}).error().kind, ErrorKind::InvalidArgument);
  EXPECT_TRUE(h.device.install_pools(h.context, PoolLayout{{512}}).ok());
}

TEST(Pools, CapabilityOffAnswersUnsupported) {
  Config config = exact_config();
  config.capabilities = Capability::Profiling;
  Harness h(config);
  EXPECT_EQ(h.device.install_pools(h.context, PoolLayout{{512}}).error().kind, ErrorKind::Unsupported);
  Queue queue = h.queue();
  const Result<Buffer> ordered = h.try_allocate(BufferDesc{64, kAllBufferUsage, AllocationMode::StreamOrdered, queue.ref()});
  ASSERT_FALSE(ordered.ok());
  EXPECT_EQ(ordered.error().kind, ErrorKind::Unsupported);
  EXPECT_FALSE(has_capability(h.device.device_info()->capabilities, Capability::MemoryPools));
}

// A stream-ordered free is reached only when its queue gets there (R12): until then the range is not reused.
TEST(StreamOrdered, MemoryIsReusableOnlyOnceTheQueueReachesTheFree) {
  Harness h(small_memory(2 * 256 + 4096));  // room for one program and two 256-byte buffers
  Program delay = h.load("delay");
  Queue queue = h.queue();
  Buffer ordered = h.allocate(256, kAllBufferUsage, AllocationMode::StreamOrdered, queue.ref());
  Buffer other = h.allocate(256);
  EXPECT_TRUE(other.valid());
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const Binding bindings[] = {{ordered.ref(), Access::ReadWrite}};
  const Command launch = Command::launch(delay.ref(), {}, bindings, duration);
  Event event = h.submit(queue, {&launch, 1});
  ASSERT_TRUE(h.device.free_buffer(std::move(ordered)).ok());
  EXPECT_FALSE(h.try_allocate(BufferDesc{256, kAllBufferUsage}).ok());  // not reached yet
  EXPECT_EQ(h.device.memory_usage(h.context)->bytes_in_use, 512U);
  (void)h.wait(event);
  EXPECT_EQ(h.device.memory_usage(h.context)->bytes_in_use, 256U);
  EXPECT_TRUE(h.try_allocate(BufferDesc{256, kAllBufferUsage}).ok());
  EXPECT_TRUE(h.device.findings().empty());
}

TEST(DirectFree, ImplicitlySynchronizesWhenConfigured) {
  Config config = exact_config();
  config.free_synchronizes = true;
  Harness h(config);
  Program delay = h.load("delay");
  Queue queue = h.queue();
  Buffer busy = h.allocate(64);
  Buffer unrelated = h.allocate(64);
  const std::vector<std::byte> duration = u64_bytes(200'000'000);
  const Binding bindings[] = {{busy.ref(), Access::ReadWrite}};
  const Command launch = Command::launch(delay.ref(), {}, bindings, duration);
  Event event = h.submit(queue, {&launch, 1});
  // Like the measured cuMemFree of an *unrelated* buffer, the free waits for the whole 200 ms kernel.
  EXPECT_TRUE(h.device.free_buffer(std::move(unrelated)).ok());
  EXPECT_GE(h.device.now_ns(), 200'000'000U);
  EXPECT_TRUE(h.device.free_buffer(std::move(busy)).ok());
  EXPECT_EQ(h.device.poll_event(event).state, EventState::Complete);
  EXPECT_TRUE(h.device.findings().empty());
}

TEST(DirectFree, WithoutSynchronizationFreesAtOnceAndTheOracleSeesTheUseAfterFree) {
  Harness h;
  Program delay = h.load("delay");
  Program fill = h.load("fill");
  Queue queue = h.queue();
  Buffer victim = h.allocate(64);
  const std::vector<std::byte> duration = u64_bytes(1'000'000);
  const std::vector<std::byte> value = u32_words({7});
  const Binding bindings[] = {{victim.ref(), Access::Write}};
  const Command commands[] = {Command::launch(delay.ref(), {}, {}, duration),
                              Command::launch(fill.ref(), {}, bindings, value)};
  Event event = h.submit(queue, commands);
  EXPECT_TRUE(h.device.free_buffer(std::move(victim)).ok());
  EXPECT_EQ(h.device.now_ns(), 0U);  // returned at once
  (void)h.wait(event);
  EXPECT_EQ(testing::count_findings(h.device, FindingKind::UseAfterFree), 1U);
}

TEST(Contexts, DestroyWithLiveChildrenIsRejectedWithTheSameHandle) {
  Harness h;
  Buffer buffer = h.allocate(64);
  const std::uint64_t id = h.context.id();
  ReleaseResult<Context> refused = h.device.destroy_context(std::move(h.context));
  ASSERT_EQ(refused.status, ReleaseStatus::Rejected);
  EXPECT_EQ(refused.error.kind, ErrorKind::Busy);
  EXPECT_EQ(refused.handle.id(), id);
  EXPECT_TRUE(h.device.free_buffer(std::move(buffer)).ok());
  EXPECT_TRUE(h.device.destroy_context(std::move(refused.handle)).ok());
}

// The written-bits shadow answers the first never-written byte of a range: in a leading partial word, in
// the four-word blocks a long range is tested by, in the words after the last block, in a trailing word.
TEST(Memory, BackingFindsTheFirstUnwrittenByteOfAnyRange) {
  Backing backing(1U << 16U);
  constexpr std::uint64_t kBase = 4096;
  constexpr std::uint64_t kBytes = 4096;
  for (const std::uint64_t hole : {std::uint64_t{0}, std::uint64_t{5}, std::uint64_t{64}, std::uint64_t{255},
                                   std::uint64_t{256}, std::uint64_t{1000}, std::uint64_t{3839},
                                   std::uint64_t{3900}, std::uint64_t{4095}}) {
    backing.mark_written(kBase, kBytes);
    backing.mark_unwritten(kBase + hole, 1);
    for (const std::uint64_t start : {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{64}}) {
      if (start > hole) continue;
      EXPECT_EQ(backing.first_unwritten(kBase + start, kBytes - start), hole - start) << "hole " << hole;
      EXPECT_EQ(backing.first_unwritten(kBase + start, hole - start), hole - start) << "hole " << hole;
    }
  }
  backing.mark_written(kBase, kBytes);
  EXPECT_EQ(backing.first_unwritten(kBase + 7, kBytes - 9), kBytes - 9);
  EXPECT_EQ(backing.first_unwritten(kBase + kBytes - 10, 20), 10U);  // the range runs past the written bytes
}

}  // namespace
}  // namespace quiesce::sim
