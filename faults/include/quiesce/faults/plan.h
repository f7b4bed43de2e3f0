// Fault plans: what an Injector may inject, how often, and exactly where.
//
// A plan combines, in the order the injector consults them at each fault site:
//   1. replay: exactly a recorded list of InjectedFault at their call indices, nothing else;
//   2. scripted faults: "the 7th free_buffer is rejected" (site, ordinal from 1, fault kind);
//   3. count-then-inject: fail exactly the k-th fault site (from 0) of a run; a first run with a plan that
//      injects nothing reads Injector::sites_seen() to learn how many sites there are;
//   4. rates: one integer Ratio per fault kind, drawn from core's Prng (never floating point), for the
//      families that are enabled. Swarm testing switches whole families and command kinds off, chosen from
//      the seed, so that rare combinations get room.
// Plans are plain values: no globals, two injectors with two plans run side by side. The text format
// (docs/faults.md) round-trips: parse_plan(to_text(plan)) == plan.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiesce/core/command.h"
#include "quiesce/core/prng.h"
#include "quiesce/core/result.h"
#include "quiesce/faults/fault.h"

namespace quiesce::faults {

inline constexpr std::uint32_t kAllFamilies = (1U << kFaultFamilyCount) - 1;
inline constexpr std::uint32_t kCommandKindCount = 6;
inline constexpr std::uint32_t kAllCommandKinds = (1U << kCommandKindCount) - 1;
inline constexpr std::uint32_t kDelayPollsLimit = 1000;  // the largest delay_polls_max a plan may ask for

// "the 7th free_buffer is rejected". Without a parameter the injector chooses one from its Prng.
struct ScriptedFault {
  Site site = Site::Submit;
  std::uint64_t ordinal = 1;  // from 1
  FaultKind kind = FaultKind::SubmitRejected;
  std::optional<std::uint64_t> parameter = std::nullopt;

  friend bool operator==(const ScriptedFault&, const ScriptedFault&) = default;
};

struct Plan {
  std::uint64_t seed = 0;
  std::array<Ratio, kFaultKindCount> rates = {};  // all Ratio::never()
  std::uint32_t families_enabled = kAllFamilies;  // bit per FaultFamily
  // Bit per CommandKind: which command kinds a workload generator may use in this run. The injector itself
  // does not read it; swarm testing chooses it with the families so one seed fixes the whole run's shape.
  std::uint32_t command_kinds_enabled = kAllCommandKinds;
  bool swarm_from_seed = false;      // the injector applies apply_swarm(plan, seed) when it is constructed
  std::uint32_t delay_polls_max = 4; // DelayedCompletion reports Pending for 1..delay_polls_max polls
  std::vector<ScriptedFault> script;
  std::optional<std::uint64_t> failing_site = std::nullopt;  // count-then-inject
  bool replaying = false;            // inject exactly replay_faults, nothing else
  std::vector<InjectedFault> replay_faults;

  // Built-in plans.
  static Plan none();      // injects nothing: the counting plan of count-then-inject
  static Plan standard();  // "default": moderate rates of every family, sticky device loss rare
  static Plan all();       // every family on, higher rates
  static Plan swarm(std::uint64_t seed);  // standard() with families and command kinds switched off by seed
  static Plan fail_site(std::uint64_t site_index);
  static Plan replay(std::vector<InjectedFault> faults);

  Ratio rate(FaultKind kind) const { return rates[static_cast<std::uint32_t>(kind)]; }
  Plan& set_rate(FaultKind kind, Ratio rate);
  bool family_enabled(FaultFamily family) const;
  bool command_kind_enabled(CommandKind kind) const;

  friend bool operator==(const Plan&, const Plan&) = default;
};

// Switches whole fault families and command kinds off, each with probability 1/2, from `seed` (its
// "faults.swarm" sub-seed). At least one family and one command kind stay on. Clears swarm_from_seed.
void apply_swarm(Plan& plan, std::uint64_t seed);

// The built-in plan of that name: "none", "default" or "all".
std::optional<Plan> builtin_plan(std::string_view name);

// Why a plan file was refused: the line (from 1) and a full sentence naming the offending value.
struct PlanError {
  std::uint32_t line = 0;
  std::string message;
};

// Parses the text format of docs/faults.md. A bad line refuses the whole file, and so does a setting given
// twice (the second line is named, with the first).
Result<Plan, PlanError> parse_plan(std::string_view text);
// The text form of a plan; parse_plan(to_text(plan)) == plan when its script names each site, ordinal and
// fault once (a second such entry could never fire: the first one matches).
std::string to_text(const Plan& plan);

}  // namespace quiesce::faults
