// What a campaign does with the seeds that failed: it records each case as a trace and shrinks the trace
// to a minimal one with the same failure, so that a campaign ends in a pass or in minimal failing traces,
// each with the command that replays it (DESIGN §8). `quiesce campaign` and `quiesce run` call this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "quiesce/properties/campaign.h"
#include "quiesce/properties/cases.h"

namespace quiesce::properties {

struct FailingSeedOptions {
  std::string folder;  // where the traces go; created when a seed fails
  // How many failing seeds are recorded and shrunk: one bug tends to fail most seeds of a range, and a
  // shrink replays up to thousands of candidates.
  std::size_t shrink_max = 10;
  // The flags after `quiesce run --seed S` that rerun a case of this campaign, for the failing seeds past
  // shrink_max; when empty, those are only counted.
  std::string rerun_flags;
};

// Records the case of a failing `seed` into FOLDER/seed-S.qtrace, then shrinks it into
// FOLDER/seed-S.min.qtrace while the same failure reproduces. Says on `out` what it wrote; returns the
// command that replays the smallest trace written, or nothing when no trace could be written.
std::string record_and_shrink(std::uint64_t seed, const CaseOptions& case_options, const std::string& folder,
                              std::ostream& out);

// Gives every failing case of `report` its replay command: the first shrink_max through record_and_shrink,
// the others `quiesce run --seed S` with rerun_flags (or, without them, a count of those left alone).
void handle_failing_seeds(CampaignReport& report, const CaseOptions& case_options, const FailingSeedOptions& options,
                          std::ostream& out);

}  // namespace quiesce::properties
