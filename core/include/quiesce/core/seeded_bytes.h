// Seeded bytes: pseudo-random data that a 64-bit seed describes completely.
//
// The bytes are the seed itself (8 bytes, little-endian), then splitmix64's outputs from that seed, each
// little-endian, cut to the length asked for. A workload that fills its payloads this way (one Prng draw per
// payload) gives data as varied as byte-by-byte draws, and a trace can store such a payload as its length
// and seed: the binary trace format recognises seeded bytes by their content (the first 8 bytes name the
// seed, the rest must follow from it) and stores every other payload byte for byte (docs/trace-format.md).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

namespace quiesce {

// Payloads shorter than this are never described by a seed: the seed alone would take as many bytes.
inline constexpr std::size_t kSeededBytesMin = 16;

namespace seeded_detail {

inline constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ULL;

constexpr std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

// Word `index` of the stream of `seed`: word 0 is the seed, word i the i-th output of splitmix64(seed).
constexpr std::uint64_t word(std::uint64_t seed, std::uint64_t index) {
  return index == 0 ? seed : mix(seed + index * kGamma);
}

// Whole words are copied as they lie in memory: quiesce requires a little-endian host.
static_assert(std::endian::native == std::endian::little, "seeded bytes are little-endian words");

inline void store_le(std::byte* out, std::uint64_t value, std::size_t count) {
  std::memcpy(out, &value, count);
}

inline std::uint64_t load_le(const std::byte* in) {
  std::uint64_t value = 0;
  std::memcpy(&value, in, sizeof(value));
  return value;
}

}  // namespace seeded_detail

// Fills `out` with the seeded bytes of `seed`.
inline void fill_seeded_bytes(std::uint64_t seed, std::span<std::byte> out) {
  std::byte* cursor = out.data();
  const std::size_t words = out.size() / 8;
  if (words > 0) seeded_detail::store_le(cursor, seed, 8);
  for (std::size_t index = 1; index < words; ++index) {
    const std::uint64_t word = seeded_detail::mix(seed + index * seeded_detail::kGamma);
    std::memcpy(cursor + 8 * index, &word, sizeof(word));
  }
  cursor += 8 * words;
  const std::size_t tail = out.size() % 8;
  if (tail != 0) seeded_detail::store_le(cursor, seeded_detail::word(seed, words), tail);
}

// The seed of `bytes` when they are seeded bytes of at least kSeededBytesMin bytes; nothing otherwise.
inline std::optional<std::uint64_t> seed_of_seeded_bytes(std::span<const std::byte> bytes) {
  if (bytes.size() < kSeededBytesMin) return std::nullopt;
  const std::byte* cursor = bytes.data();
  const std::uint64_t seed = seeded_detail::load_le(cursor);
  const std::size_t words = bytes.size() / 8;
  for (std::size_t index = 1; index < words; ++index) {
    cursor += 8;
    if (seeded_detail::load_le(cursor) != seeded_detail::word(seed, index)) return std::nullopt;
  }
  const std::size_t tail = bytes.size() % 8;
  if (tail != 0) {
    std::byte expected[8] = {};
    seeded_detail::store_le(expected, seeded_detail::word(seed, words), tail);
    cursor += 8;
    for (std::size_t i = 0; i < tail; ++i) {
      if (cursor[i] != expected[i]) return std::nullopt;
    }
  }
  return seed;
}

}  // namespace quiesce
