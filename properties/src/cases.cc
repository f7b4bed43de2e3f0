// Campaign cases: a workload on the simulated stack, judged against the invariants R1-R20.
#include "quiesce/properties/cases.h"

#include <sstream>

#include "quiesce/core/engine.h"
#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/properties/engine_workload.h"
#include "quiesce/properties/engine_workload_mutants.h"
#include "quiesce/properties/mutants.h"
#include "quiesce/properties/raw_workload.h"
#include "quiesce/properties/record_case.h"
#include "quiesce/properties/recorded_stack.h"
#include "quiesce/sim/device.h"
#include "quiesce/sim/fiber_env.h"

namespace quiesce::properties {
namespace {

using Stack = Validator<faults::Injector<sim::Device>>;

// What one run left behind, before it is judged. The workload's printed result goes into the report only
// when someone reads it (CaseOptions::detail); the verdict and the digest never depend on the report.
struct Outcome {
  CaseResult result;
  std::ostringstream report;
  bool detailed = false;
};

void add_failure(CaseResult& result, Invariant invariant, std::string message) {
  result.failures.push_back(Failure{invariant, std::move(message)});
}

void judge_stack(Stack& stack, const sim::Device& device, Outcome& outcome) {
  outcome.result.violations = stack.finish();
  outcome.result.findings = device.findings().size();
  for (const Violation& violation : stack.violations()) {
    add_failure(outcome.result, invariant_of(violation.rule), stack.describe(violation));
    outcome.report << "violation: " << stack.describe(violation) << "\n";
  }
  for (const sim::Finding& finding : device.findings()) {
    add_failure(outcome.result, invariant_of(finding.kind), finding.message);
    outcome.report << "finding: " << sim::to_string(finding.kind) << ": " << finding.message << "\n";
  }
}

void probe(CaseResult& result, bool reached, const char* name) {
  if (reached) result.probes_hit.emplace_back(name);
}

void judge_engine(const EngineWorkloadResult& run, CaseResult& result) {
  add_engine_failures(run, result);
  const EngineCounters& counters = run.engine;
  probe(result, counters.submits_partial > 0, "partial submit");
  probe(result, counters.submits_indeterminate > 0, "indeterminate submit");
  probe(result, counters.submit_retries > 0, "exact retry after a rejected submit");
  probe(result, counters.observations_indeterminate > 0, "indeterminate poll or fence");
  probe(result, counters.release_rejections > 0, "rejected release retried");
  probe(result, counters.releases_deferred > 0, "deferred release");
  probe(result, counters.cross_queue_waits > 0, "cross-queue wait");
  probe(result, counters.recoveries > 0, "recovery after device loss");
  probe(result, counters.failures_surfaced > 0, "asynchronous failure surfaced");
  probe(result, counters.imports_rolled_back > 0, "import rolled back");
  probe(result, counters.replays > 0, "graph replayed");
  probe(result, counters.submits_unobserved > 0, "submit left its completions to a later call");
  probe(result, run.dry_runs > 0, "dry-run launch");
  probe(result, run.access_violations_refused > 0, "access mode violation refused");
  probe(result, run.profiles_unavailable > 0, "profile unavailable");
  bool release_during_loss = false;
  for (const QuarantineEntry& entry : run.shutdown.quarantine) {
    release_during_loss = release_during_loss || (entry.cause == QuarantineCause::IndeterminateRelease &&
                                                  entry.error.kind == ErrorKind::DeviceLost);
  }
  probe(result, release_during_loss, "indeterminate release during device loss");
  probe(result, !run.shutdown.quarantine.empty(), "quarantine at shutdown");
}

void judge_raw(const RawWorkloadStats& stats, CaseResult& result) {
  for (const std::string& problem : stats.problems) add_failure(result, Invariant::R19, problem);
  probe(result, stats.submits_indeterminate > 0, "indeterminate submit");
  probe(result, stats.retries > 0, "exact retry after a rejected submit");
  probe(result, stats.waits_indeterminate > 0, "indeterminate poll or fence");
  probe(result, stats.releases_rejected > 0, "rejected release retried");
  probe(result, stats.device_losses > 0, "recovery after device loss");
  probe(result, stats.replays > 0, "graph replayed");
  probe(result, stats.terminals_cancelled > 0, "cancellation won");
}

// The engine workload over an engine with a planted bug: the misreading layer between the engine and `top`
// and the engine type that hides calls, as the engine mutants of quiesce mutants run it.
template <class Top>
EngineWorkloadResult run_mutated_engine(Top& top, sim::FiberEnv& env, const EngineWorkloadOptions& workload,
                                        Digest& digest, EngineBug bug) {
  EngineFacing<Top> facing(bug, top);
  return run_engine_workload_on<MutantEngine<EngineFacing<Top>, sim::FiberEnv>>(facing, env, workload, digest, bug);
}

// The workloads drive `top`: the stack itself, or the recorder on top of it when the case is recorded.
template <class Top>
std::uint64_t run_on(Top& top, Stack& stack, sim::Device& device, std::uint64_t seed, const CaseOptions& options,
                     Outcome& outcome, sim::ScheduleObserver* observer) {
  Digest digest;
  if (options.workload == WorkloadKind::Engine) {
    sim::FiberEnv env(device.clock(), sim::Schedule::from_seed(Prng(seed).derive("schedule")));
    env.set_observer(observer);
    EngineWorkloadOptions workload;
    workload.seed = seed;
    workload.operations = options.operations;
    workload.on_liveness = [&stack] { stack.inner().set_injecting(false); };
    const EngineWorkloadResult run = options.engine_bug == EngineBug::None
                                         ? run_engine_workload(top, env, workload, digest)
                                         : run_mutated_engine(top, env, workload, digest, options.engine_bug);
    if (outcome.detailed) print_result(run, outcome.report);
    judge_engine(run, outcome.result);
  } else {
    RawWorkloadOptions workload;
    workload.seed = seed;
    workload.operations = options.operations;
    workload.mutation = options.mutation;
    workload.on_liveness = [&stack] { stack.inner().set_injecting(false); };
    const RawWorkloadStats stats = run_raw_workload(top, workload, digest);
    if (outcome.detailed) print_stats(stats, outcome.report);
    judge_raw(stats, outcome.result);
  }
  judge_stack(stack, device, outcome);
  outcome.report << "injected faults: " << stack.inner().injected().size() << "\n";
  probe(outcome.result, !stack.inner().injected().empty(), "fault injected");
  digest.add(device.digest());
  return digest.value();
}

std::uint64_t run_once(std::uint64_t seed, const CaseOptions& options, Outcome& outcome) {
  if (options.trace != nullptr) {
    const RunConfig config = case_run_config(seed, options);
    RecordedSimStack recorded(config, config.plan, *options.trace);
    return run_on(recorded.top(), recorded.validator(), recorded.device(), seed, options, outcome, &recorded);
  }
  sim::Config config;
  config.seed = seed;
  sim::Device device(config);
  faults::Plan plan = options.plan;
  if (options.swarm) faults::apply_swarm(plan, seed);
  Stack stack(ValidatorOptions{ViolationMode::CollectAll}, device, std::move(plan), Prng(seed).derive("faults"));
  return run_on(stack, stack, device, seed, options, outcome, nullptr);
}

}  // namespace

void add_engine_failures(const EngineWorkloadResult& run, CaseResult& result) {
  for (const std::string& failure : run.data_failures) {
    const bool dry_run = failure.find("dry run") != std::string::npos;
    add_failure(result, dry_run ? Invariant::R18 : Invariant::R3,
                "a read disagreed with the host model (work reported as not run ran, or ran with effects it must "
                "not have): " + failure);
  }
  for (const std::string& problem : run.problems) {
    Invariant invariant = Invariant::R14;
    if (problem.find("timing") != std::string::npos || problem.find("profile") != std::string::npos) {
      invariant = Invariant::R15;
    }
    if (problem.find("read-only binding") != std::string::npos) invariant = Invariant::R16;
    if (problem.find("memory ledger") != std::string::npos) invariant = Invariant::R19;
    add_failure(result, invariant, problem);
  }
  if (!run.liveness.ok()) {
    add_failure(result, Invariant::R19, "the liveness phase did not reach quiescence: " +
                                            describe_error(run.liveness.error()));
  }
  if (!run.shutdown.clean()) add_failure(result, Invariant::R19, run.shutdown.describe());
}

Invariant invariant_of(Rule rule) {
  switch (rule) {
    case Rule::CallerReleaseWhilePinned:
    case Rule::CallerDestroyUnobservedEvent: return Invariant::R1;
    case Rule::CallerReleaseWhileCaptured:
    case Rule::CallerSyncInsideCapture:
    case Rule::CallerAllocateInsideCapture:
    case Rule::CallerCaptureNotEnded:
    case Rule::CallerCaptureNotBegun: return Invariant::R13;
    case Rule::CallerDestroyParentWithChildren:
    case Rule::CallerStaleEpoch:
    case Rule::CallerCrossContext:
    case Rule::ProviderInvalidCreatedHandle: return Invariant::R9;
    case Rule::CallerUseAfterRelease:
    case Rule::CallerUnknownHandle:
    case Rule::ProviderReleaseHandle: return Invariant::R6;
    case Rule::CallerResubmitIndeterminate: return Invariant::R4;
    case Rule::CallerAccessMode:
    case Rule::CallerOutOfRange:
    case Rule::CallerEmptyBatch: return Invariant::R16;
    case Rule::CallerUseAfterDeviceLost: return Invariant::R10;
    case Rule::CallerLeak:
    case Rule::ValidatorBoundExceeded: return Invariant::R19;
    case Rule::ProviderTerminalUnstable:
    case Rule::ProviderIllegalTransition:
    case Rule::ProviderReadUninitialised: return Invariant::R7;
    case Rule::ProviderCancelInconsistent: return Invariant::R8;
    case Rule::ProviderRejectedSubmitRetained: return Invariant::R3;
    case Rule::ProviderIndeterminateWithoutEvent:
    case Rule::ProviderSubmittedCountMismatch: return Invariant::R5;
    case Rule::ProviderTimingWithoutTerminal:
    case Rule::ProviderTimingNotRequested: return Invariant::R15;
  }
  return Invariant::R19;
}

Invariant invariant_of(sim::FindingKind kind) {
  switch (kind) {
    case sim::FindingKind::UseAfterFree:
    case sim::FindingKind::UnorderedConflict: return Invariant::R1;
    case sim::FindingKind::ReadOnlyWrite: return Invariant::R16;
    case sim::FindingKind::UninitializedRead: return Invariant::R17;
    case sim::FindingKind::RejectedExecuted: return Invariant::R3;
    case sim::FindingKind::DoubleExecution: return Invariant::R4;
  }
  return Invariant::R1;
}

const std::vector<std::string>& standard_probes() {
  static const std::vector<std::string> kProbes = {
      "fault injected", "partial submit", "indeterminate submit", "exact retry after a rejected submit",
      "indeterminate poll or fence", "rejected release retried", "deferred release", "cross-queue wait",
      "recovery after device loss", "asynchronous failure surfaced", "import rolled back", "graph replayed",
      "dry-run launch", "access mode violation refused", "profile unavailable",
      "indeterminate release during device loss", "quarantine at shutdown", "cancellation won",
      "submit left its completions to a later call"};
  return kProbes;
}

CaseResult run_case(std::uint64_t seed, const CaseOptions& options) {
  Outcome outcome;
  outcome.detailed = options.detail != nullptr;
  outcome.result.seed = seed;
  outcome.result.operations = options.operations;
  outcome.result.digest = run_once(seed, options, outcome);
  if (options.determinism_every != 0 && seed % options.determinism_every == 0) {
    Outcome again;
    const std::uint64_t digest = run_once(seed, options, again);
    if (digest != outcome.result.digest) {
      add_failure(outcome.result, Invariant::R20, "seed " + std::to_string(seed) + " gave digest " +
                                                      to_hex(outcome.result.digest) + " and then " + to_hex(digest));
    }
  }
  if (options.detail != nullptr) *options.detail << outcome.report.str();
  return std::move(outcome.result);
}

}  // namespace quiesce::properties
