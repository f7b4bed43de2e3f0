// Conformance, part 3: what depends on a capability of DeviceInfo — cancellation, timing receipts, captured
// executables, stream-ordered allocation, memory pools — and the memory accounting every backend reports.
// A capability a backend lacks answers Unsupported, never a fake success; each test checks both sides.
#pragma once

#include "conformance_support.h"

namespace quiesce::conformance {

template <class F>
class ConformanceCapabilities : public ConformanceBase<F> {};
TYPED_TEST_SUITE_P(ConformanceCapabilities);

// Checks one cancellation outcome against the event's terminal: won means Cancelled; lost (Busy) means a
// normal terminal; without EventCancellation the answer is Unsupported (R8).
template <class F>
void expect_cancel_consistent(Harness<F>& h, const Status& cancelled, const Receipt& receipt) {
  if (!h.has(Capability::EventCancellation)) {
    ASSERT_FALSE(cancelled.ok()) << "cancel_event succeeded without the EventCancellation capability";
    expect_unsupported(cancelled.error());
    EXPECT_NE(receipt.state, EventState::Cancelled);
  } else if (cancelled.ok()) {
    EXPECT_EQ(receipt.state, EventState::Cancelled) << "cancellation won but the event ended otherwise (R8)";
  } else {
    if (!cancelled.error().injected) {
      EXPECT_EQ(cancelled.error().kind, ErrorKind::Busy) << h.backend().describe_error(cancelled.error());
    }
    EXPECT_NE(receipt.state, EventState::Cancelled) << "cancellation lost, yet the event ended Cancelled (R8)";
  }
}

// cancel_event on pending work: won (Ok, then Cancelled, and no command had an effect) or lost (Busy, then
// a normal terminal with the effects); Unsupported when EventCancellation is absent. The fill batch waits
// on its queue behind a long delay, so it cannot have started when it is cancelled: on a backend that
// holds work until driven, that cancellation must win.
TYPED_TEST_P(ConformanceCapabilities, CancelIsDecidedExactlyOnce) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    constexpr std::uint64_t kBytes = 256;
    const BufferRef target = h.add_buffer(world, kBytes);
    const ProgramRef delay = h.add_program(world, "delay");
    const ProgramRef fill = h.add_program(world, "fill");
    const std::vector<std::byte> before(kBytes, std::byte{0});
    h.write(world.buffer(target), 0, before);
    const std::array<std::byte, 8> duration = u64_le(long_work_ns<TypeParam>());
    const std::array<std::byte, 4> value = u32_le(0xCA9CE1U);
    const std::array<Binding, 1> bindings = {Binding{target, Access::Write}};
    const std::array<Command, 1> hold = {Command::launch(delay, LaunchDims{}, {}, duration)};
    const std::array<Command, 1> effect = {Command::launch(fill, dims_for_bytes(kBytes), bindings, value)};
    SubmitResult held = h.submit_once(world.queue(), hold, {.invocation = h.next_invocation()});
    SubmitResult queued = h.submit_once(world.queue(), effect, {.invocation = h.next_invocation()});
    if (held.status == SubmitStatus::Rejected || queued.status == SubmitStatus::Rejected) {
      h.tolerate(held.status == SubmitStatus::Rejected ? held.error : queued.error, "submit");
      if (held.event.valid()) (void)h.finish(std::move(held.event));
      if (queued.event.valid()) (void)h.finish(std::move(queued.event));
      h.close_world(world);
      return;
    }
    const Status queued_cancel = h.backend().cancel_event(queued.event);
    const Status held_cancel = h.backend().cancel_event(held.event);
    const Receipt queued_receipt = h.wait_terminal(queued.event);
    const Receipt held_receipt = h.wait_terminal(held.event);
    expect_cancel_consistent(h, queued_cancel, queued_receipt);
    expect_cancel_consistent(h, held_cancel, held_receipt);
    if (TypeParam::kHoldsWorkUntilDriven && !TypeParam::kMayInjectFaults &&
        h.has(Capability::EventCancellation)) {
      EXPECT_TRUE(queued_cancel.ok()) << "cancellation of a batch queued behind a long delay lost: "
                                      << h.backend().describe_error(queued_cancel.error());
    }
    const std::vector<std::byte> after = h.read(world.buffer(target), 0, kBytes);
    if (queued_receipt.state == EventState::Cancelled) {
      EXPECT_EQ(after, before) << "a cancelled batch had effects (R8)";
    } else if (queued_receipt.state == EventState::Complete && queued.status == SubmitStatus::Submitted) {
      EXPECT_EQ(after, repeated_word(kBytes, 0xCA9CE1U)) << "a completed batch lost its effects";
    }
    h.expect_stable(queued.event, queued_receipt.state);
    h.expect_stable(held.event, held_receipt.state);
    (void)h.destroy(std::move(queued.event));
    (void)h.destroy(std::move(held.event));
    h.close_world(world);
  });
}

// cancel_event after the terminal: completion already won, so Busy, and the terminal does not change.
TYPED_TEST_P(ConformanceCapabilities, CancelAfterTheTerminalIsBusy) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    const ProgramRef delay = h.add_program(world, "delay");
    const std::array<std::byte, 8> duration = u64_le(1000);
    const std::array<Command, 1> batch = {Command::launch(delay, LaunchDims{}, {}, duration)};
    SubmitResult submitted = h.submit_once(world.queue(), batch, {.invocation = h.next_invocation()});
    if (submitted.status == SubmitStatus::Rejected) {
      h.tolerate(submitted.error, "submit");
      h.close_world(world);
      return;
    }
    const Receipt receipt = h.wait_terminal(submitted.event);
    const Status cancelled = h.backend().cancel_event(submitted.event);
    ASSERT_FALSE(cancelled.ok()) << "cancellation of a terminal event claimed to win";
    if (h.has(Capability::EventCancellation)) {
      if (!cancelled.error().injected) {
        EXPECT_EQ(cancelled.error().kind, ErrorKind::Busy);
      }
    } else {
      expect_unsupported(cancelled.error());
    }
    h.expect_stable(submitted.event, receipt.state);
    (void)h.destroy(std::move(submitted.event));
    h.close_world(world);
  });
}

// Timing receipts exist only after a terminal, only when asked, and only with Profiling; they are ordered
// and cover the work. Unavailable timing is absent, never zero (R15).
TYPED_TEST_P(ConformanceCapabilities, TimingOnlyWhenAskedAndSupported) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    const ProgramRef delay = h.add_program(world, "delay");
    constexpr std::uint64_t kDelayNs = 2'000'000;
    const std::array<std::byte, 8> duration = u64_le(kDelayNs);
    const std::array<Command, 1> batch = {Command::launch(delay, LaunchDims{}, {}, duration)};
    const auto untimed = h.run(world.queue(), batch);
    EXPECT_FALSE(untimed.receipt.timing.has_value()) << "timing was reported though not asked for";

    SubmitOptions timed_options;
    timed_options.timing = true;
    if (h.has(Capability::Profiling)) {
      const auto timed = h.run(world.queue(), batch, timed_options);
      if (timed.clean()) {
        ASSERT_TRUE(timed.receipt.timing.has_value()) << "timing was asked for, supported, and not reported";
        const TimingReceipt& timing = *timed.receipt.timing;
        EXPECT_LE(timing.submitted_ns, timing.started_ns);
        EXPECT_LE(timing.started_ns, timing.finished_ns);
        EXPECT_GE(timing.elapsed_ns(), kDelayNs) << "the receipt is shorter than the work it times";
      }
    } else {
      SubmitResult result = h.submit_once(world.queue(), batch, {.timing = true, .invocation = h.next_invocation()});
      if (result.status == SubmitStatus::Rejected) {
        expect_unsupported(result.error);
      } else {
        const Receipt receipt = h.finish(std::move(result.event));
        EXPECT_FALSE(receipt.timing.has_value()) << "timing without the Profiling capability";
      }
    }
    h.close_world(world);
  });
}

// Captures a one-command batch into an executable, ending the capture on every path. Empty under injected
// faults that spoiled the window (the caller tries again).
template <class F>
std::optional<Executable> capture_fill(Harness<F>& h, const Queue& queue, Batch batch) {
  const Status begun = h.backend().begin_capture(queue);
  if (!begun.ok()) {
    h.tolerate(begun.error(), "begin_capture");
    return std::nullopt;
  }
  EXPECT_TRUE(h.backend().queue_state(queue).capturing) << "begin_capture did not open the capture window";
  const Status recorded = h.backend().capture(queue, batch);
  if (!recorded.ok()) h.tolerate(recorded.error(), "capture");
  Result<Executable> executable = h.backend().end_capture(queue);  // always reached (R13)
  EXPECT_FALSE(h.backend().queue_state(queue).capturing) << "end_capture left the queue capturing";
  if (!executable.ok()) {
    h.tolerate(executable.error(), "end_capture");
    return std::nullopt;
  }
  if (!recorded.ok()) {
    (void)h.destroy(std::move(executable).value());
    return std::nullopt;
  }
  return std::move(executable).value();
}

// begin_capture / capture / end_capture / Replay / destroy_executable: capture records without running;
// each replay runs the recorded work; Unsupported without ReusableExecutables.
TYPED_TEST_P(ConformanceCapabilities, CaptureRecordsAndReplayRuns) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    constexpr std::uint64_t kBytes = 512;
    const BufferRef target = h.add_buffer(world, kBytes);
    const ProgramRef fill = h.add_program(world, "fill");
    const std::vector<std::byte> zeros(kBytes, std::byte{0});
    h.write(world.buffer(target), 0, zeros);
    const std::array<std::byte, 4> value = u32_le(0x6A4F00DU);
    const std::array<Binding, 1> bindings = {Binding{target, Access::Write}};
    const std::array<Command, 1> recorded = {Command::launch(fill, dims_for_bytes(kBytes), bindings, value)};
    if (!h.has(Capability::ReusableExecutables)) {
      const Status begun = h.backend().begin_capture(world.queue());
      ASSERT_FALSE(begun.ok()) << "begin_capture succeeded without the ReusableExecutables capability";
      expect_unsupported(begun.error());
      h.close_world(world);
      return;
    }
    std::optional<Executable> executable;
    for (std::uint32_t attempt = 0; !executable && attempt < Harness<TypeParam>::kAttemptsMax; ++attempt) {
      executable = capture_fill(h, world.queue(), recorded);
    }
    ASSERT_TRUE(executable.has_value()) << "no capture succeeded";
    EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), zeros) << "captured work ran during capture";
    const std::array<Command, 1> replay = {Command::replay(executable->ref())};
    for (int round = 0; round < 2; ++round) {
      (void)h.run_clean(world.queue(), replay, [&] { h.write(world.buffer(target), 0, zeros); });
      EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), repeated_word(kBytes, 0x6A4F00DU)) << "replay " << round;
    }
    const ReleaseStatus released = h.destroy(std::move(*executable));
    if (!TypeParam::kMayInjectFaults) {
      EXPECT_EQ(released, ReleaseStatus::Released);
    }
    h.close_world(world);
  });
}

// A submit on a capturing queue is the backend's to refuse (capture() records, submit runs): it is
// rejected, nothing runs and nothing joins the capture; the window stays open and still ends normally.
TYPED_TEST_P(ConformanceCapabilities, SubmitOnACapturingQueueIsRejected) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    if (!h.has(Capability::ReusableExecutables)) {
      const Status begun = h.backend().begin_capture(world.queue());
      ASSERT_FALSE(begun.ok()) << "begin_capture succeeded without the ReusableExecutables capability";
      expect_unsupported(begun.error());
      h.close_world(world);
      return;
    }
    constexpr std::uint64_t kBytes = 64;
    const BufferRef target = h.add_buffer(world, kBytes);
    const std::vector<std::byte> before(kBytes, std::byte{0});
    h.write(world.buffer(target), 0, before);
    const Status begun = h.backend().begin_capture(world.queue());
    ASSERT_TRUE(begun.ok()) << h.backend().describe_error(begun.error());
    const std::vector<std::byte> upload = pattern(kBytes, 61);
    const std::array<Command, 1> batch = {Command::upload(upload, target, 0)};
    SubmitResult during = h.submit_once(world.queue(), batch, {.invocation = h.next_invocation()});
    EXPECT_EQ(during.status, SubmitStatus::Rejected) << "a submit on a capturing queue was "
                                                     << to_string(during.status);
    EXPECT_TRUE(h.backend().queue_state(world.queue()).capturing) << "a refused submit ended the capture";
    Result<Executable> ended = h.backend().end_capture(world.queue());
    if (during.event.valid()) (void)h.finish(std::move(during.event));
    if (ended.ok()) (void)h.destroy(std::move(ended).value());
    TypeParam::settle(h.backend());
    EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), before) << "a rejected submit during capture ran";
    h.close_world(world);
  });
}

// Stream-ordered allocation: a buffer ordered on a queue is usable by work on that queue and freed in
// order; Unsupported without StreamOrderedAllocation.
TYPED_TEST_P(ConformanceCapabilities, StreamOrderedAllocation) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    BufferDesc desc;
    desc.bytes = 1024;
    desc.usage = kAllBufferUsage;
    desc.mode = AllocationMode::StreamOrdered;
    desc.queue = world.queue().ref();
    if (!h.has(Capability::StreamOrderedAllocation)) {
      MemoryBudget budget(UINT64_MAX);
      ResourceTransaction<typename TypeParam::Backend> transaction(h.backend(), world.context, budget, 1);
      const Result<BufferRef> refused = transaction.allocate(desc);
      ASSERT_FALSE(refused.ok()) << "a stream-ordered allocation succeeded without the capability";
      expect_unsupported(refused.error());
      h.close_world(world);
      return;
    }
    world.buffers.push_back(h.allocate(world.context, desc));
    const BufferRef ordered = world.buffers.back().ref();
    const Result<BufferInfo> info = h.backend().buffer_info(world.buffer(ordered));
    if (info.ok()) {
      EXPECT_EQ(info->mode, AllocationMode::StreamOrdered);
    }
    const ProgramRef fill = h.add_program(world, "fill");
    const std::array<std::byte, 4> value = u32_le(0x0DDBA11U);
    const std::array<Binding, 1> bindings = {Binding{ordered, Access::Write}};
    const std::array<Command, 1> batch = {Command::launch(fill, dims_for_bytes(desc.bytes), bindings, value)};
    (void)h.run_clean(world.queue(), batch, {});
    EXPECT_EQ(h.read(world.buffer(ordered), 0, desc.bytes), repeated_word(desc.bytes, 0x0DDBA11U));
    h.close_world(world);  // frees the ordered buffer on its queue, then the queue and the context
  });
}

// memory_usage / memory_report: allocations raise bytes in use and the high-water mark; frees give the
// bytes back and keep the mark; the per-pool report adds up to the usage.
TYPED_TEST_P(ConformanceCapabilities, MemoryUsageAndReportTrackAllocations) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    const Result<MemoryUsage> before = h.backend().memory_usage(world.context);
    ASSERT_TRUE(before.ok()) << h.backend().describe_error(before.error());
    std::uint64_t requested = 0;
    for (const std::uint64_t bytes : {std::uint64_t{1000}, std::uint64_t{4096}, std::uint64_t{1} << 20}) {
      (void)h.add_buffer(world, bytes);
      requested += bytes;
    }
    const Result<MemoryUsage> during = h.backend().memory_usage(world.context);
    ASSERT_TRUE(during.ok()) << h.backend().describe_error(during.error());
    EXPECT_GE(during->bytes_in_use, before->bytes_in_use + requested);
    EXPECT_EQ(during->allocations, before->allocations + 3);
    EXPECT_GE(during->bytes_reserved, during->bytes_in_use);
    EXPECT_GE(during->bytes_in_use_max, during->bytes_in_use);
    const Result<MemoryReport> report = h.backend().memory_report(world.context);
    ASSERT_TRUE(report.ok()) << h.backend().describe_error(report.error());
    std::uint64_t pooled_in_use = 0;
    for (const PoolReport& pool : report->pools) {
      EXPECT_LE(pool.bytes_in_use, pool.bytes_reserved);
      EXPECT_LE(pool.blocks_in_use, pool.blocks_reserved);
      EXPECT_GE(pool.bytes_in_use_max, pool.bytes_in_use);
      pooled_in_use += pool.bytes_in_use;
    }
    EXPECT_EQ(pooled_in_use, during->bytes_in_use) << "the per-pool report does not add up to the usage";
    for (Buffer& buffer : world.buffers) (void)h.free(std::move(buffer));
    world.buffers.clear();
    const Result<MemoryUsage> after = h.backend().memory_usage(world.context);
    ASSERT_TRUE(after.ok()) << h.backend().describe_error(after.error());
    if (h.indeterminate_releases() == 0) {
      EXPECT_EQ(after->bytes_in_use, before->bytes_in_use);
    }
    EXPECT_GE(after->bytes_in_use_max, during->bytes_in_use) << "a free lowered the high-water mark";
    h.close_world(world);
  });
}

// memory_cleanup releases cached memory only: live buffers keep their bytes and contents.
TYPED_TEST_P(ConformanceCapabilities, MemoryCleanupKeepsLiveBuffers) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    const BufferRef kept = h.add_buffer(world, 4096);
    Buffer dropped = h.allocate(world.context, BufferDesc{.bytes = 1U << 16, .usage = kAllBufferUsage});
    (void)h.free(std::move(dropped));
    const std::vector<std::byte> content = pattern(4096, 23);
    h.write(world.buffer(kept), 0, content);
    const Result<MemoryUsage> before = h.backend().memory_usage(world.context);
    const Status cleaned = h.backend().memory_cleanup(world.context);
    if (!cleaned.ok()) h.tolerate(cleaned.error(), "memory_cleanup");
    const Result<MemoryUsage> after = h.backend().memory_usage(world.context);
    if (before.ok() && after.ok()) {
      EXPECT_EQ(after->bytes_in_use, before->bytes_in_use);
      EXPECT_LE(after->bytes_reserved, before->bytes_reserved);
    }
    EXPECT_EQ(h.read(world.buffer(kept), 0, 4096), content);
    h.close_world(world);
  });
}

// install_pools: a layout is installed only when nothing is live (Busy otherwise, R18) and then shapes the
// report; Unsupported without MemoryPools.
TYPED_TEST_P(ConformanceCapabilities, InstallPoolsOnlyWhenNothingIsLive) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(0);
    PoolLayout layout;
    layout.block_bytes = {256, 4096, 65536};
    if (!h.has(Capability::MemoryPools)) {
      const Status refused = h.backend().install_pools(world.context, layout);
      ASSERT_FALSE(refused.ok()) << "install_pools succeeded without the MemoryPools capability";
      expect_unsupported(refused.error());
      h.close_world(world);
      return;
    }
    const BufferRef live = h.add_buffer(world, 1000);
    const Status busy = h.backend().install_pools(world.context, layout);
    ASSERT_FALSE(busy.ok()) << "a pool layout was installed while buffer " << live.id << " was live";
    if (!busy.error().injected) {
      EXPECT_EQ(busy.error().kind, ErrorKind::Busy);
    }
    for (Buffer& buffer : world.buffers) (void)h.free(std::move(buffer));
    world.buffers.clear();
    Status installed = h.backend().install_pools(world.context, layout);
    for (std::uint32_t attempt = 1; !installed.ok() && attempt < Harness<TypeParam>::kAttemptsMax; ++attempt) {
      h.tolerate(installed.error(), "install_pools");
      installed = h.backend().install_pools(world.context, layout);
    }
    ASSERT_TRUE(installed.ok()) << h.backend().describe_error(installed.error());
    (void)h.add_buffer(world, 3000);
    const Result<MemoryReport> report = h.backend().memory_report(world.context);
    ASSERT_TRUE(report.ok()) << h.backend().describe_error(report.error());
    EXPECT_FALSE(report->pools.empty());
    h.close_world(world);
  });
}

REGISTER_TYPED_TEST_SUITE_P(ConformanceCapabilities, CancelIsDecidedExactlyOnce, CancelAfterTheTerminalIsBusy,
                            TimingOnlyWhenAskedAndSupported, CaptureRecordsAndReplayRuns,
                            SubmitOnACapturingQueueIsRejected, StreamOrderedAllocation,
                            MemoryUsageAndReportTrackAllocations, MemoryCleanupKeepsLiveBuffers,
                            InstallPoolsOnlyWhenNothingIsLive);

}  // namespace quiesce::conformance
