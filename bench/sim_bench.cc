// Throughput of the bare simulated device (DESIGN §9: at least 5 M backend operations per second per core)
// and virtual time compression (an hour of simulated kernel time in well under a second).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "quiesce/core/transaction.h"
#include "quiesce/sim/device.h"

namespace {

using namespace quiesce;  // NOLINT(google-build-using-namespace)

std::vector<std::byte> u32_bytes(std::uint32_t value) {
  std::vector<std::byte> bytes(4);
  for (unsigned i = 0; i < 4; ++i) bytes[i] = static_cast<std::byte>(value >> (8U * i));
  return bytes;
}

std::vector<std::byte> u64_bytes(std::uint64_t value) {
  std::vector<std::byte> bytes(8);
  for (unsigned i = 0; i < 8; ++i) bytes[i] = static_cast<std::byte>(value >> (8U * i));
  return bytes;
}

// A runtime-like mix per iteration: allocate a small buffer under a permit, submit a launch on it, poll
// the event until terminal (or wait for it), destroy the event, free the buffer; every few iterations a
// copy batch and a buffer_info. Items are backend calls, counted by the device itself. Polls charge the
// measured 230 ns of cuEventQuery as virtual time, so a poller makes about 15 polls per 3.3 us launch.
void run_operation_mix(benchmark::State& state, bool wait) {
  sim::Config config;
  config.seed = 1;
  sim::Device device(config);
  Context context = std::move(device.create_context(ContextDesc{})).value();
  Queue queue = std::move(device.create_queue(context, QueueDesc{})).value();
  Program fill = std::move(device.load_program(context, ArtifactRef{"fill", ArtifactFormat::Builtin, {}, 1U << 20U})).value();
  MemoryBudget budget(1ULL << 40U);
  const std::vector<std::byte> value = u32_bytes(7);
  Buffer scratch_source = [&] {
    ResourceTransaction<sim::Device> transaction(device, context, budget, 1);
    (void)transaction.allocate(BufferDesc{256, kAllBufferUsage});
    return std::move(transaction.commit().front());
  }();
  const std::vector<std::byte> initial(256);
  const std::span<const std::byte> initial_segments[] = {initial};
  (void)device.write_buffer(scratch_source, 0, ByteSource{initial_segments});
  std::uint64_t transaction_id = 2;
  const std::uint64_t operations_before = device.operations();
  for (auto _ : state) {
    ResourceTransaction<sim::Device> transaction(device, context, budget, transaction_id++);
    const Result<BufferRef> staged = transaction.allocate(BufferDesc{256, kAllBufferUsage});
    if (!staged.ok()) state.SkipWithError("allocation failed");
    Buffer buffer = std::move(transaction.commit().front());
    const Binding bindings[] = {{buffer.ref(), Access::Write}};
    const Command commands[] = {Command::launch(fill.ref(), {}, bindings, value),
                                Command::copy(scratch_source.ref(), 0, buffer.ref(), 0, 64)};
    const std::size_t count = (transaction_id % 4 == 0) ? 2 : 1;
    SubmitResult submitted = device.submit(queue, {commands, count}, SubmitOptions{});
    if (wait) {
      (void)device.wait_event(submitted.event, 1'000'000'000);
    } else {
      std::uint32_t polls = 0;
      while (!is_terminal(device.poll_event(submitted.event).state)) {
        if (++polls == 1'000'000) state.SkipWithError("an event stayed pending for a million polls");
      }
    }
    if (transaction_id % 8 == 0) benchmark::DoNotOptimize(device.buffer_info(buffer));
    (void)device.destroy_event(std::move(submitted.event));
    (void)device.free_buffer(std::move(buffer));
    budget.discharge(256);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(device.operations() - operations_before));
  state.counters["virtual_ns"] = static_cast<double>(device.now_ns());
  state.counters["findings"] = static_cast<double>(device.findings().size());
}

void BM_SimOperationMixPolling(benchmark::State& state) { run_operation_mix(state, false); }
BENCHMARK(BM_SimOperationMixPolling);

void BM_SimOperationMixWaiting(benchmark::State& state) { run_operation_mix(state, true); }
BENCHMARK(BM_SimOperationMixWaiting);

// Poll-heavy: a runtime's completion poller on a long batch.
void BM_SimPollPending(benchmark::State& state) {
  sim::Config config;
  config.seed = 2;
  config.host_costs = false;
  sim::Device device(config);
  Context context = std::move(device.create_context(ContextDesc{})).value();
  Queue queue = std::move(device.create_queue(context, QueueDesc{})).value();
  Program delay = std::move(device.load_program(context, ArtifactRef{"delay", ArtifactFormat::Builtin, {}, 1U << 20U})).value();
  const std::vector<std::byte> duration = u64_bytes(1'000'000'000);
  const Command launch = Command::launch(delay.ref(), {}, {}, duration);
  SubmitResult submitted = device.submit(queue, {&launch, 1}, SubmitOptions{});
  for (auto _ : state) benchmark::DoNotOptimize(device.poll_event(submitted.event));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SimPollPending);

// Sixty one-minute delay kernels, submitted and waited for one by one: an hour of kernel time.
void BM_HourOfKernelTime(benchmark::State& state) {
  for (auto _ : state) {
    sim::Config config;
    config.seed = 3;
    sim::Device device(config);
    Context context = std::move(device.create_context(ContextDesc{})).value();
    Queue queue = std::move(device.create_queue(context, QueueDesc{})).value();
    Program delay = std::move(device.load_program(context, ArtifactRef{"delay", ArtifactFormat::Builtin, {}, 1U << 20U})).value();
    const std::vector<std::byte> minute = u64_bytes(60'000'000'000ULL);
    const Command launch = Command::launch(delay.ref(), {}, {}, minute);
    for (int i = 0; i < 60; ++i) {
      SubmitResult submitted = device.submit(queue, {&launch, 1}, SubmitOptions{});
      (void)device.wait_event(submitted.event, UINT64_MAX);
      (void)device.destroy_event(std::move(submitted.event));
    }
    if (device.now_ns() < 3'600'000'000'000ULL) state.SkipWithError("less than an hour was simulated");
    state.counters["virtual_s"] = static_cast<double>(device.now_ns() / 1'000'000'000ULL);
  }
}
BENCHMARK(BM_HourOfKernelTime)->Unit(benchmark::kMillisecond);

}  // namespace

namespace {

// A campaign builds one device per case: construction plus a context, queue and program must stay cheap.
void BM_DeviceSetUp(benchmark::State& state) {
  std::uint64_t seed = 0;
  for (auto _ : state) {
    quiesce::sim::Config config;
    config.seed = ++seed;
    quiesce::sim::Device device(config);
    quiesce::Context context = std::move(device.create_context(quiesce::ContextDesc{})).value();
    quiesce::Queue queue = std::move(device.create_queue(context, quiesce::QueueDesc{})).value();
    benchmark::DoNotOptimize(queue.id());
  }
}
BENCHMARK(BM_DeviceSetUp);

}  // namespace
