// quiesce run: the default fault campaign on the simulated device, or one seed of it in detail.
//
// Without --seed it is a campaign over --seeds (default 0..29999) of engine workloads under the `default`
// fault plan with swarm testing, sized to finish in about a minute on two cores. With --seed it runs that
// one case and prints everything it did. Either way the last lines are `violations:`, `findings:` and
// `digest:`. --trace records that one case (engine or raw workload, the same run and digest as without
// --trace) as a trace; --check-determinism records it twice and compares the bytes (record_case.h). A
// campaign's failing seeds are recorded and shrunk into --out (failing_seeds.h).
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.h"
#include "number_option.h"
#include "exit_status.h"
#include "case_flags.h"
#include "workload_probes.h"
#include "quiesce/core/digest.h"
#include "quiesce/core/files.h"
#include "quiesce/properties/cases.h"
#include "quiesce/properties/failing_seeds.h"
#include "quiesce/properties/record_case.h"
#include "quiesce/properties/replay.h"
#include "quiesce/sim/config.h"
#include "quiesce/traces/commands.h"

namespace quiesce::cli {
namespace {

// `folder` is a directory that may be written, or does not exist yet and the nearest folder above it that
// does may be written (create_directories can then make it).
Result<void, FileError> check_folder_can_hold(const std::filesystem::path& folder) {
  std::error_code error;
  if (std::filesystem::exists(folder, error)) {
    if (!std::filesystem::is_directory(folder, error)) {
      return FileError{"cannot keep failing seeds in '" + folder.string() + "': it is not a directory"};
    }
    return check_writable(folder / "seed", "failing seeds' folder");
  }
  std::filesystem::path above = std::filesystem::absolute(folder, error).parent_path();
  while (!above.empty() && !std::filesystem::exists(above, error)) above = above.parent_path();
  return check_writable(above / "seed", "failing seeds' folder");
}

// A path or a name given as an empty string is a mistake (a variable that was not set), never "none".
const CLI::Validator kNotEmpty(
    [](std::string& text) { return text.empty() ? std::string("an empty value names nothing") : std::string(); }, "");

struct RunOptions {
  std::optional<std::uint64_t> seed;
  std::string seeds = "0..29999";
  std::uint32_t operations = 1000;
  std::uint32_t jobs = 2;
  std::string faults = "default";
  std::string workload = "engine";
  bool no_swarm = false;
  std::string trace;
  std::string encoding;  // empty: from the name of --trace (traces::encoding_for_path)
  bool check_determinism = false;
  std::string out = "quiesce-failures";  // the campaign's failing seeds, recorded and shrunk
  std::string mutant;                     // a mutant (raw or engine): run against that planted bug
};

void print_verdict(std::uint64_t violations, std::uint64_t findings, std::uint64_t digest, std::ostream& out) {
  out << "violations: " << violations << "\n";
  out << "findings: " << findings << "\n";
  out << "digest: " << to_hex(digest) << "\n";
}

void print_difference(const properties::Divergence& divergence, std::ostream& out) {
  out << "divergence at record " << divergence.record_index << "\n  expected: " << divergence.expected
      << "\n  actual:   " << divergence.actual << "\n";
}

int run_recorded(const RunOptions& options, const properties::CaseOptions& case_options, std::ostream& out,
                 std::ostream& err) {
  const std::uint64_t seed = options.seed.value_or(1);
  if (options.check_determinism) {
    const properties::DeterminismReport report = properties::check_case_determinism(seed, case_options);
    if (report.identical) {
      out << "deterministic: two runs of seed " << seed << " wrote the same " << report.bytes << " bytes ("
          << report.records << " records)\n";
      return kExitHeld;
    }
    err << "quiesce run: two runs of seed " << seed << " differ\n";
    if (report.difference.has_value()) print_difference(*report.difference, out);
    return kExitFailed;
  }
  const std::optional<traces::Encoding> encoding = options.encoding.empty()
                                                       ? traces::encoding_for_path(options.trace)
                                                       : traces::encoding_from_string(options.encoding);
  if (!encoding) {
    err << "quiesce run: --encoding must be binary or jsonl, not '" << options.encoding << "'\n";
    return kExitBadInput;
  }
  // The output is checked before the case runs (a long case would otherwise be lost at the end), and it
  // may not be the fault plan the case reads.
  if (is_one_of(options.trace, {options.faults})) {
    err << "quiesce run: --trace '" << options.trace << "' is the fault plan file; name another file\n";
    return kExitBadInput;
  }
  if (Result<void, FileError> writable = check_writable(options.trace, "trace"); !writable.ok()) {
    err << "quiesce run: --trace: " << writable.error().message << "\n";
    return kExitBadInput;
  }
  const properties::RecordedCase run = properties::record_case(seed, case_options);
  traces::TraceResult<void> written;
  if (*encoding == traces::Encoding::Binary) {
    written = traces::write_bytes_file(options.trace, run.trace);
  } else {
    traces::TraceResult<traces::Trace> decoded = traces::decode_binary(run.trace);
    written = decoded.ok() ? traces::write_trace_file(options.trace, decoded.value(), *encoding)
                           : traces::TraceResult<void>(decoded.error());
  }
  if (!written.ok()) {
    err << "quiesce run: " << written.error().message() << "\n";
    return kExitBadInput;
  }
  out << run.report;
  for (const properties::Failure& failure : run.result.failures) {
    out << "failed: " << properties::invariant_id(failure.invariant) << ": " << failure.message << "\n";
  }
  out << "trace: " << options.trace << " (" << (*encoding == traces::Encoding::Binary ? "binary" : "JSON Lines") << ", "
      << run.footer.record_count << " records, " << run.trace.size() << " bytes binary, digest "
      << to_hex(run.footer.digest) << ")\n";
  print_verdict(run.result.violations, run.result.findings, run.result.digest, out);
  return run.result.passed() ? kExitHeld : kExitFailed;
}

int run_command(const RunOptions& options, std::ostream& out, std::ostream& err) {
  const CaseFlags case_flags{options.faults, options.workload, options.operations, options.no_swarm, options.mutant};
  Result<properties::CaseOptions, std::string> made = case_options_from(case_flags);
  if (!made.ok()) {
    err << "quiesce run: " << made.error() << "\n";
    return kExitBadInput;
  }
  properties::CaseOptions case_options = made.value();
  out << "quiesce run: " << options.workload << " workload on Validator<Injector<sim::Device>>, fault plan "
      << options.faults << (case_options.swarm ? " with swarm testing" : "") << ", " << options.operations
      << " operations per case" << (options.mutant.empty() ? "" : ", against mutant " + options.mutant) << "\n";
  if (!options.trace.empty() || options.check_determinism) return run_recorded(options, case_options, out, err);
  if (options.seed) {
    sim::Config config;
    config.seed = *options.seed;
    out << sim::describe(config) << "# fault plan\n" << faults::to_text(case_options.plan);
    case_options.detail = &out;
    const properties::CaseResult result = properties::run_case(*options.seed, case_options);
    for (const properties::Failure& failure : result.failures) {
      out << "failed: " << properties::invariant_id(failure.invariant) << ": " << failure.message << "\n";
    }
    print_verdict(result.violations, result.findings, result.digest, out);
    return result.passed() ? kExitHeld : kExitFailed;
  }
  Result<properties::SeedRange, std::string> seeds = properties::parse_seed_range(options.seeds);
  if (!seeds.ok()) {
    err << "quiesce run: --seeds: " << seeds.error() << "\n";
    return kExitBadInput;
  }
  // The failing seeds' folder is made only when a seed fails, but whether it can be is known now: a run of
  // 30,000 cases should not learn at its end that no failing trace can be kept.
  if (Result<void, FileError> folder = check_folder_can_hold(options.out); !folder.ok()) {
    err << "quiesce run: --out: " << folder.error().message << "\n";
    return kExitBadInput;
  }
  properties::CampaignOptions campaign;
  campaign.name = "run";
  campaign.seeds = seeds.value();
  campaign.jobs = options.jobs;
  campaign.probes_expected = probes_for(options.workload);
  campaign.progress = &out;
  properties::CampaignReport report =
      properties::run_campaign(campaign, [&case_options](std::uint64_t seed) { return properties::run_case(seed, case_options); });
  properties::print_summary(report, out);
  print_probe_scope(options.workload, out);
  properties::FailingSeedOptions failing;
  failing.folder = options.out;
  failing.rerun_flags = rerun_flags(case_flags);
  properties::handle_failing_seeds(report, case_options, failing, out);
  std::uint64_t violations = 0;
  std::uint64_t findings = 0;
  Digest digest;
  for (const properties::CaseResult& result : report.cases) {
    violations += result.violations;
    findings += result.findings;
    digest.add(result.digest);
  }
  print_verdict(violations, findings, digest.value(), out);
  return report.failures() == 0 ? kExitHeld : kExitFailed;
}

}  // namespace

void add_run_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "The default fault campaign on the simulated device, or one seed of it");
  CLI::Option* seed = add_unsigned_option(run, "--seed", options->seed, "Run only this seed, and print everything it did");
  CLI::Option* seeds = run->add_option("--seeds", options->seeds, "The campaign's seed range A..B (inclusive)");
  add_unsigned_option(run, "--operations", options->operations, "Operations per case")->check(CLI::Range(1U, 10'000'000U));
  CLI::Option* jobs =
      add_unsigned_option(run, "--jobs", options->jobs, "Cases run in parallel")->check(CLI::Range(1U, 256U));
  run->add_option("--faults", options->faults, "Fault plan: none, default, all, or a plan file (docs/faults.md)");
  run->add_option("--workload", options->workload, "engine (the reference engine) or raw (the raw contract workload)")
      ->check(CLI::IsMember({"engine", "raw"}));
  run->add_flag("--no-swarm", options->no_swarm, "Keep every fault family of the plan on in every case");
  CLI::Option* trace =
      run->add_option("--trace", options->trace, "Record the case of --seed (engine or raw workload) into this trace file")
          ->check(kNotEmpty);
  CLI::Option* encoding = run->add_option(
      "--encoding", options->encoding, "Trace encoding for --trace: binary or jsonl (default: jsonl for a .jsonl or .json name)");
  CLI::Option* determinism = run->add_flag("--check-determinism", options->check_determinism,
                                           "Record the case of --seed twice and compare the traces byte for byte");
  run->add_option("--mutant", options->mutant,
                  "Run against a planted bug (quiesce mutants lists them): a raw-workload mutant with --workload raw, an "
                  "engine-* mutant with the engine workload")
      ->check(kNotEmpty);
  CLI::Option* out = run->add_option(
      "--out", options->out, "Where the campaign's failing seeds go, recorded and shrunk (created only when one fails)");
  // One seed in detail or a campaign: the flags of one make no sense with the other, and are refused rather
  // than ignored.
  seed->excludes(seeds)->excludes(jobs)->excludes(out);
  trace->needs(seed)->excludes(determinism);
  determinism->needs(seed);
  encoding->needs(trace);
  run->callback([options, &result] { result.status = run_command(*options, std::cout, std::cerr); });
}

}  // namespace quiesce::cli
