// One campaign case: a seeded workload on Validator<Injector<sim::Device>> and its verdict, with every
// check it makes mapped to the invariant of DESIGN §7 it proves (validator rules, oracle findings, the
// workload's data checks and the shutdown report), and the coverage probes it reached.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "quiesce/core/validator/violation.h"
#include "quiesce/faults/plan.h"
#include "quiesce/properties/campaign.h"
#include "quiesce/sim/oracle.h"

namespace quiesce::traces {
class TraceSink;
}  // namespace quiesce::traces

namespace quiesce::properties {

enum class WorkloadKind : std::uint8_t {
  Engine,  // the reference engine (quiesce::Engine) under FiberEnv
  Raw,     // the raw contract workload (raw_workload.h)
};

enum class Mutation : std::uint8_t;  // raw_workload.h
enum class EngineBug : std::uint8_t;  // mutants.h
struct EngineWorkloadResult;          // engine_workload.h

struct CaseOptions {
  WorkloadKind workload = WorkloadKind::Engine;
  faults::Plan plan = faults::Plan::standard();
  bool swarm = true;                  // switch fault families off per seed (swarm testing)
  std::uint32_t operations = 1000;
  std::uint32_t determinism_every = 16;  // every n-th seed runs twice and must give the same digest (R20)
  std::ostream* detail = nullptr;     // when set, the whole report of the case is written here
  // When set, the case runs on the recorded stack (recorded_stack.h) and every record goes here; the sink's
  // header comes from case_run_config (record_case.h). Recording needs determinism_every = 0.
  traces::TraceSink* trace = nullptr;
  // The raw workload only: a planted bug (raw_workload.h, the mutants of mutants.h), so that a campaign can
  // be pointed at a runtime known to be wrong. A recorded case's trace holds the calls the bug made.
  Mutation mutation{};  // value-initialized: Mutation::None
  // The engine workload only: a bug planted in the reference engine (the engine mutants of mutants.h). The
  // trace of a recorded case holds the calls the mutated engine made to its backend.
  EngineBug engine_bug{};  // value-initialized: EngineBug::None
};

Invariant invariant_of(Rule rule);
Invariant invariant_of(sim::FindingKind kind);

// The coverage probes a campaign reports as reached or never reached.
const std::vector<std::string>& standard_probes();

CaseResult run_case(std::uint64_t seed, const CaseOptions& options);

// The engine workload's own checks as failures, each under the invariant it proves: a read that disagrees
// with the host model (R18 after a dry run, R3 otherwise), a broken engine promise (R15 for timing, R16 for
// access modes, R19 for the ledger, R14 for deferred failures), liveness and the shutdown report (R19).
void add_engine_failures(const EngineWorkloadResult& run, CaseResult& result);

}  // namespace quiesce::properties
