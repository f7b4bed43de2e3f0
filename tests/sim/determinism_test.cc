// Determinism (R20): one seed gives the same digest, timings and findings; another seed changes them.
#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace quiesce::sim {
namespace {

using testing::Harness;
using testing::u32_words;
using testing::u64_bytes;

struct RunSummary {
  std::uint64_t digest = 0;
  std::uint64_t end_ns = 0;
  std::size_t findings = 0;
  std::vector<std::uint64_t> finish_times;
};

// A seeded mixed workload over three queues, with jitter on, that races on purpose (no Waits).
RunSummary run_workload(std::uint64_t seed) {
  Config config = testing::exact_config(seed);
  config.cost_jitter = Ratio{1, 4};
  config.host_costs = true;
  Harness h(config);
  Prng choices(seed ^ 0x5EEDU);
  Program fill = h.load("fill");
  Program delay = h.load("delay");
  std::vector<Buffer> buffers;
  for (int i = 0; i < 4; ++i) buffers.push_back(h.allocate(256));
  std::vector<Queue> queues;
  for (int i = 0; i < 3; ++i) queues.push_back(h.queue());
  std::vector<Event> events;
  std::vector<std::vector<Binding>> bindings(64);
  const std::vector<std::byte> value = u32_words({1});
  const std::vector<std::byte> duration = u64_bytes(5000);
  for (std::size_t step = 0; step < 64; ++step) {
    bindings[step] = {Binding{buffers[choices.below(4)].ref(), Access::Write}};
    const Command command = choices.coin() ? Command::launch(fill.ref(), {}, bindings[step], value)
                                           : Command::launch(delay.ref(), {}, {}, duration);
    SubmitResult result =
        h.device.submit(queues[choices.below(3)], {&command, 1}, SubmitOptions{1'000'000, true, step + 1});
    EXPECT_EQ(result.status, SubmitStatus::Submitted);
    events.push_back(std::move(result.event));
    (void)h.device.poll_event(events[choices.below(events.size())]);
  }
  RunSummary summary;
  for (Event& event : events) {
    const WaitResult waited = h.device.wait_event(event, 1'000'000'000);
    EXPECT_TRUE(waited.ok());
    summary.finish_times.push_back(waited->timing->finished_ns);
    EXPECT_TRUE(h.device.destroy_event(std::move(event)).ok());
  }
  summary.digest = h.device.digest();
  summary.end_ns = h.device.now_ns();
  summary.findings = h.device.findings().size();
  return summary;
}

TEST(Determinism, SameSeedSameDigestTimingsAndFindings) {
  const RunSummary a = run_workload(11);
  const RunSummary b = run_workload(11);
  EXPECT_EQ(a.digest, b.digest);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.finish_times, b.finish_times);
  EXPECT_EQ(a.findings, b.findings);
  EXPECT_GT(a.findings, 0U);  // the workload races on purpose, so the oracle has something to say
}

TEST(Determinism, DifferentSeedDifferentDigestAndTimings) {
  const RunSummary a = run_workload(11);
  const RunSummary b = run_workload(12);
  EXPECT_NE(a.digest, b.digest);
  EXPECT_NE(a.finish_times, b.finish_times);
}

TEST(Determinism, JitterAloneChangesTimingsUnderTheSameCalls) {
  // Same calls, two device seeds: only the "cost" sub-seed differs, so finish times must differ.
  const auto finish_of = [](std::uint64_t seed) {
    Config config = testing::exact_config(seed);
    config.cost_jitter = Ratio{1, 2};
    Harness h(config);
    Program delay = h.load("delay");
    Queue queue = h.queue();
    const std::vector<std::byte> duration = u64_bytes(1'000'000);
    const Command launch = Command::launch(delay.ref(), {}, {}, duration);
    Event event = h.submit(queue, {&launch, 1}, SubmitOptions{0, true, 0});
    return h.wait(event).timing->finished_ns;
  };
  EXPECT_EQ(finish_of(3), finish_of(3));
  EXPECT_NE(finish_of(3), finish_of(4));
}

}  // namespace
}  // namespace quiesce::sim
