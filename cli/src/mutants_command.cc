// quiesce mutants: the mutation score of the property suite. Every mutant (a runtime or backend with one
// planted bug, properties/mutants.h) runs seed after seed until a check catches it; exit 0 only when every
// one was caught.
#include <iostream>
#include <memory>

#include "commands.h"
#include "number_option.h"
#include "exit_status.h"
#include "quiesce/properties/mutants.h"

namespace quiesce::cli {
namespace {

struct MutantsFlags {
  std::uint32_t seeds_max = 64;
  std::uint32_t jobs = 2;
  std::uint32_t operations = 400;
  std::vector<std::string> only;
};

int mutants_command(const MutantsFlags& flags, std::ostream& out, std::ostream& err) {
  for (const std::string& name : flags.only) {
    bool known = false;
    for (const properties::Mutant& mutant : properties::all_mutants()) known = known || mutant.name == name;
    if (!known) {
      err << "quiesce mutants: --only names no mutant called '" << name << "'.\n";
      return kExitBadInput;
    }
  }
  properties::MutantOptions options;
  options.seeds_max = flags.seeds_max;
  options.jobs = flags.jobs;
  options.cases.operations = flags.operations;
  options.only = flags.only;
  const properties::MutantReport report = properties::run_mutants(options);
  properties::print_report(report, out);
  return report.caught() == report.total() ? kExitHeld : kExitFailed;
}

}  // namespace

void add_mutants_command(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<MutantsFlags>();
  CLI::App* mutants = app.add_subcommand("mutants", "Run every planted-bug runtime until the campaign catches it");
  add_unsigned_option(mutants, "--seeds-max", flags->seeds_max, "Cases per mutant before it counts as surviving")
      ->check(CLI::Range(1U, 1'000'000U));
  add_unsigned_option(mutants, "--jobs", flags->jobs, "Mutants run in parallel")->check(CLI::Range(1U, 64U));
  add_unsigned_option(mutants, "--operations", flags->operations, "Operations per case")->check(CLI::Range(1U, 1'000'000U));
  mutants->add_option("--only", flags->only, "Run only the mutants of these names");
  mutants->callback([flags, &result] { result.status = mutants_command(*flags, std::cout, std::cerr); });
}

}  // namespace quiesce::cli
