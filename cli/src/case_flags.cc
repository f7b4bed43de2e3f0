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
  if (options.workload == properties::WorkloadKind::Raw) {
    Result<properties::Mutation, std::string> mutation = properties::raw_mutation(flags.mutant);
    if (mutation.ok()) {
      options.mutation = mutation.value();
      return options;
    }
    if (properties::engine_mutation(flags.mutant).ok()) {
      return "--mutant " + flags.mutant + " plants its bug in the reference engine: use --workload engine";
    }
    return "--mutant: " + mutation.error();
  }
  Result<properties::EngineBug, std::string> bug = properties::engine_mutation(flags.mutant);
  if (bug.ok()) {
    options.engine_bug = bug.value();
    return options;
  }
  if (properties::raw_mutation(flags.mutant).ok()) {
    return "--mutant " + flags.mutant + " plants its bug in the raw workload's runtime: add --workload raw";
  }
  return "--mutant: " + bug.error();
}

std::string rerun_flags(const CaseFlags& flags) {
  return "--faults " + flags.faults + " --workload " + flags.workload + " --operations " +
         std::to_string(flags.operations) + (flags.no_swarm ? " --no-swarm" : "") +
         (flags.mutant.empty() ? "" : " --mutant " + flags.mutant);
}

}  // namespace quiesce::cli
