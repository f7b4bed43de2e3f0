// sim::Device: construction, identity, contexts, programs, handle resolution and the digest.
#include "quiesce/sim/device.h"

#include <bit>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "device_internal.h"

namespace quiesce::sim {

using namespace internal;  // NOLINT(google-build-using-namespace): the implementation's own helpers

namespace {

Config checked(const Config& config) {
  const std::string problem = validate(config);
  if (!problem.empty()) {
    std::fprintf(stderr, "quiesce::sim::Device: the configuration is invalid: %s.\n", problem.c_str());
    std::abort();
  }
  return config;
}

}  // namespace

Device::Device() : Device(Config{}) {}

Device::Device(const Config& config)
    : config_(checked(config)),
      clock_waiter_(clock_),
      waiter_(&clock_waiter_),
      timer_(*this),
      cost_prng_(Prng(config.seed).derive("cost")),
      backing_(config.memory_bytes),
      allocator_(config.memory_bytes, config.buffer_alignment) {
  engines_free_ = {config_.execution_engines, config_.copy_engines};
  pump_list_.reserve(kAgentsMax);
  deferred_frees_.reserve(256);
  binding_sizes_.reserve(config_.bindings_max);
  binding_spans_.reserve(config_.bindings_max);
  digest_.add(config_.seed);
  digest_.add(describe(config_));
}

Device::~Device() = default;

void Device::Timer::on_timer(std::uint64_t cookie, std::uint64_t /*now_ns*/) { device_->on_command_finished(cookie); }

// ---- resolution ----

ContextRecord& Device::context_of(std::uint64_t context_id) {
  ContextRecord* context = contexts_.find(context_id);
  if (context == nullptr) {
    std::fprintf(stderr, "quiesce::sim::Device internal error: a live child names context %llu, which is gone.\n",
                 static_cast<unsigned long long>(context_id));
    std::abort();
  }
  return *context;
}

ContextRecord* Device::find_context(std::uint64_t id, std::uint32_t epoch) {
  ContextRecord* context = contexts_.find(id);
  return context != nullptr && context->epoch == epoch ? context : nullptr;
}

BufferRecord* Device::find_buffer(BufferRef ref) {
  BufferRecord* buffer = buffers_.find(ref.id);
  if (buffer == nullptr || buffer->phase != BufferPhase::Live) return nullptr;
  const ContextRecord* context = contexts_.find(buffer->context_id);
  return context != nullptr && context->epoch == ref.epoch ? buffer : nullptr;
}

ProgramRecord* Device::find_program(ProgramRef ref) {
  ProgramRecord* program = programs_.find(ref.id);
  if (program == nullptr) return nullptr;
  const ContextRecord* context = contexts_.find(program->context_id);
  return context != nullptr && context->epoch == ref.epoch ? program : nullptr;
}

QueueRecord* Device::find_queue(QueueRef ref) {
  QueueRecord* queue = queues_.find(ref.id);
  if (queue == nullptr) return nullptr;
  const ContextRecord* context = contexts_.find(queue->context_id);
  return context != nullptr && context->epoch == ref.epoch ? queue : nullptr;
}

EventRecord* Device::find_event(EventRef ref) {
  EventRecord* event = events_.find(ref.id);
  if (event == nullptr) return nullptr;
  const ContextRecord* context = contexts_.find(event->context_id);
  return context != nullptr && context->epoch == ref.epoch ? event : nullptr;
}

ExecutableRecord* Device::find_executable(ExecutableRef ref) {
  ExecutableRecord* executable = executables_.find(ref.id);
  if (executable == nullptr) return nullptr;
  const ContextRecord* context = contexts_.find(executable->context_id);
  return context != nullptr && context->epoch == ref.epoch ? executable : nullptr;
}

bool Device::has_capability(Capability capability) const {
  return quiesce::has_capability(config_.capabilities, capability);
}

void Device::charge_host_ns(std::uint64_t cost_ns) {
  if (!config_.host_costs || cost_ns == 0) return;
  // deadline_after saturates below VirtualClock::kNever: a cost is finite however large, never "no deadline".
  const std::uint64_t deadline_ns = clock_.deadline_after(cost_ns);
  (void)waiter_->wait_until(deadline_ns, [](const void*) { return false; }, nullptr);
}

void Device::note(std::uint32_t call, std::uint64_t subject, const Error* error) {
  // The digest takes 24 bytes per note: the call (u32), the error code + 1 (i32, 0 for success), the
  // subject and the virtual time (u64 each), in host byte order. Digest::add_bytes copies them with one
  // 16-byte load and one 8-byte load; a record stored field by field made the 16-byte load wait for the
  // narrower stores to retire (a failed store forward, on every call), so the first 16 bytes are built as
  // one 16-byte vector and stored whole.
  using Words = std::uint64_t __attribute__((vector_size(16)));
  struct Record {
    Words call_code_subject;
    std::uint64_t now_ns;
  };
  constexpr std::size_t kRecordBytes = 24;
  static_assert(offsetof(Record, now_ns) + sizeof(std::uint64_t) == kRecordBytes);
  static_assert(std::endian::native == std::endian::little, "quiesce assumes a little-endian host");
  const auto code = static_cast<std::uint32_t>(error == nullptr ? 0 : error->native_code + 1);
  const std::uint64_t call_code = std::uint64_t{call} | (std::uint64_t{code} << 32U);  // call, then code
  const Record record{Words{call_code, subject}, clock_.now_ns()};
  digest_.add_bytes(&record, kRecordBytes);
}

// ---- identity ----

Result<DeviceInfo> Device::device_info() {
  ++operations_;
  DeviceInfo info;
  info.name = "quiesce simulated device";
  info.vendor_id = 0;
  info.compute_major = 9;
  info.compute_minor = 0;
  info.capabilities = config_.capabilities;
  info.limits = DeviceLimits{config_.memory_bytes,       config_.buffer_alignment,   config_.queue_depth_max,
                             config_.queues_max,         config_.batch_commands_max, config_.bindings_max,
                             config_.parameter_bytes_max, config_.launch_threads_max};
  note(kCallDeviceInfo, 0, nullptr);
  return info;
}

std::string Device::describe_error(const Error& error) const { return sim::describe(error); }

void Device::note_reported_rejected(std::uint64_t invocation) {
  note(kCallNoteRejected, invocation, nullptr);
  oracle_.note_reported_rejected(invocation, clock_.now_ns());
}

// ---- contexts ----

Result<Context> Device::create_context(const ContextDesc& desc) {
  ++operations_;
  if (desc.flags != 0) {
    constexpr Error kFlags = sim_error(ErrorKind::Unsupported, Code::NotSupported, "context flags are not supported");
    note(kCallCreateContext, desc.flags, &kFlags);
    return kFlags;
  }
  const std::uint64_t id = contexts_.acquire();
  ContextRecord& context = contexts_.at(SlotTable<ContextRecord>::slot_of(id));
  context.epoch = ++next_epoch_;
  context.lost = false;
  context.lost_ns = 0;
  context.pools = PoolSet();
  context.buffers = context.programs = context.queues = context.events = context.executables = 0;
  note(kCallCreateContext, id, nullptr);
  return Context(id, context.epoch);
}

ReleaseResult<Context> Device::destroy_context(Context&& context) {
  ++operations_;
  ContextRecord* record = find_context(context.id(), context.epoch());
  if (record == nullptr) {
    note(kCallDestroyContext, context.id(), &kInvalidHandle);
    return ReleaseResult<Context>::rejected(std::move(context), kInvalidHandle);
  }
  if (record->lost) {
    note(kCallDestroyContext, context.id(), &kDeviceLost);
    Context consumed = std::move(context);
    return ReleaseResult<Context>::indeterminate(kDeviceLost);
  }
  if (record->children() != 0) {
    note(kCallDestroyContext, context.id(), &kChildrenLive);
    return ReleaseResult<Context>::rejected(std::move(context), kChildrenLive);
  }
  (void)record->pools.release_cached(allocator_);
  contexts_.release(SlotTable<ContextRecord>::slot_of(context.id()));
  note(kCallDestroyContext, context.id(), nullptr);
  Context consumed = std::move(context);
  return ReleaseResult<Context>::released();
}

// ---- programs ----

Result<Program> Device::load_program(const Context& context, const ArtifactRef& artifact) {
  ++operations_;
  ContextRecord* record = find_context(context.id(), context.epoch());
  const auto fail = [&](const Error& error) -> Result<Program> {
    note(kCallLoadProgram, context.id(), &error);
    return error;
  };
  if (record == nullptr) return fail(kInvalidHandle);
  if (record->lost) return fail(kDeviceLost);
  if (artifact.format != ArtifactFormat::Builtin) {
    return fail(sim_error(ErrorKind::Unsupported, Code::NoBinaryForGpu,
                          "the simulator runs only builtin kernels; cubin, fatbin and PTX artifacts are unsupported"));
  }
  const std::optional<BuiltinKernel> kernel = builtin_kernel(artifact.kernel_name);
  if (!kernel) {
    return fail(sim_error(ErrorKind::InvalidArgument, Code::NotFound,
                          "no builtin kernel has that name (fill, copy, saxpy, checksum, delay, fault)"));
  }
  if (artifact.resident_bytes < kProgramResidentBytes) {
    return fail(sim_error(ErrorKind::InvalidArgument, Code::ResidentLimit,
                          "a simulated program retains 4096 bytes, more than the artifact's resident_bytes allow"));
  }
  const std::uint64_t address = allocator_.allocate(kProgramResidentBytes);
  if (address == AddressAllocator::kNoAddress) {
    return fail(sim_error(ErrorKind::OutOfMemory, Code::OutOfMemory,
                          "device memory cannot hold the program's resident storage", true));
  }
  const std::uint64_t id = programs_.acquire();
  ProgramRecord& program = programs_.at(SlotTable<ProgramRecord>::slot_of(id));
  program = ProgramRecord{context.id(), *kernel, address, 0, 0};
  record->programs++;
  note(kCallLoadProgram, id, nullptr);
  return Program(id, record->epoch);
}

ReleaseResult<Program> Device::unload_program(Program&& program) {
  ++operations_;
  ProgramRecord* record = find_program(program.ref());
  if (record == nullptr) {
    note(kCallUnloadProgram, program.id(), &kInvalidHandle);
    return ReleaseResult<Program>::rejected(std::move(program), kInvalidHandle);
  }
  ContextRecord* context = &context_of(record->context_id);
  if (context->lost) {
    note(kCallUnloadProgram, program.id(), &kDeviceLost);
    Program consumed = std::move(program);
    return ReleaseResult<Program>::indeterminate(kDeviceLost);
  }
  if (record->in_flight != 0 || record->pins != 0) {
    constexpr Error kInUse = sim_error(ErrorKind::Busy, Code::ResourceBusy,
                                       "the program is referenced by work in flight or by an executable", true);
    note(kCallUnloadProgram, program.id(), &kInUse);
    return ReleaseResult<Program>::rejected(std::move(program), kInUse);
  }
  allocator_.release(record->address, kProgramResidentBytes);
  programs_.release(SlotTable<ProgramRecord>::slot_of(program.id()));
  context->programs--;
  note(kCallUnloadProgram, program.id(), nullptr);
  Program consumed = std::move(program);
  return ReleaseResult<Program>::released();
}

}  // namespace quiesce::sim
