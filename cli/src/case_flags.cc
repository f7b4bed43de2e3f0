// The case flags of quiesce run and quiesce campaign.
#include "case_flags.h"

#include "plan_option.h"
#include "quiesce/properties/mutants.h"

namespace quiesce::cli {

Result<properties::CaseOptions, std::string> case_options_from(const CaseFlags& flags) {
  Result<faults::Plan, std::string> plan = load_plan(flags.faults);
  if (!plan.ok()) return plan.error();
  properties::CaseOptions options;
  options.plan = plan.value();
  options.workload = flags.workload == "raw" ? properties::WorkloadKind::Raw : properties::WorkloadKind::Engine;
  options.swarm = !flags.no_swarm;
  options.operations = flags.operations;
  if (flags.mutant.empty()) return options;
  // A name is looked up among the mutants of the workload asked for; one of the other workload gets the
  // flag that runs it.
  const bool raw = options.workload == properties::WorkloadKind::Raw;
  const Result<properties::Mutation, std::string> mutation = properties::raw_mutation(flags.mutant);
  const Result<properties::EngineBug, std::string> bug = properties::engine_mutation(flags.mutant);
  if (raw && mutation.ok()) {
    options.mutation = mutation.value();
    return options;
  }
  if (!raw && bug.ok()) {
    options.engine_bug = bug.value();
    return options;
  }
  if (bug.ok()) return "--mutant " + flags.mutant + " plants its bug in the reference engine: use --workload engine";
  if (mutation.ok()) {
    return "--mutant " + flags.mutant + " plants its bug in the raw workload's runtime: add --workload raw";
  }
  return "--mutant: " + (raw ? mutation.error() : bug.error());
}

std::string rerun_flags(const CaseFlags& flags) {
  return "--faults " + flags.faults + " --workload " + flags.workload + " --operations " +
         std::to_string(flags.operations) + (flags.no_swarm ? " --no-swarm" : "") +
         (flags.mutant.empty() ? "" : " --mutant " + flags.mutant);
}

}  // namespace quiesce::cli
