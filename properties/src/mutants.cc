// The mutant catalog and the mutation campaign: each mutant runs seed after seed until a check fails.
#include "quiesce/properties/mutants.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/properties/cases.h"
#include "quiesce/sim/device.h"
#include "mutants_provider.h"

namespace quiesce::properties {
namespace {

using I = Invariant;
using Stack = Validator<mutants_detail::ProviderMutant<faults::Injector<sim::Device>>>;

std::vector<Mutant> build_catalog() {
  const Ratio frequent_loss{1, 40};
  const Ratio frequent_release_faults{1, 8};
  return {
      {"free-while-pinned", "frees a buffer that a live event still references", Mutation::FreeWhilePinned,
       ProviderBug::None, {I::R1}, {}, {}, false, 0},
      {"destroy-unobserved-event", "destroys an event before observing a terminal state",
       Mutation::DestroyUnobservedEvent, ProviderBug::None, {I::R1}, {}, {}, false, 0},
      {"indeterminate-wait-as-terminal", "takes a FenceIndeterminate wait as Complete and releases what it pinned",
       Mutation::IndeterminateWaitAsTerminal, ProviderBug::None, {I::R2, I::R1}, {}, {}, false, 0},
      {"indeterminate-submit-unpinned", "pins nothing for an indeterminate submit, so its buffers get freed",
       Mutation::IndeterminateSubmitUnpinned, ProviderBug::None, {I::R2, I::R1}, {}, {}, false, 0},
      {"rejected-submit-applied", "takes a Rejected submit as run and puts its effects into the host model",
       Mutation::RejectedSubmitApplied, ProviderBug::None, {I::R3, I::R17}, {}, {}, false, 0},
      {"retry-indeterminate-submit", "submits an Indeterminate batch again with the same invocation",
       Mutation::RetryIndeterminateSubmit, ProviderBug::None, {I::R4}, {}, {}, false, 0},
      {"partial-submit-as-rejected", "takes a partial submit as rejected: drops its event and resubmits the batch",
       Mutation::PartialSubmitAsRejected, ProviderBug::None, {I::R5, I::R4}, {}, {}, false, 0},
      {"drop-rejected-release", "drops the live buffer handle a rejected free hands back",
       Mutation::DropRejectedRelease, ProviderBug::None, {I::R6, I::R9, I::R19}, {}, frequent_release_faults, false, 0},
      {"reuse-after-indeterminate-release", "keeps using a buffer whose release was indeterminate",
       Mutation::ReuseAfterIndeterminateRelease, ProviderBug::None, {I::R6}, {}, frequent_release_faults, true, 0},
      {"apply-won-cancellation", "puts the effects of a won cancellation into the host model",
       Mutation::ApplyWonCancellation, ProviderBug::None, {I::R8, I::R3}, {}, {}, false, 0},
      {"destroy-context-before-children", "destroys the context before its queues and programs",
       Mutation::DestroyContextBeforeChildren, ProviderBug::None, {I::R9}, {}, {}, false, 0},
      {"ignore-device-loss", "ignores DeviceLost and keeps calling the lost context", Mutation::IgnoreDeviceLoss,
       ProviderBug::None, {I::R10}, frequent_loss, {}, false, 0},
      {"release-on-lost-context", "frees every buffer of a lost context as if quiescent before discarding it",
       Mutation::ReleaseOnLostContext, ProviderBug::None, {I::R10, I::R1}, frequent_loss, {}, false, 0},
      {"abandon-after-local-error", "gives up every pending event after one batch failed (a non-sticky error)",
       Mutation::AbandonAfterLocalError, ProviderBug::None, {I::R11, I::R1}, {}, {}, false, 0},
      {"stream-ordered-free-unordered",
       "frees stream-ordered buffers while another queue's unordered work still uses them",
       Mutation::StreamOrderedFreeUnordered, ProviderBug::None, {I::R12, I::R1}, {}, {}, false, 0},
      {"capture-not-ended", "leaves a capture window open", Mutation::CaptureNotEnded, ProviderBug::None, {I::R13},
       {}, {}, false, 0},
      {"sync-inside-capture", "synchronises the capturing queue inside its capture window",
       Mutation::SyncInsideCapture, ProviderBug::None, {I::R13}, {}, {}, false, 0},
      {"captured-buffers-unpinned", "does not pin an executable's captured buffers, so they are freed under it",
       Mutation::CapturedBuffersUnpinned, ProviderBug::None, {I::R13}, {}, {}, false, 0},
      {"access-mode-forbidden", "binds a buffer for writing although its usage forbids writes",
       Mutation::AccessModeForbidden, ProviderBug::None, {I::R16}, {}, {}, false, 0},
      {"write-through-read-binding", "binds the buffer a kernel writes with Access::Read",
       Mutation::WriteThroughReadBinding, ProviderBug::None, {I::R16}, {}, {}, false, 0},
      {"unwritten-buffer-read", "takes a fresh buffer as initialised before anything wrote it",
       Mutation::UnwrittenBufferRead, ProviderBug::None, {I::R17}, {}, {}, false, 0},
      {"leak-at-shutdown", "forgets one buffer in the liveness phase", Mutation::LeakAtShutdown, ProviderBug::None,
       {I::R19}, {}, {}, false, 0},
      {"state-outside-seed", "chooses queues from a counter that outlives one run", Mutation::StateOutsideSeed,
       ProviderBug::None, {I::R20}, {}, {}, false, 1},
      {"provider-terminal-unstable", "the backend reports Pending for an event it already reported terminal",
       Mutation::None, ProviderBug::TerminalUnstable, {I::R7}, {}, {}, false, 0},
      {"provider-cancel-won-but-ran", "the backend answers a cancel as won without cancelling", Mutation::None,
       ProviderBug::CancelWonButRan, {I::R8}, {}, {}, false, 0},
      {"provider-timing-while-pending", "the backend attaches a timing receipt to a Pending poll", Mutation::None,
       ProviderBug::TimingWhilePending, {I::R15}, {}, {}, false, 0},
      {"provider-success-count-short", "the backend reports Submitted with fewer commands enqueued than sent",
       Mutation::None, ProviderBug::SuccessCountShort, {I::R5}, {}, {}, false, 0},
      {"provider-rejected-release-other", "the backend hands back a different handle from a rejected release",
       Mutation::None, ProviderBug::RejectedReleaseOther, {I::R6}, {}, frequent_release_faults, false, 0},
  };
}

void add_failure(CaseResult& result, Invariant invariant, std::string message) {
  result.failures.push_back(Failure{invariant, std::move(message)});
}

// Validator and oracle first: they name the call or access that broke an invariant; then the workload's
// own checks (data against the host model, stable terminals, the shutdown count).
void judge(Stack& stack, const sim::Device& device, const RawWorkloadStats& stats, CaseResult& result) {
  result.violations = stack.finish();
  result.findings = device.findings().size();
  for (const Violation& violation : stack.violations()) {
    add_failure(result, invariant_of(violation.rule), stack.describe(violation));
  }
  for (const sim::Finding& finding : device.findings()) add_failure(result, invariant_of(finding.kind), finding.message);
  for (const std::string& problem : stats.problems) {
    Invariant invariant = I::R19;
    if (problem.starts_with("read of buffer")) invariant = I::R3;
    if (problem.find("changed its terminal state") != std::string::npos) invariant = I::R7;
    add_failure(result, invariant, problem);
  }
}

std::uint64_t run_once(const Mutant& mutant, std::uint64_t seed, const MutantCaseOptions& options,
                       std::uint64_t& run_counter, CaseResult& result) {
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

std::string_view to_string(Mutation mutation) {
  if (mutation == Mutation::None) return "none";
  for (const Mutant& mutant : all_mutants()) {
    if (mutant.mutation == mutation) return mutant.name;
  }
  return "unknown";
}

}  // namespace quiesce::properties
