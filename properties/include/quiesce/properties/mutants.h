// Mutation testing of the property suite: runtimes with exactly one planted bug each, run under the
// campaign until a check catches them. The score "caught K of N" says how much of the suite can fail.
//
// A mutant is the careful raw workload (raw_workload.h) with one Mutation switched on, or the careful
// workload over a backend wrapper with one ProviderBug (a provider-side invariant can only be broken by a
// provider). Each mutant declares the invariants whose checks should catch it; the report gives the
// invariant of the first failure of the first failing case, whether it is one of the declared ones, and how
// many cases it took. A case runs on Validator<ProviderMutant<faults::Injector<sim::Device>>> (the wrapper
// forwards untouched when no provider bug is chosen) and is judged like properties::run_case.
//
// Engine mutants plant their bug in the reference engine (quiesce::Engine) and run the engine workload
// (engine_workload.h) instead: EngineBug says which. An engine bug is planted without touching the engine's
// code: either by a type derived from Engine<B, E> that hides one of its calls (flush, sync, launch), or by
// a layer between the engine and the Validator that misreports what the backend said (the engine's view of
// its backend is part of the runtime under test). That is how R14 (deferred errors) and R18 (dry runs), which
// the raw workload cannot break, get their mutants.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "quiesce/core/prng.h"
#include "quiesce/core/result.h"
#include "quiesce/faults/plan.h"
#include "quiesce/properties/campaign.h"
#include "quiesce/properties/raw_workload.h"

namespace quiesce::properties {

// A bug in the backend below the runtime, for the invariants that are the provider's to keep.
enum class ProviderBug : std::uint8_t {
  None,
  TerminalUnstable,     // R7: a terminal event polled again reports Pending
  CancelWonButRan,      // R8: cancel answers "won" without cancelling; the batch completes normally
  TimingWhilePending,   // R15: a Pending poll carries a timing receipt
  SuccessCountShort,    // R5: a whole batch reported Submitted with fewer commands enqueued than it has
  RejectedReleaseOther, // R6: a rejected release hands back a different handle
};

// A bug in the reference engine, for the engine mutants.
enum class EngineBug : std::uint8_t {
  None,
  LoseDeferredError,         // R14: flush and sync drop the asynchronous failures they should return
  DeferredErrorTwice,        // R14: a failure one flush returned is returned again by the next
  DryRunWrites,              // R18: a dry-run launch goes to the backend as a normal launch
  ReleaseBeforeFence,        // R1: a fence the backend reports pending is taken as complete, so the engine
                             //     destroys its event and releases what it pinned
  RetryIndeterminateSubmit,  // R4: an indeterminate submit is taken as rejected and retried exactly
};

struct Mutant {
  std::string_view name;
  std::string_view bug;                 // one sentence: what the runtime or backend does wrong
  Mutation mutation = Mutation::None;
  ProviderBug provider = ProviderBug::None;
  std::vector<Invariant> expected;      // the invariants whose checks should catch it
  std::optional<Ratio> device_fault;    // a higher rate of the faulting kernel, for device-loss mutants
  std::optional<Ratio> release_faults;  // a higher rate of rejected releases (and indeterminate ones, below)
  bool indeterminate_releases_too = false;
  std::uint32_t determinism_every = 0;  // 1: every case runs twice (R20 mutants)
  bool on_engine = false;               // runs the engine workload (engine mutants, the engine canary)
  EngineBug engine = EngineBug::None;
};

// Every mutant, in a stable order.
const std::vector<Mutant>& all_mutants();
// The Mutation of the raw-workload mutant called `name` (one whose bug is in the careful raw runtime, for
// `--mutant` of quiesce campaign and quiesce run); a sentence naming the valid names otherwise.
Result<Mutation, std::string> raw_mutation(std::string_view name);
// The EngineBug of the engine mutant called `name` (one whose bug is in the reference engine, for `--mutant`
// with the engine workload); a sentence naming the valid names otherwise.
Result<EngineBug, std::string> engine_mutation(std::string_view name);
std::string_view to_string(Mutation mutation);
std::string_view to_string(ProviderBug bug);
std::string_view to_string(EngineBug bug);

struct MutantCaseOptions {
  faults::Plan plan = faults::Plan::standard();
  bool swarm = true;
  std::uint32_t operations = 400;
};

// One case of the raw workload with the mutant's bug (the careful runtime when it has none), or of the engine
// workload when mutant.on_engine (the reference engine when its EngineBug is None).
CaseResult run_mutant_case(const Mutant& mutant, std::uint64_t seed, const MutantCaseOptions& options);

struct MutantOptions {
  std::uint64_t first_seed = 1;
  std::uint32_t seeds_max = 64;  // cases per mutant before it counts as surviving
  std::uint32_t jobs = 1;        // mutants run in parallel, one thread each
  MutantCaseOptions cases = {};
  std::vector<std::string> only;  // mutant names to run; empty: all
};

struct MutantResult {
  std::string name;
  std::vector<Invariant> expected;
  bool caught = false;
  std::uint64_t cases = 0;                 // cases run, the catching one included
  std::uint64_t seed = 0;                  // the catching seed
  std::optional<Invariant> caught_by;      // the first failure's invariant
  bool as_expected = false;                // caught_by is one of `expected`
  std::string message;                     // the first failure's message
};

struct MutantReport {
  std::vector<MutantResult> mutants;

  std::uint64_t caught() const;
  std::uint64_t total() const { return mutants.size(); }
  std::uint64_t caught_as_expected() const;
};

MutantReport run_mutants(const MutantOptions& options);

// One line per mutant, then "caught K of N".
void print_report(const MutantReport& report, std::ostream& out);

}  // namespace quiesce::properties
