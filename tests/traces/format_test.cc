// The two encodings: lossless both ways, compact, versioned, and every damaged input refused cleanly.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "quiesce/core/seeded_bytes.h"
#include "quiesce/traces/codec.h"
#include "quiesce/traces/print.h"
#include "quiesce/traces/validate.h"
#include "sample_trace.h"

namespace quiesce::traces {
namespace {

std::span<const std::byte> as_bytes(const std::string& text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};  // NOLINT
}

TEST(TraceFormat, SampleTraceIsValid) {
  const Trace trace = testing::sample_trace();
  const TraceResult<void> valid = validate_trace(trace);
  ASSERT_TRUE(valid.ok()) << valid.error().message();
  EXPECT_EQ(trace.call_count(), 30U);
}

TEST(TraceFormat, BinaryRoundTripIsExact) {
  const Trace trace = testing::sample_trace();
  const std::vector<std::byte> bytes = encode_binary(trace);
  const TraceResult<Trace> decoded = decode_binary(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  EXPECT_EQ(decoded->header, trace.header);
  ASSERT_EQ(decoded->records.size(), trace.records.size());
  for (std::size_t index = 0; index < trace.records.size(); ++index) {
    EXPECT_EQ(decoded->records[index], trace.records[index]) << "record " << index << ": " << describe_record(trace.records[index]);
  }
  EXPECT_EQ(decoded->footer, trace.footer);
  EXPECT_EQ(encode_binary(decoded.value()), bytes);
}

// The reader clears only what the previous record's decoder wrote: after any record, the next one decodes to
// exactly its original, the part its kind does not use included (Record's equality does not look there).
TEST(TraceFormat, TheReadersRecordHoldsOnlyTheCurrentRecord) {
  const Trace sample = testing::sample_trace();
  std::size_t pairs = 0;
  for (const Record& first : sample.records) {
    for (const Record& second : sample.records) {
      Trace pair;
      pair.header = sample.header;
      pair.records = {first, second};
      const std::vector<std::byte> bytes = encode_binary(pair);
      TraceResult<BinaryReader> reader = BinaryReader::open(bytes);
      ASSERT_TRUE(reader.ok()) << reader.error().message();
      ASSERT_TRUE(reader->next().ok());
      const TraceResult<const Record*> decoded = reader->next();
      ASSERT_TRUE(decoded.ok()) << decoded.error().message();
      ASSERT_NE(decoded.value(), nullptr);
      const Record& record = *decoded.value();
      ASSERT_EQ(record.kind, second.kind);
      EXPECT_TRUE(record.call == second.call) << describe_record(first) << " then " << describe_record(second);
      EXPECT_TRUE(record.note == second.note) << describe_record(first) << " then " << describe_record(second);
      const TraceResult<const Record*> end = reader->next();
      ASSERT_TRUE(end.ok()) << end.error().message();
      EXPECT_EQ(end.value(), nullptr);
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, sample.records.size() * sample.records.size());
}

TEST(TraceFormat, JsonLinesRoundTripIsLosslessAndKeepsTheDigest) {
  const Trace trace = testing::sample_trace();
  const std::string text = encode_jsonl(trace);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), static_cast<long>(trace.records.size() + 2));
  const TraceResult<Trace> decoded = decode_jsonl(text);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  ASSERT_EQ(decoded->records.size(), trace.records.size());
  for (std::size_t index = 0; index < trace.records.size(); ++index) {
    EXPECT_EQ(decoded->records[index], trace.records[index]) << "record " << index;
  }
  EXPECT_EQ(decoded->footer.digest, trace.footer.digest);
  // JSON -> binary gives back the very bytes the binary encoding had.
  EXPECT_EQ(encode_binary(decoded.value()), encode_binary(trace));
  EXPECT_EQ(encode_jsonl(decoded.value()), text);
}

TEST(TraceFormat, JsonLinesRefusesAKeyRepeatedInAnInnerObjectOnly) {
  const std::string text = encode_jsonl(testing::sample_trace());
  // Objects side by side may share keys (every command has a "kind"); one object may not name a key twice.
  const std::size_t inner = text.find("\"commands\":[{\"kind\":");
  ASSERT_NE(inner, std::string::npos) << "the sample trace has no submit with commands";
  const std::size_t after_brace = text.find('{', inner) + 1;
  std::string repeated = text;
  repeated.insert(after_brace, "\"kind\":\"zero\",");
  const TraceResult<Trace> refused = decode_jsonl(repeated);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("the key 'kind' appears twice in one object"), std::string::npos)
      << refused.error().message();
  // The same key in a sibling object instead is not a repeat (the record is then refused for another reason).
  std::string sibling = text;
  sibling.insert(after_brace - 1, "{\"kind\":\"zero\"},");
  const TraceResult<Trace> other = decode_jsonl(sibling);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().message().find("appears twice"), std::string::npos) << other.error().message();
  // Nor is a key of the object that holds it ("op" of the call line, inside a command).
  std::string nested = text;
  nested.insert(after_brace, "\"op\":\"submit\",");
  const TraceResult<Trace> inside = decode_jsonl(nested);  // a field a command does not have is ignored
  EXPECT_TRUE(inside.ok()) << inside.error().message();
}

TEST(TraceFormat, DecodeTraceTellsTheEncodingsApart) {
  const Trace trace = testing::sample_trace();
  const std::string text = encode_jsonl(trace);
  const TraceResult<Trace> from_json = decode_trace(as_bytes(text));
  const TraceResult<Trace> from_binary = decode_trace(encode_binary(trace));
  ASSERT_TRUE(from_json.ok());
  ASSERT_TRUE(from_binary.ok());
  EXPECT_EQ(from_json->footer, from_binary->footer);
  const TraceResult<Trace> neither = decode_trace(as_bytes("hello"));
  ASSERT_FALSE(neither.ok());
  EXPECT_NE(neither.error().message().find("not a quiesce trace"), std::string::npos);
}

TEST(TraceFormat, EveryTruncationOfTheBinaryIsRefused) {
  const std::vector<std::byte> bytes = encode_binary(testing::sample_trace());
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    const TraceResult<Trace> decoded = decode_binary(std::span(bytes.data(), length));
    ASSERT_FALSE(decoded.ok()) << "a trace cut to " << length << " of " << bytes.size() << " bytes was accepted";
    EXPECT_LE(decoded.error().position, length) << decoded.error().message();
  }
}

TEST(TraceFormat, EveryTruncationOfTheJsonLinesIsRefused) {
  const std::string text = encode_jsonl(testing::sample_trace());
  for (std::size_t length = 0; length < text.size(); length += 7) {
    const TraceResult<Trace> decoded = decode_jsonl(std::string_view(text).substr(0, length));
    ASSERT_FALSE(decoded.ok()) << "a trace cut to " << length << " bytes was accepted";
    EXPECT_EQ(decoded.error().where, TraceError::Where::Line);
  }
}

TEST(TraceFormat, EveryCorruptedByteIsRefused) {
  const std::vector<std::byte> bytes = encode_binary(testing::sample_trace());
  for (std::size_t index = 0; index < bytes.size(); ++index) {
    std::vector<std::byte> damaged = bytes;
    damaged[index] ^= std::byte{0x5A};
    const TraceResult<Trace> decoded = decode_binary(damaged);
    EXPECT_FALSE(decoded.ok()) << "flipping bits of byte " << index << " was not noticed";
  }
}

TEST(TraceFormat, NewerVersionIsRefusedSayingSo) {
  Trace trace = testing::sample_trace();
  trace.header.format_version = kFormatVersion + 1;
  const TraceResult<Trace> binary = decode_binary(encode_binary(trace));
  ASSERT_FALSE(binary.ok());
  EXPECT_NE(binary.error().message().find("newer than the newest this reader knows"), std::string::npos) << binary.error().message();
  const std::string text = encode_jsonl(trace);
  const TraceResult<Trace> json = decode_jsonl(text);
  ASSERT_FALSE(json.ok());
  EXPECT_NE(json.error().message().find("newer"), std::string::npos) << json.error().message();
}

TEST(TraceFormat, ImpossibleSequenceIsRefusedByValidation) {
  Trace trace = testing::sample_trace();
  trace.records[6].call.subject = 99;  // write_buffer of a buffer nobody allocated
  trace.footer = compute_footer(trace.header, trace.records);
  const TraceResult<Trace> decoded = decode_binary(encode_binary(trace));
  ASSERT_TRUE(decoded.ok()) << "the encoding itself is sound";
  const TraceResult<void> valid = validate_trace(decoded.value());
  ASSERT_FALSE(valid.ok());
  EXPECT_EQ(valid.error().where, TraceError::Where::Record);
  EXPECT_EQ(valid.error().position, 6U);
  EXPECT_NE(valid.error().message().find("buffer 99"), std::string::npos) << valid.error().message();
}

TEST(TraceFormat, BoundsAreCheckedBeforeAllocating) {
  // A write_buffer record whose data claims 2^40 bytes: refused at the length, nothing allocated.
  BinaryWriter writer(make_header(1));
  std::vector<std::byte> bytes = writer.finish();
  bytes.resize(bytes.size() - 10);  // drop the footer: end tag, count and digest
  for (const int value : {0x40 + static_cast<int>(Op::WriteBuffer), 0, 0}) bytes.push_back(static_cast<std::byte>(value));
  for (const int value : {0x80, 0x80, 0x80, 0x80, 0x80, 0x20}) bytes.push_back(static_cast<std::byte>(value));
  const TraceResult<Trace> decoded = decode_binary(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message().find("above the bound"), std::string::npos) << decoded.error().message();
}

// The sample trace with seeded payloads (as the raw workload writes them): 300 bytes written, 77 uploaded by
// the submit and 77 by the capture.
Trace seeded_trace(std::uint32_t version) {
  Trace trace = testing::sample_trace();
  trace.header.format_version = version;
  for (Record& record : trace.records) {
    if (record.kind != RecordKind::Call) continue;
    if (record.call.op == Op::WriteBuffer) {
      std::vector<std::byte>& bytes = record.call.data.expand();
      bytes.resize(300);
      fill_seeded_bytes(0x1234, bytes);
    }
    for (CommandRecord& command : record.call.commands) {
      if (command.kind != CommandKind::Upload) continue;
      std::vector<std::byte>& bytes = command.data.expand();
      bytes.resize(77);
      fill_seeded_bytes(~std::uint64_t{0}, bytes);
      command.bytes = 77;
    }
  }
  trace.footer = compute_footer(trace.header, trace.records);
  return trace;
}

TEST(TraceFormat, SeededPayloadsAreStoredAsTheirSeed) {
  const Trace trace = seeded_trace(kFormatVersion);
  const Trace old = seeded_trace(1);
  const std::vector<std::byte> bytes = encode_binary(trace);
  const std::vector<std::byte> old_bytes = encode_binary(old);
  // Version 1 holds 2 + 300 and twice 1 + 77 bytes for the payloads, version 2 a 2-byte head and a seed each.
  EXPECT_EQ(old_bytes.size() - bytes.size(), (302U - 10U) + 2 * (78U - 10U));
  const TraceResult<Trace> decoded = decode_binary(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  ASSERT_EQ(decoded->records.size(), trace.records.size());
  for (std::size_t index = 0; index < trace.records.size(); ++index) {
    EXPECT_EQ(decoded->records[index], trace.records[index]) << "record " << index;
  }
  EXPECT_EQ(decoded->footer, trace.footer);
  EXPECT_EQ(encode_binary(decoded.value()), bytes);
  // JSON Lines holds the bytes themselves; converting back finds the seeds again.
  const TraceResult<Trace> from_json = decode_jsonl(encode_jsonl(trace));
  ASSERT_TRUE(from_json.ok()) << from_json.error().message();
  EXPECT_EQ(from_json->footer.digest, trace.footer.digest);
  EXPECT_EQ(encode_binary(from_json.value()), bytes);
}

TEST(TraceFormat, VersionOneIsStillReadAndWrittenAsVersionOne) {
  const Trace old = seeded_trace(1);
  const std::vector<std::byte> bytes = encode_binary(old);
  EXPECT_EQ(bytes[8], std::byte{1});
  const TraceResult<Trace> decoded = decode_binary(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  EXPECT_EQ(decoded->header.format_version, 1U);
  ASSERT_EQ(decoded->records.size(), old.records.size());
  for (std::size_t index = 0; index < old.records.size(); ++index) EXPECT_EQ(decoded->records[index], old.records[index]);
  // Re-encoding (what a replay does) gives the version-1 bytes and digest back, not version 2's.
  EXPECT_EQ(encode_binary(decoded.value()), bytes);
  EXPECT_EQ(compute_footer(decoded->header, decoded->records), old.footer);
  EXPECT_NE(old.footer.digest, seeded_trace(kFormatVersion).footer.digest);
}

TEST(TraceFormat, EveryTruncationAndCorruptionOfSeededPayloadsIsRefused) {
  const std::vector<std::byte> bytes = encode_binary(seeded_trace(kFormatVersion));
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    const TraceResult<Trace> decoded = decode_binary(std::span(bytes.data(), length));
    ASSERT_FALSE(decoded.ok()) << "a trace cut to " << length << " of " << bytes.size() << " bytes was accepted";
    EXPECT_LE(decoded.error().position, length) << decoded.error().message();
  }
  for (std::size_t index = 0; index < bytes.size(); ++index) {
    std::vector<std::byte> damaged = bytes;
    damaged[index] ^= std::byte{0x5A};
    EXPECT_FALSE(decode_binary(damaged).ok()) << "flipping bits of byte " << index << " was not noticed";
  }
}

// A version-2 trace of one write_buffer record whose data field is `field` (the record stops there).
TraceResult<Trace> decode_write_with_data(const std::vector<std::uint8_t>& field) {
  BinaryWriter writer(make_header(1));
  std::vector<std::byte> bytes = writer.finish();
  bytes.resize(bytes.size() - 10);  // drop the footer: end tag, count and digest
  for (const int value : {0x40 + static_cast<int>(Op::WriteBuffer), 0, 0}) bytes.push_back(static_cast<std::byte>(value));
  for (const std::uint8_t value : field) bytes.push_back(static_cast<std::byte>(value));
  return decode_binary(bytes);
}

TEST(TraceFormat, MalformedSeededPayloadsAreRefusedWithWhatAndWhere) {
  ASSERT_EQ(make_header(1).format_version, 2U);
  // Seeded, but 8 bytes long: below the smallest seeded payload.
  TraceResult<Trace> decoded = decode_write_with_data({17, 1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message().find("field 'data' holds 8 seeded bytes"), std::string::npos) << decoded.error().message();
  const std::uint64_t field_at = decoded.error().position;
  // Seeded and long enough, but its seed is cut off.
  decoded = decode_write_with_data({2 * 64 + 1, 1, 2, 3});
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message().find("field 'data' is truncated"), std::string::npos) << decoded.error().message();
  // Seeded bytes stored byte for byte: a second encoding of the same record, refused.
  std::vector<std::byte> seeded(16);
  fill_seeded_bytes(99, seeded);
  std::vector<std::uint8_t> field = {32};
  for (const std::byte byte : seeded) field.push_back(static_cast<std::uint8_t>(byte));
  decoded = decode_write_with_data(field);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message().find("holds seeded bytes byte for byte"), std::string::npos) << decoded.error().message();
  EXPECT_EQ(decoded.error().position, field_at);
  // Above the bound per field, seeded or not: 2^27 bytes.
  decoded = decode_write_with_data({0x80, 0x80, 0x80, 0x80, 0x01});
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message().find("has length 134217728, above the bound"), std::string::npos) << decoded.error().message();
  decoded = decode_write_with_data({0x81, 0x80, 0x80, 0x80, 0x01, 1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message().find("holds 134217728 seeded bytes"), std::string::npos) << decoded.error().message();
}

TEST(TraceFormat, SeededBytesAreRecognisedOnlyWhenTheyFollowTheirSeed) {
  std::vector<std::byte> bytes(41);
  fill_seeded_bytes(0xABCDEF, bytes);
  ASSERT_EQ(seed_of_seeded_bytes(bytes), std::optional<std::uint64_t>(0xABCDEF));
  for (std::size_t index = 0; index < bytes.size(); ++index) {
    std::vector<std::byte> changed = bytes;
    changed[index] ^= std::byte{0x01};
    EXPECT_FALSE(seed_of_seeded_bytes(changed).has_value()) << "byte " << index;
  }
  EXPECT_FALSE(seed_of_seeded_bytes(std::span(bytes.data(), kSeededBytesMin - 1)).has_value());
  EXPECT_TRUE(seed_of_seeded_bytes(std::span(bytes.data(), kSeededBytesMin)).has_value());
  EXPECT_FALSE(seed_of_seeded_bytes(std::vector<std::byte>(64, std::byte{0})).has_value());
}

TEST(TraceFormat, APayloadHeldAsASeedIsItsBytes) {
  std::vector<std::byte> bytes(41);
  fill_seeded_bytes(0xABCDEF, bytes);
  Payload seeded;
  seeded.assign_seeded(0xABCDEF, bytes.size());
  Payload literal;
  literal.assign(bytes);
  EXPECT_EQ(seeded.held_seed(), std::optional<std::uint64_t>(0xABCDEF));
  EXPECT_FALSE(literal.held_seed().has_value());
  EXPECT_EQ(seeded, literal);
  EXPECT_EQ(literal, seeded);
  ASSERT_EQ(seeded.size(), bytes.size());
  for (std::size_t index = 0; index < bytes.size(); ++index) EXPECT_EQ(seeded[index], bytes[index]) << index;
  std::vector<std::byte> scratch;
  const std::span<const std::byte> view = seeded.view(scratch);
  EXPECT_TRUE(std::equal(view.begin(), view.end(), bytes.begin(), bytes.end()));
  EXPECT_TRUE(seeded.held_seed().has_value()) << "view leaves the seed held";
  for (std::size_t index = 0; index < bytes.size(); ++index) {
    Payload changed;
    changed.assign(bytes);
    changed.expand()[index] ^= std::byte{0x01};
    EXPECT_NE(changed, seeded) << "byte " << index;
  }
  Payload other;
  other.assign_seeded(0xABCDEE, bytes.size());
  EXPECT_NE(other, seeded);
  Payload shorter;
  shorter.assign_seeded(0xABCDEF, bytes.size() - 1);
  EXPECT_NE(shorter, seeded);
  EXPECT_EQ(seeded.expand(), bytes);
  EXPECT_FALSE(seeded.held_seed().has_value()) << "expand turns the seed into bytes";
  EXPECT_EQ(seeded, literal);
}

TEST(TraceFormat, PrintWritesOneLinePerRecord) {
  const Trace trace = testing::sample_trace();
  std::ostringstream out;
  print_trace(trace, out);
  const std::string text = out.str();
  std::size_t record_lines = 0;
  for (std::size_t at = text.find("\n#"); at != std::string::npos; at = text.find("\n#", at + 1)) {
    if (text.compare(at + 2, 1, " ") != 0) ++record_lines;
  }
  EXPECT_EQ(record_lines, trace.records.size());
  EXPECT_NE(text.find("submit queue 1 [launch program 1"), std::string::npos) << text;
  EXPECT_NE(text.find("fault PartialSubmit at submit"), std::string::npos);
}

}  // namespace
}  // namespace quiesce::traces
