// Host reference of the builtin kernels; see docs/kernels.md for the ABI.
#include "quiesce/properties/kernel_model.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

namespace quiesce::properties {
namespace {

// Little-endian words; on a little-endian host one memcpy each, which the compiler turns into a plain load
// or store (the byte-by-byte form was not merged, and the kernels spent most of their time in it).
std::uint32_t load_u32(const std::uint8_t* bytes) {
  if constexpr (std::endian::native == std::endian::little) {
    std::uint32_t value = 0;
    std::memcpy(&value, bytes, 4);
    return value;
  }
  return std::uint32_t{bytes[0]} | (std::uint32_t{bytes[1]} << 8U) | (std::uint32_t{bytes[2]} << 16U) |
         (std::uint32_t{bytes[3]} << 24U);
}

void store_u32(std::uint8_t* bytes, std::uint32_t value) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(bytes, &value, 4);
    return;
  }
  for (unsigned i = 0; i < 4; ++i) bytes[i] = static_cast<std::uint8_t>(value >> (8U * i));
}

std::uint32_t parameter_u32(std::span<const std::byte> parameters) {
  std::uint8_t bytes[4];
  std::memcpy(bytes, parameters.data(), 4);
  return load_u32(bytes);
}

}  // namespace

std::string_view kernel_name(BuiltinKernel kernel) {
  switch (kernel) {
    case BuiltinKernel::Fill: return "fill";
    case BuiltinKernel::Copy: return "copy";
    case BuiltinKernel::Saxpy: return "saxpy";
    case BuiltinKernel::Checksum: return "checksum";
    case BuiltinKernel::Delay: return "delay";
    case BuiltinKernel::Fault: return "fault";
  }
  return "unknown";
}

bool apply_kernel(BuiltinKernel kernel, std::span<std::vector<std::uint8_t>* const> bindings,
                  std::span<const std::byte> parameters) {
  switch (kernel) {
    // The kernels read each vector's data and size once: a store through a byte pointer may alias the
    // vector itself, so a loop bound or base read through the vector would be read again every iteration.
    case BuiltinKernel::Fill: {
      if (bindings.size() != 1 || parameters.size() != 4) return false;
      std::uint8_t* out = bindings[0]->data();
      const std::size_t words = bindings[0]->size() / 4;
      const std::uint32_t value = parameter_u32(parameters);
      for (std::size_t word = 0; word < words; ++word) store_u32(out + 4 * word, value);
      return true;
    }
    case BuiltinKernel::Copy: {
      if (bindings.size() != 2 || !parameters.empty()) return false;
      const std::size_t bytes = std::min(bindings[0]->size(), bindings[1]->size());
      std::memmove(bindings[1]->data(), bindings[0]->data(), bytes);
      return true;
    }
    case BuiltinKernel::Saxpy: {
      if (bindings.size() != 2 || parameters.size() != 4) return false;
      const std::uint32_t a = parameter_u32(parameters);
      const std::size_t words = std::min(bindings[0]->size(), bindings[1]->size()) / 4;
      const std::uint8_t* x_bytes = bindings[0]->data();
      std::uint8_t* y_bytes = bindings[1]->data();
      for (std::size_t i = 0; i < words; ++i) {
        const std::uint32_t x = load_u32(x_bytes + 4 * i);
        const std::uint32_t y = load_u32(y_bytes + 4 * i);
        store_u32(y_bytes + 4 * i, a * x + y);
      }
      return true;
    }
    case BuiltinKernel::Checksum: {
      if (bindings.size() != 2 || !parameters.empty() || bindings[1]->size() < 8) return false;
      std::uint64_t sum = 0;
      const std::uint8_t* in = bindings[0]->data();
      const std::size_t words = bindings[0]->size() / 4;
      if (words <= UINT32_MAX) {
        // Weights that fit 32 bits make each term one 32 x 32 -> 64-bit product, which vectorizes (see
        // CMakeLists.txt); the sum is the same.
        for (std::size_t i = 0; i < words; ++i) {
          sum += std::uint64_t{static_cast<std::uint32_t>(i + 1)} * std::uint64_t{load_u32(in + 4 * i)};
        }
      } else {
        for (std::size_t i = 0; i < words; ++i) sum += (i + 1) * std::uint64_t{load_u32(in + 4 * i)};
      }
      for (unsigned i = 0; i < 8; ++i) (*bindings[1])[i] = static_cast<std::uint8_t>(sum >> (8U * i));
      return true;
    }
    case BuiltinKernel::Delay:
      return parameters.size() == 8;
    case BuiltinKernel::Fault:
      return bindings.size() == 1 && parameters.empty();
  }
  return false;
}

}  // namespace quiesce::properties
