// Host reference of the builtin kernels (docs/kernels.md): what a launch does to the bytes it binds.
//
// Workloads keep a host model of every buffer and check reads against it; the differential HIL run uses
// the same model to tell a simulator bug from a hardware divergence. Integer arithmetic only.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace quiesce::properties {

enum class BuiltinKernel : std::uint8_t { Fill, Copy, Saxpy, Checksum, Delay, Fault };

inline constexpr BuiltinKernel kBuiltinKernels[] = {BuiltinKernel::Fill,     BuiltinKernel::Copy,
                                                    BuiltinKernel::Saxpy,    BuiltinKernel::Checksum,
                                                    BuiltinKernel::Delay,    BuiltinKernel::Fault};

std::string_view kernel_name(BuiltinKernel kernel);

// Applies one launch of `kernel` to host copies of its bindings, in binding order, with little-endian
// parameters. Returns false when the bindings or parameters do not fit the kernel's ABI.
bool apply_kernel(BuiltinKernel kernel, std::span<std::vector<std::uint8_t>* const> bindings,
                  std::span<const std::byte> parameters);

}  // namespace quiesce::properties
