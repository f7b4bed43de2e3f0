// The engine over ToyBackend (a minimal backend defined in the test, not the simulator): one test per
// feature of issue 4, each asserting what the engine must do and what it must not.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <thread>

#include "quiesce/core/engine.h"
#include "toy_backend.h"

namespace quiesce::test {
namespace {

using ToyEngine = Engine<ToyBackend, ManualEnv>;

constexpr BufferUsage kAllUsage = kAllBufferUsage;

std::vector<std::byte> bytes_of_value(std::size_t size, std::uint8_t value) {
  return std::vector<std::byte>(size, static_cast<std::byte>(value));
}

class EngineToyTest : public ::testing::Test {
 protected:
  explicit EngineToyTest(Capability capabilities = Capability::EventCancellation | Capability::ReusableExecutables |
                                                   Capability::Profiling | Capability::StreamOrderedAllocation)
      : backend(capabilities) {}

  void SetUp() override {
    engine = std::make_unique<ToyEngine>(backend, env, options);
    ASSERT_TRUE(engine->open().ok());
    fill = load("fill");
  }

  ProgramId load(std::string_view name) {
    ArtifactRef artifact;
    artifact.kernel_name = name;
    artifact.resident_bytes = 64;
    Result<ProgramId> program = engine->load_program(artifact);
    EXPECT_TRUE(program.ok());
    return program.ok() ? program.value() : ProgramId{};
  }

  BufferId buffer(std::uint64_t bytes = 64, BufferUsage usage = kAllUsage) {
    Result<BufferId> created = engine->create_buffer(BufferRequest{bytes, usage});
    EXPECT_TRUE(created.ok());
    return created.ok() ? created.value() : BufferId{};
  }

  Result<SubmissionId> launch_fill(BufferId target, std::uint8_t value, QueueIndex queue = 0,
                                   LaunchMode mode = LaunchMode::Normal) {
    parameter = static_cast<std::byte>(value);
    binding = EngineBinding{target, Access::Write};
    return engine->launch(queue, fill, LaunchDims{}, std::span<const EngineBinding>(&binding, 1),
                          std::span<const std::byte>(&parameter, 1), mode);
  }

  std::vector<std::byte> read_all(BufferId id, std::size_t bytes) {
    std::vector<std::byte> out(bytes);
    const std::array<std::span<std::byte>, 1> segments{std::span<std::byte>(out)};
    EXPECT_TRUE(engine->read(id, 0, ByteSink{segments}).ok());
    return out;
  }

  ShutdownReport finish() {
    ShutdownReport report = engine->shutdown(1'000'000'000);
    EXPECT_TRUE(backend.violations.empty()) << backend.violations.front();
    return report;
  }

  ToyBackend backend;
  ManualEnv env;
  EngineOptions options;
  std::unique_ptr<ToyEngine> engine;
  ProgramId fill;
  std::byte parameter{};
  EngineBinding binding;
};

TEST_F(EngineToyTest, OpensAndShutsDownClean) {
  const ShutdownReport report = finish();
  EXPECT_TRUE(report.clean()) << report.describe();
  EXPECT_EQ(report.tally(ResourceKind::Contexts).released, 1U);
  EXPECT_EQ(report.tally(ResourceKind::Queues).released, options.queue_count);
  EXPECT_EQ(report.tally(ResourceKind::Programs).released, 1U);
}

TEST_F(EngineToyTest, ImportPublishesWrittenBuffers) {
  const auto data = bytes_of_value(32, 7);
  const std::array<std::span<const std::byte>, 1> segments{std::span<const std::byte>(data)};
  const std::array<ImportRequest, 2> requests{ImportRequest{BufferRequest{32, kAllUsage}, ByteSource{segments}},
                                              ImportRequest{BufferRequest{32, kAllUsage}, ByteSource{segments}}};
  Result<std::vector<BufferId>> imported = engine->import_buffers(requests);
  ASSERT_TRUE(imported.ok());
  ASSERT_EQ(imported->size(), 2U);
  EXPECT_EQ(read_all(imported->at(1), 32), data);
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, ImportIsAllOrNothing) {
  backend.faults.fail_allocations_after = 1;  // the second allocation fails
  const std::array<ImportRequest, 3> requests{ImportRequest{BufferRequest{32, kAllUsage}, {}},
                                              ImportRequest{BufferRequest{32, kAllUsage}, {}},
                                              ImportRequest{BufferRequest{32, kAllUsage}, {}}};
  Result<std::vector<BufferId>> imported = engine->import_buffers(requests);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.error().kind, ErrorKind::OutOfMemory);
  EXPECT_EQ(backend.live_buffers(), 0U) << "the staged buffer must be released after the failure";
  EXPECT_EQ(engine->memory_usage().charged_bytes, 64U) << "only the program's resident bytes stay charged";
  EXPECT_EQ(engine->counters().imports_rolled_back, 1U);
  const ShutdownReport report = finish();
  EXPECT_TRUE(report.clean()) << report.describe();
  EXPECT_EQ(report.tally(ResourceKind::Buffers).released, 1U);
}

TEST_F(EngineToyTest, HostTransfersCheckUsageAndRangeBeforeTheBackend) {
  const BufferId input_only = buffer(64, BufferUsage::ProgramInput | BufferUsage::TransferSource);
  const auto data = bytes_of_value(16, 1);
  const std::array<std::span<const std::byte>, 1> segments{std::span<const std::byte>(data)};
  EXPECT_EQ(engine->write(input_only, 0, ByteSource{segments}).error().kind, ErrorKind::PermissionDenied);
  const BufferId both = buffer(64);
  EXPECT_EQ(engine->write(both, 60, ByteSource{segments}).error().kind, ErrorKind::InvalidArgument);
  EXPECT_TRUE(engine->write(both, 48, ByteSource{segments}).ok());
  EXPECT_EQ(read_all(both, 64)[48], std::byte{1});
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, AccessModesAreCheckedBeforeSubmit) {
  const BufferId input_only = buffer(64, BufferUsage::ProgramInput | BufferUsage::TransferSource);
  Result<SubmissionId> launched = launch_fill(input_only, 3);  // Write needs ProgramOutput or MutableState
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.error().kind, ErrorKind::PermissionDenied);
  EXPECT_EQ(backend.submitted_batches, 0U) << "R16: the backend must not see a violating batch";
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, ReleaseIsDeferredUntilTheEventIsDestroyed) {
  const BufferId target = buffer();
  ASSERT_TRUE(launch_fill(target, 9).ok());
  ASSERT_TRUE(engine->release(target).ok());
  EXPECT_EQ(backend.live_buffers(), 1U) << "R1: a pinned buffer must not be freed";
  EXPECT_EQ(engine->counters().releases_deferred, 1U);
  EXPECT_FALSE(engine->read(target, 0, ByteSink{}).ok()) << "a released id no longer resolves";
  backend.complete_all();
  engine->progress();
  EXPECT_EQ(backend.live_buffers(), 0U);
  EXPECT_EQ(backend.live_events(), 0U);
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, RejectedSubmitIsRetriedExactlyWithTheSameInvocation) {
  const BufferId target = buffer();
  backend.faults.reject_submits = 2;
  Result<SubmissionId> launched = launch_fill(target, 5);
  ASSERT_TRUE(launched.ok());
  EXPECT_EQ(engine->counters().submit_retries, 2U);
  backend.complete_all();
  ASSERT_EQ(backend.execution_log().size(), 1U);
  ASSERT_EQ(backend.rejected_invocations.size(), 1U) << "both retries carried the same invocation id";
  EXPECT_EQ(*backend.rejected_invocations.begin(), backend.execution_log().front());
  EXPECT_NE(backend.execution_log().front(), 0U);
  EXPECT_EQ(read_all(target, 64), bytes_of_value(64, 5));
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, SubmitRejectedOnEveryAttemptRetainsNothing) {
  const BufferId target = buffer();
  backend.faults.reject_submits = options.submit_attempts_max;
  Result<SubmissionId> launched = launch_fill(target, 5);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(engine->counters().submits_rejected, 1U);
  ASSERT_TRUE(engine->release(target).ok());
  EXPECT_EQ(backend.live_buffers(), 0U) << "R3: a rejected batch retains nothing, so release is immediate";
  EXPECT_TRUE(engine->flush().ok()) << "a synchronous rejection is not queued as asynchronous";
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, IndeterminateSubmitIsNeverRetriedAndSurfacesOnce) {
  const BufferId target = buffer();
  backend.faults.indeterminate_submits = 1;
  Result<SubmissionId> launched = launch_fill(target, 4);
  ASSERT_TRUE(launched.ok());
  EXPECT_EQ(engine->poll(launched.value()), SubmissionFate::Indeterminate);
  EXPECT_FALSE(engine->healthy()) << "R14: unhealthy until the failure is taken";
  EXPECT_EQ(backend.submitted_batches, 1U) << "R4: never resubmitted";
  FlushResult first = engine->flush();
  ASSERT_EQ(first.failures.size(), 1U);
  EXPECT_EQ(first.failures[0].cause, FailureCause::IndeterminateSubmit);
  EXPECT_EQ(first.failures[0].submission, launched.value());
  EXPECT_TRUE(engine->healthy());
  EXPECT_TRUE(engine->sync(1'000'000).failures.empty()) << "surfaced exactly once";
  EXPECT_EQ(backend.execution_log().size(), 1U);
  EXPECT_EQ(engine->poll(launched.value()), SubmissionFate::Complete) << "a later terminal ends the doubt";
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, PartialSubmitIsIndeterminateAndOwnsTheWholeBatch) {
  const BufferId first = buffer();
  const BufferId second = buffer();
  backend.faults.partial_submits = 1;
  const std::array<EngineOp, 2> ops{EngineOp::zero(first, 0, 64), EngineOp::zero(second, 0, 64)};
  Result<SubmissionId> submitted = engine->submit(0, ops);
  ASSERT_TRUE(submitted.ok()) << "R5: a partial submit is not a rejection";
  EXPECT_EQ(engine->poll(submitted.value()), SubmissionFate::Indeterminate);
  EXPECT_EQ(engine->counters().submits_partial, 1U);
  ASSERT_TRUE(engine->release(second).ok());
  EXPECT_EQ(backend.live_buffers(), 2U) << "R2: the unenqueued suffix's buffer is retained too";
  EXPECT_TRUE(engine->drain(1'000'000).ok());
  EXPECT_EQ(backend.live_buffers(), 1U);
  EXPECT_EQ(backend.submitted_batches, 1U);
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, FailedLaunchSurfacesExactlyOnceAtSync) {
  const BufferId target = buffer();
  backend.faults.fail_events = 1;
  Result<SubmissionId> launched = launch_fill(target, 4);
  ASSERT_TRUE(launched.ok());
  FlushResult synced = engine->sync(1'000'000);
  ASSERT_EQ(synced.failures.size(), 1U);
  EXPECT_EQ(synced.failures[0].cause, FailureCause::FailedButQuiescent);
  EXPECT_TRUE(synced.completion.ok());
  EXPECT_TRUE(engine->flush().failures.empty());
  EXPECT_EQ(engine->poll(launched.value()), SubmissionFate::Failed);
  EXPECT_TRUE(engine->healthy());
  EXPECT_EQ(engine->counters().failures_queued, engine->counters().failures_surfaced);
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, NonStickyFailureStaysLocal) {
  const BufferId first = buffer();
  const BufferId second = buffer();
  backend.faults.fail_events = 1;
  Result<SubmissionId> failing = launch_fill(first, 1, 0);
  Result<SubmissionId> fine = launch_fill(second, 2, 1);
  ASSERT_TRUE(failing.ok() && fine.ok());
  EXPECT_EQ(engine->sync(1'000'000).failures.size(), 1U);
  EXPECT_EQ(engine->poll(failing.value()), SubmissionFate::Failed);
  EXPECT_EQ(engine->poll(fine.value()), SubmissionFate::Complete) << "R11";
  EXPECT_EQ(engine->epoch(), 1U);
  EXPECT_EQ(read_all(second, 64), bytes_of_value(64, 2));
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, RejectedReleaseIsRetriedWithBackoff) {
  const BufferId target = buffer();
  backend.faults.reject_frees = 2;
  ASSERT_TRUE(engine->release(target).ok());
  EXPECT_EQ(backend.live_buffers(), 1U);
  const std::uint64_t before_ns = env.now_ns();
  EXPECT_TRUE(engine->drain(1'000'000'000).ok());
  EXPECT_EQ(backend.live_buffers(), 0U);
  EXPECT_GE(env.now_ns() - before_ns, options.release_backoff_ns) << "the retry waited in Env time";
  EXPECT_EQ(engine->counters().release_rejections, 2U);
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, ReleaseRejectedBeyondTheBoundIsQuarantined) {
  const BufferId target = buffer(128);
  backend.faults.reject_frees = 1000;
  ASSERT_TRUE(engine->release(target).ok());
  EXPECT_TRUE(engine->drain(1'000'000'000).ok());
  EXPECT_EQ(engine->counters().release_rejections, options.release_attempts_max);
  EXPECT_EQ(engine->memory_usage().quarantined_bytes, 128U);
  backend.faults.reject_frees = 0;
  const ShutdownReport report = finish();
  EXPECT_TRUE(report.clean()) << report.describe();
  ASSERT_EQ(report.quarantine.size(), 1U);
  EXPECT_EQ(report.quarantine[0].cause, QuarantineCause::ReleaseRejectedRepeatedly);
  EXPECT_EQ(report.quarantined_bytes, 128U);
  EXPECT_TRUE(report.context_discarded) << "only a whole-device discard ends a quarantine";
}

TEST_F(EngineToyTest, IndeterminateReleaseMovesTheChargeToQuarantine) {
  const BufferId target = buffer(256);
  backend.faults.indeterminate_frees = 1;
  ASSERT_TRUE(engine->release(target).ok());
  const EngineMemory memory = engine->memory_usage();
  EXPECT_EQ(memory.quarantined_bytes, 256U) << "R6";
  EXPECT_EQ(memory.charged_bytes, 64U);
  const ShutdownReport report = finish();
  EXPECT_TRUE(report.clean()) << report.describe();
  ASSERT_EQ(report.quarantine.size(), 1U);
  EXPECT_EQ(report.quarantine[0].cause, QuarantineCause::IndeterminateRelease);
  EXPECT_EQ(report.tally(ResourceKind::Buffers).quarantined, 1U);
  EXPECT_EQ(report.tally(ResourceKind::Buffers).released, 0U);
}

TEST_F(EngineToyTest, IndeterminatePollRetainsUntilALaterTerminal) {
  const BufferId target = buffer();
  backend.faults.indeterminate_polls = 1;
  Result<SubmissionId> launched = launch_fill(target, 3);
  ASSERT_TRUE(launched.ok());
  ASSERT_TRUE(engine->release(target).ok());
  EXPECT_EQ(engine->poll(launched.value()), SubmissionFate::Indeterminate);
  EXPECT_EQ(backend.live_buffers(), 1U) << "R2";
  backend.complete_all();
  engine->progress();
  EXPECT_EQ(engine->poll(launched.value()), SubmissionFate::Complete);
  EXPECT_EQ(backend.live_buffers(), 0U);
  EXPECT_TRUE(engine->flush().failures.empty()) << "an observation error alone is not a failure of the work";
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, IndeterminateEventDestroyRetainsWhatItPinned) {
  const BufferId target = buffer(96);
  backend.faults.indeterminate_event_destroys = 1;
  ASSERT_TRUE(launch_fill(target, 3).ok());
  ASSERT_TRUE(engine->release(target).ok());
  backend.complete_all();
  EXPECT_TRUE(engine->drain(1'000'000).ok());
  EXPECT_EQ(backend.frees, 0U) << "never released after an indeterminate release of its event";
  const ShutdownReport report = finish();
  EXPECT_TRUE(report.clean()) << report.describe();
  EXPECT_EQ(report.tally(ResourceKind::Events).quarantined, 1U);
  EXPECT_EQ(report.tally(ResourceKind::Buffers).quarantined, 1U);
  EXPECT_EQ(report.tally(ResourceKind::Programs).quarantined, 1U) << "the launch's program is reachable too";
  EXPECT_EQ(report.quarantined_bytes, 96U + 64U);
}

TEST_F(EngineToyTest, DeviceLossRecoversOnAFreshEpoch) {
  const BufferId target = buffer();
  const ProgramId fault = load("fault");
  binding = EngineBinding{target, Access::ReadWrite};
  Result<SubmissionId> faulting =
      engine->launch(0, fault, LaunchDims{}, std::span<const EngineBinding>(&binding, 1), {});
  ASSERT_TRUE(faulting.ok());
  FlushResult synced = engine->sync(1'000'000);
  ASSERT_EQ(synced.failures.size(), 1U);
  EXPECT_EQ(synced.failures[0].error.kind, ErrorKind::DeviceLost);
  EXPECT_EQ(engine->epoch(), 2U) << "R9: a fresh epoch";
  EXPECT_EQ(backend.discards, 1U);
  EXPECT_EQ(backend.frees, 0U) << "R10: nothing released on the lost context";
  EXPECT_EQ(engine->release(target).error().kind, ErrorKind::Incompatible) << "old ids never resolve";
  EXPECT_FALSE(launch_fill(target, 1).ok());
  fill = load("fill");
  const BufferId fresh = buffer();
  ASSERT_TRUE(launch_fill(fresh, 6).ok());
  EXPECT_TRUE(engine->sync(1'000'000).ok());
  EXPECT_EQ(read_all(fresh, 64), bytes_of_value(64, 6));
  const ShutdownReport report = finish();
  EXPECT_TRUE(report.clean()) << report.describe();
  EXPECT_EQ(report.device_losses, 1U);
  EXPECT_EQ(report.tally(ResourceKind::Buffers).discarded, 1U);
  EXPECT_EQ(report.tally(ResourceKind::Contexts).discarded, 1U);
}

TEST_F(EngineToyTest, ConflictingWorkOnAnotherQueueWaitsForItsEvent) {
  const BufferId source = buffer();
  const BufferId target = buffer();
  ASSERT_TRUE(launch_fill(source, 8, 0).ok());
  const std::array<EngineOp, 1> copy{EngineOp::copy(source, 0, target, 0, 64)};
  Result<SubmissionId> copied = engine->submit(1, copy);
  ASSERT_TRUE(copied.ok());
  EXPECT_EQ(engine->counters().cross_queue_waits, 1U);
  ASSERT_TRUE(engine->wait(copied.value(), 1'000'000).ok());
  EXPECT_EQ(read_all(target, 64), bytes_of_value(64, 8)) << "the copy ran after the fill";
  const std::array<EngineOp, 1> zero{EngineOp::zero(target, 0, 64)};
  ASSERT_TRUE(engine->submit(0, zero).ok());
  EXPECT_EQ(engine->counters().cross_queue_waits, 1U) << "finished work needs no wait";
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, ExplicitDependencyAddsAWait) {
  const BufferId first = buffer();
  const BufferId second = buffer();
  Result<SubmissionId> earlier = launch_fill(first, 1, 0);
  ASSERT_TRUE(earlier.ok());
  const std::array<SubmissionId, 1> dependencies{earlier.value()};
  const std::array<EngineOp, 1> zero{EngineOp::zero(second, 0, 64)};
  ASSERT_TRUE(engine->submit(1, zero, SubmitRequest{false, dependencies, 0}).ok());
  EXPECT_EQ(engine->counters().cross_queue_waits, 1U);
  EXPECT_TRUE(engine->sync(1'000'000).ok());
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, GraphPinsItsBuffersAndReplaysNeverOverlap) {
  const BufferId target = buffer();
  ASSERT_TRUE(engine->prepare_graph(0).ok());
  parameter = std::byte{0x2A};
  binding = EngineBinding{target, Access::Write};
  const std::array<EngineOp, 1> ops{
      EngineOp::launch(fill, LaunchDims{}, std::span<const EngineBinding>(&binding, 1),
                       std::span<const std::byte>(&parameter, 1))};
  Result<GraphId> graph = engine->capture_graph(0, ops);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(backend.ends, 1U);
  ASSERT_TRUE(engine->replay(graph.value(), 0).ok());
  ASSERT_TRUE(engine->replay(graph.value(), 1).ok());
  EXPECT_GE(engine->counters().cross_queue_waits, 1U) << "R13: the second replay waits for the first";
  ASSERT_TRUE(engine->release(target).ok());
  EXPECT_TRUE(engine->sync(1'000'000).ok());
  EXPECT_EQ(backend.live_buffers(), 1U) << "R13: the executable still pins its buffer";
  ASSERT_TRUE(engine->destroy_graph(graph.value()).ok());
  EXPECT_TRUE(engine->drain(1'000'000).ok());
  EXPECT_EQ(backend.live_buffers(), 0U);
  const ShutdownReport report = finish();
  EXPECT_TRUE(report.clean()) << report.describe();
  EXPECT_EQ(report.tally(ResourceKind::Executables).released, 1U);
}

TEST_F(EngineToyTest, CaptureNeedsPrepareAndIsEndedOnFailure) {
  const BufferId target = buffer();
  const std::array<EngineOp, 1> ops{EngineOp::zero(target, 0, 64)};
  EXPECT_EQ(engine->capture_graph(0, ops).error().kind, ErrorKind::InvalidArgument);
  ASSERT_TRUE(engine->prepare_graph(0).ok());
  backend.faults.fail_captures = 1;
  EXPECT_FALSE(engine->capture_graph(0, ops).ok());
  EXPECT_EQ(backend.ends, 1U) << "R13: every begin is ended";
  Result<GraphId> graph = engine->capture_graph(0, ops);
  ASSERT_TRUE(graph.ok());
  EXPECT_TRUE(finish().clean()) << "shutdown destroys the live graph";
}

TEST_F(EngineToyTest, DryRunChangesNoBytes) {
  const auto data = bytes_of_value(64, 0x11);
  const std::array<std::span<const std::byte>, 1> segments{std::span<const std::byte>(data)};
  const std::array<ImportRequest, 1> requests{ImportRequest{BufferRequest{64, kAllUsage}, ByteSource{segments}}};
  Result<std::vector<BufferId>> imported = engine->import_buffers(requests);
  ASSERT_TRUE(imported.ok());
  ASSERT_TRUE(launch_fill(imported->front(), 0x99, 0, LaunchMode::DryRun).ok());
  EXPECT_TRUE(engine->sync(1'000'000).ok());
  EXPECT_EQ(read_all(imported->front(), 64), data) << "R18";
  EXPECT_EQ(backend.submitted_batches, 1U) << "the dry run still went through the backend";
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, ProfileDurationsComeFromTimingReceipts) {
  const BufferId target = buffer();
  Result<ProfileToken> token = engine->start_profile();
  ASSERT_TRUE(token.ok());
  ASSERT_TRUE(launch_fill(target, 1).ok());
  ASSERT_TRUE(launch_fill(target, 2).ok());
  Result<ProfileDuration> duration = engine->end_profile(token.value(), 1'000'000);
  ASSERT_TRUE(duration.ok());
  EXPECT_EQ(duration->submissions, 2U);
  EXPECT_EQ(duration->busy_ns, 100U);
  EXPECT_GT(duration->span_ns, 0U);
  Result<ProfileToken> empty = engine->start_profile();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(engine->end_profile(empty.value(), 0).error().kind, ErrorKind::InvalidArgument) << "R15: never zero";
  const std::array<EngineOp, 1> zero{EngineOp::zero(target, 0, 64)};
  Result<SubmissionId> timed = engine->submit(1, zero, SubmitRequest{true, {}, 0});
  ASSERT_TRUE(timed.ok());
  Result<SubmissionReceipt> receipt = engine->wait(timed.value(), 1'000'000);
  ASSERT_TRUE(receipt.ok());
  ASSERT_TRUE(receipt->timing.has_value());
  EXPECT_EQ(receipt->timing->elapsed_ns(), 50U);
  EXPECT_TRUE(finish().clean());
}

class EngineToyWithoutProfiling : public EngineToyTest {
 protected:
  EngineToyWithoutProfiling() : EngineToyTest(Capability::ReusableExecutables) {}
};

TEST_F(EngineToyWithoutProfiling, TimingIsUnavailableNeverZero) {
  EXPECT_EQ(engine->start_profile().error().kind, ErrorKind::Unsupported);
  const BufferId target = buffer();
  const std::array<EngineOp, 1> zero{EngineOp::zero(target, 0, 64)};
  Result<SubmissionId> timed = engine->submit(0, zero, SubmitRequest{true, {}, 0});
  ASSERT_TRUE(timed.ok());
  Result<SubmissionReceipt> receipt = engine->wait(timed.value(), 1'000'000);
  ASSERT_TRUE(receipt.ok());
  EXPECT_FALSE(receipt->timing.has_value()) << "R15";
  const BufferRequest stream_ordered{64, kAllUsage, AllocationMode::StreamOrdered, 0};
  EXPECT_EQ(engine->create_buffer(stream_ordered).error().kind, ErrorKind::Unsupported);
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, PoolsChangeOnlyWhenNothingIsLive) {
  const BufferId target = buffer(512);
  const PoolLayout layout{{256, 1024}};
  EXPECT_EQ(engine->install_pools(layout).error().kind, ErrorKind::Busy) << "R18";
  EXPECT_EQ(backend.pools_installed, 0U);
  ASSERT_TRUE(engine->release(target).ok());
  EXPECT_TRUE(engine->install_pools(layout).ok());
  EXPECT_EQ(backend.pools_installed, 1U);
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, MemoryUsageKeepsAHighWaterMark) {
  const BufferId first = buffer(1000);
  const BufferId second = buffer(3000);
  ASSERT_TRUE(engine->release(second).ok());
  const EngineMemory memory = engine->memory_usage();
  EXPECT_EQ(memory.charged_bytes, 1064U);
  EXPECT_EQ(memory.charged_bytes_max, 4064U);
  EXPECT_EQ(memory.live_buffers, 1U);
  ASSERT_TRUE(memory.device.has_value());
  EXPECT_EQ(memory.device->bytes_in_use, 1000U);
  (void)first;
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, StreamOrderedBufferIsFreedAfterItsLastUse) {
  Result<BufferId> ordered = engine->create_buffer(BufferRequest{64, kAllUsage, AllocationMode::StreamOrdered, 1});
  ASSERT_TRUE(ordered.ok());
  ASSERT_TRUE(launch_fill(ordered.value(), 2, 1).ok());
  ASSERT_TRUE(engine->release(ordered.value()).ok());
  EXPECT_EQ(backend.live_buffers(), 1U) << "R12: not before the work ordered before the free";
  EXPECT_TRUE(engine->drain(1'000'000).ok());
  EXPECT_EQ(backend.live_buffers(), 0U);
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyTest, ShutdownQuarantinesWorkThatNeverFinished) {
  const BufferId target = buffer(80);
  backend.hold_waits = true;
  options.drain_iterations_max = 50;
  engine = std::make_unique<ToyEngine>(backend, env, options);  // the old one shuts down first
  ASSERT_TRUE(engine->open().ok());
  fill = load("fill");
  const BufferId pinned = buffer(80);
  ASSERT_TRUE(launch_fill(pinned, 1).ok());
  const ShutdownReport report = engine->shutdown(1000);
  EXPECT_FALSE(report.drain.ok());
  EXPECT_EQ(report.leaked(), 0U) << report.describe();
  EXPECT_TRUE(report.ledger_balanced()) << report.describe();
  EXPECT_EQ(report.tally(ResourceKind::Events).quarantined, 1U);
  EXPECT_EQ(report.tally(ResourceKind::Buffers).quarantined, 1U);
  EXPECT_TRUE(report.context_discarded);
  EXPECT_NE(report.describe().find("still pinned"), std::string::npos) << report.describe();
  (void)target;
}

// The fate history keeps the fates of the submissions among the last fate_history_max serials: an older one
// answers Unknown, a recent one its fate, and a retirement never overwrites a newer serial's record.
class EngineToyShortHistory : public EngineToyTest {
 protected:
  EngineToyShortHistory() { options.fate_history_max = 8; }
};

TEST_F(EngineToyShortHistory, OldFatesAreForgottenAndRecentOnesKept) {
  const BufferId target = buffer();
  std::vector<SubmissionId> launched;
  for (std::uint8_t value = 0; value < 20; ++value) {
    Result<SubmissionId> submitted = launch_fill(target, value);
    ASSERT_TRUE(submitted.ok());
    launched.push_back(submitted.value());
    backend.complete_all();
    ASSERT_TRUE(engine->sync(1'000'000).completion.ok());
  }
  EXPECT_EQ(engine->poll(launched.front()), SubmissionFate::Unknown) << "19 launches later, out of the window";
  EXPECT_FALSE(engine->wait(launched.front(), 0).ok());
  for (std::size_t index = launched.size() - 4; index < launched.size(); ++index) {
    EXPECT_EQ(engine->poll(launched[index]), SubmissionFate::Complete) << "launch " << index;
    EXPECT_TRUE(engine->wait(launched[index], 0).ok()) << "launch " << index;
  }
  EXPECT_TRUE(finish().clean());
}

TEST(FateHistory, ASlotGoesToTheNewerSerialOnly) {
  engine_detail::FateHistory history(4);
  const engine_detail::FateRecord complete{SubmissionFate::Complete, {}};
  const engine_detail::FateRecord failed{SubmissionFate::Failed, {}};
  for (std::uint64_t serial = 1; serial <= 4; ++serial) history.put(serial, complete);
  for (std::uint64_t serial = 1; serial <= 4; ++serial) ASSERT_NE(history.find(serial), nullptr) << serial;
  history.put(6, failed);  // takes serial 2's slot
  EXPECT_EQ(history.find(2), nullptr);
  ASSERT_NE(history.find(6), nullptr);
  EXPECT_EQ(history.find(6)->fate, SubmissionFate::Failed);
  history.put(2, complete);  // retires after a newer serial took its slot: out of the window, not kept
  EXPECT_EQ(history.find(2), nullptr);
  EXPECT_EQ(history.find(6)->fate, SubmissionFate::Failed);
  EXPECT_EQ(history.find(0), nullptr);
  EXPECT_EQ(history.find(10), nullptr) << "10 shares serial 6's slot but was never put";
  EXPECT_EQ(history.find(5), nullptr) << "5 was never put";
}

// SubmitProgress::WhenNeeded: a submit makes no backend call besides the submit itself unless something
// waits on a fence or the live submissions reach half their bound; every guarantee still holds.
class EngineToyWhenNeeded : public EngineToyTest {
 protected:
  EngineToyWhenNeeded() {
    options.submit_progress = SubmitProgress::WhenNeeded;
    options.live_submissions_max = 8;
  }
};

TEST_F(EngineToyWhenNeeded, SubmitPollsNothingUntilHalfTheLiveBound) {
  const BufferId target = buffer();
  for (std::uint8_t value = 0; value < 3; ++value) ASSERT_TRUE(launch_fill(target, value).ok());
  EXPECT_EQ(backend.polls, 0U) << "nothing waits on a fence and 3 of 8 live submissions is under half the bound";
  backend.complete_all();
  ASSERT_TRUE(launch_fill(target, 3).ok());
  EXPECT_GT(backend.polls, 0U) << "4 of 8 live submissions: the submit observes completions";
  EXPECT_EQ(backend.live_events(), 1U) << "the completed events were destroyed; the new one is pending";
  for (std::uint8_t value = 4; value < 40; ++value) {
    backend.complete_all();
    ASSERT_TRUE(launch_fill(target, value).ok()) << "the live bound is never reached";
  }
  EXPECT_LE(backend.live_events(), 4U);
  EXPECT_TRUE(engine->sync(1'000'000).completion.ok());
  EXPECT_EQ(backend.live_events(), 0U);
  EXPECT_EQ(read_all(target, 64), bytes_of_value(64, 39));
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyWhenNeeded, ADeferredReleaseIsCarriedOutByTheNextSubmit) {
  const BufferId first = buffer();
  const BufferId second = buffer();
  ASSERT_TRUE(launch_fill(first, 1).ok());
  ASSERT_TRUE(engine->release(first).ok());
  EXPECT_EQ(backend.live_buffers(), 2U) << "R1: the pinned buffer is not freed";
  backend.complete_all();
  ASSERT_TRUE(launch_fill(second, 2).ok());
  EXPECT_EQ(backend.live_buffers(), 1U) << "a release waits on a fence, so the submit observed the completion";
  const std::uint64_t polls = backend.polls;
  backend.complete_all();
  ASSERT_TRUE(launch_fill(second, 3).ok());
  EXPECT_EQ(backend.polls, polls) << "no release waits any more: the submit polls nothing";
  EXPECT_TRUE(finish().clean());
}

TEST_F(EngineToyWhenNeeded, FailedLaunchStillSurfacesExactlyOnceAtSync) {
  const BufferId target = buffer();
  backend.faults.fail_events = 1;
  ASSERT_TRUE(launch_fill(target, 4).ok());
  ASSERT_TRUE(launch_fill(target, 5).ok());
  EXPECT_EQ(backend.polls, 0U);
  FlushResult synced = engine->sync(1'000'000);
  ASSERT_EQ(synced.failures.size(), 1U) << "R14";
  EXPECT_EQ(synced.failures[0].cause, FailureCause::FailedButQuiescent);
  EXPECT_TRUE(engine->flush().failures.empty());
  EXPECT_EQ(engine->counters().failures_queued, engine->counters().failures_surfaced);
  EXPECT_TRUE(finish().clean());
}

TEST(EngineToyThreads, SubmittersAndPollerShareTheEngine) {
  ToyBackend backend;
  RealEnv env;
  Engine<ToyBackend, RealEnv> engine(backend, env);
  ASSERT_TRUE(engine.open().ok());
  ArtifactRef artifact;
  artifact.kernel_name = "fill";
  Result<ProgramId> fill = engine.load_program(artifact);
  ASSERT_TRUE(fill.ok());
  engine.start_poller();
  auto submitter = [&](QueueIndex queue, std::uint8_t value) {
    for (int round = 0; round < 50; ++round) {
      Result<BufferId> target = engine.create_buffer(BufferRequest{64, kAllBufferUsage});
      ASSERT_TRUE(target.ok());
      const EngineBinding binding{target.value(), Access::Write};
      const std::byte parameter{value};
      ASSERT_TRUE(engine.launch(queue, fill.value(), LaunchDims{}, std::span<const EngineBinding>(&binding, 1),
                                std::span<const std::byte>(&parameter, 1))
                      .ok());
      ASSERT_TRUE(engine.release(target.value()).ok());
      if (round % 10 == 9) {
        EXPECT_TRUE(engine.sync(1'000'000).ok());
      }
    }
  };
  std::thread first(submitter, 0, 1);
  std::thread second(submitter, 1, 2);
  first.join();
  second.join();
  engine.stop_poller();
  EXPECT_TRUE(engine.drain(1'000'000'000).ok());
  const ShutdownReport report = engine.shutdown(1'000'000'000);
  EXPECT_TRUE(report.clean()) << report.describe();
  EXPECT_EQ(report.tally(ResourceKind::Buffers).released, 100U);
  EXPECT_TRUE(backend.violations.empty());
  EXPECT_EQ(backend.execution_log().size(), 100U);
}

}  // namespace
}  // namespace quiesce::test
