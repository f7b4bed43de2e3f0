// The two multi-byte varint readers of varint_read.h and the pick between them.
#include "varint_read.h"

#include <bit>
#include <cstring>

#include "binary_field_reader.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace quiesce::traces::detail {

VarintRead read_multibyte_varint_portable(const std::byte* at, const std::byte* end) {
  VarintRead read{nullptr, 0};
  if (end - at < 10) [[unlikely]] return read;
  const unsigned length = read_varint_word(at, read.value);
  if (length != 0) [[likely]] read.next = at + length;
  return read;
}

#if defined(__x86_64__)

// read_varint_word's stop search, then one PEXT of the varint's bytes under the 7-bit group mask.
[[gnu::target("bmi2")]] VarintRead read_multibyte_varint_pext(const std::byte* at, const std::byte* end) {
  VarintRead read{nullptr, 0};
  if (end - at < 10) [[unlikely]] return read;
  std::uint64_t word = 0;
  std::memcpy(&word, at, sizeof(word));
  const std::uint64_t stops = ~word & 0x8080808080808080ULL;
  if (stops == 0) [[unlikely]] return read;
  const auto last_bit = static_cast<unsigned>(std::countr_zero(stops));  // 8 * the varint's length - 1
  // 2 << 63 wraps to 0: an 8-byte varint keeps the whole word.
  read.value = _pext_u64(word & ((std::uint64_t{2} << last_bit) - 1), 0x7F7F7F7F7F7F7F7FULL);
  read.next = at + last_bit / 8 + 1;
  return read;
}

bool has_bmi2() { return __builtin_cpu_supports("bmi2") != 0; }

bool pext_is_fast() {
  if (!has_bmi2()) return false;
  if (__builtin_cpu_is("amd") == 0) return true;
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  const unsigned base_family = (eax >> 8U) & 0xFU;
  const unsigned family = base_family == 0xFU ? base_family + ((eax >> 20U) & 0xFFU) : base_family;
  return family >= 0x19U;  // Zen 3 and later; Zen 1 and 2 (17h) and earlier microcode PEXT
}

#else

VarintRead read_multibyte_varint_pext(const std::byte* at, const std::byte* end) { return read_multibyte_varint_portable(at, end); }
bool has_bmi2() { return false; }
bool pext_is_fast() { return false; }

#endif

namespace {

VarintRead pick_and_read(const std::byte* at, const std::byte* end) {
  const MultibyteVarintReader reader = pext_is_fast() ? read_multibyte_varint_pext : read_multibyte_varint_portable;
  multibyte_varint_reader.store(reader, std::memory_order_relaxed);
  return reader(at, end);
}

}  // namespace

std::atomic<MultibyteVarintReader> multibyte_varint_reader{pick_and_read};

}  // namespace quiesce::traces::detail
