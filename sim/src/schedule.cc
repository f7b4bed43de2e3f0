// The scheduling strategies of sim::Schedule: each one a pure function of its seed and the runnable sets it
// is shown, so one seed gives one interleaving.
#include "quiesce/sim/schedule.h"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>

#include "quiesce/core/digest.h"

namespace quiesce::sim {

namespace {

// PCT's initial priorities lie above every change-point priority (1..depth-1) and are spread over 2^40
// values so that ties (broken by lower id) are rare and the order of spawned fibers is a random one.
constexpr std::uint64_t kPctPrioritySpread = std::uint64_t{1} << 40U;

bool contains(std::span<const FiberId> runnable, FiberId fiber) {
  return std::find(runnable.begin(), runnable.end(), fiber) != runnable.end();
}

std::string list_ids(std::span<const FiberId> ids) {
  std::string text;
  for (const FiberId id : ids) {
    if (!text.empty()) text += ", ";
    text += std::to_string(id);
  }
  return text;
}

}  // namespace

std::string_view to_string(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::RandomWalk: return "random_walk";
    case StrategyKind::Pct: return "pct";
    case StrategyKind::RoundRobin: return "round_robin";
    case StrategyKind::Replay: return "replay";
  }
  return "unknown_strategy";
}

Schedule Schedule::from_seed(std::uint64_t seed, const ScheduleKnobs& knobs) {
  assert(knobs.pct_depth_max >= 1);
  assert(knobs.round_robin_quantum_max >= 1);
  Prng knob_prng(Prng(seed).derive("schedule"));
  const std::uint64_t strategy_seed = Prng(seed).derive("schedule.strategy");
  // PCT gets half of the seeds: it is the strategy with a guarantee for shallow ordering bugs.
  switch (knob_prng.below(4)) {
    case 0:
    case 1: {
      const auto depth = static_cast<std::uint32_t>(knob_prng.range(1, knobs.pct_depth_max));
      return pct(strategy_seed, depth, knobs.pct_steps_estimate);
    }
    case 2: return random_walk(strategy_seed, Ratio{knob_prng.below(4), 4});
    default: {
      const auto quantum = static_cast<std::uint32_t>(knob_prng.range(1, knobs.round_robin_quantum_max));
      return round_robin(quantum);
    }
  }
}

Schedule Schedule::random_walk(std::uint64_t seed, Ratio stay) {
  assert(stay.denominator > 0);
  assert(stay.numerator < stay.denominator);  // stay = 1 would never switch at all
  Schedule schedule(StrategyKind::RandomWalk, seed);
  schedule.stay_ = stay;
  return schedule;
}

Schedule Schedule::pct(std::uint64_t seed, std::uint32_t depth, std::uint64_t steps_estimate) {
  assert(depth >= 1);
  assert(steps_estimate >= 1);
  Schedule schedule(StrategyKind::Pct, seed);
  schedule.depth_ = depth;
  schedule.steps_estimate_ = steps_estimate;
  for (std::uint32_t point = 1; point < depth; ++point) {
    schedule.change_points_.push_back(schedule.prng_.range(1, steps_estimate));
  }
  std::sort(schedule.change_points_.begin(), schedule.change_points_.end());
  return schedule;
}

Schedule Schedule::round_robin(std::uint32_t quantum) {
  assert(quantum >= 1);
  Schedule schedule(StrategyKind::RoundRobin, 0);
  schedule.quantum_ = quantum;
  return schedule;
}

Schedule Schedule::replay(std::vector<FiberId> decisions) {
  Schedule schedule(StrategyKind::Replay, 0);
  schedule.decisions_.reserve(decisions.size());
  schedule.recorded_ = std::move(decisions);
  return schedule;
}

std::string Schedule::describe() const {
  const std::string seed_text = "seed=0x" + to_hex(seed_);
  switch (kind_) {
    case StrategyKind::RandomWalk:
      return "random_walk(" + seed_text + ", stay=" + std::to_string(stay_.numerator) + "/" +
             std::to_string(stay_.denominator) + ")";
    case StrategyKind::Pct: {
      std::string points;
      for (const std::uint64_t point : change_points_) {
        if (!points.empty()) points += ", ";
        points += std::to_string(point);
      }
      return "pct(" + seed_text + ", depth=" + std::to_string(depth_) +
             ", steps_estimate=" + std::to_string(steps_estimate_) + ", change_points=[" + points + "])";
    }
    case StrategyKind::RoundRobin: return "round_robin(quantum=" + std::to_string(quantum_) + ")";
    case StrategyKind::Replay: return "replay(decisions=" + std::to_string(recorded_.size()) + ")";
  }
  return "unknown_strategy()";
}

void Schedule::on_spawn(FiberId fiber) {
  assert(fiber != kNoFiber);
  if (kind_ != StrategyKind::Pct) return;
  assert(fiber == priorities_.size());  // fibers are numbered densely in spawn order
  if (fiber >= priorities_.size()) priorities_.resize(std::size_t{fiber} + 1, 0);
  priorities_[fiber] = depth_ + 1 + prng_.below(kPctPrioritySpread);
}

FiberId Schedule::choose(std::span<const FiberId> runnable, FiberId current, std::uint64_t step) {
  assert(runnable.size() >= 2);
  FiberId chosen = kNoFiber;
  switch (kind_) {
    case StrategyKind::RandomWalk: chosen = choose_random_walk(runnable, current); break;
    case StrategyKind::Pct: chosen = choose_pct(runnable, current, step); break;
    case StrategyKind::RoundRobin: chosen = choose_round_robin(runnable, current); break;
    case StrategyKind::Replay: chosen = choose_replay(runnable); break;
  }
  if (chosen == kNoFiber) return kNoFiber;
  assert(contains(runnable, chosen));
  decisions_.push_back(chosen);
  return chosen;
}

FiberId Schedule::choose_random_walk(std::span<const FiberId> runnable, FiberId current) {
  if (stay_.numerator != 0 && contains(runnable, current) && prng_.chance(stay_)) return current;
  return runnable[prng_.below(runnable.size())];
}

FiberId Schedule::choose_pct(std::span<const FiberId> runnable, FiberId current, std::uint64_t step) {
  // Change points passed since the last choice demote the fiber that was running, in order: the i-th
  // change point gives priority i, below every initial priority and below later demotions.
  while (change_points_passed_ < change_points_.size() && change_points_[change_points_passed_] <= step) {
    ++change_points_passed_;
    if (current != kNoFiber) priorities_[current] = change_points_passed_;
  }
  FiberId best = runnable.front();
  for (const FiberId fiber : runnable.subspan(1)) {
    const bool higher = priorities_[fiber] > priorities_[best];
    const bool tie_lower_id = priorities_[fiber] == priorities_[best] && fiber < best;
    if (higher || tie_lower_id) best = fiber;
  }
  return best;
}

FiberId Schedule::choose_round_robin(std::span<const FiberId> runnable, FiberId current) {
  if (quantum_used_ < quantum_ && contains(runnable, current)) {
    ++quantum_used_;
    return current;
  }
  // The next fiber after `current` in id order, wrapping around to the lowest id.
  FiberId next_after = kNoFiber;
  FiberId lowest = kNoFiber;
  for (const FiberId fiber : runnable) {
    lowest = std::min(lowest, fiber);
    if (fiber > current && fiber < next_after) next_after = fiber;
  }
  quantum_used_ = 1;
  return next_after != kNoFiber ? next_after : lowest;
}

FiberId Schedule::choose_replay(std::span<const FiberId> runnable) {
  const std::size_t point = replay_cursor_;
  if (point >= recorded_.size()) {
    divergence_ = "replay diverged at choice point " + std::to_string(point) + ": the recorded list has only " +
                  std::to_string(recorded_.size()) + " decisions but fibers " + list_ids(runnable) +
                  " are runnable";
    return kNoFiber;
  }
  const FiberId recorded = recorded_[point];
  if (!contains(runnable, recorded)) {
    divergence_ = "replay diverged at choice point " + std::to_string(point) + ": recorded fiber " +
                  std::to_string(recorded) + " is not runnable (runnable: " + list_ids(runnable) + ")";
    return kNoFiber;
  }
  ++replay_cursor_;
  return recorded;
}

}  // namespace quiesce::sim
