// Names of the simulator's native codes and its error report.
#include "quiesce/sim/codes.h"

namespace quiesce::sim {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::Success: return "Success";
    case Code::InvalidValue: return "InvalidValue";
    case Code::OutOfMemory: return "OutOfMemory";
    case Code::NoBinaryForGpu: return "NoBinaryForGpu";
    case Code::InvalidHandle: return "InvalidHandle";
    case Code::NotFound: return "NotFound";
    case Code::NotReady: return "NotReady";
    case Code::IllegalAddress: return "IllegalAddress";
    case Code::NotSupported: return "NotSupported";
    case Code::StreamCaptureUnsupported: return "StreamCaptureUnsupported";
    case Code::StreamCaptureInvalidated: return "StreamCaptureInvalidated";
    case Code::Timeout: return "Timeout";
    case Code::ResourceBusy: return "ResourceBusy";
    case Code::QueueFull: return "QueueFull";
    case Code::PoolsInUse: return "PoolsInUse";
    case Code::ResidentLimit: return "ResidentLimit";
    case Code::CancelLost: return "CancelLost";
    case Code::CaptureActive: return "CaptureActive";
    case Code::QueuesExhausted: return "QueuesExhausted";
  }
  return "UnknownCode";
}

std::string describe(const Error& error) {
  std::string report = quiesce::describe_error(error);
  if (error.domain == NativeDomain::Simulator) {
    report += " [sim code ";
    report += std::to_string(error.native_code);
    report += " ";
    report += code_name(static_cast<Code>(error.native_code));
    report += "]";
  }
  return report;
}

}  // namespace quiesce::sim
