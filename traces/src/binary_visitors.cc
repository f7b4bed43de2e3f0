// The binary encoding of one record, both directions, over the field list of fields.h.
//
// Decoding is the hot direction (DESIGN §9: 50 M events/s): each op and note kind has its own decoder, an
// instantiation of the field list with the op known at compile time, picked from a table by the record's
// tag; a field's bounds check and the record's error state are one comparison of the cursor with the end
// (a failed field moves the end to the cursor, so every later field fails fast), and the error text is built
// only when a record is refused.
#include <array>
#include <bit>
#include <cassert>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "binary_codec.h"
#include "quiesce/core/seeded_bytes.h"
#include "text_util.h"

namespace quiesce::traces::detail {

static_assert(std::endian::native == std::endian::little, "the decoder reads varints as little-endian words");

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
  // Version 1: length and bytes. Version 2: varint (length * 2 + seeded), then the seed (fixed64) of seeded
  // bytes, or the bytes themselves.
  // A payload held as a seed is written as one without looking at bytes.
  void bytes(const char*, Payload& value) {
    if (state_.version >= kSeededBytesVersion) {
      std::optional<std::uint64_t> seed = value.held_seed();
      std::span<const std::byte> bytes;
      if (!seed.has_value()) {
        bytes = value.view(state_.scratch);
        seed = seed_of_seeded_bytes(bytes);
      }
      put_varint(out_, value.size() * 2 + (seed.has_value() ? 1 : 0));
      if (seed.has_value()) {
        put_fixed64(out_, *seed);
        return;
      }
      out_.insert(out_.end(), bytes.begin(), bytes.end());
      return;
    }
    const std::span<const std::byte> bytes = value.view(state_.scratch);
    put_varint(out_, bytes.size());
    out_.insert(out_.end(), bytes.begin(), bytes.end());
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

// status_count of every op, read once from the op table (record.cc).
const std::array<std::uint8_t, kOpCount> kStatusCounts = [] {
  std::array<std::uint8_t, kOpCount> counts{};
  for (std::size_t op = 0; op < kOpCount; ++op) counts[op] = status_count(static_cast<Op>(op));
  return counts;
}();

#define QUIESCE_HOT [[gnu::always_inline]] inline
#define QUIESCE_COLD [[gnu::noinline, gnu::cold]]

class BinaryIn {
 public:
  BinaryIn(DecodeState& state, TraceError& error, RecordKind kind, Op op)
      : state_(state), cursor_(state.cursor), end_(state.end), error_(error), kind_(kind), op_(op) {}

  // Hands the position back to the state. False when a field was refused (`error` says why).
  bool finish() {
    state_.cursor = cursor_;
    return !failed_;
  }
  bool failed() const { return failed_; }

  QUIESCE_HOT void u8(const char* key, std::uint8_t& value, std::uint8_t count) {
    if (cursor_ != end_) [[likely]] {
      const auto read = static_cast<std::uint8_t>(*cursor_);
      if (read < count) [[likely]] {
        ++cursor_;
        value = read;
        return;
      }
    }
    u8_refused(key, count);
  }
  QUIESCE_HOT void u32(const char* key, std::uint32_t& value) {
    const std::byte* start = cursor_;
    std::uint64_t read = 0;
    if (!varint(key, read)) return;
    if (read > UINT32_MAX) [[unlikely]] return fail_at(start, key, "is " + std::to_string(read) + ", which does not fit 32 bits");
    value = static_cast<std::uint32_t>(read);
  }
  QUIESCE_HOT void u64(const char* key, std::uint64_t& value) { (void)varint(key, value); }
  QUIESCE_HOT void i32(const char* key, std::int32_t& value) {
    const std::byte* start = cursor_;
    std::uint64_t read = 0;
    if (!varint(key, read)) return;
    const std::int64_t signed_value = unzigzag(read);
    if (signed_value < INT32_MIN || signed_value > INT32_MAX) [[unlikely]] return fail_at(start, key, "does not fit 32 bits");
    value = static_cast<std::int32_t>(signed_value);
  }
  QUIESCE_HOT void fixed64(const char* key, std::uint64_t& value) {
    if (!need(key, 8)) return;
    value = load_fixed64(cursor_);
    cursor_ += 8;
  }
  QUIESCE_HOT void flag(const char* key, bool& value) {
    std::uint8_t read = 0;
    u8(key, read, 2);
    value = read != 0;
  }
  template <class E>
  QUIESCE_HOT void enumeration(const char* key, E& value, std::uint8_t count) {
    std::uint8_t read = 0;
    u8(key, read, count);
    value = static_cast<E>(read);  // 0, a valid value, when the field was refused
  }
  QUIESCE_HOT void id(const char* key, HandleKind kind, std::uint64_t& value) {
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
  QUIESCE_HOT void call_index(const char* key, std::uint64_t& value) {
    std::uint64_t read = 0;
    if (varint(key, read)) value = state_.calls + static_cast<std::uint64_t>(unzigzag(read));
  }
  QUIESCE_HOT void clock(const char* key, std::uint64_t& value) {
    std::uint64_t read = 0;
    if (!varint(key, read)) return;
    value = state_.last_clock_ns + static_cast<std::uint64_t>(unzigzag(read));
    state_.last_clock_ns = value;
  }
  QUIESCE_HOT void text(const char* key, std::string& value) {
    const std::byte* start = cursor_;
    std::uint64_t index = 0;
    if (!varint(key, index)) return;
    if (index < state_.interned.size()) [[likely]] {
      value = state_.interned[index];
      return;
    }
    define_text(start, key, index, value);
  }
  QUIESCE_HOT void bytes(const char* key, Payload& value) {
    if (state_.version < kSeededBytesVersion) return raw_bytes(key, value);
    const std::byte* start = cursor_;
    std::uint64_t head = 0;
    if (!varint(key, head)) return;
    if ((head & 1U) != 0) return seeded_bytes(start, key, head >> 1U, value);
    const std::uint64_t length = head >> 1U;
    if (length > kDataBytesMax || length > static_cast<std::uint64_t>(end_ - cursor_)) [[unlikely]] {
      return length_refused(start, key, length, kDataBytesMax);
    }
    const std::span<const std::byte> bytes(cursor_, length);
    value.assign(bytes);
    cursor_ += length;
    // One encoding per payload: seeded bytes stored byte for byte are a corrupted record.
    if (length >= kSeededBytesMin && seed_of_seeded_bytes(bytes).has_value()) [[unlikely]] {
      return fail_at(start, key, "holds seeded bytes byte for byte, which this version stores as their seed");
    }
  }
  QUIESCE_HOT void values(const char* key, std::vector<std::uint64_t>& value) {
    std::uint64_t count = 0;
    if (!length_of(key, count, kValuesMax)) return;
    value.resize(count);
    for (std::uint64_t& item : value) {
      if (!varint(key, item)) return;
    }
  }
  template <class T, class F>
  QUIESCE_HOT void list(const char* key, std::vector<T>& items, std::uint64_t bound, F&& each) {
    std::uint64_t count = 0;
    if (!length_of(key, count, bound)) return;
    if constexpr (std::is_same_v<T, CommandRecord>) {
      reuse_commands(items, count);
    } else {
      items.resize(count);
    }
    for (T& item : items) {
      each(item);
      if (failed_) return;
    }
  }
  template <class F>
  QUIESCE_HOT void object(const char*, F&& body) {
    if (!failed_) body();
  }
  QUIESCE_HOT void status(Op op, std::uint8_t& status, bool& has_error, bool& has_timing, bool& has_result) {
    const std::byte* start = cursor_;
    std::uint8_t packed = 0;
    u8("status", packed, 0x80);
    status = packed & kStatusMask;
    has_error = (packed & kHasError) != 0;
    has_timing = (packed & kHasTiming) != 0;
    has_result = (packed & kHasResult) != 0;
    if (failed_) [[unlikely]] return;
    if (status >= kStatusCounts[static_cast<std::size_t>(op)]) [[unlikely]] {
      return fail_at(start, "status", "is " + std::to_string(status) + ", not a status of " + std::string(to_string(op)));
    }
    if (has_result && result_of(op) == HandleKind::None) [[unlikely]] {
      return fail_at(start, "status", "claims a result handle, but " + std::string(to_string(op)) + " returns none");
    }
  }

 private:
  static std::uint64_t load_fixed64(const std::byte* at) {
    std::uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 8) value |= std::uint64_t{static_cast<std::uint8_t>(*at++)} << shift;
    return value;
  }

  QUIESCE_HOT bool need(const char* key, std::uint64_t bytes) {
    if (static_cast<std::uint64_t>(end_ - cursor_) >= bytes) [[likely]] return true;
    truncated(key, bytes);
    return false;
  }
  // Most varints are one byte: ids are deltas, sizes and statuses are small.
  QUIESCE_HOT bool varint(const char* key, std::uint64_t& value) {
    if (cursor_ != end_) [[likely]] {
      const auto first = static_cast<std::uint8_t>(*cursor_);
      if ((first & 0x80U) == 0) [[likely]] {
        ++cursor_;
        value = first;
        return true;
      }
      if (end_ - cursor_ >= 10) return varint_unchecked(key, value);
    }
    return varint_near_end(key, value);
  }
  // At least 10 bytes are left, so no byte of the varint needs a bounds check. A varint of up to 8 bytes is
  // read as one word: its last byte is the first without the continuation bit, and the 7-bit groups are
  // packed together in three steps.
  QUIESCE_HOT bool varint_unchecked(const char* key, std::uint64_t& value) {
    std::uint64_t word = 0;
    std::memcpy(&word, cursor_, sizeof(word));
    const std::uint64_t stops = ~word & 0x8080808080808080ULL;
    if (stops == 0) [[unlikely]] return varint_long(key, value);
    const unsigned bits = static_cast<unsigned>(std::countr_zero(stops)) + 1;  // 8 * the varint's length
    std::uint64_t groups = (bits == 64 ? word : word & ((std::uint64_t{1} << bits) - 1)) & 0x7F7F7F7F7F7F7F7FULL;
    groups = ((groups & 0x7F007F007F007F00ULL) >> 1U) | (groups & 0x007F007F007F007FULL);
    groups = ((groups & 0x3FFF00003FFF0000ULL) >> 2U) | (groups & 0x00003FFF00003FFFULL);
    groups = ((groups & 0x0FFFFFFF00000000ULL) >> 4U) | (groups & 0x000000000FFFFFFFULL);
    cursor_ += bits / 8;
    value = groups;
    return true;
  }
  // 9 or 10 bytes, or longer than 64 bits.
  QUIESCE_COLD bool varint_long(const char* key, std::uint64_t& value) {
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
  QUIESCE_COLD bool varint_near_end(const char* key, std::uint64_t& value) {
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
  // A length or count: at most `bound`, and no more than the bytes left could hold (each item takes a byte).
  QUIESCE_HOT bool length_of(const char* key, std::uint64_t& value, std::uint64_t bound) {
    const std::byte* start = cursor_;
    if (!varint(key, value)) return false;
    if (value > bound || value > static_cast<std::uint64_t>(end_ - cursor_)) [[unlikely]] {
      length_refused(start, key, value, bound);
      return false;
    }
    return true;
  }
  void raw_bytes(const char* key, Payload& value) {
    std::uint64_t length = 0;
    if (!length_of(key, length, kDataBytesMax)) return;
    value.assign(std::span<const std::byte>(cursor_, length));
    cursor_ += length;
  }
  // The seed and length are kept; the bytes are made only when a consumer asks for them (Payload).
  void seeded_bytes(const std::byte* start, const char* key, std::uint64_t length, Payload& value) {
    if (length < kSeededBytesMin || length > kDataBytesMax) [[unlikely]] {
      return fail_at(start, key, "holds " + std::to_string(length) + " seeded bytes; a seeded payload holds " +
                                     std::to_string(kSeededBytesMin) + " to " + std::to_string(kDataBytesMax));
    }
    if (length > kSeededBytesTotalMax - state_.seeded_bytes) [[unlikely]] {
      return fail_at(start, key, "expands the trace's seeded bytes beyond the bound " + std::to_string(kSeededBytesTotalMax));
    }
    std::uint64_t seed = 0;
    fixed64(key, seed);
    if (failed_) return;
    state_.seeded_bytes += length;
    value.assign_seeded(seed, length);
  }
  // `count` commands with every field at its default, reusing the commands (and their vectors' storage) of
  // earlier batches: the last batch's list is taken whole, and what it lacks or leaves over moves to or
  // from the spare commands.
  void reuse_commands(std::vector<CommandRecord>& items, std::uint64_t count) {
    if (items.empty()) items.swap(state_.kept_commands);
    std::vector<CommandRecord>& spare = state_.spare_commands;
    while (items.size() > count) {
      spare.push_back(std::move(items.back()));
      items.pop_back();
    }
    while (items.size() < count) {
      if (spare.empty()) {
        items.emplace_back();
      } else {
        items.push_back(std::move(spare.back()));
        spare.pop_back();
      }
    }
    for (CommandRecord& command : items) reset_command(command);
  }
  static void reset_command(CommandRecord& command) {
    command.kind = CommandKind::Launch;
    command.mode = LaunchMode::Normal;
    command.program = 0;
    command.executable = 0;
    command.event = 0;
    command.source = 0;
    command.target = 0;
    command.source_offset = 0;
    command.target_offset = 0;
    command.bytes = 0;
    command.dims = {};
    command.bindings.clear();
    command.data.clear();
  }
  QUIESCE_COLD void define_text(const std::byte* start, const char* key, std::uint64_t index, std::string& value) {
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
  QUIESCE_COLD void u8_refused(const char* key, std::uint8_t count) {
    if (failed_) return;
    if (cursor_ == end_) return truncated(key, 1);
    const auto read = static_cast<std::uint8_t>(*cursor_);
    fail_at(cursor_, key, "has value " + std::to_string(read) + ", above its largest value " + std::to_string(count - 1));
  }
  QUIESCE_COLD void truncated(const char* key, std::uint64_t bytes) {
    if (failed_) return;
    const auto left = static_cast<std::uint64_t>(end_ - cursor_);
    fail_at(cursor_, key, "is truncated: expected " + std::to_string(bytes) + " bytes, found " + std::to_string(left));
  }
  QUIESCE_COLD void length_refused(const std::byte* start, const char* key, std::uint64_t value, std::uint64_t bound) {
    if (value > bound) return fail_at(start, key, "has length " + std::to_string(value) + ", above the bound " + std::to_string(bound));
    const auto left = static_cast<std::uint64_t>(end_ - cursor_);
    fail_at(start, key, "is truncated: it claims " + std::to_string(value) + " items but only " + std::to_string(left) + " bytes are left");
  }
  // Records the first refusal and makes every later field of the record fail at once.
  QUIESCE_COLD void fail_at(const std::byte* where, std::string_view key, const std::string& what) {
    if (failed_) return;
    failed_ = true;
    end_ = cursor_;
    const std::string_view name = kind_ == RecordKind::Call ? to_string(op_) : to_string(kind_);
    error_.where = TraceError::Where::Byte;
    error_.position = static_cast<std::uint64_t>(where - state_.begin);
    error_.what = "record " + std::to_string(state_.records) + " (" + std::string(name) + "), field '" + std::string(key) + "' " + what;
  }

  DecodeState& state_;
  const std::byte* cursor_;
  const std::byte* end_;
  TraceError& error_;
  RecordKind kind_;
  Op op_;
  bool failed_ = false;
};

// Puts back to their defaults exactly the fields that one op's (or note kind's) field list holds, so that
// decoding the next record into the same object costs what the last record wrote, not the whole struct.
// A list of commands is handed to the decode state whole, for the next batch to reuse.
class ClearFields {
 public:
  explicit ClearFields(DecodeState& state) : state_(state) {}

  QUIESCE_HOT void u8(const char*, std::uint8_t& value, std::uint8_t) { value = 0; }
  QUIESCE_HOT void u32(const char*, std::uint32_t& value) { value = 0; }
  QUIESCE_HOT void u64(const char*, std::uint64_t& value) { value = 0; }
  QUIESCE_HOT void i32(const char*, std::int32_t& value) { value = 0; }
  QUIESCE_HOT void fixed64(const char*, std::uint64_t& value) { value = 0; }
  QUIESCE_HOT void flag(const char*, bool& value) { value = false; }
  template <class E>
  QUIESCE_HOT void enumeration(const char*, E& value, std::uint8_t) {
    value = E{};
  }
  QUIESCE_HOT void id(const char*, HandleKind, std::uint64_t& value) { value = 0; }
  QUIESCE_HOT void call_index(const char*, std::uint64_t& value) { value = 0; }
  QUIESCE_HOT void clock(const char*, std::uint64_t& value) { value = 0; }
  QUIESCE_HOT void text(const char*, std::string& value) { value.clear(); }
  QUIESCE_HOT void bytes(const char*, Payload& value) { value.clear(); }
  QUIESCE_HOT void values(const char*, std::vector<std::uint64_t>& value) { value.clear(); }
  template <class T, class F>
  QUIESCE_HOT void list(const char*, std::vector<T>& items, std::uint64_t, F&&) {
    if constexpr (std::is_same_v<T, CommandRecord>) {
      if (state_.kept_commands.empty()) {
        items.swap(state_.kept_commands);
        return;
      }
    }
    items.clear();
  }
  template <class F>
  QUIESCE_HOT void object(const char*, F&& body) {
    body();
  }
  // The presence flags decide which fields follow, so they are cleared last (clear_call).
  QUIESCE_HOT void status(Op, std::uint8_t&, bool&, bool&, bool&) {}

 private:
  DecodeState& state_;
};

using RecordClearer = void (*)(DecodeState&, Record&);

template <Op kOp>
void clear_call(DecodeState& state, Record& record) {
  CallRecord& call = record.call;
  ClearFields visitor(state);
  visit_call(visitor, call, kOp);
  call.op = Op::DeviceInfo;
  call.status = 0;
  call.has_error = false;
  call.error.kind = ErrorKind::Internal;  // the one field whose default is not its zero
  call.timing.reset();
}

template <RecordKind kKind>
void clear_note(DecodeState& state, Record& record) {
  ClearFields visitor(state);
  visit_note(visitor, kKind, record.note);
  record.kind = RecordKind::Call;
}

void clear_nothing(DecodeState&, Record&) {}

// The clearer of every tag a record can have been decoded from; kEndTag and unknown tags leave defaults.
constexpr std::array<RecordClearer, 256> kClearers = [] {
  std::array<RecordClearer, 256> table{};
  for (RecordClearer& clearer : table) clearer = clear_nothing;
  table[static_cast<std::size_t>(RecordKind::Fault)] = clear_note<RecordKind::Fault>;
  table[static_cast<std::size_t>(RecordKind::Schedule)] = clear_note<RecordKind::Schedule>;
  table[static_cast<std::size_t>(RecordKind::Clock)] = clear_note<RecordKind::Clock>;
  table[static_cast<std::size_t>(RecordKind::Finding)] = clear_note<RecordKind::Finding>;
  table[static_cast<std::size_t>(RecordKind::Violation)] = clear_note<RecordKind::Violation>;
#define QUIESCE_TRACE_OP_CLEARER(name, text, subject, result) \
  table[kCallTag + static_cast<std::size_t>(Op::name)] = clear_call<Op::name>;
  QUIESCE_TRACE_OPS(QUIESCE_TRACE_OP_CLEARER)
#undef QUIESCE_TRACE_OP_CLEARER
  return table;
}();

using RecordDecoder = bool (*)(DecodeState&, Record&, TraceError&);

template <Op kOp>
bool decode_call(DecodeState& state, Record& record, TraceError& error) {
  record.kind = RecordKind::Call;
  record.call.op = kOp;
  BinaryIn visitor(state, error, RecordKind::Call, kOp);
  visit_call(visitor, record.call, kOp);
  if (!visitor.finish()) return false;
  state.calls++;
  return true;
}

template <RecordKind kKind>
bool decode_note(DecodeState& state, Record& record, TraceError& error) {
  record.kind = kKind;
  BinaryIn visitor(state, error, kKind, Op::DeviceInfo);
  visit_note(visitor, kKind, record.note);
  return visitor.finish();
}

bool unknown_tag(DecodeState& state, Record&, TraceError& error) {
  const std::byte* tag_at = state.cursor - 1;
  error = TraceError{"record " + std::to_string(state.records) + " has an unknown tag " + std::to_string(static_cast<std::uint8_t>(*tag_at)),
                     TraceError::Where::Byte, static_cast<std::uint64_t>(tag_at - state.begin)};
  return false;
}

// The decoder of every tag: notes at 1..5, calls at kCallTag + op, everything else unknown.
constexpr std::array<RecordDecoder, 256> kDecoders = [] {
  std::array<RecordDecoder, 256> table{};
  for (RecordDecoder& decoder : table) decoder = unknown_tag;
  table[static_cast<std::size_t>(RecordKind::Fault)] = decode_note<RecordKind::Fault>;
  table[static_cast<std::size_t>(RecordKind::Schedule)] = decode_note<RecordKind::Schedule>;
  table[static_cast<std::size_t>(RecordKind::Clock)] = decode_note<RecordKind::Clock>;
  table[static_cast<std::size_t>(RecordKind::Finding)] = decode_note<RecordKind::Finding>;
  table[static_cast<std::size_t>(RecordKind::Violation)] = decode_note<RecordKind::Violation>;
#define QUIESCE_TRACE_OP_DECODER(name, text, subject, result) \
  table[kCallTag + static_cast<std::size_t>(Op::name)] = decode_call<Op::name>;
  QUIESCE_TRACE_OPS(QUIESCE_TRACE_OP_DECODER)
#undef QUIESCE_TRACE_OP_DECODER
  return table;
}();
static_assert(kRecordKindCount == 6, "a new note kind needs its decoder in kDecoders");
static_assert(kCallTag + kOpCount <= 256, "call tags fit a byte");

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

bool decode_record_body(DecodeState& state, std::uint8_t tag, TraceError& error) {
  Record& record = state.record;
  kClearers[state.record_tag](state, record);
  state.record_tag = kEndTag;
  if (!kDecoders[tag](state, record, error)) [[unlikely]] {
    // Whatever the refused record had filled in goes; the commands' storage is kept.
    std::vector<CommandRecord>& commands = record.call.commands;
    if (!commands.empty() && state.kept_commands.empty()) commands.swap(state.kept_commands);
    reset(record);
    return false;
  }
  state.record_tag = tag;
  state.records++;
  return true;
}

}  // namespace quiesce::traces::detail
