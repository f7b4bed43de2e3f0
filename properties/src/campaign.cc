// The campaign runner: seeds over jobs, GoogleTest sharding, reports and merging.
#include "quiesce/properties/campaign.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace quiesce::properties {
namespace {

constexpr std::string_view kSummaries[kInvariantCount] = {
    "No release without quiescence: nothing a submission references is released or reused before its event is terminal.",
    "Indeterminate is absorbing: everything an indeterminate outcome reaches stays retained until a terminal or a discard.",
    "Rejected means nothing ran and nothing was retained; exact retry is allowed.",
    "Indeterminate work is never resubmitted as if rejected: no invocation executes twice.",
    "A partial submit is reported indeterminate, never rejected, never plain success.",
    "A rejected release returns the same live handle; an indeterminate release invalidates it forever.",
    "Terminal states are stable; queries never block and never release.",
    "Cancellation is decided exactly once: won (Cancelled, no effects) or lost (Busy, then a normal terminal).",
    "Parents outlive children; no handle of an old epoch resolves.",
    "A sticky fault fails every later call on that context; no release is attempted as if quiescent.",
    "Non-sticky errors stay local: other in-flight events still resolve.",
    "Stream-ordered frees: memory is reused only by work ordered after the free.",
    "Capture discipline: no sync or query inside a capture window; every begin is ended; captured buffers stay pinned.",
    "Errors are deferred, never lost: each asynchronous failure surfaces exactly once at the next flush or sync.",
    "Timing exists only after a terminal; no timing is reported as unavailable, never as zero.",
    "Access modes are checked against buffer usage before the backend is called; a violation retains nothing.",
    "A program retains at most its resident_bytes; imports are all-or-nothing and invisible before seal.",
    "Dry-run launches change no bytes; pool layouts change only when nothing is live.",
    "Conservation: every resource is released exactly once or quarantined with its cause; the ledger returns to baseline.",
    "Determinism: same seed, same build, the same trace byte for byte.",
};

Result<std::uint64_t, std::string> parse_u64(std::string_view text, std::string_view what) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
    return std::string(what) + " '" + std::string(text) + "' is not an unsigned 64-bit integer";
  }
  return value;
}

void print_progress(const CampaignOptions& options, std::uint64_t done, std::uint64_t total, std::uint64_t failed,
                    std::chrono::steady_clock::time_point start) {
  const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start).count();
  const std::uint64_t rate = elapsed_ms > 0 ? done * 1000 / static_cast<std::uint64_t>(elapsed_ms) : 0;
  std::ostream& out = *options.progress;
  if (options.progress_is_terminal) {
    out << "\r" << options.name << ": " << done << "/" << total << " seeds, " << failed << " failed, " << rate
        << " cases/s   " << std::flush;
    if (done == total) out << "\n";
  } else {
    out << options.name << ": " << done << "/" << total << " seeds, " << failed << " failed, " << rate
        << " cases/s\n";
  }
}

}  // namespace

std::string invariant_id(Invariant invariant) { return "R" + std::to_string(static_cast<unsigned>(invariant)); }

std::string_view invariant_summary(Invariant invariant) {
  const auto index = static_cast<unsigned>(invariant);
  return index >= 1 && index <= kInvariantCount ? kSummaries[index - 1] : "unknown invariant";
}

std::uint64_t seeds_in_shard(const SeedRange& range, const Shard& shard) {
  // Seeds first + index, first + index + total, ... up to last: counted from the span (last - first), which
  // fits in 64 bits where the count may not.
  const std::uint64_t span = range.last - range.first;
  if (shard.index > span) return 0;
  const std::uint64_t after_first = (span - shard.index) / shard.total;
  return after_first == UINT64_MAX ? UINT64_MAX : after_first + 1;
}

Result<SeedRange, std::string> parse_seed_range(std::string_view text, const Shard& shard) {
  const std::size_t dots = text.find("..");
  SeedRange range;
  if (dots == std::string_view::npos) {
    auto single = parse_u64(text, "seed");
    if (!single.ok()) return single.error();
    range = {single.value(), single.value()};
  } else {
    auto first = parse_u64(text.substr(0, dots), "first seed");
    if (!first.ok()) return first.error();
    auto last = parse_u64(text.substr(dots + 2), "last seed");
    if (!last.ok()) return last.error();
    if (last.value() < first.value()) {
      return "seed range '" + std::string(text) + "' ends before it starts";
    }
    range = {first.value(), last.value()};
  }
  if (const std::uint64_t count = seeds_in_shard(range, shard); count > kSeedsPerInvocationMax) {
    const std::string held = count == UINT64_MAX ? "2^64" : std::to_string(count);
    return "seed range '" + std::string(text) + "' gives " +
           (shard.total == 1 ? "this run " : "shard " + std::to_string(shard.index) + " of " +
                                                 std::to_string(shard.total) + " ") +
           held + " seeds, above the maximum of " + std::to_string(kSeedsPerInvocationMax) +
           " for one invocation: shard a larger range with GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX";
  }
  return range;
}

Result<Shard, std::string> shard_from_environment() {
  const char* total_text = std::getenv("GTEST_TOTAL_SHARDS");
  const char* index_text = std::getenv("GTEST_SHARD_INDEX");
  if (total_text == nullptr && index_text == nullptr) return Shard{};
  if (total_text == nullptr || index_text == nullptr) {
    return std::string("GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX must be set together");
  }
  auto total = parse_u64(total_text, "GTEST_TOTAL_SHARDS");
  if (!total.ok()) return total.error();
  auto index = parse_u64(index_text, "GTEST_SHARD_INDEX");
  if (!index.ok()) return index.error();
  if (total.value() == 0) return std::string("GTEST_TOTAL_SHARDS is 0: there must be at least one shard");
  if (total.value() > kShardsMax) {
    return "GTEST_TOTAL_SHARDS " + std::to_string(total.value()) + " is above the maximum of " +
           std::to_string(kShardsMax);
  }
  if (index.value() >= total.value()) {
    return "GTEST_SHARD_INDEX " + std::to_string(index.value()) + " is not below GTEST_TOTAL_SHARDS " +
           std::to_string(total.value());
  }
  return Shard{static_cast<std::uint32_t>(index.value()), static_cast<std::uint32_t>(total.value())};
}

std::uint64_t CampaignReport::failures() const {
  return static_cast<std::uint64_t>(
      std::count_if(cases.begin(), cases.end(), [](const CaseResult& c) { return !c.passed(); }));
}

std::vector<std::string> CampaignReport::probes_never_reached() const {
  std::vector<std::string> never;
  for (const std::string& probe : probes_expected) {
    if (probe_hits.find(probe) == probe_hits.end()) never.push_back(probe);
  }
  return never;
}

CampaignReport run_campaign(const CampaignOptions& options, const CaseRunner& run_case) {
  // The i-th seed of the shard is first + index + i * total: computed, never listed, so only the results
  // take memory.
  const std::uint64_t count = seeds_in_shard(options.seeds, options.shard);
  const auto seed_at = [&options](std::uint64_t i) {
    return options.seeds.first + options.shard.index + i * options.shard.total;
  };
  std::vector<CaseResult> results(count);
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint64_t> failed{0};
  std::mutex progress_mutex;
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t step = std::max<std::uint64_t>(1, count / 10);
  const auto worker = [&] {
    for (;;) {
      const std::uint64_t index = next.fetch_add(1);
      if (index >= count) return;
      results[index] = run_case(seed_at(index));
      results[index].seed = seed_at(index);
      if (!results[index].passed()) failed.fetch_add(1);
      const std::uint64_t finished = done.fetch_add(1) + 1;
      if (options.progress != nullptr &&
          (options.progress_is_terminal || finished % step == 0 || finished == count)) {
        const std::lock_guard<std::mutex> lock(progress_mutex);
        print_progress(options, finished, count, failed.load(), start);
      }
    }
  };
  const std::uint32_t jobs = std::max<std::uint32_t>(1, std::min<std::uint32_t>(options.jobs, 256));
  std::vector<std::thread> threads;
  for (std::uint32_t j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& thread : threads) thread.join();

  CampaignReport report;
  report.name = options.name;
  report.seeds = options.seeds;
  report.shards = {options.shard};
  report.probes_expected = options.probes_expected;
  for (CaseResult& result : results) {
    for (const std::string& probe : result.probes_hit) report.probe_hits[probe]++;
    report.cases.push_back(std::move(result));
  }
  return report;
}

void print_summary(const CampaignReport& report, std::ostream& out) {
  out << report.name << ": " << report.cases.size() << " cases, " << report.failures() << " failed\n";
  for (const CaseResult& result : report.cases) {
    for (const Failure& failure : result.failures) {
      out << "  seed " << result.seed << ": " << invariant_id(failure.invariant) << " " << failure.message << "\n";
    }
    if (!result.replay_command.empty()) out << "    replay: " << result.replay_command << "\n";
  }
  out << "coverage probes reached: " << report.probe_hits.size() << " of " << report.probes_expected.size() << "\n";
  for (const auto& [probe, hits] : report.probe_hits) out << "  " << probe << ": " << hits << " cases\n";
  for (const std::string& probe : report.probes_never_reached()) out << "  never reached: " << probe << "\n";
}

}  // namespace quiesce::properties
