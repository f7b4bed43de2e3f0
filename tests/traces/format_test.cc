// The two encodings: lossless both ways, compact, versioned, and every damaged input refused cleanly.
#include <gtest/gtest.h>

#include <string>

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
