// Small text helpers shared by the encodings.
#include "text_util.h"

namespace quiesce::traces::detail {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string hex_of(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const std::byte byte : bytes) {
    const auto value = static_cast<std::uint8_t>(byte);
    hex.push_back(kDigits[value >> 4U]);
    hex.push_back(kDigits[value & 0x0FU]);
  }
  return hex;
}

bool parse_hex_bytes(std::string_view hex, std::vector<std::byte>& bytes) {
  if (hex.size() % 2 != 0) return false;
  bytes.resize(hex.size() / 2);
  for (std::size_t index = 0; index < bytes.size(); ++index) {
    const int high = hex_digit(hex[2 * index]);
    const int low = hex_digit(hex[2 * index + 1]);
    if (high < 0 || low < 0) return false;
    bytes[index] = static_cast<std::byte>((high << 4) | low);
  }
  return true;
}

bool parse_hex64(std::string_view hex, std::uint64_t& value) {
  if (hex.size() != 16) return false;
  std::uint64_t result = 0;
  for (const char c : hex) {
    const int digit = hex_digit(c);
    if (digit < 0) return false;
    result = (result << 4U) | static_cast<std::uint64_t>(digit);
  }
  value = result;
  return true;
}

bool utf8_valid(std::string_view text) {
  std::size_t index = 0;
  while (index < text.size()) {
    const auto lead = static_cast<std::uint8_t>(text[index]);
    std::size_t length = 0;
    std::uint32_t code = 0;
    if (lead < 0x80) {
      ++index;
      continue;
    }
    if ((lead & 0xE0U) == 0xC0U) {
      length = 2;
      code = lead & 0x1FU;
    } else if ((lead & 0xF0U) == 0xE0U) {
      length = 3;
      code = lead & 0x0FU;
    } else if ((lead & 0xF8U) == 0xF0U) {
      length = 4;
      code = lead & 0x07U;
    } else {
      return false;
    }
    if (index + length > text.size()) return false;
    for (std::size_t next = 1; next < length; ++next) {
      const auto byte = static_cast<std::uint8_t>(text[index + next]);
      if ((byte & 0xC0U) != 0x80U) return false;
      code = (code << 6U) | (byte & 0x3FU);
    }
    const bool overlong = (length == 2 && code < 0x80) || (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
    if (overlong || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    index += length;
  }
  return true;
}

int json_depth(std::string_view line) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : line) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') deepest = ++depth > deepest ? depth : deepest;
    if (c == '}' || c == ']') --depth;
  }
  return deepest;
}

}  // namespace quiesce::traces::detail
