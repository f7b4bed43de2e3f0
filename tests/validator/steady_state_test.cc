// The validator allocates nothing per call in the steady state: after a warm-up that fills its tables and
// its window of remembered releases, a loop of submit / poll / wait / destroy_event / read / write through
// Validator<NullBackend> performs zero heap allocations. NullBackend allocates nothing itself, so every
// allocation counted here would be the validator's. This executable replaces the global operator new to
// count, which is why it is separate from validator_test.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <new>

#include "quiesce/core/transaction.h"
#include "quiesce/core/validator.h"

namespace {

std::uint64_t allocations = 0;  // this test binary's own counter: single-threaded, read only by the test

}  // namespace

void* operator new(std::size_t bytes) {
  ++allocations;
  if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

namespace quiesce::testing {
namespace {

// Every call succeeds at once; ids are spread like the simulator's (generation << 32 | slot).
class NullBackend {
 public:
  Result<DeviceInfo> device_info() { return DeviceInfo{}; }
  std::string describe_error(const Error& error) const { return quiesce::describe_error(error); }
  Result<Context> create_context(ContextDesc) { return Context(next(), 1); }
  ReleaseResult<Context> destroy_context(Context&&) { return ReleaseResult<Context>::released(); }
  Status discard_context(Context&&) { return ok_status(); }
  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit&) { return Buffer(next(), context.epoch()); }
  Result<BufferInfo> buffer_info(const Buffer&) { return BufferInfo{}; }
  Status write_buffer(Buffer&, std::uint64_t, ByteSource) { return ok_status(); }
  Status read_buffer(const Buffer&, std::uint64_t, ByteSink sink) {
    for (const auto& segment : sink.segments) {
      for (std::byte& byte : segment) byte = std::byte{0};
    }
    return ok_status();
  }
  ReleaseResult<Buffer> free_buffer(Buffer&&) { return ReleaseResult<Buffer>::released(); }
  Result<Program> load_program(const Context& context, const ArtifactRef&) { return Program(next(), context.epoch()); }
  ReleaseResult<Program> unload_program(Program&&) { return ReleaseResult<Program>::released(); }
  Result<Queue> create_queue(const Context& context, QueueDesc) { return Queue(next(), context.epoch()); }
  ReleaseResult<Queue> destroy_queue(Queue&&) { return ReleaseResult<Queue>::released(); }
  QueueState queue_state(const Queue&) { return QueueState{}; }
  SubmitResult submit(const Queue& queue, Batch batch, SubmitOptions) {
    return SubmitResult::submitted(Event(next(), queue.epoch()), static_cast<std::uint32_t>(batch.size()));
  }
  Status synchronize(const Queue&, std::uint64_t) { return ok_status(); }
  Observation poll_event(const Event&) { return Observation{EventState::Complete, {}, std::nullopt}; }
  WaitResult wait_event(const Event&, std::uint64_t) { return Receipt{}; }
  Status cancel_event(const Event&) { return make_error(ErrorKind::Busy, "completion won"); }
  ReleaseResult<Event> destroy_event(Event&&) { return ReleaseResult<Event>::released(); }
  Status begin_capture(const Queue&) { return ok_status(); }
  Status capture(const Queue&, Batch) { return ok_status(); }
  Result<Executable> end_capture(const Queue& queue) { return Executable(next(), queue.epoch()); }
  ReleaseResult<Executable> destroy_executable(Executable&&) { return ReleaseResult<Executable>::released(); }
  Result<MemoryUsage> memory_usage(const Context&) { return MemoryUsage{}; }
  Result<MemoryReport> memory_report(const Context&) { return MemoryReport{}; }
  Status install_pools(const Context&, const PoolLayout&) { return ok_status(); }
  Status memory_cleanup(const Context&) { return ok_status(); }

 private:
  std::uint64_t next() {
    ++counter_;
    return (counter_ << 32U) | (counter_ & 0xFFU);
  }
  std::uint64_t counter_ = 0;
};

static_assert(Backend<NullBackend>);

TEST(SteadyState, NoAllocationPerCallOnceWarm) {
  Validator<NullBackend> validator(ValidatorOptions{.retired_remembered_max = 4096});
  Context context = validator.create_context(ContextDesc{}).value();
  Queue queue = validator.create_queue(context, QueueDesc{}).value();
  Program program = validator.load_program(context, ArtifactRef{}).value();
  MemoryBudget budget(1U << 30);
  ResourceTransaction<Validator<NullBackend>> transaction(validator, context, budget, 1);
  ASSERT_TRUE(transaction.allocate(BufferDesc{4096, kAllBufferUsage, AllocationMode::Direct, {}}).ok());
  ASSERT_TRUE(transaction.allocate(BufferDesc{4096, kAllBufferUsage, AllocationMode::Direct, {}}).ok());
  std::vector<Buffer> buffers = transaction.commit();

  std::array<std::byte, 256> host{};
  const std::span<const std::byte> source_segment(host);
  const std::span<std::byte> sink_segment(host);
  const std::array<Binding, 2> bindings = {Binding{buffers[0].ref(), Access::Read},
                                           Binding{buffers[1].ref(), Access::ReadWrite}};
  const std::array<Command, 3> batch = {Command::upload(host, buffers[0].ref(), 0),
                                        Command::launch(program.ref(), LaunchDims{}, bindings, {}),
                                        Command::copy(buffers[1].ref(), 0, buffers[0].ref(), 0, 128)};
  auto one_round = [&](std::uint64_t round) {
    SubmitResult submitted = validator.submit(queue, batch, SubmitOptions{.invocation = round + 1});
    (void)validator.poll_event(submitted.event);
    (void)validator.wait_event(submitted.event, 1000);
    (void)validator.destroy_event(std::move(submitted.event));
    (void)validator.write_buffer(buffers[0], 0, ByteSource{std::span(&source_segment, 1)});
    (void)validator.read_buffer(buffers[1], 0, ByteSink{std::span(&sink_segment, 1)});
  };
  constexpr std::uint64_t kWarmRounds = 20'000;
  constexpr std::uint64_t kMeasuredRounds = 50'000;
  for (std::uint64_t round = 0; round < kWarmRounds; ++round) one_round(round);
  const std::uint64_t before = allocations;
  for (std::uint64_t round = kWarmRounds; round < kWarmRounds + kMeasuredRounds; ++round) one_round(round);
  const std::uint64_t counted = allocations - before;
  EXPECT_EQ(counted, 0U) << counted << " heap allocations in " << kMeasuredRounds << " rounds of 6 calls";
  EXPECT_EQ(validator.violation_count(), 0U);
  EXPECT_EQ(validator.calls(), 5 + 6 * (kWarmRounds + kMeasuredRounds)) << "every call was seen";
  // A planted allocation in the same window is counted: the harness can fail.
  const std::uint64_t planted_before = allocations;
  void* planted = ::operator new(8);  // a direct call: a compiler may not elide it as it may a new-expression
  EXPECT_EQ(allocations - planted_before, 1U);
  ::operator delete(planted);
}

}  // namespace
}  // namespace quiesce::testing
