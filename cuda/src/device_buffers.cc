// cuda::Device: buffers (cuMemAlloc, stream-ordered cuMemAllocAsync), host transfers, programs and memory.
#include <cassert>
#include <vector>

#include "device_internal.h"
#include "quiesce/cuda/kernels.h"

namespace quiesce::cuda {

using detail::BufferSlot;
using detail::ContextSlot;
using detail::ProgramSlot;
using detail::QueueSlot;

namespace {

// GLOBAL-mode stream capture forbids allocation, frees and synchronous copies anywhere in the process while
// it lasts; the Device refuses them up front instead of letting the driver invalidate the capture (R13).
Error capture_window_error() {
  return make_error(ErrorKind::Busy, "a queue of this context is capturing: no allocation, free, transfer or load until end_capture", true);
}

}  // namespace

Result<Buffer> Device::allocate_buffer(const Context& context, const AllocationPermit& permit) {
  const BufferDesc& desc = permit.desc();
  ContextSlot* owner = live_context(context.id(), context.epoch());
  if (owner == nullptr) return make_error(ErrorKind::InvalidArgument, "the context handle does not name an open context");
  if (desc.bytes == 0) return make_error(ErrorKind::InvalidArgument, "a buffer of zero bytes was requested");
  if (owner->capturing_queues != 0) return capture_window_error();
  QUIESCE_TRY(enter(context.id()));

  BufferSlot slot;
  slot.context_id = context.id();
  slot.info = BufferInfo{desc.bytes, desc.bytes, info_.limits.buffer_alignment, desc.usage, desc.mode};
  CUresult allocated = CUDA_SUCCESS;
  if (desc.mode == AllocationMode::StreamOrdered) {
    if (!has_capability(info_.capabilities, Capability::StreamOrderedAllocation)) {
      return make_error(ErrorKind::Unsupported, "this GPU has no memory pools, so no stream-ordered allocation");
    }
    QueueSlot* queue = resolve(queues_, desc.queue.id, desc.queue.epoch);
    if (queue == nullptr || queue->context_id != context.id()) {
      return make_error(ErrorKind::InvalidArgument, "a stream-ordered buffer needs a live queue of the same context");
    }
    if (queue->capturing) {
      return make_error(ErrorKind::Busy, "the ordering queue is capturing; allocation would add a memory node", true);
    }
    slot.queue_id = desc.queue.id;
    slot.stream = queue->stream;
    allocated = api().cuMemAllocAsync(&slot.pointer, desc.bytes, queue->stream);
  } else {
    allocated = api().cuMemAlloc(&slot.pointer, desc.bytes);
  }
  if (allocated != CUDA_SUCCESS) return fail(*owner, allocated, "device memory allocation failed");
  if (desc.mode == AllocationMode::Direct) {
    CUdeviceptr base = 0;
    std::size_t range_bytes = 0;
    if (api().cuMemGetAddressRange(&base, &range_bytes, slot.pointer) == CUDA_SUCCESS && base == slot.pointer) {
      slot.info.backing_bytes = std::max<std::uint64_t>(range_bytes, desc.bytes);
    }
  }
  const std::uint64_t backing = slot.info.backing_bytes;
  const CUdeviceptr pointer = slot.pointer;
  CUstream stream = slot.stream;
  const std::optional<std::uint64_t> id = buffers_.insert(std::move(slot));
  if (!id) {
    (void)(stream != nullptr ? api().cuMemFreeAsync(pointer, stream) : api().cuMemFree(pointer));
    return make_error(ErrorKind::OutOfMemory, "the CUDA backend's buffer table is full");
  }
  owner->children++;
  owner->usage.allocations++;
  owner->usage.bytes_in_use += desc.bytes;
  owner->usage.bytes_reserved += backing;
  owner->usage.bytes_in_use_max = std::max(owner->usage.bytes_in_use_max, owner->usage.bytes_in_use);
  return Buffer(*id, context.epoch());
}

Result<BufferInfo> Device::buffer_info(const Buffer& buffer) {
  const BufferSlot* slot = resolve(buffers_, buffer.id(), buffer.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the buffer handle does not name a live buffer");
  return slot->info;
}

namespace {

// Synchronous transfers. A stream-ordered buffer is only valid in its stream's order, so its transfers go
// through that stream and wait for it; a direct buffer uses the synchronous copies.
template <class Segment, class CopySync, class CopyAsync>
CUresult transfer_segments(std::span<const Segment> segments, CUdeviceptr address, CUstream stream,
                           const DriverFunctions& f, CopySync copy_sync, CopyAsync copy_async) {
  for (const Segment& segment : segments) {
    if (segment.empty()) continue;
    const CUresult copied = stream != nullptr ? copy_async(address, segment, stream) : copy_sync(address, segment);
    if (copied != CUDA_SUCCESS) return copied;
    address += segment.size();
  }
  return stream != nullptr ? f.cuStreamSynchronize(stream) : CUDA_SUCCESS;
}

}  // namespace

Status Device::write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source) {
  BufferSlot* slot = resolve(buffers_, buffer.id(), buffer.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the buffer handle does not name a live buffer");
  if (!has_usage(slot->info.usage, BufferUsage::TransferTarget)) {
    return make_error(ErrorKind::PermissionDenied, "write_buffer needs a buffer with TransferTarget usage");
  }
  if (!range_within(offset, source.size(), slot->info.bytes)) {
    return make_error(ErrorKind::InvalidArgument, "the write reaches past the end of the buffer");
  }
  auto context = enter(slot->context_id);
  if (!context.ok()) return context.error();
  if ((*context)->capturing_queues != 0) return capture_window_error();
  if (slot->stream != nullptr) {
    const QueueSlot* queue = queues_.find(slot->queue_id);
    if (queue != nullptr && queue->capturing) {
      return make_error(ErrorKind::Busy, "the buffer's ordering queue is capturing; a transfer would join the graph", true);
    }
  }
  const DriverFunctions& f = api();
  const CUresult copied = transfer_segments<std::span<const std::byte>>(
      source.segments, slot->pointer + offset, slot->stream, f,
      [&f](CUdeviceptr to, std::span<const std::byte> from) { return f.cuMemcpyHtoD(to, from.data(), from.size()); },
      [&f](CUdeviceptr to, std::span<const std::byte> from, CUstream stream) {
        return f.cuMemcpyHtoDAsync(to, from.data(), from.size(), stream);
      });
  if (copied != CUDA_SUCCESS) return fail(**context, copied, "writing host bytes into the buffer failed");
  return ok_status();
}

Status Device::read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink) {
  BufferSlot* slot = resolve(buffers_, buffer.id(), buffer.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the buffer handle does not name a live buffer");
  if (!has_usage(slot->info.usage, BufferUsage::TransferSource)) {
    return make_error(ErrorKind::PermissionDenied, "read_buffer needs a buffer with TransferSource usage");
  }
  if (!range_within(offset, sink.size(), slot->info.bytes)) {
    return make_error(ErrorKind::InvalidArgument, "the read reaches past the end of the buffer");
  }
  auto context = enter(slot->context_id);
  if (!context.ok()) return context.error();
  if ((*context)->capturing_queues != 0) return capture_window_error();
  if (slot->stream != nullptr) {
    const QueueSlot* queue = queues_.find(slot->queue_id);
    if (queue != nullptr && queue->capturing) {
      return make_error(ErrorKind::Busy, "the buffer's ordering queue is capturing; a transfer would join the graph", true);
    }
  }
  const DriverFunctions& f = api();
  const CUresult copied = transfer_segments<std::span<std::byte>>(
      sink.segments, slot->pointer + offset, slot->stream, f,
      [&f](CUdeviceptr from, std::span<std::byte> to) { return f.cuMemcpyDtoH(to.data(), from, to.size()); },
      [&f](CUdeviceptr from, std::span<std::byte> to, CUstream stream) {
        return f.cuMemcpyDtoHAsync(to.data(), from, to.size(), stream);
      });
  if (copied != CUDA_SUCCESS) return fail(**context, copied, "reading the buffer into host memory failed");
  return ok_status();
}

ReleaseResult<Buffer> Device::free_buffer(Buffer&& buffer_in) {
  Buffer buffer = std::move(buffer_in);  // consumed on every path; a rejection hands it back
  BufferSlot* slot = resolve(buffers_, buffer.id(), buffer.epoch());
  if (slot == nullptr) {
    return ReleaseResult<Buffer>::rejected(std::move(buffer),
                                           make_error(ErrorKind::InvalidArgument, "the buffer handle does not name a live buffer"));
  }
  if (slot->pins != 0) {
    return ReleaseResult<Buffer>::rejected(
        std::move(buffer), make_error(ErrorKind::Busy, "the buffer is pinned by a captured executable that is still alive", true));
  }
  ContextSlot* context = &contexts_.get(slot->context_id);
  assert(context != nullptr);
  if (context->lost) {
    // A lost context cannot prove the device is done with the memory: the charge moves to quarantine.
    const Error why = context->lost_error;
    const std::uint64_t context_id = slot->context_id;
    buffers_.erase(buffer.id());
    release_child(context_id);
    return ReleaseResult<Buffer>::indeterminate(why);
  }
  if (slot->stream != nullptr) {
    const QueueSlot* queue = queues_.find(slot->queue_id);
    if (queue == nullptr) {
      return ReleaseResult<Buffer>::rejected(
          std::move(buffer), make_error(ErrorKind::Busy, "the stream-ordered buffer's queue was destroyed; free it after discard", false));
    }
    if (queue->capturing) {
      return ReleaseResult<Buffer>::rejected(
          std::move(buffer), make_error(ErrorKind::Busy, "the ordering queue is capturing; a free would add a memory node", true));
    }
  }
  if (context->capturing_queues != 0) return ReleaseResult<Buffer>::rejected(std::move(buffer), capture_window_error());
  auto entered = enter(slot->context_id);
  if (!entered.ok()) return ReleaseResult<Buffer>::rejected(std::move(buffer), entered.error());
  const CUresult freed = slot->stream != nullptr ? api().cuMemFreeAsync(slot->pointer, slot->stream)
                                                 : api().cuMemFree(slot->pointer);
  const std::uint64_t bytes = slot->info.bytes;
  const std::uint64_t backing = slot->info.backing_bytes;
  const std::uint64_t context_id = slot->context_id;
  if (freed != CUDA_SUCCESS) {
    const Error why = fail(*context, freed, "freeing device memory failed");
    if (freed == CUDA_ERROR_INVALID_VALUE) return ReleaseResult<Buffer>::rejected(std::move(buffer), why);
    buffers_.erase(buffer.id());
    release_child(context_id);
    return ReleaseResult<Buffer>::indeterminate(why);
  }
  buffers_.erase(buffer.id());
  release_child(context_id);
  context->usage.allocations--;
  context->usage.bytes_in_use -= bytes;
  context->usage.bytes_reserved -= backing;
  return ReleaseResult<Buffer>::released();
}

// ---- programs ----

namespace {

// One contiguous copy of a segmented artifact; PTX text gets its terminating NUL.
std::vector<std::byte> flatten_artifact(const ArtifactRef& artifact) {
  std::vector<std::byte> image;
  image.reserve(artifact.payload.size() + 1);
  for (const auto& segment : artifact.payload.segments) image.insert(image.end(), segment.begin(), segment.end());
  if (artifact.format == ArtifactFormat::Ptx && (image.empty() || image.back() != std::byte{0})) image.push_back(std::byte{0});
  return image;
}

}  // namespace

Result<Program> Device::load_program(const Context& context, const ArtifactRef& artifact) {
  ContextSlot* owner = live_context(context.id(), context.epoch());
  if (owner == nullptr) return make_error(ErrorKind::InvalidArgument, "the context handle does not name an open context");
  if (artifact.kernel_name.empty()) return make_error(ErrorKind::InvalidArgument, "the artifact names no kernel");
  if (owner->capturing_queues != 0) return capture_window_error();

  ProgramSlot slot;
  slot.context_id = context.id();
  std::vector<std::byte> image;
  std::string symbol;
  if (artifact.format == ArtifactFormat::Builtin) {
    const EmbeddedImage embedded = embedded_kernels();
    if (!embedded.present()) return make_error(ErrorKind::Unsupported, "this build has no embedded builtin kernels (no nvcc)");
    const std::optional<BuiltinKernel> kernel = find_builtin_kernel(artifact.kernel_name);
    if (!kernel) return make_error(ErrorKind::InvalidArgument, "the builtin kernel library has no kernel of that name");
    slot.builtin = &builtin_kernels()[static_cast<std::size_t>(builtin_kernel_index(artifact.kernel_name))];
    symbol = std::string(kernel->symbol);
    image.assign(embedded.fatbin.begin(), embedded.fatbin.end());
  } else {
    if (artifact.payload.size() == 0) return make_error(ErrorKind::InvalidArgument, "the artifact's payload is empty");
    symbol = std::string(artifact.kernel_name);
    image = flatten_artifact(artifact);
  }
  // What the program retains on the device: its loaded image. Checked before anything is loaded (R17).
  slot.resident_bytes = image.size();
  if (artifact.resident_bytes != 0 && slot.resident_bytes > artifact.resident_bytes) {
    return make_error(ErrorKind::OutOfMemory, "the program's image is larger than its resident_bytes bound");
  }
  QUIESCE_TRY(enter(context.id()));
  const CUresult loaded = api().cuModuleLoadData(&slot.module, image.data());
  if (loaded != CUDA_SUCCESS) return fail(*owner, loaded, "cuModuleLoadData refused the artifact");
  const CUresult found = api().cuModuleGetFunction(&slot.function, slot.module, symbol.c_str());
  if (found != CUDA_SUCCESS) {
    (void)api().cuModuleUnload(slot.module);
    return fail(*owner, found, "the module has no kernel of that name");
  }
  // A user kernel's whole parameter block: the end of its last parameter (cuFuncGetParamInfo, CUDA 12.4+,
  // which answers INVALID_VALUE past the last one). A builtin's ABI is known, so it is not probed.
  for (std::size_t index = 0; slot.builtin == nullptr && index < 64; ++index) {
    std::size_t offset = 0;
    std::size_t size = 0;
    if (api().cuFuncGetParamInfo(slot.function, index, &offset, &size) != CUDA_SUCCESS) {
      slot.parameter_bytes_known = true;
      break;
    }
    slot.parameter_bytes = std::max<std::uint64_t>(slot.parameter_bytes, offset + size);
  }
  const std::optional<std::uint64_t> id = programs_.insert(std::move(slot));
  if (!id) return make_error(ErrorKind::OutOfMemory, "the CUDA backend's program table is full");
  owner->children++;
  return Program(*id, context.epoch());
}

ReleaseResult<Program> Device::unload_program(Program&& program_in) {
  Program program = std::move(program_in);  // consumed on every path; a rejection hands it back
  ProgramSlot* slot = resolve(programs_, program.id(), program.epoch());
  if (slot == nullptr) {
    return ReleaseResult<Program>::rejected(std::move(program),
                                            make_error(ErrorKind::InvalidArgument, "the program handle does not name a loaded program"));
  }
  ContextSlot* context = &contexts_.get(slot->context_id);
  const std::uint64_t context_id = slot->context_id;
  if (context->lost) {
    programs_.erase(program.id());
    release_child(context_id);
    return ReleaseResult<Program>::indeterminate(context->lost_error);
  }
  auto entered = enter(context_id);
  if (!entered.ok()) return ReleaseResult<Program>::rejected(std::move(program), entered.error());
  const CUresult unloaded = api().cuModuleUnload(slot->module);
  programs_.erase(program.id());
  release_child(context_id);
  if (unloaded != CUDA_SUCCESS) return ReleaseResult<Program>::indeterminate(fail(*context, unloaded, "cuModuleUnload failed"));
  return ReleaseResult<Program>::released();
}

// ---- memory ----

Result<MemoryUsage> Device::memory_usage(const Context& context) {
  const ContextSlot* slot = live_context(context.id(), context.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the context handle does not name an open context");
  if (slot->lost) return slot->lost_error;
  return slot->usage;
}

Result<MemoryReport> Device::memory_report(const Context& context) {
  const ContextSlot* slot = live_context(context.id(), context.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the context handle does not name an open context");
  if (slot->lost) return slot->lost_error;
  // One pool: the driver's allocations, which quiesce does not size-class (block_bytes 0).
  PoolReport pool;
  pool.block_bytes = 0;
  pool.bytes_reserved = slot->usage.bytes_reserved;
  pool.bytes_in_use = slot->usage.bytes_in_use;
  pool.bytes_in_use_max = slot->usage.bytes_in_use_max;
  std::uint64_t live = 0;
  const std::uint64_t context_id = context.id();
  buffers_.for_each([&](std::uint64_t, const BufferSlot& buffer) { live += buffer.context_id == context_id ? 1 : 0; });
  pool.blocks_in_use = live;
  pool.blocks_reserved = live;
  MemoryReport report;
  report.pools.push_back(pool);
  return report;
}

Status Device::install_pools(const Context& context, const PoolLayout& layout) {
  (void)layout;
  if (live_context(context.id(), context.epoch()) == nullptr) {
    return make_error(ErrorKind::InvalidArgument, "the context handle does not name an open context");
  }
  return make_error(ErrorKind::Unsupported, "the CUDA backend has no configurable memory pools (Capability::MemoryPools is absent)");
}

Status Device::memory_cleanup(const Context& context) {
  ContextSlot* slot = live_context(context.id(), context.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the context handle does not name an open context");
  QUIESCE_TRY(enter(context.id()));
  if (!has_capability(info_.capabilities, Capability::StreamOrderedAllocation)) return ok_status();
  // Give the stream-ordered pool's cached memory back to the system.
  CUmemoryPool pool = nullptr;
  CUresult result = api().cuDeviceGetDefaultMemPool(&pool, device_);
  if (result == CUDA_SUCCESS) result = api().cuMemPoolTrimTo(pool, 0);
  if (result != CUDA_SUCCESS) return fail(*slot, result, "trimming the stream-ordered memory pool failed");
  return ok_status();
}

}  // namespace quiesce::cuda
