// CUresult → quiesce::Error: the one mapping from driver codes to the contract's error taxonomy.
//
// The table is quiesce's own, so it works without a driver (a test checks it on a machine with none).
// Sticky codes (ILLEGAL_ADDRESS 700, LAUNCH_TIMEOUT 702, 714–719, ECC_UNCORRECTABLE 214, CONTEXT_IS_DESTROYED
// 709) mean the context is unusable: every later call on it fails, so the Device marks it lost and fails
// closed with DeviceLost from then on.
#pragma once

#include <cuda.h>

#include <string_view>

#include "quiesce/core/result.h"

namespace quiesce::cuda {

struct CodeInfo {
  CUresult code = CUDA_SUCCESS;
  std::string_view name = {};  // "CUDA_ERROR_OUT_OF_MEMORY"; "CUDA_ERROR_<unknown>" for codes not in the table
  ErrorKind kind = ErrorKind::Internal;
  bool sticky = false;     // the context is lost: nothing on it will succeed again
  bool retryable = false;  // the same call may succeed later (out of memory, not ready)
};

// What quiesce knows about a driver code. Never fails: an unknown code maps to Internal, not sticky.
CodeInfo code_info(CUresult code);

inline bool is_sticky(CUresult code) { return code_info(code).sticky; }

// The contract error of a failed driver call. `what` names the call site and must be a static string.
Error cuda_error(CUresult code, std::string_view what);

// "CUDA_ERROR_OUT_OF_MEMORY (2)" for a code, for reports.
std::string describe_code(CUresult code);

}  // namespace quiesce::cuda
