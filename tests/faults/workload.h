// A fixed workload for the fault tests: a small, careful runtime over any Backend that survives every fault
// of the catalog and writes a transcript of what it observed.
//
// It treats outcomes as the contract says: a rejected submit is retried a bounded number of times, an
// indeterminate one keeps its event and waits for it, a rejected release is retried, an indeterminate one is
// dropped (quarantined), a lost context is discarded. Two runs that tell the same lies produce the same
// transcript, which is what the determinism and replay tests compare.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/core/transaction.h"

namespace quiesce::faults::testing {

template <Backend B>
class Workload {
 public:
  static constexpr std::uint32_t kAttemptsMax = 8;
  static constexpr std::uint32_t kPollsMax = 64;
  static constexpr std::uint64_t kBufferBytes = 16;

  explicit Workload(B& backend) : backend_(&backend) {}

  // Runs the workload; the transcript names every outcome, one word each.
  std::string run() {
    Result<Context> context = backend_->create_context(ContextDesc{});
    if (!context.ok()) return note("context-failed");
    context_ = std::move(context).value();
    if (setup()) {
      for (std::uint32_t round = 0; round < 3 && !lost_; ++round) submit_round(round);
      if (!lost_) read_back();
    }
    teardown();
    return transcript_;
  }

 private:
  std::string note(std::string_view word) {
    transcript_ += word;
    transcript_ += ' ';
    return transcript_;
  }
  void note_error(const Error& error) {
    note(to_string(error.kind));
    if (error.kind == ErrorKind::DeviceLost) lost_ = true;
  }

  bool setup() {
    Result<Queue> queue = backend_->create_queue(context_, QueueDesc{});
    if (!queue.ok()) return note_error(queue.error()), false;
    queue_ = std::move(queue).value();
    const ArtifactRef artifact{"fill", ArtifactFormat::Builtin, {}, 1U << 20U};
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax && !program_.valid(); ++attempt) {
      Result<Program> program = backend_->load_program(context_, artifact);
      if (program.ok()) program_ = std::move(program).value();
      else note_error(program.error());
    }
    MemoryBudget budget(1U << 20U);
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax && buffers_.empty(); ++attempt) {
      ResourceTransaction<B> transaction(*backend_, context_, budget, attempt + 1);
      const BufferDesc desc{kBufferBytes, kAllBufferUsage, AllocationMode::Direct, {}};
      bool allocated = true;
      for (std::uint32_t index = 0; index < 3 && allocated; ++index) {
        Result<BufferRef> buffer = transaction.allocate(desc);
        if (!buffer.ok()) note_error(buffer.error()), allocated = false;
      }
      if (allocated) buffers_ = transaction.commit();
    }
    if (buffers_.empty()) return note("no-buffers"), false;
    // Every byte of every buffer is written before anything reads it.
    for (std::uint32_t index = 0; index < buffers_.size(); ++index) {
      if (!write_whole(buffers_[index], make_pattern(7 + index))) return false;
    }
    return true;
  }

  bool write_whole(Buffer& buffer, const std::array<std::byte, kBufferBytes>& pattern) {
    const std::array<std::span<const std::byte>, 1> segments = {std::span<const std::byte>(pattern)};
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax; ++attempt) {
      Status written = backend_->write_buffer(buffer, 0, ByteSource{segments});
      if (written.ok()) return note("written"), true;
      note_error(written.error());
      if (lost_) return false;
    }
    return note("unwritten"), false;
  }

  static std::array<std::byte, kBufferBytes> make_pattern(std::uint32_t seed) {
    std::array<std::byte, kBufferBytes> pattern{};
    for (std::size_t index = 0; index < pattern.size(); ++index) pattern[index] = std::byte(seed + index);
    return pattern;
  }

  void submit_round(std::uint32_t round) {
    const std::array<std::byte, 4> upload = {std::byte(round), std::byte(1), std::byte(2), std::byte(3)};
    const std::array<std::byte, 4> parameter = {std::byte(round + 40), std::byte(0), std::byte(0), std::byte(0)};
    LaunchDims dims;
    dims.block_x = kBufferBytes / 4;  // one thread per u32 word
    const std::array<Binding, 1> bindings = {Binding{buffers_[2].ref(), Access::Write}};
    const std::array<Command, 3> batch = {
        Command::upload(upload, buffers_[1].ref(), 0),
        Command::copy(buffers_[0].ref(), 0, buffers_[1].ref(), 4, 8),
        Command::launch(program_.ref(), dims, bindings, parameter),
    };
    std::optional<Event> event;
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax && !event; ++attempt) {
      SubmitResult submitted = backend_->submit(queue_, batch, SubmitOptions{0, false, round + 1});
      note(to_string(submitted.status));
      if (submitted.status == SubmitStatus::Rejected) {
        note_error(submitted.error);
        if (lost_ || !submitted.error.retryable) return;
        continue;
      }
      if (submitted.status == SubmitStatus::Indeterminate) note(std::to_string(submitted.commands_enqueued));
      event = std::move(submitted.event);
    }
    if (!event) return;
    if (round == 1) {
      Status cancelled = backend_->cancel_event(*event);
      note(cancelled.ok() ? "cancel-won" : "cancel-lost");
    }
    settle(std::move(*event));
  }

  // Polls, then waits, until terminal; then destroys the event. Indeterminate never releases anything.
  void settle(Event event) {
    bool terminal = false;
    for (std::uint32_t poll = 0; poll < kPollsMax && !terminal && !lost_; ++poll) {
      const Observation observed = backend_->poll_event(event);
      note(to_string(observed.state));
      if (observed.state == EventState::Indeterminate && observed.error.kind == ErrorKind::DeviceLost) lost_ = true;
      terminal = is_terminal(observed.state);
      if (!terminal && !lost_ && poll % 4 == 3) {
        WaitResult waited = backend_->wait_event(event, 1000);
        if (waited.ok()) {
          note(to_string(waited->state));
          terminal = true;
        } else {
          note_error(waited.error().error);
        }
      }
    }
    if (!terminal) return note("abandoned"), void();
    release(std::move(event), [this](Event&& e) { return backend_->destroy_event(std::move(e)); });
  }

  void read_back() {
    std::array<std::byte, kBufferBytes> sink{};
    const std::array<std::span<std::byte>, 1> segments = {std::span<std::byte>(sink)};
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax; ++attempt) {
      Status read = backend_->read_buffer(buffers_[1], 0, ByteSink{segments});
      if (read.ok()) {
        for (const std::byte value : sink) note(std::to_string(std::to_integer<int>(value)));
        return;
      }
      note_error(read.error());
      if (lost_) return;
    }
  }

  template <class H, class Release>
  void release(H&& handle, Release release_call) {
    for (std::uint32_t attempt = 0; attempt < kAttemptsMax; ++attempt) {
      ReleaseResult<H> released = release_call(std::move(handle));
      note(to_string(released.status));
      if (released.status != ReleaseStatus::Rejected) return;
      handle = std::move(released.handle);
    }
    note("leaked");
  }

  void teardown() {
    if (lost_) {
      Status discarded = backend_->discard_context(std::move(context_));
      note(discarded.ok() ? "discarded" : "discard-failed");
      return;
    }
    for (Buffer& buffer : buffers_) {
      release(std::move(buffer), [this](Buffer&& b) { return backend_->free_buffer(std::move(b)); });
    }
    if (program_.valid()) {
      release(std::move(program_), [this](Program&& p) { return backend_->unload_program(std::move(p)); });
    }
    if (queue_.valid()) {
      release(std::move(queue_), [this](Queue&& q) { return backend_->destroy_queue(std::move(q)); });
    }
    release(std::move(context_), [this](Context&& c) { return backend_->destroy_context(std::move(c)); });
  }

  B* backend_;
  Context context_;
  Queue queue_;
  Program program_;
  std::vector<Buffer> buffers_;
  bool lost_ = false;
  std::string transcript_;
};

}  // namespace quiesce::faults::testing
