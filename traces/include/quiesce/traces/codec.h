// The two encodings of a trace and the files that hold them (docs/trace-format.md is the specification).
//
// Binary: magic, version, header, records, footer. Integers are LEB128 varints, handle ids are
// delta-encoded per handle kind, strings inside records are interned, so a typical record takes a few bytes.
// JSON Lines: one header object, one object per record, one footer object, readable and diffable.
// Both carry the same footer digest: XXH3-64 over the binary encoding of header and records, so a converted trace
// keeps its digest and either encoding replays. Every reader bounds every size and count before it
// allocates, and refuses bad input with what is wrong and where (byte offset or line number).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quiesce/traces/record.h"

namespace quiesce::traces {

inline constexpr std::array<std::byte, 8> kBinaryMagic = {
    std::byte{'Q'}, std::byte{'T'}, std::byte{'R'}, std::byte{'C'},
    std::byte{'\r'}, std::byte{'\n'}, std::byte{0x1A}, std::byte{'\n'}};

enum class Encoding : std::uint8_t { Binary, JsonLines };

// Where the records of a run go. The Recorder appends to one; a replay appends to one that compares.
class TraceSink {
 public:
  TraceSink() = default;
  TraceSink(const TraceSink&) = delete;
  TraceSink& operator=(const TraceSink&) = delete;
  virtual ~TraceSink() = default;
  virtual void append(const Record& record) = 0;
};

namespace detail {
struct EncodeState;
struct DecodeState;
}  // namespace detail

// Encodes records as they come, into memory, with a running digest.
class BinaryWriter final : public TraceSink {
 public:
  explicit BinaryWriter(const TraceHeader& header);
  ~BinaryWriter() override;

  void append(const Record& record) override;

  std::uint64_t record_count() const;
  std::uint64_t call_count() const;
  std::uint64_t digest() const;  // of the header and the records appended so far
  std::size_t size_bytes() const;
  // Appends the footer and hands the whole encoding over; the writer accepts nothing afterwards.
  std::vector<std::byte> finish();

 private:
  std::unique_ptr<detail::EncodeState> state_;
  std::vector<std::byte> bytes_;
  bool finished_ = false;
};

// Decodes one record at a time into a record it holds for that record's tag (its op or note kind), reusing
// that record's storage: decoding a record costs what its own fields cost, not a whole Record's worth of
// clearing and allocation.
class BinaryReader {
 public:
  static TraceResult<BinaryReader> open(std::span<const std::byte> bytes);
  BinaryReader(BinaryReader&&) noexcept;
  BinaryReader& operator=(BinaryReader&&) noexcept;
  ~BinaryReader();

  const TraceHeader& header() const { return header_; }
  // The next record, held by the reader and valid until the next call; null once the footer was reached and
  // checked against the records.
  TraceResult<const Record*> next();
  const TraceFooter& footer() const { return footer_; }
  std::uint64_t records_read() const;

 private:
  BinaryReader();

  std::unique_ptr<detail::DecodeState> state_;
  TraceHeader header_;
  TraceFooter footer_;
};

std::vector<std::byte> encode_binary(const Trace& trace);
TraceResult<Trace> decode_binary(std::span<const std::byte> bytes);

std::string encode_jsonl(const Trace& trace);
TraceResult<Trace> decode_jsonl(std::string_view text);
// One record as its JSON Lines line, without the newline, for diagnostics: every field, in ASCII (other
// characters escaped, an invalid UTF-8 byte replaced), so it can be printed as it is.
std::string record_jsonl(const Record& record);

// The footer a trace should have: its record count and the digest of its binary encoding.
TraceFooter compute_footer(const TraceHeader& header, std::span<const Record> records);

// Either encoding, told apart by the binary magic.
TraceResult<Trace> decode_trace(std::span<const std::byte> bytes);
TraceResult<Trace> read_trace_file(const std::string& path);
TraceResult<void> write_trace_file(const std::string& path, const Trace& trace, Encoding encoding);
TraceResult<void> write_bytes_file(const std::string& path, std::span<const std::byte> bytes);

}  // namespace quiesce::traces
