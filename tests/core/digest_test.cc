// Digest: the running XXH3-64 of a run. It gathers small additions before handing them to XXH3, so its
// value must be that of the concatenated bytes however they were split, read at any point.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "quiesce/core/digest.h"
#include "quiesce/core/prng.h"

namespace quiesce {
namespace {

std::vector<std::byte> seeded(std::size_t size, std::uint64_t seed) {
  Prng prng(seed);
  std::vector<std::byte> bytes(size);
  for (std::byte& byte : bytes) byte = static_cast<std::byte>(prng.below(256));
  return bytes;
}

TEST(DigestTest, AnEmptyDigestIsXxh3OfNoBytes) {
  const Digest digest;
  EXPECT_EQ(digest.value(), 0x2D06800538D394C2ULL);  // XXH3-64 of the empty input, seed 0
  EXPECT_EQ(digest.value(), hash_bytes({}));
}

TEST(DigestTest, TheValueIsThatOfTheConcatenationHoweverTheBytesWereSplit) {
  const std::vector<std::byte> bytes = seeded(20'000, 7);
  // Pieces of every size class: empty, a few bytes, ones that cross the gathered bytes' bound, and ones
  // larger than it, in an order that leaves a partial gathering before each large one.
  const std::vector<std::size_t> pieces = {0, 1, 8, 3, 255, 1, 256, 7, 257, 0, 100, 200, 4096, 2, 513, 64};
  Digest digest;
  std::size_t offset = 0;
  for (std::size_t round = 0; offset < bytes.size(); ++round) {
    std::size_t size = pieces[round % pieces.size()];
    if (size > bytes.size() - offset) size = bytes.size() - offset;
    digest.add_bytes(bytes.data() + offset, size);
    offset += size;
    if (round % 7 == 0) {
      // Reading the value in between changes nothing of what follows.
      EXPECT_EQ(digest.value(), hash_bytes(std::span<const std::byte>(bytes.data(), offset))) << offset;
    }
  }
  EXPECT_EQ(digest.value(), hash_bytes(bytes));
}

TEST(DigestTest, IntegersAreAddedAsTheirBytes) {
  Digest by_value;
  Digest by_bytes;
  const std::uint64_t wide = 0x0123456789ABCDEFULL;
  const std::uint8_t narrow = 0x5A;
  by_value.add(wide);
  by_value.add(narrow);
  by_bytes.add_bytes(&wide, sizeof(wide));
  by_bytes.add_bytes(&narrow, sizeof(narrow));
  EXPECT_EQ(by_value.value(), by_bytes.value());
  EXPECT_NE(by_value.value(), Digest().value());
}

}  // namespace
}  // namespace quiesce
