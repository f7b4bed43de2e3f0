// cuda::Device: opening the GPU, device metadata, contexts and their epochs, the lost-context rule.
#include "quiesce/cuda/device.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdlib>
#include <string_view>

#include "quiesce/cuda/errors.h"

namespace quiesce::cuda {

using detail::ContextSlot;

std::uint64_t host_now_ns() {
  const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
}

Result<Device, DriverUnavailable> Device::open(const DeviceOptions& options, const DriverOptions& driver_options) {
  auto driver = Driver::load(driver_options);
  if (!driver.ok()) return driver.error();
  return open(std::move(driver).value(), options);
}

Result<Device, DriverUnavailable> Device::open(std::shared_ptr<const Driver> driver, const DeviceOptions& options) {
  assert(driver != nullptr);
  if (options.ordinal < 0 || options.ordinal >= driver->device_count()) {
    return DriverUnavailable{"GPU ordinal " + std::to_string(options.ordinal) + " does not exist: the driver reports " +
                             std::to_string(driver->device_count()) + " device(s)"};
  }
  CUdevice device = 0;
  const CUresult got = driver->api().cuDeviceGet(&device, options.ordinal);
  if (got != CUDA_SUCCESS) {
    return DriverUnavailable{"cuDeviceGet(" + std::to_string(options.ordinal) + ") failed with " + describe_code(got)};
  }
  return Device(std::move(driver), options, device);
}

Device::Device(std::shared_ptr<const Driver> driver, const DeviceOptions& options, CUdevice device)
    : driver_(std::move(driver)),
      options_(options),
      device_(device),
      contexts_(1024),
      buffers_(options.objects_max),
      programs_(options.objects_max),
      queues_(options.queues_max),
      events_(options.objects_max),
      executables_(options.objects_max) {
  if (const char* chosen = std::getenv("QUIESCE_CUDA_COMPLETION"); chosen != nullptr) {
    if (std::string_view(chosen) == "on-demand") options_.completion = CompletionSignal::OnDemand;
    if (std::string_view(chosen) == "per-batch") options_.completion = CompletionSignal::PerBatch;
  }
  const DriverFunctions& f = api();
  char name[256] = {};
  if (f.cuDeviceGetName(name, sizeof(name) - 1, device_) != CUDA_SUCCESS) name[0] = '\0';
  name_ = name[0] != '\0' ? std::string(name) : std::string("CUDA device ") + std::to_string(options.ordinal);
  int major = 0;
  int minor = 0;
  int threads_per_block = 0;
  int memory_pools = 0;
  std::size_t total_bytes = 0;
  (void)f.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_);
  (void)f.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_);
  (void)f.cuDeviceGetAttribute(&threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device_);
  (void)f.cuDeviceGetAttribute(&memory_pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, device_);
  (void)f.cuDeviceTotalMem(&total_bytes, device_);

  Capability capabilities = Capability::ReusableExecutables | Capability::Profiling;
  if (memory_pools != 0) capabilities = capabilities | Capability::StreamOrderedAllocation;
  info_.vendor_id = 0x10DE;
  info_.compute_major = static_cast<std::uint32_t>(major);
  info_.compute_minor = static_cast<std::uint32_t>(minor);
  info_.capabilities = capabilities;
  info_.limits.memory_bytes = total_bytes;
  info_.limits.buffer_alignment = 256;  // cuMemAlloc's documented minimum alignment
  info_.limits.queue_depth_max = options_.queue_depth_max;
  info_.limits.queues_max = options_.queues_max;
  info_.limits.batch_commands_max = options_.batch_commands_max;
  info_.limits.bindings_max = options_.bindings_max;
  info_.limits.parameter_bytes_max = options_.parameter_bytes_max;
  info_.limits.launch_threads_max = static_cast<std::uint32_t>(threads_per_block);
}

Device::~Device() {
  if (driver_ == nullptr) return;  // moved from
  std::vector<std::uint64_t> open_contexts;
  contexts_.for_each([&](std::uint64_t id, ContextSlot&) { open_contexts.push_back(id); });
  for (const std::uint64_t id : open_contexts) {
    ContextSlot* slot = contexts_.find(id);
    destroy_native_children(id, slot != nullptr && !slot->lost);
    if (slot != nullptr) (void)api().cuCtxDestroy(slot->context);
    contexts_.erase(id);
  }
}

Result<DeviceInfo> Device::device_info() {
  DeviceInfo info = info_;
  info.name = name_;
  return info;
}

std::string Device::describe_error(const Error& error) const {
  std::string text = quiesce::describe_error(error);
  if (error.domain == NativeDomain::Cuda) {
    const auto code = static_cast<CUresult>(error.native_code);
    const char* driver_text = nullptr;
    if (api().cuGetErrorString(code, &driver_text) != CUDA_SUCCESS) driver_text = nullptr;
    text += " [" + describe_code(code);
    if (driver_text != nullptr) text += ": " + std::string(driver_text);
    text += "]";
  }
  return text;
}

// ---- contexts ----

Result<Context> Device::create_context(ContextDesc desc) {
  if (desc.flags != 0) return make_error(ErrorKind::Unsupported, "context flags are not supported by the CUDA backend");
  CUcontext native = nullptr;
  const CUresult created = api().cuCtxCreate(&native, nullptr, CU_CTX_SCHED_AUTO, device_);
  if (created != CUDA_SUCCESS) return cuda_error(created, "cuCtxCreate failed");
  ContextSlot slot;
  slot.context = native;
  slot.epoch = next_epoch_++;
  // The origin of the device timeline: an event recorded and completed now, with the host time after it.
  CUevent origin = nullptr;
  CUresult result = api().cuEventCreate(&origin, CU_EVENT_DEFAULT);
  if (result == CUDA_SUCCESS) result = api().cuEventRecord(origin, nullptr);
  if (result == CUDA_SUCCESS) result = api().cuEventSynchronize(origin);
  if (result != CUDA_SUCCESS) {
    if (origin != nullptr) (void)api().cuEventDestroy(origin);
    (void)api().cuCtxDestroy(native);
    return cuda_error(result, "recording the context's timing origin failed");
  }
  slot.origin_event = origin;
  slot.origin_host_ns = host_now_ns();
  const std::uint32_t epoch = slot.epoch;
  const std::optional<std::uint64_t> id = contexts_.insert(std::move(slot));
  if (!id) {
    (void)api().cuEventDestroy(origin);
    (void)api().cuCtxDestroy(native);
    return make_error(ErrorKind::OutOfMemory, "the CUDA backend's context table is full");
  }
  return Context(*id, epoch);
}

ContextSlot* Device::live_context(std::uint64_t id, std::uint32_t epoch) {
  ContextSlot* slot = contexts_.find(id);
  if (slot == nullptr || slot->epoch != epoch) return nullptr;
  return slot;
}

Result<ContextSlot*> Device::enter(std::uint64_t context_id) {
  ContextSlot* slot = contexts_.find(context_id);
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the handle's context is no longer open");
  QUIESCE_TRY(make_current(*slot));
  return slot;
}

Status Device::make_current(ContextSlot& slot) {
  if (slot.lost) return slot.lost_error;
  CUcontext current = nullptr;
  if (api().cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != slot.context) {
    const CUresult set = api().cuCtxSetCurrent(slot.context);
    if (set != CUDA_SUCCESS) return fail(slot, set, "cuCtxSetCurrent failed");
  }
  return ok_status();
}

Error Device::fail(ContextSlot& context, CUresult code, std::string_view what) {
  Error error = cuda_error(code, what);
  if (code_info(code).sticky && !context.lost) {
    context.lost = true;
    context.lost_error = error;
    context.lost_error.kind = ErrorKind::DeviceLost;
    context.lost_error.retryable = false;
  }
  return error;
}

void Device::release_child(std::uint64_t context_id) {
  ContextSlot* slot = contexts_.find(context_id);
  assert(slot != nullptr && slot->children > 0);
  if (slot != nullptr && slot->children > 0) slot->children--;
}

bool Device::context_lost(const Context& context) const {
  const ContextSlot* slot = contexts_.find(context.id());
  return slot == nullptr || slot->epoch != context.epoch() || slot->lost;
}

ReleaseResult<Context> Device::destroy_context(Context&& context_in) {
  Context context = std::move(context_in);  // consumed on every path; a rejection hands it back
  ContextSlot* slot = live_context(context.id(), context.epoch());
  if (slot == nullptr) {
    return ReleaseResult<Context>::rejected(std::move(context),
                                            make_error(ErrorKind::InvalidArgument, "the context handle does not name an open context"));
  }
  if (slot->children != 0) {
    return ReleaseResult<Context>::rejected(
        std::move(context), make_error(ErrorKind::Busy, "the context still has live buffers, programs, queues, events or executables", true));
  }
  const bool lost = slot->lost;
  const std::uint64_t id = context.id();
  destroy_native_children(id, !lost);
  const CUresult destroyed = api().cuCtxDestroy(slot->context);
  contexts_.erase(id);
  if (destroyed != CUDA_SUCCESS) return ReleaseResult<Context>::indeterminate(cuda_error(destroyed, "cuCtxDestroy failed"));
  return ReleaseResult<Context>::released();
}

Status Device::discard_context(Context&& context_in) {
  const Context context = std::move(context_in);
  ContextSlot* slot = live_context(context.id(), context.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the context handle does not name an open context");
  const std::uint64_t id = context.id();
  CUcontext native = slot->context;
  // Every child of this epoch stops resolving at once; cuCtxDestroy reclaims their native objects.
  const auto drop = [id](auto& table) {
    std::vector<std::uint64_t> doomed;
    table.for_each([&](std::uint64_t child, const auto& value) {
      if (value.context_id == id) doomed.push_back(child);
    });
    for (const std::uint64_t child : doomed) table.erase(child);
  };
  drop(buffers_);
  drop(programs_);
  drop(queues_);
  drop(events_);
  drop(executables_);
  contexts_.erase(id);
  (void)api().cuCtxDestroy(native);  // a lost context may report its sticky error; it is gone either way
  return ok_status();
}

// Destroys the recycled events and the timing origin of a context (before cuCtxDestroy).
void Device::destroy_native_children(std::uint64_t context_id, bool context_usable) {
  ContextSlot* slot = contexts_.find(context_id);
  if (slot == nullptr) return;
  if (context_usable && api().cuCtxSetCurrent(slot->context) == CUDA_SUCCESS) {
    for (CUevent event : slot->idle_events) (void)api().cuEventDestroy(event);
    for (CUevent event : slot->idle_timing_events) (void)api().cuEventDestroy(event);
    if (slot->origin_event != nullptr) (void)api().cuEventDestroy(slot->origin_event);
  }
  slot->idle_events.clear();
  slot->idle_timing_events.clear();
  slot->origin_event = nullptr;
}

Result<CUevent> Device::take_event(ContextSlot& context, bool timing) {
  std::vector<CUevent>& idle = timing ? context.idle_timing_events : context.idle_events;
  if (!idle.empty()) {
    CUevent event = idle.back();
    idle.pop_back();
    return event;
  }
  CUevent event = nullptr;
  const CUresult created = api().cuEventCreate(&event, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING);
  if (created != CUDA_SUCCESS) return fail(context, created, "cuEventCreate failed");
  return event;
}

void Device::return_event(ContextSlot& context, CUevent event, bool timing) {
  if (event == nullptr) return;
  std::vector<CUevent>& idle = timing ? context.idle_timing_events : context.idle_events;
  if (idle.size() < options_.queue_depth_max) {
    idle.push_back(event);
  } else {
    (void)api().cuEventDestroy(event);
  }
}

// ---- native accessors ----

CUcontext Device::native_context(const Context& context) const {
  const ContextSlot* slot = contexts_.find(context.id());
  return slot != nullptr && slot->epoch == context.epoch() ? slot->context : nullptr;
}

CUstream Device::native_stream(const Queue& queue) const {
  const detail::QueueSlot* slot = queues_.find(queue.id());
  return slot != nullptr ? slot->stream : nullptr;
}

CUfunction Device::native_function(const Program& program) const {
  const detail::ProgramSlot* slot = programs_.find(program.id());
  return slot != nullptr ? slot->function : nullptr;
}

CUdeviceptr Device::native_pointer(const Buffer& buffer) const {
  const detail::BufferSlot* slot = buffers_.find(buffer.id());
  return slot != nullptr ? slot->pointer : 0;
}

CUgraphExec Device::native_executable(const Executable& executable) const {
  const detail::ExecutableSlot* slot = executables_.find(executable.id());
  return slot != nullptr ? slot->graph : nullptr;
}

}  // namespace quiesce::cuda
