// The project-own result type and the closed error taxonomy of the contract.
//
// clang 14 cannot use std::expected with libstdc++ 12, so quiesce carries its own small [[nodiscard]]
// Result<T, E>. An Error is trivially copyable and allocation-free: its text is a static string, so the
// hot path of a backend never allocates to report a failure. describe_error() builds the long report.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace quiesce {

// The closed taxonomy shared by every backend (the union of the three seed contracts' error kinds).
enum class ErrorKind : std::uint8_t {
  Unsupported,       // the capability or operation is absent on this backend
  InvalidArgument,   // the caller broke a precondition the backend could check
  PermissionDenied,  // access mode or usage forbids the operation
  Incompatible,      // the handle or artifact cannot be used with this backend or context
  OutOfMemory,       // capacity or budget exhausted
  Busy,              // the resource is in use; also "cancellation lost the race"
  Timeout,           // a deadline passed before the operation could be decided
  DeviceLost,        // the context hit a sticky fault; nothing on it will succeed again
  Internal,          // the backend itself failed in a way it cannot classify
};

// Which code space `native_code` belongs to.
enum class NativeDomain : std::uint8_t { None, Simulator, Cuda, Core };

struct Error {
  ErrorKind kind = ErrorKind::Internal;
  NativeDomain domain = NativeDomain::None;
  std::int32_t native_code = 0;  // a CUresult, a sim::Code, or 0
  bool injected = false;         // produced by faults::Injector, never by a real device
  bool retryable = false;        // the exact same call may be repeated
  std::string_view what = {};    // a static string: never points into a temporary

  friend bool operator==(const Error&, const Error&) = default;
};

static_assert(std::is_trivially_copyable_v<Error>);

constexpr Error make_error(ErrorKind kind, std::string_view what, bool retryable = false) {
  return Error{kind, NativeDomain::Core, 0, false, retryable, what};
}

std::string_view to_string(ErrorKind kind);
std::string_view to_string(NativeDomain domain);

// A readable one-line report: kind, domain and code, injected or real, retryable or not, and the text.
std::string describe_error(const Error& error);

template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  using value_type = T;
  using error_type = E;

  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(E error) : storage_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return storage_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(storage_); }
  const T& value() const& { return std::get<0>(storage_); }
  T&& value() && { return std::get<0>(std::move(storage_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

  const E& error() const { return std::get<1>(storage_); }

 private:
  std::variant<T, E> storage_;
};

// Result<void>: success, or one error.
template <class E>
class [[nodiscard]] Result<void, E> {
 public:
  // User-provided, not defaulted: `Status{}` then initializes the members one by one. A defaulted
  // constructor makes `Status{}` zero the whole object first, which GCC emits as a `rep stos` whose
  // start-up costs more than the rest of a short check (every ok_status() paid it).
  Result() : error_{}, ok_(true) {}
  Result(E error) : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const E& error() const { return error_; }

 private:
  E error_{};
  bool ok_ = true;
};

using Status = Result<void>;

inline Status ok_status() { return Status{}; }

}  // namespace quiesce

// Propagates the error of a Result-returning expression out of the enclosing function.
#define QUIESCE_TRY(expression)                     \
  do {                                              \
    auto quiesce_try_result_ = (expression);        \
    if (!quiesce_try_result_.ok()) {                \
      return quiesce_try_result_.error();           \
    }                                               \
  } while (false)
