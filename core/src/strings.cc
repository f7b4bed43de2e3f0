// Names of the contract's enumerations, the readable error report, and text made safe to print.
#include <string>

#include "quiesce/core/command.h"
#include "quiesce/core/outcome.h"
#include "quiesce/core/printable.h"
#include "quiesce/core/result.h"

namespace quiesce {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Unsupported: return "Unsupported";
    case ErrorKind::InvalidArgument: return "InvalidArgument";
    case ErrorKind::PermissionDenied: return "PermissionDenied";
    case ErrorKind::Incompatible: return "Incompatible";
    case ErrorKind::OutOfMemory: return "OutOfMemory";
    case ErrorKind::Busy: return "Busy";
    case ErrorKind::Timeout: return "Timeout";
    case ErrorKind::DeviceLost: return "DeviceLost";
    case ErrorKind::Internal: return "Internal";
  }
  return "UnknownErrorKind";
}

std::string_view to_string(NativeDomain domain) {
  switch (domain) {
    case NativeDomain::None: return "none";
    case NativeDomain::Simulator: return "sim";
    case NativeDomain::Cuda: return "cuda";
    case NativeDomain::Core: return "core";
  }
  return "unknown";
}

std::string describe_error(const Error& error) {
  std::string report(to_string(error.kind));
  report += " (";
  report += to_string(error.domain);
  report += " code ";
  report += std::to_string(error.native_code);
  report += error.injected ? ", injected" : ", real";
  report += error.retryable ? ", retryable" : ", not retryable";
  report += ")";
  if (!error.what.empty()) {
    report += ": ";
    report += error.what;
  }
  return report;
}

std::string_view to_string(CommandKind kind) {
  switch (kind) {
    case CommandKind::Launch: return "launch";
    case CommandKind::Copy: return "copy";
    case CommandKind::Upload: return "upload";
    case CommandKind::Zero: return "zero";
    case CommandKind::Replay: return "replay";
    case CommandKind::Wait: return "wait";
  }
  return "unknown";
}

std::string_view to_string(ReleaseStatus status) {
  switch (status) {
    case ReleaseStatus::Released: return "released";
    case ReleaseStatus::Rejected: return "rejected";
    case ReleaseStatus::Indeterminate: return "indeterminate";
  }
  return "unknown";
}

std::string_view to_string(SubmitStatus status) {
  switch (status) {
    case SubmitStatus::Submitted: return "submitted";
    case SubmitStatus::Rejected: return "rejected";
    case SubmitStatus::Indeterminate: return "indeterminate";
  }
  return "unknown";
}

std::string_view to_string(EventState state) {
  switch (state) {
    case EventState::Pending: return "pending";
    case EventState::Complete: return "complete";
    case EventState::FailedButQuiescent: return "failed-but-quiescent";
    case EventState::Cancelled: return "cancelled";
    case EventState::Indeterminate: return "indeterminate";
  }
  return "unknown";
}

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string shown;
  shown.reserve(text.size());
  auto escape = [&shown](unsigned char byte) {
    shown += "\\x";
    shown += kHex[byte >> 4U];
    shown += kHex[byte & 0xFU];
  };
  for (std::size_t index = 0; index < text.size(); ++index) {
    const auto byte = static_cast<unsigned char>(text[index]);
    const bool c1 = byte == 0xC2 && index + 1 < text.size() && static_cast<unsigned char>(text[index + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[index + 1]) <= 0x9F;
    if (byte < 0x20 || byte == 0x7F) {
      escape(byte);
    } else if (c1) {
      escape(byte);
      escape(static_cast<unsigned char>(text[++index]));
    } else {
      shown += static_cast<char>(byte);
    }
  }
  return shown;
}

}  // namespace quiesce
