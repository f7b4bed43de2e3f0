// The mutant catalog and the mutation campaign: each mutant runs seed after seed until a check fails.
#include "quiesce/properties/mutants.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/properties/cases.h"
#include "quiesce/properties/engine_workload.h"
#include "quiesce/properties/engine_workload_mutants.h"
#include "quiesce/sim/device.h"
#include "quiesce/sim/fiber_env.h"
#include "mutants_provider.h"

namespace quiesce::properties {
namespace {

using I = Invariant;
using Stack = Validator<mutants_detail::ProviderMutant<faults::Injector<sim::Device>>>;
using EngineChecked = Validator<faults::Injector<sim::Device>>;
using EngineStack = EngineFacing<EngineChecked>;
using MutatedEngine = MutantEngine<EngineStack, sim::FiberEnv>;

std::vector<Mutant> build_catalog() {
  const Ratio frequent_loss{1, 40};
  const Ratio frequent_release_faults{1, 8};
  return {
      {"free-while-pinned", "frees a buffer that a live event still references", Mutation::FreeWhilePinned,
       ProviderBug::None, {I::R1}, {}, {}, false, 0, false, EngineBug::None},
      {"destroy-unobserved-event", "destroys an event before observing a terminal state",
       Mutation::DestroyUnobservedEvent, ProviderBug::None, {I::R1}, {}, {}, false, 0, false, EngineBug::None},
      {"indeterminate-wait-as-terminal", "takes a FenceIndeterminate wait as Complete and releases what it pinned",
       Mutation::IndeterminateWaitAsTerminal, ProviderBug::None, {I::R2, I::R1}, {}, {}, false, 0,
       false, EngineBug::None},
      {"indeterminate-submit-unpinned", "pins nothing for an indeterminate submit, so its buffers get freed",
       Mutation::IndeterminateSubmitUnpinned, ProviderBug::None, {I::R2, I::R1}, {}, {}, false, 0,
       false, EngineBug::None},
      {"rejected-submit-applied", "takes a Rejected submit as run and puts its effects into the host model",
       Mutation::RejectedSubmitApplied, ProviderBug::None, {I::R3, I::R17}, {}, {}, false, 0, false, EngineBug::None},
      {"retry-indeterminate-submit", "submits an Indeterminate batch again with the same invocation",
       Mutation::RetryIndeterminateSubmit, ProviderBug::None, {I::R4}, {}, {}, false, 0, false, EngineBug::None},
      {"partial-submit-as-rejected", "takes a partial submit as rejected: drops its event and resubmits the batch",
       Mutation::PartialSubmitAsRejected, ProviderBug::None, {I::R5, I::R4}, {}, {}, false, 0, false, EngineBug::None},
      {"drop-rejected-release", "drops the live buffer handle a rejected free hands back",
       Mutation::DropRejectedRelease, ProviderBug::None, {I::R6, I::R9, I::R19}, {}, frequent_release_faults, false, 0,
       false, EngineBug::None},
      {"reuse-after-indeterminate-release", "keeps using a buffer whose release was indeterminate",
       Mutation::ReuseAfterIndeterminateRelease, ProviderBug::None, {I::R6}, {}, frequent_release_faults, true, 0,
       false, EngineBug::None},
      {"apply-won-cancellation", "puts the effects of a won cancellation into the host model",
       Mutation::ApplyWonCancellation, ProviderBug::None, {I::R8, I::R3}, {}, {}, false, 0, false, EngineBug::None},
      {"destroy-context-before-children", "destroys the context before its queues and programs",
       Mutation::DestroyContextBeforeChildren, ProviderBug::None, {I::R9}, {}, {}, false, 0, false, EngineBug::None},
      {"ignore-device-loss", "ignores DeviceLost and keeps calling the lost context", Mutation::IgnoreDeviceLoss,
       ProviderBug::None, {I::R10}, frequent_loss, {}, false, 0, false, EngineBug::None},
      {"release-on-lost-context", "frees every buffer of a lost context as if quiescent before discarding it",
       Mutation::ReleaseOnLostContext, ProviderBug::None, {I::R10, I::R1}, frequent_loss, {}, false, 0,
       false, EngineBug::None},
      {"abandon-after-local-error", "gives up every pending event after one batch failed (a non-sticky error)",
       Mutation::AbandonAfterLocalError, ProviderBug::None, {I::R11, I::R1}, {}, {}, false, 0, false, EngineBug::None},
      {"stream-ordered-free-unordered",
       "frees stream-ordered buffers while another queue's unordered work still uses them",
       Mutation::StreamOrderedFreeUnordered, ProviderBug::None, {I::R12, I::R1}, {}, {}, false, 0,
       false, EngineBug::None},
      {"capture-not-ended", "leaves a capture window open", Mutation::CaptureNotEnded, ProviderBug::None, {I::R13},
       {}, {}, false, 0, false, EngineBug::None},
      {"sync-inside-capture", "synchronises the capturing queue inside its capture window",
       Mutation::SyncInsideCapture, ProviderBug::None, {I::R13}, {}, {}, false, 0, false, EngineBug::None},
      {"captured-buffers-unpinned", "does not pin an executable's captured buffers, so they are freed under it",
       Mutation::CapturedBuffersUnpinned, ProviderBug::None, {I::R13}, {}, {}, false, 0, false, EngineBug::None},
      {"access-mode-forbidden", "binds a buffer for writing although its usage forbids writes",
       Mutation::AccessModeForbidden, ProviderBug::None, {I::R16}, {}, {}, false, 0, false, EngineBug::None},
      {"write-through-read-binding", "binds the buffer a kernel writes with Access::Read",
       Mutation::WriteThroughReadBinding, ProviderBug::None, {I::R16}, {}, {}, false, 0, false, EngineBug::None},
      {"unwritten-buffer-read", "takes a fresh buffer as initialised before anything wrote it",
       Mutation::UnwrittenBufferRead, ProviderBug::None, {I::R17}, {}, {}, false, 0, false, EngineBug::None},
      {"leak-at-shutdown", "forgets one buffer in the liveness phase", Mutation::LeakAtShutdown, ProviderBug::None,
       {I::R19}, {}, {}, false, 0, false, EngineBug::None},
      {"state-outside-seed", "chooses queues from a counter that outlives one run", Mutation::StateOutsideSeed,
       ProviderBug::None, {I::R20}, {}, {}, false, 1, false, EngineBug::None},
      {"provider-terminal-unstable", "the backend reports Pending for an event it already reported terminal",
       Mutation::None, ProviderBug::TerminalUnstable, {I::R7}, {}, {}, false, 0, false, EngineBug::None},
      {"provider-cancel-won-but-ran", "the backend answers a cancel as won without cancelling", Mutation::None,
       ProviderBug::CancelWonButRan, {I::R8}, {}, {}, false, 0, false, EngineBug::None},
      {"provider-timing-while-pending", "the backend attaches a timing receipt to a Pending poll", Mutation::None,
       ProviderBug::TimingWhilePending, {I::R15}, {}, {}, false, 0, false, EngineBug::None},
      {"provider-success-count-short", "the backend reports Submitted with fewer commands enqueued than sent",
       Mutation::None, ProviderBug::SuccessCountShort, {I::R5}, {}, {}, false, 0, false, EngineBug::None},
      {"provider-rejected-release-other", "the backend hands back a different handle from a rejected release",
       Mutation::None, ProviderBug::RejectedReleaseOther, {I::R6}, {}, frequent_release_faults, false, 0,
       false, EngineBug::None},
      {"engine-lose-deferred-error", "the engine's flush and sync drop the asynchronous failures they should return",
       Mutation::None, ProviderBug::None, {I::R14}, {}, {}, false, 0, true, EngineBug::LoseDeferredError},
      {"engine-deferred-error-twice", "the engine returns a failure one flush surfaced again at the next",
       Mutation::None, ProviderBug::None, {I::R14}, {}, {}, false, 0, true, EngineBug::DeferredErrorTwice},
      {"engine-dry-run-writes", "the engine submits a dry-run launch as a normal launch", Mutation::None,
       ProviderBug::None, {I::R18}, {}, {}, false, 0, true, EngineBug::DryRunWrites},
      {"engine-release-before-fence", "the engine takes a pending fence as complete and releases what it pinned",
       Mutation::None, ProviderBug::None, {I::R1}, {}, {}, false, 0, true, EngineBug::ReleaseBeforeFence},
      {"engine-retry-indeterminate-submit", "the engine takes an indeterminate submit as rejected and retries it",
       Mutation::None, ProviderBug::None, {I::R4}, {}, {}, false, 0, true, EngineBug::RetryIndeterminateSubmit},
  };
}

void add_failure(CaseResult& result, Invariant invariant, std::string message) {
  result.failures.push_back(Failure{invariant, std::move(message)});
}

// Validator and oracle first: they name the call or access that broke an invariant; then the workload's
// own checks (data against the host model, stable terminals, the shutdown count).
template <class Checked>
void judge_stack(Checked& stack, const sim::Device& device, CaseResult& result) {
  result.violations = stack.finish();
  result.findings = device.findings().size();
  for (const Violation& violation : stack.violations()) {
    add_failure(result, invariant_of(violation.rule), stack.describe(violation));
  }
  for (const sim::Finding& finding : device.findings()) add_failure(result, invariant_of(finding.kind), finding.message);
}

void judge(Stack& stack, const sim::Device& device, const RawWorkloadStats& stats, CaseResult& result) {
  judge_stack(stack, device, result);
  for (const std::string& problem : stats.problems) {
    Invariant invariant = I::R19;
    if (problem.starts_with("read of buffer")) invariant = I::R3;
    if (problem.find("changed its terminal state") != std::string::npos) invariant = I::R7;
    add_failure(result, invariant, problem);
  }
}

std::uint64_t run_engine_once(const Mutant& mutant, std::uint64_t seed, const MutantCaseOptions& options,
                              CaseResult& result) {
  sim::Config config;
  config.seed = seed;
  sim::Device device(config);
  faults::Plan plan = options.plan;
  if (options.swarm) faults::apply_swarm(plan, seed);
  EngineChecked checked(ValidatorOptions{ViolationMode::CollectAll}, device, std::move(plan),
                        Prng(seed).derive("faults"));
  EngineStack stack(mutant.engine, checked);
  sim::FiberEnv env(device.clock(), sim::Schedule::from_seed(Prng(seed).derive("schedule")));
  EngineWorkloadOptions workload;
  workload.seed = seed;
  workload.operations = options.operations;
  workload.on_liveness = [&checked] { checked.inner().set_injecting(false); };
  if (mutant.device_fault) workload.device_fault = *mutant.device_fault;
  Digest digest;
  const EngineWorkloadResult run = run_engine_workload_on<MutatedEngine>(stack, env, workload, digest, mutant.engine);
  judge_stack(checked, device, result);
  add_engine_failures(run, result);
  digest.add(device.digest());
  return digest.value();
}

std::uint64_t run_once(const Mutant& mutant, std::uint64_t seed, const MutantCaseOptions& options,
                       std::uint64_t& run_counter, CaseResult& result) {
  if (mutant.on_engine) return run_engine_once(mutant, seed, options, result);
  sim::Config config;
  config.seed = seed;
  sim::Device device(config);
  faults::Plan plan = options.plan;
  if (mutant.release_faults) {
    plan.set_rate(faults::FaultKind::ReleaseRejected, *mutant.release_faults);
    if (mutant.indeterminate_releases_too) {
      plan.set_rate(faults::FaultKind::ReleaseIndeterminate, *mutant.release_faults);
    }
  }
  if (options.swarm) faults::apply_swarm(plan, seed);
  Stack stack(ValidatorOptions{ViolationMode::CollectAll}, mutant.provider, device, std::move(plan),
              Prng(seed).derive("faults"));
  RawWorkloadOptions workload;
  workload.seed = seed;
  workload.operations = options.operations;
  workload.on_liveness = [&stack] { stack.inner().inner().set_injecting(false); };
  workload.mutation = mutant.mutation;
  workload.run_counter = &run_counter;
  if (mutant.device_fault) workload.device_fault = *mutant.device_fault;
  Digest digest;
  const RawWorkloadStats stats = run_raw_workload(stack, workload, digest);
  judge(stack, device, stats, result);
  digest.add(device.digest());
  return digest.value();
}

}  // namespace

const std::vector<Mutant>& all_mutants() {
  static const std::vector<Mutant> kMutants = build_catalog();
  return kMutants;
}

CaseResult run_mutant_case(const Mutant& mutant, std::uint64_t seed, const MutantCaseOptions& options) {
  std::uint64_t run_counter = 0;  // lives across both runs of the determinism check, as a process counter would
  CaseResult result;
  result.seed = seed;
  result.operations = options.operations;
  result.digest = run_once(mutant, seed, options, run_counter, result);
  if (mutant.determinism_every != 0 && seed % mutant.determinism_every == 0) {
    CaseResult again;
    const std::uint64_t digest = run_once(mutant, seed, options, run_counter, again);
    if (digest != result.digest) {
      add_failure(result, I::R20, "seed " + std::to_string(seed) + " gave digest " + to_hex(result.digest) +
                                      " and then " + to_hex(digest));
    }
  }
  return result;
}

namespace {

MutantResult hunt(const Mutant& mutant, const MutantOptions& options) {
  MutantResult found;
  found.name = std::string(mutant.name);
  found.expected = mutant.expected;
  for (std::uint32_t i = 0; i < options.seeds_max; ++i) {
    const std::uint64_t seed = options.first_seed + i;
    const CaseResult result = run_mutant_case(mutant, seed, options.cases);
    found.cases++;
    if (result.passed()) continue;
    const Failure& first = result.failures.front();
    found.caught = true;
    found.seed = seed;
    found.caught_by = first.invariant;
    found.as_expected = std::find(mutant.expected.begin(), mutant.expected.end(), first.invariant) !=
                        mutant.expected.end();
    found.message = first.message;
    break;
  }
  return found;
}

}  // namespace

MutantReport run_mutants(const MutantOptions& options) {
  std::vector<const Mutant*> chosen;
  for (const Mutant& mutant : all_mutants()) {
    const bool wanted = options.only.empty() ||
                        std::find(options.only.begin(), options.only.end(), mutant.name) != options.only.end();
    if (wanted) chosen.push_back(&mutant);
  }
  MutantReport report;
  report.mutants.resize(chosen.size());
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t index = next++; index < chosen.size(); index = next++) {
      report.mutants[index] = hunt(*chosen[index], options);
    }
  };
  const std::uint32_t jobs = std::max<std::uint32_t>(1, std::min<std::uint32_t>(options.jobs, 64));
  std::vector<std::thread> threads;
  for (std::uint32_t j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& thread : threads) thread.join();
  return report;
}

std::uint64_t MutantReport::caught() const {
  return static_cast<std::uint64_t>(std::count_if(mutants.begin(), mutants.end(), [](const MutantResult& m) {
    return m.caught;
  }));
}

std::uint64_t MutantReport::caught_as_expected() const {
  return static_cast<std::uint64_t>(std::count_if(mutants.begin(), mutants.end(), [](const MutantResult& m) {
    return m.as_expected;
  }));
}

void print_report(const MutantReport& report, std::ostream& out) {
  for (const MutantResult& mutant : report.mutants) {
    std::string expected;
    for (const Invariant invariant : mutant.expected) expected += (expected.empty() ? "" : "/") + invariant_id(invariant);
    out << mutant.name << ": ";
    if (!mutant.caught) {
      out << "SURVIVED " << mutant.cases << " cases (expected " << expected << ")\n";
      continue;
    }
    out << "caught by " << invariant_id(*mutant.caught_by) << (mutant.as_expected ? "" : " (UNEXPECTED)")
        << " (expected " << expected << ") at seed " << mutant.seed << " after " << mutant.cases << " cases: "
        << mutant.message << "\n";
  }
  out << "caught " << report.caught() << " of " << report.total() << " (" << report.caught_as_expected()
      << " by an expected invariant)\n";
}

std::string_view to_string(ProviderBug bug) {
  switch (bug) {
    case ProviderBug::None: return "none";
    case ProviderBug::TerminalUnstable: return "terminal-unstable";
    case ProviderBug::CancelWonButRan: return "cancel-won-but-ran";
    case ProviderBug::TimingWhilePending: return "timing-while-pending";
    case ProviderBug::SuccessCountShort: return "success-count-short";
    case ProviderBug::RejectedReleaseOther: return "rejected-release-other";
  }
  return "unknown";
}

std::string_view to_string(EngineBug bug) {
  switch (bug) {
    case EngineBug::None: return "none";
    case EngineBug::LoseDeferredError: return "lose-deferred-error";
    case EngineBug::DeferredErrorTwice: return "deferred-error-twice";
    case EngineBug::DryRunWrites: return "dry-run-writes";
    case EngineBug::ReleaseBeforeFence: return "release-before-fence";
    case EngineBug::RetryIndeterminateSubmit: return "retry-indeterminate-submit";
  }
  return "unknown";
}

namespace {

bool is_raw_mutant(const Mutant& mutant) {
  return mutant.mutation != Mutation::None && mutant.provider == ProviderBug::None && !mutant.on_engine;
}
bool is_engine_mutant(const Mutant& mutant) { return mutant.on_engine && mutant.engine != EngineBug::None; }

// The names of the mutants `keep` selects, for the messages that list them.
template <class Keep>
std::string mutant_names(Keep keep) {
  std::string names;
  for (const Mutant& mutant : all_mutants()) {
    if (keep(mutant)) names += (names.empty() ? "" : ", ") + std::string(mutant.name);
  }
  return names;
}

const Mutant* find_mutant(std::string_view name) {
  for (const Mutant& mutant : all_mutants()) {
    if (mutant.name == name) return &mutant;
  }
  return nullptr;
}

}  // namespace

Result<Mutation, std::string> raw_mutation(std::string_view name) {
  const Mutant* mutant = find_mutant(name);
  if (mutant != nullptr && is_raw_mutant(*mutant)) return mutant->mutation;
  return "'" + std::string(name) + "' is not a raw-workload mutant; those are: " + mutant_names(is_raw_mutant);
}

Result<EngineBug, std::string> engine_mutation(std::string_view name) {
  const Mutant* mutant = find_mutant(name);
  if (mutant != nullptr && is_engine_mutant(*mutant)) return mutant->engine;
  return "'" + std::string(name) + "' is not an engine mutant; those are: " + mutant_names(is_engine_mutant);
}

std::string_view to_string(Mutation mutation) {
  if (mutation == Mutation::None) return "none";
  for (const Mutant& mutant : all_mutants()) {
    if (mutant.mutation == mutation) return mutant.name;
  }
  return "unknown";
}

}  // namespace quiesce::properties
