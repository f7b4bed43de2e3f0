// The vocabulary of fault injection: which backend method a fault hit (Site), which lie it told
// (FaultKind), the family a kind belongs to (FaultFamily), and the record of one injected fault
// (InjectedFault).
//
// InjectedFault is a plain struct of integers and enums so that the trace format can encode it and a replay
// can hand the same list back to an Injector (Plan::replay): every choice the injector made for a fault is in
// `parameter`, so replaying the list against the same inner backend reproduces the same lies exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace quiesce::faults {

// The backend method a call went to, in Backend-concept order. Names in plan files are the method names.
enum class Site : std::uint8_t {
  DeviceInfo,
  CreateContext,
  DestroyContext,
  DiscardContext,
  AllocateBuffer,
  BufferInfo,
  WriteBuffer,
  ReadBuffer,
  FreeBuffer,
  LoadProgram,
  UnloadProgram,
  CreateQueue,
  DestroyQueue,
  QueueState,
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
  MemoryUsage,
  MemoryReport,
  InstallPools,
  MemoryCleanup,
};
inline constexpr std::uint32_t kSiteCount = 28;

// Every lie the injector can tell. What `InjectedFault::parameter` holds is given per kind.
enum class FaultKind : std::uint8_t {
  SubmitRejected,       // submit: Rejected{Busy, retryable}; the inner backend is not called
  AdmissionTimeout,     // submit: Rejected{Timeout, retryable}; the inner backend is not called
  SubmitIndeterminate,  // submit: the whole batch really submitted, reported Indeterminate with its event
  PartialSubmit,        // submit: parameter = k, the strict prefix really submitted (1 <= k < batch size)
  PollIndeterminate,    // poll_event: a transient, non-terminal Indeterminate observation
  WaitIndeterminate,    // wait_event: FenceIndeterminate; the event stays live
  DelayedCompletion,    // poll_event: parameter = polls reported Pending after the inner event is terminal
  AsyncLaunchFailure,   // poll/wait: an inner Complete reported FailedButQuiescent; the data effects happened
  ReleaseRejected,      // any release: Rejected{Busy, retryable}, the same live handle back; inner not called
  ReleaseIndeterminate, // any release: parameter = 1 if the inner release was really done, 0 if held in limbo
  AllocationFailure,    // allocate_buffer: OutOfMemory; the inner backend is not called
  ProgramLoadFailure,   // load_program: Internal; the inner backend is not called
  PartialWrite,         // write_buffer: parameter = bytes really written before the injected error
  PartialRead,          // read_buffer: parameter = bytes copied into the sink before the injected error
  CancelLost,           // cancel_event: Busy without calling the inner cancel; later polls show a normal terminal
  DeviceLost,           // submit/poll/wait/synchronize: the context is lost from here on until discard_context
};
inline constexpr std::uint32_t kFaultKindCount = 16;

// Swarm testing switches whole families off. One header per family under faults/ (submit_faults.h, ...).
enum class FaultFamily : std::uint8_t {
  Submit,      // SubmitRejected, AdmissionTimeout, SubmitIndeterminate, PartialSubmit
  Event,       // PollIndeterminate, WaitIndeterminate, DelayedCompletion, AsyncLaunchFailure
  Release,     // ReleaseRejected, ReleaseIndeterminate
  Resource,    // AllocationFailure, ProgramLoadFailure
  Transfer,    // PartialWrite, PartialRead
  Cancel,      // CancelLost
  DeviceLoss,  // DeviceLost
};
inline constexpr std::uint32_t kFaultFamilyCount = 7;

FaultFamily family_of(FaultKind kind);

// Whether the injector can ever tell `kind` at `site` (a plan scripting anything else is refused).
bool fault_possible_at(FaultKind kind, Site site);
// The sites that release a handle: destroy_context, free_buffer, unload_program, destroy_queue,
// destroy_event, destroy_executable.
bool is_release_site(Site site);

// One fault the injector really told. `call_index` counts every non-const backend call the injector saw,
// from 0; `site_ordinal` counts calls of the same site, from 1 ("the 7th free_buffer").
struct InjectedFault {
  std::uint64_t call_index = 0;
  Site site = Site::Submit;
  std::uint64_t site_ordinal = 0;
  FaultKind kind = FaultKind::SubmitRejected;
  std::uint64_t parameter = 0;

  friend bool operator==(const InjectedFault&, const InjectedFault&) = default;
};

// "call 17: free_buffer #3 release_indeterminate (parameter 0)": one line for reports and trace printers.
std::string describe(const InjectedFault& fault);

std::string_view to_string(Site site);
std::string_view to_string(FaultKind kind);
std::string_view to_string(FaultFamily family);
std::optional<Site> site_from_string(std::string_view name);
std::optional<FaultKind> fault_kind_from_string(std::string_view name);
std::optional<FaultFamily> fault_family_from_string(std::string_view name);

}  // namespace quiesce::faults
