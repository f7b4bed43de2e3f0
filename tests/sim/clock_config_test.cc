// The virtual clock, the Waiter, the cost profile's text format and the configuration's description.
#include <gtest/gtest.h>

#include <vector>

#include "quiesce/sim/clock.h"
#include "quiesce/sim/codes.h"
#include "quiesce/sim/config.h"

namespace quiesce::sim {
namespace {

class Recorder final : public TimerTarget {
 public:
  void on_timer(std::uint64_t cookie, std::uint64_t now_ns) override { fired.push_back({cookie, now_ns}); }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> fired;
};

TEST(VirtualClock, FiresInTimeThenSchedulingOrder) {
  VirtualClock clock;
  Recorder recorder;
  (void)clock.schedule(300, &recorder, 3);
  (void)clock.schedule(100, &recorder, 1);
  (void)clock.schedule(100, &recorder, 2);
  clock.advance_to(150);
  ASSERT_EQ(recorder.fired.size(), 2U);
  EXPECT_EQ(recorder.fired[0], (std::pair<std::uint64_t, std::uint64_t>{1, 100}));
  EXPECT_EQ(recorder.fired[1], (std::pair<std::uint64_t, std::uint64_t>{2, 100}));
  EXPECT_EQ(clock.now_ns(), 150U);
  EXPECT_TRUE(clock.run_next());
  EXPECT_EQ(clock.now_ns(), 300U);
  EXPECT_FALSE(clock.run_next());
  EXPECT_TRUE(clock.idle());
}

TEST(VirtualClock, RunUntilIdleStopsAtItsBound) {
  VirtualClock clock;
  Recorder recorder;
  for (std::uint64_t i = 0; i < 10; ++i) (void)clock.schedule(i * 10, &recorder, i);
  EXPECT_FALSE(clock.run_until_idle(4));
  EXPECT_EQ(recorder.fired.size(), 4U);
  EXPECT_TRUE(clock.run_until_idle(100));
  EXPECT_EQ(recorder.fired.size(), 10U);
}

TEST(VirtualClock, PastTimesFireNowNotBefore) {
  VirtualClock clock;
  Recorder recorder;
  clock.advance_to(1000);
  (void)clock.schedule(5, &recorder, 9);
  EXPECT_EQ(clock.next_event_ns(), 1000U);
}

TEST(ClockWaiter, ReturnsAtDeadlineOrWhenDone) {
  VirtualClock clock;
  ClockWaiter waiter(clock);
  Recorder recorder;
  (void)clock.schedule(500, &recorder, 1);
  const auto fired = [](const void* raw) { return !static_cast<const Recorder*>(raw)->fired.empty(); };
  EXPECT_FALSE(waiter.wait_until(200, fired, &recorder));
  EXPECT_EQ(clock.now_ns(), 200U);
  EXPECT_TRUE(waiter.wait_until(10'000, fired, &recorder));
  EXPECT_EQ(clock.now_ns(), 500U);
}

bool never_done(const void*) { return false; }

// A wait without a deadline on an idle clock can never be satisfied; it used to spin for ever, because
// "nothing scheduled" (kNever) is not later than "no deadline" (kNever).
TEST(ClockWaiter, AWaitWithoutDeadlineOnAnIdleClockEnds) {
  VirtualClock clock;
  ClockWaiter waiter(clock);
  clock.advance_to(70);
  EXPECT_FALSE(waiter.wait_until(VirtualClock::kNever, never_done, nullptr));
  EXPECT_EQ(clock.now_ns(), 70U);
}

// A cost so large that now + cost overflows ends at the last nanosecond, not at kNever (which would make
// the wait endless) and not in the past (which a wrapping sum would give).
TEST(VirtualClock, DeadlinesSaturateBelowNever) {
  VirtualClock clock;
  clock.advance_to(1000);
  EXPECT_EQ(clock.deadline_after(5), 1005U);
  EXPECT_EQ(clock.deadline_after(UINT64_MAX), VirtualClock::kTimeNsMax);
  EXPECT_EQ(clock.deadline_after(VirtualClock::kTimeNsMax - 1000), VirtualClock::kTimeNsMax);
  EXPECT_EQ(clock.deadline_after(VirtualClock::kTimeNsMax - 1001), VirtualClock::kTimeNsMax - 1);
  clock.advance_by(UINT64_MAX);
  EXPECT_EQ(clock.now_ns(), VirtualClock::kTimeNsMax);
  EXPECT_EQ(clock.deadline_after(1), VirtualClock::kTimeNsMax);
  clock.advance_to(VirtualClock::kNever);  // an event at kNever can carry the clock there
  EXPECT_EQ(clock.deadline_after(0), VirtualClock::kTimeNsMax);
}

// Device::charge_host_ns's wait for a host cost of 2^64 - 1: it must end, with time at its last nanosecond
// and every scheduled event fired, and so must the next one, charged with the clock already there.
TEST(ClockWaiter, AHostCostThatOverflowsTimeEndsAtTheLastNanosecond) {
  VirtualClock clock;
  ClockWaiter waiter(clock);
  Recorder recorder;
  (void)clock.schedule(500, &recorder, 1);
  EXPECT_FALSE(waiter.wait_until(clock.deadline_after(UINT64_MAX), never_done, nullptr));
  EXPECT_EQ(clock.now_ns(), VirtualClock::kTimeNsMax);
  EXPECT_EQ(recorder.fired.size(), 1U);
  (void)clock.schedule(VirtualClock::kNever, &recorder, 2);
  EXPECT_FALSE(waiter.wait_until(clock.deadline_after(UINT64_MAX), never_done, nullptr));
  EXPECT_EQ(clock.now_ns(), VirtualClock::kTimeNsMax);
  EXPECT_EQ(recorder.fired.size(), 1U);
}

TEST(CostProfile, TextRoundTripsEveryKey) {
  CostProfile profile;
  profile.launch_latency_ns = 1234;
  profile.kernel_bytes_per_us = 77;
  profile.free_ns = 9;
  const Result<CostProfile, std::string> parsed = load_cost_profile(to_text(profile));
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(parsed.value(), profile);
  EXPECT_NE(parsed.value(), CostProfile{});
}

TEST(CostProfile, CommentsBlankLinesAndDefaults) {
  const Result<CostProfile, std::string> parsed =
      load_cost_profile("# calibrated\n\n  launch_latency_ns = 10   # fast\nevent_query_ns=3\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  EXPECT_EQ(parsed.value().launch_latency_ns, 10U);
  EXPECT_EQ(parsed.value().event_query_ns, 3U);
  EXPECT_EQ(parsed.value().free_ns, CostProfile{}.free_ns);
}

TEST(CostProfile, BadLinesAreRefusedWithLineNumberAndReason) {
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"launch_latency_ns = 1\nbogus_key = 4\n", "line 2"},
      {"# x\nlaunch_latency_ns 4\n", "no '='"},
      {"launch_latency_ns = -4\n", "not an unsigned"},
      {"kernel_bytes_per_us = 0\n", "greater than zero"},
      {"free_ns = 1\nfree_ns = 2\n", "twice"},
      {"free_ns = 12abc\n", "line 1"},
      {"# x\nallocation_ns = 18446744073709551615\n", "line 2"},
      {"allocation_ns = 18446744073709551615\n", "allocation_ns is above 3600000000000"},
      {"event_query_ns = 3600000000001\n", "event_query_ns is above"},
      {"copy_bytes_per_us = 0\n", "copy_bytes_per_us"},
  };
  for (const auto& entry : cases) {
    const Result<CostProfile, std::string> parsed = load_cost_profile(entry.text);
    ASSERT_FALSE(parsed.ok()) << entry.text;
    EXPECT_NE(parsed.error().find(entry.expected), std::string::npos) << parsed.error();
  }
}

// An hour of virtual time per operation is the most a profile may state; more would let a long run carry
// the clock to its end (clock.h), where time stops and the run no longer means anything.
TEST(CostProfile, EachCostIsAtMostAnHour) {
  const Result<CostProfile, std::string> hour = load_cost_profile("free_ns = 3600000000000\n");
  ASSERT_TRUE(hour.ok()) << hour.error();
  EXPECT_EQ(hour.value().free_ns, kCostNsMax);
  const Result<CostProfile, std::string> large = load_cost_profile("copy_bytes_per_us = 18446744073709551615\n");
  EXPECT_TRUE(large.ok()) << large.error();  // a bandwidth that large makes a cost of zero, which is fine
  Config config;
  config.costs.event_record_ns = kCostNsMax + 1;
  EXPECT_NE(validate(config).find("event_record_ns 3600000000001"), std::string::npos) << validate(config);
  config.costs.event_record_ns = kCostNsMax;
  EXPECT_EQ(validate(config), "");
}

TEST(Config, DescribeLogsSeedKnobsAndSubSeeds) {
  Config config;
  config.seed = 42;
  const std::string text = describe(config);
  EXPECT_EQ(text.rfind("seed = 42\n", 0), 0U) << text;
  EXPECT_NE(text.find("seed.cost = "), std::string::npos);
  EXPECT_NE(text.find("execution_engines = 4"), std::string::npos);
  EXPECT_NE(text.find("launch_latency_ns = 3340"), std::string::npos);
  config.seed = 43;
  EXPECT_NE(describe(config), text);
}

TEST(Config, ValidateNamesTheBadValue) {
  Config config;
  EXPECT_EQ(validate(config), "");
  config.buffer_alignment = 100;
  EXPECT_NE(validate(config).find("100"), std::string::npos);
  config = Config{};
  config.queues_max = 40;
  EXPECT_NE(validate(config).find("40"), std::string::npos);
}

TEST(Codes, DescribeErrorNamesTheSimulatorCode) {
  const Error error = sim_error(ErrorKind::DeviceLost, Code::IllegalAddress, "boom");
  const std::string text = describe(error);
  EXPECT_NE(text.find("700"), std::string::npos);
  EXPECT_NE(text.find("IllegalAddress"), std::string::npos);
  EXPECT_NE(text.find("DeviceLost"), std::string::npos);
}

}  // namespace
}  // namespace quiesce::sim
