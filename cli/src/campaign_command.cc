// quiesce campaign: a seed range of cases, in parallel jobs and GoogleTest shards, with JSON and JUnit
// reports in an output folder; quiesce merge joins shard reports into one.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "number_option.h"
#include "exit_status.h"
#include "case_flags.h"
#include "workload_probes.h"
#include "quiesce/core/digest.h"
#include "quiesce/core/files.h"
#include "quiesce/core/printable.h"
#include "quiesce/core/repeated_keys.h"
#include "quiesce/properties/cases.h"
#include "quiesce/properties/failing_seeds.h"

namespace quiesce::cli {
namespace {

struct CampaignFlags {
  std::string seeds = "0..999";
  std::uint32_t jobs = 2;
  std::uint32_t operations = 1000;
  std::string faults = "default";
  std::string workload = "engine";
  bool no_swarm = false;
  std::string out = "quiesce-campaign";
  std::string mutant;  // a mutant's name (raw workload or engine): the campaign runs against that planted bug
};

// The bound on a report merge reads: a report is a line of about 200 bytes a case, and a shard holds at most
// kSeedsPerInvocationMax cases; a merge holds every report in memory at once.
constexpr std::uint64_t kReportBytesMax = std::uint64_t{1} << 30;

// Writes the report's JSON straight into its file, atomically (it can be hundreds of MB).
Result<void, FileError> write_report(const std::filesystem::path& path, const properties::CampaignReport& report,
                                     std::string_view what) {
  return write_file_atomically(path, [&report](std::ostream& out) { properties::write_json(report, out); }, what);
}

// Before any case runs: the output folder exists and both reports could be written into it (core's
// check_writable), so that a campaign of hours does not end in a report it cannot write. Says why not.
Result<bool, std::string> check_output_folder(const std::filesystem::path& folder,
                                              const std::vector<std::filesystem::path>& reports) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return "cannot create the output folder " + folder.string() + ": " + error.message();
  for (const std::filesystem::path& report : reports) {
    if (Result<void, FileError> writable = check_writable(report, "report"); !writable.ok()) {
      return writable.error().message;
    }
  }
  return true;
}

// Writes junit.xml, then summary.json, each atomically; when summary.json cannot be written, the new
// junit.xml is removed again, so that the folder never holds this run's junit.xml beside another's summary.
bool write_reports(const properties::CampaignReport& report, const std::filesystem::path& summary,
                   const std::filesystem::path& junit, std::ostream& err) {
  if (Result<void, FileError> written = write_file_atomically(junit, properties::to_junit(report), "JUnit report");
      !written.ok()) {
    err << "quiesce campaign: " << written.error().message << "\n";
    return false;
  }
  if (Result<void, FileError> written = write_report(summary, report, "summary report");
      !written.ok()) {
    std::error_code ignored;
    std::filesystem::remove(junit, ignored);
    err << "quiesce campaign: " << written.error().message << "; " << junit.string() << " is removed again\n";
    return false;
  }
  return true;
}

std::string shard_suffix(const properties::Shard& shard) {
  return shard.total == 1 ? "" : "-shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.total);
}

int campaign_command(const CampaignFlags& flags, std::ostream& out, std::ostream& err) {
  const CaseFlags case_flags{flags.faults, flags.workload, flags.operations, flags.no_swarm, flags.mutant};
  Result<properties::CaseOptions, std::string> made = case_options_from(case_flags);
  if (!made.ok()) {
    err << "quiesce campaign: " << made.error() << "\n";
    return kExitBadInput;
  }
  const properties::CaseOptions case_options = made.value();
  Result<properties::Shard, std::string> shard = properties::shard_from_environment();
  if (!shard.ok()) {
    err << "quiesce campaign: " << shard.error() << "\n";
    return kExitBadInput;
  }
  // The range is bounded by the seeds this shard runs, so a larger range is run in more shards.
  Result<properties::SeedRange, std::string> seeds = properties::parse_seed_range(flags.seeds, shard.value());
  if (!seeds.ok()) {
    err << "quiesce campaign: --seeds: " << seeds.error() << "\n";
    return kExitBadInput;
  }
  // The sharding protocol's acknowledgement: a runner that names GTEST_SHARD_STATUS_FILE learns from the
  // file's existence that this program shards.
  if (const char* status_file = std::getenv("GTEST_SHARD_STATUS_FILE"); status_file != nullptr) {
    std::ofstream acknowledged(status_file, std::ios::app);
    if (!acknowledged) {
      err << "quiesce campaign: cannot create GTEST_SHARD_STATUS_FILE " << status_file << "\n";
      return kExitBadInput;
    }
  }
  const std::filesystem::path folder(flags.out);
  const std::string suffix = shard_suffix(shard.value());
  const std::filesystem::path summary = folder / ("summary" + suffix + ".json");
  const std::filesystem::path junit = folder / ("junit" + suffix + ".xml");
  if (Result<bool, std::string> ready = check_output_folder(folder, {summary, junit}); !ready.ok()) {
    err << "quiesce campaign: " << ready.error() << "\n";
    return kExitBadInput;
  }
  properties::CampaignOptions options;
  options.name = "campaign " + flags.workload + " " + flags.faults + (flags.mutant.empty() ? "" : " mutant " + flags.mutant);
  options.seeds = seeds.value();
  options.shard = shard.value();
  options.jobs = flags.jobs;
  options.probes_expected = probes_for(flags.workload);
  options.progress = &out;
  options.progress_is_terminal = ::isatty(STDOUT_FILENO) != 0;
  properties::CampaignReport report = properties::run_campaign(
      options, [&case_options](std::uint64_t seed) { return properties::run_case(seed, case_options); });
  properties::print_summary(report, out);
  print_probe_scope(flags.workload, out);
  properties::FailingSeedOptions failing;
  failing.folder = flags.out;
  failing.rerun_flags = rerun_flags(case_flags);
  properties::handle_failing_seeds(report, case_options, failing, out);
  if (!write_reports(report, summary, junit, err)) return kExitBadInput;
  out << "reports: " << summary.string() << ", " << junit.string() << "\n";
  return report.failures() == 0 ? kExitHeld : kExitFailed;
}

// A parse error's place as a reader finds it: line and column of the byte where parsing stopped.
std::string parse_stop(const std::string& text, std::size_t byte) {
  if (byte > text.size()) {
    return "it ends before the JSON document does (after byte " + std::to_string(text.size()) + ")";
  }
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i + 1 < byte; ++i) {
    column = text[i] == '\n' ? 1 : column + 1;
    if (text[i] == '\n') line++;
  }
  return "parsing stopped at byte " + std::to_string(byte) + " (line " + std::to_string(line) + ", column " +
         std::to_string(column) + ")";
}

Result<properties::CampaignReport, std::string> read_report(const std::string& input) {
  Result<std::string, FileError> text = read_whole_file(input, kReportBytesMax, "campaign report");
  if (!text.ok()) return text.error().message;
  // An object that names a key twice is refused: nlohmann would keep the last value silently.
  RepeatedKeys repeats;
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text.value(), repeats.parser_callback<nlohmann::json>());
  } catch (const nlohmann::json::parse_error& error) {
    return input + " is not JSON: " + parse_stop(text.value(), error.byte);
  } catch (const nlohmann::json::exception&) {
    return input + " is not JSON";
  }
  if (!repeats.repeated().empty()) {
    return input + " names the key '" + printable(repeats.repeated()) + "' twice in one object";
  }
  Result<properties::CampaignReport, std::string> report = properties::report_from_json(json);
  if (!report.ok()) return input + ": " + report.error();
  return report;
}

int merge_command(const std::vector<std::string>& inputs, const std::string& output, std::ostream& out,
                  std::ostream& err) {
  if (is_one_of(output, std::vector<std::filesystem::path>(inputs.begin(), inputs.end()))) {
    err << "quiesce merge: the output " << output << " is one of the reports to merge; name another -o file\n";
    return kExitBadInput;
  }
  std::vector<properties::CampaignReport> reports;
  for (const std::string& input : inputs) {
    Result<properties::CampaignReport, std::string> report = read_report(input);
    if (!report.ok()) {
      err << "quiesce merge: " << report.error() << "\n";
      return kExitBadInput;
    }
    reports.push_back(std::move(report).value());
  }
  Result<properties::CampaignReport, std::string> merged = properties::merge_reports(std::move(reports));
  if (!merged.ok()) {
    err << "quiesce merge: " << merged.error() << "\n";
    return kExitBadInput;
  }
  if (Result<void, FileError> written = write_report(output, merged.value(), "merged report");
      !written.ok()) {
    err << "quiesce merge: " << written.error().message << "\n";
    return kExitBadInput;
  }
  properties::print_summary(merged.value(), out);
  return merged.value().failures() == 0 ? kExitHeld : kExitFailed;
}

}  // namespace

void add_campaign_commands(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<CampaignFlags>();
  CLI::App* campaign = app.add_subcommand(
      "campaign", "Run a seed range of cases; shards follow GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX");
  campaign->add_option("--seeds", flags->seeds, "Seed range A..B (inclusive)");
  add_unsigned_option(campaign, "--jobs", flags->jobs, "Cases run in parallel")->check(CLI::Range(1U, 256U));
  add_unsigned_option(campaign, "--operations", flags->operations, "Operations per case")->check(CLI::Range(1U, 10'000'000U));
  campaign->add_option("--faults", flags->faults, "Fault plan: none, default, all, or a plan file");
  campaign->add_option("--workload", flags->workload, "engine or raw")->check(CLI::IsMember({"engine", "raw"}));
  campaign->add_flag("--no-swarm", flags->no_swarm, "Keep every fault family of the plan on in every case");
  campaign->add_option("--out", flags->out,
                       "Output folder for summary.json, junit.xml and the minimal traces of failing seeds");
  campaign->add_option("--mutant", flags->mutant,
                       "Run against a planted bug (quiesce mutants lists them): a raw-workload mutant with --workload raw, an "
                  "engine-* mutant with the engine workload");
  campaign->callback([flags, &result] { result.status = campaign_command(*flags, std::cout, std::cerr); });

  auto inputs = std::make_shared<std::vector<std::string>>();
  auto output = std::make_shared<std::string>("merged.json");
  CLI::App* merge = app.add_subcommand("merge", "Join the shard reports of one campaign into one report");
  merge->add_option("reports", *inputs, "Shard summary JSON files")->required();
  merge->add_option("-o,--output", *output, "The merged report");
  merge->callback([inputs, output, &result] { result.status = merge_command(*inputs, *output, std::cout, std::cerr); });
}

}  // namespace quiesce::cli
