// The exact reader of one field of a binary record: every bound checked, every refusal worded.
//
// The record decoder (BinaryIn in binary_visitors.cc) reads the common case of each field inline and hands
// the field to this reader, from the field's first byte, in every other case: a varint near the end of the
// trace or longer than 8 bytes, a string defined for the first time, a value out of its range, truncation.
// So what is refused, and at which byte offset, has one source, and the decoder's fast path only has to be
// right about the input it accepts. The reader works on a copy of the decoder's position and hands the new
// one back, so that the decoder's own position never leaves registers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "binary_codec.h"
#include "quiesce/core/seeded_bytes.h"
#include "text_util.h"
#include "varint_read.h"

namespace quiesce::traces::detail {

// status_count of every op, read once from the op table (record.cc).
inline const std::array<std::uint8_t, kOpCount> kStatusCounts = [] {
  std::array<std::uint8_t, kOpCount> counts{};
  for (std::size_t op = 0; op < kOpCount; ++op) counts[op] = status_count(static_cast<Op>(op));
  return counts;
}();

// 8 bytes, little-endian as the host.
inline std::uint64_t load_fixed64(const std::byte* at) {
  std::uint64_t value = 0;
  std::memcpy(&value, at, sizeof(value));
  return value;
}

// What a record's fields are read for: the decode state, where a refusal is written, and the record's kind
// and op (for the refusal's text).
struct FieldSite {
  DecodeState* state;
  TraceError* error;
  RecordKind kind;
  Op op;
};

// A position in a record: the next byte, the end (moved to the cursor once a field is refused, so that the
// rest of the record fails at once), and whether a field was refused.
struct FieldPosition {
  const std::byte* cursor;
  const std::byte* end;
  bool failed;
};

class FieldReader {
 public:
  FieldReader(FieldSite site, FieldPosition position)
      : state_(*site.state), error_(*site.error), kind_(site.kind), op_(site.op), cursor_(position.cursor),
        end_(position.end), failed_(position.failed) {}

  FieldPosition position() const { return FieldPosition{cursor_, end_, failed_}; }

  void u8(const char* key, std::uint8_t& value, std::uint8_t count) {
    if (cursor_ != end_) {
      const auto read = static_cast<std::uint8_t>(*cursor_);
      if (read < count) {
        ++cursor_;
        value = read;
        return;
      }
    }
    u8_refused(key, count);
  }
  void u32(const char* key, std::uint32_t& value) {
    const std::byte* start = cursor_;
    std::uint64_t read = 0;
    if (!varint(key, read)) return;
    if (read > UINT32_MAX) return fail_at(start, key, "is " + std::to_string(read) + ", which does not fit 32 bits");
    value = static_cast<std::uint32_t>(read);
  }
  void u64(const char* key, std::uint64_t& value) { (void)varint(key, value); }
  void i32(const char* key, std::int32_t& value) {
    const std::byte* start = cursor_;
    std::uint64_t read = 0;
    if (!varint(key, read)) return;
    const std::int64_t signed_value = unzigzag(read);
    if (signed_value < INT32_MIN || signed_value > INT32_MAX) return fail_at(start, key, "does not fit 32 bits");
    value = static_cast<std::int32_t>(signed_value);
  }
  void fixed64(const char* key, std::uint64_t& value) {
    if (!need(key, 8)) return;
    value = load_fixed64(cursor_);
    cursor_ += 8;
  }
  void id(const char* key, HandleKind kind, std::uint64_t& value) {
    std::uint64_t read = 0;
    if (varint(key, read)) value = decode_id(state_, kind, read);
  }
  void call_index(const char* key, std::uint64_t& value) {
    std::uint64_t read = 0;
    if (varint(key, read)) value = state_.calls + static_cast<std::uint64_t>(unzigzag(read));
  }
  void clock(const char* key, std::uint64_t& value) {
    std::uint64_t read = 0;
    if (!varint(key, read)) return;
    value = state_.last_clock_ns + static_cast<std::uint64_t>(unzigzag(read));
    state_.last_clock_ns = value;
  }
  void text(const char* key, std::string& value) {
    const std::byte* start = cursor_;
    std::uint64_t index = 0;
    if (!varint(key, index)) return;
    if (index < state_.interned.size()) {
      value = state_.interned[index];
      return;
    }
    define_text(start, key, index, value);
  }
  void bytes(const char* key, Payload& value) {
    if (state_.version < kSeededBytesVersion) return raw_bytes(key, value);
    const std::byte* start = cursor_;
    std::uint64_t head = 0;
    if (!varint(key, head)) return;
    if ((head & 1U) != 0) return seeded_bytes(start, key, head >> 1U, value);
    const std::uint64_t length = head >> 1U;
    if (length > kDataBytesMax || length > static_cast<std::uint64_t>(end_ - cursor_)) {
      return length_refused(start, key, length, kDataBytesMax);
    }
    const std::span<const std::byte> bytes(cursor_, length);
    value.assign(bytes);
    cursor_ += length;
    // One encoding per payload: seeded bytes stored byte for byte are a corrupted record.
    if (length >= kSeededBytesMin && seed_of_seeded_bytes(bytes).has_value()) {
      return fail_at(start, key, "holds seeded bytes byte for byte, which this version stores as their seed");
    }
  }
  void values(const char* key, std::vector<std::uint64_t>& value) {
    std::uint64_t count = 0;
    if (!length_of(key, count, kValuesMax)) return;
    value.resize(count);
    for (std::uint64_t& item : value) {
      if (!varint(key, item)) return;
    }
  }
  void status(Op op, std::uint8_t& status, bool& has_error, bool& has_timing, bool& has_result) {
    const std::byte* start = cursor_;
    std::uint8_t packed = 0;
    u8("status", packed, 0x80);
    status = packed & kStatusMask;
    has_error = (packed & kHasError) != 0;
    has_timing = (packed & kHasTiming) != 0;
    has_result = (packed & kHasResult) != 0;
    if (failed_) return;
    if (status >= kStatusCounts[static_cast<std::size_t>(op)]) {
      return fail_at(start, "status", "is " + std::to_string(status) + ", not a status of " + std::string(to_string(op)));
    }
    if (has_result && result_of(op) == HandleKind::None) {
      return fail_at(start, "status", "claims a result handle, but " + std::string(to_string(op)) + " returns none");
    }
  }
  // A length or count: at most `bound`, and no more than the bytes left could hold (each item takes a byte).
  bool length_of(const char* key, std::uint64_t& value, std::uint64_t bound) {
    const std::byte* start = cursor_;
    if (!varint(key, value)) return false;
    if (value > bound || value > static_cast<std::uint64_t>(end_ - cursor_)) {
      length_refused(start, key, value, bound);
      return false;
    }
    return true;
  }

 private:
  bool need(const char* key, std::uint64_t bytes) {
    if (static_cast<std::uint64_t>(end_ - cursor_) >= bytes) return true;
    truncated(key, bytes);
    return false;
  }
  bool varint(const char* key, std::uint64_t& value) {
    if (cursor_ != end_) {
      const auto first = static_cast<std::uint8_t>(*cursor_);
      if ((first & 0x80U) == 0) {
        ++cursor_;
        value = first;
        return true;
      }
      if (end_ - cursor_ >= 10) {
        const unsigned length = read_varint_word(cursor_, value);
        if (length == 0) return varint_long(key, value);
        cursor_ += length;
        return true;
      }
    }
    return varint_near_end(key, value);
  }
  // 9 or 10 bytes, or longer than 64 bits; at least 10 bytes are left.
  bool varint_long(const char* key, std::uint64_t& value) {
    std::uint64_t result = 0;
    for (unsigned index = 0; index < 10; ++index) {
      const auto byte = static_cast<std::uint8_t>(cursor_[index]);
      if (index == 9 && byte > 1) break;
      result |= std::uint64_t{byte & 0x7FU} << (7 * index);
      if ((byte & 0x80U) == 0) {
        cursor_ += index + 1;
        value = result;
        return true;
      }
    }
    fail_at(cursor_, key, "is a varint longer than 64 bits");
    return false;
  }
  bool varint_near_end(const char* key, std::uint64_t& value) {
    if (failed_) return false;
    const std::byte* start = cursor_;
    std::uint64_t result = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
      if (!need(key, 1)) return false;
      const auto byte = static_cast<std::uint8_t>(*cursor_++);
      if (shift == 63 && byte > 1) break;
      result |= std::uint64_t{byte & 0x7FU} << shift;
      if ((byte & 0x80U) == 0) {
        value = result;
        return true;
      }
    }
    fail_at(start, key, "is a varint longer than 64 bits");
    return false;
  }
  void raw_bytes(const char* key, Payload& value) {
    std::uint64_t length = 0;
    if (!length_of(key, length, kDataBytesMax)) return;
    value.assign(std::span<const std::byte>(cursor_, length));
    cursor_ += length;
  }
  // The seed and length are kept; the bytes are made only when a consumer asks for them (Payload).
  void seeded_bytes(const std::byte* start, const char* key, std::uint64_t length, Payload& value) {
    if (length < kSeededBytesMin || length > kDataBytesMax) {
      return fail_at(start, key, "holds " + std::to_string(length) + " seeded bytes; a seeded payload holds " +
                                     std::to_string(kSeededBytesMin) + " to " + std::to_string(kDataBytesMax));
    }
    if (length > kSeededBytesTotalMax - state_.seeded_bytes) {
      return fail_at(start, key, "expands the trace's seeded bytes beyond the bound " + std::to_string(kSeededBytesTotalMax));
    }
    std::uint64_t seed = 0;
    fixed64(key, seed);
    if (failed_) return;
    state_.seeded_bytes += length;
    value.assign_seeded(seed, length);
  }
  void define_text(const std::byte* start, const char* key, std::uint64_t index, std::string& value) {
    const std::uint64_t known = state_.interned.size();
    if (index > known) return fail_at(start, key, "names string " + std::to_string(index) + " but only " + std::to_string(known) + " strings were defined before it");
    if (known >= kInternedStringsMax) return fail_at(start, key, "defines more than " + std::to_string(kInternedStringsMax) + " distinct strings");
    std::uint64_t length = 0;
    if (!length_of(key, length, kTextBytesMax)) return;
    value.assign(reinterpret_cast<const char*>(cursor_), length);  // NOLINT: bytes of the text
    if (!utf8_valid(value)) return fail_at(start, key, "is not valid UTF-8");
    cursor_ += length;
    state_.interned.push_back(value);
  }
  void u8_refused(const char* key, std::uint8_t count) {
    if (failed_) return;
    if (cursor_ == end_) return truncated(key, 1);
    const auto read = static_cast<std::uint8_t>(*cursor_);
    fail_at(cursor_, key, "has value " + std::to_string(read) + ", above its largest value " + std::to_string(count - 1));
  }
  void truncated(const char* key, std::uint64_t bytes) {
    if (failed_) return;
    const auto left = static_cast<std::uint64_t>(end_ - cursor_);
    fail_at(cursor_, key, "is truncated: expected " + std::to_string(bytes) + " bytes, found " + std::to_string(left));
  }
  void length_refused(const std::byte* start, const char* key, std::uint64_t value, std::uint64_t bound) {
    if (value > bound) return fail_at(start, key, "has length " + std::to_string(value) + ", above the bound " + std::to_string(bound));
    const auto left = static_cast<std::uint64_t>(end_ - cursor_);
    fail_at(start, key, "is truncated: it claims " + std::to_string(value) + " items but only " + std::to_string(left) + " bytes are left");
  }
  // Records the first refusal and makes every later field of the record fail at once.
  void fail_at(const std::byte* where, std::string_view key, const std::string& what) {
    if (failed_) return;
    failed_ = true;
    end_ = cursor_;
    const std::string_view name = kind_ == RecordKind::Call ? to_string(op_) : to_string(kind_);
    error_.where = TraceError::Where::Byte;
    error_.position = static_cast<std::uint64_t>(where - state_.begin);
    error_.what = "record " + std::to_string(state_.records) + " (" + std::string(name) + "), field '" + std::string(key) + "' " + what;
  }

  DecodeState& state_;
  TraceError& error_;
  RecordKind kind_;
  Op op_;
  const std::byte* cursor_;
  const std::byte* end_;
  bool failed_;
};

// One field read by FieldReader from `position`; the position after it. Out of line and cold: only the
// uncommon cases of a field come here.
template <class F>
[[gnu::noinline, gnu::cold]] FieldPosition read_exactly(FieldSite site, FieldPosition position, const F& field) {
  FieldReader reader(site, position);
  field(reader);
  return reader.position();
}

}  // namespace quiesce::traces::detail
