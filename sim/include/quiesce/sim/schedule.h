// Deterministic scheduling strategies for simulated host threads: which runnable fiber runs at each switch
// point of a sim::FiberEnv.
//
// A Schedule is chosen from one seed (from_seed) or built explicitly. Every strategy is a pure function of
// its seed and the sequence of runnable sets it is shown, so one seed reproduces one interleaving. Every
// choice made where more than one fiber could run is appended to decisions(); Schedule::replay(decisions)
// makes exactly those choices again, which is how a trace replays an interleaving without the seed.
//
// Strategies:
// - random walk: at each choice point keep the running fiber with probability `stay`, otherwise pick
//   uniformly among the runnable ones;
// - PCT (Burckhardt et al., "A randomized scheduler with probabilistic guarantees of finding bugs",
//   ASPLOS 2010): each fiber gets a random priority, the highest-priority runnable fiber always runs, and at
//   depth-1 change points drawn over an estimated step count the running fiber drops below every other one.
//   A bug that needs d ordering constraints is found with probability at least 1/(n * k^(d-1)) per run;
//   explicit yield() does not lower priority, so a fiber that spins on yield() starves the others until the
//   step bound reports it (code under test should block on a condition or sleep_until instead);
// - round robin: rotate through runnable fibers in id order, `quantum` choice points each;
// - replay: the recorded decisions, with a divergence message when the run stops matching them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quiesce/core/prng.h"

namespace quiesce::sim {

// A fiber's index in its FiberEnv, in spawn order from 0.
using FiberId = std::uint32_t;
inline constexpr FiberId kNoFiber = UINT32_MAX;

enum class StrategyKind : std::uint8_t { RandomWalk, Pct, RoundRobin, Replay };

std::string_view to_string(StrategyKind kind);

// Bounds on the knobs that from_seed draws.
struct ScheduleKnobs {
  std::uint64_t pct_steps_estimate = 2000;  // k: change points are drawn in [1, k]
  std::uint32_t pct_depth_max = 3;          // d is drawn in [1, pct_depth_max]
  std::uint32_t round_robin_quantum_max = 4;
};

class Schedule {
 public:
  // The strategy and its knobs, all derived from the seed's "schedule" sub-seed.
  static Schedule from_seed(std::uint64_t seed, const ScheduleKnobs& knobs = {});
  static Schedule random_walk(std::uint64_t seed, Ratio stay);
  static Schedule pct(std::uint64_t seed, std::uint32_t depth, std::uint64_t steps_estimate);
  static Schedule round_robin(std::uint32_t quantum);
  // Makes exactly the recorded choices; see divergence() when a run does not match them.
  static Schedule replay(std::vector<FiberId> decisions);

  StrategyKind kind() const { return kind_; }
  std::uint64_t seed() const { return seed_; }
  // One line naming the strategy, its seed and every knob, e.g.
  // "pct(seed=0x2a, depth=2, steps_estimate=2000, change_points=[713])".
  std::string describe() const;

  // The fiber chosen at each choice point (a switch point with two or more runnable fibers), in order.
  const std::vector<FiberId>& decisions() const { return decisions_; }
  // Empty unless a replay stopped matching its recorded decisions; then a sentence saying where and how.
  const std::string& divergence() const { return divergence_; }
  // Recorded decisions a replay has not used yet: a run that ends with some left also diverged.
  std::size_t replay_remaining() const { return recorded_.size() - replay_cursor_; }

  // Scheduler side: a new fiber exists (PCT gives it a random priority).
  void on_spawn(FiberId fiber);
  // Scheduler side: picks one of `runnable` (two or more entries) at scheduling step `step`; `current` is
  // the fiber that reached the switch point (kNoFiber from outside every fiber). Returns kNoFiber only when
  // a replay diverges.
  FiberId choose(std::span<const FiberId> runnable, FiberId current, std::uint64_t step);

 private:
  Schedule(StrategyKind kind, std::uint64_t seed) : kind_(kind), seed_(seed), prng_(seed) {}

  FiberId choose_random_walk(std::span<const FiberId> runnable, FiberId current);
  FiberId choose_pct(std::span<const FiberId> runnable, FiberId current, std::uint64_t step);
  FiberId choose_round_robin(std::span<const FiberId> runnable, FiberId current);
  FiberId choose_replay(std::span<const FiberId> runnable);

  StrategyKind kind_;
  std::uint64_t seed_;
  Prng prng_;
  Ratio stay_ = Ratio::never();
  std::uint32_t depth_ = 1;
  std::uint64_t steps_estimate_ = 0;
  std::vector<std::uint64_t> change_points_;   // ascending scheduling steps
  std::size_t change_points_passed_ = 0;
  std::vector<std::uint64_t> priorities_;      // by FiberId; higher runs first
  std::uint32_t quantum_ = 1;
  std::uint32_t quantum_used_ = 0;
  std::vector<FiberId> recorded_;              // replay input
  std::size_t replay_cursor_ = 0;
  std::vector<FiberId> decisions_;
  std::string divergence_;
};

}  // namespace quiesce::sim
