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
  const std::array<EngineOp, 1> faulting = {EngineOp::launch(*fault, dims(), binding, {})};
  Result<SubmissionId> submitted = engine.submit(0, faulting);
  const Result<SubmissionReceipt> waited =
      submitted.ok() ? engine.wait(*submitted, kWaitNs) : Result<SubmissionReceipt>(submitted.error());
  const SubmissionFate fate = submitted.ok() ? engine.poll(*submitted) : SubmissionFate::Unknown;
  const FlushResult first_flush = engine.flush();
  const FlushResult second_flush = engine.flush();
  bool surfaced_as_loss = false;
  for (const AsyncFailure& failure : first_flush.failures) {
    surfaced_as_loss = surfaced_as_loss || (failure.cause == FailureCause::DeviceLost ||
                                            failure.error.kind == ErrorKind::DeviceLost);
  }
  // In-process recovery: the engine reopens a context on its next call. On the H200 this is refused.
  const std::string after = engine_fill_work(engine, 0x22);
  const EngineCounters counters = engine.counters();
  const ShutdownReport report = engine.shutdown(kWaitNs);
  const bool loss_seen = counters.device_losses >= 1 && report.device_losses >= 1;
  const bool accounted = report.leaked() == 0 && !report.over_accounted();
  check.detail = std::string("work before the fault ") + (before.empty() ? "completed" : "FAILED: " + before) +
                 "; the faulting launch's wait answered " +
                 (waited.ok() ? std::string("a receipt") : describe_error(waited.error())) + ", its fate " +
                 std::to_string(static_cast<int>(fate)) + "; the first flush surfaced " +
                 std::to_string(first_flush.failures.size()) + " failure(s)" +
                 (surfaced_as_loss ? " (device lost)" : "") + ", the second " +
                 std::to_string(second_flush.failures.size()) + "; device losses " +
                 std::to_string(counters.device_losses) + ", recoveries " + std::to_string(counters.recoveries) +
                 "; in-process recovery: " +
                 (after.empty() ? std::string("the work completed on a new context")
                                : "refused (" + after + "): the fault is process-wide") +
                 "; shutdown: buffers discarded " +
                 std::to_string(report.tally(ResourceKind::Buffers).discarded) + ", quarantined " +
                 std::to_string(report.tally(ResourceKind::Buffers).quarantined) + ", leaked " +
                 std::to_string(report.leaked()) + ", " + std::to_string(report.quarantine.size()) +
                 " quarantine entr" + (report.quarantine.size() == 1 ? "y" : "ies");
  check.passed = before.empty() && !waited.ok() && surfaced_as_loss && second_flush.failures.empty() && loss_seen &&
                 accounted;
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
