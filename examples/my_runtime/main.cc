// The campaign of my_runtime: seeds 1..N on the simulated stack with the default fault plan.
// Usage: my_runtime_campaign [--bug] [--seeds N]. Exit 0 when every case held, 1 when one failed.
#include <cstdlib>
#include <iostream>
#include <string_view>

#include <quiesce/properties/byo.h>

#include "my_runtime.h"

int main(int argc, char** argv) {
  my_runtime::Options options;
  std::uint64_t seeds = 50;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument == "--bug") {
      options.planted_bug = true;
    } else if (argument == "--seeds" && i + 1 < argc) {
      seeds = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::cerr << "my_runtime_campaign: unknown argument '" << argument << "'. Usage: [--bug] [--seeds N]\n";
      return 2;
    }
  }
  quiesce::properties::CampaignOptions campaign;
  campaign.name = options.planted_bug ? "my_runtime with the planted bug" : "my_runtime";
  campaign.seeds = {1, seeds};
  quiesce::properties::UserCaseOptions cases;
  cases.determinism_every = 8;
  std::uint64_t data_failures = 0;
  const quiesce::properties::CampaignReport report = quiesce::properties::run_user_campaign(
      campaign, cases, [&](quiesce::properties::UserStack& stack, std::uint64_t seed, const std::function<void()>& on_liveness) {
        my_runtime::Runtime<quiesce::properties::UserStack> runtime(stack, options);
        if (!runtime.run(seed, on_liveness)) data_failures++;
      });
  quiesce::properties::print_summary(report, std::cout);
  if (data_failures != 0) std::cout << data_failures << " runs read back bytes they had not written.\n";
  return report.failures() == 0 && data_failures == 0 ? 0 : 1;
}
