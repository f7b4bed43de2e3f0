// sim::FiberEnv basics: spawn and join, yield, sleep_until on the virtual clock, Mutex and CondVar, the
// device Waiter, exceptions, and determinism of one run.
#include "quiesce/sim/fiber_env.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <string>
#include <thread>
#include <vector>

namespace quiesce::sim {
namespace {

TEST(FiberEnv, RunsEveryFiberToTheEndAndJoins) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::round_robin(1));
  std::vector<std::string> log;
  env.spawn("parent", [&] {
    FiberEnv::Thread child = env.spawn("child", [&] {
      env.yield();
      log.push_back("child done");
    });
    EXPECT_TRUE(child.joinable());
    env.join(child);
    EXPECT_FALSE(child.joinable());
    log.push_back("parent joined");
  });
  auto result = env.run();
  ASSERT_TRUE(result.ok()) << result.error().report();
  EXPECT_EQ(log, (std::vector<std::string>{"child done", "parent joined"}));
  EXPECT_EQ(result->fibers, 2U);
  EXPECT_GT(result->switches, 2U);
}

TEST(FiberEnv, RoundRobinAlternatesAtEveryYield) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::round_robin(1));
  std::string order;
  for (const char name : std::string("ab")) {
    env.spawn(std::string(1, name), [&, name] {
      for (int round = 0; round < 3; ++round) {
        order.push_back(name);
        env.yield();
      }
    });
  }
  ASSERT_TRUE(env.run().ok());
  EXPECT_EQ(order, "ababab");
}

TEST(FiberEnv, SleepJumpsTheClockOnlyWhenEveryFiberIsBlocked) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::from_seed(11));
  std::vector<std::pair<std::string, std::uint64_t>> wakes;
  for (const std::uint64_t delay_ns : {3000U, 1000U, 2000U}) {
    env.spawn("sleeper-" + std::to_string(delay_ns), [&, delay_ns] {
      env.sleep_until(env.now_ns() + delay_ns);
      wakes.emplace_back("sleeper-" + std::to_string(delay_ns), env.now_ns());
    });
  }
  std::uint64_t busy_steps_seen_at_ns = 1;
  env.spawn("busy", [&] {
    for (int step = 0; step < 50; ++step) env.yield();
    busy_steps_seen_at_ns = env.now_ns();  // the clock must not move while this fiber can run
  });
  auto result = env.run();
  ASSERT_TRUE(result.ok()) << result.error().report();
  EXPECT_EQ(busy_steps_seen_at_ns, 0U);
  ASSERT_EQ(wakes.size(), 3U);
  EXPECT_EQ(wakes[0], (std::pair<std::string, std::uint64_t>{"sleeper-1000", 1000}));
  EXPECT_EQ(wakes[1], (std::pair<std::string, std::uint64_t>{"sleeper-2000", 2000}));
  EXPECT_EQ(wakes[2], (std::pair<std::string, std::uint64_t>{"sleeper-3000", 3000}));
  EXPECT_EQ(result->end_time_ns, 3000U);
}

TEST(FiberEnv, MutexKeepsACriticalSectionWholeAcrossSwitchPoints) {
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    VirtualClock clock;
    FiberEnv env(clock, Schedule::from_seed(seed));
    FiberEnv::Mutex mutex("counter");
    int counter = 0;
    int inside = 0;
    for (int worker = 0; worker < 3; ++worker) {
      env.spawn([&] {
        for (int round = 0; round < 5; ++round) {
          std::unique_lock<FiberEnv::Mutex> lock(mutex);
          ++inside;
          EXPECT_EQ(inside, 1) << "two fibers inside the critical section, seed " << seed;
          const int seen = counter;
          env.yield();
          counter = seen + 1;
          --inside;
        }
      });
    }
    auto result = env.run();
    ASSERT_TRUE(result.ok()) << result.error().report();
    EXPECT_EQ(counter, 15) << "seed " << seed << " " << env.describe();
  }
}

TEST(FiberEnv, CondVarHandsOffBetweenFibers) {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    VirtualClock clock;
    FiberEnv env(clock, Schedule::from_seed(seed));
    FiberEnv::Mutex mutex;
    FiberEnv::CondVar changed;
    int turn = 0;
    std::string order;
    for (int player = 0; player < 3; ++player) {
      env.spawn([&, player] {
        for (int round = 0; round < 4; ++round) {
          std::unique_lock<FiberEnv::Mutex> lock(mutex);
          while (turn % 3 != player) changed.wait(lock);
          order.push_back(static_cast<char>('a' + player));
          ++turn;
          changed.notify_all();
        }
      });
    }
    auto result = env.run();
    ASSERT_TRUE(result.ok()) << result.error().report();
    EXPECT_EQ(order, "abcabcabcabc") << "seed " << seed;
  }
}

// A stand-in for a device event: completes at a virtual time through the clock, as sim::Device does.
class CompletesLater final : public TimerTarget {
 public:
  void on_timer(std::uint64_t /*cookie*/, std::uint64_t /*now_ns*/) override { complete = true; }
  static bool done(const void* context) { return static_cast<const CompletesLater*>(context)->complete; }
  bool complete = false;
};

TEST(FiberEnv, DeviceWaitParksTheFiberAndLetsOthersRun) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::round_robin(1));
  CompletesLater event;
  clock.schedule(5000, &event, 0);
  std::vector<std::string> log;
  env.spawn("waiter", [&] {
    const bool done = env.waiter().wait_until(VirtualClock::kNever, &CompletesLater::done, &event);
    EXPECT_TRUE(done);
    log.push_back("waited until " + std::to_string(env.now_ns()));
  });
  env.spawn("other", [&] {
    for (int round = 0; round < 3; ++round) {
      log.push_back("other at " + std::to_string(env.now_ns()));
      env.yield();
    }
  });
  ASSERT_TRUE(env.run().ok());
  ASSERT_EQ(log.size(), 4U);
  EXPECT_EQ(log[0], "other at 0");
  EXPECT_EQ(log[3], "waited until 5000");
}

TEST(FiberEnv, DeviceWaitStopsAtItsDeadline) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::from_seed(3));
  CompletesLater event;
  clock.schedule(9000, &event, 0);
  bool done_at_deadline = true;
  std::uint64_t returned_at_ns = 0;
  env.spawn("waiter", [&] {
    done_at_deadline = env.waiter().wait_until(4000, &CompletesLater::done, &event);
    returned_at_ns = env.now_ns();
  });
  ASSERT_TRUE(env.run().ok());
  EXPECT_FALSE(done_at_deadline);
  EXPECT_EQ(returned_at_ns, 4000U);
  EXPECT_FALSE(event.complete);
}

TEST(FiberEnv, DeviceWaitWakesWhenAnotherFiberMakesItDone) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::from_seed(8));
  CompletesLater flag;  // never scheduled on the clock: only a fiber completes it
  bool done = false;
  env.spawn("waiter", [&] { done = env.waiter().wait_until(1'000'000, &CompletesLater::done, &flag); });
  env.spawn("completer", [&] {
    env.sleep_until(700);
    flag.complete = true;
  });
  auto result = env.run();
  ASSERT_TRUE(result.ok()) << result.error().report();
  EXPECT_TRUE(done);
  EXPECT_EQ(result->end_time_ns, 700U);
  EXPECT_TRUE(clock.idle()) << "the unexpired deadline must leave nothing on the clock that outlives the env";
}

TEST(FiberEnv, AnExceptionEndsTheRunWithItsMessage) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::from_seed(1));
  FiberEnv::Mutex mutex;
  FiberEnv::CondVar never;
  env.spawn("blocked", [&] {
    std::unique_lock<FiberEnv::Mutex> lock(mutex);
    never.wait(lock);
  });
  env.spawn("thrower", [&] {
    env.yield();
    throw std::runtime_error("the planted failure");
  });
  auto result = env.run();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, RunFailureKind::FiberThrew);
  EXPECT_NE(result.error().message.find("fiber 1 'thrower' ended with an exception: the planted failure"),
            std::string::npos)
      << result.error().report();
  // The blocked fiber was abandoned, its mutex is free, and a second run reports the same failure.
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
  auto again = env.run();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message, result.error().message);
}

TEST(FiberEnv, SameSeedSameInterleavingAndDigest) {
  auto one_run = [](std::uint64_t seed) {
    VirtualClock clock;
    FiberEnv env(clock, Schedule::from_seed(seed));
    std::string order;
    for (int worker = 0; worker < 4; ++worker) {
      env.spawn([&env, &order, worker] {
        for (int round = 0; round < 5; ++round) {
          order.push_back(static_cast<char>('a' + worker));
          if (round == 2) env.sleep_until(env.now_ns() + 100);
          env.yield();
        }
      });
    }
    auto result = env.run();
    EXPECT_TRUE(result.ok());
    return std::make_tuple(order, env.decisions(), result->digest);
  };
  std::set<std::string> orders;
  for (std::uint64_t seed = 100; seed < 120; ++seed) {
    const auto first = one_run(seed);
    EXPECT_EQ(first, one_run(seed)) << "seed " << seed;
    orders.insert(std::get<0>(first));
  }
  EXPECT_GT(orders.size(), 5U) << "different seeds should explore different interleavings";
}

class RecordingObserver final : public ScheduleObserver {
 public:
  void on_decision(FiberId chosen, std::size_t runnable, std::uint64_t now_ns) override {
    EXPECT_GE(runnable, 2U);
    EXPECT_GE(now_ns, last_ns);
    chosen_fibers.push_back(chosen);
  }
  void on_clock_jump(std::uint64_t now_ns) override {
    EXPECT_GT(now_ns, last_ns) << "a jump moves the clock forward";
    last_ns = now_ns;
    ++jumps;
  }
  std::vector<FiberId> chosen_fibers;
  std::uint64_t jumps = 0;
  std::uint64_t last_ns = 0;
};

TEST(FiberEnv, AnObserverSeesEveryDecisionAndClockJumpInOrder) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::from_seed(77));
  RecordingObserver observer;
  env.set_observer(&observer);
  for (int worker = 0; worker < 3; ++worker) {
    env.spawn([&env, worker] {
      for (int round = 0; round < 4; ++round) {
        env.sleep_until(env.now_ns() + 100 * static_cast<std::uint64_t>(worker + 1));
        env.yield();
      }
    });
  }
  auto result = env.run();
  ASSERT_TRUE(result.ok()) << result.error().report();
  EXPECT_EQ(observer.chosen_fibers, env.decisions());
  EXPECT_EQ(observer.jumps, result->clock_jumps);
  EXPECT_GT(observer.jumps, 3U);
}

TEST(FiberEnv, FibersNeverRunAreFreedWithTheEnv) {
  VirtualClock clock;
  bool ran = false;
  {
    FiberEnv env(clock, Schedule::from_seed(5));
    for (int fiber = 0; fiber < 8; ++fiber) env.spawn([&ran] { ran = true; });
  }
  EXPECT_FALSE(ran);
  EXPECT_TRUE(clock.idle());
}

TEST(FiberEnv, TwoEnvsRunSideBySideOnTwoThreads) {
  // No process-wide state: each OS thread has its own active env, and equal seeds give equal runs.
  auto contended_run = [](std::uint64_t seed, std::uint64_t& digest, int& counter) {
    VirtualClock clock;
    FiberEnv env(clock, Schedule::from_seed(seed));
    FiberEnv::Mutex mutex;
    for (int worker = 0; worker < 4; ++worker) {
      env.spawn([&] {
        for (int round = 0; round < 200; ++round) {
          std::unique_lock<FiberEnv::Mutex> lock(mutex);
          ++counter;
        }
      });
    }
    auto result = env.run();
    digest = result.ok() ? result->digest : 0;
  };
  std::uint64_t digests[2] = {};
  int counters[2] = {};
  std::thread first([&] { contended_run(31, digests[0], counters[0]); });
  std::thread second([&] { contended_run(31, digests[1], counters[1]); });
  first.join();
  second.join();
  EXPECT_EQ(counters[0], 800);
  EXPECT_EQ(counters[1], 800);
  EXPECT_NE(digests[0], 0U);
  EXPECT_EQ(digests[0], digests[1]);
}

}  // namespace
}  // namespace quiesce::sim
