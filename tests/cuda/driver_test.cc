// The parts of the CUDA backend that need no GPU: loading the driver (and failing to, with a reason), the
// CUresult → ErrorKind table, the builtin kernel ABI and the embedded kernel image.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "quiesce/cuda/device.h"
#include "quiesce/cuda/errors.h"
#include "quiesce/cuda/info.h"
#include "quiesce/cuda/kernels.h"

#include <sstream>

namespace quiesce::cuda {
namespace {

TEST(CudaDriverLoader, AMissingLibraryIsANamedReason) {
  DriverOptions options;
  options.library = "libquiesce-no-such-driver.so.1";
  auto driver = Driver::load(options);
  ASSERT_FALSE(driver.ok());
  const std::string message = driver.error().message();
  EXPECT_EQ(message.rfind("no CUDA driver: ", 0), 0U) << message;
  EXPECT_NE(message.find("libquiesce-no-such-driver.so.1"), std::string::npos) << message;
  EXPECT_NE(message.find("cannot open shared object file"), std::string::npos) << message;
}

TEST(CudaDriverLoader, ALibraryThatIsNotADriverIsRefused) {
  DriverOptions options;
  options.library = "libm.so.6";  // present everywhere glibc is, and has no cuGetProcAddress_v2
  auto driver = Driver::load(options);
  ASSERT_FALSE(driver.ok());
  EXPECT_NE(driver.error().reason.find("cuGetProcAddress_v2"), std::string::npos) << driver.error().reason;
}

TEST(CudaDriverLoader, DefaultLoadEitherWorksOrSaysWhy) {
  auto driver = Driver::load();
  if (driver.ok()) {
    EXPECT_GT((*driver)->device_count(), 0);
    EXPECT_GE((*driver)->driver_version(), 12000);
    EXPECT_NE((*driver)->api().cuLaunchKernel, nullptr);
  } else {
    EXPECT_FALSE(driver.error().reason.empty());
    EXPECT_NE(driver.error().message().find("no CUDA driver: "), std::string::npos);
  }
  auto device = Device::open();
  EXPECT_EQ(device.ok(), driver.ok());
}

TEST(CudaDriverLoader, EntryPointsAreAskedForByBaseName) {
  const auto names = driver_function_names();
  ASSERT_GT(names.size(), 40U);
  bool has_mem_alloc = false;
  for (const std::string_view name : names) {
    EXPECT_EQ(name.find("_v"), std::string_view::npos) << name << " carries an ABI suffix";
    EXPECT_EQ(name.rfind("cu", 0), 0U) << name;
    has_mem_alloc |= name == "cuMemAlloc";
  }
  EXPECT_TRUE(has_mem_alloc);
}

// <cuda.h> renames some calls: cuMemAlloc to cuMemAlloc_v2 (the same call, a newer ABI, which is what
// cuGetProcAddress returns for the base name at CUDA 13000), but cuGraphInstantiate to
// cuGraphInstantiateWithFlags (another call: asking the driver for "cuGraphInstantiate" returns the CUDA 10
// five-argument one, and calling it through the three-argument type crashed on the H200).
TEST(CudaDriverLoader, NoListedNameIsMacroRenamedToAnotherCall) {
  const auto names = driver_function_names();
  const auto targets = driver_function_macro_targets();
  ASSERT_EQ(names.size(), targets.size());
  for (std::size_t index = 0; index < names.size(); ++index) {
    std::string_view target = targets[index];
    for (const std::string_view wrapper : {"__CUDA_API_PTDS(", "__CUDA_API_PTSZ("}) {
      if (target.rfind(wrapper, 0) == 0) target = target.substr(wrapper.size(), target.size() - wrapper.size() - 1);
    }
    ASSERT_EQ(target.rfind(names[index], 0), 0U) << names[index] << " becomes " << targets[index];
    const std::string_view suffix = target.substr(names[index].size());
    EXPECT_TRUE(suffix.empty() || (suffix.rfind("_v", 0) == 0 && suffix.size() > 2 &&
                                   suffix.find_first_not_of("0123456789", 2) == std::string_view::npos))
        << names[index] << " becomes " << targets[index] << ", another call";
  }
}

TEST(CudaErrorMapping, StickyCodesLoseTheContext) {
  for (const int code : {700, 702, 714, 715, 716, 717, 718, 719, 709, 214}) {
    const CodeInfo info = code_info(static_cast<CUresult>(code));
    EXPECT_TRUE(info.sticky) << code;
    EXPECT_EQ(info.kind, ErrorKind::DeviceLost) << code;
    EXPECT_FALSE(info.retryable) << code;
  }
  for (const int code : {1, 2, 200, 209, 218, 400, 500, 600, 701, 900, 901, 909, 999}) {
    EXPECT_FALSE(code_info(static_cast<CUresult>(code)).sticky) << code;
  }
}

TEST(CudaErrorMapping, KindsFollowTheContractTaxonomy) {
  EXPECT_EQ(code_info(CUDA_ERROR_OUT_OF_MEMORY).kind, ErrorKind::OutOfMemory);
  EXPECT_TRUE(code_info(CUDA_ERROR_OUT_OF_MEMORY).retryable);
  EXPECT_EQ(code_info(CUDA_ERROR_NOT_READY).kind, ErrorKind::Busy);
  EXPECT_EQ(code_info(CUDA_ERROR_INVALID_VALUE).kind, ErrorKind::InvalidArgument);
  EXPECT_EQ(code_info(CUDA_ERROR_INVALID_PTX).kind, ErrorKind::Incompatible);
  EXPECT_EQ(code_info(CUDA_ERROR_NO_BINARY_FOR_GPU).kind, ErrorKind::Incompatible);
  EXPECT_EQ(code_info(CUDA_ERROR_NOT_SUPPORTED).kind, ErrorKind::Unsupported);
  EXPECT_EQ(code_info(CUDA_ERROR_NOT_PERMITTED).kind, ErrorKind::PermissionDenied);
  EXPECT_EQ(code_info(CUDA_ERROR_TIMEOUT).kind, ErrorKind::Timeout);
  EXPECT_EQ(code_info(CUDA_ERROR_ILLEGAL_ADDRESS).name, "CUDA_ERROR_ILLEGAL_ADDRESS");

  const CodeInfo unknown = code_info(static_cast<CUresult>(123456));
  EXPECT_EQ(unknown.kind, ErrorKind::Internal);
  EXPECT_FALSE(unknown.sticky);

  const Error error = cuda_error(CUDA_ERROR_ILLEGAL_ADDRESS, "cuEventQuery failed");
  EXPECT_EQ(error.domain, NativeDomain::Cuda);
  EXPECT_EQ(error.native_code, 700);
  EXPECT_EQ(error.kind, ErrorKind::DeviceLost);
  EXPECT_FALSE(error.injected);
  EXPECT_EQ(describe_code(CUDA_ERROR_ILLEGAL_ADDRESS), "CUDA_ERROR_ILLEGAL_ADDRESS (700)");
}

TEST(CudaKernels, TheBuiltinTableFollowsTheSimulatorsAbi) {
  const auto kernels = builtin_kernels();
  ASSERT_EQ(kernels.size(), 6U);
  const auto fill = find_builtin_kernel("fill");
  ASSERT_TRUE(fill.has_value());
  EXPECT_EQ(fill->binding_count, 1U);
  EXPECT_EQ(fill->parameter_bytes, 4U);
  EXPECT_EQ(find_builtin_kernel("checksum")->binding_bytes_min[1], 8U);
  EXPECT_EQ(find_builtin_kernel("delay")->parameter_bytes, 8U);
  EXPECT_EQ(find_builtin_kernel("fault")->binding_count, 1U);
  EXPECT_FALSE(find_builtin_kernel("no-such-kernel").has_value());
  EXPECT_EQ(builtin_kernel_index("saxpy"), 2);
  EXPECT_EQ(builtin_kernel_index("no-such-kernel"), -1);
}

TEST(CudaKernels, TheFatbinIsEmbedded) {
  const EmbeddedImage image = embedded_kernels();
#ifdef QUIESCE_CUDA_EXPECT_KERNELS
  ASSERT_TRUE(image.present()) << image.absent_reason;
#endif
  if (!image.present()) {
    EXPECT_FALSE(image.absent_reason.empty());
    GTEST_SKIP() << "this build has no embedded kernels: " << image.absent_reason;
  }
  ASSERT_GE(image.fatbin.size(), 1024U);
  // A fatbin starts with the magic 0xBA55ED50 (little endian) followed by its version.
  std::uint32_t magic = 0;
  std::memcpy(&magic, image.fatbin.data(), sizeof(magic));
  EXPECT_EQ(magic, 0xBA55ED50U);
  // Every builtin's entry point is named in the image (cubin symbol tables and PTX text both carry it).
  const std::string bytes(reinterpret_cast<const char*>(image.fatbin.data()), image.fatbin.size());
  for (const BuiltinKernel& kernel : builtin_kernels()) {
    EXPECT_NE(bytes.find(std::string(kernel.symbol)), std::string::npos) << kernel.symbol;
  }
  EXPECT_NE(image.targets.find("sm_90"), std::string_view::npos);
}

TEST(CudaInfo, InfoCommandReportsKernelsAndDriverState) {
  std::ostringstream out;
  const int status = info_command(out);
  const std::string text = out.str();
  EXPECT_NE(text.find("cuda kernels: "), std::string::npos) << text;
  if (status == kExitNoDriver) {
    EXPECT_NE(text.find("no CUDA driver: "), std::string::npos) << text;
  } else {
    EXPECT_EQ(status, kExitOk);
    EXPECT_NE(text.find("device 0: "), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace quiesce::cuda
