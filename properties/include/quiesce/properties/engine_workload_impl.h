// The engine workload's driver (see engine_workload.h): one seeded operation at a time through the engine.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <set>
#include <string_view>
#include <utility>

#include "quiesce/core/seeded_bytes.h"
#include "quiesce/properties/engine_workload.h"

namespace quiesce::properties {
namespace engine_workload_detail {

enum class Step : std::uint8_t {
  Import, Write, Read, Launch, Batch, Release, Capture, Replay, DestroyGraph, Profile, Flush, Sync,
  AccessViolation, Memory, Progress,
};

// Step weights, out of their sum: launches and batches dominate, rare paths still come up in 1,000 steps.
inline constexpr std::array<std::pair<Step, std::uint32_t>, 15> kStepWeights{{
    {Step::Import, 10}, {Step::Write, 7}, {Step::Read, 12}, {Step::Launch, 20}, {Step::Batch, 14},
    {Step::Release, 8}, {Step::Capture, 3}, {Step::Replay, 5}, {Step::DestroyGraph, 2}, {Step::Profile, 3},
    {Step::Flush, 5}, {Step::Sync, 3}, {Step::AccessViolation, 1}, {Step::Memory, 2}, {Step::Progress, 3},
}};
inline constexpr std::uint32_t kStepWeightTotal = [] {
  std::uint32_t total = 0;
  for (const auto& [kind, weight] : kStepWeights) total += weight;
  return total;
}();

inline constexpr std::uint64_t kProgramResidentBytes = 4096;
inline constexpr std::uint32_t kGraphsMax = 4;
inline constexpr std::uint64_t kLossHeavyOneIn = 8;
inline constexpr std::size_t kImportsPerCallMax = 3;  // buffers one import step asks for at most

// EngineT is quiesce::Engine<B, E>, or a type derived from it that hides some of its calls (the engine
// mutants of properties/src/mutants.cc); `extra` goes to its constructor after the engine options.
template <Backend B, Env E, class EngineT = Engine<B, E>>
class EngineWorkload {
 public:
  template <class... Extra>
  EngineWorkload(B& stack, E& env, const EngineWorkloadOptions& options, Digest& digest, Extra&&... extra)
      : engine_(stack, env, engine_options(options), std::forward<Extra>(extra)...),
        options_(options),
        digest_(digest),
        prng_(Prng(options.seed).derive("properties.engine_workload")),
        model_([this](SubmissionId submission) { return engine_.poll(submission); }) {
    assert(options.buffer_bytes_max >= 16 && options.buffer_bytes_max % 4 == 0);
    // Swarm over the workload too: one seed in kLossHeavyOneIn launches the faulting kernel often, so that
    // device loss meets releases, deferred failures and recoveries in the same run.
    if (options_.loss_heavy.numerator != 0 && prng_.below(kLossHeavyOneIn) == 0) {
      options_.device_fault = options_.loss_heavy;
    }
  }

  EngineWorkloadResult run() {
    const Status opened = engine_.open();
    if (!opened.ok()) {
      result_.problems.push_back("the engine did not open: " + describe_error(opened.error()));
      return std::move(result_);
    }
    for (std::uint32_t index = 0; index < options_.operations; ++index) {
      operation_ = index;
      step();
      notice_epoch();
      result_.operations++;
    }
    liveness();
    return std::move(result_);
  }

 private:
  struct LiveBuffer {
    BufferId id;
    std::uint64_t bytes = 0;
  };
  struct LiveGraph {
    GraphId id;
    std::vector<ModelOp> ops;
  };

  static SubmitProgress submit_progress_of_seed(std::uint64_t seed) {
    std::uint64_t state = seed ^ label_hash("properties.engine_workload.submit_progress");
    return splitmix64(state) % 4 == 0 ? SubmitProgress::WhenNeeded : SubmitProgress::EverySubmit;
  }

  static EngineOptions engine_options(const EngineWorkloadOptions& options) {
    EngineOptions engine;
    engine.queue_count = options.queues;
    engine.memory_budget_bytes = options.memory_budget_bytes;
    engine.invocation_base = options.seed << 24U;
    engine.host_access_timeout_ns = options.wait_timeout_ns;
    engine.submit_progress = options.submit_progress.value_or(submit_progress_of_seed(options.seed));
    return engine;
  }

  void step() {
    std::uint64_t draw = prng_.below(kStepWeightTotal);
    Step chosen = Step::Progress;
    for (const auto& [kind, weight] : kStepWeights) {
      if (draw < weight) {
        chosen = kind;
        break;
      }
      draw -= weight;
    }
    digest_.add(chosen);
    switch (chosen) {
      case Step::Import: return import();
      case Step::Write: return write();
      case Step::Read: return read();
      case Step::Launch: return launch();
      case Step::Batch: return batch();
      case Step::Release: return release();
      case Step::Capture: return capture();
      case Step::Replay: return replay();
      case Step::DestroyGraph: return destroy_graph();
      case Step::Profile: return profile();
      case Step::Flush: return take(engine_.flush());
      case Step::Sync: return take(engine_.sync(options_.wait_timeout_ns));
      case Step::AccessViolation: return access_violation();
      case Step::Memory: return memory();
      case Step::Progress: return engine_.progress();
    }
  }

  // After a device loss the engine is on a new epoch: nothing of the old one exists any more.
  void notice_epoch() {
    const std::uint32_t epoch = engine_.epoch();
    if (epoch == epoch_) return;
    epoch_ = epoch;
    result_.epochs_seen++;
    buffers_.clear();
    graphs_.clear();
    model_.clear();
    programs_.fill(ProgramId{});
    digest_.add(epoch);
  }

  void absorb(const Error& error) {
    result_.errors_absorbed++;
    digest_.add(error.kind);
  }

  std::optional<ProgramId> program(BuiltinKernel kernel) {
    ProgramId& slot = programs_[static_cast<std::size_t>(kernel)];
    if (slot.valid() && slot.epoch == epoch_) return slot;
    ArtifactRef artifact;
    artifact.kernel_name = kernel_name(kernel);
    artifact.resident_bytes = options_.program_resident_bytes;
    Result<ProgramId> loaded = engine_.load_program(artifact);
    if (!loaded.ok()) {
      absorb(loaded.error());
      return std::nullopt;
    }
    slot = loaded.value();
    return slot;
  }

  // `count` seeded bytes (core/seeded_bytes.h) of one draw into `data`, as the raw workload's payloads are:
  // as varied as a draw per byte, a fraction of the cost, and a trace stores them as their seed.
  void fill_random(std::vector<std::byte>& data, std::uint64_t count) {
    data.resize(count);
    fill_seeded_bytes(prng_.next(), data);
  }

  // The same bytes (the same draw) in `storage`, which only grows: refilling it stores each byte once and
  // allocates nothing in the steady state. Valid until `storage` is filled again.
  std::span<const std::byte> random_bytes_in(std::vector<std::byte>& storage, std::uint64_t count) {
    if (storage.size() < count) storage.resize(count);
    const std::span<std::byte> bytes(storage.data(), count);
    fill_seeded_bytes(prng_.next(), bytes);
    return bytes;
  }

  std::uint64_t random_size() { return 4 * prng_.range(2, options_.buffer_bytes_max / 4); }

  // A buffer index, distinct from `other` when given; nullopt when none fits.
  std::optional<std::size_t> pick_buffer(std::optional<std::size_t> other = std::nullopt) {
    const std::size_t candidates = buffers_.size() - (other.has_value() ? 1 : 0);
    if (buffers_.empty() || candidates == 0) return std::nullopt;
    std::size_t index = prng_.below(candidates);
    if (other.has_value() && index >= *other) ++index;
    return index;
  }

  void import() {
    if (buffers_.size() >= options_.buffers_max) return;
    const std::uint64_t count =
        prng_.range(1, std::min<std::uint64_t>(kImportsPerCallMax, options_.buffers_max - buffers_.size()));
    std::array<std::span<const std::byte>, kImportsPerCallMax> contents_storage;
    const std::span<std::span<const std::byte>> contents(contents_storage.data(), count);
    for (std::uint64_t index = 0; index < count; ++index) {
      const std::uint64_t size = random_size();
      contents[index] = random_bytes_in(import_storage_[index], size);
    }
    std::vector<std::array<std::span<const std::byte>, 1>> segments;
    for (const auto& content : contents) segments.push_back({content});
    std::vector<ImportRequest> requests;
    for (std::size_t index = 0; index < contents.size(); ++index) {
      requests.push_back(ImportRequest{BufferRequest{contents[index].size(), kAllBufferUsage}, ByteSource{segments[index]}});
    }
    result_.imports++;
    Result<std::vector<BufferId>> imported = engine_.import_buffers(requests);
    if (!imported.ok()) {
      result_.imports_failed++;
      return absorb(imported.error());
    }
    for (std::size_t index = 0; index < imported->size(); ++index) {
      const BufferId id = imported->at(index);
      buffers_.push_back(LiveBuffer{id, contents[index].size()});
      model_.add(id.serial, contents[index].size(), contents[index]);
    }
  }

  void write() {
    const std::optional<std::size_t> index = pick_buffer();
    if (!index) return;
    const LiveBuffer buffer = buffers_[*index];
    const std::uint64_t offset = prng_.below(buffer.bytes);
    const std::span<const std::byte> data = random_bytes_in(write_storage_, prng_.range(1, buffer.bytes - offset));
    const std::array<std::span<const std::byte>, 1> segments{data};
    result_.writes++;
    const Status written = engine_.write(buffer.id, offset, ByteSource{segments});
    model_.host_write(buffer.id.serial, offset, data, written.ok());
    if (!written.ok()) absorb(written.error());
  }

  static constexpr std::string_view kDryRunCheck = "after a dry run, which must change no bytes (R18): ";

  void read_and_check(const LiveBuffer& buffer, std::uint64_t offset, std::uint64_t bytes,
                      std::string_view context = {}) {
    // A successful read stores every byte of its sink (the validator checks it), so the reused storage
    // needs no clearing: what was there before never reaches the digest or the check.
    if (read_storage_.size() < bytes) read_storage_.resize(bytes);
    const std::span<std::byte> data(read_storage_.data(), bytes);
    const std::array<std::span<std::byte>, 1> segments{data};
    const Status read_status = engine_.read(buffer.id, offset, ByteSink{segments});
    if (!read_status.ok()) return absorb(read_status.error());
    result_.reads_checked++;
    digest_.add(hash_bytes(data));
    const std::optional<std::string> mismatch = model_.check_read(buffer.id.serial, offset, data, result_.bytes_checked);
    if (mismatch) {
      result_.data_failures.push_back("seed " + std::to_string(options_.seed) + " operation " +
                                      std::to_string(operation_) + ": " + std::string(context) + *mismatch);
    }
  }

  void read() {
    const std::optional<std::size_t> index = pick_buffer();
    if (!index) return;
    const LiveBuffer buffer = buffers_[*index];
    const std::uint64_t offset = prng_.coin() ? 0 : prng_.below(buffer.bytes);
    read_and_check(buffer, offset, prng_.range(1, buffer.bytes - offset));
  }

  // `op` back to a fresh ModelOp, keeping its vectors' storage: planning reuses ops from step to step.
  static void reset(ModelOp& op) {
    op.kind = OpKind::Launch;
    op.kernel = BuiltinKernel::Fill;
    op.mode = LaunchMode::Normal;
    op.buffers.clear();
    op.source_offset = 0;
    op.target_offset = 0;
    op.bytes = 0;
    op.data.clear();
  }

  // Plans one kernel launch over distinct live buffers, with the access modes of the kernel's ABI, into
  // `op`; false when too few buffers are live.
  bool plan_launch(bool allow_fault, ModelOp& op) {
    reset(op);  // a launch
    if (allow_fault && prng_.chance(options_.device_fault)) {
      op.kernel = BuiltinKernel::Fault;
    } else {
      constexpr std::array<BuiltinKernel, 5> kKernels{BuiltinKernel::Fill, BuiltinKernel::Copy, BuiltinKernel::Saxpy,
                                                      BuiltinKernel::Checksum, BuiltinKernel::Delay};
      op.kernel = kKernels[prng_.below(kKernels.size())];
    }
    const std::size_t binding_count = op.kernel == BuiltinKernel::Delay                                  ? 0
                                      : op.kernel == BuiltinKernel::Fill || op.kernel == BuiltinKernel::Fault ? 1
                                                                                                           : 2;
    std::optional<std::size_t> first;
    for (std::size_t binding = 0; binding < binding_count; ++binding) {
      const std::optional<std::size_t> index = pick_buffer(first);
      if (!index) return false;
      if (!first) first = index;
      op.buffers.push_back(buffers_[*index].id.serial);
    }
    if (op.kernel == BuiltinKernel::Fill || op.kernel == BuiltinKernel::Saxpy) {
      fill_random(op.data, 4);
    } else if (op.kernel == BuiltinKernel::Delay) {
      const std::uint64_t delay_ns = prng_.range(1'000, 200'000);
      for (unsigned shift = 0; shift < 64; shift += 8) op.data.push_back(static_cast<std::byte>(delay_ns >> shift));
    }
    if (op.kernel != BuiltinKernel::Fault && prng_.below(10) == 0) op.mode = LaunchMode::DryRun;
    return true;
  }

  static Access binding_access(BuiltinKernel kernel, std::size_t binding) {
    switch (kernel) {
      case BuiltinKernel::Fill: return Access::Write;
      case BuiltinKernel::Copy:
      case BuiltinKernel::Checksum: return binding == 0 ? Access::Read : Access::Write;
      case BuiltinKernel::Saxpy: return binding == 0 ? Access::Read : Access::ReadWrite;
      case BuiltinKernel::Delay:
      case BuiltinKernel::Fault: return Access::Read;
    }
    return Access::Read;
  }

  BufferId id_of(std::uint64_t serial) const { return BufferId{serial, epoch_}; }

  // Engine ops for model ops, into encoded_ (false: one could not be encoded). The launches' binding
  // arrays live in bindings_, reserved for the whole call first so that the spans into it stay valid until
  // the next encode; both are reused, so that encoding allocates nothing in the steady state.
  bool encode(std::span<const ModelOp> ops) {
    encoded_.clear();
    bindings_.clear();
    std::size_t bindings_total = 0;
    for (const ModelOp& op : ops) bindings_total += op.kind == OpKind::Launch ? op.buffers.size() : 0;
    bindings_.reserve(bindings_total);
    for (const ModelOp& op : ops) {
      switch (op.kind) {
        case OpKind::Launch: {
          const std::optional<ProgramId> loaded = program(op.kernel);
          if (!loaded) return false;
          const std::size_t first = bindings_.size();
          for (std::size_t index = 0; index < op.buffers.size(); ++index) {
            bindings_.push_back(EngineBinding{id_of(op.buffers[index]), binding_access(op.kernel, index)});
          }
          const std::span<const EngineBinding> list(bindings_.data() + first, op.buffers.size());
          encoded_.push_back(EngineOp::launch(*loaded, LaunchDims{}, list, op.data, op.mode));
          break;
        }
        case OpKind::Copy:
          encoded_.push_back(EngineOp::copy(id_of(op.buffers[0]), op.source_offset, id_of(op.buffers[1]),
                                           op.target_offset, op.bytes));
          break;
        case OpKind::Upload:
          encoded_.push_back(EngineOp::upload(op.data, id_of(op.buffers[0]), op.target_offset));
          break;
        case OpKind::Zero:
          encoded_.push_back(EngineOp::zero(id_of(op.buffers[0]), op.target_offset, op.bytes));
          break;
        case OpKind::Replay:
          return false;
      }
    }
    return true;
  }

  void launch() {
    ModelOp& op = launch_op_;
    if (!plan_launch(true, op)) return;
    if (!encode(std::span<const ModelOp>(&op, 1))) return;
    const EngineOp& launch_op = encoded_.front();
    Result<SubmissionId> launched =
        engine_.launch(prng_.below(options_.queues), launch_op.program, launch_op.dims, launch_op.bindings,
                       launch_op.data, launch_op.mode);
    result_.launches++;
    if (op.mode == LaunchMode::DryRun) result_.dry_runs++;
    if (op.kernel == BuiltinKernel::Fault) result_.faults_planted++;
    if (!launched.ok()) return absorb(launched.error());
    note_fire_and_forget(launched.value());
    model_.apply(op, launched.value());
    if (op.mode == LaunchMode::DryRun) check_dry_run(op);
  }

  // R18: a dry run changes no bytes. Right after one, every buffer it binds for writing is read whole (the
  // read waits for the dry run) and must still hold every byte the model knows.
  void check_dry_run(const ModelOp& op) {
    for (std::size_t index = 0; index < op.buffers.size(); ++index) {
      if (binding_access(op.kernel, index) == Access::Read) continue;
      const auto found = std::find_if(buffers_.begin(), buffers_.end(),
                                      [&](const LiveBuffer& buffer) { return buffer.id.serial == op.buffers[index]; });
      if (found != buffers_.end()) read_and_check(*found, 0, found->bytes, kDryRunCheck);
    }
  }

  void note_fire_and_forget(SubmissionId submission) {
    // Serials only grow, so this is an append; the insertion keeps the serials sorted whatever they do.
    const auto later = std::upper_bound(fire_and_forget_serials_.begin(), fire_and_forget_serials_.end(),
                                        submission.serial);
    fire_and_forget_serials_.insert(later, submission.serial);
    fire_and_forget_ids_.push_back(submission);
  }

  bool is_fire_and_forget(std::uint64_t serial) const {
    return std::binary_search(fire_and_forget_serials_.begin(), fire_and_forget_serials_.end(), serial);
  }

  // Plans one upload, zero or copy into `op`; false when too few buffers are live.
  bool plan_transfer(ModelOp& op) {
    reset(op);
    const std::uint64_t kind = prng_.below(3);
    const std::optional<std::size_t> target = pick_buffer();
    if (!target) return false;
    const LiveBuffer& buffer = buffers_[*target];
    op.target_offset = prng_.below(buffer.bytes);
    op.bytes = prng_.range(1, buffer.bytes - op.target_offset);
    if (kind == 0) {
      op.kind = OpKind::Upload;
      fill_random(op.data, op.bytes);
      op.buffers = {buffer.id.serial};
    } else if (kind == 1) {
      op.kind = OpKind::Zero;
      op.buffers = {buffer.id.serial};
    } else {
      const std::optional<std::size_t> source = pick_buffer(target);
      if (!source) return false;
      op.kind = OpKind::Copy;
      const LiveBuffer& from = buffers_[*source];
      op.bytes = prng_.range(1, std::min(from.bytes, buffer.bytes - op.target_offset));
      op.source_offset = prng_.below(from.bytes - op.bytes + 1);
      op.buffers = {from.id.serial, buffer.id.serial};
    }
    return true;
  }

  // Plans 1 to count_max ops into `ops`, reusing the ops (and their storage) it holds already.
  void plan_ops(std::uint64_t count_max, std::vector<ModelOp>& ops) {
    std::size_t planned = 0;
    const std::uint64_t count = prng_.range(1, count_max);
    for (std::uint64_t index = 0; index < count; ++index) {
      if (ops.size() == planned) ops.emplace_back();
      ModelOp& op = ops[planned];
      if (prng_.coin() ? plan_launch(false, op) : plan_transfer(op)) planned++;
    }
    ops.resize(planned);
  }

  void batch() {
    std::vector<ModelOp>& ops = batch_ops_;
    plan_ops(4, ops);
    if (ops.empty()) return;
    if (!encode(ops)) return;
    SubmitRequest request;
    request.timing = prng_.below(3) == 0;
    const std::array<SubmissionId, 1> dependency{last_submission_};
    if (last_submission_.valid() && prng_.below(4) == 0) request.depends_on = dependency;
    Result<SubmissionId> submitted = engine_.submit(prng_.below(options_.queues), encoded_, request);
    result_.batches++;
    if (!submitted.ok()) return absorb(submitted.error());
    last_submission_ = submitted.value();
    for (const ModelOp& op : ops) model_.apply(op, submitted.value());
    if (prng_.below(3) != 0) return;
    Result<SubmissionReceipt> receipt = engine_.wait(submitted.value(), options_.wait_timeout_ns);
    if (!receipt.ok()) return absorb(receipt.error());
    digest_.add(receipt->state);
    if (receipt->timing.has_value()) {
      result_.receipts_timed++;
      if (!request.timing && !profile_.has_value()) {
        result_.problems.push_back("a receipt carried timing that was never requested");
      }
      if (receipt->timing->finished_ns < receipt->timing->started_ns) {
        result_.problems.push_back("a timing receipt finished before it started");
      }
    }
  }

  void release() {
    const std::optional<std::size_t> index = pick_buffer();
    if (!index) return;
    const LiveBuffer buffer = buffers_[*index];
    buffers_.erase(buffers_.begin() + static_cast<std::ptrdiff_t>(*index));
    model_.remove(buffer.id.serial);
    result_.releases++;
    const Status released = engine_.release(buffer.id);
    if (!released.ok()) absorb(released.error());
  }

  void capture() {
    if (graphs_.size() >= kGraphsMax) return;
    const QueueIndex queue = prng_.below(options_.queues);
    const Status prepared = engine_.prepare_graph(queue);
    if (!prepared.ok()) return absorb(prepared.error());
    std::vector<ModelOp> ops;
    plan_ops(3, ops);
    std::erase_if(ops, [](const ModelOp& op) { return op.mode == LaunchMode::DryRun; });
    if (ops.empty()) return;
    if (!encode(ops)) return;
    Result<GraphId> graph = engine_.capture_graph(queue, encoded_);
    if (!graph.ok()) return absorb(graph.error());
    result_.graphs_captured++;
    graphs_.push_back(LiveGraph{graph.value(), std::move(ops)});
  }

  void replay() {
    if (graphs_.empty()) return;
    const LiveGraph& graph = graphs_[prng_.below(graphs_.size())];
    Result<SubmissionId> replayed = engine_.replay(graph.id, prng_.below(options_.queues));
    if (!replayed.ok()) return absorb(replayed.error());
    result_.replays++;
    note_fire_and_forget(replayed.value());
    for (const ModelOp& op : graph.ops) model_.apply(op, replayed.value());
  }

  void destroy_graph() {
    if (graphs_.empty()) return;
    const std::size_t index = prng_.below(graphs_.size());
    const Status destroyed = engine_.destroy_graph(graphs_[index].id);
    graphs_.erase(graphs_.begin() + static_cast<std::ptrdiff_t>(index));
    if (!destroyed.ok()) absorb(destroyed.error());
  }

  void profile() {
    if (!profile_.has_value()) {
      Result<ProfileToken> token = engine_.start_profile();
      if (!token.ok()) return absorb(token.error());
      profile_ = token.value();
      return;
    }
    Result<ProfileDuration> duration = engine_.end_profile(*profile_, options_.wait_timeout_ns);
    profile_.reset();
    result_.profiles++;
    if (!duration.ok()) {
      result_.profiles_unavailable++;
      return absorb(duration.error());
    }
    // R15: a duration comes only from timing receipts, so a window that answered has submissions in it.
    if (duration->submissions == 0) result_.problems.push_back("a profile window answered with no submission");
    digest_.add(duration->busy_ns);
  }

  void take(const FlushResult& flushed) {
    result_.flushes++;
    for (const AsyncFailure& failure : flushed.failures) note_failure(failure);
    if (!flushed.completion.ok()) absorb(flushed.completion.error());
  }

  // R14: every asynchronous failure belongs to fire-and-forget work and surfaces exactly once.
  void note_failure(const AsyncFailure& failure) {
    result_.failures_surfaced++;
    digest_.add(failure.cause);
    if (!surfaced_.insert(failure.submission.serial).second) {
      result_.problems.push_back("the failure of submission #" + std::to_string(failure.submission.serial) +
                                 " surfaced more than once");
    }
    if (!is_fire_and_forget(failure.submission.serial)) {
      result_.problems.push_back("a failure surfaced for submission #" + std::to_string(failure.submission.serial) +
                                 ", which was not fire-and-forget work");
    }
  }

  // R16: a launch whose access mode the buffer's usage forbids is refused before the backend sees it.
  void access_violation() {
    const std::optional<ProgramId> fill = program(BuiltinKernel::Fill);
    if (!fill) return;
    Result<BufferId> read_only =
        engine_.create_buffer(BufferRequest{64, BufferUsage::ProgramInput | BufferUsage::TransferSource});
    if (!read_only.ok()) return absorb(read_only.error());
    const std::uint64_t submissions_before = engine_.counters().submissions;
    const EngineBinding binding{read_only.value(), Access::Write};
    const std::array<std::byte, 4> parameters{};
    Result<SubmissionId> launched = engine_.launch(0, *fill, LaunchDims{}, std::span<const EngineBinding>(&binding, 1),
                                                   parameters);
    // Another refusal (the device was lost meanwhile, so the id is stale) is fine; a submission is not.
    if (launched.ok() || engine_.counters().submissions != submissions_before) {
      result_.problems.push_back("a launch that writes through a read-only binding reached the backend");
    } else if (launched.error().kind == ErrorKind::PermissionDenied) {
      result_.access_violations_refused++;
    } else {
      absorb(launched.error());
    }
    const Status released = engine_.release(read_only.value());
    if (!released.ok()) absorb(released.error());
  }

  void memory() {
    const EngineMemory memory = engine_.memory_usage();
    if (memory.charged_bytes + memory.quarantined_bytes > memory.capacity_bytes ||
        memory.charged_bytes_max < memory.charged_bytes) {
      result_.problems.push_back("the memory ledger is over its capacity or below its own high-water mark");
    }
  }

  void liveness() {
    if (options_.on_liveness) options_.on_liveness();
    take(engine_.sync(options_.liveness_timeout_ns));
    notice_epoch();
    result_.liveness = engine_.drain(options_.liveness_timeout_ns);
    notice_epoch();
    // Every byte the model still knows is checked once more, now that nothing is injected.
    for (const LiveBuffer& buffer : std::vector<LiveBuffer>(buffers_)) read_and_check(buffer, 0, buffer.bytes);
    take(engine_.flush());
    // R14, the other half: fire-and-forget work that ended failed, partial or lost must have surfaced.
    std::vector<std::pair<SubmissionId, SubmissionFate>> must_surface;
    for (const SubmissionId submission : fire_and_forget_ids_) {
      const SubmissionFate fate = engine_.poll(submission);
      if (fate == SubmissionFate::Failed || fate == SubmissionFate::Partial || fate == SubmissionFate::Lost) {
        must_surface.emplace_back(submission, fate);
      }
    }
    result_.engine = engine_.counters();
    result_.shutdown = engine_.shutdown(options_.liveness_timeout_ns);
    for (const AsyncFailure& failure : result_.shutdown.unsurfaced_failures) note_failure(failure);
    for (const auto& [submission, fate] : must_surface) {
      if (surfaced_.contains(submission.serial)) continue;
      result_.problems.push_back("fire-and-forget submission #" + std::to_string(submission.serial) + " ended " +
                                 std::string(to_string(fate)) + ", and its failure never surfaced");
    }
    digest_.add(result_.shutdown.tally(ResourceKind::Buffers).released);
    digest_.add(result_.shutdown.tally(ResourceKind::Buffers).quarantined);
  }

  EngineT engine_;
  EngineWorkloadOptions options_;
  Digest& digest_;
  Prng prng_;
  EngineHostModel model_;
  EngineWorkloadResult result_;
  std::uint32_t operation_ = 0;
  std::uint32_t epoch_ = 0;
  std::vector<LiveBuffer> buffers_;
  std::vector<LiveGraph> graphs_;
  std::array<ProgramId, 6> programs_{};
  std::optional<ProfileToken> profile_;
  SubmissionId last_submission_;
  std::set<std::uint64_t> surfaced_;
  std::vector<std::uint64_t> fire_and_forget_serials_;  // sorted
  std::vector<SubmissionId> fire_and_forget_ids_;        // in the order they were submitted
  ModelOp launch_op_;                                    // launch()'s op, reused
  std::vector<ModelOp> batch_ops_;                       // batch()'s ops, reused
  std::vector<EngineOp> encoded_;         // encode's output, reused
  std::vector<EngineBinding> bindings_;   // the binding arrays encoded_'s launches point into
  // Payload storage reused from call to call (random_bytes_in), and the sink of read_and_check.
  std::array<std::vector<std::byte>, kImportsPerCallMax> import_storage_;
  std::vector<std::byte> write_storage_;
  std::vector<std::byte> read_storage_;
};

}  // namespace engine_workload_detail

template <Backend B, Env E>
EngineWorkloadResult run_engine_workload(B& stack, E& env, const EngineWorkloadOptions& options, Digest& digest) {
  engine_workload_detail::EngineWorkload<B, E> workload(stack, env, options, digest);
  return workload.run();
}

template <class EngineT, Backend B, Env E, class... Extra>
EngineWorkloadResult run_engine_workload_on(B& stack, E& env, const EngineWorkloadOptions& options, Digest& digest,
                                            Extra&&... extra) {
  engine_workload_detail::EngineWorkload<B, E, EngineT> workload(stack, env, options, digest,
                                                                 std::forward<Extra>(extra)...);
  return workload.run();
}

}  // namespace quiesce::properties
