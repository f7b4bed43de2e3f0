// quiesce hil: hardware-in-loop validation on a real GPU (cuda/hil.h), with the simulator as the
// differential reference and the fault campaign through Validator<Injector<cuda::Device>>.
#include <iostream>
#include <memory>

#include "commands.h"
#include "quiesce/cuda/hil.h"
#include "quiesce/properties/hil_reference.h"

namespace quiesce::cli {

void add_hil_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<cuda::HilOptions>();
  auto no_campaign = std::make_shared<bool>(false);
  CLI::App* hil = app.add_subcommand(
      "hil", "On a GPU: genuine faults, differential runs against the simulator, a fault campaign, calibration");
  hil->add_option("--ordinal", options->ordinal, "The GPU");
  hil->add_option("--seed", options->seed, "The first differential seed");
  hil->add_option("--differential-runs", options->differential_runs, "Differential scripts (seeds seed, seed+1, ...)");
  hil->add_option("--calibrate", options->calibrate_out, "Also calibrate and write the cost profile here");
  hil->add_flag("--no-fault-campaign", *no_campaign, "Skip the fault campaign through the injector and validator");
  hil->callback([options, no_campaign, &result] {
    // hil_command forks its sticky-fault child before anything in this process touches CUDA.
    options->reference = hil::run_on_simulator;
    if (!*no_campaign) {
      options->fault_campaign = [](int ordinal, std::ostream& log) { return hil::fault_campaign(ordinal, log); };
    }
    result.status = cuda::hil_command(*options, std::cout, std::cerr);
  });
}

}  // namespace quiesce::cli
