// Result, Status and QUIESCE_TRY: the error channel every backend call uses.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "quiesce/core/result.h"

namespace quiesce {
namespace {

constexpr Error kTooBig = make_error(ErrorKind::OutOfMemory, "the request is larger than the budget", true);

Result<int> parse_positive(int value) {
  if (value <= 0) return make_error(ErrorKind::InvalidArgument, "the value is not positive");
  return value;
}

// QUIESCE_TRY returns the first error and runs nothing after it.
Result<int> sum_of_positives(int first, int second, int& steps_run) {
  QUIESCE_TRY(parse_positive(first));
  ++steps_run;
  QUIESCE_TRY(parse_positive(second));
  ++steps_run;
  return first + second;
}

Status check_both(int first, int second) {
  QUIESCE_TRY(parse_positive(first));
  QUIESCE_TRY(parse_positive(second));
  return ok_status();
}

TEST(ResultTest, ValueAndErrorAreExclusive) {
  const Result<int> good = 7;
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(static_cast<bool>(good));
  EXPECT_EQ(good.value(), 7);

  const Result<int> bad = kTooBig;
  ASSERT_FALSE(bad.ok());
  EXPECT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(bad.error(), kTooBig);
  EXPECT_EQ(bad.error().kind, ErrorKind::OutOfMemory);
  EXPECT_TRUE(bad.error().retryable);
}

TEST(ResultTest, MoveOnlyValuesMoveOut) {
  Result<std::unique_ptr<int>> boxed = std::make_unique<int>(41);
  ASSERT_TRUE(boxed.ok());
  **boxed += 1;
  std::unique_ptr<int> taken = std::move(boxed).value();
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(*taken, 42);
}

TEST(ResultTest, ArrowReachesTheValue) {
  Result<std::string> text = std::string("quiesce");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->size(), 7U);
}

TEST(ResultTest, StatusDefaultsToSuccess) {
  const Status fine = ok_status();
  EXPECT_TRUE(fine.ok());
  const Status failed = make_error(ErrorKind::Busy, "the queue still has work");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::Busy);
  EXPECT_FALSE(failed.error().retryable);
}

TEST(ResultTest, TryPropagatesTheFirstErrorAndStopsThere) {
  int steps_run = 0;
  const Result<int> sum = sum_of_positives(2, 3, steps_run);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum.value(), 5);
  EXPECT_EQ(steps_run, 2);

  steps_run = 0;
  const Result<int> early = sum_of_positives(-1, 3, steps_run);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(steps_run, 0);

  steps_run = 0;
  const Result<int> late = sum_of_positives(1, 0, steps_run);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(steps_run, 1);
}

TEST(ResultTest, TryWorksInStatusFunctions) {
  EXPECT_TRUE(check_both(1, 2).ok());
  const Status failed = check_both(1, -2);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().what, "the value is not positive");
}

TEST(ErrorTest, MakeErrorIsACoreErrorThatIsNotInjected) {
  constexpr Error error = make_error(ErrorKind::Timeout, "the deadline passed");
  EXPECT_EQ(error.domain, NativeDomain::Core);
  EXPECT_EQ(error.native_code, 0);
  EXPECT_FALSE(error.injected);
  EXPECT_FALSE(error.retryable);
  EXPECT_NE(error, kTooBig);
}

TEST(ErrorTest, DescribeErrorNamesEveryField) {
  Error error = make_error(ErrorKind::DeviceLost, "the context hit a sticky fault");
  error.domain = NativeDomain::Cuda;
  error.native_code = 700;
  error.injected = true;
  const std::string report = describe_error(error);
  EXPECT_NE(report.find("DeviceLost"), std::string::npos) << report;
  EXPECT_NE(report.find("cuda"), std::string::npos) << report;
  EXPECT_NE(report.find("700"), std::string::npos) << report;
  EXPECT_NE(report.find("injected"), std::string::npos) << report;
  EXPECT_NE(report.find("not retryable"), std::string::npos) << report;
  EXPECT_NE(report.find("the context hit a sticky fault"), std::string::npos) << report;

  error.injected = false;
  error.retryable = true;
  const std::string real = describe_error(error);
  EXPECT_NE(real.find("real"), std::string::npos) << real;
  EXPECT_EQ(real.find("injected"), std::string::npos) << real;
  EXPECT_EQ(real.find("not retryable"), std::string::npos) << real;
}

TEST(ErrorTest, EveryErrorKindHasItsOwnName) {
  const ErrorKind kinds[] = {ErrorKind::Unsupported, ErrorKind::InvalidArgument, ErrorKind::PermissionDenied,
                             ErrorKind::Incompatible, ErrorKind::OutOfMemory,   ErrorKind::Busy,
                             ErrorKind::Timeout,      ErrorKind::DeviceLost,    ErrorKind::Internal};
  for (const ErrorKind kind : kinds) {
    const std::string_view name = to_string(kind);
    EXPECT_FALSE(name.empty());
    EXPECT_NE(name, "UnknownErrorKind");
    for (const ErrorKind other : kinds) {
      if (other != kind) {
        EXPECT_NE(name, to_string(other));
      }
    }
  }
}

}  // namespace
}  // namespace quiesce
