// The engine workload: a seeded random workload that drives quiesce::Engine over any Backend stack.
//
// It exercises everything the reference engine offers: all-or-nothing imports, explicit writes and reads
// checked against a host model of every byte, fire-and-forget launches of the builtin kernels (fill, copy,
// saxpy, checksum, delay, and rarely `fault`, which loses the device), dry runs, batches with timing on
// several queues with explicit and automatic cross-queue waits, deferred releases, captured graphs and
// their replays, profile windows, flush and sync. Then the liveness phase: the caller's `on_liveness` stops
// fault injection, and the engine must reach quiescence within a bounded virtual time; then shutdown.
//
// The host model knows a byte's value only when every submission that produced it is known to have
// completed: work that failed, was cancelled, was lost or was only partly submitted makes what it wrote
// unknown, never wrong. A read that disagrees with a known byte is a data-check failure.
//
// Use (any Env whose clock is the device's, so that the run is deterministic):
//   sim::Device device(config);
//   faults::Injector<sim::Device> injector(device, plan);
//   Validator<faults::Injector<sim::Device>> stack(ValidatorOptions{}, injector);  // or any stack
//   sim::FiberEnv env(device.clock(), sim::Schedule::from_seed(seed));
//   options.on_liveness = [&] { injector.set_injecting(false); };
//   EngineWorkloadResult result = run_engine_workload(stack, env, options, digest);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "quiesce/core/digest.h"
#include "quiesce/core/engine.h"
#include "quiesce/core/prng.h"
#include "quiesce/properties/kernel_model.h"

namespace quiesce::properties {

struct EngineWorkloadOptions {
  std::uint64_t seed = 1;
  std::uint32_t operations = 1000;
  std::uint32_t queues = 3;
  std::uint32_t buffers_max = 12;
  std::uint64_t buffer_bytes_max = 4096;             // a multiple of 4
  std::uint64_t memory_budget_bytes = 64ULL << 20U;
  std::uint64_t wait_timeout_ns = 50'000'000;        // per blocking wait, virtual
  std::uint64_t liveness_timeout_ns = 600'000'000'000;  // the liveness phase's bound, virtual
  Ratio device_fault = Ratio{1, 3000};               // chance that a launch is the faulting kernel
  std::uint64_t program_resident_bytes = 4096;       // each builtin program's resident bound (R17); a GPU's
                                                     // module image is larger than the simulator's 4096
  Ratio loss_heavy = Ratio{1, 40};  // device_fault of one seed in 8 (workload swarm); {0, 1}: never
  // The engine's SubmitProgress policy; unset: one seed in 4 runs WhenNeeded, chosen by a hash of the seed
  // (no draw of the workload's PRNG, so the other seeds' runs are unchanged).
  std::optional<SubmitProgress> submit_progress;
  std::function<void()> on_liveness;                 // called once when the safety phase ends
};

struct EngineWorkloadResult {
  std::uint64_t operations = 0;
  std::uint64_t imports = 0;
  std::uint64_t imports_failed = 0;
  std::uint64_t writes = 0;
  std::uint64_t reads_checked = 0;
  std::uint64_t bytes_checked = 0;       // known bytes compared with the host model
  std::uint64_t launches = 0;
  std::uint64_t dry_runs = 0;
  std::uint64_t batches = 0;
  std::uint64_t receipts_timed = 0;
  std::uint64_t graphs_captured = 0;
  std::uint64_t replays = 0;
  std::uint64_t releases = 0;
  std::uint64_t profiles = 0;
  std::uint64_t profiles_unavailable = 0;
  std::uint64_t flushes = 0;
  std::uint64_t failures_surfaced = 0;
  std::uint64_t access_violations_refused = 0;
  std::uint64_t faults_planted = 0;      // launches of the faulting kernel
  std::uint64_t epochs_seen = 0;
  std::uint64_t errors_absorbed = 0;     // engine calls that answered an error the workload tolerates
  EngineCounters engine = {};
  ShutdownReport shutdown = {};
  Status liveness = {};                  // the drain after on_liveness
  std::vector<std::string> data_failures;  // a read disagreed with a known byte
  std::vector<std::string> problems;       // a broken engine promise (a failure surfaced twice, ...)

  bool clean() const { return data_failures.empty() && problems.empty() && liveness.ok() && shutdown.clean(); }
};

void print_result(const EngineWorkloadResult& result, std::ostream& out);

// One device command as the host model sees it.
struct ModelOp {
  OpKind kind = OpKind::Launch;
  BuiltinKernel kernel = BuiltinKernel::Fill;
  LaunchMode mode = LaunchMode::Normal;
  std::vector<std::uint64_t> buffers;  // launch: bindings in order; copy: source, target; upload, zero: target
  std::uint64_t source_offset = 0;
  std::uint64_t target_offset = 0;
  std::uint64_t bytes = 0;
  std::vector<std::byte> data;         // launch parameters or upload bytes
};

// The host model: expected bytes, which of them are known, and the submissions they depend on.
class EngineHostModel {
 public:
  using FateOf = std::function<SubmissionFate(SubmissionId)>;
  static constexpr std::size_t kDependenciesMax = 64;

  explicit EngineHostModel(FateOf fate_of) : fate_of_(std::move(fate_of)) {}

  void add(std::uint64_t buffer, std::uint64_t bytes, std::span<const std::byte> content);
  void remove(std::uint64_t buffer);
  void clear();
  bool contains(std::uint64_t buffer) const;
  // The effect of one command of `submission`, applied in issue order.
  void apply(const ModelOp& op, SubmissionId submission);
  // A host write; a failed one may have been applied in part, so its range becomes unknown.
  void host_write(std::uint64_t buffer, std::uint64_t offset, std::span<const std::byte> data, bool succeeded);
  // Compares a successful read with every known byte. Returns a sentence on the first mismatch.
  std::optional<std::string> check_read(std::uint64_t buffer, std::uint64_t offset, std::span<const std::byte> read,
                                        std::uint64_t& known_bytes);

 private:
  struct Content {
    std::vector<std::uint8_t> bytes;
    std::vector<std::uint8_t> known;  // 1: the expected byte is certain once every dependency completed
    std::vector<SubmissionId> depends;
  };
  // Drops completed dependencies; a dependency that will never complete cleanly makes the content unknown.
  // With `final_check`, one that is not yet terminal counts as unknown too.
  void resolve(Content& content, bool final_check);
  void apply_kernel_op(const ModelOp& op);
  void depend(Content& target, const Content* source, SubmissionId submission);

  static constexpr std::size_t kSpareContentsMax = 16;

  FateOf fate_of_;
  std::vector<std::pair<std::uint64_t, Content>> buffers_;  // few buffers: a flat list keeps order stable
  std::vector<Content> spare_;  // storage of removed buffers, reused by add
  Content* find(std::uint64_t buffer);
};

template <Backend B, Env E>
EngineWorkloadResult run_engine_workload(B& stack, E& env, const EngineWorkloadOptions& options, Digest& digest);

// The same workload over EngineT: a type derived from Engine<B, E> whose constructor takes (stack, env,
// EngineOptions, extra...), such as an engine mutant (properties/src/mutants.cc).
template <class EngineT, Backend B, Env E, class... Extra>
EngineWorkloadResult run_engine_workload_on(B& stack, E& env, const EngineWorkloadOptions& options, Digest& digest,
                                            Extra&&... extra);

}  // namespace quiesce::properties

#include "quiesce/properties/engine_workload_impl.h"  // IWYU pragma: export
