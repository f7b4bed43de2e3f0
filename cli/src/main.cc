// quiesce: deterministic simulation and fault injection for GPU device runtimes.
//
// Exit status: 0 every invariant held; 1 an invariant failed; 2 bad usage or input; 3 the environment lacks
// what was asked for. A parse error names the flag or value and exits 2; so does standard output that could
// not be written, unless the command already failed with 1.
#include <iostream>

#include "commands.h"
#include "exit_status.h"

int main(int argc, char** argv) {
  CLI::App app{"quiesce: deterministic simulation and fault injection for GPU device runtimes", "quiesce"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "quiesce 0.1.0");
  quiesce::cli::CommandResult result;
  quiesce::cli::add_run_command(app, result);
  quiesce::cli::add_campaign_commands(app, result);
  quiesce::cli::add_trace_commands(app, result);
  quiesce::cli::add_conformance_command(app, result);
  quiesce::cli::add_cuda_commands(app, result);
  quiesce::cli::add_hil_command(app, result);
  quiesce::cli::add_mutants_command(app, result);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help or --version

    std::cerr << "quiesce: " << error.what() << "\nRun 'quiesce --help' for the subcommands and their flags.\n";
    return quiesce::cli::kExitBadInput;
  }
  // Output that never reached standard output (a full disk, /dev/full, a closed descriptor) is lost: say so,
  // and do not exit 0 as if the report had been delivered.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "quiesce: cannot write standard output: what this command printed was lost\n";
    if (result.status == quiesce::cli::kExitHeld) return quiesce::cli::kExitBadInput;
  }
  return result.status;
}
