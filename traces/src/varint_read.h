// Reading a varint of 2 to 8 bytes as one little-endian word (binary_visitors.cc's decoder, out of line).
// Two ways that give the same answer: the portable one packs the 7-bit groups in three steps
// (read_varint_word); where the CPU has a fast PEXT (BMI2; not AMD before family 19h, whose PEXT is
// microcoded), one PEXT packs them. The first call picks one for the process. Internal to traces/;
// tests/traces/varint_read_test.cc checks the two against each other and against a byte-by-byte reading.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace quiesce::traces::detail {

// The position after the varint and its value; next is null for a varint longer than 8 bytes or one with
// fewer than 10 bytes left (the exact field reader takes those).
struct VarintRead {
  const std::byte* next;
  std::uint64_t value;
};
using MultibyteVarintReader = VarintRead (*)(const std::byte* at, const std::byte* end);

VarintRead read_multibyte_varint_portable(const std::byte* at, const std::byte* end);
// Only where has_bmi2() (an illegal instruction elsewhere).
VarintRead read_multibyte_varint_pext(const std::byte* at, const std::byte* end);
bool has_bmi2();
// BMI2 and a PEXT that is not microcoded: the reader read_multibyte_varint uses.
bool pext_is_fast();

// The reader picked at the first call (a relaxed atomic, so threads that race to pick store the same).
extern std::atomic<MultibyteVarintReader> multibyte_varint_reader;

inline VarintRead read_multibyte_varint(const std::byte* at, const std::byte* end) {
  return multibyte_varint_reader.load(std::memory_order_relaxed)(at, end);
}

}  // namespace quiesce::traces::detail
