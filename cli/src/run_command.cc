// quiesce run: a seeded workload on the simulated device; prints what it did, then the verdict lines.
#include <iostream>
#include <memory>

#include "commands.h"
#include "exit_status.h"
#include "quiesce/core/digest.h"
#include "quiesce/properties/raw_workload.h"
#include "quiesce/sim/device.h"

namespace quiesce::cli {
namespace {

struct RunOptions {
  std::uint64_t seed = 1;
  std::uint32_t operations = 2000;
  std::uint32_t queues = 3;
};

int run_once(const RunOptions& options, std::ostream& out) {
  sim::Config config;
  config.seed = options.seed;
  out << "quiesce run: raw contract workload on the simulated device\n" << sim::describe(config);
  sim::Device device(config);
  properties::RawWorkloadOptions workload;
  workload.seed = options.seed;
  workload.operations = options.operations;
  workload.queues = options.queues;
  Digest digest;
  const properties::RawWorkloadStats stats = properties::run_raw_workload(device, workload, digest);
  properties::print_stats(stats, out);
  for (const sim::Finding& finding : device.findings()) out << "finding: " << sim::to_string(finding.kind) << ": " << finding.message << "\n";
  digest.add(device.digest());
  out << "findings: " << device.findings().size() << "\n";
  out << "digest: " << digest.hex() << "\n";
  return stats.clean() && device.findings().empty() ? kExitHeld : kExitFailed;
}

}  // namespace

void add_run_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "Run a seeded workload on the simulated device and judge it");
  run->add_option("--seed", options->seed, "The seed that selects the run (any unsigned 64-bit integer)");
  run->add_option("--operations", options->operations, "Operations in the workload")
      ->check(CLI::Range(1U, 10'000'000U));
  run->add_option("--queues", options->queues, "Queues the workload submits to")->check(CLI::Range(1U, 16U));
  run->callback([options, &result] { result.status = run_once(*options, std::cout); });
}

}  // namespace quiesce::cli
