// The fault injector's overhead over the bare simulator, under the built-in plans none, default and all,
// measured in one run; the ratios to BM_BareSimulator are printed at the end.
//
// Each iteration is the five backend operations of stack_bench.cc on a warm device: submit a one-command
// batch, poll its event, run the device until idle, poll again, destroy the event. items_per_second counts
// those operations. Under default and all the injector lies, so the loop takes every answer the contract
// allows: a rejected submit has no event to poll, a rejected destroy is retried next iteration, an
// indeterminate one consumed the event, a device loss discards the context and opens a new one. Every 4,096
// iterations, outside the timing, every variant (the bare simulator too) discards its context and opens a
// new one, so neither the injector's limbo of unreleased handles nor the simulator's tables grow with the
// iteration count. Counters: faults injected and contexts lost per iteration.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "quiesce/core/transaction.h"
#include "quiesce/faults/injector.h"
#include "quiesce/faults/plan.h"
#include "quiesce/sim/device.h"
#include "ratio_reporter.h"

namespace quiesce {
namespace {

constexpr std::uint64_t kIterationsPerContext = 4096;
constexpr std::uint32_t kSetupAttemptsMax = 64;

// One context with one queue and one buffer, opened through `backend` (faults may refuse any step: retried).
template <class B>
struct Session {
  Context context;
  Queue queue;
  BufferRef target;
  std::vector<Buffer> buffers;
  std::vector<Event> to_destroy;  // events whose destroy was rejected: retried next iteration

  bool open(B& backend) {
    for (std::uint32_t attempt = 0; attempt < kSetupAttemptsMax; ++attempt) {
      if (try_open(backend)) return true;
      close(backend);
    }
    return false;
  }

  bool try_open(B& backend) {
    Result<Context> created = backend.create_context(ContextDesc{});
    if (!created.ok()) return false;
    context = std::move(created).value();
    Result<Queue> made = backend.create_queue(context, QueueDesc{});
    if (!made.ok()) return false;
    queue = std::move(made).value();
    MemoryBudget budget(1ULL << 30U);
    ResourceTransaction<B> transaction(backend, context, budget, 1);
    Result<BufferRef> allocated = transaction.allocate(BufferDesc{4096, kAllBufferUsage});
    if (!allocated.ok()) return false;
    target = allocated.value();
    buffers = transaction.commit();
    return !buffers.empty();
  }

  // Discards the context: every handle of it is consumed, whatever the backend answers.
  void close(B& backend) {
    if (context.valid()) (void)backend.discard_context(std::move(context));
    queue = Queue{};
    buffers.clear();
    to_destroy.clear();
  }
};

bool lost(const Error& error) { return error.kind == ErrorKind::DeviceLost; }

template <class B>
void run_loop(benchmark::State& state, B& backend, sim::Device& device) {
  Session<B> session;
  if (!session.open(backend)) {
    state.SkipWithError("no context could be opened in 64 attempts.");
    return;
  }
  std::uint64_t operations = 0;
  std::uint64_t contexts_lost = 0;
  std::uint64_t iteration = 0;
  for (auto _ : state) {
    bool context_lost = false;
    const Command zero = Command::zero(session.target, 0, 4096);
    SubmitResult submitted = backend.submit(session.queue, Batch(&zero, 1), SubmitOptions{});
    context_lost = context_lost || (submitted.status != SubmitStatus::Submitted && lost(submitted.error));
    if (submitted.event.valid()) {
      const Observation first = backend.poll_event(submitted.event);
      benchmark::DoNotOptimize(first.state);
      device.run_until_idle(1024);
      const Observation second = backend.poll_event(submitted.event);
      context_lost = context_lost || (second.state == EventState::Indeterminate && lost(second.error));
      session.to_destroy.push_back(std::move(submitted.event));
    } else {
      device.run_until_idle(1024);
    }
    // Rejected destroys keep their place at the front; the vector keeps its capacity (no allocation).
    std::size_t kept = 0;
    for (Event& event : session.to_destroy) {
      ReleaseResult<Event> released = backend.destroy_event(std::move(event));
      if (released.status == ReleaseStatus::Rejected) session.to_destroy[kept++] = std::move(released.handle);
      context_lost = context_lost || (released.status != ReleaseStatus::Released && lost(released.error));
    }
    session.to_destroy.resize(kept);
    operations += 5;
    if (context_lost || ++iteration % kIterationsPerContext == 0) {
      state.PauseTiming();
      contexts_lost += context_lost ? 1 : 0;
      session.close(backend);
      const bool opened = session.open(backend);
      state.ResumeTiming();
      if (!opened) {
        state.SkipWithError("no context could be reopened in 64 attempts.");
        break;
      }
    }
  }
  session.close(backend);
  state.SetItemsProcessed(static_cast<std::int64_t>(operations));
  state.counters["contexts_lost"] = benchmark::Counter(static_cast<double>(contexts_lost), benchmark::Counter::kAvgIterations);
}

void BM_BareSimulator(benchmark::State& state) {
  sim::Device device;
  run_loop(state, device, device);
}
BENCHMARK(BM_BareSimulator);

void BM_Injector(benchmark::State& state, const char* plan_name) {
  std::optional<faults::Plan> plan = faults::builtin_plan(plan_name);
  if (!plan) {
    state.SkipWithError("no built-in plan of that name.");
    return;
  }
  sim::Device device;
  faults::Injector<sim::Device> injector(device, *plan, 1);
  run_loop(state, injector, device);
  state.counters["faults_injected"] =
      benchmark::Counter(static_cast<double>(injector.injected().size()), benchmark::Counter::kAvgIterations);
}
BENCHMARK_CAPTURE(BM_Injector, none, "none");
BENCHMARK_CAPTURE(BM_Injector, default, "default");
BENCHMARK_CAPTURE(BM_Injector, all, "all");

}  // namespace
}  // namespace quiesce

int main(int argc, char** argv) {
  return quiesce::bench::run_with_ratios(argc, argv,
                                         {{"BM_Injector/none", "BM_BareSimulator"},
                                          {"BM_Injector/default", "BM_BareSimulator"},
                                          {"BM_Injector/all", "BM_BareSimulator"}});
}
