// Unsigned numbers on the command line: decimal digits only, within the range of the flag's type.
//
// CLI11 2.1 converts an unsigned flag with strtoull in base 0, so on its own it takes "-1" as 2^64 - 1,
// "010" as 8, "0x10" as 16, and a number past 2^64 - 1 as 2^64 - 1: `quiesce run --seed -1` would run seed
// 18446744073709551615 and say nothing. Every unsigned flag of the quiesce command checks its text with
// this validator first, as `--seeds` (properties::parse_seed_range) reads its bounds.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

namespace quiesce::cli {

// Accepts what std::from_chars reads whole as a decimal T ("010" is ten); refuses a sign, a prefix, a
// fraction, an exponent, spaces and anything above T's maximum, naming the text.
template <class T>
CLI::Validator unsigned_decimal() {
  static_assert(std::is_unsigned_v<T>);
  return CLI::Validator(
      [](std::string& text) -> std::string {
        T value = 0;
        const char* const end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || (error != std::errc{} && error != std::errc::result_out_of_range) || stop != end) {
          return "'" + text + "' is not an unsigned decimal integer";
        }
        if (error == std::errc::result_out_of_range) {
          return "'" + text + "' is above " + std::to_string(std::numeric_limits<T>::max());
        }
        text = std::to_string(value);  // what CLI11 then converts: plain decimal, no leading zero
        return {};
      },
      "", "unsigned decimal");
}

// add_option for an unsigned flag, checked by unsigned_decimal for the target's own type. The check is a
// transform, so it runs before any range check the caller adds and that check reads plain decimal.
template <class T>
CLI::Option* add_unsigned_option(CLI::App* app, const std::string& name, T& target, const std::string& description) {
  return app->add_option(name, target, description)->transform(unsigned_decimal<T>());
}

// The same for a flag that may be left out.
template <class T>
CLI::Option* add_unsigned_option(CLI::App* app, const std::string& name, std::optional<T>& target,
                                 const std::string& description) {
  return app->add_option(name, target, description)->transform(unsigned_decimal<T>());
}

}  // namespace quiesce::cli
