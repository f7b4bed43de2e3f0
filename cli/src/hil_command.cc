// quiesce hil: hardware-in-loop validation on a real GPU (cuda/hil.h): the conformance suite on the GPU's
// stacks, the simulator as the differential reference and the fault campaigns through
// Validator<Injector<cuda::Device>>.
#include <iostream>
#include <limits>
#include <memory>

#include "commands.h"
#include "exit_status.h"
#include "number_option.h"
#include "quiesce/core/files.h"
#include "quiesce/cuda/hil.h"
#include "quiesce/properties/hil_reference.h"
#include "quiesce/sim/config.h"
#if QUIESCE_CONFORMANCE_AVAILABLE
#include "conformance_runner.h"
#endif

namespace quiesce::cli {
namespace {

#if QUIESCE_CONFORMANCE_AVAILABLE
// The conformance part: the suite's cuda cases (conformance_runner.h) as one check with the counts. The
// suite's fixtures open the first GPU whatever --ordinal says, and its name says so then.
std::vector<cuda::CheckResult> conformance_check(int ordinal, std::ostream& log) {
  std::string name = "conformance suite (cuda::Device; Validator<Injector<cuda::Device>> under none and default)";
  if (ordinal != 0) name += " on GPU 0, not --ordinal " + std::to_string(ordinal);
  conformance::SuiteOptions options;
  options.backend = conformance::SuiteBackend::Cuda;
  options.print_passed = false;
  options.indent = "   ";
  const Result<conformance::SuiteCounts, conformance::SuiteError> run = conformance::run_conformance(options, log);
  if (!run.ok()) return {cuda::CheckResult{name, false, run.error().message}};
  std::string detail = conformance::describe_counts(run.value());
  for (const std::string& failed : run.value().failed_cases) detail += "\n      failed: " + failed;
  if (run.value().failed_outside_cases) detail += "\n      failed: a check outside any case";
  return {cuda::CheckResult{name, run.value().all_passed(), detail}};
}
#endif

// --cost-profile read and parsed before anything else runs (the driver check included), so that a missing,
// unreadable or malformed profile is bad input (exit 2) naming the file and the line, not a failed
// prediction found at the end. The text goes to hil_command, which then does not read the file again.
std::string load_cost_profile_option(cuda::HilOptions& options) {
  if (options.cost_profile_in.empty()) return {};
  Result<std::string, FileError> text =
      read_whole_file(options.cost_profile_in, cuda::kCostProfileBytesMax, "cost profile");
  if (!text.ok()) return text.error().message;
  const Result<sim::CostProfile, std::string> parsed = sim::load_cost_profile(text.value());
  if (!parsed.ok()) return "--cost-profile " + options.cost_profile_in + ": " + parsed.error();
  options.cost_profile_text = std::move(text).value();
  return {};
}

}  // namespace

void add_hil_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<cuda::HilOptions>();
  auto no_conformance = std::make_shared<bool>(false);
  auto no_campaign = std::make_shared<bool>(false);
  auto no_engine_campaign = std::make_shared<bool>(false);
  auto no_prediction = std::make_shared<bool>(false);
  auto engine_runs = std::make_shared<std::uint32_t>(4);
  auto engine_operations = std::make_shared<std::uint32_t>(400);
  CLI::App* hil = app.add_subcommand(
      "hil", "On a GPU: genuine faults, the conformance suite, differential runs against the simulator, fault "
             "campaigns, calibration");
  hil->add_option("--ordinal", options->ordinal, "The GPU")->check(CLI::Range(0, std::numeric_limits<int>::max()));
  add_unsigned_option(hil, "--seed", options->seed, "The first differential seed");
  add_unsigned_option(hil, "--differential-runs", options->differential_runs, "Differential scripts (seeds seed, seed+1, ...)");
  hil->add_option("--calibrate", options->calibrate_out,
                  "Also calibrate and write the cost profile here (with --cost-profile: predict with that one, "
                  "then calibrate)");
  hil->add_flag("--no-conformance", *no_conformance,
                "Skip the conformance suite on cuda::Device and Validator<Injector<cuda::Device>>");
  hil->add_flag("--no-fault-campaign", *no_campaign, "Skip the fault campaign through the injector and validator");
  hil->add_flag("--no-engine-campaign", *no_engine_campaign,
                "Skip the fault campaign on the engine (Engine over Validator<Injector<cuda::Device>>)");
  add_unsigned_option(hil, "--engine-runs", *engine_runs, "Engine fault campaign seeds (seed, seed+1, ...)");
  add_unsigned_option(hil, "--engine-operations", *engine_operations, "Operations per engine fault campaign run");
  hil->add_option("--cost-profile", options->cost_profile_in,
                  "Predict with this cost profile instead of calibrating now");
  hil->add_flag("--no-prediction", *no_prediction, "Skip the simulator's predicted vs measured time report");
  hil->callback([options, no_conformance, no_campaign, no_engine_campaign, no_prediction, engine_runs,
                 engine_operations, &result] {
    // Bad input is exit 2 before the environment is looked at (hil_command checks the --calibrate path
    // itself, before its first fork).
    if (const std::string problem = load_cost_profile_option(*options); !problem.empty()) {
      std::cerr << "quiesce hil: " << problem << '\n';
      result.status = kExitBadInput;
      return;
    }
    // hil_command forks its sticky-fault child before anything in this process touches CUDA; the
    // conformance suite runs after it, in this process.
#if QUIESCE_CONFORMANCE_AVAILABLE
    if (!*no_conformance) options->conformance = conformance_check;
#else
    (void)no_conformance;  // without the test suite the part prints NOT RUN
#endif
    options->reference = hil::run_on_simulator;
    if (!*no_campaign) {
      options->fault_campaign = [](int ordinal, std::ostream& log) { return hil::fault_campaign(ordinal, log); };
    }
    if (!*no_engine_campaign) {
      const std::uint64_t seed = options->seed;
      const std::uint32_t runs = *engine_runs;
      const std::uint32_t operations = *engine_operations;
      options->engine_campaign = [seed, runs, operations](int ordinal, std::ostream& log) {
        return hil::engine_fault_campaign(ordinal, log, seed, runs, operations);
      };
    }
    options->predict = hil::predict_on_simulator;
    options->prediction = !*no_prediction;
    result.status = cuda::hil_command(*options, std::cout, std::cerr);
  });
}

}  // namespace quiesce::cli
