// Seeded campaigns: run one case per seed over a range, in parallel jobs, sharded like GoogleTest, and
// report the result as JSON and JUnit XML.
//
// Parse and merge errors are sentences (Result<T, std::string>) naming the value and where it was.
//
// A case is a function of its seed alone, so a campaign's report depends only on the seed range and the
// case function: it is the same for any number of jobs and any sharding (shard reports merge into the
// unsharded one). Wall-clock rates appear on the progress line only, never in a report.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "quiesce/core/result.h"

namespace quiesce::properties {

// The invariants of DESIGN §7.
enum class Invariant : std::uint8_t {
  R1 = 1, R2, R3, R4, R5, R6, R7, R8, R9, R10, R11, R12, R13, R14, R15, R16, R17, R18, R19, R20,
};
inline constexpr std::uint32_t kInvariantCount = 20;

std::string invariant_id(Invariant invariant);          // "R7"
std::string_view invariant_summary(Invariant invariant);  // one line from DESIGN §7

struct Failure {
  Invariant invariant = Invariant::R1;
  std::string message;

  friend bool operator==(const Failure&, const Failure&) = default;
};

struct CaseResult {
  std::uint64_t seed = 0;
  std::vector<Failure> failures;
  std::uint64_t digest = 0;
  std::uint64_t operations = 0;
  std::uint64_t violations = 0;  // contract violations the Validator reported
  std::uint64_t findings = 0;    // ground-truth findings of the simulator's oracle
  std::vector<std::string> probes_hit;  // names of the coverage probes this case reached
  std::string replay_command;           // how to replay the minimal trace of a failure, when one was written

  bool passed() const { return failures.empty(); }
  friend bool operator==(const CaseResult&, const CaseResult&) = default;
};

// An inclusive range of seeds, written "A..B" (or a single "A"). Its count can be 2^64 (0..2^64-1), which
// no 64-bit number holds: count seeds with seeds_in_shard.
struct SeedRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;

  friend bool operator==(const SeedRange&, const SeedRange&) = default;
};

// The GoogleTest sharding protocol: the i-th seed of the range runs in shard i mod total.
struct Shard {
  std::uint32_t index = 0;
  std::uint32_t total = 1;

  bool holds(const SeedRange& range, std::uint64_t seed) const { return (seed - range.first) % total == index; }
  friend bool operator==(const Shard&, const Shard&) = default;
};

// GTEST_TOTAL_SHARDS above this is refused: shard reports are merged in one process, a shard index is 32 bits.
inline constexpr std::uint32_t kShardsMax = 1'000'000;
// The most seeds one invocation runs (counting the seeds of its shard): every case's result is kept for
// the report, so a larger range would exhaust memory before it ended. Shard a larger range with
// GTEST_TOTAL_SHARDS and merge the reports.
inline constexpr std::uint64_t kSeedsPerInvocationMax = 100'000'000;

// How many seeds of `range` `shard` holds (range.first <= range.last, shard.index < shard.total). The one
// count that does not fit, 2^64 for 0..2^64-1 in one shard, saturates to 2^64-1: it is above any bound.
std::uint64_t seeds_in_shard(const SeedRange& range, const Shard& shard);

// Parses "A..B" or "A" for a run in `shard`; refuses a range that ends before it starts, and one of which
// `shard` would run more than kSeedsPerInvocationMax seeds, before any case runs.
Result<SeedRange, std::string> parse_seed_range(std::string_view text, const Shard& shard = {});

// Reads GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX; an absent pair is one shard, a malformed one an error.
Result<Shard, std::string> shard_from_environment();

struct CampaignOptions {
  std::string name = "campaign";
  SeedRange seeds = {};
  Shard shard = {};
  std::uint32_t jobs = 1;
  std::vector<std::string> probes_expected;  // reported as never reached when no case hit them
  std::ostream* progress = nullptr;          // progress lines; a carriage-return line on a terminal
  bool progress_is_terminal = false;
};

struct CampaignReport {
  std::string name;
  SeedRange seeds = {};
  std::vector<Shard> shards;       // the shards this report covers
  std::vector<CaseResult> cases;   // ordered by seed
  std::map<std::string, std::uint64_t> probe_hits;  // ordered: the report is deterministic
  std::vector<std::string> probes_expected;

  std::uint64_t failures() const;
  std::vector<std::string> probes_never_reached() const;
  friend bool operator==(const CampaignReport&, const CampaignReport&) = default;
};

using CaseRunner = std::function<CaseResult(std::uint64_t seed)>;

// Runs the seeds of options.seeds that options.shard holds, in ascending order of seed in the report. The
// shard must hold at most kSeedsPerInvocationMax seeds (parse_seed_range refuses more): the seeds are
// counted, not listed, but every result is kept.
CampaignReport run_campaign(const CampaignOptions& options, const CaseRunner& run_case);

nlohmann::json to_json(const CampaignReport& report);
// The same document as to_json, streamed: the head's fields first, then each case on a line of its own, so
// that a campaign of millions of cases neither builds the whole document in memory nor spends twenty lines
// a case (and `grep '"passed":false'` finds the failing ones).
void write_json(const CampaignReport& report, std::ostream& out);
// Reads a report that to_json or write_json wrote, and refuses one that is not consistent: every number
// an unsigned integer, a range that does not end before it starts, shards with index < total (one sharding,
// each shard once), cases in ascending order of seed, each a seed of the range held by one of the report's
// shards, every seed of those shards present, and the summary fields (cases_total, failures, probe_hits,
// probes_never_reached, each case's passed) equal to what the cases say. The error names the field, and the
// case by its seed.
Result<CampaignReport, std::string> report_from_json(const nlohmann::json& json);
std::string to_junit(const CampaignReport& report);
void write_junit(const CampaignReport& report, std::ostream& out);

// Joins shard reports of one campaign into one; refuses reports of different campaigns or shardings, a
// report without shards, overlapping shards, seeds outside their report's shards, probe counts past 2^64-1,
// or an incomplete set, saying which.
Result<CampaignReport, std::string> merge_reports(std::vector<CampaignReport> reports);

void print_summary(const CampaignReport& report, std::ostream& out);

}  // namespace quiesce::properties
