// The binary encoding of one record, both directions, over the field list of fields.h.
#include <cassert>
#include <cstring>
#include <string>

#include "binary_codec.h"
#include "text_util.h"

namespace quiesce::traces::detail {

void put_varint(std::vector<std::byte>& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<std::byte>((value & 0x7FU) | 0x80U));
    value >>= 7U;
  }
  out.push_back(static_cast<std::byte>(value));
}

void put_fixed64(std::vector<std::byte>& out, std::uint64_t value) {
  for (unsigned shift = 0; shift < 64; shift += 8) out.push_back(static_cast<std::byte>((value >> shift) & 0xFFU));
}

void put_text(std::vector<std::byte>& out, const std::string& text) {
  put_varint(out, text.size());
  const auto* first = reinterpret_cast<const std::byte*>(text.data());  // NOLINT: bytes of the text
  out.insert(out.end(), first, first + text.size());
}

namespace {

class BinaryOut {
 public:
  BinaryOut(EncodeState& state, std::vector<std::byte>& out) : state_(state), out_(out) {}

  void u8(const char*, std::uint8_t& value, [[maybe_unused]] std::uint8_t count) {
    assert(value < count);
    out_.push_back(static_cast<std::byte>(value));
  }
  void u32(const char*, std::uint32_t& value) { put_varint(out_, value); }
  void u64(const char*, std::uint64_t& value) { put_varint(out_, value); }
  void i32(const char*, std::int32_t& value) { put_varint(out_, zigzag(value)); }
  void fixed64(const char*, std::uint64_t& value) { put_fixed64(out_, value); }
  void flag(const char*, bool& value) { out_.push_back(std::byte{value ? std::uint8_t{1} : std::uint8_t{0}}); }
  template <class E>
  void enumeration(const char*, E& value, std::uint8_t) {
    out_.push_back(static_cast<std::byte>(value));
  }
  // 0 is "no handle"; any other id is the zigzag delta from the last id of its kind, plus one.
  void id(const char*, HandleKind kind, std::uint64_t& value) {
    if (value == 0) {
      put_varint(out_, 0);
      return;
    }
    std::uint64_t& last = state_.last_id[static_cast<std::size_t>(kind)];
    put_varint(out_, zigzag(static_cast<std::int64_t>(value - last)) + 1);
    last = value;
  }
  void call_index(const char*, std::uint64_t& value) {
    put_varint(out_, zigzag(static_cast<std::int64_t>(value - state_.calls)));
  }
  void clock(const char*, std::uint64_t& value) {
    put_varint(out_, zigzag(static_cast<std::int64_t>(value - state_.last_clock_ns)));
    state_.last_clock_ns = value;
  }
  void text(const char*, std::string& value) {
    const auto found = state_.interned.find(value);
    if (found != state_.interned.end()) {
      put_varint(out_, found->second);
      return;
    }
    const std::uint64_t index = state_.interned.size();
    state_.interned.emplace(value, index);
    put_varint(out_, index);
    put_text(out_, value);
  }
  void bytes(const char*, std::vector<std::byte>& value) {
    put_varint(out_, value.size());
    out_.insert(out_.end(), value.begin(), value.end());
  }
  void values(const char*, std::vector<std::uint64_t>& value) {
    put_varint(out_, value.size());
    for (const std::uint64_t item : value) put_varint(out_, item);
  }
  template <class T, class F>
  void list(const char*, std::vector<T>& items, std::uint64_t, F&& each) {
    put_varint(out_, items.size());
    for (T& item : items) each(item);
  }
  template <class F>
  void object(const char*, F&& body) {
    body();
  }
  void status(Op, std::uint8_t& status, bool& has_error, bool& has_timing, bool& has_result) {
    assert(status <= kStatusMask);
    std::uint8_t packed = status;
    if (has_error) packed |= kHasError;
    if (has_timing) packed |= kHasTiming;
    if (has_result) packed |= kHasResult;
    out_.push_back(static_cast<std::byte>(packed));
  }

 private:
  EncodeState& state_;
  std::vector<std::byte>& out_;
};

class BinaryIn {
 public:
  BinaryIn(DecodeState& state, std::uint64_t record_index, std::string_view record_name)
      : state_(state), record_index_(record_index), record_name_(record_name) {}

  bool failed() const { return failed_; }
  const TraceError& error() const { return error_; }

  void u8(const char* key, std::uint8_t& value, std::uint8_t count) {
    const std::byte* start = state_.cursor;
    if (!need(key, 1)) return;
    const auto read = static_cast<std::uint8_t>(*state_.cursor++);
    if (read >= count) return fail_at(start, key, "has value " + std::to_string(read) + ", above its largest value " + std::to_string(count - 1));
    value = read;
  }
  void u32(const char* key, std::uint32_t& value) {
    const std::byte* start = state_.cursor;
    std::uint64_t read = 0;
    if (!varint(key, read)) return;
    if (read > UINT32_MAX) return fail_at(start, key, "is " + std::to_string(read) + ", which does not fit 32 bits");
    value = static_cast<std::uint32_t>(read);
  }
  void u64(const char* key, std::uint64_t& value) { (void)varint(key, value); }
  void i32(const char* key, std::int32_t& value) {
    const std::byte* start = state_.cursor;
    std::uint64_t read = 0;
    if (!varint(key, read)) return;
    const std::int64_t signed_value = unzigzag(read);
    if (signed_value < INT32_MIN || signed_value > INT32_MAX) return fail_at(start, key, "does not fit 32 bits");
    value = static_cast<std::int32_t>(signed_value);
  }
  void fixed64(const char* key, std::uint64_t& value) {
    if (!need(key, 8)) return;
    std::uint64_t read = 0;
    for (unsigned shift = 0; shift < 64; shift += 8) read |= std::uint64_t{static_cast<std::uint8_t>(*state_.cursor++)} << shift;
    value = read;
  }
  void flag(const char* key, bool& value) {
    std::uint8_t read = 0;
    u8(key, read, 2);
    value = read != 0;
  }
  template <class E>
  void enumeration(const char* key, E& value, std::uint8_t count) {
    std::uint8_t read = 0;
    u8(key, read, count);
    if (!failed_) value = static_cast<E>(read);
  }
  void id(const char* key, HandleKind kind, std::uint64_t& value) {
    std::uint64_t read = 0;
    if (!varint(key, read)) return;
    if (read == 0) {
      value = 0;
      return;
    }
    std::uint64_t& last = state_.last_id[static_cast<std::size_t>(kind)];
    value = last + static_cast<std::uint64_t>(unzigzag(read - 1));
    last = value;
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
    const std::byte* start = state_.cursor;
    std::uint64_t index = 0;
    if (!varint(key, index)) return;
    const std::uint64_t known = state_.interned.size();
    if (index < known) {
      value = state_.interned[index];
      return;
    }
    if (index > known) return fail_at(start, key, "names string " + std::to_string(index) + " but only " + std::to_string(known) + " strings were defined before it");
    if (known >= kInternedStringsMax) return fail_at(start, key, "defines more than " + std::to_string(kInternedStringsMax) + " distinct strings");
    std::uint64_t length = 0;
    if (!length_of(key, length, kTextBytesMax, 1)) return;
    value.assign(reinterpret_cast<const char*>(state_.cursor), length);  // NOLINT: bytes of the text
    if (!utf8_valid(value)) return fail_at(start, key, "is not valid UTF-8");
    state_.cursor += length;
    state_.interned.push_back(value);
  }
  void bytes(const char* key, std::vector<std::byte>& value) {
    std::uint64_t length = 0;
    if (!length_of(key, length, kDataBytesMax, 1)) return;
    value.assign(state_.cursor, state_.cursor + length);
    state_.cursor += length;
  }
  void values(const char* key, std::vector<std::uint64_t>& value) {
    std::uint64_t count = 0;
    if (!length_of(key, count, kValuesMax, 1)) return;
    value.resize(count);
    for (std::uint64_t& item : value) {
      if (!varint(key, item)) return;
    }
  }
  template <class T, class F>
  void list(const char* key, std::vector<T>& items, std::uint64_t bound, F&& each) {
    std::uint64_t count = 0;
    if (!length_of(key, count, bound, 1)) return;
    items.resize(count);
    for (T& item : items) {
      each(item);
      if (failed_) return;
    }
  }
  template <class F>
  void object(const char*, F&& body) {
    if (!failed_) body();
  }
  void status(Op op, std::uint8_t& status, bool& has_error, bool& has_timing, bool& has_result) {
    const std::byte* start = state_.cursor;
    std::uint8_t packed = 0;
    u8("status", packed, 0x80);
    if (failed_) return;
    status = packed & kStatusMask;
    if (status >= status_count(op)) return fail_at(start, "status", "is " + std::to_string(status) + ", not a status of " + std::string(to_string(op)));
    has_error = (packed & kHasError) != 0;
    has_timing = (packed & kHasTiming) != 0;
    has_result = (packed & kHasResult) != 0;
    if (has_result && result_kind(op) == HandleKind::None) return fail_at(start, "status", "claims a result handle, but " + std::string(to_string(op)) + " returns none");
  }

  void fail_at(const std::byte* where, std::string_view key, const std::string& what) {
    if (failed_) return;
    failed_ = true;
    error_.where = TraceError::Where::Byte;
    error_.position = static_cast<std::uint64_t>(where - state_.begin);
    error_.what = "record " + std::to_string(record_index_) + " (" + std::string(record_name_) + "), field '" +
                  std::string(key) + "' " + what;
  }

 private:
  bool need(const char* key, std::uint64_t bytes) {
    if (!failed_ && static_cast<std::uint64_t>(state_.end - state_.cursor) >= bytes) [[likely]] return true;
    return need_failed(key, bytes);
  }
  bool need_failed(const char* key, std::uint64_t bytes) {
    if (failed_) return false;
    const auto left = static_cast<std::uint64_t>(state_.end - state_.cursor);
    fail_at(state_.cursor, key, "is truncated: expected " + std::to_string(bytes) + " bytes, found " + std::to_string(left));
    return false;
  }
  bool varint(const char* key, std::uint64_t& value) {
    // Most varints are one byte: ids are deltas, sizes and statuses are small.
    if (!failed_ && state_.cursor != state_.end && (static_cast<std::uint8_t>(*state_.cursor) & 0x80U) == 0) [[likely]] {
      value = static_cast<std::uint8_t>(*state_.cursor++);
      return true;
    }
    return varint_long(key, value);
  }
  bool varint_long(const char* key, std::uint64_t& value) {
    const std::byte* start = state_.cursor;
    std::uint64_t result = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
      if (!need(key, 1)) return false;
      const auto byte = static_cast<std::uint8_t>(*state_.cursor++);
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
  // A length or count: at most `bound`, and no more than the bytes left could hold.
  bool length_of(const char* key, std::uint64_t& value, std::uint64_t bound, std::uint64_t bytes_each) {
    const std::byte* start = state_.cursor;
    if (!varint(key, value)) return false;
    if (value > bound) {
      fail_at(start, key, "has length " + std::to_string(value) + ", above the bound " + std::to_string(bound));
      return false;
    }
    const auto left = static_cast<std::uint64_t>(state_.end - state_.cursor);
    if (value * bytes_each > left) {
      fail_at(start, key, "is truncated: it claims " + std::to_string(value) + " items but only " + std::to_string(left) + " bytes are left");
      return false;
    }
    return true;
  }

  DecodeState& state_;
  std::uint64_t record_index_;
  std::string_view record_name_;
  bool failed_ = false;
  TraceError error_;
};

}  // namespace

void encode_record(EncodeState& state, const Record& record, std::vector<std::byte>& out) {
  // The visitors share one signature for reading and writing; writing never modifies the record.
  auto& mutable_record = const_cast<Record&>(record);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  BinaryOut visitor(state, out);
  if (record.kind == RecordKind::Call) {
    out.push_back(static_cast<std::byte>(kCallTag + static_cast<std::uint8_t>(record.call.op)));
    visit_call(visitor, mutable_record.call);
    state.calls++;
  } else {
    out.push_back(static_cast<std::byte>(record.kind));
    visit_note(visitor, record.kind, mutable_record.note);
  }
  state.records++;
}

bool decode_record_body(DecodeState& state, std::uint8_t tag, Record& record, TraceError& error) {
  const std::byte* tag_at = state.cursor - 1;
  reset(record);
  const bool is_call = tag >= kCallTag && tag < kCallTag + kOpCount;
  const bool is_note = tag >= 1 && tag < kRecordKindCount;
  if (!is_call && !is_note) {
    error = TraceError{"record " + std::to_string(state.records) + " has an unknown tag " + std::to_string(tag), TraceError::Where::Byte, static_cast<std::uint64_t>(tag_at - state.begin)};
    return false;
  }
  if (is_call) {
    record.kind = RecordKind::Call;
    record.call.op = static_cast<Op>(tag - kCallTag);
    BinaryIn visitor(state, state.records, to_string(record.call.op));
    visit_call(visitor, record.call);
    if (visitor.failed()) {
      error = visitor.error();
      return false;
    }
    state.calls++;
  } else {
    record.kind = static_cast<RecordKind>(tag);
    BinaryIn visitor(state, state.records, to_string(record.kind));
    visit_note(visitor, record.kind, record.note);
    if (visitor.failed()) {
      error = visitor.error();
      return false;
    }
  }
  state.records++;
  return true;
}

}  // namespace quiesce::traces::detail
