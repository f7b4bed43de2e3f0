// Conformance, part 2: submission, events and fences (DeviceRuntime seed 000 and Accelerator seed 003):
// non-empty ordered batches whose order is preserved, Rejected means nothing ran and allows an exact retry,
// non-blocking polls with stable terminals, waits that reach a terminal or are FenceIndeterminate with the
// event still live, cancellation decided exactly once, timing only after a terminal and only when asked.
#pragma once

#include "conformance_support.h"

namespace quiesce::conformance {

template <class F>
class ConformanceSubmit : public ConformanceBase<F> {};
TYPED_TEST_SUITE_P(ConformanceSubmit);

// submit, poll_event, wait_event, destroy_event: a fill kernel runs, its event reaches Complete, stays
// Complete, and the bytes are the kernel's.
TYPED_TEST_P(ConformanceSubmit, SubmitRunsAndTheTerminalIsStable) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    constexpr std::uint64_t kBytes = 1024;
    const BufferRef target = h.add_buffer(world, kBytes);
    const ProgramRef fill = h.add_program(world, "fill");
    const std::array<std::byte, 4> value = u32_le(0xC0FFEE01U);
    const std::array<Binding, 1> bindings = {Binding{target, Access::Write}};
    const std::array<Command, 1> batch = {Command::launch(fill, dims_for_bytes(kBytes), bindings, value)};
    const std::vector<std::byte> zeros(kBytes, std::byte{0});
    (void)h.run_clean(world.queue(), batch, [&] { h.write(world.buffer(target), 0, zeros); });
    EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), repeated_word(kBytes, 0xC0FFEE01U));
    h.close_world(world);
  });
}

// poll_event is non-blocking: work that has not been given time is Pending, the queue reports it in
// flight, and nothing terminal is invented. After time passes, the poll is terminal without a wait.
TYPED_TEST_P(ConformanceSubmit, PollIsNonBlockingAndReachesTerminal) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    const ProgramRef delay = h.add_program(world, "delay");
    const std::array<std::byte, 8> duration = u64_le(long_work_ns<TypeParam>());
    const std::array<Command, 1> batch = {Command::launch(delay, LaunchDims{}, {}, duration)};
    SubmitOptions options;
    options.invocation = h.next_invocation();
    SubmitResult submitted = h.submit_once(world.queue(), batch, options);
    if (submitted.status == SubmitStatus::Rejected) {
      h.tolerate(submitted.error, "submit");
      h.close_world(world);
      return;
    }
    const Observation first = h.backend().poll_event(submitted.event);
    if (TypeParam::kHoldsWorkUntilDriven && first.state != EventState::Indeterminate) {
      EXPECT_EQ(first.state, EventState::Pending) << "work finished before any time passed";
      EXPECT_FALSE(first.timing.has_value()) << "a pending event reported timing (R15)";
      EXPECT_GE(h.backend().queue_state(world.queue()).batches_in_flight, 1U);
    }
    std::optional<EventState> terminal;
    for (int round = 0; round < 64 && !terminal; ++round) {
      TypeParam::settle(h.backend());
      const Observation observed = h.backend().poll_event(submitted.event);
      if (is_terminal(observed.state)) terminal = observed.state;
      if (observed.state == EventState::Indeterminate) h.tolerate(observed.error, "poll_event");
    }
    ASSERT_TRUE(terminal.has_value()) << "the event never became terminal by polling alone";
    if (!TypeParam::kMayInjectFaults) {
      EXPECT_EQ(*terminal, EventState::Complete);
    }
    h.expect_stable(submitted.event, *terminal);
    (void)h.destroy(std::move(submitted.event));
    EXPECT_EQ(h.backend().queue_state(world.queue()).batches_in_flight, 0U);
    h.close_world(world);
  });
}

// Command order is preserved: upload, then a kernel over the uploaded bytes, then a copy of its output,
// then a zero of part of it, give exactly the sequential result.
TYPED_TEST_P(ConformanceSubmit, CommandOrderIsPreserved) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    constexpr std::uint64_t kBytes = 512;
    const BufferRef x = h.add_buffer(world, kBytes);
    const BufferRef y = h.add_buffer(world, kBytes);
    const BufferRef out = h.add_buffer(world, kBytes);
    const ProgramRef saxpy = h.add_program(world, "saxpy");
    const std::vector<std::byte> input = pattern(kBytes, 5);
    const std::array<std::byte, 4> factor = u32_le(3);
    const std::array<Binding, 2> bindings = {Binding{x, Access::Read}, Binding{y, Access::ReadWrite}};
    const std::array<Command, 5> batch = {
        Command::upload(input, x, 0),                                          // x = input
        Command::zero(y, 0, kBytes),                                           // y = 0
        Command::launch(saxpy, dims_for_bytes(kBytes), bindings, factor),     // y = 3x + y
        Command::copy(y, 0, out, 0, kBytes),                                   // out = y
        Command::zero(out, 0, 16),                                             // out[0..16) = 0
    };
    const std::vector<std::byte> stale = pattern(kBytes, 200);
    (void)h.run_clean(world.queue(), batch, [&] {
      h.write(world.buffer(x), 0, stale);
      h.write(world.buffer(y), 0, stale);
      h.write(world.buffer(out), 0, stale);
    });
    const std::vector<std::byte> result = h.read(world.buffer(out), 0, kBytes);
    for (std::size_t word = 0; word < kBytes / 4; ++word) {
      const std::uint32_t expected = word < 4 ? 0U : 3U * word_at(input, word);
      ASSERT_EQ(word_at(result, word), expected) << "word " << word << " shows the commands ran out of order";
    }
    h.close_world(world);
  });
}

// Rejected means nothing ran: a batch whose first command is invalid (too many threads per block) is
// rejected, and the upload after it changed no byte. A partial submit is never reported as a rejection:
// with the invalid command last, the outcome is Rejected with nothing run, or Indeterminate with an event.
TYPED_TEST_P(ConformanceSubmit, RejectedMeansNothingRan) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    constexpr std::uint64_t kBytes = 256;
    const BufferRef target = h.add_buffer(world, kBytes);
    const ProgramRef fill = h.add_program(world, "fill");
    const std::vector<std::byte> before = pattern(kBytes, 11);
    const std::vector<std::byte> upload = pattern(kBytes, 99);
    h.write(world.buffer(target), 0, before);
    LaunchDims oversized;
    const std::uint32_t threads_max = h.info().limits.launch_threads_max;
    oversized.block_x = threads_max == 0 ? (1U << 20) : threads_max + 1;
    const std::array<std::byte, 4> value = u32_le(7);
    const std::array<Binding, 1> bindings = {Binding{target, Access::Write}};
    const std::array<Command, 2> invalid_first = {Command::launch(fill, oversized, bindings, value),
                                                  Command::upload(upload, target, 0)};
    SubmitOptions options;
    options.invocation = h.next_invocation();
    SubmitResult first = h.submit_once(world.queue(), invalid_first, options);
    if (h.rejected_or_finished(first, "a batch whose first command is invalid")) {
      if (!first.error.injected) {
        EXPECT_EQ(first.error.kind, ErrorKind::InvalidArgument);
      }
      TypeParam::settle(h.backend());
      EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), before) << "a rejected batch changed bytes (R3)";
    }

    const std::array<Command, 2> invalid_last = {Command::upload(upload, target, 0),
                                                 Command::launch(fill, oversized, bindings, value)};
    options.invocation = h.next_invocation();
    SubmitResult last = h.submit_once(world.queue(), invalid_last, options);
    ASSERT_NE(last.status, SubmitStatus::Submitted) << "a batch with an invalid command was submitted whole";
    if (last.status == SubmitStatus::Rejected) {
      TypeParam::settle(h.backend());
      EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), before) << "a rejected batch changed bytes (R3)";
    } else {
      EXPECT_LT(last.commands_enqueued, 2U) << "a partial submit claimed every command";
      (void)h.finish(std::move(last.event));  // possibly submitted: waited on, never retried (R4, R5)
    }
    h.close_world(world);
  });
}

// A definitely-not-submitted batch may be retried exactly: a full queue rejects admission at once
// (admission_timeout_ns 0) with nothing run; after the queue drains, the same batch with the same
// invocation id is accepted and runs once.
TYPED_TEST_P(ConformanceSubmit, RejectedSubmitMayBeRetriedExactly) {
  this->guarded([&](Harness<TypeParam>& h) {
    const std::uint32_t depth = h.info().limits.queue_depth_max;
    // A real device may not bound its queues (queue_depth_max 0); a held simulated queue must.
    if (TypeParam::kHoldsWorkUntilDriven) {
      ASSERT_GT(depth, 0U) << "a simulated queue has no depth bound";
    }
    World world = h.open_world(1);
    constexpr std::uint64_t kBytes = 128;
    const BufferRef target = h.add_buffer(world, kBytes);
    const ProgramRef delay = h.add_program(world, "delay");
    const std::vector<std::byte> before(kBytes, std::byte{0});
    h.write(world.buffer(target), 0, before);
    const std::array<std::byte, 8> duration = u64_le(long_work_ns<TypeParam>());
    const std::array<Command, 1> hold = {Command::launch(delay, LaunchDims{}, {}, duration)};
    const std::vector<std::byte> upload = pattern(kBytes, 42);
    const std::array<Command, 1> batch = {Command::upload(upload, target, 0)};
    SubmitOptions options;
    options.invocation = h.next_invocation();
    options.admission_timeout_ns = 0;
    if (TypeParam::kHoldsWorkUntilDriven) {
      std::vector<Event> holding;
      for (std::uint32_t index = 0; index < depth; ++index) {
        SubmitResult held = h.submit_once(world.queue(), hold, SubmitOptions{.invocation = h.next_invocation()});
        if (held.status == SubmitStatus::Rejected) {
          h.tolerate(held.error, "submit");
          continue;
        }
        holding.push_back(std::move(held.event));
      }
      SubmitResult full = h.submit_once(world.queue(), batch, options);
      if (h.rejected_or_finished(full, "a batch on a full queue with no admission time")) {
        if (!full.error.injected) {
          EXPECT_EQ(full.error.kind, ErrorKind::Timeout);
          EXPECT_TRUE(full.error.retryable);
        }
        EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), before) << "a rejected batch changed bytes (R3)";
      } else {
        options.invocation = h.next_invocation();  // that invocation may have run: never reuse it (R4)
      }
      for (Event& event : holding) (void)h.finish(std::move(event));
    }
    const std::vector<std::byte> unchanged = h.read(world.buffer(target), 0, kBytes);
    const auto ran = h.run(world.queue(), batch, options,
                           [&] { EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), unchanged); });
    if (ran.clean()) {
      EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), upload);
    }
    h.close_world(world);
  });
}

// wait_event with a deadline that passes first is FenceIndeterminate, and the event stays live: a later
// poll is not terminal, a later wait reaches the terminal, and the event is then destroyed.
TYPED_TEST_P(ConformanceSubmit, WaitTimeoutIsFenceIndeterminateAndRetainsTheEvent) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    const ProgramRef delay = h.add_program(world, "delay");
    const std::array<std::byte, 8> duration = u64_le(long_work_ns<TypeParam>());
    const std::array<Command, 1> batch = {Command::launch(delay, LaunchDims{}, {}, duration)};
    SubmitResult submitted = h.submit_once(world.queue(), batch, SubmitOptions{.invocation = h.next_invocation()});
    if (submitted.status == SubmitStatus::Rejected) {
      h.tolerate(submitted.error, "submit");
      h.close_world(world);
      return;
    }
    const WaitResult early = h.backend().wait_event(submitted.event, long_work_ns<TypeParam>() / 100);
    ASSERT_FALSE(early.ok()) << "a wait of 1% of the work's duration reached " << to_string(early->state);
    if (!early.error().error.injected) {
      EXPECT_EQ(early.error().error.kind, ErrorKind::Timeout);
    }
    const Observation after = h.backend().poll_event(submitted.event);
    EXPECT_FALSE(is_terminal(after.state)) << "the event became terminal long before its work could finish";
    const Receipt receipt = h.wait_terminal(submitted.event);
    if (!TypeParam::kMayInjectFaults) {
      EXPECT_EQ(receipt.state, EventState::Complete);
    }
    h.expect_stable(submitted.event, receipt.state);
    (void)h.destroy(std::move(submitted.event));
    h.close_world(world);
  });
}

// synchronize drains a queue: afterwards its events poll terminal without any wait.
TYPED_TEST_P(ConformanceSubmit, SynchronizeDrainsTheQueue) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    const ProgramRef delay = h.add_program(world, "delay");
    const std::array<std::byte, 8> duration = u64_le(1'000'000);
    const std::array<Command, 1> batch = {Command::launch(delay, LaunchDims{}, {}, duration)};
    SubmitResult submitted = h.submit_once(world.queue(), batch, SubmitOptions{.invocation = h.next_invocation()});
    if (submitted.status == SubmitStatus::Rejected) {
      h.tolerate(submitted.error, "submit");
      h.close_world(world);
      return;
    }
    const Status synced = h.backend().synchronize(world.queue(), wait_timeout_ns<TypeParam>());
    if (synced.ok()) {
      const Observation observed = h.poll(submitted.event);
      EXPECT_TRUE(is_terminal(observed.state)) << "after synchronize the event is " << to_string(observed.state);
      EXPECT_EQ(h.backend().queue_state(world.queue()).batches_in_flight, 0U);
    } else {
      h.tolerate(synced.error(), "synchronize");
    }
    (void)h.finish(std::move(submitted.event));
    h.close_world(world);
  });
}

// A Wait command orders a queue behind another queue's event: the copy on queue 1 sees the fill that
// queue 0 finishes only after a long delay.
TYPED_TEST_P(ConformanceSubmit, WaitCommandOrdersAcrossQueues) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(2);
    constexpr std::uint64_t kBytes = 256;
    const BufferRef source = h.add_buffer(world, kBytes);
    const BufferRef target = h.add_buffer(world, kBytes);
    const ProgramRef delay = h.add_program(world, "delay");
    const ProgramRef fill = h.add_program(world, "fill");
    const std::array<std::byte, 8> duration = u64_le(long_work_ns<TypeParam>() / 10);
    const std::array<std::byte, 4> value = u32_le(0x5EED5EEDU);
    const std::array<Binding, 1> fill_bindings = {Binding{source, Access::Write}};
    const std::array<Command, 2> producer = {Command::launch(delay, LaunchDims{}, {}, duration),
                                             Command::launch(fill, dims_for_bytes(kBytes), fill_bindings, value)};
    for (std::uint32_t attempt = 0; attempt < Harness<TypeParam>::kCleanRunsMax; ++attempt) {
      h.write(world.buffer(source), 0, std::vector<std::byte>(kBytes, std::byte{0}));
      h.write(world.buffer(target), 0, std::vector<std::byte>(kBytes, std::byte{1}));
      SubmitResult produced = h.submit_once(world.queue(0), producer, {.invocation = h.next_invocation()});
      if (produced.status == SubmitStatus::Rejected) {
        h.tolerate(produced.error, "submit");
        continue;
      }
      const std::array<Command, 2> consumer = {Command::wait(produced.event.ref()),
                                               Command::copy(source, 0, target, 0, kBytes)};
      const auto consumed = h.run(world.queue(1), consumer);
      const Receipt production = h.finish(std::move(produced.event));
      if (consumed.clean() && production.state == EventState::Complete &&
          produced.status == SubmitStatus::Submitted) {
        EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), repeated_word(kBytes, 0x5EED5EEDU))
            << "the copy ran before the event it waited for";
        break;
      }
      ASSERT_TRUE(TypeParam::kMayInjectFaults) << "the cross-queue batches did not run clean";
    }
    h.close_world(world);
  });
}

// A dry-run launch validates and prepares everything, then changes no bytes (R18).
TYPED_TEST_P(ConformanceSubmit, DryRunLaunchChangesNoBytes) {
  this->guarded([&](Harness<TypeParam>& h) {
    World world = h.open_world(1);
    constexpr std::uint64_t kBytes = 256;
    const BufferRef target = h.add_buffer(world, kBytes);
    const ProgramRef fill = h.add_program(world, "fill");
    const std::vector<std::byte> before = pattern(kBytes, 17);
    h.write(world.buffer(target), 0, before);
    const std::array<std::byte, 4> value = u32_le(0xFFFFFFFFU);
    const std::array<Binding, 1> bindings = {Binding{target, Access::Write}};
    const std::array<Command, 1> batch = {
        Command::launch(fill, dims_for_bytes(kBytes), bindings, value, LaunchMode::DryRun)};
    (void)h.run(world.queue(), batch);
    EXPECT_EQ(h.read(world.buffer(target), 0, kBytes), before) << "a dry-run launch changed bytes";
    h.close_world(world);
  });
}

REGISTER_TYPED_TEST_SUITE_P(ConformanceSubmit, SubmitRunsAndTheTerminalIsStable,
                            PollIsNonBlockingAndReachesTerminal, CommandOrderIsPreserved, RejectedMeansNothingRan,
                            RejectedSubmitMayBeRetriedExactly, WaitTimeoutIsFenceIndeterminateAndRetainsTheEvent,
                            SynchronizeDrainsTheQueue, WaitCommandOrdersAcrossQueues, DryRunLaunchChangesNoBytes);

}  // namespace quiesce::conformance
