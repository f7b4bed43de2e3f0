// Differential runs: one seeded script, executed step by step on two backends (the simulator and the GPU),
// every read and every terminal state recorded, the two logs compared.
//
// The script is generated from the seed alone, before it runs, and never branches on an outcome, so both
// backends receive exactly the same calls: a divergence is a difference in behaviour, never in the path
// taken. Every buffer is written whole before use (no read of never-written bytes), each batch is waited
// to its terminal before the next step (so reads never race the device), two batches that run at the same
// time touch disjoint buffers, and copies never alias. run_script is a template over the Backend concept
// (core only); the caller that links the simulator instantiates it for sim::Device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/core/prng.h"
#include "quiesce/core/transaction.h"

namespace quiesce::cuda {

struct ScriptOptions {
  std::uint64_t seed = 1;
  std::uint32_t steps = 120;
  std::uint32_t buffers = 6;                  // at least 4
  std::uint64_t buffer_bytes_min = 64;
  std::uint64_t buffer_bytes_max = 64 * 1024;
  std::uint32_t batch_commands_max = 6;       // within every backend's batch_commands_max
  std::uint64_t wait_timeout_ns = 30'000'000'000ULL;
};

// An owned command: slots name the script's buffers and kernels, so the script outlives any run.
struct ScriptCommand {
  CommandKind kind = CommandKind::Launch;
  std::uint32_t kernel = 0;  // index into kScriptKernels
  std::vector<std::uint32_t> buffers;  // launch bindings, in the kernel's order
  std::vector<std::byte> data;         // launch parameters or upload bytes
  std::uint32_t source = 0;
  std::uint32_t target = 0;
  std::uint64_t source_offset = 0;
  std::uint64_t target_offset = 0;
  std::uint64_t bytes = 0;
  LaunchDims dims = {};
};

enum class StepKind : std::uint8_t { Write, Read, Submit, SubmitPair, CaptureReplay };

struct ScriptStep {
  StepKind kind = StepKind::Submit;
  std::uint32_t buffer = 0;         // Write, Read
  std::uint64_t write_seed = 0;     // Write: the content's seed
  std::vector<ScriptCommand> batch;   // Submit, SubmitPair (queue 0), CaptureReplay (the captured batch)
  std::vector<ScriptCommand> second;  // SubmitPair: the batch on queue 1, on disjoint buffers
  std::uint32_t replays = 0;          // CaptureReplay: replays in one batch
};

struct Script {
  ScriptOptions options;
  std::vector<std::uint64_t> buffer_bytes;
  std::vector<ScriptStep> steps;
};

// The kernels a script uses, by builtin name (program slot i is kScriptKernels[i]).
inline constexpr std::string_view kScriptKernels[] = {"fill", "copy", "saxpy", "checksum"};

Script generate_script(const ScriptOptions& options);

// What a run observed: one record per read (the bytes), per terminal (the state) and per failure.
struct ScriptRecord {
  std::uint32_t step = 0;
  std::string what;                // "read of buffer 3", "terminal of the batch on queue 0", ...
  std::vector<std::byte> bytes;    // a read's content
  std::string outcome;             // a terminal state, a submit or release status, or an error's kind
};

struct ScriptLog {
  std::vector<ScriptRecord> records;
  std::string setup_failure;  // non-empty when the run could not even start
};

// Compares two logs record by record. Each divergence is a sentence naming the step, what was observed
// and both values (for bytes: the first differing offset and the words there). At most `report_max`.
std::vector<std::string> compare_logs(const ScriptLog& reference, const ScriptLog& candidate,
                                      std::size_t report_max = 16);

}  // namespace quiesce::cuda

#include "quiesce/cuda/detail/differential_run.h"  // IWYU pragma: export
