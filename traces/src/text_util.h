// Small text helpers shared by the encodings: hexadecimal bytes, UTF-8 checks, JSON nesting depth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace quiesce::traces::detail {

std::string hex_of(std::span<const std::byte> bytes);
bool parse_hex_bytes(std::string_view hex, std::vector<std::byte>& bytes);
bool parse_hex64(std::string_view hex, std::uint64_t& value);  // exactly 16 digits
bool utf8_valid(std::string_view text);
// The deepest nesting of brackets outside strings, counted without parsing, so that a hostile line cannot
// make a recursive parser or destructor exhaust the stack.
int json_depth(std::string_view line);

}  // namespace quiesce::traces::detail
