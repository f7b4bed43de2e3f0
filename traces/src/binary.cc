// The binary encoding: header and footer framing, the streaming writer and reader, whole-trace helpers.
#include <algorithm>
#include <cstring>
#include <span>
#include <string>

#include "binary_codec.h"
#include "text_util.h"
#include "quiesce/core/digest.h"
#include "quiesce/traces/codec.h"

namespace quiesce::traces {
namespace {

void put_header(std::vector<std::byte>& out, const TraceHeader& header) {
  // Byte by byte: g++ 12 misreads a range insert into an empty vector as an overflow (GCC bug 107852).
  for (const std::byte byte : kBinaryMagic) out.push_back(byte);
  detail::put_varint(out, header.format_version);
  detail::put_text(out, header.quiesce_version);
  detail::put_text(out, header.git_commit);
  detail::put_fixed64(out, header.seed);
  detail::put_text(out, header.device);
  detail::put_text(out, header.fault_plan);
  detail::put_text(out, header.cost_profile);
  detail::put_text(out, header.schedule);
  detail::put_text(out, header.workload);
}

// Reads the header fields with the same bounds as the records.
class HeaderIn {
 public:
  explicit HeaderIn(detail::DecodeState& state) : state_(state) {}

  bool varint(const char* field, std::uint64_t& value) {
    const std::byte* start = state_.cursor;
    std::uint64_t result = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (state_.cursor == state_.end) return fail(start, std::string("the header field '") + field + "' is truncated");
      const auto byte = static_cast<std::uint8_t>(*state_.cursor++);
      result |= std::uint64_t{byte & 0x7FU} << shift;
      if ((byte & 0x80U) == 0) {
        value = result;
        return true;
      }
    }
    return fail(start, std::string("the header field '") + field + "' is a varint longer than 64 bits");
  }
  bool text(const char* field, std::string& value) {
    const std::byte* start = state_.cursor;
    std::uint64_t length = 0;
    if (!varint(field, length)) return false;
    if (length > kTextBytesMax) {
      return fail(start, std::string("the header field '") + field + "' has length " + std::to_string(length) +
                             ", above the bound " + std::to_string(kTextBytesMax));
    }
    if (length > static_cast<std::uint64_t>(state_.end - state_.cursor)) {
      return fail(start, std::string("the header field '") + field + "' is truncated: it claims " +
                             std::to_string(length) + " bytes");
    }
    value.assign(reinterpret_cast<const char*>(state_.cursor), length);  // NOLINT: bytes of the text
    if (!detail::utf8_valid(value)) return fail(start, std::string("the header field '") + field + "' is not valid UTF-8");
    state_.cursor += length;
    return true;
  }
  bool fixed64(const char* field, std::uint64_t& value) {
    if (state_.end - state_.cursor < 8) return fail(state_.cursor, std::string("the header field '") + field + "' is truncated");
    value = 0;
    for (unsigned shift = 0; shift < 64; shift += 8) value |= std::uint64_t{static_cast<std::uint8_t>(*state_.cursor++)} << shift;
    return true;
  }
  bool fail(const std::byte* where, std::string what) {
    error = TraceError{std::move(what), TraceError::Where::Byte, static_cast<std::uint64_t>(where - state_.begin)};
    return false;
  }

  TraceError error;

 private:
  detail::DecodeState& state_;
};

TraceResult<TraceHeader> read_header(detail::DecodeState& state) {
  HeaderIn in(state);
  const auto size = static_cast<std::size_t>(state.end - state.begin);
  if (size < kBinaryMagic.size() || !std::equal(kBinaryMagic.begin(), kBinaryMagic.end(), state.begin)) {
    return TraceError{"this is not a quiesce binary trace: the first 8 bytes are not the magic \"QTRC\\r\\n\\x1a\\n\"",
                      TraceError::Where::Byte, 0};
  }
  state.cursor = state.begin + kBinaryMagic.size();
  TraceHeader header;
  std::uint64_t version = 0;
  if (!in.varint("format_version", version)) return in.error;
  if (version == 0) return TraceError{"format version 0 does not exist; versions start at 1", TraceError::Where::Byte, 8};
  if (version > kFormatVersion) {
    return TraceError{"the trace has format version " + std::to_string(version) + ", newer than the newest this reader knows (" +
                          std::to_string(kFormatVersion) + "); use a newer quiesce",
                      TraceError::Where::Byte, 8};
  }
  header.format_version = static_cast<std::uint32_t>(version);
  state.version = header.format_version;  // the records are read with their own version's field list
  if (!in.text("quiesce_version", header.quiesce_version) || !in.text("git_commit", header.git_commit) ||
      !in.fixed64("seed", header.seed) || !in.text("device", header.device) || !in.text("fault_plan", header.fault_plan) ||
      !in.text("cost_profile", header.cost_profile) || !in.text("schedule", header.schedule) ||
      !in.text("workload", header.workload)) {
    return in.error;
  }
  state.records_begin = state.cursor;
  return header;
}

// A record is 512 bytes and the encoder reads it at scattered offsets (its kind, status, timing, result and
// per-op fields: four or five of its eight cache lines), while a whole trace is far larger than the caches.
// So every line of the record some records ahead is fetched while this one is encoded.
constexpr std::size_t kEncodePrefetchAhead = 4;
constexpr std::size_t kCacheLineBytes = 64;
void append_records(BinaryWriter& writer, std::span<const Record> records) {
  for (std::size_t index = 0; index < records.size(); ++index) {
    if (index + kEncodePrefetchAhead < records.size()) {
      const char* const bytes = reinterpret_cast<const char*>(&records[index + kEncodePrefetchAhead]);  // NOLINT
      for (std::size_t offset = 0; offset < sizeof(Record); offset += kCacheLineBytes) __builtin_prefetch(bytes + offset);
    }
    writer.append(records[index]);
  }
}

}  // namespace

// ---- writer ----

// The records are written in the header's version: replaying or converting an older trace gives back its
// own encoding and digest.
BinaryWriter::BinaryWriter(const TraceHeader& header) : state_(std::make_unique<detail::EncodeState>()) {
  state_->version = header.format_version;
  bytes_.reserve(4096);
  put_header(bytes_, header);
}

BinaryWriter::~BinaryWriter() = default;

void BinaryWriter::append(const Record& record) {
  if (finished_) return;  // a finished writer has handed its bytes over; nothing more belongs to that trace
  detail::encode_record(*state_, record, bytes_);
}

std::uint64_t BinaryWriter::record_count() const { return state_->records; }
std::uint64_t BinaryWriter::call_count() const { return state_->calls; }
std::size_t BinaryWriter::size_bytes() const { return bytes_.size(); }

// The digest covers the header too, so a changed seed or configuration is caught like a changed record.
std::uint64_t BinaryWriter::digest() const { return hash_bytes(bytes_); }

std::vector<std::byte> BinaryWriter::finish() {
  if (finished_) return {};
  const std::uint64_t records_digest = digest();
  bytes_.push_back(std::byte{detail::kEndTag});
  detail::put_varint(bytes_, state_->records);
  detail::put_fixed64(bytes_, records_digest);
  finished_ = true;
  return std::move(bytes_);
}

// ---- reader ----

BinaryReader::BinaryReader() : state_(std::make_unique<detail::DecodeState>()) {}
BinaryReader::BinaryReader(BinaryReader&&) noexcept = default;
BinaryReader& BinaryReader::operator=(BinaryReader&&) noexcept = default;
BinaryReader::~BinaryReader() = default;

TraceResult<BinaryReader> BinaryReader::open(std::span<const std::byte> bytes) {
  BinaryReader reader;
  reader.state_->begin = bytes.data();
  reader.state_->cursor = bytes.data();
  reader.state_->end = bytes.data() + bytes.size();
  TraceResult<TraceHeader> header = read_header(*reader.state_);
  if (!header.ok()) return header.error();
  reader.header_ = std::move(header).value();
  return reader;
}

std::uint64_t BinaryReader::records_read() const { return state_->records; }

// Everything of BinaryReader::next (binary_visitors.cc) but a record: a finished reader (its cursor is at the
// end), the end of the input, too many records, or the footer (the record count and digest, then nothing).
TraceResult<const Record*> detail::read_footer(detail::DecodeState& state, TraceFooter& footer) {
  if (state.done) return nullptr;
  const auto offset = [&state](const std::byte* at) { return static_cast<std::uint64_t>(at - state.begin); };
  if (state.cursor == state.end) {
    return TraceError{"the trace is truncated after record " + std::to_string(state.records) + ": the footer is missing",
                      TraceError::Where::Byte, offset(state.cursor)};
  }
  if (state.records >= kRecordsMax) {
    return TraceError{"the trace has more than " + std::to_string(kRecordsMax) + " records", TraceError::Where::Byte, offset(state.cursor)};
  }
  const std::byte* footer_at = state.cursor++;
  const std::span<const std::byte> covered(state.begin, static_cast<std::size_t>(footer_at - state.begin));
  std::uint64_t count = 0;
  unsigned shift = 0;
  for (;; shift += 7) {
    if (state.cursor == state.end || shift >= 64) {
      return TraceError{"the footer's record count is truncated or malformed", TraceError::Where::Byte, offset(footer_at)};
    }
    const auto byte = static_cast<std::uint8_t>(*state.cursor++);
    count |= std::uint64_t{byte & 0x7FU} << shift;
    if ((byte & 0x80U) == 0) break;
  }
  if (state.end - state.cursor < 8) {
    return TraceError{"the footer's digest is truncated: expected 8 bytes, found " + std::to_string(state.end - state.cursor),
                      TraceError::Where::Byte, offset(state.cursor)};
  }
  std::uint64_t stored_digest = 0;
  for (unsigned byte_shift = 0; byte_shift < 64; byte_shift += 8) {
    stored_digest |= std::uint64_t{static_cast<std::uint8_t>(*state.cursor++)} << byte_shift;
  }
  if (state.cursor != state.end) {
    return TraceError{std::to_string(state.end - state.cursor) + " bytes follow the footer", TraceError::Where::Byte, offset(state.cursor)};
  }
  if (count != state.records) {
    return TraceError{"the footer counts " + std::to_string(count) + " records but the trace holds " + std::to_string(state.records),
                      TraceError::Where::Byte, offset(footer_at)};
  }
  const std::uint64_t actual_digest = hash_bytes(covered);
  if (stored_digest != actual_digest) {
    return TraceError{"the trace's digest is " + to_hex(actual_digest) + " but the footer says " + to_hex(stored_digest) +
                          ": the header or a record was corrupted",
                      TraceError::Where::Byte, offset(footer_at)};
  }
  footer = TraceFooter{count, stored_digest};
  state.done = true;
  return nullptr;
}


// ---- whole traces ----

std::vector<std::byte> encode_binary(const Trace& trace) {
  BinaryWriter writer(trace.header);
  append_records(writer, trace.records);
  return writer.finish();
}

TraceResult<Trace> decode_binary(std::span<const std::byte> bytes) {
  TraceResult<BinaryReader> opened = BinaryReader::open(bytes);
  if (!opened.ok()) return opened.error();
  BinaryReader reader = std::move(opened).value();
  Trace trace;
  trace.header = reader.header();
  for (std::uint64_t index = 0; index <= kRecordsMax; ++index) {
    TraceResult<const Record*> next = reader.next();
    if (!next.ok()) return next.error();
    if (next.value() == nullptr) {
      trace.footer = reader.footer();
      return trace;
    }
    trace.records.push_back(*next.value());
  }
  return TraceError{"the trace has more than " + std::to_string(kRecordsMax) + " records", TraceError::Where::Record, kRecordsMax};
}

TraceFooter compute_footer(const TraceHeader& header, std::span<const Record> records) {
  BinaryWriter writer(header);
  append_records(writer, records);
  return TraceFooter{writer.record_count(), writer.digest()};
}

}  // namespace quiesce::traces
