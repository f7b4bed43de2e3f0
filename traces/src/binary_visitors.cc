// The binary encoding of one record, both directions, over the field list of fields.h.
//
// Decoding is the hot direction (DESIGN §9: 50 M events/s): each op and note kind has its own decoder, an
// instantiation of the field list with the op known at compile time, picked from a table by the record's
// tag. The decoder reads the common case of each field inline and leaves every other case, and so every
// refusal and its text, to FieldReader (binary_field_reader.h); a failed field moves the end to the cursor,
// so every later field of the record fails fast.
#include <array>
#include <cassert>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "binary_codec.h"
#include "binary_field_reader.h"
#include "varint_read.h"
#include "quiesce/core/seeded_bytes.h"
#include "quiesce/traces/codec.h"

namespace quiesce::traces::detail {

void put_long_varint(std::vector<std::byte>& out, std::uint64_t value) {
  std::array<std::byte, 10> bytes{};
  std::size_t count = 0;
  while (value >= 0x80) {
    bytes[count++] = static_cast<std::byte>((value & 0x7FU) | 0x80U);
    value >>= 7U;
  }
  bytes[count++] = static_cast<std::byte>(value);
  out.insert(out.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(count));
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

#define QUIESCE_HOT [[gnu::always_inline]] inline


// Reads a record's fields: the common case of each inline, anything else (FieldReader) out of line. The
// visitor's address is never taken (the field lists' lambdas are inlined, FieldReader gets a copy of the
// position), so that its cursor and end stay in registers from the record's first field to its last.
class BinaryIn {
 public:
  static constexpr bool kReadsPresence = true;  // status() sets the flags, read or refused (FieldReader)

  BinaryIn(DecodeState& state, TraceError& error, RecordKind kind, Op op)
      : state_(state), error_(error), cursor_(state.cursor), end_(state.end), kind_(kind), op_(op) {}

  // Hands the position back to the state. False when a field was refused (`error` says why).
  bool finish() {
    state_.cursor = cursor_;
    return !failed_;
  }

  QUIESCE_HOT void u8(const char* key, std::uint8_t& value, std::uint8_t count) {
    if (cursor_ != end_) [[likely]] {
      const auto read = static_cast<std::uint8_t>(*cursor_);
      if (read < count) [[likely]] {
        ++cursor_;
        value = read;
        return;
      }
    }
    exactly([key, &value, count](FieldReader& reader) { reader.u8(key, value, count); });
  }
  QUIESCE_HOT void u32(const char* key, std::uint32_t& value) {
    const std::byte* start = cursor_;
    std::uint64_t read = 0;
    if (next_varint(read) && read <= UINT32_MAX) [[likely]] {
      value = static_cast<std::uint32_t>(read);
      return;
    }
    cursor_ = start;
    exactly([key, &value](FieldReader& reader) { reader.u32(key, value); });
  }
  QUIESCE_HOT void u64(const char* key, std::uint64_t& value) {
    if (next_varint(value)) [[likely]] return;
    exactly([key, &value](FieldReader& reader) { reader.u64(key, value); });
  }
  QUIESCE_HOT void i32(const char* key, std::int32_t& value) {
    const std::byte* start = cursor_;
    std::uint64_t read = 0;
    if (next_varint(read)) [[likely]] {
      const std::int64_t signed_value = unzigzag(read);
      if (signed_value >= INT32_MIN && signed_value <= INT32_MAX) [[likely]] {
        value = static_cast<std::int32_t>(signed_value);
        return;
      }
    }
    cursor_ = start;
    exactly([key, &value](FieldReader& reader) { reader.i32(key, value); });
  }
  QUIESCE_HOT void fixed64(const char* key, std::uint64_t& value) {
    if (end_ - cursor_ >= 8) [[likely]] {
      value = load_fixed64(cursor_);
      cursor_ += 8;
      return;
    }
    exactly([key, &value](FieldReader& reader) { reader.fixed64(key, value); });
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
    if (next_varint(read)) [[likely]] {
      value = decode_id(state_, kind, read);
      return;
    }
    exactly([key, kind, &value](FieldReader& reader) { reader.id(key, kind, value); });
  }
  QUIESCE_HOT void call_index(const char* key, std::uint64_t& value) {
    std::uint64_t read = 0;
    if (next_varint(read)) [[likely]] {
      value = state_.calls + static_cast<std::uint64_t>(unzigzag(read));
      return;
    }
    exactly([key, &value](FieldReader& reader) { reader.call_index(key, value); });
  }
  QUIESCE_HOT void clock(const char* key, std::uint64_t& value) {
    std::uint64_t read = 0;
    if (next_wide_varint(read)) [[likely]] {
      value = state_.last_clock_ns + static_cast<std::uint64_t>(unzigzag(read));
      state_.last_clock_ns = value;
      return;
    }
    exactly([key, &value](FieldReader& reader) { reader.clock(key, value); });
  }
  // A string defined before; a new one is FieldReader's.
  QUIESCE_HOT void text(const char* key, std::string& value) {
    const std::byte* start = cursor_;
    std::uint64_t index = 0;
    if (next_varint(index) && index < state_.interned.size()) [[likely]] {
      value = state_.interned[index];
      return;
    }
    cursor_ = start;
    exactly([key, &value](FieldReader& reader) { reader.text(key, value); });
  }
  // A seed within its bounds, or bytes that are not seeded bytes (version 2), or bytes (version 1).
  QUIESCE_HOT void bytes(const char* key, Payload& value) {
    const std::byte* start = cursor_;
    std::uint64_t head = 0;
    if (next_varint(head)) [[likely]] {
      const auto left = static_cast<std::uint64_t>(end_ - cursor_);
      if (state_.version < kSeededBytesVersion) [[unlikely]] {
        if (head <= kDataBytesMax && head <= left) {
          value.assign(std::span<const std::byte>(cursor_, head));
          cursor_ += head;
          return;
        }
      } else if ((head & 1U) != 0) {
        const std::uint64_t length = head >> 1U;
        if (length >= kSeededBytesMin && length <= kDataBytesMax && length <= kSeededBytesTotalMax - state_.seeded_bytes &&
            left >= 8) [[likely]] {
          value.assign_seeded(load_fixed64(cursor_), length);
          cursor_ += 8;
          state_.seeded_bytes += length;
          return;
        }
      } else {
        const std::uint64_t length = head >> 1U;
        const std::span<const std::byte> bytes(cursor_, length <= left ? length : 0);
        if (length <= kDataBytesMax && length <= left &&
            (length < kSeededBytesMin || !seed_of_seeded_bytes(bytes).has_value())) [[likely]] {
          value.assign(bytes);
          cursor_ += length;
          return;
        }
      }
    }
    cursor_ = start;
    exactly([key, &value](FieldReader& reader) { reader.bytes(key, value); });
  }
  QUIESCE_HOT void values(const char* key, std::vector<std::uint64_t>& value) {
    const std::byte* start = cursor_;
    std::uint64_t count = 0;
    if (next_length(count, kValuesMax)) [[likely]] {
      value.resize(count);
      bool read_all = true;
      for (std::uint64_t& item : value) {
        if (!next_varint(item)) [[unlikely]] {
          read_all = false;
          break;
        }
      }
      if (read_all) [[likely]] return;
    }
    cursor_ = start;
    exactly([key, &value](FieldReader& reader) { reader.values(key, value); });
  }
  template <class T, class F>
  QUIESCE_HOT void list(const char* key, std::vector<T>& items, std::uint64_t bound, F&& each) {
    std::uint64_t count = 0;
    if (!next_length(count, bound)) [[unlikely]] {
      exactly([key, &count, bound](FieldReader& reader) { (void)reader.length_of(key, count, bound); });
      if (failed_) return;
    }
    if constexpr (std::is_same_v<T, CommandRecord>) {
      reuse_commands(items, count);
    } else {
      items.resize(count);
    }
    for (T& item : items) {
      each(item);
      if (failed_) [[unlikely]] return;
    }
  }
  template <class F>
  QUIESCE_HOT void object(const char*, F&& body) {
    if (!failed_) body();
  }
  QUIESCE_HOT void status(Op op, std::uint8_t& status, bool& has_error, bool& has_timing, bool& has_result) {
    if (cursor_ != end_) [[likely]] {
      const auto packed = static_cast<std::uint8_t>(*cursor_);
      const bool claims_result = (packed & kHasResult) != 0;
      if (packed < 0x80 && (packed & kStatusMask) < kStatusCounts[static_cast<std::size_t>(op)] &&
          (!claims_result || result_of(op) != HandleKind::None)) [[likely]] {
        ++cursor_;
        status = packed & kStatusMask;
        has_error = (packed & kHasError) != 0;
        has_timing = (packed & kHasTiming) != 0;
        has_result = claims_result;
        return;
      }
    }
    exactly([op, &status, &has_error, &has_timing, &has_result](FieldReader& reader) {
      reader.status(op, status, has_error, has_timing, has_result);
    });
  }

 private:
  // The field at the cursor, read by FieldReader (from the field's first byte).
  template <class F>
  QUIESCE_HOT void exactly(const F& field) {
    const FieldPosition after = read_exactly(FieldSite{&state_, &error_, kind_, op_}, FieldPosition{cursor_, end_, failed_}, field);
    cursor_ = after.cursor;
    end_ = after.end;
    failed_ = after.failed;
  }
  // A varint of one byte, or of up to 8 bytes with at least 10 left: true with the cursor past it. False
  // for any other, with nothing moved.
  QUIESCE_HOT bool next_varint(std::uint64_t& value) {
    if (cursor_ == end_) [[unlikely]] return false;
    const auto first = static_cast<std::uint8_t>(*cursor_);
    if ((first & 0x80U) == 0) [[likely]] {
      ++cursor_;
      value = first;
      return true;
    }
    const VarintRead read = read_multibyte_varint(cursor_, end_);
    if (read.next == nullptr) [[unlikely]] return false;
    cursor_ = read.next;
    value = read.value;
    return true;
  }
  // The same for a field whose length varies from record to record (a clock's step): no branch on the
  // length while 10 bytes are left.
  QUIESCE_HOT bool next_wide_varint(std::uint64_t& value) {
    if (end_ - cursor_ < 10) [[unlikely]] return next_varint(value);
    const unsigned length = read_varint_word_picked(cursor_, value);
    cursor_ += length;
    return length != 0;
  }
  // A length or count within `bound` that the bytes left could hold (each item takes a byte); false with
  // nothing moved otherwise.
  QUIESCE_HOT bool next_length(std::uint64_t& value, std::uint64_t bound) {
    const std::byte* start = cursor_;
    if (next_varint(value) && value <= bound && value <= static_cast<std::uint64_t>(end_ - cursor_)) [[likely]] return true;
    cursor_ = start;
    return false;
  }
  // `count` commands with every field at its default, reusing the commands (and their vectors' storage) of
  // earlier batches: the list of the last record of this op when it has `count`, else the last list of
  // this size (swap_commands).
  QUIESCE_HOT void reuse_commands(std::vector<CommandRecord>& items, std::uint64_t count) {
    if (items.size() != count) [[unlikely]] swap_commands(items, count);
    for (CommandRecord& command : items) reset_command(command);
  }
  // Keeps the list for a later batch of its size and takes the one kept for `count`; a list of another size
  // (the first batch of a size, or a larger batch) gets what it lacks or leaves over from or to the spare
  // commands.
  [[gnu::noinline]] void swap_commands(std::vector<CommandRecord>& items, std::uint64_t count) {
    keep_commands(state_, items);
    if (count != 0) items.swap(state_.kept_batches[kept_batch_slot(count)]);
    if (items.size() != count) resize_commands(items, count);
  }
  // Moves commands between the list and the spare ones until the list holds `count`.
  void resize_commands(std::vector<CommandRecord>& items, std::uint64_t count) {
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
  }
  QUIESCE_HOT static void reset_command(CommandRecord& command) {
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
  DecodeState& state_;
  TraceError& error_;
  const std::byte* cursor_;
  const std::byte* end_;
  RecordKind kind_;
  Op op_;
  bool failed_ = false;
};

// A decoder reads its record into the record of its tag and returns it, or null when it refused it.
using RecordDecoder = const Record* (*)(DecodeState&);

// Puts a refused record back to its defaults, keeping its label and its storage (the commands' for a later
// batch); out of line, so that the refusal's code does not cost a decoder registers for every record.
[[gnu::noinline, gnu::cold]] const Record* refuse(DecodeState& state, Record& record) {
  const RecordKind kind = record.kind;
  const Op op = record.call.op;
  keep_commands(state, record.call.commands);
  reset(record);
  record.kind = kind;
  record.call.op = op;
  return nullptr;
}

template <Op kOp>
const Record* decode_call(DecodeState& state) {
  Record& record = state.decoded[decoded_slot(kOp)];
  CallRecord& call = record.call;
  // What the presence flags of this record may leave out goes back to its default first.
  if (call.has_error) [[unlikely]] reset(call.error);
  if constexpr (result_of(kOp) != HandleKind::None) {
    call.result_id = 0;
    call.result_epoch = 0;
  }
  call.timing.reset();
  BinaryIn visitor(state, state.error, RecordKind::Call, kOp);
  visit_call(visitor, call, kOp);
  if (!visitor.finish()) [[unlikely]] return refuse(state, record);
  state.calls++;
  return &record;
}

template <RecordKind kKind>
const Record* decode_note(DecodeState& state) {
  Record& record = state.decoded[decoded_slot(kKind)];
  BinaryIn visitor(state, state.error, kKind, Op::DeviceInfo);
  visit_note(visitor, kKind, record.note);
  if (!visitor.finish()) [[unlikely]] return refuse(state, record);
  return &record;
}

const Record* unknown_tag(DecodeState& state) {
  const std::byte* tag_at = state.cursor - 1;
  state.error = TraceError{"record " + std::to_string(state.records) + " has an unknown tag " + std::to_string(static_cast<std::uint8_t>(*tag_at)),
                           TraceError::Where::Byte, static_cast<std::uint64_t>(tag_at - state.begin)};
  return nullptr;
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

[[gnu::noinline, gnu::cold]] void drop_commands(std::vector<CommandRecord>& commands) { commands.clear(); }

DecodeState::DecodeState() {
  for (std::size_t kind = 1; kind < kRecordKindCount; ++kind) {  // every kind after Call is a note kind
    const auto note = static_cast<RecordKind>(kind);
    decoded[decoded_slot(note)].kind = note;
  }
  for (std::size_t index = 0; index < kOpCount; ++index) {
    const auto op = static_cast<Op>(index);
    decoded[decoded_slot(op)].call.op = op;
  }
}

[[gnu::noinline, gnu::cold]] TraceError refusal(const DecodeState& state) { return state.error; }

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

}  // namespace quiesce::traces::detail

namespace quiesce::traces {

// Here rather than with the rest of the reader (binary.cc), so that a record costs one call from the
// consumer, then its decoder from the table above; a tag of 0 and the end of the input are
// detail::read_footer's.
TraceResult<const Record*> BinaryReader::next() {
  detail::DecodeState& state = *state_;
  if (state.cursor == state.end || state.records >= kRecordsMax) [[unlikely]] return detail::read_footer(state, footer_);
  const auto tag = static_cast<std::uint8_t>(*state.cursor);
  if (tag == detail::kEndTag) [[unlikely]] return detail::read_footer(state, footer_);
  ++state.cursor;
  const Record* record = detail::kDecoders[tag](state);
  if (record == nullptr) [[unlikely]] return detail::refusal(state);
  state.records++;
  return record;
}

}  // namespace quiesce::traces
