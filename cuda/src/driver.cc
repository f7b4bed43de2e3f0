// Loading libcuda at run time: dlopen, dlsym("cuGetProcAddress_v2"), one cuGetProcAddress per entry point.
#include "quiesce/cuda/driver.h"

#include <dlfcn.h>

#include <array>
#include <cassert>
#include <cstring>

#include "quiesce/cuda/errors.h"

namespace quiesce::cuda {
namespace {

#define QUIESCE_CUDA_NAME(name) std::string_view{#name},
constexpr std::array kFunctionNames = {QUIESCE_CUDA_DRIVER_FUNCTIONS(QUIESCE_CUDA_NAME)};
#undef QUIESCE_CUDA_NAME
// The same names after <cuda.h>'s macros (the argument is expanded before the inner # applies).
#define QUIESCE_CUDA_STRINGIZE(text) #text
#define QUIESCE_CUDA_EXPANDED(name) std::string_view{QUIESCE_CUDA_STRINGIZE(name)},
constexpr std::array kFunctionTargets = {QUIESCE_CUDA_DRIVER_FUNCTIONS(QUIESCE_CUDA_EXPANDED)};
#undef QUIESCE_CUDA_EXPANDED
#undef QUIESCE_CUDA_STRINGIZE

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

std::string symbol_status_text(CUdriverProcAddressQueryResult status) {
  switch (status) {
    case CU_GET_PROC_ADDRESS_SUCCESS:
      return "found";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND:
      return "the driver does not have it";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT:
      return "the driver is older than CUDA " + std::to_string(kDriverApiVersion / 1000) + "." +
             std::to_string(kDriverApiVersion % 1000 / 10);
  }
  return "status " + std::to_string(static_cast<int>(status));
}

// Resolves one entry point into `slot`. Returns an empty string on success, else the reason.
std::string resolve(GetProcAddress get_proc_address, std::string_view name, void** slot) {
  const std::string symbol(name);
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  const CUresult result = get_proc_address(symbol.c_str(), slot, kDriverApiVersion, CU_GET_PROC_ADDRESS_DEFAULT,
                                           &status);
  if (result != CUDA_SUCCESS || *slot == nullptr) {
    return "cuGetProcAddress(\"" + symbol + "\", " + std::to_string(kDriverApiVersion) + ") failed with " +
           describe_code(result) + ": " + symbol_status_text(status);
  }
  return {};
}

}  // namespace

std::span<const std::string_view> driver_function_names() { return kFunctionNames; }
std::span<const std::string_view> driver_function_macro_targets() { return kFunctionTargets; }

std::optional<DriverUnavailable> Driver::probe_library(const DriverOptions& options) {
  void* handle = dlopen(options.library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return DriverUnavailable{why != nullptr ? std::string(why) : options.library + ": dlopen failed"};
  }
  const bool is_driver = dlsym(handle, "cuGetProcAddress_v2") != nullptr;
  dlclose(handle);
  if (!is_driver) return DriverUnavailable{options.library + " has no cuGetProcAddress_v2: it is not a CUDA driver of version 12.0 or later"};
  return std::nullopt;
}

bool Driver::initialised_in_this_process(const DriverOptions& options) {
  void* handle = dlopen(options.library.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) return false;  // not even loaded
  // Before cuInit every call answers CUDA_ERROR_NOT_INITIALIZED; cuDeviceGetCount initialises nothing.
  void* symbol = dlsym(handle, "cuDeviceGetCount");
  bool initialised = true;
  if (symbol != nullptr) {
    CUresult (*device_get_count)(int*) = nullptr;
    std::memcpy(&device_get_count, &symbol, sizeof(symbol));
    int count = 0;
    initialised = device_get_count(&count) != CUDA_ERROR_NOT_INITIALIZED;
  }
  dlclose(handle);
  return initialised;
}

// The library stays loaded for the life of the process: once cuInit has run, the driver's own threads
// execute its code, and unloading it under them crashed a test process on the H200.
Driver::~Driver() = default;

Result<std::shared_ptr<const Driver>, DriverUnavailable> Driver::load(const DriverOptions& options) {
  assert(!options.library.empty());
  void* handle = dlopen(options.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return DriverUnavailable{why != nullptr ? std::string(why) : options.library + ": dlopen failed"};
  }
  std::shared_ptr<Driver> driver(new Driver());
  driver->library_handle_ = handle;
  driver->library_ = options.library;

  void* get_proc_symbol = dlsym(handle, "cuGetProcAddress_v2");
  if (get_proc_symbol == nullptr) {
    dlclose(handle);  // not a driver, never initialised: safe to unload
    return DriverUnavailable{options.library + " has no cuGetProcAddress_v2: it is not a CUDA driver of version 12.0 or later"};
  }
  GetProcAddress get_proc_address = nullptr;
  static_assert(sizeof(get_proc_address) == sizeof(get_proc_symbol));
  std::memcpy(&get_proc_address, &get_proc_symbol, sizeof(get_proc_address));

  DriverFunctions& table = driver->functions_;
  std::size_t index = 0;
#define QUIESCE_CUDA_RESOLVE(name)                                                                   \
  {                                                                                                  \
    void* pointer = nullptr;                                                                         \
    std::string reason = resolve(get_proc_address, kFunctionNames[index++], &pointer);              \
    if (!reason.empty()) {                                                                           \
      dlclose(handle); /* cuInit has not run: safe to unload */                                      \
      return DriverUnavailable{options.library + ": " + reason};                                     \
    }                                                                                                \
    std::memcpy(&table.name, &pointer, sizeof(pointer));                                            \
  }
  QUIESCE_CUDA_DRIVER_FUNCTIONS(QUIESCE_CUDA_RESOLVE)
#undef QUIESCE_CUDA_RESOLVE
  assert(index == kFunctionNames.size());

  const CUresult init = table.cuInit(0);
  if (init != CUDA_SUCCESS) {
    return DriverUnavailable{"cuInit(0) failed with " + describe_code(init) + " (is a GPU visible to this process?)"};
  }
  if (table.cuDriverGetVersion(&driver->driver_version_) != CUDA_SUCCESS) driver->driver_version_ = 0;
  const CUresult count = table.cuDeviceGetCount(&driver->device_count_);
  if (count != CUDA_SUCCESS || driver->device_count_ <= 0) {
    return DriverUnavailable{"the driver loaded but reports no CUDA device (" + describe_code(count) + ")"};
  }
  return std::shared_ptr<const Driver>(std::move(driver));
}

}  // namespace quiesce::cuda
