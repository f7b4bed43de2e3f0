// CUDA backend benchmarks (run on a GPU; each benchmark skips with the driver's reason elsewhere).
//
// 1. Host time of cuda::Device::submit against raw cuLaunchKernel of the same kernel with the same packed
//    parameter block, in one process: the backend's overhead per launch (target ≤ 1.05×). Batches of 1
//    and 64 launches; the raw side is measured both bare and with the one cuEventRecord per batch that
//    the backend adds, so the overhead can be read either way.
// 2. A captured graph of 1,000 small kernels replayed, against the same 1,000 launches submitted eagerly,
//    each waited to completion (target ≥ 5× faster).
// Events are drained in bulk outside the timed region, so neither side pays for completion polling.
#include <benchmark/benchmark.h>

#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "quiesce/core.h"
#include "quiesce/cuda/device.h"

namespace {

using namespace quiesce;

constexpr std::uint64_t kWaitNs = 60'000'000'000ULL;

// The smallest useful kernel: fill over 64 bytes (16 words), so launch costs, not the kernel, dominate.
constexpr std::uint64_t kKernelBytes = 64;

// One device with a context, a queue, a 64-byte buffer and the fill kernel, shared by every benchmark.
struct Bench {
  std::optional<cuda::Device> device;
  std::string unavailable;
  Context context;
  Queue queue;
  Buffer buffer;
  Program fill;
  MemoryBudget budget{std::uint64_t{1} << 62};

  Bench() {
    auto opened = cuda::Device::open();
    if (!opened.ok()) {
      unavailable = opened.error().message();
      return;
    }
    device.emplace(std::move(opened).value());
    context = std::move(device->create_context(ContextDesc{})).value();
    queue = std::move(device->create_queue(context, QueueDesc{})).value();
    ResourceTransaction<cuda::Device> transaction(*device, context, budget, 1);
    (void)transaction.allocate(BufferDesc{kKernelBytes, kAllBufferUsage});
    buffer = std::move(transaction.commit().front());
    fill = std::move(device->load_program(context, ArtifactRef{"fill", ArtifactFormat::Builtin, {}, 1U << 20})).value();
  }
};

Bench& bench() {
  static Bench instance;  // NOLINT: one GPU setup per benchmark process, built on first use
  return instance;
}

bool skip_without_gpu(benchmark::State& state) {
  if (bench().device) return false;
  state.SkipWithError(bench().unavailable.c_str());
  return true;
}

const std::array<std::byte, 4> kValue = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};

LaunchDims small_dims() {
  LaunchDims dims;
  dims.block_x = 32;
  return dims;
}

void drain(std::vector<Event>& events) {
  cuda::Device& device = *bench().device;
  if (!events.empty()) (void)device.wait_event(events.back(), kWaitNs);
  for (Event& event : events) {
    (void)device.wait_event(event, kWaitNs);
    (void)device.destroy_event(std::move(event));
  }
  events.clear();
}

void BM_DeviceSubmit(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  Bench& b = bench();
  const std::array<Binding, 1> binding = {Binding{b.buffer.ref(), Access::Write}};
  const std::vector<Command> batch(static_cast<std::size_t>(state.range(0)),
                                   Command::launch(b.fill.ref(), small_dims(), binding, kValue));
  std::vector<Event> events;
  events.reserve(512);
  for (auto _ : state) {
    SubmitResult submitted = b.device->submit(b.queue, batch, {});
    if (submitted.status != SubmitStatus::Submitted) {
      state.SkipWithError("submit failed");
      break;
    }
    events.push_back(std::move(submitted.event));
    if (events.size() == 512) {
      state.PauseTiming();
      drain(events);
      state.ResumeTiming();
    }
  }
  drain(events);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// The same launches straight through the driver: same function, stream, grid and parameter block.
void raw_launches(benchmark::State& state, bool record_event) {
  if (skip_without_gpu(state)) return;
  Bench& b = bench();
  const cuda::DriverFunctions& f = b.device->driver().api();
  CUfunction function = b.device->native_function(b.fill);
  CUstream stream = b.device->native_stream(b.queue);
  std::array<std::byte, 20> parameters{};
  const std::uint64_t pair[2] = {b.device->native_pointer(b.buffer), kKernelBytes};
  std::memcpy(parameters.data(), pair, 16);
  std::memcpy(parameters.data() + 16, kValue.data(), 4);
  std::size_t parameter_bytes = parameters.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, parameters.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &parameter_bytes,
                   CU_LAUNCH_PARAM_END};
  CUevent event = nullptr;
  (void)f.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING);
  const auto launches = state.range(0);
  std::uint64_t batches = 0;
  for (auto _ : state) {
    for (std::int64_t index = 0; index < launches; ++index) {
      if (f.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, extra) != CUDA_SUCCESS) {
        state.SkipWithError("cuLaunchKernel failed");
        break;
      }
    }
    if (record_event) (void)f.cuEventRecord(event, stream);
    if (++batches % 512 == 0) {
      state.PauseTiming();
      (void)f.cuStreamSynchronize(stream);
      state.ResumeTiming();
    }
  }
  (void)f.cuStreamSynchronize(stream);
  (void)f.cuEventDestroy(event);
  state.SetItemsProcessed(state.iterations() * launches);
}

void BM_RawLaunch(benchmark::State& state) { raw_launches(state, false); }
void BM_RawLaunchAndRecord(benchmark::State& state) { raw_launches(state, true); }

constexpr std::size_t kGraphKernels = 1000;

void BM_EagerThousandKernels(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  Bench& b = bench();
  const std::array<Binding, 1> binding = {Binding{b.buffer.ref(), Access::Write}};
  const std::vector<Command> batch(kGraphKernels, Command::launch(b.fill.ref(), small_dims(), binding, kValue));
  for (auto _ : state) {
    SubmitResult submitted = b.device->submit(b.queue, batch, {});
    const WaitResult waited = b.device->wait_event(submitted.event, kWaitNs);
    if (submitted.status != SubmitStatus::Submitted || !waited.ok()) {
      state.SkipWithError("an eager batch did not complete");
      break;
    }
    (void)b.device->destroy_event(std::move(submitted.event));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kGraphKernels));
}

void BM_GraphThousandKernels(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  Bench& b = bench();
  const std::array<Binding, 1> binding = {Binding{b.buffer.ref(), Access::Write}};
  const std::vector<Command> batch(kGraphKernels, Command::launch(b.fill.ref(), small_dims(), binding, kValue));
  if (!b.device->begin_capture(b.queue).ok() || !b.device->capture(b.queue, batch).ok()) {
    (void)b.device->end_capture(b.queue);
    state.SkipWithError("capturing 1,000 launches failed");
    return;
  }
  Result<Executable> executable = b.device->end_capture(b.queue);
  if (!executable.ok()) {
    state.SkipWithError("end_capture failed");
    return;
  }
  const std::array<Command, 1> replay = {Command::replay(executable->ref())};
  for (auto _ : state) {
    SubmitResult submitted = b.device->submit(b.queue, replay, {});
    const WaitResult waited = b.device->wait_event(submitted.event, kWaitNs);
    if (submitted.status != SubmitStatus::Submitted || !waited.ok()) {
      state.SkipWithError("a replay did not complete");
      break;
    }
    (void)b.device->destroy_event(std::move(submitted.event));
  }
  (void)b.device->destroy_executable(std::move(executable).value());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kGraphKernels));
}

BENCHMARK(BM_DeviceSubmit)->Arg(1)->Arg(64)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_RawLaunch)->Arg(1)->Arg(64)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_RawLaunchAndRecord)->Arg(1)->Arg(64)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_EagerThousandKernels)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_GraphThousandKernels)->UseRealTime()->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
