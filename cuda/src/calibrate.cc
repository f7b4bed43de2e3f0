// `quiesce calibrate`: measures the GPU and writes a cost profile in the simulator's text format.
//
// Host-side costs (launch, event record and query, allocation, free, pageable upload) are timed on the host
// steady clock over many repetitions; device-side rates (copy, memset, kernel bandwidth, graph nodes) with
// CUDA events around the work. Each figure is the median of kRepeats measurements. This is measurement of
// real hardware, not simulation: the only floating point is cuEventElapsedTime's, converted to integers.
#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <cstring>
#include <sstream>

#include "quiesce/core/files.h"
#include "quiesce/core/transaction.h"
#include "quiesce/cuda/errors.h"
#include "quiesce/cuda/hil.h"

namespace quiesce::cuda {
namespace {

constexpr int kRepeats = 5;
constexpr std::uint64_t kLargeBytes = 256ULL << 20U;

std::uint64_t median(std::array<std::uint64_t, kRepeats> values) {
  std::sort(values.begin(), values.end());
  return values[kRepeats / 2];
}

class Calibrator {
 public:
  Calibrator(Device& device, CUcontext context, CUstream stream, CUfunction fill, CUfunction saxpy)
      : f_(device.driver().api()), context_(context), stream_(stream), fill_(fill), saxpy_(saxpy) {}

  // Returns an empty string on success, else the failing call.
  std::string setup() {
    if (f_.cuCtxSetCurrent(context_) != CUDA_SUCCESS) return "cuCtxSetCurrent";
    if (f_.cuMemAlloc(&large_a_, kLargeBytes) != CUDA_SUCCESS) return "cuMemAlloc of the 256 MiB source";
    if (f_.cuMemAlloc(&large_b_, kLargeBytes) != CUDA_SUCCESS) return "cuMemAlloc of the 256 MiB target";
    if (f_.cuMemAlloc(&small_, 4096) != CUDA_SUCCESS) return "cuMemAlloc of the small buffer";
    if (f_.cuEventCreate(&start_, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return "cuEventCreate";
    if (f_.cuEventCreate(&stop_, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return "cuEventCreate";
    if (f_.cuMemsetD8Async(large_a_, 1, kLargeBytes, stream_) != CUDA_SUCCESS) return "cuMemsetD8Async";
    if (f_.cuStreamSynchronize(stream_) != CUDA_SUCCESS) return "cuStreamSynchronize";
    host_.assign(64ULL << 20U, std::byte{0x2A});
    return {};
  }
  ~Calibrator() {
    (void)f_.cuStreamSynchronize(stream_);
    if (large_a_ != 0) (void)f_.cuMemFree(large_a_);
    if (large_b_ != 0) (void)f_.cuMemFree(large_b_);
    if (small_ != 0) (void)f_.cuMemFree(small_);
    if (start_ != nullptr) (void)f_.cuEventDestroy(start_);
    if (stop_ != nullptr) (void)f_.cuEventDestroy(stop_);
  }
  Calibrator(const Calibrator&) = delete;
  Calibrator& operator=(const Calibrator&) = delete;

  CUresult launch_fill(CUdeviceptr target, std::uint64_t bytes, std::uint32_t grid, std::uint32_t block) {
    std::array<std::byte, 20> parameters{};
    const std::uint64_t pair[2] = {target, bytes};
    std::memcpy(parameters.data(), pair, sizeof(pair));
    std::size_t size = parameters.size();
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, parameters.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    return f_.cuLaunchKernel(fill_, grid, 1, 1, block, 1, 1, 0, stream_, nullptr, extra);
  }

  // Host ns per operation of `count` back-to-back calls of `body`, ending with a stream sync.
  template <class Body>
  std::uint64_t host_ns_per_call(std::uint64_t count, Body&& body) {
    std::array<std::uint64_t, kRepeats> samples{};
    for (auto& sample : samples) {
      const std::uint64_t begin = host_now_ns();
      for (std::uint64_t index = 0; index < count; ++index) body();
      (void)f_.cuStreamSynchronize(stream_);
      sample = (host_now_ns() - begin) / count;
    }
    return median(samples);
  }

  // Device ns of the work `body` enqueues, measured with events.
  template <class Body>
  std::uint64_t device_ns(Body&& body) {
    std::array<std::uint64_t, kRepeats> samples{};
    for (auto& sample : samples) {
      (void)f_.cuEventRecord(start_, stream_);
      body();
      (void)f_.cuEventRecord(stop_, stream_);
      (void)f_.cuEventSynchronize(stop_);
      float milliseconds = 0;
      (void)f_.cuEventElapsedTime(&milliseconds, start_, stop_);
      sample = static_cast<std::uint64_t>(static_cast<double>(milliseconds) * 1e6);
    }
    return std::max<std::uint64_t>(median(samples), 1);
  }

  static std::uint64_t bytes_per_us(std::uint64_t bytes, std::uint64_t ns) { return bytes * 1000 / std::max<std::uint64_t>(ns, 1); }

  std::string measure(std::ostringstream& profile) {
    const auto key = [&](std::string_view name, std::uint64_t value, std::string_view how) {
      profile << name << " = " << value << "   # " << how << '\n';
    };
    key("launch_latency_ns", host_ns_per_call(20'000, [&] { (void)launch_fill(small_, 4096, 1, 32); }),
        "back-to-back launches of a 4 KiB fill, host time per launch including the final sync");
    key("graph_node_ns", graph_node_ns(), "a captured graph of 1,000 small fills, device time per node on replay");
    key("copy_latency_ns", device_ns([&] {
          for (int index = 0; index < 1000; ++index) (void)f_.cuMemcpyDtoDAsync(small_, large_a_, 4, stream_);
        }) / 1000,
        "device time per 4-byte device-to-device copy, 1,000 in a row");
    key("copy_bytes_per_us", bytes_per_us(kLargeBytes, device_ns([&] {
          (void)f_.cuMemcpyDtoDAsync(large_b_, large_a_, kLargeBytes, stream_);
        })),
        "one 256 MiB device-to-device copy (bytes copied per microsecond)");
    key("upload_bytes_per_us", bytes_per_us(host_.size(), host_ns_per_call(1, [&] {
          (void)f_.cuMemcpyHtoD(large_b_, host_.data(), host_.size());
        })),
        "a 64 MiB copy from pageable host memory, host time");
    key("kernel_bytes_per_us", bytes_per_us(kLargeBytes, device_ns([&] {
          (void)launch_fill(large_b_, kLargeBytes, 1024, 256);
        })),
        "the fill kernel over 256 MiB (bytes written per microsecond)");
    key("zero_bytes_per_us", bytes_per_us(kLargeBytes, device_ns([&] {
          (void)f_.cuMemsetD8Async(large_b_, 0, kLargeBytes, stream_);
        })),
        "cuMemsetD8Async of 256 MiB");
    key("event_record_ns", host_ns_per_call(10'000, [&] { (void)f_.cuEventRecord(stop_, stream_); }),
        "cuEventRecord on an idle stream, host time");
    (void)f_.cuEventSynchronize(stop_);
    key("event_query_ns", host_ns_per_call(10'000, [&] { (void)f_.cuEventQuery(stop_); }),
        "cuEventQuery of a completed event, host time");
    std::array<CUdeviceptr, 100> pointers{};
    std::array<std::uint64_t, kRepeats> allocation{};
    std::array<std::uint64_t, kRepeats> release{};
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
      const std::uint64_t begin = host_now_ns();
      for (CUdeviceptr& pointer : pointers) {
        if (f_.cuMemAlloc(&pointer, 1ULL << 20U) != CUDA_SUCCESS) return "cuMemAlloc of 1 MiB failed";
      }
      const std::uint64_t middle = host_now_ns();
      for (CUdeviceptr& pointer : pointers) (void)f_.cuMemFree(pointer);
      allocation[static_cast<std::size_t>(repeat)] = (middle - begin) / pointers.size();
      release[static_cast<std::size_t>(repeat)] = (host_now_ns() - middle) / pointers.size();
    }
    key("allocation_ns", median(allocation), "cuMemAlloc of 1 MiB, host time");
    key("free_ns", median(release), "cuMemFree of 1 MiB, host time");
    (void)saxpy_;
    return {};
  }

 private:
  std::uint64_t graph_node_ns() {
    CUgraph graph = nullptr;
    CUgraphExec executable = nullptr;
    if (f_.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL) != CUDA_SUCCESS) return 0;
    for (int index = 0; index < 1000; ++index) (void)launch_fill(small_, 4096, 1, 32);
    const CUresult ended = f_.cuStreamEndCapture(stream_, &graph);
    if (ended != CUDA_SUCCESS || graph == nullptr) return 0;
    const CUresult instantiated = f_.cuGraphInstantiateWithFlags(&executable, graph, 0);
    (void)f_.cuGraphDestroy(graph);
    if (instantiated != CUDA_SUCCESS) return 0;
    (void)f_.cuGraphLaunch(executable, stream_);  // warm-up: the first replay uploads the graph
    (void)f_.cuStreamSynchronize(stream_);
    const std::uint64_t total = device_ns([&] { (void)f_.cuGraphLaunch(executable, stream_); });
    (void)f_.cuStreamSynchronize(stream_);
    (void)f_.cuGraphExecDestroy(executable);
    return total / 1000;
  }

  const DriverFunctions& f_;
  CUcontext context_;
  CUstream stream_;
  CUfunction fill_;
  CUfunction saxpy_;
  CUdeviceptr large_a_ = 0;
  CUdeviceptr large_b_ = 0;
  CUdeviceptr small_ = 0;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
  std::vector<std::byte> host_;
};

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M UTC", &parts);
  return text;
}

}  // namespace

Result<std::string, CalibrationError> calibrate(Device& device) {
  auto context = device.create_context(ContextDesc{});
  if (!context.ok()) return CalibrationError{"create_context failed: " + device.describe_error(context.error())};
  auto queue = device.create_queue(*context, QueueDesc{});
  auto fill = device.load_program(*context, ArtifactRef{"fill", ArtifactFormat::Builtin, {}, 1U << 20});
  auto saxpy = device.load_program(*context, ArtifactRef{"saxpy", ArtifactFormat::Builtin, {}, 1U << 20});
  if (!queue.ok() || !fill.ok() || !saxpy.ok()) {
    (void)device.discard_context(std::move(context).value());
    return CalibrationError{"creating the calibration queue or loading its kernels failed"};
  }
  const DeviceInfo info = device.device_info().value();
  const int version = device.driver().driver_version();
  std::ostringstream profile;
  profile << "# quiesce cost profile, calibrated by `quiesce calibrate` on " << info.name << " (compute "
          << info.compute_major << '.' << info.compute_minor << ", CUDA driver " << version / 1000 << '.'
          << version % 1000 / 10 << ") at " << utc_now() << "\n# each figure is the median of " << kRepeats
          << " measurements\n";
  std::string failure;
  {
    Calibrator calibrator(device, device.native_context(*context), device.native_stream(*queue),
                          device.native_function(*fill), device.native_function(*saxpy));
    failure = calibrator.setup();
    if (failure.empty()) failure = calibrator.measure(profile);
  }
  (void)device.unload_program(std::move(fill).value());
  (void)device.unload_program(std::move(saxpy).value());
  (void)device.destroy_queue(std::move(queue).value());
  (void)device.destroy_context(std::move(context).value());
  if (!failure.empty()) return CalibrationError{"calibration failed: " + failure};
  return profile.str();
}

int write_cost_profile(const std::string& path, const std::string& profile, std::ostream& out, std::ostream& err) {
  const Result<void, FileError> written = write_file_atomically(path, profile, "cost profile");
  if (!written.ok()) {
    err << written.error().message << '\n';
    return kExitBadInput;
  }
  out << "calibrate: wrote the cost profile to " << path << '\n';
  return kExitOk;
}

int calibrate_command(const std::string& out_path, std::ostream& out, std::ostream& err) {
  // The path first: a measurement that cannot be written is wasted, and bad usage is exit 2 with or
  // without a driver.
  if (const Result<void, FileError> writable = check_writable(out_path, "cost profile"); !writable.ok()) {
    err << writable.error().message << '\n';
    return kExitBadInput;
  }
  auto device = Device::open();
  if (!device.ok()) {
    err << device.error().message() << '\n';
    return kExitNoDriver;
  }
  const Result<std::string, CalibrationError> profile = calibrate(*device);
  if (!profile.ok()) {
    err << profile.error().reason << '\n';
    return kExitCheckFailed;
  }
  out << profile.value();
  return write_cost_profile(out_path, profile.value(), out, err);
}

}  // namespace quiesce::cuda
