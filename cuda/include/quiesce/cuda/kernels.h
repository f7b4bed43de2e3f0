// The builtin kernels: the simulator's kernel library (docs/kernels.md) compiled for the GPU.
//
// nvcc builds cuda/kernels/builtin.cu at build time into a fatbin (cubin for sm_90 plus PTX for newer
// GPUs), and CMake embeds its bytes in the library. A build without nvcc still builds the backend, with no
// embedded kernels; embedded_kernels() then says so and Builtin program loads answer Unsupported.
//
// The launch ABI (every kernel, builtin or user-supplied): the kernel's parameters are, in order, one
// {u64 device address, u64 byte size} pair per binding, then the launch's parameter bytes verbatim. The
// Device packs exactly that into one parameter buffer (CU_LAUNCH_PARAM_BUFFER_POINTER). The builtin
// kernels cover every byte of their bindings whatever the launch dimensions (grid-stride loops), so a result
// never depends on the grid, exactly as in the simulator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "quiesce/core/types.h"

namespace quiesce::cuda {

inline constexpr std::uint32_t kBuiltinBindingsMax = 2;

struct BuiltinKernel {
  std::string_view name;    // the simulator's name: "fill"
  std::string_view symbol;  // the entry point in the module: "quiesce_fill"
  std::uint32_t binding_count;
  bool any_binding_count;   // delay ignores its bindings, however many
  std::uint8_t reads_mask;  // bit i: the kernel reads binding i (its access mode must read)
  std::uint8_t writes_mask; // bit i: the kernel writes binding i (its access mode must write)
  std::uint32_t parameter_bytes;
  std::uint64_t binding_bytes_min[kBuiltinBindingsMax];  // checksum's out needs 8 bytes
};

// fill, copy, saxpy, checksum, delay, fault: the simulator's names, in that order.
std::span<const BuiltinKernel> builtin_kernels();
std::optional<BuiltinKernel> find_builtin_kernel(std::string_view name);
int builtin_kernel_index(std::string_view name);  // -1 when there is none of that name

struct EmbeddedImage {
  std::span<const std::byte> fatbin;  // empty when the build had no nvcc
  std::string_view targets;          // "sm_90 cubin + compute_90 PTX"
  std::string_view absent_reason;    // why there are no kernels; empty when present
  bool present() const { return !fatbin.empty(); }
};

EmbeddedImage embedded_kernels();

}  // namespace quiesce::cuda
