// A rapidcheck state machine of the reference engine (quiesce::Engine) on the recorded simulator stack
// Recorder<Validator<Injector<sim::Device>>> under every fault family, device loss included.
//
// The model is the caller's view: which buffers were imported (and are not yet released) with their sizes,
// and which graphs were captured (and are not yet destroyed). The system under test is the engine, driven
// through its public API only; what its answers may be is faulty, so the bytes each buffer should hold are
// kept by the engine workload's host model (EngineHostModel), which counts a byte as known only once every
// submission that produced it is known to have completed. Checks, with the invariant each proves:
//   after every command  no Validator violation (R1-R13, R15-R17 on the calls the engine makes) and no
//                        oracle finding (use after free, unordered conflict, double execution, ...);
//   read                 a successful read equals every byte the host model knows (R3, R4, R5, R17);
//   dry run              a buffer read before and after a dry-run launch is byte for byte the same (R18);
//   flush, sync          each asynchronous failure names fire-and-forget work and surfaces once (R14);
//   progress             a fate once terminal never changes (R7);
//   device loss          the engine moves to a new epoch, and an id of the old one answers Incompatible (R9);
//   shutdown             no injection, the engine drains, every known byte reads back, every failed,
//                        partial or lost fire-and-forget submission surfaced exactly once (R14), the
//                        shutdown report is clean and the Validator sees nothing leaked (R19).
// A failure prints the seed, rapidcheck's reproduce string, the shrunk command list, and the path of the
// shrunk case's trace with its `quiesce replay` command (model_trace.h).
//
// rapidcheck's RC_PARAMS sets the number of cases: RC_PARAMS="max_success=2000" (default 100).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <filesystem>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "model_trace.h"
#include "quiesce/core/engine.h"
#include "quiesce/properties/engine_workload.h"
#include "quiesce/properties/engine_workload_mutants.h"
#include "quiesce/properties/replay.h"
#include "quiesce/sim/fiber_env.h"
#include "quiesce/traces/validate.h"

namespace quiesce {
namespace {

constexpr std::uint64_t kWaitNs = 50'000'000;
constexpr std::uint64_t kLivenessNs = 600'000'000'000;
constexpr std::size_t kBuffersMax = 8;
constexpr std::size_t kGraphsMax = 3;
constexpr std::uint32_t kQueues = 2;
constexpr std::array<std::uint64_t, 3> kSizes = {64, 128, 256};

struct Model {
  struct Slot {
    bool live = true;
    std::uint64_t bytes = 0;
  };
  std::vector<Slot> slots;        // every buffer imported, in order
  std::vector<bool> graphs;       // every graph captured: live or destroyed

  std::vector<std::size_t> live_slots() const {
    std::vector<std::size_t> live;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].live) live.push_back(i);
    }
    return live;
  }
  std::vector<std::size_t> live_graphs() const {
    std::vector<std::size_t> live;
    for (std::size_t i = 0; i < graphs.size(); ++i) {
      if (graphs[i]) live.push_back(i);
    }
    return live;
  }
};

struct SutOptions {
  properties::EngineBug bug = properties::EngineBug::None;  // a planted engine bug (the trace test's)
};

using Stack = properties::RecordedSimStack;
using Facing = properties::EngineFacing<Stack::Top>;
using TheEngine = properties::MutantEngine<Facing, sim::FiberEnv>;

faults::Plan model_plan() { return faults::Plan::all(); }

// The engine and everything the caller knows about it.
class Sut {
 public:
  Sut(const properties::RunConfig& config, traces::TraceSink& sink, const SutOptions& options)
      : stack_(config, config.plan, sink),
        facing_(options.bug, stack_.top()),
        env_(stack_.device().clock(), sim::Schedule::from_seed(Prng(config.seed).derive("schedule"))),
        engine_(facing_, env_, engine_options(config.seed), options.bug),
        host_([this](SubmissionId submission) { return engine_.poll(submission); }) {
    const Status opened = engine_.open();
    RC_ASSERT(opened.ok());
    epoch_ = engine_.epoch();
  }

  struct Slot {
    std::optional<BufferId> id;  // nullopt: the import failed, or the buffer went with a lost epoch
    std::uint64_t bytes = 0;
  };

  static EngineOptions engine_options(std::uint64_t seed) {
    EngineOptions options;
    options.queue_count = kQueues;
    options.memory_budget_bytes = 64ULL << 20U;
    options.invocation_base = (seed & 0xFFFFU) << 24U;
    options.host_access_timeout_ns = kWaitNs;
    return options;
  }

  void check_clean() {
    Stack::Checked& validator = stack_.validator();
    for (const Violation& violation : validator.violations()) RC_LOG() << validator.describe(violation) << "\n";
    for (const sim::Finding& finding : stack_.device().findings()) RC_LOG() << finding.message << "\n";
    RC_ASSERT(validator.violation_count() == 0U);
    RC_ASSERT(stack_.device().findings().empty());
  }

  // After a device loss the engine is on a new epoch: every id of the old one is gone (and must stay so).
  void notice_epoch() {
    const std::uint32_t epoch = engine_.epoch();
    if (epoch == epoch_) return;
    RC_ASSERT(epoch > epoch_);
    epoch_ = epoch;
    for (Slot& slot : slots_) {
      if (slot.id) stale_.push_back(*slot.id);
      slot.id.reset();
    }
    graphs_.assign(graphs_.size(), std::nullopt);
    programs_.clear();
    host_.clear();
  }

  std::optional<ProgramId> program(properties::BuiltinKernel kernel) {
    const auto found = programs_.find(kernel);
    if (found != programs_.end()) return found->second;
    ArtifactRef artifact;
    artifact.kernel_name = properties::kernel_name(kernel);
    artifact.resident_bytes = 4096;
    Result<ProgramId> loaded = engine_.load_program(artifact);
    if (!loaded.ok()) return std::nullopt;
    programs_[kernel] = loaded.value();
    return loaded.value();
  }

  static std::vector<std::byte> pattern(std::uint64_t bytes, std::uint8_t value) {
    std::vector<std::byte> data(bytes);
    for (std::uint64_t i = 0; i < bytes; ++i) data[i] = static_cast<std::byte>((value + i * 7U) & 0xFFU);
    return data;
  }

  void import(const std::vector<std::uint64_t>& sizes, std::uint8_t value) {
    std::vector<std::vector<std::byte>> contents;
    for (std::size_t i = 0; i < sizes.size(); ++i) contents.push_back(pattern(sizes[i], value + i));
    std::vector<std::array<std::span<const std::byte>, 1>> segments;
    for (const auto& content : contents) segments.push_back({std::span<const std::byte>(content)});
    std::vector<ImportRequest> requests;
    for (std::size_t i = 0; i < contents.size(); ++i) {
      requests.push_back(ImportRequest{BufferRequest{contents[i].size(), kAllBufferUsage}, ByteSource{segments[i]}});
    }
    Result<std::vector<BufferId>> imported = engine_.import_buffers(requests);
    notice_epoch();
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      Slot slot;
      slot.bytes = sizes[i];
      if (imported.ok()) {
        RC_ASSERT(imported->size() == sizes.size());  // R17: all or nothing
        slot.id = imported->at(i);
        host_.add(slot.id->serial, sizes[i], contents[i]);
      }
      slots_.push_back(slot);
    }
  }

  void write(std::size_t index, std::uint64_t offset, std::uint8_t value) {
    const Slot& slot = slots_[index];
    if (!slot.id) return;
    offset %= slot.bytes;
    const std::vector<std::byte> data = pattern(slot.bytes - offset, value);
    const std::array<std::span<const std::byte>, 1> segments{std::span<const std::byte>(data)};
    const Status written = engine_.write(*slot.id, offset, ByteSource{segments});
    notice_epoch();
    if (slots_[index].id) host_.host_write(slot.id->serial, offset, data, written.ok());
  }

  // The whole buffer, as the engine reads it; nullopt when the read failed. Known bytes must match (R3).
  std::optional<std::vector<std::byte>> read(std::size_t index) {
    const Slot slot = slots_[index];
    if (!slot.id) return std::nullopt;
    std::vector<std::byte> data(slot.bytes);
    const std::array<std::span<std::byte>, 1> segments{std::span<std::byte>(data)};
    const Status status = engine_.read(*slot.id, 0, ByteSink{segments});
    notice_epoch();
    if (!status.ok() || !slots_[index].id) return std::nullopt;
    std::uint64_t known = 0;
    const std::optional<std::string> mismatch = host_.check_read(slot.id->serial, 0, data, known);
    if (mismatch) RC_FAIL("a read disagreed with the host model: " + *mismatch);
    return data;
  }

  // A fire-and-forget fill of one buffer: a normal one, a dry run (R18 checked around it), or the faulting
  // kernel, which loses the device.
  void launch(std::size_t index, std::uint8_t value, LaunchMode mode, bool faulting) {
    if (!slots_[index].id) return;
    std::optional<std::vector<std::byte>> before;
    if (mode == LaunchMode::DryRun) before = read(index);
    if (!slots_[index].id) return;
    using properties::BuiltinKernel;
    const BuiltinKernel kernel = faulting ? BuiltinKernel::Fault : BuiltinKernel::Fill;
    const std::optional<ProgramId> loaded = program(kernel);
    notice_epoch();
    if (!loaded || !slots_[index].id) return;
    properties::ModelOp op;
    op.kernel = kernel;
    op.mode = mode;
    op.buffers = {slots_[index].id->serial};
    if (!faulting) op.data = pattern(4, value);
    const EngineBinding binding{*slots_[index].id, faulting ? Access::Read : Access::Write};
    Result<SubmissionId> launched = engine_.launch(value % kQueues, *loaded, LaunchDims{},
                                                   std::span<const EngineBinding>(&binding, 1), op.data, mode);
    const std::uint32_t epoch_before = epoch_;
    notice_epoch();
    if (!launched.ok()) return;
    fire_and_forget_.insert(launched->serial);
    fire_and_forget_ids_.push_back(launched.value());
    if (epoch_ == epoch_before) host_.apply(op, launched.value());
    if (mode != LaunchMode::DryRun || !before) return;
    const std::optional<std::vector<std::byte>> after = read(index);
    if (after && epoch_ == epoch_before) {
      RC_ASSERT(*before == *after);  // R18: a dry run changes no bytes
    }
  }

  // A batch on a queue: an upload, a zero, or a copy from another buffer; sometimes waited for.
  void submit(std::size_t index, std::size_t other, std::uint8_t value, std::uint8_t kind, bool wait) {
    const Slot target = slots_[index];
    if (!target.id) return;
    properties::ModelOp op;
    op.buffers = {target.id->serial};
    op.target_offset = value % target.bytes;
    op.bytes = target.bytes - op.target_offset;
    EngineOp encoded;
    if (kind % 3 == 0) {
      op.kind = OpKind::Upload;
      op.data = pattern(op.bytes, value);
      encoded = EngineOp::upload(op.data, *target.id, op.target_offset);
    } else if (kind % 3 == 1 || !slots_[other].id || other == index) {
      op.kind = OpKind::Zero;
      encoded = EngineOp::zero(*target.id, op.target_offset, op.bytes);
    } else {
      const Slot source = slots_[other];
      op.kind = OpKind::Copy;
      op.bytes = std::min(op.bytes, source.bytes);
      op.buffers = {source.id->serial, target.id->serial};
      encoded = EngineOp::copy(*source.id, 0, *target.id, op.target_offset, op.bytes);
    }
    const std::array<EngineOp, 1> ops{encoded};
    Result<SubmissionId> submitted = engine_.submit(kind % kQueues, ops);
    const std::uint32_t epoch_before = epoch_;
    notice_epoch();
    if (!submitted.ok()) return;
    if (epoch_ == epoch_before) host_.apply(op, submitted.value());
    if (!wait) return;
    (void)engine_.wait(submitted.value(), kWaitNs);
    notice_epoch();
  }

  void release(std::size_t index) {
    Slot& slot = slots_[index];
    if (!slot.id) return;
    const BufferId id = *slot.id;
    slot.id.reset();
    host_.remove(id.serial);
    (void)engine_.release(id);
    notice_epoch();
  }

  void capture(std::size_t index, std::uint8_t value) {
    graphs_.emplace_back();
    if (!slots_[index].id) return;
    const QueueIndex queue = value % kQueues;
    const std::optional<ProgramId> fill = program(properties::BuiltinKernel::Fill);
    if (!fill || !engine_.prepare_graph(queue).ok()) return notice_epoch();
    notice_epoch();
    if (!slots_[index].id) return;
    properties::ModelOp op;
    op.kernel = properties::BuiltinKernel::Fill;
    op.buffers = {slots_[index].id->serial};
    op.data = pattern(4, value);
    const EngineBinding binding{*slots_[index].id, Access::Write};
    const std::array<EngineOp, 1> ops{EngineOp::launch(*fill, LaunchDims{}, std::span<const EngineBinding>(&binding, 1),
                                                       op.data)};
    Result<GraphId> graph = engine_.capture_graph(queue, ops);
    notice_epoch();
    if (graph.ok()) graphs_.back() = CapturedGraph{graph.value(), op};
  }

  void replay(std::size_t graph, std::uint8_t queue) {
    if (!graphs_[graph]) return;
    const CapturedGraph captured = *graphs_[graph];
    Result<SubmissionId> replayed = engine_.replay(captured.id, queue % kQueues);
    const std::uint32_t epoch_before = epoch_;
    notice_epoch();
    if (!replayed.ok()) return;
    fire_and_forget_.insert(replayed->serial);
    fire_and_forget_ids_.push_back(replayed.value());
    if (epoch_ == epoch_before && host_.contains(captured.op.buffers.front())) {
      host_.apply(captured.op, replayed.value());
    }
  }

  void destroy_graph(std::size_t graph) {
    if (!graphs_[graph]) return;
    const GraphId id = graphs_[graph]->id;
    graphs_[graph].reset();
    (void)engine_.destroy_graph(id);
    notice_epoch();
  }

  void take(const FlushResult& flushed) {
    for (const AsyncFailure& failure : flushed.failures) note_failure(failure);
    notice_epoch();
  }

  // R14: each asynchronous failure belongs to fire-and-forget work and surfaces exactly once.
  void note_failure(const AsyncFailure& failure) {
    RC_ASSERT(fire_and_forget_.contains(failure.submission.serial));
    const bool first = surfaced_.insert(failure.submission.serial).second;
    if (!first) RC_FAIL("the failure of submission #" + std::to_string(failure.submission.serial) + " surfaced twice");
  }

  void flush() { take(engine_.flush()); }
  void sync() { take(engine_.sync(kWaitNs)); }

  // R7: a fate once terminal never changes, however often it is polled.
  void progress() {
    engine_.progress();
    notice_epoch();
    for (const SubmissionId submission : fire_and_forget_ids_) {
      const SubmissionFate fate = engine_.poll(submission);
      const bool terminal = fate != SubmissionFate::Pending && fate != SubmissionFate::Indeterminate &&
                            fate != SubmissionFate::Unknown;
      const auto seen = terminal_fates_.find(submission.serial);
      if (seen != terminal_fates_.end()) {
        RC_ASSERT(seen->second == fate);
      } else if (terminal) {
        terminal_fates_.emplace(submission.serial, fate);
      }
    }
    notice_epoch();
  }

  // Loses the device with the faulting kernel, syncs until the engine notices, and checks the new epoch: an
  // id of the old one must answer Incompatible (R9), never reach the backend.
  void lose_device(std::size_t index) {
    const std::uint32_t epoch_before = epoch_;
    const std::optional<BufferId> old = slots_[index].id;
    launch(index, 0, LaunchMode::Normal, true);
    take(engine_.sync(kWaitNs));
    (void)engine_.healthy();
    notice_epoch();
    if (epoch_ == epoch_before || !old) return;
    std::array<std::byte, 4> data{};
    const std::array<std::span<std::byte>, 1> segments{std::span<std::byte>(data)};
    const Status status = engine_.read(*old, 0, ByteSink{segments});
    notice_epoch();
    RC_ASSERT(!status.ok());
    RC_ASSERT(status.error().kind == ErrorKind::Incompatible);
  }

  // The liveness phase: no more faults; the engine drains, every known byte reads back, and shutdown
  // accounts for everything (R19) with every failure surfaced exactly once (R14).
  void teardown() {
    stack_.injector().set_injecting(false);
    take(engine_.sync(kLivenessNs));
    const Status drained = engine_.drain(kLivenessNs);
    notice_epoch();
    RC_ASSERT(drained.ok());
    for (std::size_t index = 0; index < slots_.size(); ++index) (void)read(index);
    take(engine_.flush());
    std::vector<std::pair<SubmissionId, SubmissionFate>> must_surface;
    for (const SubmissionId submission : fire_and_forget_ids_) {
      const SubmissionFate fate = engine_.poll(submission);
      if (fate == SubmissionFate::Failed || fate == SubmissionFate::Partial || fate == SubmissionFate::Lost) {
        must_surface.emplace_back(submission, fate);
      }
    }
    const ShutdownReport report = engine_.shutdown(kLivenessNs);
    RC_LOG() << report.describe() << "\n";
    for (const AsyncFailure& failure : report.unsurfaced_failures) note_failure(failure);
    for (const auto& [submission, fate] : must_surface) {
      if (!surfaced_.contains(submission.serial)) {
        RC_FAIL("fire-and-forget submission #" + std::to_string(submission.serial) + " ended " +
                std::string(to_string(fate)) + " and its failure never surfaced");
      }
    }
    RC_ASSERT(report.clean());
    const std::uint64_t violations = stack_.validator().finish();
    for (const Violation& violation : stack_.validator().violations()) {
      RC_LOG() << stack_.validator().describe(violation) << "\n";
    }
    RC_ASSERT(violations == 0U);
    RC_ASSERT(stack_.device().findings().empty());
  }

 private:
  struct CapturedGraph {
    GraphId id;
    properties::ModelOp op;
  };

  Stack stack_;
  Facing facing_;
  sim::FiberEnv env_;
  TheEngine engine_;
  properties::EngineHostModel host_;
  std::uint32_t epoch_ = 0;
  std::vector<Slot> slots_;
  std::vector<std::optional<CapturedGraph>> graphs_;
  std::map<properties::BuiltinKernel, ProgramId> programs_;
  std::vector<BufferId> stale_;
  std::set<std::uint64_t> fire_and_forget_;
  std::vector<SubmissionId> fire_and_forget_ids_;
  std::set<std::uint64_t> surfaced_;
  std::map<std::uint64_t, SubmissionFate> terminal_fates_;
};

using ModelCommand = rc::state::Command<Model, Sut>;

std::size_t pick(const std::vector<std::size_t>& candidates) {
  RC_PRE(!candidates.empty());
  return candidates[*rc::gen::inRange<std::size_t>(0, candidates.size())];
}

bool live_slot(const Model& model, std::size_t slot) { return slot < model.slots.size() && model.slots[slot].live; }
bool live_graph(const Model& model, std::size_t graph) { return graph < model.graphs.size() && model.graphs[graph]; }

struct Import : ModelCommand {
  std::vector<std::uint64_t> sizes;
  std::uint8_t value = *rc::gen::arbitrary<std::uint8_t>();
  Import() {
    const std::size_t count = *rc::gen::inRange<std::size_t>(1, 3);
    for (std::size_t i = 0; i < count; ++i) sizes.push_back(*rc::gen::elementOf(kSizes));
  }
  void checkPreconditions(const Model& model) const override {
    RC_PRE(model.live_slots().size() + sizes.size() <= kBuffersMax);
  }
  void apply(Model& model) const override {
    for (std::uint64_t bytes : sizes) model.slots.push_back(Model::Slot{true, bytes});
  }
  void run(const Model&, Sut& sut) const override {
    sut.import(sizes, value);
    sut.check_clean();
  }
  void show(std::ostream& os) const override {
    os << "import " << sizes.size() << " buffers (";
    for (std::size_t i = 0; i < sizes.size(); ++i) os << (i == 0 ? "" : ", ") << sizes[i] << " bytes";
    os << ") from pattern " << int{value};
  }
};

// The commands that name one live buffer.
struct OnSlot : ModelCommand {
  std::size_t slot;
  explicit OnSlot(const Model& model) : slot(pick(model.live_slots())) {}
  void checkPreconditions(const Model& model) const override {
    const bool live = live_slot(model, slot);  // RC_PRE would not short-circuit
    RC_PRE(live);
  }
};

struct Write : OnSlot {
  std::uint64_t offset = *rc::gen::inRange<std::uint64_t>(0, 256);
  std::uint8_t value = *rc::gen::arbitrary<std::uint8_t>();
  using OnSlot::OnSlot;
  void apply(Model&) const override {}
  void run(const Model&, Sut& sut) const override {
    sut.write(slot, offset, value);
    sut.check_clean();
  }
  void show(std::ostream& os) const override {
    os << "write buffer " << slot << " from offset " << offset << " with pattern " << int{value};
  }
};

struct Read : OnSlot {
  using OnSlot::OnSlot;
  void apply(Model&) const override {}
  void run(const Model&, Sut& sut) const override {
    (void)sut.read(slot);
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "read buffer " << slot; }
};

struct Launch : OnSlot {
  std::uint8_t value = *rc::gen::arbitrary<std::uint8_t>();
  bool dry = *rc::gen::weightedElement<bool>({{3, false}, {1, true}});
  using OnSlot::OnSlot;
  void apply(Model&) const override {}
  void run(const Model&, Sut& sut) const override {
    sut.launch(slot, value, dry ? LaunchMode::DryRun : LaunchMode::Normal, false);
    sut.check_clean();
  }
  void show(std::ostream& os) const override {
    os << (dry ? "dry-run launch" : "launch") << " fill of buffer " << slot << " with " << int{value}
       << " (fire and forget)";
  }
};

struct Submit : OnSlot {
  std::size_t other = *rc::gen::inRange<std::size_t>(0, kBuffersMax * 4);
  std::uint8_t value = *rc::gen::arbitrary<std::uint8_t>();
  std::uint8_t kind = *rc::gen::inRange<std::uint8_t>(0, 6);
  bool wait = *rc::gen::arbitrary<bool>();
  using OnSlot::OnSlot;
  void apply(Model&) const override {}
  void run(const Model& model, Sut& sut) const override {
    const std::size_t source = other < model.slots.size() && model.slots[other].live ? other : slot;
    sut.submit(slot, source, value, kind, wait);
    sut.check_clean();
  }
  void show(std::ostream& os) const override {
    const char* names[] = {"upload", "zero", "copy"};
    os << "submit " << names[kind % 3] << " into buffer " << slot << " (source " << other << ", value " << int{value}
       << ", queue " << kind % kQueues << (wait ? ", waited" : "") << ")";
  }
};

struct Release : OnSlot {
  using OnSlot::OnSlot;
  void apply(Model& model) const override { model.slots[slot].live = false; }
  void run(const Model&, Sut& sut) const override {
    sut.release(slot);
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "release buffer " << slot; }
};

struct Capture : OnSlot {
  std::uint8_t value = *rc::gen::arbitrary<std::uint8_t>();
  using OnSlot::OnSlot;
  void checkPreconditions(const Model& model) const override {
    OnSlot::checkPreconditions(model);
    RC_PRE(model.live_graphs().size() < kGraphsMax);
  }
  void apply(Model& model) const override { model.graphs.push_back(true); }
  void run(const Model&, Sut& sut) const override {
    sut.capture(slot, value);
    sut.check_clean();
  }
  void show(std::ostream& os) const override {
    os << "capture a graph that fills buffer " << slot << " with " << int{value};
  }
};

struct OnGraph : ModelCommand {
  std::size_t graph;
  explicit OnGraph(const Model& model) : graph(pick(model.live_graphs())) {}
  void checkPreconditions(const Model& model) const override {
    const bool live = live_graph(model, graph);
    RC_PRE(live);
  }
};

struct Replay : OnGraph {
  std::uint8_t queue = *rc::gen::inRange<std::uint8_t>(0, kQueues);
  using OnGraph::OnGraph;
  void apply(Model&) const override {}
  void run(const Model&, Sut& sut) const override {
    sut.replay(graph, queue);
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "replay graph " << graph << " on queue " << int{queue}; }
};

struct DestroyGraph : OnGraph {
  using OnGraph::OnGraph;
  void apply(Model& model) const override { model.graphs[graph] = false; }
  void run(const Model&, Sut& sut) const override {
    sut.destroy_graph(graph);
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "destroy graph " << graph; }
};

struct Flush : ModelCommand {
  bool sync = *rc::gen::arbitrary<bool>();
  void apply(Model&) const override {}
  void run(const Model&, Sut& sut) const override {
    if (sync) {
      sut.sync();
    } else {
      sut.flush();
    }
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << (sync ? "sync" : "flush"); }
};

struct Progress : ModelCommand {
  void apply(Model&) const override {}
  void run(const Model&, Sut& sut) const override {
    sut.progress();
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "progress, then poll every fire-and-forget submission"; }
};

struct LoseDevice : OnSlot {
  using OnSlot::OnSlot;
  void apply(Model&) const override {}
  void run(const Model&, Sut& sut) const override {
    sut.lose_device(slot);
    sut.check_clean();
  }
  void show(std::ostream& os) const override { os << "launch the faulting kernel on buffer " << slot << ", then sync"; }
};

auto engine_commands() {
  return rc::state::gen::execOneOfWithArgs<Import, Import, Write, Read, Read, Launch, Launch, Launch, Submit, Submit,
                                           Release, Capture, Replay, DestroyGraph, Flush, Progress, LoseDevice>();
}

using Commands = rc::state::Commands<ModelCommand>;

void run_commands(const properties::RunConfig& config, traces::TraceSink& sink, const SutOptions& options,
                  const Commands& commands) {
  Sut sut(config, sink, options);
  rc::state::runAll(commands, Model{}, sut);
  sut.teardown();
}

// One property case: on failure, the same commands run again into a trace file (model_trace.h).
void check_engine_model(const std::string& name, const SutOptions& options) {
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const Commands commands = *rc::state::gen::commands(Model{}, engine_commands());
  const properties::RunConfig config = model_support::model_config(seed, model_plan());
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

RC_GTEST_PROP(EngineModel, CarefulUseUnderFaultsBreaksNoInvariant, ()) {
  check_engine_model("EngineModel.CarefulUseUnderFaultsBreaksNoInvariant", SutOptions{});
}

// The failure path, shown on a planted bug: the engine takes a pending fence as complete (EngineFacing,
// EngineBug::ReleaseBeforeFence). The property must fail; the shrunk case must be written as a trace that
// holds the Validator's report of the bug and that `quiesce replay` re-executes faithfully.
TEST(EngineModelTrace, APlantedBugIsWrittenAsAShrunkTraceThatReplays) {
  const std::string name = "EngineModelTrace.planted-release-before-fence";
  const std::filesystem::path path = model_support::trace_directory() / (name + ".qtrace");
  std::filesystem::remove(path);
  SutOptions planted;
  planted.bug = properties::EngineBug::ReleaseBeforeFence;
  const bool held = rc::check("the engine model with a planted bug", [&] { check_engine_model(name, planted); });
  ASSERT_FALSE(held) << "the planted bug went unnoticed";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  traces::TraceResult<traces::Trace> trace = traces::load_trace(path.string());
  ASSERT_TRUE(trace.ok()) << trace.error().message();
  bool violation = false;
  for (const traces::Record& record : trace->records) {
    violation = violation || record.kind == traces::RecordKind::Violation;
  }
  EXPECT_TRUE(violation) << "the trace does not hold the failure";
  traces::TraceResult<properties::ReplayReport> replayed = properties::replay_trace(trace.value());
  ASSERT_TRUE(replayed.ok()) << replayed.error().message();
  EXPECT_TRUE(replayed->faithful()) << "divergence at record "
                                    << (replayed->divergence ? replayed->divergence->record_index : 0) << ": expected "
                                    << (replayed->divergence ? replayed->divergence->expected : "") << ", actual "
                                    << (replayed->divergence ? replayed->divergence->actual : "");
}

// The model's checks can fail: every engine mutant (mutants.h, EngineBug) makes the property fail.
class EveryEngineBug : public ::testing::TestWithParam<properties::EngineBug> {};

TEST_P(EveryEngineBug, MakesTheEngineModelFail) {
  SutOptions planted;
  planted.bug = GetParam();
  const std::string name = "EngineModelMutant." + std::string(properties::to_string(planted.bug));
  const bool held = rc::check("the engine model with engine bug " + std::string(properties::to_string(planted.bug)),
                              [&] { check_engine_model(name, planted); });
  EXPECT_FALSE(held) << "engine bug " << properties::to_string(planted.bug) << " went unnoticed";
  std::filesystem::remove(model_support::trace_directory() / (name + ".qtrace"));
}

INSTANTIATE_TEST_SUITE_P(EngineBugs, EveryEngineBug,
                         ::testing::Values(properties::EngineBug::LoseDeferredError,
                                           properties::EngineBug::DeferredErrorTwice,
                                           properties::EngineBug::DryRunWrites,
                                           properties::EngineBug::ReleaseBeforeFence,
                                           properties::EngineBug::RetryIndeterminateSubmit));

}  // namespace
}  // namespace quiesce
