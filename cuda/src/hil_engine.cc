// The genuine sticky fault under quiesce::Engine over cuda::Device: the engine notices the loss, surfaces
// the failure once, discards what the lost context held, reports it at shutdown; a fresh engine in a fresh
// process then completes the same work (the H200 showed the fault poisons the whole process).
#include <array>
#include <string>

#include "quiesce/core/engine.h"
#include "quiesce/cuda/hil.h"

namespace quiesce::cuda {
namespace {

constexpr std::uint64_t kBytes = 4096;
constexpr std::uint64_t kWaitNs = 30'000'000'000ULL;

using GpuEngine = Engine<Device, RealEnv>;

EngineOptions engine_options() {
  EngineOptions options;
  options.queue_count = 2;
  options.memory_budget_bytes = 64ULL << 20U;
  options.host_access_timeout_ns = kWaitNs;
  options.recovery_attempts_max = 2;
  return options;
}

LaunchDims dims() {
  LaunchDims launch;
  launch.grid_x = 4;
  launch.block_x = 256;
  return launch;
}

}  // namespace

// The work both sides run: a buffer, the fill kernel on queue 0, a copy to a second buffer on queue 1 (an
// automatic cross-queue dependency), a read of both. Empty when every byte is right; otherwise why not.
std::string engine_fill_work(Engine<Device, RealEnv>& engine, std::uint8_t value) {
  Result<BufferId> first = engine.create_buffer(BufferRequest{kBytes, kAllBufferUsage});
  Result<BufferId> second = engine.create_buffer(BufferRequest{kBytes, kAllBufferUsage});
  if (!first.ok()) return "create_buffer: " + describe_error(first.error());
  if (!second.ok()) return "create_buffer: " + describe_error(second.error());
  Result<ProgramId> fill = engine.load_program(ArtifactRef{"fill", ArtifactFormat::Builtin, {}, 1U << 20});
  if (!fill.ok()) return "load_program(fill): " + describe_error(fill.error());
  const std::array<EngineBinding, 1> binding = {EngineBinding{*first, Access::Write}};
  const std::array<std::byte, 4> word = {std::byte{value}, std::byte{value}, std::byte{value}, std::byte{value}};
  const std::array<EngineOp, 1> launch = {EngineOp::launch(*fill, dims(), binding, word)};
  Result<SubmissionId> filled = engine.submit(0, launch);
  if (!filled.ok()) return "submit(fill): " + describe_error(filled.error());
  const std::array<EngineOp, 1> copy = {EngineOp::copy(*first, 0, *second, 0, kBytes)};
  Result<SubmissionId> copied = engine.submit(1, copy);
  if (!copied.ok()) return "submit(copy): " + describe_error(copied.error());
  const FlushResult synced = engine.sync(kWaitNs);
  if (!synced.ok()) return "sync reported " + std::to_string(synced.failures.size()) + " failure(s)";
  for (const BufferId buffer : {*first, *second}) {
    std::array<std::byte, kBytes> bytes{};
    const std::array<std::span<std::byte>, 1> segments = {std::span<std::byte>(bytes)};
    const Status read = engine.read(buffer, 0, ByteSink{segments});
    if (!read.ok()) return "read: " + describe_error(read.error());
    for (const std::byte byte : bytes) {
      if (byte != std::byte{value}) return "a byte read back was not the fill value";
    }
  }
  if (!engine.release(*first).ok() || !engine.release(*second).ok() || !engine.release(*fill).ok()) {
    return "a release failed";
  }
  return {};
}

CheckResult engine_sticky_fault_scenario(Device& device) {
  CheckResult check{"engine over cuda::Device: a genuine sticky fault is quarantined and reported", false, {}};
  RealEnv env;
  GpuEngine engine(device, env, engine_options());
  const Status opened = engine.open();
  if (!opened.ok()) return CheckResult{check.name, false, "the engine did not open: " + describe_error(opened.error())};
  const std::string before = engine_fill_work(engine, 0x11);
  Result<BufferId> victim = engine.create_buffer(BufferRequest{kBytes, kAllBufferUsage});
  Result<ProgramId> fault = engine.load_program(ArtifactRef{"fault", ArtifactFormat::Builtin, {}, 1U << 20});
  if (!victim.ok() || !fault.ok()) {
    return CheckResult{check.name, false, "creating the victim buffer or loading the fault kernel failed"};
  }
  const std::array<EngineBinding, 1> binding = {EngineBinding{*victim, Access::Read}};
  // Fire-and-forget (Engine::launch): its failure must surface exactly once, at the next flush or sync.
  Result<SubmissionId> launched = engine.launch(0, *fault, dims(), binding, {});
  const FlushResult synced = engine.sync(kWaitNs);
  const SubmissionFate fate = launched.ok() ? engine.poll(*launched) : SubmissionFate::Unknown;
  const FlushResult second_flush = engine.flush();
  std::size_t losses_surfaced = 0;
  for (const AsyncFailure& failure : synced.failures) {
    const bool this_launch = launched.ok() && failure.submission.serial == launched->serial;
    if (this_launch && failure.cause == FailureCause::DeviceLost) ++losses_surfaced;
  }
  // In-process recovery: the engine reopens a context on its next call. On the H200 this is refused.
  const std::string after = engine_fill_work(engine, 0x22);
  const EngineCounters counters = engine.counters();
  const ShutdownReport report = engine.shutdown(kWaitNs);
  const bool loss_seen = counters.device_losses >= 1 && report.device_losses >= 1;
  const bool accounted = report.leaked() == 0 && !report.over_accounted();
  const ResourceTally& buffers = report.tally(ResourceKind::Buffers);
  check.detail = std::string("work before the fault ") + (before.empty() ? "completed" : "FAILED: " + before) +
                 "; the faulting launch " + (launched.ok() ? "was admitted" : "was refused: " + describe_error(launched.error())) +
                 "; the next sync surfaced " + std::to_string(synced.failures.size()) + " failure(s), " +
                 std::to_string(losses_surfaced) + " of them this launch's device loss (sync completion: " +
                 (synced.completion.ok() ? std::string("ok") : describe_error(synced.completion.error())) +
                 "); its fate afterwards " + std::to_string(static_cast<int>(fate)) + " (6 = lost); a second flush surfaced " +
                 std::to_string(second_flush.failures.size()) + "; device losses " +
                 std::to_string(counters.device_losses) + ", recoveries " + std::to_string(counters.recoveries) +
                 "; in-process recovery: " +
                 (after.empty() ? std::string("the work completed on a new context")
                                : "refused (" + after + "): the fault is process-wide") +
                 "; shutdown: buffers created " + std::to_string(buffers.created) + ", released " +
                 std::to_string(buffers.released) + ", discarded with the lost context " +
                 std::to_string(buffers.discarded) + ", quarantined " + std::to_string(buffers.quarantined) +
                 ", leaked " + std::to_string(report.leaked()) + ", epochs " + std::to_string(report.epochs) +
                 ", device losses " + std::to_string(report.device_losses);
  check.passed = before.empty() && launched.ok() && losses_surfaced == 1 && second_flush.failures.empty() &&
                 fate == SubmissionFate::Lost && loss_seen && accounted;
  return check;
}

CheckResult engine_recovery_check(Device& device) {
  CheckResult check{"engine over cuda::Device: a fresh engine in a fresh process completes the work", false, {}};
  RealEnv env;
  GpuEngine engine(device, env, engine_options());
  const Status opened = engine.open();
  if (!opened.ok()) return CheckResult{check.name, false, "the engine did not open: " + describe_error(opened.error())};
  const std::string work = engine_fill_work(engine, 0x33);
  const ShutdownReport report = engine.shutdown(kWaitNs);
  check.passed = work.empty() && report.clean() && report.device_losses == 0;
  check.detail = (work.empty() ? std::string("fill, cross-queue copy and reads completed") : "the work FAILED: " + work) +
                 "; shutdown " + (report.clean() ? "clean" : "NOT clean: " + report.describe());
  return check;
}

}  // namespace quiesce::cuda
