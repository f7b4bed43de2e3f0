// `quiesce info`'s CUDA part: what this build and this machine offer the CUDA backend.
#pragma once

#include <ostream>

namespace quiesce::cuda {

// Exit statuses shared by the CUDA commands (DESIGN §8).
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;  // bad usage or input, such as an output path that cannot take a file
inline constexpr int kExitNoDriver = 3;

// Prints the embedded kernel image (or why there is none), the driver (or "no CUDA driver: <reason>") and
// every visible GPU with its capabilities and limits. Returns kExitOk, or kExitNoDriver without a driver.
int info_command(std::ostream& out);

}  // namespace quiesce::cuda
