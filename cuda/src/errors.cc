// The CUresult table: quiesce's own, so error mapping works (and is tested) without a driver.
#include "quiesce/cuda/errors.h"

#include <array>
#include <string>

namespace quiesce::cuda {
namespace {

using K = ErrorKind;

struct Row {
  int code;
  std::string_view name;
  ErrorKind kind;
  bool sticky;
  bool retryable;
};

// Codes the driver documents for the calls quiesce makes. Sticky rows follow the driver documentation:
// "the context cannot be used, so it must be destroyed (and a new one should be created)".
constexpr std::array kRows = {
    Row{1, "CUDA_ERROR_INVALID_VALUE", K::InvalidArgument, false, false},
    Row{2, "CUDA_ERROR_OUT_OF_MEMORY", K::OutOfMemory, false, true},
    Row{3, "CUDA_ERROR_NOT_INITIALIZED", K::Internal, false, false},
    Row{4, "CUDA_ERROR_DEINITIALIZED", K::DeviceLost, true, false},
    Row{34, "CUDA_ERROR_STUB_LIBRARY", K::Unsupported, false, false},
    Row{36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", K::Unsupported, false, false},
    Row{46, "CUDA_ERROR_DEVICE_UNAVAILABLE", K::Busy, false, true},
    Row{100, "CUDA_ERROR_NO_DEVICE", K::Unsupported, false, false},
    Row{101, "CUDA_ERROR_INVALID_DEVICE", K::InvalidArgument, false, false},
    Row{200, "CUDA_ERROR_INVALID_IMAGE", K::Incompatible, false, false},
    Row{201, "CUDA_ERROR_INVALID_CONTEXT", K::Incompatible, false, false},
    Row{209, "CUDA_ERROR_NO_BINARY_FOR_GPU", K::Incompatible, false, false},
    Row{214, "CUDA_ERROR_ECC_UNCORRECTABLE", K::DeviceLost, true, false},
    Row{218, "CUDA_ERROR_INVALID_PTX", K::Incompatible, false, false},
    Row{220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", K::DeviceLost, true, false},
    Row{221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", K::Incompatible, false, false},
    Row{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", K::Incompatible, false, false},
    Row{223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", K::Incompatible, false, false},
    Row{300, "CUDA_ERROR_INVALID_SOURCE", K::Incompatible, false, false},
    Row{400, "CUDA_ERROR_INVALID_HANDLE", K::InvalidArgument, false, false},
    Row{401, "CUDA_ERROR_ILLEGAL_STATE", K::InvalidArgument, false, false},
    Row{500, "CUDA_ERROR_NOT_FOUND", K::InvalidArgument, false, false},
    Row{600, "CUDA_ERROR_NOT_READY", K::Busy, false, true},
    Row{700, "CUDA_ERROR_ILLEGAL_ADDRESS", K::DeviceLost, true, false},
    Row{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", K::InvalidArgument, false, false},
    Row{702, "CUDA_ERROR_LAUNCH_TIMEOUT", K::DeviceLost, true, false},
    Row{709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", K::DeviceLost, true, false},
    Row{710, "CUDA_ERROR_ASSERT", K::DeviceLost, true, false},
    Row{714, "CUDA_ERROR_HARDWARE_STACK_ERROR", K::DeviceLost, true, false},
    Row{715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", K::DeviceLost, true, false},
    Row{716, "CUDA_ERROR_MISALIGNED_ADDRESS", K::DeviceLost, true, false},
    Row{717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", K::DeviceLost, true, false},
    Row{718, "CUDA_ERROR_INVALID_PC", K::DeviceLost, true, false},
    Row{719, "CUDA_ERROR_LAUNCH_FAILED", K::DeviceLost, true, false},
    Row{720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", K::InvalidArgument, false, false},
    Row{800, "CUDA_ERROR_NOT_PERMITTED", K::PermissionDenied, false, false},
    Row{801, "CUDA_ERROR_NOT_SUPPORTED", K::Unsupported, false, false},
    Row{802, "CUDA_ERROR_SYSTEM_NOT_READY", K::Unsupported, false, false},
    Row{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", K::Incompatible, false, false},
    Row{900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", K::InvalidArgument, false, false},
    Row{901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", K::InvalidArgument, false, false},
    Row{902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", K::InvalidArgument, false, false},
    Row{903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", K::InvalidArgument, false, false},
    Row{904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", K::InvalidArgument, false, false},
    Row{905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", K::InvalidArgument, false, false},
    Row{906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", K::InvalidArgument, false, false},
    Row{907, "CUDA_ERROR_CAPTURED_EVENT", K::InvalidArgument, false, false},
    Row{908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", K::InvalidArgument, false, false},
    Row{909, "CUDA_ERROR_TIMEOUT", K::Timeout, false, true},
    Row{999, "CUDA_ERROR_UNKNOWN", K::Internal, false, false},
};

}  // namespace

CodeInfo code_info(CUresult code) {
  const int value = static_cast<int>(code);
  for (const Row& row : kRows) {
    if (row.code == value) return CodeInfo{code, row.name, row.kind, row.sticky, row.retryable};
  }
  return CodeInfo{code, "CUDA_ERROR_<unknown>", ErrorKind::Internal, false, false};
}

Error cuda_error(CUresult code, std::string_view what) {
  const CodeInfo info = code_info(code);
  return Error{info.kind, NativeDomain::Cuda, static_cast<std::int32_t>(code), false, info.retryable, what};
}

std::string describe_code(CUresult code) {
  return std::string(code_info(code).name) + " (" + std::to_string(static_cast<int>(code)) + ")";
}

}  // namespace quiesce::cuda
