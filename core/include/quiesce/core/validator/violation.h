// What the contract validator reports: rule ids, the calls it sees, violations and its options.
//
// A Violation is a plain, trivially copyable value (every text in it is a static string), so recording one
// on the hot path never allocates beyond the reserved violation list. describe_violation() builds the
// readable sentence. Rule ids are stable: a new rule is appended at the end of its enum, never inserted,
// and docs/validator.md lists each id with its one-line meaning.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace quiesce {

// Who broke the contract: the runtime calling the backend, the backend answering, or neither (the
// validator's own bounds).
enum class Party : std::uint8_t { Caller, Provider, Validator };

enum class Rule : std::uint8_t {
  // ---- caller rules: the runtime's obligations ----
  CallerReleaseWhilePinned,       // caller.release-while-pinned
  CallerReleaseWhileCaptured,     // caller.release-while-captured
  CallerDestroyParentWithChildren,  // caller.destroy-parent-with-children
  CallerUseAfterRelease,          // caller.use-after-release
  CallerStaleEpoch,               // caller.stale-epoch
  CallerUnknownHandle,            // caller.unknown-handle
  CallerDestroyUnobservedEvent,   // caller.destroy-unobserved-event
  CallerResubmitIndeterminate,    // caller.resubmit-indeterminate
  CallerAccessMode,               // caller.access-mode
  CallerSyncInsideCapture,        // caller.sync-inside-capture
  CallerAllocateInsideCapture,    // caller.allocate-inside-capture
  CallerCaptureNotEnded,          // caller.capture-not-ended
  CallerCaptureNotBegun,          // caller.capture-not-begun
  CallerUseAfterDeviceLost,       // caller.use-after-device-lost
  CallerCrossContext,             // caller.cross-context
  CallerOutOfRange,               // caller.out-of-range
  CallerEmptyBatch,               // caller.empty-batch
  CallerLeak,                     // caller.leak
  // ---- provider rules: the backend's obligations ----
  ProviderTerminalUnstable,       // provider.terminal-unstable
  ProviderReleaseHandle,          // provider.release-handle
  ProviderReadUninitialised,      // provider.read-uninitialised
  ProviderIllegalTransition,      // provider.illegal-transition
  ProviderCancelInconsistent,     // provider.cancel-inconsistent
  ProviderRejectedSubmitRetained,  // provider.rejected-submit-retained
  ProviderIndeterminateWithoutEvent,  // provider.indeterminate-without-event
  ProviderSubmittedCountMismatch,  // provider.submitted-count-mismatch
  ProviderTimingWithoutTerminal,  // provider.timing-without-terminal
  ProviderTimingNotRequested,     // provider.timing-not-requested
  ProviderInvalidCreatedHandle,   // provider.invalid-created-handle
  // ---- the validator's own limits ----
  ValidatorBoundExceeded,         // validator.bound-exceeded
};

inline constexpr std::uint32_t kRuleCount = static_cast<std::uint32_t>(Rule::ValidatorBoundExceeded) + 1;

// Every method of the Backend concept, in the order backend.h declares them.
enum class Call : std::uint8_t {
  None,  // end-of-run checks made by finish()
  DeviceInfo,
  CreateContext,
  DestroyContext,
  DiscardContext,
  AllocateBuffer,
  GetBufferInfo,
  WriteBuffer,
  ReadBuffer,
  FreeBuffer,
  LoadProgram,
  UnloadProgram,
  CreateQueue,
  DestroyQueue,
  GetQueueState,
  Submit,
  Synchronize,
  PollEvent,
  WaitEvent,
  CancelEvent,
  DestroyEvent,
  BeginCapture,
  Capture,
  EndCapture,
  DestroyExecutable,
  GetMemoryUsage,
  GetMemoryReport,
  InstallPools,
  MemoryCleanup,
};

enum class HandleKind : std::uint8_t {
  None,
  ContextHandle,
  BufferHandle,
  ProgramHandle,
  QueueHandle,
  EventHandle,
  ExecutableHandle,
};

struct HandleName {
  HandleKind kind = HandleKind::None;
  std::uint64_t id = 0;
  std::uint32_t epoch = 0;

  friend bool operator==(const HandleName&, const HandleName&) = default;
};

struct Violation {
  Rule rule = Rule::ValidatorBoundExceeded;
  // The 0-based index of the backend call through this validator. A Recorder stacked directly above the
  // validator records the same calls in the same order, so this is also the trace position.
  std::uint64_t call_index = 0;
  Call call = Call::None;
  // The handle the call named first, then the related one (the event that pins it, the parent, ...).
  std::array<HandleName, 2> handles = {};
  std::string_view expected = {};  // static text: what the contract requires
  std::string_view observed = {};  // static text: what happened instead (may be empty)
  std::uint64_t value = 0;         // a number the rule names: an invocation, a byte offset, a count
};

static_assert(std::is_trivially_copyable_v<Violation>);

enum class ViolationMode : std::uint8_t {
  // A call that breaks a caller rule is refused: it is not forwarded, and it answers Rejected (a release
  // hands the same live handle back, so nothing is lost) or an error of domain Core whose native_code is
  // the rule number. Later calls are still checked and forwarded when they are correct.
  StopAtFirst,
  // Every call is forwarded anyway and every violation is recorded.
  CollectAll,
};

struct ValidatorOptions {
  ViolationMode mode = ViolationMode::StopAtFirst;
  // Flag a batch identical in content to the indeterminate batch just before it on the same queue (with
  // invocation 0, where the caller gave no identity): the cheap signature of a blind retry.
  bool check_identical_resubmit = true;
  // Poison every read sink and check that a successful read overwrote it (see docs/validator.md).
  bool check_read_initialised = true;
  std::uint32_t violations_stored_max = 4096;  // later violations are counted, not stored
  // Consumed handles remembered per kind (a later use is a use after release); older ones are forgotten
  // and a use of them is reported as an unknown handle (still a violation). A larger window costs cache:
  // measured on the simulator, 65,536 made the validated stack 2.9x the bare device's CPU time, 1,024 1.6x.
  std::uint32_t retired_remembered_max = 1024;
  std::uint32_t indeterminate_invocations_max = 1U << 20;
};

struct RuleInfo {
  Rule rule;
  Party party;
  std::string_view name;      // "caller.release-while-pinned"
  std::string_view summary;   // one line: what the rule requires
};

const RuleInfo& rule_info(Rule rule);
std::string_view to_string(Rule rule);  // the short name
std::string_view to_string(Call call);  // the backend method name
std::string_view to_string(HandleKind kind);
std::string_view to_string(Party party);

// A readable sentence: the call, the rule, the handles, what was expected and what happened.
std::string describe_violation(const Violation& violation);

}  // namespace quiesce
