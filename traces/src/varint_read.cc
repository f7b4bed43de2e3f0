// The out-of-line readers of varint_read.h (for its tests) and the pick between the two readings.
#include "varint_read.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace quiesce::traces::detail {

VarintRead read_multibyte_varint_portable(const std::byte* at, const std::byte* end) {
  VarintRead read{nullptr, 0};
  if (end - at < 10) [[unlikely]] return read;
  const unsigned length = read_varint_word(at, read.value);
  if (length != 0) [[likely]] read.next = at + length;
  return read;
}

VarintRead read_multibyte_varint_pext(const std::byte* at, const std::byte* end) {
  VarintRead read{nullptr, 0};
  if (end - at < 10) [[unlikely]] return read;
  const unsigned length = read_varint_word_pext(at, read.value);
  if (length != 0) [[likely]] read.next = at + length;
  return read;
}

#if defined(__x86_64__)

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

bool has_bmi2() { return false; }
bool pext_is_fast() { return false; }

#endif

const bool varint_words_by_pext = pext_is_fast();

}  // namespace quiesce::traces::detail
