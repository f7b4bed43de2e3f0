// Deadlock and livelock detection: a run that can never finish returns a RunFailure naming every fiber and
// what it waits on (mutex, condition, join, device wait), never a hang; Env misuse is reported the same way.
#include <gtest/gtest.h>

#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>

#include "quiesce/sim/fiber_env.h"

namespace quiesce::sim {
namespace {

bool never_done(const void* /*context*/) { return false; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(FailureReport, LockOrderInversionIsADeadlockNamingBothMutexes) {
  // Round robin with quantum 1 switches at every lock, so both fibers take their first mutex.
  VirtualClock clock;
  FiberEnv env(clock, Schedule::round_robin(1));
  FiberEnv::Mutex queue("queue");
  FiberEnv::Mutex pool("pool");
  env.spawn("submitter", [&] {
    std::unique_lock<FiberEnv::Mutex> first(queue);
    env.yield();
    std::unique_lock<FiberEnv::Mutex> second(pool);
  });
  env.spawn("releaser", [&] {
    std::unique_lock<FiberEnv::Mutex> first(pool);
    env.yield();
    std::unique_lock<FiberEnv::Mutex> second(queue);
  });
  auto result = env.run();
  ASSERT_FALSE(result.ok());
  const RunFailure& failure = result.error();
  EXPECT_EQ(failure.kind, RunFailureKind::Deadlock);
  ASSERT_EQ(failure.fibers.size(), 2U) << failure.report();
  const std::string report = failure.report();
  std::printf("%s\n", report.c_str());  // the report as a user sees it (docs/sched.md quotes it)
  EXPECT_TRUE(contains(report, "deadlock: all 2 unfinished fibers are blocked at step")) << report;
  EXPECT_TRUE(contains(report, "fiber 0 'submitter' waits on mutex #2 'pool' held by fiber 1 'releaser'")) << report;
  EXPECT_TRUE(contains(report, "fiber 1 'releaser' waits on mutex #1 'queue' held by fiber 0 'submitter'")) << report;
  // Teardown abandoned both fibers and gave back the mutexes they held.
  EXPECT_TRUE(queue.try_lock());
  EXPECT_TRUE(pool.try_lock());
  queue.unlock();
  pool.unlock();
}

TEST(FailureReport, LostWakeupConditionAndJoinAndDeviceWaitAreNamed) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::from_seed(21));
  FiberEnv::Mutex mutex("state");
  FiberEnv::CondVar ready("ready");
  FiberEnv::Thread consumer = env.spawn("consumer", [&] {
    std::unique_lock<FiberEnv::Mutex> lock(mutex);
    ready.wait(lock);  // nobody ever notifies: the planted lost wakeup
  });
  env.spawn("joiner", [&] { env.join(consumer); });
  env.spawn("poller", [&] {
    const bool done = env.waiter().wait_until(VirtualClock::kNever, &never_done, nullptr);
    ADD_FAILURE() << "a wait that can never complete returned " << done;
  });
  env.spawn("sleeper", [&] { env.sleep_until(5000); });
  auto result = env.run();
  ASSERT_FALSE(result.ok());
  const RunFailure& failure = result.error();
  const std::string report = failure.report();
  EXPECT_EQ(failure.kind, RunFailureKind::Deadlock) << report;
  EXPECT_EQ(failure.time_ns, 5000U) << "the clock jumps past the sleeper before deadlock is declared";
  ASSERT_EQ(failure.fibers.size(), 3U) << report;
  EXPECT_TRUE(contains(report, "fiber 0 'consumer' waits on condition #2 'ready' (to re-take mutex #1 'state')"))
      << report;
  EXPECT_TRUE(contains(report, "fiber 1 'joiner' waits to join fiber 0 'consumer'")) << report;
  EXPECT_TRUE(contains(report, "fiber 2 'poller' waits on the device")) << report;
  EXPECT_TRUE(contains(report, "with no deadline")) << report;
  EXPECT_FALSE(contains(report, "'sleeper'")) << "the sleeper finished: " << report;
}

TEST(FailureReport, SpinningOnYieldHitsTheStepBound) {
  VirtualClock clock;
  FiberEnvOptions options;
  options.steps_max = 5000;
  FiberEnv env(clock, Schedule::from_seed(2), options);
  bool flag = false;
  env.spawn("spinner", [&] {
    while (!flag) env.yield();  // nobody sets the flag: a livelock
  });
  env.spawn("bystander", [&] {
    while (!flag) env.sleep_until(env.now_ns() + 10);
  });
  auto result = env.run();
  ASSERT_FALSE(result.ok());
  const RunFailure& failure = result.error();
  EXPECT_EQ(failure.kind, RunFailureKind::StepBound);
  EXPECT_TRUE(contains(failure.message, "bound of 5000 switch points")) << failure.report();
  ASSERT_EQ(failure.fibers.size(), 2U) << failure.report();
  EXPECT_EQ(failure.fibers[0].name, "spinner");
}

TEST(FailureReport, UnlockingAnotherFibersMutexIsMisuse) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::round_robin(1));
  FiberEnv::Mutex mutex("shared");
  env.spawn("holder", [&] {
    mutex.lock();
    env.sleep_until(100);
    mutex.unlock();
  });
  env.spawn("intruder", [&] {
    env.yield();
    mutex.unlock();
  });
  auto result = env.run();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, RunFailureKind::Misuse);
  EXPECT_TRUE(contains(result.error().message,
                       "fiber 1 'intruder' unlocked mutex #1 held by fiber 0 'holder'"))
      << result.error().report();
}

TEST(FailureReport, JoiningItselfIsMisuseNotAHang) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::from_seed(4));
  FiberEnv::Thread self;
  self = env.spawn("narcissus", [&] { env.join(self); });
  auto result = env.run();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, RunFailureKind::Misuse);
  EXPECT_TRUE(contains(result.error().message, "joins itself")) << result.error().report();
}

// Device work that keeps scheduling more device work forever, and never completes what a fiber waits for.
class EndlessDeviceWork final : public TimerTarget {
 public:
  explicit EndlessDeviceWork(VirtualClock& clock) : clock_(&clock) {}
  void on_timer(std::uint64_t /*cookie*/, std::uint64_t now_ns) override { clock_->schedule(now_ns + 10, this, 0); }

 private:
  VirtualClock* clock_;
};

TEST(FailureReport, ClockEventsThatNeverWakeAFiberHitTheClockBound) {
  VirtualClock clock;
  EndlessDeviceWork work(clock);
  clock.schedule(10, &work, 0);
  FiberEnvOptions options;
  options.clock_events_max = 1000;
  FiberEnv env(clock, Schedule::from_seed(6), options);
  env.spawn("waiter", [&] { (void)env.waiter().wait_until(VirtualClock::kNever, &never_done, nullptr); });
  auto result = env.run();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, RunFailureKind::ClockBound);
  EXPECT_EQ(result.error().time_ns, 10'000U) << result.error().report();
  EXPECT_TRUE(contains(result.error().report(), "fiber 0 'waiter' waits on the device")) << result.error().report();
}

TEST(FailureReport, TheStepBoundCountsEachRunOnItsOwn) {
  VirtualClock clock;
  FiberEnvOptions options;
  options.steps_max = 300;
  FiberEnv env(clock, Schedule::from_seed(8), options);
  for (int run = 0; run < 3; ++run) {
    env.spawn([&env] {
      for (int step = 0; step < 200; ++step) env.yield();
    });
    auto result = env.run();
    ASSERT_TRUE(result.ok()) << "run " << run << ": " << result.error().report();
  }
}

TEST(FailureReport, FinishingWhileHoldingAMutexIsMisuse) {
  VirtualClock clock;
  FiberEnv env(clock, Schedule::from_seed(9));
  FiberEnv::Mutex mutex("forgotten");
  env.spawn("leaker", [&] { mutex.lock(); });
  auto result = env.run();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, RunFailureKind::Misuse);
  EXPECT_TRUE(contains(result.error().message, "fiber 0 'leaker' finished while holding mutex #1"))
      << result.error().report();
}

TEST(FailureReport, AnExceptionThroughAHeldLockDoesNotSwitchWhileUnwinding) {
  // The thrower's unique_lock releases the mutex during unwinding; the waiters are woken but must not run
  // until the exception has reached the fiber's entry, where the run ends with FiberThrew.
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    VirtualClock clock;
    FiberEnv env(clock, Schedule::from_seed(seed));
    FiberEnv::Mutex mutex("state");
    int entered_after_throw = 0;
    bool thrown = false;
    env.spawn("thrower", [&] {
      std::unique_lock<FiberEnv::Mutex> lock(mutex);
      env.yield();
      thrown = true;
      throw std::runtime_error("planted");
    });
    for (int waiter = 0; waiter < 2; ++waiter) {
      env.spawn([&] {
        std::unique_lock<FiberEnv::Mutex> lock(mutex);
        if (thrown) ++entered_after_throw;
      });
    }
    auto result = env.run();
    ASSERT_FALSE(result.ok()) << "seed " << seed;
    EXPECT_EQ(result.error().kind, RunFailureKind::FiberThrew) << result.error().report();
    EXPECT_EQ(entered_after_throw, 0) << "seed " << seed << ": a fiber ran while the exception propagated";
  }
}

}  // namespace
}  // namespace quiesce::sim
