// A small user runtime written against the quiesce::Backend concept, the way a user would write one: it
// allocates a few buffers under a memory budget, fills them with the builtin `fill` kernel, waits, reads
// back and checks, and releases everything. It absorbs every legal fault of the contract: a Rejected submit
// is retried exactly (same invocation), an Indeterminate one is never resubmitted and its buffer stays
// retained until a terminal, an unproven fence keeps the event and its buffer, a rejected release is
// retried, an indeterminate release or a device loss ends the context by discard.
//
// `planted_bug` frees a buffer right after submitting work that writes it, before the event is terminal: the
// use-after-free on the device that R1 forbids. The campaign (main.cc) must catch it.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include <quiesce/core/backend.h>
#include <quiesce/core/prng.h>
#include <quiesce/core/transaction.h>

namespace my_runtime {

struct Options {
  std::uint32_t buffers = 4;
  std::uint32_t rounds = 40;
  std::uint64_t buffer_bytes = 1024;
  std::uint64_t wait_timeout_ns = 50'000'000;
  bool planted_bug = false;
};

template <quiesce::Backend B>
class Runtime {
 public:
  Runtime(B& backend, const Options& options) : backend_(backend), options_(options) {}

  // The safety phase with faults, then on_liveness(), then everything is released. False: data went wrong.
  bool run(std::uint64_t seed, const std::function<void()>& on_liveness) {
    quiesce::Prng prng(seed);
    if (!open()) return true;
    for (std::uint32_t round = 0; round < options_.rounds && !lost_; ++round) {
      step(prng.below(slots_.size()), static_cast<std::uint8_t>(prng.below(256)));
    }
    on_liveness();
    close();
    return data_ok_;
  }

 private:
  struct Slot {
    quiesce::Buffer buffer;
    quiesce::Event event;  // the last batch that wrote it, until destroyed
    bool held = false;     // an outcome left it unprovable: kept until the context is discarded
  };

  bool note(const quiesce::Error& error) {
    if (error.kind == quiesce::ErrorKind::DeviceLost) lost_ = true;
    return lost_;
  }

  bool open() {
    quiesce::Result<quiesce::Context> context = backend_.create_context(quiesce::ContextDesc{});
    if (!context.ok()) return false;
    context_ = std::move(context).value();
    quiesce::Result<quiesce::Queue> queue = backend_.create_queue(context_, quiesce::QueueDesc{});
    if (!queue.ok()) {
      note(queue.error());
      return false;
    }
    queue_ = std::move(queue).value();
    quiesce::ArtifactRef fill;
    fill.kernel_name = "fill";
    fill.resident_bytes = 1U << 20U;
    for (std::uint32_t attempt = 0; attempt < 4 && !program_.valid() && !lost_; ++attempt) {
      quiesce::Result<quiesce::Program> program = backend_.load_program(context_, fill);
      if (program.ok()) program_ = std::move(program).value();
      else note(program.error());
    }
    for (std::uint32_t i = 0; i < options_.buffers && !lost_; ++i) {
      quiesce::ResourceTransaction<B> transaction(backend_, context_, budget_, i + 1);
      quiesce::Result<quiesce::BufferRef> staged =
          transaction.allocate(quiesce::BufferDesc{options_.buffer_bytes, quiesce::kAllBufferUsage});
      if (!staged.ok()) {
        note(staged.error());
        continue;
      }
      slots_.push_back(Slot{std::move(transaction.commit().front()), {}, false});
    }
    return !slots_.empty() && program_.valid() && !lost_;
  }

  // Fill one buffer with `value`, wait, read back, check.
  void step(std::uint64_t index, std::uint8_t value) {
    Slot& slot = slots_[index];
    if (slot.held || !slot.buffer.valid() || !retire(slot)) return;
    const std::uint32_t word = 0x01010101U * value;
    std::array<std::byte, 4> parameters{};
    std::memcpy(parameters.data(), &word, sizeof(word));
    const std::array<quiesce::Binding, 1> bindings = {quiesce::Binding{slot.buffer.ref(), quiesce::Access::Write}};
    const std::array<quiesce::Command, 1> batch = {
        quiesce::Command::launch(program_.ref(), quiesce::LaunchDims{}, bindings, parameters)};
    quiesce::SubmitOptions submit_options;
    submit_options.invocation = ++invocations_;
    bool exact = false;
    for (std::uint32_t attempt = 0; attempt < 3 && !slot.event.valid(); ++attempt) {
      quiesce::SubmitResult result = backend_.submit(queue_, batch, submit_options);
      if (result.status == quiesce::SubmitStatus::Rejected) {
        if (note(result.error)) return;
        continue;  // nothing ran: the exact same submission may be repeated
      }
      exact = result.status == quiesce::SubmitStatus::Submitted;
      slot.event = std::move(result.event);
      if (!exact && note(result.error)) return;
    }
    if (!slot.event.valid()) return;
    if (options_.planted_bug) {  // THE PLANTED BUG: the buffer goes before its fence is terminal (R1)
      (void)backend_.free_buffer(std::move(slot.buffer));
      slot.held = true;
      return;
    }
    const quiesce::WaitResult waited = backend_.wait_event(slot.event, options_.wait_timeout_ns);
    if (!waited.ok()) {
      note(waited.error().error);
      return;  // not proven quiescent: retire() tries again next time
    }
    if (note(waited.value().error) || waited.value().state != quiesce::EventState::Complete || !exact) return;
    check(slot, value);
  }

  void check(const Slot& slot, std::uint8_t value) {
    std::vector<std::byte> data(options_.buffer_bytes);
    const std::span<std::byte> segment(data);
    const quiesce::Status status = backend_.read_buffer(slot.buffer, 0, quiesce::ByteSink{{&segment, 1}});
    if (!status.ok()) {
      note(status.error());
      return;
    }
    for (const std::byte byte : data) data_ok_ = data_ok_ && std::to_integer<std::uint8_t>(byte) == value;
  }

  // Waits for and destroys the slot's last event. False while it cannot be proven terminal.
  bool retire(Slot& slot) {
    if (!slot.event.valid()) return true;
    const quiesce::WaitResult waited = backend_.wait_event(slot.event, options_.wait_timeout_ns);
    if (!waited.ok()) {
      note(waited.error().error);
      return false;
    }
    for (std::uint32_t attempt = 0; attempt < 4 && slot.event.valid(); ++attempt) {
      quiesce::ReleaseResult<quiesce::Event> released = backend_.destroy_event(std::move(slot.event));
      if (released.status == quiesce::ReleaseStatus::Rejected) slot.event = std::move(released.handle);
      if (released.status == quiesce::ReleaseStatus::Indeterminate) slot.held = tainted_ = true;
      if (released.status != quiesce::ReleaseStatus::Released && note(released.error)) return false;
    }
    return !slot.event.valid() && !slot.held;
  }

  template <class H, class Release>
  void release(H& handle, Release release_once) {
    for (std::uint32_t attempt = 0; attempt < 4 && handle.valid() && !lost_; ++attempt) {
      auto released = release_once(std::move(handle));
      if (released.status == quiesce::ReleaseStatus::Rejected) handle = std::move(released.handle);
      if (released.status == quiesce::ReleaseStatus::Indeterminate) tainted_ = true;
      if (!released.ok()) note(released.error);
    }
    if (handle.valid()) tainted_ = true;
  }

  void close() {
    for (Slot& slot : slots_) {
      if (lost_ || slot.held || !retire(slot)) {
        tainted_ = true;
        continue;
      }
      release(slot.buffer, [&](quiesce::Buffer&& b) { return backend_.free_buffer(std::move(b)); });
    }
    if (!lost_ && !tainted_) {
      release(program_, [&](quiesce::Program&& p) { return backend_.unload_program(std::move(p)); });
      release(queue_, [&](quiesce::Queue&& q) { return backend_.destroy_queue(std::move(q)); });
      release(context_, [&](quiesce::Context&& c) { return backend_.destroy_context(std::move(c)); });
    }
    if (context_.valid()) (void)backend_.discard_context(std::move(context_));  // abandons whatever is left
  }

  B& backend_;
  Options options_;
  quiesce::MemoryBudget budget_{64ULL << 20U};
  quiesce::Context context_;
  quiesce::Queue queue_;
  quiesce::Program program_;
  std::vector<Slot> slots_;
  std::uint64_t invocations_ = 0;
  bool lost_ = false;
  bool tainted_ = false;
  bool data_ok_ = true;
};

}  // namespace my_runtime
