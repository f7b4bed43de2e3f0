// The honest backends the caller-rule tests run on: TinyBackend always, and quiesce::sim::Device when the
// simulator is part of the build (QUIESCE_VALIDATOR_WITH_SIM). A fixture names the backend, how to let
// submitted work finish, and how to load a program whose launch binds one buffer for writing.
#pragma once

#include <cstdint>
#include <cstring>

#include "quiesce/core/validator.h"
#include "tiny_backend.h"

#if QUIESCE_VALIDATOR_WITH_SIM
#include "quiesce/sim/device.h"
#endif

namespace quiesce::testing {

struct TinyFixture {
  using Inner = TinyBackend;
  static void settle(Inner& inner) { inner.complete_all(); }
};

#if QUIESCE_VALIDATOR_WITH_SIM
struct SimFixture {
  using Inner = sim::Device;
  static void settle(Inner& inner) { (void)inner.run_until_idle(1'000'000); }
};
#endif

// The `fill` builtin: bindings [0 Write], parameters {u32 value}.
template <class V>
Result<Program> load_fill(V& validator, const Context& context) {
  return validator.load_program(context, ArtifactRef{"fill", ArtifactFormat::Builtin, {}, std::uint64_t{1} << 20});
}

struct FillLaunch {
  Binding binding;
  std::byte parameters[4] = {};
  Command command;

  FillLaunch(ProgramRef program, BufferRef target, std::uint32_t value, Access access = Access::Write)
      : binding{target, access} {
    std::memcpy(parameters, &value, sizeof(value));
    command = Command::launch(program, LaunchDims{}, std::span<const Binding>(&binding, 1), parameters);
  }
  FillLaunch(const FillLaunch&) = delete;  // the command borrows the binding and the parameters
  FillLaunch& operator=(const FillLaunch&) = delete;
  Batch batch() const { return Batch(&command, 1); }
};

}  // namespace quiesce::testing
