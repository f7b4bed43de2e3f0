// The binary encoding's visitors: BinaryOut writes a record, BinaryIn reads one with every bound checked.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "fields.h"
#include "quiesce/traces/record.h"

namespace quiesce::traces::detail {

// Record tags of the binary encoding: 0 ends the records, 1..5 are notes, kCallTag + op is a call.
inline constexpr std::uint8_t kEndTag = 0;
inline constexpr std::uint8_t kCallTag = 0x40;

// Format version 2 stores a payload of seeded bytes (core/seeded_bytes.h) as its length and seed. What the
// seeds of one trace expand to is bounded, like everything else a reader allocates for.
inline constexpr std::uint32_t kSeededBytesVersion = 2;
inline constexpr std::uint64_t kSeededBytesTotalMax = std::uint64_t{1} << 30;

struct EncodeState {
  std::uint32_t version = kFormatVersion;
  std::uint64_t last_id[kHandleKindCount] = {};
  std::uint64_t calls = 0;
  std::uint64_t records = 0;
  std::uint64_t last_clock_ns = 0;
  // Lookup only, never iterated: the order of interning is the order of first use.
  std::unordered_map<std::string, std::uint64_t> interned;
  std::vector<std::byte> scratch;  // a seeded payload's bytes, for format version 1
};

inline constexpr std::size_t kKeptBatchSizes = 8;

// Where DecodeState keeps a command list of `size` commands between batches.
constexpr std::size_t kept_batch_slot(std::size_t size) { return size < kKeptBatchSizes ? size : 0; }

struct DecodeState {
  std::uint32_t version = kFormatVersion;
  const std::byte* begin = nullptr;
  const std::byte* cursor = nullptr;
  const std::byte* end = nullptr;
  const std::byte* records_begin = nullptr;
  std::uint64_t last_id[kHandleKindCount] = {};
  std::uint64_t calls = 0;
  std::uint64_t records = 0;
  std::uint64_t last_clock_ns = 0;
  std::uint64_t seeded_bytes = 0;  // bytes expanded from seeds so far
  std::vector<std::string> interned;
  // Command lists of earlier records, kept with their storage so that decoding a batch neither allocates
  // nor moves commands: the list of the last batch of each size below kKeptBatchSizes (at its size), one of
  // a larger batch (at 0), and single commands that a list cut to a new size left over.
  std::array<std::vector<CommandRecord>, kKeptBatchSizes> kept_batches;
  std::vector<CommandRecord> spare_commands;
  // The records the reader hands out, one per tag (decoded_slot): each is written only by its tag's
  // decoder, so the fields its op or note kind never has stay at their defaults, and decoding the next
  // record of that tag rewrites every field it has, save the error, result and timing that a call's
  // presence flags leave out (the decoder clears those). Each is labelled with its kind and op once;
  // slot 0 (the kind Call, which no tag names) stays unused.
  std::array<Record, kRecordKindCount + kOpCount> decoded;
  TraceError error;  // why the last record was refused (built only then)
  bool done = false;

  DecodeState();
};

// Where DecodeState keeps the records of a note kind and of a call's op.
constexpr std::size_t decoded_slot(RecordKind kind) { return static_cast<std::size_t>(kind); }
constexpr std::size_t decoded_slot(Op op) { return kRecordKindCount + static_cast<std::size_t>(op); }

// Empties a command list whose slot is taken (out of line: it frees their storage, which is rare).
void drop_commands(std::vector<CommandRecord>& commands);

// Takes a decoded record's command list back for a later batch of its size; the list is left empty.
inline void keep_commands(DecodeState& state, std::vector<CommandRecord>& commands) {
  std::vector<CommandRecord>& slot = state.kept_batches[kept_batch_slot(commands.size())];
  if (slot.empty()) [[likely]] {
    commands.swap(slot);
    return;
  }
  drop_commands(commands);
}

// The encoder writes a varint per field and most fit one byte: that case is inlined into every field
// writer, and a longer varint is appended out of line (put_long_varint, built in registers and inserted at
// once), so that the one-byte case pays neither a call nor the long case's register saves.
void put_long_varint(std::vector<std::byte>& out, std::uint64_t value);
[[gnu::always_inline]] inline void put_varint(std::vector<std::byte>& out, std::uint64_t value) {
  if (value < 0x80) [[likely]] {
    out.push_back(static_cast<std::byte>(value));
    return;
  }
  put_long_varint(out, value);
}
void put_fixed64(std::vector<std::byte>& out, std::uint64_t value);
void put_text(std::vector<std::byte>& out, const std::string& text);

inline std::uint64_t zigzag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1U) ^ static_cast<std::uint64_t>(value >> 63);
}
inline std::int64_t unzigzag(std::uint64_t value) {
  return static_cast<std::int64_t>(value >> 1U) ^ -static_cast<std::int64_t>(value & 1U);
}

// A handle id from its encoding: 0 is "no handle"; any other value is the zigzag delta from the last id of
// its kind, plus one (the last id then moves to it).
inline std::uint64_t decode_id(DecodeState& state, HandleKind kind, std::uint64_t read) {
  if (read == 0) return 0;
  std::uint64_t& last = state.last_id[static_cast<std::size_t>(kind)];
  last += static_cast<std::uint64_t>(unzigzag(read - 1));
  return last;
}

// Appends one record's encoding (tag included) to `out`.
void encode_record(EncodeState& state, const Record& record, std::vector<std::byte>& out);

// Why the last record was refused (out of line: BinaryReader::next keeps no copy of a TraceError inline).
TraceError refusal(const DecodeState& state);

// What BinaryReader::next does at a tag of 0 or where no record can start: the footer, or why there is none.
TraceResult<const Record*> read_footer(DecodeState& state, TraceFooter& footer);

}  // namespace quiesce::traces::detail
