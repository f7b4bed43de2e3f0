// A rapidcheck state machine of raw Backend use on Validator<faults::Injector<sim::Device>>.
//
// The model is the caller's view: which buffers exist and the one byte value each should hold (every write
// and every fill covers the whole buffer). The system under test is a careful little runtime over the stack:
// it absorbs the faults the injector tells (a rejected submit is retried exactly, an indeterminate outcome
// makes the bytes it could have written unknown, a rejected release is retried, a handle whose release was
// indeterminate is never touched again) and checks after every command: no validator violation, no oracle
// finding, a read of a buffer the runtime still knows equals the model, a terminal never changes (R7), a won
// cancellation is followed by Cancelled (R8), a rejected release returns the same handle (R6). After the
// commands, injection stops and everything must drain and be released: no leak (R19).
// A failure prints rapidcheck's seed and reproduce string, the shrunk command list, and the path of the shrunk
// case's trace with its `quiesce replay` command (model_trace.h: the stack is the recorded one).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "model_trace.h"
#include "quiesce/core/transaction.h"
#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/properties/replay.h"
#include "quiesce/sim/device.h"
#include "quiesce/traces/validate.h"

namespace quiesce {
namespace {

constexpr std::uint64_t kBufferBytes = 256;
constexpr std::size_t kBuffersMax = 6;
constexpr std::uint64_t kWaitNs = 50'000'000;

struct Model {
  struct Slot {
    bool live = true;
    std::optional<std::uint8_t> value;  // every byte, once something wrote the whole buffer
  };
  std::vector<Slot> slots;

  std::vector<std::size_t> live_slots() const {
    std::vector<std::size_t> live;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].live) live.push_back(i);
    }
    return live;
  }
};

using Stack = properties::RecordedSimStack::Top;

struct SutOptions {
  bool free_while_pinned = false;  // a planted bug (the trace test's): free without settling what pins it
};

// The careful runtime and its stack.
class Sut {
 public:
  Sut(const properties::RunConfig& config, traces::TraceSink& sink, const SutOptions& options = {})
      : recorded_(config, config.plan, sink),
        device_(recorded_.device()),
        stack_(recorded_.top()),
        options_(options) {
    Result<Context> context = stack_.create_context(ContextDesc{});
    RC_ASSERT(context.ok());
    context_ = std::move(context).value();
    Result<Queue> queue = stack_.create_queue(context_, QueueDesc{});
    RC_ASSERT(queue.ok());
    queue_ = std::move(queue).value();
    ArtifactRef artifact;
    artifact.kernel_name = "fill";
    artifact.resident_bytes = 1U << 20U;
    for (std::uint32_t attempt = 0; attempt < 8 && !program_.valid(); ++attempt) {
      Result<Program> program = stack_.load_program(context_, artifact);
      if (program.ok()) program_ = std::move(program).value();
    }
  }

  struct Slot {
    Buffer handle;
    bool known = false;  // the runtime can vouch for the bytes: nothing unknown happened to them
    bool held = false;   // an event that pins it was released indeterminately: kept until the discard
  };
  struct Pending {
    Event handle;
    std::vector<std::size_t> targets;
    bool indeterminate = false;
    bool cancel_won = false;
    std::optional<EventState> terminal;
  };

  // Every fault family but device loss: this runtime has no recovery path, so a loss would end the run.
  static faults::Plan plan_of(std::uint64_t seed) {
    faults::Plan plan = faults::Plan::all();
    plan.seed = seed;
    plan.families_enabled &= ~(1U << static_cast<std::uint32_t>(faults::FaultFamily::DeviceLoss));
    return plan;
  }

  void check_clean() {
    properties::RecordedSimStack::Checked& validator = recorded_.validator();
    for (const Violation& violation : validator.violations()) RC_LOG() << validator.describe(violation) << "\n";
    for (const sim::Finding& finding : device_.findings()) RC_LOG() << finding.message << "\n";
    RC_ASSERT(validator.violation_count() == 0U);
    RC_ASSERT(device_.findings().empty());
  }

  void allocate() {
    BufferDesc desc;
    desc.bytes = kBufferBytes;
    desc.usage = kAllBufferUsage;
    ResourceTransaction<Stack> transaction(stack_, context_, budget_, ++transactions_);
    Result<BufferRef> staged = transaction.allocate(desc);
    Slot slot;
    if (staged.ok()) slot.handle = std::move(transaction.commit().front());
    slots_.push_back(std::move(slot));  // a refused allocation is a slot the runtime skips
  }

  // Waits for every live event that targets `slot`; false if one could not be settled.
  bool settle(std::size_t slot) {
    bool settled = true;
    for (Pending& pending : events_) {
      if (!pending.handle.valid() || pending.terminal) continue;
      if (std::find(pending.targets.begin(), pending.targets.end(), slot) == pending.targets.end()) continue;
      const WaitResult result = stack_.wait_event(pending.handle, kWaitNs);
      if (result.ok()) observe(pending, result.value().state);
      settled = settled && pending.terminal.has_value();
    }
    return settled;
  }

  void observe(Pending& pending, EventState state) {
    if (!is_terminal(state)) return;
    if (pending.terminal) {
      RC_ASSERT(*pending.terminal == state);  // R7: a terminal never changes
      return;
    }
    if (pending.cancel_won) RC_ASSERT(state == EventState::Cancelled);  // R8
    pending.terminal = state;
    const bool ran = state == EventState::Complete && !pending.indeterminate;
    for (std::size_t target : pending.targets) slots_[target].known = slots_[target].known && ran;
  }

  void write(std::size_t slot, std::uint8_t value) {
    Slot& target = slots_[slot];
    if (!target.handle.valid()) return;
    if (target.held || !settle(slot)) {
      target.known = false;
      return;
    }
    std::vector<std::byte> data(kBufferBytes, static_cast<std::byte>(value));
    const std::span<const std::byte> segment(data);
    const Status status = stack_.write_buffer(target.handle, 0, ByteSource{{&segment, 1}});
    target.known = status.ok();
  }

  void fill(std::size_t slot, std::uint8_t value) {
    Slot& target = slots_[slot];
    if (!target.handle.valid() || !program_.valid() || target.held) {
      target.known = false;
      return;
    }
    if (!settle(slot)) {  // one batch at a time per buffer
      target.known = false;
      return;
    }
    const std::uint32_t word = 0x01010101U * value;
    std::array<std::byte, 4> parameters{};
    std::memcpy(parameters.data(), &word, 4);
    const std::array<Binding, 1> bindings = {Binding{target.handle.ref(), Access::Write}};
    const std::array<Command, 1> batch = {Command::launch(program_.ref(), LaunchDims{}, bindings, parameters)};
    SubmitOptions options;
    options.invocation = ++invocations_;
    for (std::uint32_t attempt = 0; attempt < 3; ++attempt) {
      SubmitResult result = stack_.submit(queue_, batch, options);
      if (result.status == SubmitStatus::Rejected) continue;  // exact retry (R3)
      Pending pending;
      pending.handle = std::move(result.event);
      pending.targets = {slot};
      pending.indeterminate = result.status == SubmitStatus::Indeterminate;
      events_.push_back(std::move(pending));
      target.known = true;  // the whole buffer, once the terminal says that the fill ran exactly
      return;
    }
    target.known = false;  // every attempt was rejected: nothing ran, but the model assumed it did
  }

  void poll_all() {
    for (Pending& pending : events_) {
      if (!pending.handle.valid()) continue;
      const Observation observation = stack_.poll_event(pending.handle);
      observe(pending, observation.state);
    }
  }

  void cancel_newest() {
    for (auto it = events_.rbegin(); it != events_.rend(); ++it) {
      if (!it->handle.valid() || it->terminal) continue;
      const Status status = stack_.cancel_event(it->handle);
      it->cancel_won = status.ok();
      return;
    }
  }

  void destroy_terminal_events() {
    for (Pending& pending : events_) {
      if (!pending.handle.valid() || !pending.terminal) continue;
      for (std::uint32_t attempt = 0; attempt < 4 && pending.handle.valid(); ++attempt) {
        const EventRef ref = pending.handle.ref();
        ReleaseResult<Event> released = stack_.destroy_event(std::move(pending.handle));
        if (released.status == ReleaseStatus::Rejected) {
          RC_ASSERT(released.handle.ref() == ref);  // R6: the same live handle comes back
          pending.handle = std::move(released.handle);
        } else if (released.status == ReleaseStatus::Indeterminate) {
          tainted_ = true;  // only a whole-context discard ends it now, and what it pinned stays (R2)
          for (std::size_t target : pending.targets) slots_[target].held = true;
        }
      }
    }
  }

  void read(std::size_t slot, std::optional<std::uint8_t> expected) {
    Slot& target = slots_[slot];
    // Bytes it cannot vouch for may never have been written: a careful runtime does not read them.
    if (!target.handle.valid() || !settle(slot) || !target.known) return;
    std::vector<std::byte> data(kBufferBytes);
    const std::span<std::byte> segment(data);
    const Status status = stack_.read_buffer(target.handle, 0, ByteSink{{&segment, 1}});
    if (!status.ok() || !expected) return;
    for (std::byte byte : data) RC_ASSERT(std::to_integer<std::uint8_t>(byte) == *expected);
  }

  void free(std::size_t slot) {
    Slot& target = slots_[slot];
    if (!target.handle.valid()) return;
    if (options_.free_while_pinned) return release(target.handle);  // the planted bug
    if (!settle(slot)) {
      held_.push_back(std::move(target.handle));  // pinned by an unsettled event: kept until the discard
      tainted_ = true;
      return;
    }
    destroy_terminal_events();
    if (pinned(slot) || target.held) {
      held_.push_back(std::move(target.handle));
      tainted_ = true;
      return;
    }
    release(target.handle);
  }

  bool pinned(std::size_t slot) const {
    for (const Pending& pending : events_) {
      if (!pending.handle.valid()) continue;
      if (std::find(pending.targets.begin(), pending.targets.end(), slot) != pending.targets.end()) return true;
    }
    return false;
  }

  void release(Buffer& handle) {
    for (std::uint32_t attempt = 0; attempt < 4 && handle.valid(); ++attempt) {
      const BufferRef ref = handle.ref();
      ReleaseResult<Buffer> released = stack_.free_buffer(std::move(handle));
      if (released.status == ReleaseStatus::Rejected) {
        RC_ASSERT(released.handle.ref() == ref);  // R6
        handle = std::move(released.handle);
      } else if (released.status == ReleaseStatus::Indeterminate) {
        tainted_ = true;
      }
    }
    if (handle.valid()) held_.push_back(std::move(handle));
  }

  // The liveness phase: no more faults; everything drains and is released or abandoned with the context.
  void teardown() {
    recorded_.injector().set_injecting(false);
    for (std::size_t slot = 0; slot < slots_.size(); ++slot) (void)settle(slot);
    destroy_terminal_events();
    for (Slot& slot : slots_) {
      if (slot.handle.valid() && !slot.held) release(slot.handle);
    }
    bool events_left = false;
    for (const Pending& pending : events_) events_left = events_left || pending.handle.valid();
    bool buffers_left = !held_.empty();
    for (const Slot& slot : slots_) buffers_left = buffers_left || slot.handle.valid();
    if (tainted_ || events_left || buffers_left) {
      RC_ASSERT(stack_.discard_context(std::move(context_)).ok());
    } else {
      if (program_.valid()) (void)stack_.unload_program(std::move(program_));
      (void)stack_.destroy_queue(std::move(queue_));
      ReleaseResult<Context> released = stack_.destroy_context(std::move(context_));
      if (!released.ok() && released.handle.valid()) RC_ASSERT(stack_.discard_context(std::move(released.handle)).ok());
    }
    held_.clear();
    for (Pending& pending : events_) pending.handle = Event{};
    for (Slot& slot : slots_) slot.handle = Buffer{};
    properties::RecordedSimStack::Checked& validator = recorded_.validator();
    const std::uint64_t violations = validator.finish();
    for (const Violation& violation : validator.violations()) RC_LOG() << validator.describe(violation) << "\n";
    RC_ASSERT(violations == 0U);  // no leak (R19) and no end-of-run violation
    RC_ASSERT(device_.findings().empty());
  }

 private:
  properties::RecordedSimStack recorded_;
  sim::Device& device_;
  Stack& stack_;
  SutOptions options_;
  MemoryBudget budget_{64ULL << 20U};
  Context context_;
  Queue queue_;
  Program program_;
  std::vector<Slot> slots_;
  std::vector<Pending> events_;
  std::vector<Buffer> held_;
  std::uint64_t transactions_ = 0;
  std::uint64_t invocations_ = 0;
  bool tainted_ = false;
};

using ModelCommand = rc::state::Command<Model, Sut>;

std::size_t pick_live(const Model& model) {
  const std::vector<std::size_t> live = model.live_slots();
  RC_PRE(!live.empty());
  return live[*rc::gen::inRange<std::size_t>(0, live.size())];
}

struct Allocate : ModelCommand {
  void checkPreconditions(const Model& model) const override { RC_PRE(model.live_slots().size() < kBuffersMax); }
  void apply(Model& model) const override { model.slots.push_back(Model::Slot{}); }
  void run(const Model&, Sut& sut) const override {
    sut.allocate();
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "allocate"; }
};

struct Write : ModelCommand {
  std::size_t slot;
  std::uint8_t value = *rc::gen::arbitrary<std::uint8_t>();
  explicit Write(const Model& model) : slot(pick_live(model)) {}
  void checkPreconditions(const Model& model) const override {
    const bool live = slot < model.slots.size() && model.slots[slot].live;  // RC_PRE would not short-circuit
    RC_PRE(live);
  }
  void apply(Model& model) const override { model.slots[slot].value = value; }
  void run(const Model&, Sut& sut) const override {
    sut.write(slot, value);
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "write buffer " << slot << " <- " << int{value}; }
};

struct Fill : ModelCommand {
  std::size_t slot;
  std::uint8_t value = *rc::gen::arbitrary<std::uint8_t>();
  explicit Fill(const Model& model) : slot(pick_live(model)) {}
  void checkPreconditions(const Model& model) const override {
    const bool live = slot < model.slots.size() && model.slots[slot].live;  // RC_PRE would not short-circuit
    RC_PRE(live);
  }
  void apply(Model& model) const override { model.slots[slot].value = value; }
  void run(const Model&, Sut& sut) const override {
    sut.fill(slot, value);
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "submit fill buffer " << slot << " <- " << int{value}; }
};

std::size_t pick_written(const Model& model) {
  std::vector<std::size_t> written;
  for (std::size_t i : model.live_slots()) {
    if (model.slots[i].value) written.push_back(i);
  }
  RC_PRE(!written.empty());
  return written[*rc::gen::inRange<std::size_t>(0, written.size())];
}

struct Read : ModelCommand {
  std::size_t slot;
  explicit Read(const Model& model) : slot(pick_written(model)) {}
  void checkPreconditions(const Model& model) const override {
    const bool written = slot < model.slots.size() && model.slots[slot].live && model.slots[slot].value.has_value();
    RC_PRE(written);
  }
  void apply(Model&) const override {}
  void run(const Model& model, Sut& sut) const override {
    sut.read(slot, model.slots[slot].value);
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "read buffer " << slot; }
};

struct Free : ModelCommand {
  std::size_t slot;
  explicit Free(const Model& model) : slot(pick_live(model)) {}
  void checkPreconditions(const Model& model) const override {
    const bool live = slot < model.slots.size() && model.slots[slot].live;  // RC_PRE would not short-circuit
    RC_PRE(live);
  }
  void apply(Model& model) const override { model.slots[slot].live = false; }
  void run(const Model&, Sut& sut) const override {
    sut.free(slot);
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "free buffer " << slot; }
};

struct Poll : ModelCommand {
  void apply(Model&) const override {}
  void run(const Model&, Sut& sut) const override {
    sut.poll_all();
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "poll every live event"; }
};

struct Cancel : ModelCommand {
  void apply(Model&) const override {}
  void run(const Model&, Sut& sut) const override {
    sut.cancel_newest();
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "cancel the newest pending event"; }
};

struct DestroyEvents : ModelCommand {
  void apply(Model&) const override {}
  void run(const Model&, Sut& sut) const override {
    sut.destroy_terminal_events();
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "destroy every event observed terminal"; }
};

using Commands = rc::state::Commands<ModelCommand>;

void run_commands(const properties::RunConfig& config, traces::TraceSink& sink, const SutOptions& options,
                  const Commands& commands) {
  Sut sut(config, sink, options);
  rc::state::runAll(commands, Model{}, sut);
  sut.teardown();
}

// One property case: on failure, the same commands run again into a trace file (model_trace.h).
void check_raw_model(const std::string& name, const SutOptions& options) {
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_TAG(seed % 4);
  const Commands commands = *rc::state::gen::commands(
      Model{}, rc::state::gen::execOneOfWithArgs<Allocate, Write, Fill, Read, Free, Poll, Cancel, DestroyEvents>());
  const properties::RunConfig config = model_support::model_config(seed, Sut::plan_of(seed));
  model_support::NullSink sink;
  try {
    run_commands(config, sink, options, commands);
  } catch (...) {
    const std::string path = model_support::write_case_trace(
        config, name, [&](traces::TraceSink& writer) { run_commands(config, writer, options, commands); });
    RC_LOG() << "seed " << seed << "; the shrunk case's trace: " << path << "\n  replay it: quiesce replay " << path
             << "\n";
    throw;
  }
}

RC_GTEST_PROP(RawBackendModel, CarefulUseUnderFaultsBreaksNoInvariant, ()) {
  check_raw_model("RawBackendModel.CarefulUseUnderFaultsBreaksNoInvariant", SutOptions{});
}

// The failure path, shown on a planted bug: the runtime frees a buffer without settling the fill that pins
// it. The property must fail; the shrunk case must be written as a trace that holds the Validator's report
// and that `quiesce replay` re-executes faithfully, reproducing that report.
TEST(RawModelTrace, APlantedBugIsWrittenAsAShrunkTraceThatReplays) {
  const std::string name = "RawModelTrace.planted-free-while-pinned";
  const std::filesystem::path path = model_support::trace_directory() / (name + ".qtrace");
  std::filesystem::remove(path);
  SutOptions planted;
  planted.free_while_pinned = true;
  const bool held = rc::check("the raw model with a planted bug", [&] { check_raw_model(name, planted); });
  ASSERT_FALSE(held) << "the planted bug went unnoticed";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  traces::TraceResult<traces::Trace> trace = traces::load_trace(path.string());
  ASSERT_TRUE(trace.ok()) << trace.error().message();
  std::string violation;
  std::uint64_t calls = 0;
  for (const traces::Record& record : trace->records) {
    if (record.kind == traces::RecordKind::Violation && violation.empty()) violation = record.note.name;
    if (record.kind == traces::RecordKind::Call) ++calls;
  }
  EXPECT_EQ(violation, "caller.release-while-pinned");
  EXPECT_LE(calls, 40U) << "the written case is not the shrunk one";
  traces::TraceResult<properties::ReplayReport> replayed = properties::replay_trace(trace.value());
  ASSERT_TRUE(replayed.ok()) << replayed.error().message();
  EXPECT_TRUE(replayed->faithful()) << "divergence at record "
                                    << (replayed->divergence ? replayed->divergence->record_index : 0) << ": expected "
                                    << (replayed->divergence ? replayed->divergence->expected : "") << ", actual "
                                    << (replayed->divergence ? replayed->divergence->actual : "");
}

}  // namespace
}  // namespace quiesce
