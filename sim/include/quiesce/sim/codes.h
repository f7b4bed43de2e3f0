// The simulator's native error codes and its error report.
//
// Where CUDA has an analogue the simulator uses the same CUresult number, so a trace from the simulator and
// one from the real device name a failure with the same code (700 is CUDA_ERROR_ILLEGAL_ADDRESS on both).
// Codes without a CUDA analogue start at 10000. Every Error the simulator returns carries
// NativeDomain::Simulator and one of these codes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quiesce/core/result.h"

namespace quiesce::sim {

enum class Code : std::int32_t {
  Success = 0,
  InvalidValue = 1,                 // CUDA_ERROR_INVALID_VALUE: a bad argument or launch configuration
  OutOfMemory = 2,                  // CUDA_ERROR_OUT_OF_MEMORY
  NoBinaryForGpu = 209,             // CUDA_ERROR_NO_BINARY_FOR_GPU: an artifact format the simulator cannot run
  InvalidHandle = 400,              // CUDA_ERROR_INVALID_HANDLE: unknown, consumed or old-epoch handle
  NotFound = 500,                   // CUDA_ERROR_NOT_FOUND: no builtin kernel of that name
  NotReady = 600,                   // CUDA_ERROR_NOT_READY
  IllegalAddress = 700,             // CUDA_ERROR_ILLEGAL_ADDRESS: the sticky fault
  NotSupported = 801,               // CUDA_ERROR_NOT_SUPPORTED: a capability switched off
  StreamCaptureUnsupported = 900,   // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
  StreamCaptureInvalidated = 901,   // CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
  Timeout = 909,                    // CUDA_ERROR_TIMEOUT
  ResourceBusy = 10001,             // a release of something still in use (live children, pending work, pins)
  QueueFull = 10002,                // admission timed out on a queue at its depth limit
  PoolsInUse = 10003,               // install_pools while something is live
  ResidentLimit = 10004,            // a program would retain more than its resident_bytes
  CancelLost = 10005,               // cancellation lost the race: a command of the batch already started
  CaptureActive = 10006,            // the call is not allowed on a capturing queue
  QueuesExhausted = 10007,          // queues_max queues already exist
};

std::string_view code_name(Code code);

constexpr Error sim_error(ErrorKind kind, Code code, std::string_view what, bool retryable = false) {
  return Error{kind, NativeDomain::Simulator, static_cast<std::int32_t>(code), false, retryable, what};
}

// The core report plus the name of the simulator code ("sim code 700 IllegalAddress"). Device::describe_error
// answers this; it is not named describe_error so that it never competes with quiesce::describe_error by ADL.
std::string describe(const Error& error);

}  // namespace quiesce::sim
