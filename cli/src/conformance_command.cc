// quiesce conformance --backend sim|cuda: the conformance suite of tests/conformance (the instance files the
// quiesce_conformance_* test binaries are built from, linked into this command) on the backend's stacks, in
// this process (conformance_runner.h). Exit 0 when every case passed or was skipped, 1 when one failed, 2 for
// a bad flag or a filter that selects no case (judged first), 3 without a CUDA driver (--backend cuda).
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "exit_status.h"
#if QUIESCE_CONFORMANCE_AVAILABLE
#include "conformance_runner.h"
#endif

namespace quiesce::cli {
namespace {

struct ConformanceFlags {
  std::string backend = "sim";
  std::string filter;
  bool failures_only = false;
};

#if QUIESCE_CONFORMANCE_AVAILABLE

int exit_status_of(conformance::SuiteErrorKind kind) {
  switch (kind) {
    case conformance::SuiteErrorKind::NoDriver:
      return kExitEnvironment;
    case conformance::SuiteErrorKind::NoCaseMatches:
      return kExitBadInput;
    case conformance::SuiteErrorKind::UnassignedCase:
      return kExitFailed;
  }
  return kExitFailed;
}

int conformance_command(const ConformanceFlags& flags, std::ostream& out, std::ostream& err) {
  conformance::SuiteOptions options;
  options.backend = flags.backend == "cuda" ? conformance::SuiteBackend::Cuda : conformance::SuiteBackend::Sim;
  options.filter = flags.filter;
  options.print_passed = !flags.failures_only;
  const Result<conformance::SuiteCounts, conformance::SuiteError> run = conformance::run_conformance(options, out);
  if (!run.ok()) {
    err << "quiesce conformance --backend " << flags.backend << ": " << run.error().message << '\n';
    return exit_status_of(run.error().kind);
  }
  const conformance::SuiteCounts& counts = run.value();
  for (const std::string& name : counts.failed_cases) out << "failed: " << name << '\n';
  if (counts.failed_outside_cases) out << "failed: a check outside any case (see FAIL above)\n";
  out << conformance::describe_counts(counts) << '\n';
  return counts.all_passed() ? kExitHeld : kExitFailed;
}

#else

int conformance_command(const ConformanceFlags& flags, std::ostream& out, std::ostream& err) {
  (void)out;
  err << "quiesce conformance --backend " << flags.backend
      << ": this quiesce was built without the test suite (QUIESCE_BUILD_TESTS=OFF), so it has no conformance "
         "suite to run\n";
  return kExitEnvironment;
}

#endif

}  // namespace

void add_conformance_command(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<ConformanceFlags>();
  CLI::App* command = app.add_subcommand(
      "conformance", "Run the backend conformance suite on the simulator's stacks or on the GPU's (exit 3 without "
                     "a CUDA driver)");
  command->add_option("--backend", flags->backend,
                      "sim: sim::Device, Injector<sim::Device> under none/default/all and Validator<...>; cuda: "
                      "cuda::Device and Validator<Injector<cuda::Device>>")
      ->check(CLI::IsMember({"sim", "cuda"}));
  command->add_option("--filter", flags->filter,
                      "A GoogleTest filter over the case names, e.g. '*Capture*' or 'Injector/*-*Misuse*'");
  command->add_flag("--failures-only", flags->failures_only, "Print only failed and skipped cases and the summary");
  command->callback([flags, &result] { result.status = conformance_command(*flags, std::cout, std::cerr); });
}

}  // namespace quiesce::cli
