// `quiesce info` for CUDA: the build's kernels, the driver, the devices.
#include "quiesce/cuda/info.h"

#include "quiesce/cuda/device.h"
#include "quiesce/cuda/kernels.h"

namespace quiesce::cuda {

int info_command(std::ostream& out) {
  const EmbeddedImage image = embedded_kernels();
  if (image.present()) {
    out << "cuda kernels: embedded, " << image.fatbin.size() << " bytes (" << image.targets << "):";
    for (const BuiltinKernel& kernel : builtin_kernels()) out << ' ' << kernel.name;
    out << '\n';
  } else {
    out << "cuda kernels: none embedded: " << image.absent_reason << '\n';
  }
  auto driver = Driver::load();
  if (!driver.ok()) {
    out << driver.error().message() << '\n';
    return kExitNoDriver;
  }
  const int version = (*driver)->driver_version();
  out << "cuda driver: " << (*driver)->library() << ", CUDA " << version / 1000 << '.' << version % 1000 / 10 << ", "
      << (*driver)->device_count() << " device(s)\n";
  for (int ordinal = 0; ordinal < (*driver)->device_count(); ++ordinal) {
    DeviceOptions options;
    options.ordinal = ordinal;
    auto device = Device::open(*driver, options);
    if (!device.ok()) {
      out << "  device " << ordinal << ": " << device.error().reason << '\n';
      continue;
    }
    const DeviceInfo info = device->device_info().value();
    out << "  device " << ordinal << ": " << info.name << ", compute " << info.compute_major << '.' << info.compute_minor
        << ", " << info.limits.memory_bytes / (1024 * 1024) << " MiB, threads per block " << info.limits.launch_threads_max
        << ", capabilities:" << (has_capability(info.capabilities, Capability::ReusableExecutables) ? " graphs" : "")
        << (has_capability(info.capabilities, Capability::Profiling) ? " profiling" : "")
        << (has_capability(info.capabilities, Capability::StreamOrderedAllocation) ? " stream-ordered-allocation" : "")
        << " (no event cancellation)\n";
  }
  return kExitOk;
}

}  // namespace quiesce::cuda
