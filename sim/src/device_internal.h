// Shared helpers of the sim::Device implementation files: call tags for the digest, the error constants
// and saturating arithmetic. Not a public header.
#pragma once

#include <cstdint>

#include "quiesce/core/prng.h"
#include "quiesce/sim/codes.h"

namespace quiesce::sim::internal {

// What the digest records for each public call.
enum Call : std::uint32_t {
  kCallDeviceInfo = 1,
  kCallCreateContext,
  kCallDestroyContext,
  kCallDiscardContext,
  kCallAllocateBuffer,
  kCallBufferInfo,
  kCallWriteBuffer,
  kCallReadBuffer,
  kCallFreeBuffer,
  kCallLoadProgram,
  kCallUnloadProgram,
  kCallCreateQueue,
  kCallDestroyQueue,
  kCallQueueState,
  kCallSubmit,
  kCallSynchronize,
  kCallPollEvent,
  kCallWaitEvent,
  kCallCancelEvent,
  kCallDestroyEvent,
  kCallBeginCapture,
  kCallCapture,
  kCallEndCapture,
  kCallDestroyExecutable,
  kCallMemoryUsage,
  kCallMemoryReport,
  kCallInstallPools,
  kCallMemoryCleanup,
  kCallNoteRejected,
  kCallCommandStart,
  kCallCommandFinish,
};

inline constexpr Error kInvalidHandle =
    sim_error(ErrorKind::InvalidArgument, Code::InvalidHandle,
              "the handle does not name a live object of this device (consumed, released, or of an older epoch)");
inline constexpr Error kDeviceLost =
    sim_error(ErrorKind::DeviceLost, Code::IllegalAddress,
              "the context hit a sticky fault (illegal address); nothing on it will succeed again");
inline constexpr Error kCaptureUnsupported =
    sim_error(ErrorKind::InvalidArgument, Code::StreamCaptureUnsupported,
              "the operation is not permitted on a capturing queue; the capture is now invalidated");
inline constexpr Error kQueueCapturing =
    sim_error(ErrorKind::Busy, Code::CaptureActive, "the queue is capturing: submit is not allowed until end_capture");
inline constexpr Error kChildrenLive =
    sim_error(ErrorKind::Busy, Code::ResourceBusy, "the object still has live children or work in flight", true);

inline std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// ceil(bytes * 1000 / bytes_per_us): nanoseconds to move `bytes`, at least 1 for a nonzero amount.
inline std::uint64_t transfer_ns(std::uint64_t bytes, std::uint64_t bytes_per_us) {
  if (bytes == 0) return 0;
  if (bytes <= UINT64_MAX / 1000U) {
    // The usual case, in 64 bits: one division instead of a call to the 128-bit one (__udivti3). The
    // quotient is at most bytes * 1000, so it needs no cap.
    const std::uint64_t scaled_64 = bytes * 1000U;
    return scaled_64 / bytes_per_us + (scaled_64 % bytes_per_us != 0 ? 1 : 0);
  }
  const Uint128 scaled = static_cast<Uint128>(bytes) * 1000U;
  const Uint128 cost = (scaled + bytes_per_us - 1) / bytes_per_us;
  return cost > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(cost);
}

}  // namespace quiesce::sim::internal
