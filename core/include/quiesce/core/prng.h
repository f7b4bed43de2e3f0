// The project-own PRNG: xoshiro256** seeded through splitmix64, with integer-ratio probabilities.
//
// No std:: distributions (their output differs between standard libraries) and no floating point: a
// probability is a Ratio of integers, and `chance(r)` draws exactly. One 64-bit seed reproduces a run; each
// component derives its own sub-seed with `derive(label)` so adding a draw in one component does not
// shift the draws of another.
#pragma once

#include <cassert>
#include <cstdint>
#include <string_view>

namespace quiesce {

__extension__ using Uint128 = unsigned __int128;

struct Ratio {
  std::uint64_t numerator = 0;
  std::uint64_t denominator = 1;

  static constexpr Ratio never() { return Ratio{0, 1}; }
  static constexpr Ratio always() { return Ratio{1, 1}; }
  friend bool operator==(const Ratio&, const Ratio&) = default;
};

constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

// FNV-1a of a label: stable across compilers, used to derive sub-seeds by name.
constexpr std::uint64_t label_hash(std::string_view label) {
  std::uint64_t hash = 0xCBF29CE484222325ULL;
  for (const char c : label) {
    hash ^= static_cast<std::uint8_t>(c);
    hash *= 0x100000001B3ULL;
  }
  return hash;
}

class Prng {
 public:
  explicit Prng(std::uint64_t seed) : seed_(seed) {
    std::uint64_t state = seed;
    for (std::uint64_t& word : state_) word = splitmix64(state);
  }

  std::uint64_t seed() const { return seed_; }

  // The sub-seed of a named component: independent of how many draws this generator has made.
  std::uint64_t derive(std::string_view label) const {
    std::uint64_t state = seed_ ^ label_hash(label);
    return splitmix64(state);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17U;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound), without modulo bias (Lemire's method, integer only).
  std::uint64_t below(std::uint64_t bound) {
    assert(bound > 0);
    Uint128 product = static_cast<Uint128>(next()) * bound;
    auto low = static_cast<std::uint64_t>(product);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        product = static_cast<Uint128>(next()) * bound;
        low = static_cast<std::uint64_t>(product);
      }
    }
    return static_cast<std::uint64_t>(product >> 64U);
  }

  // Uniform in [low, high], inclusive.
  std::uint64_t range(std::uint64_t low, std::uint64_t high) {
    assert(low <= high);
    if (high - low == UINT64_MAX) return next();
    return low + below(high - low + 1);
  }

  bool chance(Ratio ratio) {
    assert(ratio.denominator > 0);
    assert(ratio.numerator <= ratio.denominator);
    if (ratio.numerator == 0) return false;
    return below(ratio.denominator) < ratio.numerator;
  }

  bool coin() { return (next() >> 63U) != 0; }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) {
    return (x << static_cast<unsigned>(k)) | (x >> static_cast<unsigned>(64 - k));
  }

  std::uint64_t seed_;
  std::uint64_t state_[4] = {};
};

}  // namespace quiesce
