// Descriptions, device metadata, byte sources and sinks, and artifacts: the plain values of the contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "quiesce/core/handles.h"
#include "quiesce/core/result.h"

namespace quiesce {

// ---- buffer usage and access modes (Wire ABI 4.4 of the Accelerator seed) ----

enum class BufferUsage : std::uint32_t {
  None = 0,
  ProgramInput = 1U << 0,     // bindable with Access::Read
  ProgramOutput = 1U << 1,    // bindable with Access::Write
  MutableState = 1U << 2,     // bindable with Read, Write and ReadWrite
  TransferSource = 1U << 3,   // source of copy commands and read_buffer
  TransferTarget = 1U << 4,   // target of copy, upload and zero commands and write_buffer
};

constexpr BufferUsage operator|(BufferUsage a, BufferUsage b) {
  return static_cast<BufferUsage>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr bool has_usage(BufferUsage set, BufferUsage flag) {
  return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(flag)) != 0;
}
constexpr BufferUsage kAllBufferUsage = BufferUsage::ProgramInput | BufferUsage::ProgramOutput |
                                        BufferUsage::MutableState | BufferUsage::TransferSource |
                                        BufferUsage::TransferTarget;

enum class Access : std::uint8_t { Read, Write, ReadWrite };

// Read needs ProgramInput or MutableState; Write needs ProgramOutput or MutableState; ReadWrite needs
// MutableState. Hosts check this before calling a backend (R16).
constexpr bool access_allowed(Access access, BufferUsage usage) {
  switch (access) {
    case Access::Read:
      return has_usage(usage, BufferUsage::ProgramInput) || has_usage(usage, BufferUsage::MutableState);
    case Access::Write:
      return has_usage(usage, BufferUsage::ProgramOutput) || has_usage(usage, BufferUsage::MutableState);
    case Access::ReadWrite:
      return has_usage(usage, BufferUsage::MutableState);
  }
  return false;
}
constexpr bool access_reads(Access access) { return access != Access::Write; }
constexpr bool access_writes(Access access) { return access != Access::Read; }

// ---- descriptions ----

struct ContextDesc {
  std::uint32_t flags = 0;  // every nonempty flag set is Unsupported (Accelerator seed)
};

struct QueueDesc {
  std::uint32_t flags = 0;     // every nonempty flag set is Unsupported
  std::int32_t priority = 0;   // a hint, never a correctness mechanism
};

enum class AllocationMode : std::uint8_t {
  Direct,         // cuMemAlloc-like: free may implicitly synchronize, never rely on it
  StreamOrdered,  // cuMemAllocAsync-like on `queue`: reuse only by work ordered after the free (R12)
};

struct BufferDesc {
  std::uint64_t bytes = 0;
  BufferUsage usage = BufferUsage::None;
  AllocationMode mode = AllocationMode::Direct;
  QueueRef queue = {};  // the ordering queue when mode is StreamOrdered

  friend bool operator==(const BufferDesc&, const BufferDesc&) = default;
};

// What the backend really allocated for a request (BufferDescriptor / AllocatedBuffer in the seeds).
struct BufferInfo {
  std::uint64_t bytes = 0;           // requested size
  std::uint64_t backing_bytes = 0;   // actual backing, after alignment and pool rounding
  std::uint64_t alignment = 0;
  BufferUsage usage = BufferUsage::None;
  AllocationMode mode = AllocationMode::Direct;
};

// ---- device metadata ----

enum class Capability : std::uint32_t {
  None = 0,
  EventCancellation = 1U << 0,
  ReusableExecutables = 1U << 1,
  Profiling = 1U << 2,
  MemoryPools = 1U << 3,
  StreamOrderedAllocation = 1U << 4,
};
constexpr Capability operator|(Capability a, Capability b) {
  return static_cast<Capability>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr bool has_capability(Capability set, Capability flag) {
  return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(flag)) != 0;
}

struct DeviceLimits {
  std::uint64_t memory_bytes = 0;
  std::uint64_t buffer_alignment = 0;
  std::uint32_t queue_depth_max = 0;        // batches in flight per queue before admission waits
  std::uint32_t queues_max = 0;
  std::uint32_t batch_commands_max = 0;
  std::uint32_t bindings_max = 0;
  std::uint32_t parameter_bytes_max = 0;
  std::uint32_t launch_threads_max = 0;     // per block
};

struct DeviceInfo {
  std::string_view name = {};        // static text owned by the backend
  std::uint32_t vendor_id = 0;
  std::uint32_t compute_major = 0;
  std::uint32_t compute_minor = 0;
  Capability capabilities = Capability::None;
  DeviceLimits limits = {};
};

// ---- segmented byte sources and sinks (no coalescing copies) ----

struct ByteSource {
  std::span<const std::span<const std::byte>> segments;

  std::uint64_t size() const {
    std::uint64_t total = 0;
    for (const auto& segment : segments) total += segment.size();
    return total;
  }
};

struct ByteSink {
  std::span<const std::span<std::byte>> segments;

  std::uint64_t size() const {
    std::uint64_t total = 0;
    for (const auto& segment : segments) total += segment.size();
    return total;
  }
};

// ---- programs ----

enum class ArtifactFormat : std::uint8_t {
  Builtin,  // a kernel of the backend's embedded library, by name (fill, copy, saxpy, ...)
  Cubin,
  Fatbin,
  Ptx,      // NUL-terminated text
};

// The borrowed input of load_program. A trace records the kernel name and a content hash of the payload,
// never the payload itself.
struct ArtifactRef {
  std::string_view kernel_name = {};
  ArtifactFormat format = ArtifactFormat::Builtin;
  ByteSource payload = {};
  std::uint64_t resident_bytes = 0;  // the program may retain at most this much storage (R17)
};

struct LaunchDims {
  std::uint32_t grid_x = 1, grid_y = 1, grid_z = 1;
  std::uint32_t block_x = 1, block_y = 1, block_z = 1;

  std::uint64_t threads_per_block() const {
    return std::uint64_t{block_x} * block_y * block_z;
  }
  friend bool operator==(const LaunchDims&, const LaunchDims&) = default;
};

// ---- memory usage and pools (ComputeServer) ----

struct MemoryUsage {
  std::uint64_t bytes_in_use = 0;
  std::uint64_t bytes_reserved = 0;
  std::uint64_t allocations = 0;
  std::uint64_t bytes_in_use_max = 0;  // high-water mark since the context was created
};

struct PoolReport {
  std::uint64_t block_bytes = 0;  // the size class; 0 for the pool of large direct allocations
  std::uint64_t blocks_reserved = 0;
  std::uint64_t blocks_in_use = 0;
  std::uint64_t bytes_reserved = 0;
  std::uint64_t bytes_in_use = 0;
  std::uint64_t bytes_in_use_max = 0;
};

// Per-pool report in allocation-routing order (ComputeServer memory_report).
struct MemoryReport {
  std::vector<PoolReport> pools;
};

// A pool layout: the block size classes, ascending. Installed only when nothing is live (R18).
struct PoolLayout {
  std::vector<std::uint64_t> block_bytes;
};

struct QueueState {
  std::uint32_t batches_in_flight = 0;
  bool capturing = false;
  bool lost = false;
};

}  // namespace quiesce
