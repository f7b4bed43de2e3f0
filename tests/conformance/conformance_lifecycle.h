// Conformance, part 1: the handle lifecycle of the Accelerator seed (003): device_info, contexts, buffers,
// explicit transfers, programs and queues, each clause of ownership, failure and allocation. Every test
// makes only legal calls (the caller's obligations hold), so it also runs under a Validator.
#pragma once

#include "conformance_support.h"

namespace quiesce::conformance {

template <class F>
class ConformanceLifecycle : public ConformanceBase<F> {};
TYPED_TEST_SUITE_P(ConformanceLifecycle);

// device_info: a successful value stays stable for the backend's lifetime; it describes a usable device.
TYPED_TEST_P(ConformanceLifecycle, DeviceInfoIsStable) {
  this->guarded([&](Harness<TypeParam>& h) {
    const DeviceInfo first = h.info();
    EXPECT_FALSE(first.name.empty());
    EXPECT_GT(first.limits.memory_bytes, 0U);
    EXPECT_GT(first.limits.buffer_alignment, 0U);
    EXPECT_EQ(first.limits.buffer_alignment & (first.limits.buffer_alignment - 1), 0U)
        << "buffer alignment " << first.limits.buffer_alignment << " is not a power of two";
    EXPECT_GT(first.limits.batch_commands_max, 0U);
    for (int repeat = 0; repeat < 3; ++repeat) {
      const Result<DeviceInfo> again = h.backend().device_info();
      if (!again.ok()) {
        h.tolerate(again.error(), "device_info");
        continue;
      }
      EXPECT_EQ(again->name, first.name);
      EXPECT_EQ(again->vendor_id, first.vendor_id);
      EXPECT_EQ(again->compute_major, first.compute_major);
      EXPECT_EQ(again->compute_minor, first.compute_minor);
      EXPECT_EQ(again->capabilities, first.capabilities);
      EXPECT_EQ(again->limits.memory_bytes, first.limits.memory_bytes);
      EXPECT_EQ(again->limits.queue_depth_max, first.limits.queue_depth_max);
      EXPECT_EQ(again->limits.launch_threads_max, first.limits.launch_threads_max);
    }
  });
}

// describe_error: a report names the error kind and its text.
TYPED_TEST_P(ConformanceLifecycle, DescribeErrorNamesTheKind) {
  this->guarded([&](Harness<TypeParam>& h) {
    const Error error = make_error(ErrorKind::Busy, "the queue still has batches in flight");
    const std::string report = h.backend().describe_error(error);
    EXPECT_NE(report.find("Busy"), std::string::npos) << report;
    EXPECT_NE(report.find("the queue still has batches in flight"), std::string::npos) << report;
  });
}

// create_context / destroy_context: success returns one owned context; an empty context is released and
// the handle consumed; two contexts are distinct.
TYPED_TEST_P(ConformanceLifecycle, ContextCreateAndDestroy) {
  this->guarded([&](Harness<TypeParam>& h) {
    Context first = h.create_context();
    Context second = h.create_context();
    EXPECT_NE(first.ref(), second.ref());
    const ReleaseStatus released_first = h.destroy(std::move(first));
    const ReleaseStatus released_second = h.destroy(std::move(second));
    if (!TypeParam::kMayInjectFaults) {
      EXPECT_EQ(released_first, ReleaseStatus::Released);
      EXPECT_EQ(released_second, ReleaseStatus::Released);
    }
  });
}

// "All current nonempty context flags are unsupported", and the same for queues. An error retains nothing.
TYPED_TEST_P(ConformanceLifecycle, NonemptyFlagsAreUnsupported) {
  this->guarded([&](Harness<TypeParam>& h) {
    for (const std::uint32_t flags : {1U, 0x80000000U}) {
      const Result<Context> context = h.backend().create_context(ContextDesc{flags});
      ASSERT_FALSE(context.ok()) << "create_context accepted flags " << flags;
      if (!context.error().injected) {
        EXPECT_EQ(context.error().kind, ErrorKind::Unsupported);
      }
    }
    World world = h.open_world(0);
    QueueDesc desc;
    desc.flags = 2;
    const Result<Queue> queue = h.backend().create_queue(world.context, desc);
    ASSERT_FALSE(queue.ok()) << "create_queue accepted flags 2";
    if (!queue.error().injected) {
      EXPECT_EQ(queue.error().kind, ErrorKind::Unsupported);
    }
    h.close_world(world);  // a context with no children: the failed queue left nothing behind
  });
}

// allocate_buffer: one exact backing for the request, under a permit; buffer_info describes it.
TYPED_TEST_P(ConformanceLifecycle, AllocationHasExactBacking) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    const BufferUsage usage = BufferUsage::ProgramInput | BufferUsage::TransferTarget | BufferUsage::TransferSource;
    for (const std::uint64_t bytes : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 20}) {
      const BufferRef ref = h.add_buffer(world, bytes, usage);
      const Result<BufferInfo> info = h.backend().buffer_info(world.buffer(ref));
      if (!info.ok()) {
        h.tolerate(info.error(), "buffer_info");
        continue;
      }
      EXPECT_EQ(info->bytes, bytes);
      EXPECT_GE(info->backing_bytes, bytes);
      EXPECT_GT(info->alignment, 0U);
      EXPECT_EQ(info->alignment & (info->alignment - 1), 0U) << "alignment " << info->alignment;
      EXPECT_EQ(info->usage, usage);
      EXPECT_EQ(info->mode, AllocationMode::Direct);
    }
    h.close_world(world);
  });
}

// Err guarantees that no backing was retained: a request beyond the device's memory fails and leaves the
// memory usage as it was.
TYPED_TEST_P(ConformanceLifecycle, AllocationBeyondCapacityRetainsNothing) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    const Result<MemoryUsage> before = h.backend().memory_usage(world.context);
    MemoryBudget budget(UINT64_MAX);
    BufferDesc desc;
    desc.bytes = h.info().limits.memory_bytes + h.info().limits.buffer_alignment;
    desc.usage = kAllBufferUsage;
    {
      ResourceTransaction<typename TypeParam::Backend> transaction(h.backend(), world.context, budget, 1);
      const Result<BufferRef> staged = transaction.allocate(desc);
      ASSERT_FALSE(staged.ok()) << "an allocation of " << desc.bytes << " bytes succeeded on a device of "
                                << h.info().limits.memory_bytes;
      if (!staged.error().injected) {
        EXPECT_EQ(staged.error().kind, ErrorKind::OutOfMemory);
      }
      EXPECT_EQ(transaction.staged_count(), 0U);
    }
    const Result<MemoryUsage> after = h.backend().memory_usage(world.context);
    if (before.ok() && after.ok()) {
      EXPECT_EQ(after->bytes_in_use, before->bytes_in_use);
      EXPECT_EQ(after->allocations, before->allocations);
    }
    h.close_world(world);
  });
}

// write_buffer then read_buffer: segmented sources and sinks, at offsets, give back exactly what was written.
TYPED_TEST_P(ConformanceLifecycle, WriteThenReadBack) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    constexpr std::uint64_t kBytes = 4096;
    const BufferRef ref = h.add_buffer(world, kBytes);
    const std::vector<std::byte> content = pattern(kBytes, 3);
    h.write(world.buffer(ref), 0, content);
    EXPECT_EQ(h.read(world.buffer(ref), 0, kBytes), content);

    const std::vector<std::byte> middle = pattern(100, 9);
    h.write(world.buffer(ref), 1000, middle);
    EXPECT_EQ(h.read(world.buffer(ref), 1000, 100), middle);
    const std::vector<std::byte> around = h.read(world.buffer(ref), 990, 120);
    for (std::size_t index = 0; index < around.size(); ++index) {
      const std::uint64_t position = 990 + index;
      const bool written_later = position >= 1000 && position < 1100;
      EXPECT_EQ(around[index], written_later ? middle[position - 1000] : content[position]) << "byte " << position;
    }
    h.close_world(world);
  });
}

// read_buffer: Ok guarantees every destination byte was initialised, whatever the sink held before.
TYPED_TEST_P(ConformanceLifecycle, SuccessfulReadInitialisesEveryByte) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    constexpr std::uint64_t kBytes = 777;  // odd: the last segment is not word sized
    const BufferRef ref = h.add_buffer(world, kBytes);
    const std::vector<std::byte> zeros(kBytes, std::byte{0});
    h.write(world.buffer(ref), 0, zeros);
    for (const std::byte poison : {std::byte{0xA5}, std::byte{0xFF}, std::byte{0x01}}) {
      const std::vector<std::byte> read = h.read_poisoned(world.buffer(ref), 0, kBytes, poison);
      EXPECT_EQ(read, zeros) << "a sink pre-filled with " << std::to_integer<int>(poison) << " kept some of it";
    }
    const std::vector<std::byte> tail = h.read_poisoned(world.buffer(ref), kBytes - 5, 5, std::byte{0x77});
    EXPECT_EQ(tail, std::vector<std::byte>(5, std::byte{0}));
    h.close_world(world);
  });
}

// free_buffer: the handle is consumed and the memory given back.
TYPED_TEST_P(ConformanceLifecycle, FreeReleasesTheBacking) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    const Result<MemoryUsage> before = h.backend().memory_usage(world.context);
    Buffer buffer = h.allocate(world.context, BufferDesc{.bytes = 1U << 16, .usage = kAllBufferUsage});
    const ReleaseStatus released = h.free(std::move(buffer));
    const Result<MemoryUsage> after = h.backend().memory_usage(world.context);
    if (released == ReleaseStatus::Released && before.ok() && after.ok()) {
      EXPECT_EQ(after->bytes_in_use, before->bytes_in_use);
      EXPECT_EQ(after->allocations, before->allocations);
    }
    if (!TypeParam::kMayInjectFaults) {
      EXPECT_EQ(released, ReleaseStatus::Released);
    }
    h.close_world(world);
  });
}

// load_program / unload_program: a builtin kernel loads within its resident_bytes and unloads; an unknown
// kernel and a resident_bytes bound no real program fits in fail and retain nothing.
TYPED_TEST_P(ConformanceLifecycle, ProgramLoadAndUnload) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    for (const std::string_view name : {"fill", "copy", "saxpy", "checksum", "delay"}) {
      Program program = h.load(world.context, name);
      EXPECT_TRUE(program.valid()) << name;
      const ReleaseStatus released = h.unload(std::move(program));
      if (!TypeParam::kMayInjectFaults) {
        EXPECT_EQ(released, ReleaseStatus::Released) << name;
      }
    }
    ArtifactRef unknown;
    unknown.kernel_name = "no-such-kernel";
    unknown.resident_bytes = 1U << 20;
    const Result<Program> missing = h.backend().load_program(world.context, unknown);
    EXPECT_FALSE(missing.ok()) << "a kernel that does not exist was loaded";

    ArtifactRef cramped;
    cramped.kernel_name = "fill";
    cramped.resident_bytes = 1;  // no program is resident in one byte (R17)
    const Result<Program> too_big = h.backend().load_program(world.context, cramped);
    ASSERT_FALSE(too_big.ok()) << "a program was loaded within a resident bound of one byte";
    if (!too_big.error().injected) {
      EXPECT_TRUE(too_big.error().kind == ErrorKind::OutOfMemory ||
                  too_big.error().kind == ErrorKind::InvalidArgument)
          << h.backend().describe_error(too_big.error());
    }
    h.close_world(world);  // fails if the refused loads retained a child of the context
  });
}

// create_queue / queue_state / destroy_queue: a new queue is idle and not capturing; it is released.
TYPED_TEST_P(ConformanceLifecycle, QueueCreateAndDestroy) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(2);
    EXPECT_NE(world.queue(0).ref(), world.queue(1).ref());
    for (const Queue& queue : world.queues) {
      const QueueState state = h.backend().queue_state(queue);
      EXPECT_EQ(state.batches_in_flight, 0U);
      EXPECT_FALSE(state.capturing);
      EXPECT_FALSE(state.lost);
    }
    h.close_world(world);
  });
}

// discard_context abandons a context with every child at once; a new context works afterwards. (That no
// handle of the discarded context resolves is ConformanceMisuse.HandlesOfADiscardedContextDoNotResolve:
// using such a handle breaks a caller obligation.)
TYPED_TEST_P(ConformanceLifecycle, DiscardContextAbandonsEveryChild) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    (void)h.add_buffer(world, 256);
    (void)h.add_program(world, "fill");
    const ContextRef discarded_ref = world.context.ref();
    const Status discarded = h.backend().discard_context(std::move(world.context));
    ASSERT_TRUE(discarded.ok()) << h.backend().describe_error(discarded.error());
    world = World{};  // the children went with their context: nothing is left to release

    World fresh = h.open_world(1);
    EXPECT_NE(fresh.context.ref(), discarded_ref) << "a new context reused the discarded one's handle";
    const BufferRef fresh_ref = h.add_buffer(fresh, 64);
    const std::vector<std::byte> content = pattern(64, 1);
    h.write(fresh.buffer(fresh_ref), 0, content);
    EXPECT_EQ(h.read(fresh.buffer(fresh_ref), 0, 64), content);
    h.close_world(fresh);
  });
}

REGISTER_TYPED_TEST_SUITE_P(ConformanceLifecycle, DeviceInfoIsStable, DescribeErrorNamesTheKind,
                            ContextCreateAndDestroy, NonemptyFlagsAreUnsupported, AllocationHasExactBacking,
                            AllocationBeyondCapacityRetainsNothing, WriteThenReadBack,
                            SuccessfulReadInitialisesEveryByte, FreeReleasesTheBacking, ProgramLoadAndUnload,
                            QueueCreateAndDestroy, DiscardContextAbandonsEveryChild);

}  // namespace quiesce::conformance
