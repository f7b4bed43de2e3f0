// The simulator against a sequential host model: seeded workloads of kernels, copies, uploads, zeros, host
// writes and replays of a captured graph spread over three queues, each command ordered only behind the events of the
// buffers it touches (as a runtime would order them). Whatever the interleaving on the engines, the bytes
// must equal the model that applies every operation in submission order, and the oracle must stay silent.
#include <gtest/gtest.h>

#include <deque>
#include <optional>

#include "sim_test_support.h"

namespace quiesce::sim {
namespace {

using testing::Harness;

constexpr std::size_t kBuffers = 6;
constexpr std::size_t kQueues = 3;

class DifferentialRun {
 public:
  explicit DifferentialRun(std::uint64_t seed) : h_(config_for(seed)), prng_(seed * 7919 + 1) {
    for (const char* name : {"fill", "copy", "saxpy", "checksum"}) programs_.push_back(h_.load(name));
    for (std::size_t index = 0; index < kBuffers; ++index) {
      const std::uint64_t bytes = 8 + 4 * prng_.below(64) + prng_.below(4);
      buffers_.push_back(h_.allocate(bytes));
      model_.emplace_back(bytes);
      for (std::byte& byte : model_.back()) byte = static_cast<std::byte>(prng_.below(256));
      h_.write(buffers_.back(), model_.back());
    }
    for (std::size_t index = 0; index < kQueues; ++index) queues_.push_back(h_.queue());
    last_.resize(kBuffers);
    capture_graph();
  }

  void run(std::size_t operations) {
    for (std::size_t step = 0; step < operations; ++step) {
      const std::uint64_t pick = prng_.below(11);
      if (pick == 0) {
        host_write();
      } else if (pick == 10) {
        replay();
      } else {
        device_op(pick);
      }
    }
    for (const Queue& queue : queues_) ASSERT_TRUE(h_.device.synchronize(queue, UINT64_MAX / 2).ok());
    for (std::size_t index = 0; index < kBuffers; ++index) {
      EXPECT_EQ(h_.read(buffers_[index], model_[index].size()), model_[index]) << "buffer " << index;
    }
    EXPECT_TRUE(h_.device.findings().empty()) << h_.device.findings().front().message;
  }

 private:
  static Config config_for(std::uint64_t seed) {
    Config config = testing::exact_config(seed);
    config.cost_jitter = Ratio{1, 2};
    config.host_costs = true;
    config.execution_engines = 2;
    config.copy_engines = 1;
    return config;
  }

  // A graph of two nodes: fill buffer 0 with a word, then copy its first bytes into buffer 1.
  void capture_graph() {
    graph_value_ = {std::byte{0x5A}, std::byte{0x01}, std::byte{0xC3}, std::byte{0x7E}};
    graph_copy_bytes_ = std::min(model_[0].size(), model_[1].size());
    graph_bindings_[0] = Binding{buffers_[0].ref(), Access::Write};
    const Command nodes[] = {Command::launch(programs_[0].ref(), {}, {graph_bindings_, 1}, graph_value_),
                             Command::copy(buffers_[0].ref(), 0, buffers_[1].ref(), 0, graph_copy_bytes_)};
    ASSERT_TRUE(h_.device.begin_capture(queues_[0]).ok());
    ASSERT_TRUE(h_.device.capture(queues_[0], nodes).ok());
    Result<Executable> executable = h_.device.end_capture(queues_[0]);
    ASSERT_TRUE(executable.ok());
    graph_ = std::move(executable).value();
  }

  void replay() {
    std::vector<Command> commands{Command::replay(graph_.ref())};
    std::vector<std::span<std::byte>> spans{model_[0]};
    (void)run_kernel(BuiltinKernel::Fill, spans, graph_value_);
    std::copy_n(model_[0].begin(), graph_copy_bytes_, model_[1].begin());
    submit(commands, {0, 1});
  }

  // A host write first waits for every event that touches the buffer, as a runtime's read or write would.
  void host_write() {
    const std::size_t target = prng_.below(kBuffers);
    for (const Event& event : last_[target]) ASSERT_TRUE(h_.device.wait_event(event, UINT64_MAX / 2).ok());
    last_[target].clear();
    std::vector<std::byte> bytes(model_[target].size());
    for (std::byte& byte : bytes) byte = static_cast<std::byte>(prng_.below(256));
    h_.write(buffers_[target], bytes);
    model_[target] = bytes;
  }

  void device_op(std::uint64_t pick) {
    const std::size_t a = prng_.below(kBuffers);
    std::size_t b = prng_.below(kBuffers - 1);
    if (b >= a) ++b;
    std::vector<std::byte> params(4);
    for (std::byte& byte : params) byte = static_cast<std::byte>(prng_.below(256));
    Binding bindings[2];
    std::vector<Command> commands;
    std::vector<std::size_t> touched;
    if (pick <= 4) {
      const std::size_t kernel = pick - 1;  // fill, copy, saxpy, checksum
      if (kernel == 3 && model_[b].size() < 8) return;
      const bool two = kernel != 0;
      bindings[0] = Binding{buffers_[a].ref(), kernel == 0 ? Access::Write : Access::Read};
      bindings[1] = Binding{buffers_[b].ref(), kernel == 2 ? Access::ReadWrite : Access::Write};
      const std::span<const std::byte> parameters =
          kernel == 0 || kernel == 2 ? std::span<const std::byte>(params) : std::span<const std::byte>();
      commands.push_back(Command::launch(programs_[kernel].ref(), {}, {bindings, two ? 2U : 1U}, parameters));
      touched = two ? std::vector<std::size_t>{a, b} : std::vector<std::size_t>{a};
      std::vector<std::span<std::byte>> spans;
      for (const std::size_t index : touched) spans.emplace_back(model_[index]);
      (void)run_kernel(static_cast<BuiltinKernel>(kernel), spans, parameters);
    } else {
      const std::uint64_t bytes = prng_.range(1, std::min(model_[a].size(), model_[b].size()));
      const std::uint64_t source_offset = prng_.below(model_[a].size() - bytes + 1);
      const std::uint64_t target_offset = prng_.below(model_[b].size() - bytes + 1);
      if (pick <= 6) {
        commands.push_back(Command::copy(buffers_[a].ref(), source_offset, buffers_[b].ref(), target_offset, bytes));
        std::copy_n(model_[a].begin() + static_cast<std::ptrdiff_t>(source_offset), bytes,
                    model_[b].begin() + static_cast<std::ptrdiff_t>(target_offset));
        touched = {a, b};
      } else if (pick <= 8) {
        uploads_.emplace_back(bytes);
        for (std::byte& byte : uploads_.back()) byte = static_cast<std::byte>(prng_.below(256));
        commands.push_back(Command::upload(uploads_.back(), buffers_[b].ref(), target_offset));
        std::copy_n(uploads_.back().begin(), bytes, model_[b].begin() + static_cast<std::ptrdiff_t>(target_offset));
        touched = {b};
      } else {
        commands.push_back(Command::zero(buffers_[b].ref(), target_offset, bytes));
        std::fill_n(model_[b].begin() + static_cast<std::ptrdiff_t>(target_offset), bytes, std::byte{0});
        touched = {b};
      }
    }
    submit(commands, touched);
  }

  // Orders the command behind every earlier event of the buffers it touches, then records its event.
  void submit(std::vector<Command>& commands, const std::vector<std::size_t>& touched) {
    std::vector<Command> batch;
    for (const std::size_t index : touched) {
      for (const Event& event : last_[index]) batch.push_back(Command::wait(event.ref()));
    }
    batch.insert(batch.end(), commands.begin(), commands.end());
    if (batch.size() > h_.device.config().batch_commands_max) {
      for (const std::size_t index : touched) {
        for (const Event& event : last_[index]) ASSERT_TRUE(h_.device.wait_event(event, UINT64_MAX / 2).ok());
        last_[index].clear();
      }
      batch = commands;
    }
    const Queue& queue = queues_[prng_.below(kQueues)];
    SubmitResult result = h_.device.submit(queue, batch, SubmitOptions{UINT64_MAX / 2, false, 0});
    ASSERT_EQ(result.status, SubmitStatus::Submitted) << h_.device.describe_error(result.error);
    events_.push_back(std::move(result.event));
    for (const std::size_t index : touched) {
      last_[index].clear();
      last_[index].push_back(Event(events_.back().id(), events_.back().epoch()));
    }
  }

  Harness h_;
  Prng prng_;
  std::vector<Program> programs_;
  std::vector<Buffer> buffers_;
  std::vector<std::vector<std::byte>> model_;
  std::vector<Queue> queues_;
  std::vector<std::vector<Event>> last_;  // per buffer: the event of its last command (copies of handles)
  std::vector<Event> events_;
  std::deque<std::vector<std::byte>> uploads_;
  Executable graph_;
  std::vector<std::byte> graph_value_;
  std::uint64_t graph_copy_bytes_ = 0;
  Binding graph_bindings_[1];
};

TEST(Differential, SeededWorkloadsMatchTheSequentialModel) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    DifferentialRun run(seed);
    run.run(300);
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace quiesce::sim
