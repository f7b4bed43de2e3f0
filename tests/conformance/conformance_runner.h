// Runs the conformance suite inside another program: `quiesce conformance --backend sim|cuda` and the
// conformance part of `quiesce hil` link the same instance files as the quiesce_conformance_* test binaries
// (each *_instance_test.cc is an object library; GoogleTest registers its cases through static
// initializers) and run them here, in their own process, through GoogleTest's own runner.
//
// A backend is a set of instantiation prefixes (the first argument of QUIESCE_INSTANTIATE_CONFORMANCE):
//   sim   Sim, Injector, Validator, ValidatorMisuse  (sim::Device, faults::Injector<sim::Device> under
//         none/default/all, Validator<...> as validator_instance_test.cc instantiates it)
//   cuda  Cuda, ValidatedCuda                        (cuda::Device, Validator<faults::Injector<cuda::Device>>)
// A case registered under any other prefix is refused (SuiteErrorKind::UnassignedCase), so an instance file
// added without a backend here fails `quiesce conformance` instead of never running.
//
// GoogleTest runs its registered cases once per process: call run_conformance at most once.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "quiesce/core/result.h"

namespace quiesce::conformance {

enum class SuiteBackend { Sim, Cuda };

std::string_view to_string(SuiteBackend backend);

struct SuiteOptions {
  SuiteBackend backend = SuiteBackend::Sim;
  // A GoogleTest filter (`POSITIVE[:POSITIVE...][-NEGATIVE[:NEGATIVE...]]`, `*` and `?` wildcards) over the
  // full case names (`Sim/ConformanceLifecycle/0.DeviceInfoIsStable`); empty: every case of the backend.
  std::string filter;
  bool print_passed = true;  // one line per passed case too (failures and skips are always printed)
  std::string indent;        // put before every line printed
};

struct SuiteCounts {
  std::uint32_t passed = 0;
  std::uint32_t failed = 0;
  std::uint32_t skipped = 0;                // GTEST_SKIP: an absent capability, an absent driver
  std::vector<std::string> failed_cases;    // full names, in run order
  bool failed_outside_cases = false;        // a failure GoogleTest reported outside any case

  bool all_passed() const { return failed == 0 && !failed_outside_cases; }
};

// "N passed, N failed", with ", N skipped" when some were skipped.
std::string describe_counts(const SuiteCounts& counts);

enum class SuiteErrorKind {
  NoDriver,        // --backend cuda without a CUDA driver or a GPU it can open
  NoCaseMatches,   // the filter selects no case of the backend
  UnassignedCase,  // a registered case has a prefix no backend owns (see above)
};

struct SuiteError {
  SuiteErrorKind kind = SuiteErrorKind::NoDriver;
  std::string message;  // a full sentence naming the value
};

// Runs the backend's cases that the filter selects, printing `PASS  name [fixture]`, `FAIL  name [fixture]`
// (then the failure messages, indented) or `SKIP  name [fixture]: reason` for each on `out`. Returns the
// counts; an error when nothing could be run (no driver, nothing selected, an unassigned case). A filter that
// selects nothing is reported before a missing driver.
Result<SuiteCounts, SuiteError> run_conformance(const SuiteOptions& options, std::ostream& out);

}  // namespace quiesce::conformance
