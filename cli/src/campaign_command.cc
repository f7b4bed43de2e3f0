// quiesce campaign: a seed range of cases, in parallel jobs and GoogleTest shards, with JSON and JUnit
// reports in an output folder; quiesce merge joins shard reports into one.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
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

// Streams a report into `path` through `write`; a failure to open or to write is reported the same way.
bool write_file(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                std::ostream& err) {
  std::ofstream file(path);
  if (file) write(file);
  file.flush();
  if (!file) {
    err << "quiesce: cannot write " << path.string() << "\n";
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
  Result<properties::SeedRange, std::string> seeds = properties::parse_seed_range(flags.seeds);
  if (!seeds.ok()) {
    err << "quiesce campaign: --seeds: " << seeds.error() << "\n";
    return kExitBadInput;
  }
  Result<properties::Shard, std::string> shard = properties::shard_from_environment();
  if (!shard.ok()) {
    err << "quiesce campaign: " << shard.error() << "\n";
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
  std::error_code error;
  std::filesystem::create_directories(flags.out, error);
  if (error) {
    err << "quiesce campaign: cannot create the output folder " << flags.out << ": " << error.message() << "\n";
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
  const std::filesystem::path folder(flags.out);
  properties::FailingSeedOptions failing;
  failing.folder = flags.out;
  failing.rerun_flags = rerun_flags(case_flags);
  properties::handle_failing_seeds(report, case_options, failing, out);
  const std::string suffix = shard_suffix(shard.value());
  if (!write_file(folder / ("summary" + suffix + ".json"),
                  [&](std::ostream& file) { properties::write_json(report, file); }, err) ||
      !write_file(folder / ("junit" + suffix + ".xml"),
                  [&](std::ostream& file) { properties::write_junit(report, file); }, err)) {
    return kExitBadInput;
  }
  out << "reports: " << (folder / ("summary" + suffix + ".json")).string() << ", "
      << (folder / ("junit" + suffix + ".xml")).string() << "\n";
  return report.failures() == 0 ? kExitHeld : kExitFailed;
}

int merge_command(const std::vector<std::string>& inputs, const std::string& output, std::ostream& out,
                  std::ostream& err) {
  std::vector<properties::CampaignReport> reports;
  for (const std::string& input : inputs) {
    std::ifstream file(input);
    if (!file) {
      err << "quiesce merge: cannot read " << input << "\n";
      return kExitBadInput;
    }
    nlohmann::json json = nlohmann::json::parse(file, nullptr, false);
    if (json.is_discarded()) {
      err << "quiesce merge: " << input << " is not JSON\n";
      return kExitBadInput;
    }
    Result<properties::CampaignReport, std::string> report = properties::report_from_json(json);
    if (!report.ok()) {
      err << "quiesce merge: " << input << ": " << report.error() << "\n";
      return kExitBadInput;
    }
    reports.push_back(std::move(report).value());
  }
  Result<properties::CampaignReport, std::string> merged = properties::merge_reports(std::move(reports));
  if (!merged.ok()) {
    err << "quiesce merge: " << merged.error() << "\n";
    return kExitBadInput;
  }
  if (!write_file(output, [&](std::ostream& file) { properties::write_json(merged.value(), file); }, err)) {
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
