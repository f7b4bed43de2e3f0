// quiesce run: a seeded workload on the simulated device; prints what it did, then the verdict lines.
#include <iostream>
#include <memory>

#include "commands.h"
#include "exit_status.h"
#include "plan_option.h"
#include "quiesce/core/digest.h"
#include "quiesce/core/validator.h"
#include "quiesce/faults/injector.h"
#include "quiesce/properties/raw_workload.h"
#include "quiesce/sim/device.h"

namespace quiesce::cli {
namespace {

struct RunOptions {
  std::uint64_t seed = 1;
  std::uint32_t operations = 2000;
  std::uint32_t queues = 3;
  std::string faults = "none";
};

int run_once(const RunOptions& options, std::ostream& out, std::ostream& err) {
  Result<faults::Plan, std::string> plan = load_plan(options.faults);
  if (!plan.ok()) {
    err << "quiesce run: " << plan.error() << "\n";
    return kExitBadInput;
  }
  sim::Config config;
  config.seed = options.seed;
  out << "quiesce run: raw contract workload on Validator<Injector<sim::Device>>\n" << sim::describe(config)
      << "# fault plan\n" << faults::to_text(plan.value());
  sim::Device device(config);
  Validator<faults::Injector<sim::Device>> stack(ValidatorOptions{ViolationMode::CollectAll}, device,
                                                std::move(plan).value(), Prng(options.seed).derive("faults"));
  properties::RawWorkloadOptions workload;
  workload.seed = options.seed;
  workload.operations = options.operations;
  workload.queues = options.queues;
  workload.on_liveness = [&stack] { stack.inner().set_injecting(false); };
  Digest digest;
  const properties::RawWorkloadStats stats = properties::run_raw_workload(stack, workload, digest);
  const std::uint64_t violations = stack.finish();
  properties::print_stats(stats, out);
  out << "injected faults: " << stack.inner().injected().size() << "\n";
  for (const Violation& violation : stack.violations()) out << "violation: " << stack.describe(violation) << "\n";
  for (const sim::Finding& finding : device.findings()) {
    out << "finding: " << sim::to_string(finding.kind) << ": " << finding.message << "\n";
  }
  digest.add(device.digest());
  out << "violations: " << violations << "\n";
  out << "findings: " << device.findings().size() << "\n";
  out << "digest: " << digest.hex() << "\n";
  return stats.clean() && violations == 0 && device.findings().empty() ? kExitHeld : kExitFailed;
}

}  // namespace

void add_run_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "Run a seeded workload on the simulated device and judge it");
  run->add_option("--seed", options->seed, "The seed that selects the run (any unsigned 64-bit integer)");
  run->add_option("--operations", options->operations, "Operations in the workload")
      ->check(CLI::Range(1U, 10'000'000U));
  run->add_option("--queues", options->queues, "Queues the workload submits to")->check(CLI::Range(1U, 16U));
  run->add_option("--faults", options->faults, "Fault plan: none, default, all, or a plan file (docs/faults.md)");
  run->callback([options, &result] { result.status = run_once(*options, std::cout, std::cerr); });
}

}  // namespace quiesce::cli
