// The cost of each layer of the stack, measured in one run so the ratios are comparable on a noisy
// machine (DESIGN §9: the full stack, Recorder<Validator<Injector<sim::Device>>>, at least 2 M operations
// per second per core and at most 2.5x the bare simulator).
//
// Each iteration is five backend operations on a warm device: submit a one-command batch, poll it, run the
// device until idle, poll it again (terminal), destroy the event. items_per_second counts backend
// operations. The injector runs the `none` plan (its bookkeeping without lies); the recorder encodes
// every call into an in-memory binary trace that is reset every 64 Ki records to bound its memory. The
// ratios of each layer to BM_BareSimulator are printed at the end of the run.
#include <benchmark/benchmark.h>

#include <memory>

#include "quiesce/core/transaction.h"
#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/sim/device.h"
#include "quiesce/traces/codec.h"
#include "quiesce/traces/recorder.h"
#include "ratio_reporter.h"

namespace quiesce {
namespace {

// Counts records and forgets them: the encoding cost is measured by the recorder's own encoder below.
class EncodingSink final : public traces::TraceSink {
 public:
  EncodingSink() { reset(); }
  void append(const traces::Record& record) override {
    writer_->append(record);
    if (++records_ == 65536) reset();
  }

 private:
  void reset() {
    writer_ = std::make_unique<traces::BinaryWriter>(traces::TraceHeader{});
    records_ = 0;
  }
  std::unique_ptr<traces::BinaryWriter> writer_;
  std::uint64_t records_ = 0;
};

template <class B>
void run_loop(benchmark::State& state, B& backend, sim::Device& device) {
  Context context = std::move(backend.create_context(ContextDesc{}).value());
  Queue queue = std::move(backend.create_queue(context, QueueDesc{}).value());
  MemoryBudget budget(1ULL << 30U);
  ResourceTransaction<B> transaction(backend, context, budget, 1);
  const BufferRef target = transaction.allocate(BufferDesc{4096, kAllBufferUsage}).value();
  std::vector<Buffer> buffers = transaction.commit();
  const Command zero = Command::zero(target, 0, 4096);
  std::uint64_t operations = 0;
  for (auto _ : state) {
    SubmitResult submitted = backend.submit(queue, Batch(&zero, 1), SubmitOptions{});
    benchmark::DoNotOptimize(backend.poll_event(submitted.event));
    device.run_until_idle(1024);
    benchmark::DoNotOptimize(backend.poll_event(submitted.event));
    ReleaseResult<Event> released = backend.destroy_event(std::move(submitted.event));
    benchmark::DoNotOptimize(released.status);
    operations += 5;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(operations));
  for (Buffer& buffer : buffers) (void)backend.free_buffer(std::move(buffer));
  (void)backend.destroy_queue(std::move(queue));
  (void)backend.destroy_context(std::move(context));
}

void BM_BareSimulator(benchmark::State& state) {
  sim::Device device;
  run_loop(state, device, device);
}
BENCHMARK(BM_BareSimulator);

void BM_Injector(benchmark::State& state) {
  sim::Device device;
  faults::Injector<sim::Device> injector(device, faults::Plan::none());
  run_loop(state, injector, device);
}
BENCHMARK(BM_Injector);

void BM_ValidatorInjector(benchmark::State& state) {
  sim::Device device;
  Validator<faults::Injector<sim::Device>> stack(ValidatorOptions{}, device, faults::Plan::none());
  run_loop(state, stack, device);
}
BENCHMARK(BM_ValidatorInjector);

void BM_FullStack(benchmark::State& state) {
  sim::Device device;
  EncodingSink sink;
  traces::Recorder<Validator<faults::Injector<sim::Device>>> stack(sink, ValidatorOptions{}, device,
                                                                   faults::Plan::none());
  run_loop(state, stack, device);
}
BENCHMARK(BM_FullStack);

}  // namespace
}  // namespace quiesce

int main(int argc, char** argv) {
  return quiesce::bench::run_with_ratios(argc, argv,
                                         {{"BM_Injector", "BM_BareSimulator"},
                                          {"BM_ValidatorInjector", "BM_BareSimulator"},
                                          {"BM_FullStack", "BM_BareSimulator"}});
}
