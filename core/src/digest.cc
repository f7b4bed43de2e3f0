// XXH3-64 streaming digest over Debian's libxxhash.
#include "quiesce/core/digest.h"

#include <xxhash.h>

#include <cstdio>
#include <cstring>

namespace quiesce {

Digest::Digest() : state_(XXH3_createState()) { XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_)); }
Digest::~Digest() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void Digest::flush() const {
  if (pending_size_ == 0) return;
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), pending_.data(), pending_size_);
  pending_size_ = 0;
}

void Digest::add_bytes_through(const void* data, std::size_t size) {
  flush();
  if (size >= kPendingBytes) {
    XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, size);
    return;
  }
  std::memcpy(pending_.data(), data, size);
  pending_size_ = size;
}

std::uint64_t Digest::value() const {
  flush();
  return XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_));
}

std::string Digest::hex() const { return to_hex(value()); }

std::uint64_t hash_bytes(std::span<const std::byte> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

std::string to_hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return std::string(text, 16);
}

}  // namespace quiesce
