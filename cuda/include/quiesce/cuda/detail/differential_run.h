// run_script: executes a differential Script on any Backend and records what it observed.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "quiesce/cuda/differential.h"

namespace quiesce::cuda {

// The content a Write step puts into a buffer: a function of its seed only.
std::vector<std::byte> script_content(std::uint64_t seed, std::uint64_t bytes);

namespace detail {

// Owned handles of one run, plus the contract-shaped conversions from script slots.
template <Backend B>
class ScriptRun {
 public:
  ScriptRun(B& backend, const Script& script) : backend_(&backend), script_(&script) {}

  ScriptLog run() {
    if (!open()) return std::move(log_);
    for (std::uint32_t index = 0; index < script_->steps.size(); ++index) {
      step_ = index;
      execute(script_->steps[index]);
    }
    close();
    return std::move(log_);
  }

 private:
  void note(std::string what, std::string outcome, std::vector<std::byte> bytes = {}) {
    log_.records.push_back(ScriptRecord{step_, std::move(what), std::move(bytes), std::move(outcome)});
  }
  static std::string kind_of(const Error& error) { return "error " + std::string(to_string(error.kind)); }

  bool open() {
    auto context = backend_->create_context(ContextDesc{});
    if (!context.ok()) return setup_failed("create_context", context.error());
    context_ = std::move(context).value();
    for (int index = 0; index < 2; ++index) {
      auto queue = backend_->create_queue(context_, QueueDesc{});
      if (!queue.ok()) return setup_failed("create_queue", queue.error());
      queues_.push_back(std::move(queue).value());
    }
    for (const std::string_view kernel : kScriptKernels) {
      ArtifactRef artifact{kernel, ArtifactFormat::Builtin, {}, 1U << 20};
      auto program = backend_->load_program(context_, artifact);
      if (!program.ok()) return setup_failed("load_program", program.error());
      programs_.push_back(std::move(program).value());
    }
    ResourceTransaction<B> transaction(*backend_, context_, budget_, 1);
    for (const std::uint64_t bytes : script_->buffer_bytes) {
      const Result<BufferRef> staged = transaction.allocate(BufferDesc{bytes, kAllBufferUsage});
      if (!staged.ok()) return setup_failed("allocate_buffer", staged.error());
    }
    buffers_ = transaction.commit();
    return true;
  }
  bool setup_failed(std::string_view call, const Error& error) {
    log_.setup_failure = std::string(call) + " failed: " + backend_->describe_error(error);
    return false;
  }

  void execute(const ScriptStep& step) {
    switch (step.kind) {
      case StepKind::Write: {
        const std::vector<std::byte> content = script_content(step.write_seed, script_->buffer_bytes[step.buffer]);
        const std::array<std::span<const std::byte>, 1> segments = {std::span<const std::byte>(content)};
        const Status written = backend_->write_buffer(buffers_[step.buffer], 0, ByteSource{segments});
        if (!written.ok()) note("write of buffer " + std::to_string(step.buffer), kind_of(written.error()));
        return;
      }
      case StepKind::Read: {
        std::vector<std::byte> sink(script_->buffer_bytes[step.buffer]);
        const std::array<std::span<std::byte>, 1> segments = {std::span<std::byte>(sink)};
        const Status read = backend_->read_buffer(buffers_[step.buffer], 0, ByteSink{segments});
        note("read of buffer " + std::to_string(step.buffer), read.ok() ? "ok" : kind_of(read.error()),
             read.ok() ? std::move(sink) : std::vector<std::byte>{});
        return;
      }
      case StepKind::Submit: {
        Event event = submit(0, step.batch);
        finish(0, std::move(event));
        return;
      }
      case StepKind::SubmitPair: {
        Event first = submit(0, step.batch);
        Event second = submit(1, step.second);
        finish(0, std::move(first));
        finish(1, std::move(second));
        return;
      }
      case StepKind::CaptureReplay:
        capture_and_replay(step);
        return;
    }
  }

  // Converts owned script commands into contract commands; `bindings` keeps the binding arrays alive.
  std::vector<Command> commands(const std::vector<ScriptCommand>& batch, std::vector<std::vector<Binding>>& bindings) {
    std::vector<Command> converted;
    bindings.assign(batch.size(), {});
    for (std::size_t index = 0; index < batch.size(); ++index) {
      const ScriptCommand& command = batch[index];
      switch (command.kind) {
        case CommandKind::Launch: {
          for (std::size_t slot = 0; slot < command.buffers.size(); ++slot) {
            const bool output = slot + 1 == command.buffers.size() && command.buffers.size() > 1;
            const Access access = command.kernel == 2 && output ? Access::ReadWrite
                                  : (output || command.buffers.size() == 1) ? Access::Write
                                                                            : Access::Read;
            bindings[index].push_back(Binding{buffers_[command.buffers[slot]].ref(), access});
          }
          converted.push_back(Command::launch(programs_[command.kernel].ref(), command.dims, bindings[index], command.data));
          break;
        }
        case CommandKind::Copy:
          converted.push_back(Command::copy(buffers_[command.source].ref(), command.source_offset,
                                            buffers_[command.target].ref(), command.target_offset, command.bytes));
          break;
        case CommandKind::Upload:
          converted.push_back(Command::upload(command.data, buffers_[command.target].ref(), command.target_offset));
          break;
        default:
          converted.push_back(Command::zero(buffers_[command.target].ref(), command.target_offset, command.bytes));
          break;
      }
    }
    return converted;
  }

  Event submit(std::uint32_t queue, const std::vector<ScriptCommand>& batch) {
    std::vector<std::vector<Binding>> bindings;
    const std::vector<Command> converted = commands(batch, bindings);
    SubmitOptions options;
    options.invocation = ++invocations_;
    SubmitResult submitted = backend_->submit(queues_[queue], converted, options);
    note("submit on queue " + std::to_string(queue), std::string(to_string(submitted.status)) +
                                                         (submitted.status == SubmitStatus::Submitted ? "" : " " + kind_of(submitted.error)));
    return std::move(submitted.event);
  }

  void finish(std::uint32_t queue, Event event) {
    if (!event.valid()) return;
    const WaitResult waited = backend_->wait_event(event, script_->options.wait_timeout_ns);
    note("terminal of the batch on queue " + std::to_string(queue),
         waited.ok() ? std::string(to_string(waited->state)) : "fence indeterminate " + kind_of(waited.error().error));
    release("destroy_event", backend_->destroy_event(std::move(event)));
  }

  template <class H>
  void release(std::string_view what, ReleaseResult<H> released) {
    if (released.status != ReleaseStatus::Released) {
      note(std::string(what), std::string(to_string(released.status)) + " " + kind_of(released.error));
    }
  }

  void capture_and_replay(const ScriptStep& step) {
    const Status begun = backend_->begin_capture(queues_[0]);
    if (!begun.ok()) {
      note("begin_capture", kind_of(begun.error()));
      return;
    }
    std::vector<std::vector<Binding>> bindings;
    const std::vector<Command> converted = commands(step.batch, bindings);
    const Status captured = backend_->capture(queues_[0], converted);
    if (!captured.ok()) note("capture", kind_of(captured.error()));
    Result<Executable> executable = backend_->end_capture(queues_[0]);  // always ended, on every path
    if (!executable.ok()) {
      note("end_capture", kind_of(executable.error()));
      return;
    }
    const std::vector<Command> replays(step.replays, Command::replay(executable->ref()));
    SubmitOptions options;
    options.invocation = ++invocations_;
    SubmitResult submitted = backend_->submit(queues_[0], replays, options);
    note("submit of " + std::to_string(step.replays) + " replays", std::string(to_string(submitted.status)));
    finish(0, std::move(submitted.event));
    release("destroy_executable", backend_->destroy_executable(std::move(executable).value()));
  }

  void close() {
    step_ = static_cast<std::uint32_t>(script_->steps.size());
    for (Buffer& buffer : buffers_) release("free_buffer", backend_->free_buffer(std::move(buffer)));
    for (Program& program : programs_) release("unload_program", backend_->unload_program(std::move(program)));
    for (Queue& queue : queues_) release("destroy_queue", backend_->destroy_queue(std::move(queue)));
    release("destroy_context", backend_->destroy_context(std::move(context_)));
  }

  B* backend_;
  const Script* script_;
  ScriptLog log_;
  std::uint32_t step_ = 0;
  std::uint64_t invocations_ = 0;
  MemoryBudget budget_{std::uint64_t{1} << 62};
  Context context_;
  std::vector<Queue> queues_;
  std::vector<Program> programs_;
  std::vector<Buffer> buffers_;
};

}  // namespace detail

// Runs `script` on `backend` from a fresh context and returns everything it observed.
template <Backend B>
ScriptLog run_script(B& backend, const Script& script) {
  detail::ScriptRun<B> run(backend, script);
  return run.run();
}

}  // namespace quiesce::cuda
