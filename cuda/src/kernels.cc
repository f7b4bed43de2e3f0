// The builtin kernel table: names, entry points and the binding and parameter ABI of each.
#include "quiesce/cuda/kernels.h"

#include <array>

namespace quiesce::cuda {
namespace {

// The ABI of docs/kernels.md (sim/src/kernels.cc checks the same counts and sizes).
constexpr std::array kBuiltins = {
    BuiltinKernel{"fill", "quiesce_fill", 1, false, 0b00, 0b01, 4, {0, 0}},
    BuiltinKernel{"copy", "quiesce_copy", 2, false, 0b01, 0b10, 0, {0, 0}},
    BuiltinKernel{"saxpy", "quiesce_saxpy", 2, false, 0b11, 0b10, 4, {0, 0}},
    BuiltinKernel{"checksum", "quiesce_checksum", 2, false, 0b01, 0b10, 0, {0, 8}},
    BuiltinKernel{"delay", "quiesce_delay", 0, true, 0b00, 0b00, 8, {0, 0}},
    BuiltinKernel{"fault", "quiesce_fault", 1, false, 0b00, 0b00, 0, {0, 0}},
};

}  // namespace

std::span<const BuiltinKernel> builtin_kernels() { return kBuiltins; }

std::optional<BuiltinKernel> find_builtin_kernel(std::string_view name) {
  for (const BuiltinKernel& kernel : kBuiltins) {
    if (kernel.name == name) return kernel;
  }
  return std::nullopt;
}

int builtin_kernel_index(std::string_view name) {
  for (std::size_t index = 0; index < kBuiltins.size(); ++index) {
    if (kBuiltins[index].name == name) return static_cast<int>(index);
  }
  return -1;
}

}  // namespace quiesce::cuda
