// Reading a varint of 2 to 8 bytes as one little-endian word (binary_visitors.cc's decoder, inline).
// Two ways that give the same answer: the portable one packs the 7-bit groups in three steps
// (read_varint_word); where the CPU has a fast PEXT (BMI2; not AMD before family 19h, whose PEXT is
// microcoded), one PEXT packs them (read_varint_word_pext). Which one the decoder takes is read once for
// the process (varint_words_by_pext) and tested at each multi-byte varint, a branch that always goes the
// same way. The PEXT is inline assembly: a function compiled for BMI2 cannot be inlined into the decoder,
// which is compiled for every x86-64, and a call per varint is what this replaces. Internal to traces/;
// tests/traces/varint_read_test.cc checks the readers against each other and a byte-by-byte reading.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace quiesce::traces::detail {

static_assert(std::endian::native == std::endian::little, "the decoder reads varints as little-endian words");

// The varint at `at`, read as one little-endian word, where at least 8 bytes can be read: its length when
// it is 1 to 8 bytes long, 0 for a longer one. Its last byte is the first without the continuation bit, and
// the 7-bit groups are packed together in three steps (fewer instructions than placing each byte on its
// own, and a decode runs at about 260 instructions a record).
[[gnu::always_inline]] inline unsigned read_varint_word(const std::byte* at, std::uint64_t& value) {
  std::uint64_t word = 0;
  std::memcpy(&word, at, sizeof(word));
  const std::uint64_t stops = ~word & 0x8080808080808080ULL;
  if (stops == 0) [[unlikely]] return 0;
  const auto last_bit = static_cast<unsigned>(std::countr_zero(stops));  // 8 * the varint's length - 1
  // The varint's bytes: 2 << 63 wraps to 0, so 8 bytes keep the whole word.
  std::uint64_t groups = word & ((std::uint64_t{2} << last_bit) - 1) & 0x7F7F7F7F7F7F7F7FULL;
  groups = ((groups & 0x7F007F007F007F00ULL) >> 1U) | (groups & 0x007F007F007F007FULL);
  groups = ((groups & 0x3FFF00003FFF0000ULL) >> 2U) | (groups & 0x00003FFF00003FFFULL);
  groups = ((groups & 0x0FFFFFFF00000000ULL) >> 4U) | (groups & 0x000000000FFFFFFFULL);
  value = groups;
  return last_bit / 8 + 1;
}

// The same with one PEXT of the varint's bytes under the 7-bit group mask. Only where has_bmi2() (an
// illegal instruction elsewhere); off x86-64 it is read_varint_word.
[[gnu::always_inline]] inline unsigned read_varint_word_pext(const std::byte* at, std::uint64_t& value) {
#if defined(__x86_64__)
  std::uint64_t word = 0;
  std::memcpy(&word, at, sizeof(word));
  const std::uint64_t stops = ~word & 0x8080808080808080ULL;
  if (stops == 0) [[unlikely]] return 0;
  const auto last_bit = static_cast<unsigned>(std::countr_zero(stops));
  const std::uint64_t bytes = word & ((std::uint64_t{2} << last_bit) - 1);
  std::uint64_t packed = 0;
  asm("pextq %2, %1, %0" : "=r"(packed) : "r"(bytes), "r"(0x7F7F7F7F7F7F7F7FULL));
  value = packed;
  return last_bit / 8 + 1;
#else
  return read_varint_word(at, value);
#endif
}

bool has_bmi2();
// BMI2 and a PEXT that is not microcoded.
bool pext_is_fast();

// pext_is_fast(), read once when the library is loaded. Before that (a decode from another static
// initializer) it is false, and the portable reading gives the same values.
extern const bool varint_words_by_pext;

// The word reading the decoder takes.
[[gnu::always_inline]] inline unsigned read_varint_word_picked(const std::byte* at, std::uint64_t& value) {
  return varint_words_by_pext ? read_varint_word_pext(at, value) : read_varint_word(at, value);
}

// The position after the varint and its value; next is null for a varint longer than 8 bytes or one with
// fewer than 10 bytes left (the exact field reader takes those).
struct VarintRead {
  const std::byte* next;
  std::uint64_t value;
};
using MultibyteVarintReader = VarintRead (*)(const std::byte* at, const std::byte* end);

[[gnu::always_inline]] inline VarintRead read_multibyte_varint(const std::byte* at, const std::byte* end) {
  VarintRead read{nullptr, 0};
  if (end - at < 10) [[unlikely]] return read;
  const unsigned length = read_varint_word_picked(at, read.value);
  if (length != 0) [[likely]] read.next = at + length;
  return read;
}

// Each reading on its own, out of line, for the tests. The PEXT one only where has_bmi2().
VarintRead read_multibyte_varint_portable(const std::byte* at, const std::byte* end);
VarintRead read_multibyte_varint_pext(const std::byte* at, const std::byte* end);

}  // namespace quiesce::traces::detail
