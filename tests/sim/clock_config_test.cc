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
  };
  for (const auto& entry : cases) {
    const Result<CostProfile, std::string> parsed = load_cost_profile(entry.text);
    ASSERT_FALSE(parsed.ok()) << entry.text;
    EXPECT_NE(parsed.error().find(entry.expected), std::string::npos) << parsed.error();
  }
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
