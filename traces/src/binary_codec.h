// The binary encoding's visitors: BinaryOut writes a record, BinaryIn reads one with every bound checked.
#pragma once

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
  // Commands of earlier records, kept with their storage so that decoding a batch does not allocate: the
  // whole list of the last batch, and single commands that a shorter batch left over.
  std::vector<CommandRecord> kept_commands;
  std::vector<CommandRecord> spare_commands;
  // The record the reader hands out, and the tag it was decoded from (kEndTag: it holds only defaults).
  // Before the next record is decoded into it, only the fields that tag's decoder wrote are cleared.
  Record record;
  std::uint8_t record_tag = kEndTag;
  TraceError error;  // why the last record was refused (built only then)
  bool done = false;
};

void put_varint(std::vector<std::byte>& out, std::uint64_t value);
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

// What BinaryReader::next does at a tag of 0 or where no record can start: the footer, or why there is none.
TraceResult<const Record*> read_footer(DecodeState& state, TraceFooter& footer);

}  // namespace quiesce::traces::detail
