// The simulator's predicted time against the GPU's measured time, per command class.
//
// time_command_classes() runs one fixed probe per command class through the Backend concept and times it
// end to end with the clock it is given: on cuda::Device the host steady clock (a measurement), on
// sim::Device loaded with the calibrated cost profile the virtual clock (the prediction). The same code
// drives both, so a difference is the simulator's cost model, not the probe. Each probe runs once to warm
// up, then kRepeats times; the figure is the median, divided by the commands the probe issues. Times are
// what a caller of the contract sees: a batch's figure includes its submit, the event record and the wait.
//
// prediction_report() pairs the two lists and prints, per class, predicted, measured and the error
// (predicted / measured - 1, in per cent, integer arithmetic).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <ostream>
#include <string>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/core/transaction.h"

namespace quiesce::cuda {

struct ClassTiming {
  std::string command_class;  // "launch", "copy H->D", ...
  std::string probe;          // what was timed
  std::uint64_t ns = 0;       // per command, median of the repeats
  std::string failure;        // not empty: the probe could not run (the figure is meaningless)
};

namespace prediction_detail {

inline constexpr int kRepeats = 7;
inline constexpr std::uint64_t kWaitNs = 30'000'000'000ULL;
inline constexpr std::uint64_t kSmall = 4096;
inline constexpr std::uint64_t kLarge = 16ULL << 20U;
inline constexpr std::uint64_t kTransfer = 1ULL << 20U;
inline constexpr std::uint64_t kUpload = 64ULL << 10U;
inline constexpr std::uint32_t kLaunchBatch = 64;
inline constexpr std::uint32_t kGraphNodes = 64;  // one batch: the simulator allows 64 commands
inline constexpr std::uint32_t kPolls = 1000;
inline constexpr std::uint64_t kDelayNs = 20'000'000;

template <Backend B, class Now>
class Prober {
 public:
  Prober(B& device, Now now) : device_(device), now_(now) {}

  std::vector<ClassTiming> run() {
    std::vector<ClassTiming> out;
    std::string failure = setup();
    const auto add = [&](std::string name, std::string probe, std::uint64_t divisor, auto&& body) {
      ClassTiming timing{std::move(name), std::move(probe), 0, failure};
      if (failure.empty()) {
        std::array<std::uint64_t, kRepeats> samples{};
        bool ok = body();  // warm-up
        for (std::uint64_t& sample : samples) {
          const std::uint64_t begin = now_();
          ok = body() && ok;
          sample = now_() - begin;
        }
        std::sort(samples.begin(), samples.end());
        timing.ns = samples[kRepeats / 2] / divisor;
        if (!ok) timing.failure = "the probe's work failed";
      }
      out.push_back(std::move(timing));
    };
    // A probe that times part of its own work (the rest sets up or cleans up): nullopt when it failed.
    const auto add_self_timed = [&](std::string name, std::string probe, std::uint64_t divisor, auto&& body) {
      ClassTiming timing{std::move(name), std::move(probe), 0, failure};
      if (failure.empty()) {
        std::array<std::uint64_t, kRepeats> samples{};
        bool ok = body().has_value();  // warm-up
        for (std::uint64_t& sample : samples) {
          const std::optional<std::uint64_t> elapsed = body();
          ok = ok && elapsed.has_value();
          sample = elapsed.value_or(0);
        }
        std::sort(samples.begin(), samples.end());
        timing.ns = samples[kRepeats / 2] / divisor;
        if (!ok) timing.failure = "the probe's work failed";
      }
      out.push_back(std::move(timing));
    };
    add("launch", "a batch of 64 fill launches over 4 KiB, submitted and waited; per launch", kLaunchBatch,
        [&] { return submit_wait(launches(kLaunchBatch, small_)); });
    add("batch round trip", "one 4 KiB fill launch: submit (one event record) and wait", 1,
        [&] { return submit_wait(launches(1, small_)); });
    add("kernel 16 MiB", "one fill launch over 16 MiB (1,024 blocks of 256), submitted and waited", 1,
        [&] { return submit_wait(launches(1, large_a_, 1024)); });
    add("copy H->D", "write_buffer of 1 MiB from pageable memory", 1, [&] {
      const std::array<std::span<const std::byte>, 1> segments = {std::span<const std::byte>(host_)};
      return device_.write_buffer(transfer_, 0, ByteSource{segments}).ok();
    });
    add("copy D->H", "read_buffer of 1 MiB into pageable memory", 1, [&] {
      const std::array<std::span<std::byte>, 1> segments = {std::span<std::byte>(host_)};
      return device_.read_buffer(transfer_, 0, ByteSink{segments}).ok();
    });
    add("copy D->D", "one Copy command of 16 MiB, submitted and waited", 1,
        [&] { return submit_wait({Command::copy(large_a_.ref(), 0, large_b_.ref(), 0, kLarge)}); });
    add("upload", "one Upload command of 64 KiB, submitted and waited", 1, [&] {
      return submit_wait({Command::upload(std::span<const std::byte>(host_).first(kUpload), transfer_.ref(), 0)});
    });
    add("zero", "one Zero command of 16 MiB, submitted and waited", 1,
        [&] { return submit_wait({Command::zero(large_b_.ref(), 0, kLarge)}); });
    add_self_timed("event poll (pending)",
                   "poll_event of a batch still running (a 20 ms delay kernel), 1,000 times; per poll", kPolls, [&] {
                     const std::array<std::byte, 8> delay = little_endian(kDelayNs);
                     const std::array<Command, 1> batch = {Command::launch(delay_.ref(), LaunchDims{}, {}, delay)};
                     SubmitResult submitted = device_.submit(queue_, batch, {});
                     if (submitted.status != SubmitStatus::Submitted) return std::optional<std::uint64_t>{};
                     bool pending = true;
                     const std::uint64_t begin = now_();
                     for (std::uint32_t index = 0; index < kPolls; ++index) {
                       pending = device_.poll_event(submitted.event).state == EventState::Pending && pending;
                     }
                     const std::uint64_t elapsed = now_() - begin;
                     const WaitResult waited = device_.wait_event(submitted.event, kWaitNs);
                     (void)device_.destroy_event(std::move(submitted.event));
                     if (!pending || !waited.ok()) return std::optional<std::uint64_t>{};
                     return std::optional<std::uint64_t>{elapsed};
                   });
    add("event poll (terminal)", "poll_event of a batch already seen complete, 1,000 times; per poll", kPolls, [&] {
      bool ok = true;
      for (std::uint32_t index = 0; index < kPolls; ++index) {
        ok = device_.poll_event(completed_).state == EventState::Complete && ok;
      }
      return ok;
    });
    add("allocation", "allocate_buffer of 1 MiB (through a resource transaction)", 1, [&] {
      ResourceTransaction<B> transaction(device_, context_, budget_, 1);
      if (!transaction.allocate(BufferDesc{kTransfer, kAllBufferUsage}).ok()) return false;
      spare_.push_back(std::move(transaction.commit().front()));
      return true;
    });
    add("free", "free_buffer of 1 MiB", 1, [&] {
      if (spare_.empty()) return false;
      Buffer buffer = std::move(spare_.back());
      spare_.pop_back();
      return device_.free_buffer(std::move(buffer)).status == ReleaseStatus::Released;
    });
    add("graph replay", "replay of a captured graph of 64 4 KiB fills, submitted and waited; per node", kGraphNodes,
        [&] { return graph_.valid() && submit_wait({Command::replay(graph_.ref())}); });
    teardown();
    return out;
  }

 private:
  std::string setup() {
    auto context = device_.create_context(ContextDesc{});
    if (!context.ok()) return "create_context failed";
    context_ = std::move(context).value();
    auto queue = device_.create_queue(context_, QueueDesc{});
    auto fill = device_.load_program(context_, ArtifactRef{"fill", ArtifactFormat::Builtin, {}, 1U << 20});
    auto delay = device_.load_program(context_, ArtifactRef{"delay", ArtifactFormat::Builtin, {}, 1U << 20});
    if (!queue.ok() || !fill.ok() || !delay.ok()) return "create_queue or load_program(fill, delay) failed";
    queue_ = std::move(queue).value();
    fill_ = std::move(fill).value();
    delay_ = std::move(delay).value();
    small_ = allocate(kSmall);
    transfer_ = allocate(kTransfer);
    large_a_ = allocate(kLarge);
    large_b_ = allocate(kLarge);
    if (!small_.valid() || !transfer_.valid() || !large_a_.valid() || !large_b_.valid()) return "allocation failed";
    host_.assign(kTransfer, std::byte{0x5A});
    SubmitResult first = device_.submit(queue_, launches(1, small_), {});
    if (first.status != SubmitStatus::Submitted || !device_.wait_event(first.event, kWaitNs).ok()) {
      return "the first launch did not complete";
    }
    completed_ = std::move(first.event);
    if (!device_.begin_capture(queue_).ok()) return "begin_capture failed";
    const Status captured = device_.capture(queue_, launches(kGraphNodes, small_));
    Result<Executable> executable = device_.end_capture(queue_);
    if (!captured.ok() || !executable.ok()) return "capturing the graph failed";
    graph_ = std::move(executable).value();
    return {};
  }

  void teardown() {
    (void)device_.synchronize(queue_, kWaitNs);
    if (completed_.valid()) (void)device_.destroy_event(std::move(completed_));
    if (graph_.valid()) (void)device_.destroy_executable(std::move(graph_));
    for (Buffer* buffer : {&small_, &transfer_, &large_a_, &large_b_}) {
      if (buffer->valid()) (void)device_.free_buffer(std::move(*buffer));
    }
    for (Buffer& buffer : spare_) (void)device_.free_buffer(std::move(buffer));
    spare_.clear();
    if (fill_.valid()) (void)device_.unload_program(std::move(fill_));
    if (delay_.valid()) (void)device_.unload_program(std::move(delay_));
    if (queue_.valid()) (void)device_.destroy_queue(std::move(queue_));
    if (context_.valid()) (void)device_.destroy_context(std::move(context_));
  }

  Buffer allocate(std::uint64_t bytes) {
    ResourceTransaction<B> transaction(device_, context_, budget_, 1);
    if (!transaction.allocate(BufferDesc{bytes, kAllBufferUsage}).ok()) return Buffer{};
    return std::move(transaction.commit().front());
  }

  std::vector<Command> launches(std::uint32_t count, const Buffer& target, std::uint32_t grid = 4) {
    bindings_ = {Binding{target.ref(), Access::Write}};
    LaunchDims dims;
    dims.grid_x = grid;
    dims.block_x = 256;
    return std::vector<Command>(count, Command::launch(fill_.ref(), dims, bindings_, kValue));
  }

  bool submit_wait(const std::vector<Command>& batch) {
    SubmitResult submitted = device_.submit(queue_, batch, {});
    if (submitted.status != SubmitStatus::Submitted) return false;
    const WaitResult waited = device_.wait_event(submitted.event, kWaitNs);
    const bool ok = waited.ok() && waited->state == EventState::Complete;
    (void)device_.destroy_event(std::move(submitted.event));
    return ok;
  }

  static std::array<std::byte, 8> little_endian(std::uint64_t value) {
    std::array<std::byte, 8> bytes{};
    for (std::size_t index = 0; index < bytes.size(); ++index) bytes[index] = static_cast<std::byte>(value >> (8 * index));
    return bytes;
  }

  static constexpr std::array<std::byte, 4> kValue = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};

  B& device_;
  Now now_;
  MemoryBudget budget_{std::uint64_t{1} << 40};
  Context context_;
  Queue queue_;
  Program fill_;
  Program delay_;
  Buffer small_;
  Buffer transfer_;
  Buffer large_a_;
  Buffer large_b_;
  std::vector<Buffer> spare_;
  Event completed_;
  Executable graph_;
  std::array<Binding, 1> bindings_{};
  std::vector<std::byte> host_;
};

}  // namespace prediction_detail

// One probe per command class on `device`, timed with `now()` (nanoseconds, monotonic).
template <Backend B, class Now>
std::vector<ClassTiming> time_command_classes(B& device, Now now) {
  return prediction_detail::Prober<B, Now>(device, now).run();
}

// Per class: predicted (the simulator), measured (the GPU) and the error. Returns the largest absolute
// error in per cent over the classes both sides timed (0 when none).
inline std::uint64_t prediction_report(const std::vector<ClassTiming>& predicted, const std::vector<ClassTiming>& measured,
                                       std::ostream& out) {
  std::uint64_t worst = 0;
  out << "   class              predicted ns    measured ns   error   probe\n";
  for (const ClassTiming& gpu : measured) {
    const ClassTiming* sim = nullptr;
    for (const ClassTiming& candidate : predicted) {
      if (candidate.command_class == gpu.command_class) sim = &candidate;
    }
    std::string name = gpu.command_class;
    name.resize(std::max<std::size_t>(name.size(), 18), ' ');
    out << "   " << name << ' ';
    if (sim == nullptr || !sim->failure.empty() || !gpu.failure.empty() || gpu.ns == 0) {
      out << "not compared: " << (sim == nullptr ? "no prediction" : !sim->failure.empty() ? sim->failure : gpu.failure)
          << '\n';
      continue;
    }
    // error = predicted / measured - 1, in whole per cent, rounded toward zero.
    const bool over = sim->ns >= gpu.ns;
    const std::uint64_t difference = over ? sim->ns - gpu.ns : gpu.ns - sim->ns;
    const std::uint64_t percent = difference * 100 / gpu.ns;
    worst = std::max(worst, percent);
    std::string predicted_text = std::to_string(sim->ns);
    std::string measured_text = std::to_string(gpu.ns);
    std::string error_text = (over ? "+" : "-") + std::to_string(percent) + "%";
    predicted_text.insert(0, predicted_text.size() < 12 ? 12 - predicted_text.size() : 0, ' ');
    measured_text.insert(0, measured_text.size() < 14 ? 14 - measured_text.size() : 0, ' ');
    error_text.insert(0, error_text.size() < 8 ? 8 - error_text.size() : 0, ' ');
    out << predicted_text << ' ' << measured_text << ' ' << error_text << "   " << gpu.probe << '\n';
  }
  return worst;
}

}  // namespace quiesce::cuda
