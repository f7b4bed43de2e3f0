// Recording, replaying and shrinking traces on the simulated stack (DESIGN §5).
//
// traces/ knows the format and depends on core only; this is the half that builds a simulator stack:
//   traces::Recorder< Validator< faults::Injector< sim::Device > > >
// from a RunConfig, or from a trace header's text. A recorded run appends, after each call, the faults the
// injector told during it, the oracle's new findings and the validator's new violations; clock records
// come from the device's virtual clock. A replay rebuilds the stack from the header with the injector in
// replay mode (exactly the recorded faults, at the injector's recorded call indices), re-issues every
// recorded call with recorded handle ids mapped to the new ones, re-records, and stops at the first record
// that differs. Shrinking is delta debugging over the recorded calls while the same failure reproduces.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "quiesce/core/validator.h"
#include "quiesce/faults/plan.h"
#include "quiesce/properties/raw_workload.h"
#include "quiesce/sim/config.h"
#include "quiesce/traces/codec.h"
#include "quiesce/traces/record.h"

namespace quiesce::properties {

// Everything that decides a recorded run; all of it goes into the trace header as text.
struct RunConfig {
  std::uint64_t seed = 1;
  sim::Config device = {};
  faults::Plan plan = faults::Plan::none();
  ValidatorOptions validator = {};
  RawWorkloadOptions workload = {};  // its seed is `seed`; on_liveness is the stack's own
};

// The configuration for `seed` under a built-in fault plan ("none", "default", "all"); nullopt for an
// unknown plan name. The device, injector and workload seeds all derive from `seed`.
std::optional<RunConfig> make_run_config(std::uint64_t seed, std::string_view plan_name, std::uint32_t operations);

traces::TraceHeader header_of(const RunConfig& config);
// The configuration a header describes. Refuses (with a sentence) text it cannot parse and values above
// the bounds a replay will allocate for.
traces::TraceResult<RunConfig> config_from_header(const traces::TraceHeader& header);

struct RecordedRun {
  std::vector<std::byte> trace;  // the binary encoding
  traces::TraceFooter footer;
  RawWorkloadStats stats;
  std::uint64_t findings = 0;
  std::uint64_t violations = 0;
  std::uint64_t faults = 0;

  bool held() const { return stats.clean() && findings == 0 && violations == 0; }
};

// Runs the raw workload on a fresh recorded stack.
RecordedRun record_raw_run(const RunConfig& config);

struct Divergence {
  std::uint64_t record_index = 0;
  std::string expected;  // the recorded record, printed; "(nothing)" past the end
  std::string actual;    // what the replay produced, printed; "(nothing)" when it produced less
};

struct ReplayReport {
  std::uint64_t calls_replayed = 0;
  std::uint64_t records_compared = 0;
  std::optional<Divergence> divergence;
  std::uint64_t digest_expected = 0;
  std::uint64_t digest_actual = 0;
  std::vector<std::byte> trace;  // the re-recorded trace, binary

  bool faithful() const { return !divergence.has_value() && digest_expected == digest_actual; }
};

// Replays a decoded trace; validates it whole first (an invalid trace replays nothing).
traces::TraceResult<ReplayReport> replay_trace(const traces::Trace& trace);

struct ShrinkOptions {
  std::uint32_t replays_max = 4000;  // candidate replays before shrinking stops with what it has
  // The failure to keep: "finding NAME" or "violation NAME"; empty keeps the trace's first one.
  std::string failure;
};

struct ShrinkReport {
  traces::Trace minimal;
  std::string failure;  // "violation caller.release-while-pinned" or "finding use-after-free"
  std::uint64_t calls_before = 0;
  std::uint64_t calls_after = 0;
  std::uint64_t replays = 0;
};

// Shrinks a failing trace (one with a finding or violation) to a minimal one with the same failure.
traces::TraceResult<ShrinkReport> shrink_trace(const traces::Trace& trace, const ShrinkOptions& options = {});

struct DeterminismReport {
  bool identical = false;
  std::uint64_t bytes = 0;
  std::uint64_t records = 0;
  std::optional<Divergence> difference;  // the first record where the two runs differ
};

// R20: records `config` twice and compares the two traces byte for byte.
DeterminismReport check_determinism(const RunConfig& config);

// ---- the CLI's entry points: each returns the exit status ----
// quiesce replay FILE: 0 faithful, 1 divergence (index, expected, actual on `out`), 2 bad input.
int replay_command(const std::string& path, std::ostream& out, std::ostream& err);
// quiesce shrink FILE -o MIN: 0 written, 1 the failure did not reproduce, 2 bad input or no failure to shrink.
int shrink_command(const std::string& path, const std::string& output_path, std::ostream& out, std::ostream& err);
// quiesce run --trace FILE: records the run; 0 held, 1 failed (the trace is written either way), 2 unwritable.
int record_command(const RunConfig& config, const std::string& trace_path, traces::Encoding encoding, std::ostream& out,
                   std::ostream& err);
// quiesce run --check-determinism: 0 byte-identical, 1 the runs differ.
int determinism_command(const RunConfig& config, std::ostream& out, std::ostream& err);

}  // namespace quiesce::properties
