// CUDA backend benchmarks (run on a GPU; each benchmark skips with the driver's reason elsewhere).
//
// 1. Host time of cuda::Device::submit, and of quiesce::Engine::submit over it, against raw cuLaunchKernel
//    of the same kernel with the same packed parameter block, in one process: the overhead per launch
//    (target ≤ 1.05×). Batches of 1 and 64 launches. The raw side is measured bare, with the one
//    cuEventRecord per batch that the backend adds (a pooled CU_EVENT_DISABLE_TIMING event, as the backend
//    records), and with a cuStreamWriteValue64 of the batch's sequence number into host-mapped memory (a
//    completion signal a poll could read without a driver call), so each per-batch signal's cost is known.
//    The backend is measured with both completion signals (cuda::CompletionSignal): PerBatch records an
//    event at every submit; OnDemand records none at submit and one at the queue's tail when a poll needs
//    it (here: when the 512 batches are drained, outside the timed region, which then costs one record).
//    The engine is measured with both SubmitProgress policies: EverySubmit polls each queue's oldest
//    unfinished submission after every submit (a driver call per submit); WhenNeeded leaves the polling to
//    the sync that follows every 512 submissions, outside the timed region, as the raw side's is.
// 2. A captured graph of 1,000 small kernels (the 64-byte fill, and an empty kernel) replayed, against the
//    same 1,000 launches submitted eagerly,
//    each waited to completion (target ≥ 5× faster), through the backend and raw: the graph is uploaded
//    before timing (end_capture calls cuGraphUpload; the raw one calls it itself) and replayed 3 times
//    untimed first; each figure is the median of 10 repetitions of at least 0.5 s.
// Events are drained in bulk outside the timed region, so neither side pays for completion polling.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "quiesce/core.h"
#include "quiesce/core/engine.h"
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

  explicit Bench(cuda::CompletionSignal completion) {
    cuda::DeviceOptions options;
    options.completion = completion;
    auto opened = cuda::Device::open(options);
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

// One GPU setup per completion signal, built on first use.
Bench& bench(cuda::CompletionSignal completion = cuda::CompletionSignal::PerBatch) {
  if (completion == cuda::CompletionSignal::OnDemand) {
    static Bench on_demand(cuda::CompletionSignal::OnDemand);  // NOLINT
    return on_demand;
  }
  static Bench per_batch(cuda::CompletionSignal::PerBatch);  // NOLINT
  return per_batch;
}

bool skip_without_gpu(benchmark::State& state, cuda::CompletionSignal completion = cuda::CompletionSignal::PerBatch) {
  if (bench(completion).device) return false;
  state.SkipWithError(bench(completion).unavailable.c_str());
  return true;
}

const std::array<std::byte, 4> kValue = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};

LaunchDims small_dims() {
  LaunchDims dims;
  dims.block_x = 32;
  return dims;
}

void drain(std::vector<Event>& events, cuda::CompletionSignal completion = cuda::CompletionSignal::PerBatch) {
  cuda::Device& device = *bench(completion).device;
  if (!events.empty()) (void)device.wait_event(events.back(), kWaitNs);
  for (Event& event : events) {
    (void)device.wait_event(event, kWaitNs);
    (void)device.destroy_event(std::move(event));
  }
  events.clear();
}

void device_submit(benchmark::State& state, cuda::CompletionSignal completion) {
  if (skip_without_gpu(state, completion)) return;
  Bench& b = bench(completion);
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
      drain(events, completion);
      state.ResumeTiming();
    }
  }
  drain(events, completion);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_DeviceSubmit(benchmark::State& state) { device_submit(state, cuda::CompletionSignal::PerBatch); }
void BM_DeviceSubmitOnDemand(benchmark::State& state) { device_submit(state, cuda::CompletionSignal::OnDemand); }

// The fill kernel's packed parameter block {pointer, bytes, value} for raw cuLaunchKernel
// (CU_LAUNCH_PARAM_BUFFER_POINTER). `extra` points into the struct, so it is neither copied nor moved.
struct RawFillParameters {
  std::array<std::byte, 20> parameters{};
  std::size_t parameter_bytes = parameters.size();
  std::array<void*, 5> extra{};

  RawFillParameters() = default;
  RawFillParameters(const RawFillParameters&) = delete;
  RawFillParameters& operator=(const RawFillParameters&) = delete;

  void pack(Bench& b) {
    const std::uint64_t pair[2] = {b.device->native_pointer(b.buffer), kKernelBytes};
    std::memcpy(parameters.data(), pair, 16);
    std::memcpy(parameters.data() + 16, kValue.data(), 4);
    extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, parameters.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &parameter_bytes,
             CU_LAUNCH_PARAM_END};
  }
};

// The same launches straight through the driver: same function, stream, grid and parameter block.
enum class Signal { None, Record, WriteValue };

void raw_launches(benchmark::State& state, Signal signal) {
  if (skip_without_gpu(state)) return;
  Bench& b = bench();
  const cuda::DriverFunctions& f = b.device->driver().api();
  CUfunction function = b.device->native_function(b.fill);
  CUstream stream = b.device->native_stream(b.queue);
  RawFillParameters raw;
  raw.pack(b);
  void** extra = raw.extra.data();
  CUevent event = nullptr;
  (void)f.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING);
  // A 64-bit completion word in pinned, device-mapped host memory.
  void* host_word = nullptr;
  CUdeviceptr device_word = 0;
  if (signal == Signal::WriteValue) {
    if (f.cuMemHostAlloc(&host_word, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS ||
        f.cuMemHostGetDevicePointer(&device_word, host_word, 0) != CUDA_SUCCESS) {
      state.SkipWithError("cuMemHostAlloc or cuMemHostGetDevicePointer failed");
      return;
    }
  }
  const auto launches = state.range(0);
  std::uint64_t batches = 0;
  for (auto _ : state) {
    for (std::int64_t index = 0; index < launches; ++index) {
      if (f.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, extra) != CUDA_SUCCESS) {
        state.SkipWithError("cuLaunchKernel failed");
        break;
      }
    }
    if (signal == Signal::Record) (void)f.cuEventRecord(event, stream);
    if (signal == Signal::WriteValue &&
        f.cuStreamWriteValue64(stream, device_word, batches + 1, CU_STREAM_WRITE_VALUE_DEFAULT) != CUDA_SUCCESS) {
      state.SkipWithError("cuStreamWriteValue64 failed");
      break;
    }
    if (++batches % 512 == 0) {
      state.PauseTiming();
      (void)f.cuStreamSynchronize(stream);
      state.ResumeTiming();
    }
  }
  (void)f.cuStreamSynchronize(stream);
  if (signal == Signal::WriteValue && *static_cast<volatile std::uint64_t*>(host_word) != batches) {
    state.SkipWithError("the host-mapped completion word does not hold the last batch's number");
  }
  (void)f.cuEventDestroy(event);
  if (host_word != nullptr) (void)f.cuMemFreeHost(host_word);
  state.SetItemsProcessed(state.iterations() * launches);
}

void BM_RawLaunch(benchmark::State& state) { raw_launches(state, Signal::None); }
void BM_RawLaunchAndRecord(benchmark::State& state) { raw_launches(state, Signal::Record); }
void BM_RawLaunchAndWriteValue(benchmark::State& state) { raw_launches(state, Signal::WriteValue); }

// quiesce::Engine::submit over cuda::Device (fire-and-forget: the engine tracks each submission and
// retires it at a later sync, which runs outside the timed region every 512 submissions).
// With SubmitProgress::WhenNeeded the submits between two syncs observe nothing (no release waits on a
// fence and 512 live submissions stay under half of live_submissions_max), so the sync does all the polling.
void engine_submit(benchmark::State& state, cuda::CompletionSignal completion,
                   SubmitProgress progress = SubmitProgress::EverySubmit) {
  if (skip_without_gpu(state, completion)) return;
  Bench& b = bench(completion);
  RealEnv env;
  EngineOptions options;
  options.submit_progress = progress;
  options.queue_count = 1;
  options.memory_budget_bytes = 64ULL << 20U;
  Engine<cuda::Device, RealEnv> engine(*b.device, env, options);
  if (!engine.open().ok()) {
    state.SkipWithError("the engine did not open");
    return;
  }
  Result<BufferId> buffer = engine.create_buffer(BufferRequest{kKernelBytes, kAllBufferUsage});
  Result<ProgramId> fill = engine.load_program(ArtifactRef{"fill", ArtifactFormat::Builtin, {}, 1U << 20});
  if (!buffer.ok() || !fill.ok()) {
    state.SkipWithError("the engine's buffer or program failed");
    return;
  }
  const std::array<EngineBinding, 1> binding = {EngineBinding{*buffer, Access::Write}};
  const std::vector<EngineOp> batch(static_cast<std::size_t>(state.range(0)),
                                    EngineOp::launch(*fill, small_dims(), binding, kValue));
  std::uint64_t submissions = 0;
  for (auto _ : state) {
    if (!engine.submit(0, batch).ok()) {
      state.SkipWithError("engine submit failed");
      break;
    }
    if (++submissions % 512 == 0) {
      state.PauseTiming();
      (void)engine.sync(kWaitNs);
      state.ResumeTiming();
    }
  }
  (void)engine.sync(kWaitNs);
  (void)engine.release(*buffer);
  (void)engine.release(*fill);
  (void)engine.shutdown(kWaitNs);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_EngineSubmit(benchmark::State& state) { engine_submit(state, cuda::CompletionSignal::PerBatch); }
void BM_EngineSubmitOnDemand(benchmark::State& state) { engine_submit(state, cuda::CompletionSignal::OnDemand); }
void BM_EngineSubmitWhenNeeded(benchmark::State& state) {
  engine_submit(state, cuda::CompletionSignal::PerBatch, SubmitProgress::WhenNeeded);
}
void BM_EngineSubmitWhenNeededOnDemand(benchmark::State& state) {
  engine_submit(state, cuda::CompletionSignal::OnDemand, SubmitProgress::WhenNeeded);
}

// The three submit paths interleaved in one loop: raw cuLaunchKernel, cuda::Device::submit and
// Engine::submit (WhenNeeded, over the device's OnDemand completion), all on one device. Each iteration is a
// round of three chunks of 16 batches, one per path, in an order that rotates from round to round, each
// chunk timed on its own; every 32 rounds all three are drained outside the timed chunks. A change in the
// virtual machine's launch rate then moves all three alike, where separate benchmarks run seconds apart
// see it as overhead. Counters: host ns per launch of each path (sums over all rounds), the ratios of the
// sums to raw, and the medians of the per-round ratios.
void submit_interleaved(benchmark::State& state) {
  constexpr cuda::CompletionSignal kCompletion = cuda::CompletionSignal::OnDemand;
  if (skip_without_gpu(state, kCompletion)) return;
  Bench& b = bench(kCompletion);
  const cuda::DriverFunctions& f = b.device->driver().api();
  CUfunction function = b.device->native_function(b.fill);
  CUstream stream = b.device->native_stream(b.queue);
  RawFillParameters raw;
  raw.pack(b);
  void** extra = raw.extra.data();
  const auto launches = static_cast<std::size_t>(state.range(0));
  const std::array<Binding, 1> device_binding = {Binding{b.buffer.ref(), Access::Write}};
  const std::vector<Command> device_batch(launches, Command::launch(b.fill.ref(), small_dims(), device_binding, kValue));

  RealEnv env;
  EngineOptions options;
  options.submit_progress = SubmitProgress::WhenNeeded;
  options.queue_count = 1;
  options.memory_budget_bytes = 64ULL << 20U;
  Engine<cuda::Device, RealEnv> engine(*b.device, env, options);
  if (!engine.open().ok()) {
    state.SkipWithError("the engine did not open");
    return;
  }
  Result<BufferId> buffer = engine.create_buffer(BufferRequest{kKernelBytes, kAllBufferUsage});
  Result<ProgramId> fill = engine.load_program(ArtifactRef{"fill", ArtifactFormat::Builtin, {}, 1U << 20});
  if (!buffer.ok() || !fill.ok()) {
    state.SkipWithError("the engine's buffer or program failed");
    return;
  }
  const std::array<EngineBinding, 1> engine_binding = {EngineBinding{*buffer, Access::Write}};
  const std::vector<EngineOp> engine_batch(launches, EngineOp::launch(*fill, small_dims(), engine_binding, kValue));

  constexpr int kChunk = 16;
  constexpr int kRoundsPerDrain = 32;
  std::vector<Event> events;
  events.reserve(kChunk * kRoundsPerDrain);
  bool failed = false;
  const auto raw_chunk = [&] {
    for (int batch = 0; batch < kChunk; ++batch) {
      for (std::size_t index = 0; index < launches; ++index) {
        failed |= f.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, extra) != CUDA_SUCCESS;
      }
    }
  };
  const auto device_chunk = [&] {
    for (int batch = 0; batch < kChunk; ++batch) {
      SubmitResult submitted = b.device->submit(b.queue, device_batch, {});
      failed |= submitted.status != SubmitStatus::Submitted;
      events.push_back(std::move(submitted.event));
    }
  };
  const auto engine_chunk = [&] {
    for (int batch = 0; batch < kChunk; ++batch) failed |= !engine.submit(0, engine_batch).ok();
  };
  using Clock = std::chrono::steady_clock;
  const auto timed = [](auto&& chunk) {
    const Clock::time_point start = Clock::now();
    chunk();
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
  };
  std::array<std::uint64_t, 3> totals{};
  std::vector<double> device_ratios;
  std::vector<double> engine_ratios;
  std::uint64_t rounds = 0;
  for (auto _ : state) {
    std::array<std::uint64_t, 3> ns{};
    for (std::uint64_t slot = 0; slot < 3; ++slot) {
      const std::uint64_t path = (slot + rounds) % 3;
      if (path == 0) ns[0] = timed(raw_chunk);
      if (path == 1) ns[1] = timed(device_chunk);
      if (path == 2) ns[2] = timed(engine_chunk);
    }
    if (failed) {
      state.SkipWithError("a launch or submit failed");
      break;
    }
    for (std::size_t path = 0; path < 3; ++path) totals[path] += ns[path];
    device_ratios.push_back(static_cast<double>(ns[1]) / static_cast<double>(ns[0]));
    engine_ratios.push_back(static_cast<double>(ns[2]) / static_cast<double>(ns[0]));
    if (++rounds % kRoundsPerDrain == 0) {
      state.PauseTiming();
      (void)f.cuStreamSynchronize(stream);
      drain(events, kCompletion);
      (void)engine.sync(kWaitNs);
      state.ResumeTiming();
    }
  }
  (void)f.cuStreamSynchronize(stream);
  drain(events, kCompletion);
  (void)engine.sync(kWaitNs);
  (void)engine.release(*buffer);
  (void)engine.release(*fill);
  (void)engine.shutdown(kWaitNs);
  if (rounds == 0) return;
  const auto median = [](std::vector<double>& values) {
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
    return values[values.size() / 2];
  };
  const double per_launch = static_cast<double>(rounds * kChunk * launches);
  state.counters["raw_ns_per_launch"] = static_cast<double>(totals[0]) / per_launch;
  state.counters["device_ns_per_launch"] = static_cast<double>(totals[1]) / per_launch;
  state.counters["engine_ns_per_launch"] = static_cast<double>(totals[2]) / per_launch;
  state.counters["device_over_raw"] = static_cast<double>(totals[1]) / static_cast<double>(totals[0]);
  state.counters["engine_over_raw"] = static_cast<double>(totals[2]) / static_cast<double>(totals[0]);
  state.counters["device_over_raw_median"] = median(device_ratios);
  state.counters["engine_over_raw_median"] = median(engine_ratios);
  state.counters["rounds"] = static_cast<double>(rounds);
}

void BM_SubmitInterleaved(benchmark::State& state) { submit_interleaved(state); }

constexpr std::size_t kGraphKernels = 1000;

// The small kernels of the graph pairs: the 64-byte fill of the submit benchmarks (32 threads), and an
// empty one, `delay` for 0 ns on one thread with no binding (it reads %globaltimer once and returns), the
// kind of kernel DESIGN §9's raw 6.7x was measured with.
enum class SmallKernel { Fill, Empty };

const std::array<std::byte, 8> kZeroDuration = {};

struct ThousandKernels {
  Program delay;
  std::array<Binding, 1> binding;
  std::vector<Command> batch;
};

ThousandKernels thousand_kernels(Bench& b, SmallKernel kernel) {
  ThousandKernels kernels;
  kernels.binding = {Binding{b.buffer.ref(), Access::Write}};
  if (kernel == SmallKernel::Fill) {
    kernels.batch.assign(kGraphKernels, Command::launch(b.fill.ref(), small_dims(), kernels.binding, kValue));
    return kernels;
  }
  Result<Program> delay =
      b.device->load_program(b.context, ArtifactRef{"delay", ArtifactFormat::Builtin, {}, 1U << 20});
  if (!delay.ok()) return kernels;
  kernels.delay = std::move(delay).value();
  kernels.batch.assign(kGraphKernels, Command::launch(kernels.delay.ref(), LaunchDims{}, {}, kZeroDuration));
  return kernels;
}

void release_kernels(Bench& b, ThousandKernels& kernels) {
  if (kernels.delay.valid()) (void)b.device->unload_program(std::move(kernels.delay));
}

// The 1,000 kernels captured into an executable, or nothing (the benchmark skipped, the kernels released).
std::optional<Executable> capture_thousand(benchmark::State& state, Bench& b, ThousandKernels& kernels) {
  if (!b.device->begin_capture(b.queue).ok() || !b.device->capture(b.queue, kernels.batch).ok()) {
    (void)b.device->end_capture(b.queue);
    release_kernels(b, kernels);
    state.SkipWithError("capturing 1,000 launches failed");
    return std::nullopt;
  }
  Result<Executable> executable = b.device->end_capture(b.queue);
  if (!executable.ok()) {
    release_kernels(b, kernels);
    state.SkipWithError("end_capture failed");
    return std::nullopt;
  }
  return std::move(executable).value();
}

void eager_thousand(benchmark::State& state, SmallKernel kernel) {
  if (skip_without_gpu(state)) return;
  Bench& b = bench();
  ThousandKernels kernels = thousand_kernels(b, kernel);
  if (kernels.batch.empty()) {
    state.SkipWithError("the delay kernel did not load");
    return;
  }
  for (int warm = 0; warm < 3; ++warm) {
    SubmitResult submitted = b.device->submit(b.queue, kernels.batch, {});
    (void)b.device->wait_event(submitted.event, kWaitNs);
    (void)b.device->destroy_event(std::move(submitted.event));
  }
  for (auto _ : state) {
    SubmitResult submitted = b.device->submit(b.queue, kernels.batch, {});
    const WaitResult waited = b.device->wait_event(submitted.event, kWaitNs);
    if (submitted.status != SubmitStatus::Submitted || !waited.ok()) {
      state.SkipWithError("an eager batch did not complete");
      break;
    }
    (void)b.device->destroy_event(std::move(submitted.event));
  }
  release_kernels(b, kernels);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kGraphKernels));
}

void graph_thousand(benchmark::State& state, SmallKernel kernel) {
  if (skip_without_gpu(state)) return;
  Bench& b = bench();
  ThousandKernels kernels = thousand_kernels(b, kernel);
  if (kernels.batch.empty()) {
    state.SkipWithError("the delay kernel did not load");
    return;
  }
  std::optional<Executable> executable = capture_thousand(state, b, kernels);
  if (!executable) return;
  const std::array<Command, 1> replay = {Command::replay(executable->ref())};
  for (int warm = 0; warm < 3; ++warm) {  // untimed: the first replays of an executable cost more
    SubmitResult submitted = b.device->submit(b.queue, replay, {});
    (void)b.device->wait_event(submitted.event, kWaitNs);
    (void)b.device->destroy_event(std::move(submitted.event));
  }
  for (auto _ : state) {
    SubmitResult submitted = b.device->submit(b.queue, replay, {});
    const WaitResult waited = b.device->wait_event(submitted.event, kWaitNs);
    if (submitted.status != SubmitStatus::Submitted || !waited.ok()) {
      state.SkipWithError("a replay did not complete");
      break;
    }
    (void)b.device->destroy_event(std::move(submitted.event));
  }
  (void)b.device->destroy_executable(std::move(*executable));
  release_kernels(b, kernels);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kGraphKernels));
}

void BM_EagerThousandKernels(benchmark::State& state) { eager_thousand(state, SmallKernel::Fill); }
void BM_GraphThousandKernels(benchmark::State& state) { graph_thousand(state, SmallKernel::Fill); }
void BM_EagerThousandEmptyKernels(benchmark::State& state) { eager_thousand(state, SmallKernel::Empty); }
void BM_GraphThousandEmptyKernels(benchmark::State& state) { graph_thousand(state, SmallKernel::Empty); }

// Eager batches and graph replays of the same 1,000 kernels alternated in one loop, each waited and timed
// on its own (the eager one first in even rounds, the replay first in odd ones), so that both see the same
// host launch rate. Counters: microseconds per eager batch and per replay (sums over all rounds), the
// speed-up of the sums and the median of the per-round speed-ups.
void thousand_interleaved(benchmark::State& state, SmallKernel kernel) {
  if (skip_without_gpu(state)) return;
  Bench& b = bench();
  ThousandKernels kernels = thousand_kernels(b, kernel);
  if (kernels.batch.empty()) {
    state.SkipWithError("the delay kernel did not load");
    return;
  }
  std::optional<Executable> executable = capture_thousand(state, b, kernels);
  if (!executable) return;
  const std::array<Command, 1> replay = {Command::replay(executable->ref())};
  bool failed = false;
  const auto run = [&](std::span<const Command> commands) {
    SubmitResult submitted = b.device->submit(b.queue, commands, {});
    const WaitResult waited = b.device->wait_event(submitted.event, kWaitNs);
    failed |= submitted.status != SubmitStatus::Submitted || !waited.ok();
    (void)b.device->destroy_event(std::move(submitted.event));
  };
  for (int warm = 0; warm < 3; ++warm) {
    run(kernels.batch);
    run(replay);
  }
  using Clock = std::chrono::steady_clock;
  const auto timed = [&](std::span<const Command> commands) {
    const Clock::time_point start = Clock::now();
    run(commands);
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
  };
  std::uint64_t eager_ns = 0;
  std::uint64_t graph_ns = 0;
  std::vector<double> speedups;
  std::uint64_t rounds = 0;
  for (auto _ : state) {
    std::uint64_t eager = 0;
    std::uint64_t graph = 0;
    if (rounds % 2 == 0) {
      eager = timed(kernels.batch);
      graph = timed(replay);
    } else {
      graph = timed(replay);
      eager = timed(kernels.batch);
    }
    if (failed) {
      state.SkipWithError("a batch or a replay did not complete");
      break;
    }
    eager_ns += eager;
    graph_ns += graph;
    speedups.push_back(static_cast<double>(eager) / static_cast<double>(graph));
    ++rounds;
  }
  (void)b.device->destroy_executable(std::move(*executable));
  release_kernels(b, kernels);
  if (rounds == 0 || graph_ns == 0) return;
  std::nth_element(speedups.begin(), speedups.begin() + static_cast<std::ptrdiff_t>(speedups.size() / 2), speedups.end());
  state.counters["eager_us"] = static_cast<double>(eager_ns) / static_cast<double>(rounds) / 1000.0;
  state.counters["graph_us"] = static_cast<double>(graph_ns) / static_cast<double>(rounds) / 1000.0;
  state.counters["speedup"] = static_cast<double>(eager_ns) / static_cast<double>(graph_ns);
  state.counters["speedup_median"] = speedups[speedups.size() / 2];
  state.counters["rounds"] = static_cast<double>(rounds);
}

void BM_ThousandKernelsInterleaved(benchmark::State& state) { thousand_interleaved(state, SmallKernel::Fill); }
void BM_ThousandEmptyKernelsInterleaved(benchmark::State& state) { thousand_interleaved(state, SmallKernel::Empty); }

// The same pairs straight through the driver: 1,000 cuLaunchKernel then cuStreamSynchronize, against one
// cuGraphLaunch of those 1,000 captured (uploaded with cuGraphUpload and replayed 3 times before timing).
void raw_thousand(benchmark::State& state, bool graph, SmallKernel kernel) {
  if (skip_without_gpu(state)) return;
  Bench& b = bench();
  const cuda::DriverFunctions& f = b.device->driver().api();
  ThousandKernels kernels = thousand_kernels(b, kernel);
  if (kernels.batch.empty()) {
    state.SkipWithError("the delay kernel did not load");
    return;
  }
  CUfunction function = b.device->native_function(kernel == SmallKernel::Fill ? b.fill : kernels.delay);
  CUstream stream = b.device->native_stream(b.queue);
  std::array<std::byte, 20> parameters{};
  std::size_t parameter_bytes = 8;  // delay: {u64 duration_ns = 0}
  unsigned threads = 1;
  if (kernel == SmallKernel::Fill) {
    const std::uint64_t pair[2] = {b.device->native_pointer(b.buffer), kKernelBytes};
    std::memcpy(parameters.data(), pair, 16);
    std::memcpy(parameters.data() + 16, kValue.data(), 4);
    parameter_bytes = parameters.size();
    threads = 32;
  }
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, parameters.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &parameter_bytes,
                   CU_LAUNCH_PARAM_END};
  const auto eager = [&] {
    for (std::size_t index = 0; index < kGraphKernels; ++index) {
      (void)f.cuLaunchKernel(function, 1, 1, 1, threads, 1, 1, 0, stream, nullptr, extra);
    }
  };
  CUgraphExec executable = nullptr;
  if (graph) {
    CUgraph captured = nullptr;
    if (f.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL) != CUDA_SUCCESS) {
      release_kernels(b, kernels);
      state.SkipWithError("cuStreamBeginCapture failed");
      return;
    }
    eager();
    if (f.cuStreamEndCapture(stream, &captured) != CUDA_SUCCESS ||
        f.cuGraphInstantiateWithFlags(&executable, captured, 0) != CUDA_SUCCESS) {
      release_kernels(b, kernels);
      state.SkipWithError("capturing or instantiating the raw graph failed");
      return;
    }
    (void)f.cuGraphDestroy(captured);
    (void)f.cuGraphUpload(executable, stream);
  }
  const auto once = [&] {
    if (graph) {
      (void)f.cuGraphLaunch(executable, stream);
    } else {
      eager();
    }
    return f.cuStreamSynchronize(stream);
  };
  for (int warm = 0; warm < 3; ++warm) (void)once();
  for (auto _ : state) {
    if (once() != CUDA_SUCCESS) {
      state.SkipWithError("the raw work failed");
      break;
    }
  }
  if (executable != nullptr) (void)f.cuGraphExecDestroy(executable);
  release_kernels(b, kernels);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kGraphKernels));
}

void BM_RawEagerThousandKernels(benchmark::State& state) { raw_thousand(state, false, SmallKernel::Fill); }
void BM_RawGraphThousandKernels(benchmark::State& state) { raw_thousand(state, true, SmallKernel::Fill); }
void BM_RawEagerThousandEmptyKernels(benchmark::State& state) { raw_thousand(state, false, SmallKernel::Empty); }
void BM_RawGraphThousandEmptyKernels(benchmark::State& state) { raw_thousand(state, true, SmallKernel::Empty); }

BENCHMARK(BM_SubmitInterleaved)->Arg(1)->Arg(64)->UseRealTime()->MinTime(3.0);
BENCHMARK(BM_DeviceSubmit)->Arg(1)->Arg(64)->UseRealTime()->MinTime(0.5)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_DeviceSubmitOnDemand)->Arg(1)->Arg(64)->UseRealTime()->MinTime(0.5)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_EngineSubmitOnDemand)->Arg(1)->Arg(64)->UseRealTime()->MinTime(0.5)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_EngineSubmit)->Arg(1)->Arg(64)->UseRealTime()->MinTime(0.5)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_EngineSubmitWhenNeeded)->Arg(1)->Arg(64)->UseRealTime()->MinTime(0.5)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_EngineSubmitWhenNeededOnDemand)->Arg(1)->Arg(64)->UseRealTime()->MinTime(0.5)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_RawLaunch)->Arg(1)->Arg(64)->UseRealTime()->MinTime(0.5)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_RawLaunchAndRecord)->Arg(1)->Arg(64)->UseRealTime()->MinTime(0.5)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_RawLaunchAndWriteValue)->Arg(1)->Arg(64)->UseRealTime()->MinTime(0.5)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_ThousandKernelsInterleaved)->UseRealTime()->MinTime(3.0);
BENCHMARK(BM_ThousandEmptyKernelsInterleaved)->UseRealTime()->MinTime(3.0);
BENCHMARK(BM_EagerThousandKernels)->UseRealTime()->MinTime(0.5)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_GraphThousandKernels)->UseRealTime()->MinTime(0.5)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_RawEagerThousandKernels)->UseRealTime()->MinTime(0.5)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_RawGraphThousandKernels)->UseRealTime()->MinTime(0.5)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_EagerThousandEmptyKernels)->UseRealTime()->MinTime(0.5)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_GraphThousandEmptyKernels)->UseRealTime()->MinTime(0.5)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_RawEagerThousandEmptyKernels)->UseRealTime()->MinTime(0.5)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_RawGraphThousandEmptyKernels)->UseRealTime()->MinTime(0.5)->Repetitions(10)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
