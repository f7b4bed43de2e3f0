// The builtin kernels: named C++ functions that compute on the host backing of their bindings.
//
// Their ABI is docs/kernels.md, which the CUDA kernels follow byte for byte: parameters are little-endian
// bytes, words are u32 little-endian, arithmetic is mod 2^32 / 2^64, and a kernel's bindings are whole
// buffers (a binding's size is the buffer's requested size). The ABI also says which bindings a kernel reads
// and writes: the oracle compares that with the access mode each binding was bound with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace quiesce::sim {

enum class BuiltinKernel : std::uint8_t { Fill, Copy, Saxpy, Checksum, Delay, Fault };

std::optional<BuiltinKernel> builtin_kernel(std::string_view name);
std::string_view kernel_name(BuiltinKernel kernel);

// Checks the binding count, the binding sizes and the parameter bytes against the ABI. Returns nullptr when
// they fit, else a static sentence naming what does not.
const char* check_kernel_abi(BuiltinKernel kernel, std::span<const std::uint64_t> binding_bytes,
                             std::size_t parameter_bytes);

// The byte prefix of binding `index` the kernel reads and the prefix it writes (0: none).
struct BindingTouch {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
};
BindingTouch binding_touch(BuiltinKernel kernel, std::span<const std::uint64_t> binding_bytes, std::size_t index);

// The extra time a delay kernel asks for. (The bytes a kernel moves, for the cost model, are the sum of
// its bindings' touches: Device::apply_launch adds them up as it asks for each.)
std::uint64_t kernel_delay_ns(BuiltinKernel kernel, std::span<const std::byte> parameters);

// Runs the kernel on the bindings' bytes. The ABI must have been checked. Returns true when the kernel
// faults (the `fault` kernel dereferences an illegal address), in which case nothing was written.
bool run_kernel(BuiltinKernel kernel, std::span<const std::span<std::byte>> bindings,
                std::span<const std::byte> parameters);

}  // namespace quiesce::sim
