// Names of sites, fault kinds and families: the words of plan files, traces and reports.
#include "quiesce/faults/fault.h"

#include <array>
#include <cassert>

namespace quiesce::faults {
namespace {

constexpr std::array<std::string_view, kSiteCount> kSiteNames = {
    "device_info",   "create_context", "destroy_context", "discard_context",    "allocate_buffer",
    "buffer_info",   "write_buffer",   "read_buffer",     "free_buffer",        "load_program",
    "unload_program", "create_queue",  "destroy_queue",   "queue_state",        "submit",
    "synchronize",   "poll_event",     "wait_event",      "cancel_event",       "destroy_event",
    "begin_capture", "capture",        "end_capture",     "destroy_executable", "memory_usage",
    "memory_report", "install_pools",  "memory_cleanup",
};

constexpr std::array<std::string_view, kFaultKindCount> kFaultKindNames = {
    "submit_rejected",      "admission_timeout",  "submit_indeterminate", "partial_submit",
    "poll_indeterminate",   "wait_indeterminate", "delayed_completion",   "async_launch_failure",
    "release_rejected",     "release_indeterminate", "allocation_failure", "program_load_failure",
    "partial_write",        "partial_read",       "cancel_lost",          "device_lost",
};

constexpr std::array<std::string_view, kFaultFamilyCount> kFamilyNames = {
    "submit", "event", "release", "resource", "transfer", "cancel", "device_loss",
};

constexpr std::array<FaultFamily, kFaultKindCount> kFamilyOfKind = {
    FaultFamily::Submit,   FaultFamily::Submit,   FaultFamily::Submit,   FaultFamily::Submit,
    FaultFamily::Event,    FaultFamily::Event,    FaultFamily::Event,    FaultFamily::Event,
    FaultFamily::Release,  FaultFamily::Release,  FaultFamily::Resource, FaultFamily::Resource,
    FaultFamily::Transfer, FaultFamily::Transfer, FaultFamily::Cancel,   FaultFamily::DeviceLoss,
};

template <class Enum, std::size_t N>
std::optional<Enum> find_name(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t index = 0; index < N; ++index) {
    if (names[index] == name) return static_cast<Enum>(index);
  }
  return std::nullopt;
}

template <std::size_t N, class Enum>
std::string_view name_of(const std::array<std::string_view, N>& names, Enum value) {
  const auto index = static_cast<std::size_t>(value);
  assert(index < N);
  return index < N ? names[index] : std::string_view("unknown");
}

}  // namespace

FaultFamily family_of(FaultKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  assert(index < kFaultKindCount);
  return kFamilyOfKind[index];
}

bool is_release_site(Site site) {
  switch (site) {
    case Site::DestroyContext:
    case Site::FreeBuffer:
    case Site::UnloadProgram:
    case Site::DestroyQueue:
    case Site::DestroyEvent:
    case Site::DestroyExecutable: return true;
    default: return false;
  }
}

bool fault_possible_at(FaultKind kind, Site site) {
  switch (kind) {
    case FaultKind::SubmitRejected:
    case FaultKind::AdmissionTimeout:
    case FaultKind::SubmitIndeterminate:
    case FaultKind::PartialSubmit: return site == Site::Submit;
    case FaultKind::PollIndeterminate:
    case FaultKind::DelayedCompletion: return site == Site::PollEvent;
    case FaultKind::WaitIndeterminate: return site == Site::WaitEvent;
    case FaultKind::AsyncLaunchFailure: return site == Site::PollEvent || site == Site::WaitEvent;
    case FaultKind::ReleaseRejected:
    case FaultKind::ReleaseIndeterminate: return is_release_site(site);
    case FaultKind::AllocationFailure: return site == Site::AllocateBuffer;
    case FaultKind::ProgramLoadFailure: return site == Site::LoadProgram;
    case FaultKind::PartialWrite: return site == Site::WriteBuffer;
    case FaultKind::PartialRead: return site == Site::ReadBuffer;
    case FaultKind::CancelLost: return site == Site::CancelEvent;
    case FaultKind::DeviceLost:
      return site == Site::Submit || site == Site::PollEvent || site == Site::WaitEvent ||
             site == Site::Synchronize;
  }
  return false;
}

std::string describe(const InjectedFault& fault) {
  return "call " + std::to_string(fault.call_index) + ": " + std::string(to_string(fault.site)) + " #" +
         std::to_string(fault.site_ordinal) + " " + std::string(to_string(fault.kind)) + " (parameter " +
         std::to_string(fault.parameter) + ")";
}

std::string_view to_string(Site site) { return name_of(kSiteNames, site); }
std::string_view to_string(FaultKind kind) { return name_of(kFaultKindNames, kind); }
std::string_view to_string(FaultFamily family) { return name_of(kFamilyNames, family); }

std::optional<Site> site_from_string(std::string_view name) { return find_name<Site>(kSiteNames, name); }
std::optional<FaultKind> fault_kind_from_string(std::string_view name) {
  return find_name<FaultKind>(kFaultKindNames, name);
}
std::optional<FaultFamily> fault_family_from_string(std::string_view name) {
  return find_name<FaultFamily>(kFamilyNames, name);
}

}  // namespace quiesce::faults
