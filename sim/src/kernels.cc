// The builtin kernels on host backing; the ABI is docs/kernels.md.
#include "quiesce/sim/kernels.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdint>
#include <cstring>

namespace quiesce::sim {
namespace {

// Words are little-endian by the ABI; on a little-endian host that is a plain copy.
std::uint32_t load_u32(const std::byte* bytes) {
  if constexpr (std::endian::native == std::endian::little) {
    std::uint32_t value = 0;
    std::memcpy(&value, bytes, sizeof(value));
    return value;
  }
  return std::to_integer<std::uint32_t>(bytes[0]) | (std::to_integer<std::uint32_t>(bytes[1]) << 8U) |
         (std::to_integer<std::uint32_t>(bytes[2]) << 16U) | (std::to_integer<std::uint32_t>(bytes[3]) << 24U);
}

std::uint64_t load_u64(const std::byte* bytes) {
  return std::uint64_t{load_u32(bytes)} | (std::uint64_t{load_u32(bytes + 4)} << 32U);
}

void store_u32(std::byte* bytes, std::uint32_t value) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(bytes, &value, sizeof(value));
    return;
  }
  for (unsigned i = 0; i < 4; ++i) bytes[i] = static_cast<std::byte>(value >> (8U * i));
}

void store_u64(std::byte* bytes, std::uint64_t value) {
  store_u32(bytes, static_cast<std::uint32_t>(value));
  store_u32(bytes + 4, static_cast<std::uint32_t>(value >> 32U));
}

std::uint64_t words_of(std::uint64_t bytes) { return bytes / 4; }

// The fill kernel stores this many words one by one before it copies them (see run_kernel).
constexpr std::uint64_t kFillWordsStoredMax = 16;

}  // namespace

std::optional<BuiltinKernel> builtin_kernel(std::string_view name) {
  if (name == "fill") return BuiltinKernel::Fill;
  if (name == "copy") return BuiltinKernel::Copy;
  if (name == "saxpy") return BuiltinKernel::Saxpy;
  if (name == "checksum") return BuiltinKernel::Checksum;
  if (name == "delay") return BuiltinKernel::Delay;
  if (name == "fault") return BuiltinKernel::Fault;
  return std::nullopt;
}

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

const char* check_kernel_abi(BuiltinKernel kernel, std::span<const std::uint64_t> binding_bytes,
                             std::size_t parameter_bytes) {
  switch (kernel) {
    case BuiltinKernel::Fill:
      if (binding_bytes.size() != 1) return "the fill kernel takes exactly one binding";
      if (parameter_bytes != 4) return "the fill kernel takes exactly 4 parameter bytes (u32 value)";
      return nullptr;
    case BuiltinKernel::Copy:
      if (binding_bytes.size() != 2) return "the copy kernel takes exactly two bindings";
      if (parameter_bytes != 0) return "the copy kernel takes no parameters";
      return nullptr;
    case BuiltinKernel::Saxpy:
      if (binding_bytes.size() != 2) return "the saxpy kernel takes exactly two bindings";
      if (parameter_bytes != 4) return "the saxpy kernel takes exactly 4 parameter bytes (u32 a)";
      return nullptr;
    case BuiltinKernel::Checksum:
      if (binding_bytes.size() != 2) return "the checksum kernel takes exactly two bindings";
      if (parameter_bytes != 0) return "the checksum kernel takes no parameters";
      if (binding_bytes[1] < 8) return "the checksum kernel's output binding is smaller than 8 bytes";
      return nullptr;
    case BuiltinKernel::Delay:
      if (parameter_bytes != 8) return "the delay kernel takes exactly 8 parameter bytes (u64 duration_ns)";
      return nullptr;
    case BuiltinKernel::Fault:
      if (binding_bytes.size() != 1) return "the fault kernel takes exactly one binding";
      if (parameter_bytes != 0) return "the fault kernel takes no parameters";
      return nullptr;
  }
  return "the kernel is not a builtin kernel";
}

BindingTouch binding_touch(BuiltinKernel kernel, std::span<const std::uint64_t> binding_bytes, std::size_t index) {
  assert(index < binding_bytes.size());
  switch (kernel) {
    case BuiltinKernel::Fill:
      return BindingTouch{0, words_of(binding_bytes[0]) * 4};
    case BuiltinKernel::Copy: {
      const std::uint64_t bytes = std::min(binding_bytes[0], binding_bytes[1]);
      return index == 0 ? BindingTouch{bytes, 0} : BindingTouch{0, bytes};
    }
    case BuiltinKernel::Saxpy: {
      const std::uint64_t bytes = std::min(words_of(binding_bytes[0]), words_of(binding_bytes[1])) * 4;
      return index == 0 ? BindingTouch{bytes, 0} : BindingTouch{bytes, bytes};
    }
    case BuiltinKernel::Checksum:
      return index == 0 ? BindingTouch{words_of(binding_bytes[0]) * 4, 0} : BindingTouch{0, 8};
    case BuiltinKernel::Delay:
    case BuiltinKernel::Fault:
      return BindingTouch{};
  }
  return BindingTouch{};
}

std::uint64_t kernel_delay_ns(BuiltinKernel kernel, std::span<const std::byte> parameters) {
  if (kernel != BuiltinKernel::Delay) return 0;
  assert(parameters.size() == 8);
  return load_u64(parameters.data());
}

bool run_kernel(BuiltinKernel kernel, std::span<const std::span<std::byte>> bindings,
                std::span<const std::byte> parameters) {
  switch (kernel) {
    case BuiltinKernel::Fill: {
      assert(bindings.size() == 1 && parameters.size() == 4);
      // The bound is read once: stores through std::byte may alias the span, and would make it reread.
      const std::uint32_t value = load_u32(parameters.data());
      std::byte* out = bindings[0].data();
      const std::uint64_t words = words_of(bindings[0].size());
      // The first words are stored one by one, then the words filled so far are copied after themselves,
      // doubling each time: memcpy stores far more than a word a cycle, and the bytes are the same.
      const std::uint64_t first = std::min<std::uint64_t>(words, kFillWordsStoredMax);
      for (std::uint64_t word = 0; word < first; ++word) store_u32(out + 4 * word, value);
      for (std::uint64_t filled = first; filled < words;) {
        const std::uint64_t copied = std::min(filled, words - filled);
        std::memcpy(out + 4 * filled, out, 4 * copied);
        filled += copied;
      }
      return false;
    }
    case BuiltinKernel::Copy: {
      assert(bindings.size() == 2);
      const std::size_t bytes = std::min(bindings[0].size(), bindings[1].size());
      if (bytes > 0) std::memmove(bindings[1].data(), bindings[0].data(), bytes);
      return false;
    }
    case BuiltinKernel::Saxpy: {
      assert(bindings.size() == 2 && parameters.size() == 4);
      const std::uint32_t a = load_u32(parameters.data());
      const std::uint64_t words = std::min(words_of(bindings[0].size()), words_of(bindings[1].size()));
      const std::byte* x_bytes = bindings[0].data();
      std::byte* y_bytes = bindings[1].data();
      for (std::uint64_t i = 0; i < words; ++i) {
        const std::uint32_t x = load_u32(x_bytes + 4 * i);
        const std::uint32_t y = load_u32(y_bytes + 4 * i);
        store_u32(y_bytes + 4 * i, a * x + y);
      }
      return false;
    }
    case BuiltinKernel::Checksum: {
      assert(bindings.size() == 2 && bindings[1].size() >= 8);
      const std::byte* in = bindings[0].data();
      const std::uint64_t words = words_of(bindings[0].size());
      std::uint64_t sum = 0;
      if (words <= UINT32_MAX) {
        // Every weight (i + 1) fits 32 bits, so each term is one 32 x 32 -> 64-bit product: a loop the
        // compiler vectorizes (see CMakeLists.txt). Only a binding of 16 GiB or more takes the loop below.
        for (std::uint64_t i = 0; i < words; ++i) {
          sum += std::uint64_t{static_cast<std::uint32_t>(i + 1)} * std::uint64_t{load_u32(in + 4 * i)};
        }
      } else {
        for (std::uint64_t i = 0; i < words; ++i) sum += (i + 1) * std::uint64_t{load_u32(in + 4 * i)};
      }
      store_u64(bindings[1].data(), sum);
      return false;
    }
    case BuiltinKernel::Delay:
      return false;
    case BuiltinKernel::Fault:
      return true;
  }
  return false;
}

}  // namespace quiesce::sim
