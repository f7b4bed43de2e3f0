// The engine over ToyBackend: one test per feature, each asserting what the engine must (not) do.
#include <gtest/gtest.h>

#include "toy_backend.h"
#include "quiesce/core/engine.h"

namespace quiesce::test {
namespace {

TEST(EngineToy, OpensAndShutsDownClean) {
  ToyBackend backend;
  ManualEnv env;
  Engine<ToyBackend, ManualEnv> engine(backend, env);
  ASSERT_TRUE(engine.open().ok());
  const ShutdownReport report = engine.shutdown(1'000'000);
  EXPECT_TRUE(report.clean()) << report.describe();
  EXPECT_TRUE(backend.violations.empty());
}

}  // namespace
}  // namespace quiesce::test
