// Recording a campaign case (cases.h) as a trace: `quiesce run --seed S --trace FILE` and
// `quiesce run --seed S --check-determinism`, for the engine workload (the default) and the raw one.
//
// The case runs exactly as run_case runs it (same device, fault plan after swarm, injector and validator
// settings, schedule, hence the same digest), on the recorded stack of recorded_stack.h:
//   traces::Recorder< Validator< faults::Injector< sim::Device > > >
// so every backend call the engine makes (imports through transactions, stream-ordered allocations,
// graphs and their capture, profiling receipts, discard_context after a device loss, ...) is a call
// record, with the injected faults, findings, violations, clock records and the FiberEnv's scheduling
// decisions. replay_trace (replay.h) replays such a trace without the engine or fibers: it re-issues the
// recorded calls in order and moves virtual time to where each call began in the recording.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "quiesce/properties/cases.h"
#include "quiesce/properties/replay.h"
#include "quiesce/traces/codec.h"
#include "quiesce/traces/record.h"

namespace quiesce::properties {

// The stack run_case builds for `seed`, as a RunConfig: the device of the seed, the plan after swarm
// testing with the injector's seed, the validator collecting every violation, the workload's size.
RunConfig case_run_config(std::uint64_t seed, const CaseOptions& options);
// The trace header of that case: header_of(case_run_config) with the workload kind (raw or engine, with
// the engine workload's options) and the schedule strategy of its FiberEnv.
traces::TraceHeader case_header(std::uint64_t seed, const CaseOptions& options);

struct RecordedCase {
  CaseResult result;   // the verdict run_case gives, digest included
  std::string report;  // what run_case writes to CaseOptions::detail
  std::vector<std::byte> trace;  // the binary encoding
  traces::TraceFooter footer;
};

// Runs the case once on the recorded stack (options.detail, options.trace and determinism_every are
// ignored: the report is returned, the records go to the trace, the check for R20 is check_case_determinism).
RecordedCase record_case(std::uint64_t seed, const CaseOptions& options);

// R20 for a case: records it twice and compares the two traces byte for byte.
DeterminismReport check_case_determinism(std::uint64_t seed, const CaseOptions& options);

// The first record where two binary traces differ; nullopt when they are equal.
std::optional<Divergence> first_difference(const std::vector<std::byte>& first, const std::vector<std::byte>& second);

}  // namespace quiesce::properties
