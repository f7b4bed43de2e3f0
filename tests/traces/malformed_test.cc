// The committed malformed samples (tests/traces/malformed/): each must be refused with its message.
//
// Each sample NAME has NAME.expect beside it holding a fragment of the message it must be refused with.
// The samples are derived from sample_trace(); QUIESCE_WRITE_MALFORMED=DIR makes the Generate test write
// them again into DIR (a maintainer's step when the format changes, reviewed like code).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "quiesce/core/seeded_bytes.h"
#include "quiesce/traces/validate.h"
#include "sample_trace.h"

namespace quiesce::traces {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

TEST(MalformedSamples, EachIsRefusedWithItsMessage) {
  const fs::path directory(QUIESCE_TRACES_MALFORMED_DIR);
  std::size_t samples = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.path().extension() == ".expect") continue;
    const fs::path expect_path = fs::path(entry.path()).concat(".expect");
    ASSERT_TRUE(fs::exists(expect_path)) << entry.path() << " has no .expect file";
    std::string expected = read_text(expect_path);
    while (!expected.empty() && expected.back() == '\n') expected.pop_back();
    const TraceResult<Trace> loaded = load_trace(entry.path().string());
    ASSERT_FALSE(loaded.ok()) << entry.path() << " was accepted";
    EXPECT_NE(loaded.error().message().find(expected), std::string::npos)
        << entry.path().filename() << " was refused with \"" << loaded.error().message() << "\", expected \"" << expected << "\"";
    ++samples;
  }
  EXPECT_GE(samples, 15U) << "the malformed samples are missing from " << directory;
}

// ---- the generator ----

void write(const fs::path& directory, const std::string& name, const std::string& bytes, const std::string& expect) {
  std::ofstream(directory / name, std::ios::binary) << bytes;
  std::ofstream(directory / (name + ".expect")) << expect << "\n";
}

std::string binary_text(const Trace& trace) {
  const std::vector<std::byte> bytes = encode_binary(trace);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};  // NOLINT
}

void replace_line(std::string& text, std::size_t line_index, const std::string& line) {
  std::size_t start = 0;
  for (std::size_t index = 0; index < line_index; ++index) start = text.find('\n', start) + 1;
  const std::size_t end = text.find('\n', start);
  text.replace(start, end - start, line);
}

TEST(MalformedSamples, Generate) {
  const char* target = std::getenv("QUIESCE_WRITE_MALFORMED");
  if (target == nullptr) GTEST_SKIP() << "set QUIESCE_WRITE_MALFORMED=DIR to write the samples";
  const fs::path directory(target);
  fs::create_directories(directory);
  const Trace trace = testing::sample_trace();
  const std::string binary = binary_text(trace);
  const std::size_t header_bytes = binary_text(Trace{trace.header, {}, {}}).size() - 10;

  std::string wrong_magic = binary;
  wrong_magic[1] = 'X';
  write(directory, "wrong_magic.qtrace", wrong_magic, "not a quiesce trace");
  Trace newer = trace;
  newer.header.format_version = kFormatVersion + 1;
  write(directory, "newer_version.qtrace", binary_text(newer), "newer than the newest this reader knows");
  std::string zero_version = binary;
  zero_version[8] = '\0';
  write(directory, "version_zero.qtrace", zero_version, "format version 0 does not exist");
  write(directory, "truncated_header.qtrace", binary.substr(0, 20), "is truncated");
  write(directory, "truncated_record.qtrace", binary.substr(0, header_bytes + 40), "is truncated");
  write(directory, "missing_footer.qtrace", binary.substr(0, binary.size() - 10), "the footer is missing");
  std::string corrupted = binary;
  corrupted[header_bytes + 30] = static_cast<char>(corrupted[header_bytes + 30] ^ 0x01);
  write(directory, "corrupted_record.qtrace", corrupted, "trace byte");
  std::string unknown_tag = binary;
  unknown_tag[header_bytes] = '\x3F';
  write(directory, "unknown_tag.qtrace", unknown_tag, "unknown tag 63");
  write(directory, "trailing_bytes.qtrace", binary + "extra", "bytes follow the footer");
  Trace impossible = trace;
  impossible.records[6].call.subject = 99;
  impossible.footer = compute_footer(impossible.header, impossible.records);
  write(directory, "impossible_sequence.qtrace", binary_text(impossible), "no earlier record created it");
  Trace early_fault = trace;
  early_fault.records[9].note.call_index = 30;
  early_fault.footer = compute_footer(early_fault.header, early_fault.records);
  write(directory, "fault_before_its_call.jsonl", encode_jsonl(early_fault), "calls came before it");
  Trace backwards = trace;
  backwards.records.insert(backwards.records.begin() + 3, testing::note_record(RecordKind::Clock, 2, "", 10));
  backwards.footer = compute_footer(backwards.header, backwards.records);
  write(directory, "clock_goes_back.jsonl", encode_jsonl(backwards), "goes back in time");

  const std::string json = encode_jsonl(trace);
  std::string bad_json = json;
  replace_line(bad_json, 3, "{\"type\": \"call\", \"op\": ");
  write(directory, "bad_json_line.jsonl", bad_json,
        "trace line 4: the line is not valid JSON, at column 24: syntax error while parsing value - unexpected end "
        "of input");
  std::string lone_surrogate = json;
  replace_line(lone_surrogate, 3, R"({"type":"call","op":"\ud800"})");
  write(directory, "lone_surrogate.jsonl", lone_surrogate,
        "trace line 4: the line is not valid JSON, at column 28: syntax error while parsing value - invalid string: "
        "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
  std::string repeated_key = json;
  replace_line(repeated_key, 3, R"({"type":"call","op":"create_context","flags":0,"status":"ok","op":"free_buffer"})");
  write(directory, "repeated_key.jsonl", repeated_key, "trace line 4: the key 'op' appears twice in one object");
  std::string not_object = json;
  replace_line(not_object, 3, R"(["type","call"])");
  write(directory, "not_an_object.jsonl", not_object, "trace line 4: the line is not a JSON object");
  std::string missing_field = json;
  replace_line(missing_field, 3, R"({"type":"call","op":"create_context","flags":0})");
  write(directory, "missing_field.jsonl", missing_field, "field 'status' is missing");
  std::string unknown_op = json;
  replace_line(unknown_op, 3, R"({"type":"call","op":"format_disk"})");
  write(directory, "unknown_op.jsonl", unknown_op, "unknown op 'format_disk'");
  std::string digest_mismatch = json;
  const std::size_t seed_at = digest_mismatch.find("\"seed\":42");
  digest_mismatch.replace(seed_at, 9, "\"seed\":43");
  write(directory, "digest_mismatch.jsonl", digest_mismatch, "the header or a record was changed");
  write(directory, "no_final_newline.jsonl", json.substr(0, json.size() - 1), "the last line has no newline");
  std::string deep = json;
  replace_line(deep, 3, std::string(40, '[') + std::string(40, ']'));
  write(directory, "deep_nesting.jsonl", deep, "nests deeper than");
  std::string wrong_type = json;
  replace_line(wrong_type, 3, R"({"type":"call","op":"create_context","flags":"many","status":"ok"})");
  write(directory, "wrong_field_type.jsonl", wrong_type, "field 'flags' is not an unsigned integer");
  write(directory, "empty.jsonl", "", "not a quiesce trace");

  // Version 2: a seeded payload (16 bytes of seed 0x5EED) whose head is changed to claim 8 bytes.
  Trace seeded = trace;
  std::vector<std::byte>& bytes = seeded.records[6].call.data.expand();
  bytes.resize(16);
  fill_seeded_bytes(0x5EED, bytes);
  seeded.footer = compute_footer(seeded.header, seeded.records);
  std::string short_seeded = binary_text(seeded);
  const std::string seed_bytes("\xED\x5E\0\0\0\0\0\0", 8);
  const std::size_t head_at = short_seeded.find(seed_bytes) - 1;
  short_seeded[head_at] = static_cast<char>(8 * 2 + 1);
  write(directory, "seeded_payload_too_short.qtrace", short_seeded, "field 'data' holds 8 seeded bytes");
}

}  // namespace
}  // namespace quiesce::traces
