// A running digest of everything a run did: XXH3-64 (Debian's libxxhash) over a byte stream.
// Equal digests for one seed are what R20 (determinism) checks.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace quiesce {

class Digest {
 public:
  Digest();
  ~Digest();
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;

  void add_bytes(const void* data, std::size_t size);
  void add(std::string_view text) { add_bytes(text.data(), text.size()); }
  template <class T>
    requires std::is_integral_v<T> || std::is_enum_v<T>
  void add(T value) {
    add_bytes(&value, sizeof(value));
  }

  std::uint64_t value() const;
  std::string hex() const;

 private:
  void* state_;
};

std::uint64_t hash_bytes(std::span<const std::byte> bytes);
std::string to_hex(std::uint64_t value);

}  // namespace quiesce
