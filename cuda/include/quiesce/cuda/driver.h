// The CUDA Driver API, loaded at run time into one function table (Dawn's VulkanFunctions pattern).
//
// quiesce never links libcuda: every binary must start on a machine without a driver and say why CUDA is
// unavailable. load_driver() dlopens libcuda.so.1, resolves cuGetProcAddress_v2 with dlsym, and asks it
// for every entry point by its base name ("cuMemAlloc", never "cuMemAlloc_v2") at CUDA version 13000, so
// the driver hands back the ABI version that matches the <cuda.h> this table was compiled against.
// <cuda.h> is included for its types only; the function pointer types come from decltype of its
// declarations, which names no symbol at link time.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "quiesce/core/result.h"

namespace quiesce::cuda {

// The CUDA version whose entry-point ABIs the table asks for (matches the toolkit headers, CUDA 13.0).
inline constexpr int kDriverApiVersion = 13000;

// Every entry point quiesce uses, by base name. X(name) expands once per function.
#define QUIESCE_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuInit)                              \
  X(cuDriverGetVersion)                  \
  X(cuGetErrorName)                      \
  X(cuGetErrorString)                    \
  X(cuDeviceGet)                         \
  X(cuDeviceGetCount)                    \
  X(cuDeviceGetName)                     \
  X(cuDeviceGetAttribute)                \
  X(cuDeviceTotalMem)                    \
  X(cuDeviceGetDefaultMemPool)           \
  X(cuCtxCreate)                         \
  X(cuCtxDestroy)                        \
  X(cuCtxGetCurrent)                     \
  X(cuCtxSetCurrent)                     \
  X(cuCtxSynchronize)                    \
  X(cuCtxGetStreamPriorityRange)         \
  X(cuMemAlloc)                          \
  X(cuMemFree)                           \
  X(cuMemAllocAsync)                     \
  X(cuMemFreeAsync)                      \
  X(cuMemPoolTrimTo)                     \
  X(cuMemGetInfo)                        \
  X(cuMemGetAddressRange)                \
  X(cuMemAllocHost)                      \
  X(cuMemFreeHost)                       \
  X(cuMemHostAlloc)                      \
  X(cuMemHostGetDevicePointer)           \
  X(cuMemcpyHtoD)                        \
  X(cuMemcpyDtoH)                        \
  X(cuMemcpyHtoDAsync)                   \
  X(cuMemcpyDtoHAsync)                   \
  X(cuMemcpyDtoDAsync)                   \
  X(cuMemsetD8Async)                     \
  X(cuModuleLoadData)                    \
  X(cuModuleUnload)                      \
  X(cuModuleGetFunction)                 \
  X(cuFuncGetAttribute)                  \
  X(cuFuncGetParamInfo)                  \
  X(cuLaunchKernel)                      \
  X(cuStreamCreateWithPriority)          \
  X(cuStreamDestroy)                     \
  X(cuStreamQuery)                       \
  X(cuStreamSynchronize)                 \
  X(cuStreamWaitEvent)                   \
  X(cuStreamWriteValue64)                \
  X(cuStreamBeginCapture)                \
  X(cuStreamEndCapture)                  \
  X(cuEventCreate)                       \
  X(cuEventDestroy)                      \
  X(cuEventRecord)                       \
  X(cuEventQuery)                        \
  X(cuEventSynchronize)                  \
  X(cuEventElapsedTime)                  \
  X(cuGraphInstantiateWithFlags)         \
  X(cuGraphLaunch)                       \
  X(cuGraphUpload)                       \
  X(cuGraphDestroy)                      \
  X(cuGraphExecDestroy)                  \
  X(cuGraphGetNodes)

// One pointer per entry point. The member names are the base names; <cuda.h> may macro-rename a member
// (cuMemAlloc becomes cuMemAlloc_v2) consistently wherever this header is included, which is harmless.
// A base name that <cuda.h> maps to a *different* base name must not be listed: the driver would hand back
// the old ABI under the old name (cuGraphInstantiate is the 5-argument CUDA 10 call, while the header's
// cuGraphInstantiate means cuGraphInstantiateWithFlags). driver_function_macro_targets() lets a test check.
struct DriverFunctions {
#define QUIESCE_CUDA_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;
  QUIESCE_CUDA_DRIVER_FUNCTIONS(QUIESCE_CUDA_DECLARE_MEMBER)
#undef QUIESCE_CUDA_DECLARE_MEMBER
};

// The base names the loader asks cuGetProcAddress for, in table order (a test proves none has a _v suffix).
std::span<const std::string_view> driver_function_names();

// What <cuda.h> makes of each listed name, in table order ("cuMemAlloc_v2",
// "__CUDA_API_PTDS(cuMemcpyHtoD_v2)", or the name itself): a test checks none changes the base name.
std::span<const std::string_view> driver_function_macro_targets();

// Why the driver could not be used. Printed as "no CUDA driver: <reason>".
struct DriverUnavailable {
  std::string reason;
  std::string message() const { return "no CUDA driver: " + reason; }
};

struct DriverOptions {
  std::string library = "libcuda.so.1";  // tests point this at libraries that are not a driver
};

// A loaded driver: the dlopen handle and the resolved table. Shared by every Device of a process, and
// never unloaded while one lives (the handle is closed when the last owner lets go).
class Driver {
 public:
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;
  ~Driver();

  const DriverFunctions& api() const { return functions_; }
  int driver_version() const { return driver_version_; }  // e.g. 13000, from cuDriverGetVersion
  int device_count() const { return device_count_; }
  const std::string& library() const { return library_; }

  // Whether the driver library can be opened at all, without calling cuInit: nothing is initialised, so a
  // process may still fork a child that uses CUDA afterwards. std::nullopt when it opens.
  static std::optional<DriverUnavailable> probe_library(const DriverOptions& options = {});

  // Whether this process has initialised CUDA (cuInit ran): a forked child cannot use CUDA then.
  static bool initialised_in_this_process(const DriverOptions& options = {});

  // Loads the library, resolves every entry point and calls cuInit(0). Any failure is a reason string.
  static Result<std::shared_ptr<const Driver>, DriverUnavailable> load(const DriverOptions& options = {});

 private:
  Driver() = default;

  void* library_handle_ = nullptr;
  std::string library_;
  DriverFunctions functions_{};
  int driver_version_ = 0;
  int device_count_ = 0;
};

}  // namespace quiesce::cuda
