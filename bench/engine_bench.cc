// The engine's own host cost per submit: Engine::submit of a batch of launches over sim::Device against
// sim::Device::submit of the same launches, in one run. Both sides retire their work outside the timed
// region every kRetireEvery submissions, the simulator's queue depth (sim::Config::queue_depth_max: one
// more batch would wait for admission), the engine by sync, the bare side by running the device and
// destroying its events, as bench/cuda_bench.cc does on a GPU every 512. The difference is what the engine
// adds; the GPU's own figures are in docs/hil/.
#include <benchmark/benchmark.h>

#include <array>
#include <vector>

#include "quiesce/core/engine.h"
#include "quiesce/core/transaction.h"
#include "quiesce/sim/device.h"
#include "ratio_reporter.h"

namespace quiesce {
namespace {

constexpr std::uint64_t kBytes = 64;
constexpr std::size_t kRetireEvery = 8;
const std::array<std::byte, 4> kValue = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};

void BM_BareSubmit(benchmark::State& state) {
  sim::Device device;
  Context context = std::move(device.create_context(ContextDesc{}).value());
  Queue queue = std::move(device.create_queue(context, QueueDesc{}).value());
  MemoryBudget budget(1ULL << 30U);
  ResourceTransaction<sim::Device> transaction(device, context, budget, 1);
  const BufferRef target = transaction.allocate(BufferDesc{kBytes, kAllBufferUsage}).value();
  std::vector<Buffer> buffers = transaction.commit();
  Program fill = std::move(device.load_program(context, ArtifactRef{"fill", ArtifactFormat::Builtin, {}, 4096}).value());
  const std::array<Binding, 1> binding = {Binding{target, Access::Write}};
  const std::vector<Command> batch(static_cast<std::size_t>(state.range(0)),
                                   Command::launch(fill.ref(), LaunchDims{}, binding, kValue));
  std::vector<Event> events;
  events.reserve(kRetireEvery);
  // Invocation ids as the engine gives them: the simulator's oracle tracks each one (R4) on both sides.
  std::uint64_t invocation = 0;
  for (auto _ : state) {
    SubmitResult submitted = device.submit(queue, Batch(batch), SubmitOptions{0, false, ++invocation});
    if (submitted.status != SubmitStatus::Submitted) {
      state.SkipWithError("submit was not accepted");
      break;
    }
    events.push_back(std::move(submitted.event));
    if (events.size() == kRetireEvery) {
      state.PauseTiming();
      device.run_until_idle(1U << 20U);
      for (Event& event : events) (void)device.destroy_event(std::move(event));
      events.clear();
      state.ResumeTiming();
    }
  }
  device.run_until_idle(1U << 20U);
  for (Event& event : events) (void)device.destroy_event(std::move(event));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BareSubmit)->Arg(1)->Arg(16);

void engine_submit(benchmark::State& state, SubmitProgress progress) {
  sim::Device device;
  RealEnv env;
  EngineOptions options;
  options.queue_count = 1;
  options.memory_budget_bytes = 64ULL << 20U;
  options.submit_progress = progress;
  Engine<sim::Device, RealEnv> engine(device, env, options);
  if (!engine.open().ok()) {
    state.SkipWithError("the engine did not open");
    return;
  }
  const BufferId buffer = engine.create_buffer(BufferRequest{kBytes, kAllBufferUsage}).value();
  const ProgramId fill = engine.load_program(ArtifactRef{"fill", ArtifactFormat::Builtin, {}, 4096}).value();
  const std::array<EngineBinding, 1> binding = {EngineBinding{buffer, Access::Write}};
  const std::vector<EngineOp> batch(static_cast<std::size_t>(state.range(0)),
                                    EngineOp::launch(fill, LaunchDims{}, binding, kValue));
  std::uint64_t submissions = 0;
  for (auto _ : state) {
    if (!engine.submit(0, batch).ok()) {
      state.SkipWithError("engine submit failed");
      break;
    }
    if (++submissions % kRetireEvery == 0) {
      state.PauseTiming();
      device.run_until_idle(1U << 20U);
      (void)engine.sync(1'000'000'000);
      state.ResumeTiming();
    }
  }
  device.run_until_idle(1U << 20U);
  (void)engine.sync(1'000'000'000);
  (void)engine.shutdown(1'000'000'000);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
void BM_EngineSubmit(benchmark::State& state) { engine_submit(state, SubmitProgress::EverySubmit); }
void BM_EngineSubmitWhenNeeded(benchmark::State& state) { engine_submit(state, SubmitProgress::WhenNeeded); }
BENCHMARK(BM_EngineSubmit)->Arg(1)->Arg(16);
BENCHMARK(BM_EngineSubmitWhenNeeded)->Arg(1)->Arg(16);

}  // namespace
}  // namespace quiesce

int main(int argc, char** argv) {
  return quiesce::bench::run_with_ratios(argc, argv,
                                         {{"BM_EngineSubmit/1", "BM_BareSubmit/1"},
                                          {"BM_EngineSubmitWhenNeeded/1", "BM_BareSubmit/1"},
                                          {"BM_EngineSubmit/16", "BM_BareSubmit/16"},
                                          {"BM_EngineSubmitWhenNeeded/16", "BM_BareSubmit/16"}});
}
