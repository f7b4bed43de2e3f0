// XXH3-64 streaming digest over Debian's libxxhash.
#include "quiesce/core/digest.h"

#include <xxhash.h>

#include <cstdio>

namespace quiesce {

Digest::Digest() : state_(XXH3_createState()) { XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_)); }
Digest::~Digest() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void Digest::add_bytes(const void* data, std::size_t size) {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, size);
}

std::uint64_t Digest::value() const { return XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_)); }

std::string Digest::hex() const { return to_hex(value()); }

std::uint64_t hash_bytes(std::span<const std::byte> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

std::string to_hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return std::string(text, 16);
}

}  // namespace quiesce
