// The decoder's two multi-byte varint readings (traces/src/varint_read.h) against a byte-by-byte reading and
// against each other: every length from 1 to 10 bytes, values at the edges of each length and seeded ones,
// and words of seeded garbage, each with 10 to 16 bytes left and with fewer than 10.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "quiesce/core/prng.h"
#include "varint_read.h"

namespace {

using quiesce::traces::detail::VarintRead;

// The reading varint_read.h promises, one byte at a time: the position after a varint of at most 8 bytes
// with at least 10 bytes left, and its value; nothing otherwise.
std::optional<VarintRead> reference(const std::byte* at, const std::byte* end) {
  if (end - at < 10) return std::nullopt;
  std::uint64_t value = 0;
  for (unsigned index = 0; index < 8; ++index) {
    const auto byte = static_cast<std::uint8_t>(at[index]);
    value |= std::uint64_t{byte & 0x7FU} << (7U * index);
    if ((byte & 0x80U) == 0) return VarintRead{at + index + 1, value};
  }
  return std::nullopt;
}

std::vector<std::byte> encoded(std::uint64_t value) {
  std::vector<std::byte> bytes;
  while (value >= 0x80) {
    bytes.push_back(static_cast<std::byte>((value & 0x7FU) | 0x80U));
    value >>= 7U;
  }
  bytes.push_back(static_cast<std::byte>(value));
  return bytes;
}

// Inputs: each value's encoding followed by `tail` bytes of filler, and seeded garbage words.
std::vector<std::vector<std::byte>> inputs() {
  std::vector<std::uint64_t> values;
  for (unsigned bits = 0; bits <= 64; ++bits) {
    const std::uint64_t edge = bits == 64 ? UINT64_MAX : (std::uint64_t{1} << bits);
    values.push_back(edge);
    values.push_back(edge - 1);
    values.push_back(edge + 1);
  }
  quiesce::Prng prng(0x7A217);
  for (int index = 0; index < 2000; ++index) values.push_back(prng.next() >> prng.below(64));
  std::vector<std::vector<std::byte>> result;
  for (const std::uint64_t value : values) {
    for (const std::size_t tail : {0U, 1U, 8U, 9U, 15U}) {
      std::vector<std::byte> bytes = encoded(value);
      for (std::size_t index = 0; index < tail; ++index) bytes.push_back(static_cast<std::byte>(prng.next() >> 56U));
      result.push_back(bytes);
    }
  }
  for (int index = 0; index < 4000; ++index) {
    std::vector<std::byte> bytes(8 + prng.below(9));
    for (std::byte& byte : bytes) byte = static_cast<std::byte>(prng.next() >> 56U);
    result.push_back(bytes);
  }
  return result;
}

void expect_reads(quiesce::traces::detail::MultibyteVarintReader reader, const char* name) {
  std::size_t read = 0;
  for (const std::vector<std::byte>& bytes : inputs()) {
    const std::byte* begin = bytes.data();
    const std::byte* end = begin + bytes.size();
    const std::optional<VarintRead> expected = reference(begin, end);
    const VarintRead actual = reader(begin, end);
    if (!expected.has_value()) {
      EXPECT_EQ(actual.next, nullptr) << name << ": " << bytes.size() << " bytes starting " << static_cast<int>(bytes[0]);
      continue;
    }
    ++read;
    ASSERT_EQ(actual.next, expected->next) << name << ": the length of a varint of " << bytes.size() << " bytes";
    ASSERT_EQ(actual.value, expected->value) << name << ": the value, length " << (expected->next - begin);
  }
  EXPECT_GT(read, 5000U) << "the inputs exercise too few readable varints";
}

TEST(VarintRead, PortableReaderMatchesByteByByteReading) {
  expect_reads(quiesce::traces::detail::read_multibyte_varint_portable, "portable");
}

TEST(VarintRead, PextReaderMatchesByteByByteReading) {
  if (!quiesce::traces::detail::has_bmi2()) GTEST_SKIP() << "this CPU has no BMI2, so the PEXT reader cannot run here";
  expect_reads(quiesce::traces::detail::read_multibyte_varint_pext, "pext");
}

TEST(VarintRead, PickedReaderMatchesByteByByteReading) {
  expect_reads(quiesce::traces::detail::read_multibyte_varint, "picked");
  EXPECT_EQ(quiesce::traces::detail::varint_words_by_pext, quiesce::traces::detail::pext_is_fast());
}

}  // namespace
