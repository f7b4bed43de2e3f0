// Each subcommand registers itself on the CLI11 app and reports its exit status through `status`.
#pragma once

#include <CLI/CLI.hpp>

namespace quiesce::cli {

struct CommandResult {
  int status = 0;
};

void add_run_command(CLI::App& app, CommandResult& result);
void add_campaign_commands(CLI::App& app, CommandResult& result);
void add_trace_commands(CLI::App& app, CommandResult& result);
void add_conformance_command(CLI::App& app, CommandResult& result);
void add_cuda_commands(CLI::App& app, CommandResult& result);
void add_hil_command(CLI::App& app, CommandResult& result);
void add_mutants_command(CLI::App& app, CommandResult& result);

}  // namespace quiesce::cli
