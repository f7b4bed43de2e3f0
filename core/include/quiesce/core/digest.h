// A running digest of everything a run did: XXH3-64 (Debian's libxxhash) over a byte stream.
// Equal digests for one seed are what R20 (determinism) checks.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
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

  // Small additions (most are a few bytes: an enum, a count) gather in the object and reach XXH3 a few
  // hundred bytes at a time; XXH3's streaming digest depends only on the bytes, never on how they were
  // split, so the value is the same as one update per addition, for a fraction of the calls.
  void add_bytes(const void* data, std::size_t size) {
    if (size <= kPendingBytes - pending_size_) [[likely]] {
      if (size != 0) std::memcpy(pending_.data() + pending_size_, data, size);  // an empty view may be null
      pending_size_ += size;
      return;
    }
    add_bytes_through(data, size);
  }
  void add(std::string_view text) { add_bytes(text.data(), text.size()); }
  template <class T>
    requires std::is_integral_v<T> || std::is_enum_v<T>
  void add(T value) {
    add_bytes(&value, sizeof(value));
  }

  std::uint64_t value() const;
  std::string hex() const;

 private:
  static constexpr std::size_t kPendingBytes = 256;
  void add_bytes_through(const void* data, std::size_t size);
  void flush() const;  // hands the gathered bytes to XXH3; the digest's value does not change

  void* state_;
  mutable std::size_t pending_size_ = 0;
  mutable std::array<unsigned char, kPendingBytes> pending_;
};

std::uint64_t hash_bytes(std::span<const std::byte> bytes);
std::string to_hex(std::uint64_t value);

}  // namespace quiesce
