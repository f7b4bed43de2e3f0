// The conformance suite run from inside another program (see conformance_runner.h): the backend's
// instantiation prefixes become a GoogleTest filter, a listener of our own replaces GoogleTest's printer and
// counts, and GoogleTest runs the cases.
#include "conformance_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <span>

#if QUIESCE_CONFORMANCE_HAS_CUDA
#include "quiesce/cuda/device.h"
#endif

namespace quiesce::conformance {
namespace {

// The prefixes each backend's instance files instantiate under (conformance_runner.h says which stacks).
constexpr std::array<std::string_view, 4> kSimPrefixes = {"Sim", "Injector", "Validator", "ValidatorMisuse"};
constexpr std::array<std::string_view, 2> kCudaPrefixes = {"Cuda", "ValidatedCuda"};
constexpr std::array<SuiteBackend, 2> kBackends = {SuiteBackend::Sim, SuiteBackend::Cuda};

std::span<const std::string_view> prefixes_of(SuiteBackend backend) {
  if (backend == SuiteBackend::Cuda) return kCudaPrefixes;
  return kSimPrefixes;
}

std::optional<SuiteBackend> owner_of(std::string_view prefix) {
  for (SuiteBackend backend : kBackends) {
    const std::span<const std::string_view> prefixes = prefixes_of(backend);
    if (std::find(prefixes.begin(), prefixes.end(), prefix) != prefixes.end()) return backend;
  }
  return std::nullopt;
}

// `Sim` of the typed suite `Sim/ConformanceLifecycle/0`; a suite that is not typed is its own prefix.
std::string_view prefix_of(std::string_view suite_name) { return suite_name.substr(0, suite_name.find('/')); }

std::string join(std::span<const std::string> parts, std::string_view separator) {
  std::string joined;
  for (const std::string& part : parts) {
    if (!joined.empty()) joined += separator;
    joined += part;
  }
  return joined;
}

std::string ownership_sentence() {
  std::string sentence;
  for (SuiteBackend backend : kBackends) {
    sentence += sentence.empty() ? "" : "; ";
    sentence += std::string(to_string(backend)) + ":";
    for (std::string_view prefix : prefixes_of(backend)) sentence += " " + std::string(prefix);
  }
  return sentence;
}

// The GoogleTest filter that selects what `options.filter` selects among the backend's cases: the
// backend's prefixes stand in for an empty positive part, every other backend's prefix joins the negative
// part. A registered case under a prefix that no backend owns is refused.
Result<std::string, SuiteError> backend_filter(const SuiteOptions& options) {
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  std::vector<std::string> foreign;
  for (int index = 0; index < unit.total_test_suite_count(); ++index) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(index);
    const std::string prefix(prefix_of(suite.name()));
    const std::optional<SuiteBackend> owner = owner_of(prefix);
    if (!owner) {
      return SuiteError{SuiteErrorKind::UnassignedCase,
                        "the conformance suite " + std::string(suite.name()) + " is instantiated under the prefix '" +
                            prefix + "', which no backend owns (" + ownership_sentence() +
                            "; tests/conformance/conformance_runner.cc assigns them)"};
    }
    if (*owner != options.backend && std::find(foreign.begin(), foreign.end(), prefix + "/*") == foreign.end()) {
      foreign.push_back(prefix + "/*");
    }
  }
  const std::size_t dash = options.filter.find('-');
  std::string positive = options.filter.substr(0, dash);
  std::vector<std::string> negative;
  if (dash != std::string::npos && dash + 1 < options.filter.size()) {
    negative.push_back(options.filter.substr(dash + 1));
  }
  if (positive.empty()) {
    std::vector<std::string> own;
    for (std::string_view prefix : prefixes_of(options.backend)) own.push_back(std::string(prefix) + "/*");
    positive = join(own, ":");
  }
  negative.insert(negative.end(), foreign.begin(), foreign.end());
  return negative.empty() ? positive : positive + "-" + join(negative, ":");
}

// The fixture a typed case runs on, without the suite's namespaces: `SimFixture`, `InjectorFixture<...>`.
std::string fixture_of(const ::testing::TestInfo& info) {
  if (info.type_param() == nullptr) return "";
  std::string name = info.type_param();
  constexpr std::array<std::string_view, 2> kNoise = {"quiesce::conformance::", "(anonymous namespace)::"};
  for (std::string_view noise : kNoise) {
    for (std::size_t at = name.find(noise); at != std::string::npos; at = name.find(noise, at)) {
      name.erase(at, noise.size());
    }
  }
  return name;
}

std::string one_line(std::string_view text) {
  std::string line(text);
  std::replace(line.begin(), line.end(), '\n', ' ');
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// `file:line: message`, the message's lines kept, each line after the first indented like the first.
std::string describe_part(const ::testing::TestPartResult& part, const std::string& indent) {
  std::string text = indent;
  if (part.file_name() != nullptr) {
    text += std::string(part.file_name()) + (part.line_number() >= 0 ? ":" + std::to_string(part.line_number()) : "");
    text += ": ";
  }
  for (char c : std::string_view(part.message())) text += c == '\n' ? "\n" + indent : std::string(1, c);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
  return text + "\n";
}

// One line per case, failures with their messages; counts what it prints.
class CaseListener final : public ::testing::EmptyTestEventListener {
 public:
  CaseListener(const SuiteOptions& options, std::ostream& out, SuiteCounts& counts)
      : options_(options), out_(out), counts_(counts) {}

  void OnTestStart(const ::testing::TestInfo& info) override {
    (void)info;
    failures_.clear();
    skip_reason_.clear();
  }
  void OnTestPartResult(const ::testing::TestPartResult& part) override {
    if (part.skipped()) skip_reason_ = one_line(part.message());
    if (part.failed()) failures_ += describe_part(part, options_.indent + "      ");
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const std::string name = std::string(info.test_suite_name()) + "." + info.name();
    const std::string fixture = fixture_of(info);
    const std::string label = fixture.empty() ? name : name + " [" + fixture + "]";
    const ::testing::TestResult& result = *info.result();
    if (result.Failed()) {
      ++counts_.failed;
      counts_.failed_cases.push_back(name);
      out_ << options_.indent << "FAIL  " << label << '\n' << failures_;
    } else if (result.Skipped()) {
      ++counts_.skipped;
      out_ << options_.indent << "SKIP  " << label << (skip_reason_.empty() ? "" : ": " + skip_reason_) << '\n';
    } else {
      ++counts_.passed;
      if (options_.print_passed) out_ << options_.indent << "PASS  " << label << '\n';
    }
    out_.flush();
  }

 private:
  const SuiteOptions& options_;
  std::ostream& out_;
  SuiteCounts& counts_;
  std::string failures_;
  std::string skip_reason_;
};

// The driver check of a backend that needs one, before any case opens a device.
std::optional<SuiteError> missing_driver(SuiteBackend backend) {
  if (backend != SuiteBackend::Cuda) return std::nullopt;
#if QUIESCE_CONFORMANCE_HAS_CUDA
  auto device = cuda::Device::open();
  if (!device.ok()) return SuiteError{SuiteErrorKind::NoDriver, device.error().message()};
  return std::nullopt;
#else
  return SuiteError{SuiteErrorKind::NoDriver,
                    "no CUDA driver: this build has no cuda backend (no CUDA toolkit headers)"};
#endif
}

SuiteError no_case_matches(const SuiteOptions& options) {
  return SuiteError{SuiteErrorKind::NoCaseMatches, "the filter '" + options.filter +
                                                       "' selects no conformance case of the " +
                                                       std::string(to_string(options.backend)) + " backend"};
}

// Stands in for the cases of a backend whose driver is missing: a fatal failure in the global set-up makes
// GoogleTest skip every case without opening a device, after it has applied the filter, so the filter is
// still judged (UnitTest::test_to_run_count) before the missing driver is reported.
class HoldBack final : public ::testing::Environment {
 public:
  void SetUp() override { GTEST_FAIL() << "held back: no driver"; }
};

}  // namespace

std::string_view to_string(SuiteBackend backend) { return backend == SuiteBackend::Cuda ? "cuda" : "sim"; }

std::string describe_counts(const SuiteCounts& counts) {
  std::string text = std::to_string(counts.passed) + " passed, " + std::to_string(counts.failed) + " failed";
  if (counts.skipped > 0) text += ", " + std::to_string(counts.skipped) + " skipped";
  return text;
}

Result<SuiteCounts, SuiteError> run_conformance(const SuiteOptions& options, std::ostream& out) {
  // A bad filter is reported before a missing driver: the filter is the caller's to fix on any machine.
  const std::optional<SuiteError> no_driver = missing_driver(options.backend);
  int argc = 1;
  std::array<char, 8> program = {'q', 'u', 'i', 'e', 's', 'c', 'e', '\0'};
  std::array<char*, 2> argv = {program.data(), nullptr};
  ::testing::InitGoogleTest(&argc, argv.data());
  Result<std::string, SuiteError> filter = backend_filter(options);
  if (!filter.ok()) return filter.error();
  GTEST_FLAG_SET(filter, filter.value());
  if (no_driver) ::testing::AddGlobalTestEnvironment(new HoldBack());  // GoogleTest owns it

  SuiteCounts counts;
  ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  ::testing::TestEventListeners& listeners = unit.listeners();
  delete listeners.Release(listeners.default_result_printer());
  std::ostream silent(nullptr);  // a held-back run prints nothing: no case ran
  auto* listener = new CaseListener(options, no_driver ? silent : out, counts);
  listeners.Append(listener);  // GoogleTest owns it until it is released below
  const int gtest_status = RUN_ALL_TESTS();
  delete listeners.Release(listener);
  if (no_driver) {
    if (unit.test_to_run_count() == 0) return no_case_matches(options);
    return *no_driver;
  }

  const ::testing::TestResult& outside = unit.ad_hoc_test_result();
  for (int index = 0; index < outside.total_part_count(); ++index) {
    const ::testing::TestPartResult& part = outside.GetTestPartResult(index);
    if (!part.failed()) continue;
    out << options.indent << "FAIL  outside any case\n" << describe_part(part, options.indent + "      ");
  }
  counts.failed_outside_cases = outside.Failed() || (gtest_status != 0 && counts.failed == 0);
  if (counts.passed + counts.failed + counts.skipped == 0 && !counts.failed_outside_cases) {
    return no_case_matches(options);
  }
  return counts;
}

}  // namespace quiesce::conformance
