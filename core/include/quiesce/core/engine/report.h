// The engine's account of what it held: quarantine entries, per-kind tallies and the shutdown report.
//
// R19 (conservation) is checked on this report: after the liveness phase every resource the engine created
// was released exactly once, quarantined with its cause, or discarded with a lost context; nothing is left
// live; and the memory ledger is back at its baseline plus exactly the bytes of the quarantine.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quiesce/core/engine/types.h"
#include "quiesce/core/result.h"

namespace quiesce {

enum class ResourceKind : std::uint8_t { Buffers, Programs, Executables, Events, Queues, Contexts };
inline constexpr std::size_t kResourceKindCount = 6;

enum class QuarantineCause : std::uint8_t {
  IndeterminateRelease,        // the release itself was indeterminate: the handle is gone, the charge stays
  ReleaseRejectedRepeatedly,   // every retry within the bound was rejected: the live handle is retained
  PinnedByIndeterminateWork,   // a submission that references it never reached an observed terminal
  PinnedByQuarantine,          // the event or executable that pinned it was itself quarantined
  HeldAtShutdown,              // still pinned when shutdown gave up waiting
};

struct QuarantineEntry {
  ResourceKind kind = ResourceKind::Buffers;
  std::uint64_t serial = 0;
  std::uint32_t epoch = 0;
  std::uint64_t bytes = 0;  // charged to the ledger as quarantine
  QuarantineCause cause = QuarantineCause::IndeterminateRelease;
  Error error = {};
  bool discarded = false;   // its context was discarded later, which ended the charge
};

// Every resource of one kind ends in exactly one of released, quarantined or discarded.
struct ResourceTally {
  std::uint64_t created = 0;
  std::uint64_t released = 0;
  std::uint64_t quarantined = 0;
  std::uint64_t discarded = 0;  // lost with a context after a device loss

  std::uint64_t accounted() const { return released + quarantined + discarded; }
  std::uint64_t live() const { return created > accounted() ? created - accounted() : 0; }
  bool over_accounted() const { return accounted() > created; }
};

struct ShutdownReport {
  std::array<ResourceTally, kResourceKindCount> tallies = {};
  std::vector<QuarantineEntry> quarantine;
  std::vector<AsyncFailure> unsurfaced_failures;  // queued failures no flush or sync took: surfaced here
  std::uint64_t baseline_charged_bytes = 0;
  std::uint64_t charged_bytes = 0;          // ledger at shutdown, before the final context release
  std::uint64_t quarantined_bytes = 0;      // ledger quarantine at shutdown
  std::uint64_t quarantine_entry_bytes = 0; // sum of the entries still charged (not discarded)
  std::uint64_t charged_bytes_max = 0;
  std::uint32_t epochs = 0;
  std::uint32_t device_losses = 0;
  std::uint64_t submissions = 0;
  Status drain = {};
  Status context_release = {};
  bool context_discarded = false;  // the last context was discarded because quarantine remained

  const ResourceTally& tally(ResourceKind kind) const { return tallies[static_cast<std::size_t>(kind)]; }
  std::uint64_t leaked() const {
    std::uint64_t total = 0;
    for (const ResourceTally& tally : tallies) total += tally.live();
    return total;
  }
  bool ledger_balanced() const {
    return charged_bytes == baseline_charged_bytes && quarantined_bytes == quarantine_entry_bytes;
  }
  bool over_accounted() const {
    for (const ResourceTally& tally : tallies) {
      if (tally.over_accounted()) return true;
    }
    return false;
  }
  // Clean: drained, nothing leaked, nothing released twice, the ledger balanced (R19).
  bool clean() const { return drain.ok() && leaked() == 0 && !over_accounted() && ledger_balanced(); }

  std::string describe() const;
};

inline std::string_view to_string(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::Buffers: return "buffer";
    case ResourceKind::Programs: return "program";
    case ResourceKind::Executables: return "executable";
    case ResourceKind::Events: return "event";
    case ResourceKind::Queues: return "queue";
    case ResourceKind::Contexts: return "context";
  }
  return "invalid-kind";
}

inline std::string_view to_string(QuarantineCause cause) {
  switch (cause) {
    case QuarantineCause::IndeterminateRelease: return "indeterminate release";
    case QuarantineCause::ReleaseRejectedRepeatedly: return "release rejected on every retry";
    case QuarantineCause::PinnedByIndeterminateWork: return "pinned by indeterminate work";
    case QuarantineCause::PinnedByQuarantine: return "pinned by a quarantined event or executable";
    case QuarantineCause::HeldAtShutdown: return "still pinned at shutdown";
  }
  return "invalid-cause";
}

inline std::string ShutdownReport::describe() const {
  std::string text = clean() ? "shutdown: clean" : "shutdown: NOT clean";
  text += "\n  epochs " + std::to_string(epochs) + ", device losses " + std::to_string(device_losses) +
          ", submissions " + std::to_string(submissions);
  text += "\n  ledger: charged " + std::to_string(charged_bytes) + " bytes (baseline " +
          std::to_string(baseline_charged_bytes) + "), quarantined " + std::to_string(quarantined_bytes) +
          " bytes (entries " + std::to_string(quarantine_entry_bytes) + "), high-water " +
          std::to_string(charged_bytes_max) + " bytes";
  for (std::size_t index = 0; index < kResourceKindCount; ++index) {
    const ResourceTally& tally = tallies[index];
    text += "\n  ";
    text += to_string(static_cast<ResourceKind>(index));
    text += ": created " + std::to_string(tally.created) + ", released " + std::to_string(tally.released) +
            ", quarantined " + std::to_string(tally.quarantined) + ", discarded " +
            std::to_string(tally.discarded) + ", leaked " + std::to_string(tally.live());
  }
  if (!drain.ok()) text += "\n  drain failed: " + describe_error(drain.error());
  if (!context_release.ok()) text += "\n  context release failed: " + describe_error(context_release.error());
  if (context_discarded) text += "\n  the last context was discarded because quarantine remained";
  for (const QuarantineEntry& entry : quarantine) {
    text += "\n  quarantined ";
    text += to_string(entry.kind);
    text += " #" + std::to_string(entry.serial) + " (epoch " + std::to_string(entry.epoch) + ", " +
            std::to_string(entry.bytes) + " bytes): ";
    text += to_string(entry.cause);
    text += ": " + describe_error(entry.error);
    if (entry.discarded) text += " [discarded with its context]";
  }
  for (const AsyncFailure& failure : unsurfaced_failures) {
    text += "\n  unsurfaced failure of submission #" + std::to_string(failure.submission.serial) + ": ";
    text += to_string(failure.cause);
    text += ": " + describe_error(failure.error);
  }
  return text;
}

}  // namespace quiesce
