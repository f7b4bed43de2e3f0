// A planted race that PCT must find within a bounded number of schedules, the same code without the race
// passing that many, and the determinism that makes a found race useful: one seed gives one interleaving
// and one digest, and the recorded decision list replays it exactly.
//
// The system: a submitter creates events, a device fiber completes them at virtual times, a poller polls
// the events, and a releaser destroys each event the poller hands it. The planted race is a poll racing a
// destroy of the same event: the racy poller hands a complete event to the releaser and then reads the
// event's timing receipt in a second critical section, so the releaser may destroy the event in between (a
// use after destroy). The correct poller reads the receipt before it hands the event off, in one critical
// section.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "quiesce/sim/fiber_env.h"

namespace quiesce::sim {
namespace {

constexpr int kEvents = 6;
constexpr std::uint64_t kSchedules = 200;

enum class EventState : std::uint8_t { Absent, Pending, Complete, Destroyed };

struct Outcome {
  int use_after_destroy = 0;
  int polls = 0;
  std::string log;  // every poll and destroy, in the order they happened
  bool run_ok = false;
  std::string failure;
  std::vector<FiberId> decisions;
  std::uint64_t digest = 0;
  std::uint64_t steps = 0;
};

Outcome run_event_table(Schedule schedule, bool racy_poller) {
  VirtualClock clock;
  FiberEnv env(clock, std::move(schedule));
  FiberEnv::Mutex mutex("table");
  FiberEnv::CondVar release_ready("release_ready");
  std::vector<EventState> states(kEvents, EventState::Absent);
  std::vector<bool> handed(kEvents, false);
  std::vector<int> to_release;  // at most kEvents
  int handed_off = 0;
  Outcome outcome;
  auto locked = [&] { return std::unique_lock<FiberEnv::Mutex>(mutex); };

  env.spawn("submitter", [&] {
    for (int event = 0; event < kEvents; ++event) {
      {
        auto lock = locked();
        states[event] = EventState::Pending;
      }
      env.sleep_until(env.now_ns() + 100);
    }
  });
  env.spawn("device", [&] {
    for (int event = 0; event < kEvents; ++event) {
      env.sleep_until(150 + 100 * static_cast<std::uint64_t>(event));
      auto lock = locked();
      if (states[event] == EventState::Pending) states[event] = EventState::Complete;
    }
  });
  env.spawn("poller", [&] {
    for (int round = 0; round < 16 && handed_off < kEvents; ++round) {
      for (int event = 0; event < kEvents; ++event) {
        {
          auto lock = locked();
          if (states[event] != EventState::Complete || handed[event]) continue;
          ++outcome.polls;
          if (!racy_poller) outcome.log += "t" + std::to_string(event);  // the receipt, read while it is safe
          handed[event] = true;
          ++handed_off;
          to_release.push_back(event);
          release_ready.notify_one();
        }
        if (racy_poller) {
          auto lock = locked();  // the window: the releaser may have destroyed the event since the hand-off
          if (states[event] == EventState::Destroyed) ++outcome.use_after_destroy;
          outcome.log += "t" + std::to_string(event);
        }
      }
      env.sleep_until(env.now_ns() + 90);
    }
  });
  env.spawn("releaser", [&] {
    for (int released = 0; released < kEvents; ++released) {
      auto lock = locked();
      while (to_release.empty()) release_ready.wait(lock);
      const int event = to_release.front();
      to_release.erase(to_release.begin());
      states[event] = EventState::Destroyed;
      outcome.log += "d" + std::to_string(event);
    }
  });

  auto result = env.run();
  outcome.run_ok = result.ok();
  if (!result.ok()) outcome.failure = result.error().report();
  outcome.decisions = env.decisions();
  outcome.digest = env.digest();
  outcome.steps = result.ok() ? result->steps : 0;
  return outcome;
}

// PCT's step estimate: a little above the steps one run of this system takes.
std::uint64_t steps_estimate() {
  const Outcome probe = run_event_table(Schedule::round_robin(1), false);
  EXPECT_TRUE(probe.run_ok) << probe.failure;
  return probe.steps + probe.steps / 4;
}

TEST(PlantedRace, PctFindsThePollRacingADestroyWithinTheBound) {
  const std::uint64_t estimate = steps_estimate();
  std::uint64_t first_found = kSchedules;
  std::uint64_t found = 0;
  for (std::uint64_t seed = 0; seed < kSchedules; ++seed) {
    const Outcome outcome = run_event_table(Schedule::pct(seed, 2, estimate), true);
    ASSERT_TRUE(outcome.run_ok) << outcome.failure;
    if (outcome.use_after_destroy > 0) {
      ++found;
      if (first_found == kSchedules) first_found = seed;
    }
  }
  EXPECT_LT(first_found, kSchedules) << "PCT did not find the planted race in " << kSchedules << " schedules";
  std::printf("planted race: PCT depth 2 (steps estimate %llu) found it first at schedule %llu, in %llu of %llu\n",
              static_cast<unsigned long long>(estimate), static_cast<unsigned long long>(first_found),
              static_cast<unsigned long long>(found), static_cast<unsigned long long>(kSchedules));
}

TEST(PlantedRace, TheSameSystemWithoutTheRacePassesAsManySchedules) {
  const std::uint64_t estimate = steps_estimate();
  for (std::uint64_t seed = 0; seed < kSchedules; ++seed) {
    const Outcome outcome = run_event_table(Schedule::pct(seed, 2, estimate), false);
    ASSERT_TRUE(outcome.run_ok) << outcome.failure;
    EXPECT_EQ(outcome.use_after_destroy, 0) << "seed " << seed;
    EXPECT_GT(outcome.polls, 0) << "seed " << seed;
  }
}

TEST(PlantedRace, SeededSchedulesAlsoFindItAndStayClean) {
  // from_seed mixes PCT, random walk and round robin: the race shows up and the fixed poller never fails.
  std::uint64_t found = 0;
  for (std::uint64_t seed = 0; seed < kSchedules; ++seed) {
    if (run_event_table(Schedule::from_seed(seed), true).use_after_destroy > 0) ++found;
    EXPECT_EQ(run_event_table(Schedule::from_seed(seed), false).use_after_destroy, 0) << "seed " << seed;
  }
  EXPECT_GT(found, 0U);
  std::printf("planted race: from_seed schedules found it in %llu of %llu\n", static_cast<unsigned long long>(found),
              static_cast<unsigned long long>(kSchedules));
}

TEST(Determinism, SameSeedSameInterleavingSameDigest) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Outcome first = run_event_table(Schedule::from_seed(seed), true);
    const Outcome second = run_event_table(Schedule::from_seed(seed), true);
    EXPECT_EQ(first.log, second.log) << "seed " << seed;
    EXPECT_EQ(first.decisions, second.decisions) << "seed " << seed;
    EXPECT_EQ(first.digest, second.digest) << "seed " << seed;
    EXPECT_FALSE(first.decisions.empty());
  }
}

TEST(Determinism, ARecordedDecisionListReplaysTheRunExactly) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Outcome original = run_event_table(Schedule::from_seed(seed), true);
    const Outcome replayed = run_event_table(Schedule::replay(original.decisions), true);
    ASSERT_TRUE(replayed.run_ok) << replayed.failure;
    EXPECT_EQ(replayed.log, original.log) << "seed " << seed;
    EXPECT_EQ(replayed.use_after_destroy, original.use_after_destroy) << "seed " << seed;
    EXPECT_EQ(replayed.decisions, original.decisions) << "seed " << seed;
    EXPECT_EQ(replayed.digest, original.digest) << "seed " << seed;
  }
}

TEST(Determinism, AReplayOfTheWrongRunReportsWhereItDiverged) {
  const Outcome racy = run_event_table(Schedule::from_seed(4), true);
  std::vector<FiberId> tampered = racy.decisions;
  ASSERT_GT(tampered.size(), 10U);
  tampered.resize(tampered.size() / 2);
  const Outcome replayed = run_event_table(Schedule::replay(tampered), true);
  EXPECT_FALSE(replayed.run_ok);
  EXPECT_NE(replayed.failure.find("replay diverged at choice point " + std::to_string(tampered.size())),
            std::string::npos)
      << replayed.failure;

  std::vector<FiberId> extended = racy.decisions;
  extended.push_back(0);
  const Outcome too_long = run_event_table(Schedule::replay(extended), true);
  EXPECT_FALSE(too_long.run_ok);
  EXPECT_NE(too_long.failure.find("1 recorded decisions unused"), std::string::npos) << too_long.failure;
}

TEST(Determinism, DifferentSeedsExploreDifferentInterleavings) {
  std::vector<std::string> logs;
  for (std::uint64_t seed = 0; seed < 20; ++seed) logs.push_back(run_event_table(Schedule::from_seed(seed), true).log);
  std::sort(logs.begin(), logs.end());
  const auto distinct = std::unique(logs.begin(), logs.end()) - logs.begin();
  EXPECT_GT(distinct, 3);
}

}  // namespace
}  // namespace quiesce::sim
