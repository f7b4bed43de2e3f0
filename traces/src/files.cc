// Trace files: either encoding, told apart by the binary magic; bounded reads of regular files and pipes;
// atomic whole-file writes (core/files.h).
#include <algorithm>
#include <string>

#include "quiesce/core/files.h"
#include "quiesce/traces/codec.h"

namespace quiesce::traces {
namespace {

// A trace file larger than this is refused before it is read into memory.
constexpr std::uint64_t kFileBytesMax = std::uint64_t{1} << 32;

}  // namespace

TraceResult<Trace> decode_trace(std::span<const std::byte> bytes) {
  const bool binary = bytes.size() >= kBinaryMagic.size() && std::equal(kBinaryMagic.begin(), kBinaryMagic.end(), bytes.begin());
  if (binary) return decode_binary(bytes);
  if (!bytes.empty() && bytes[0] == std::byte{'{'}) {
    return decode_jsonl(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));  // NOLINT
  }
  return TraceError{"this is not a quiesce trace: it starts with neither the binary magic \"QTRC\" nor a JSON header line",
                    TraceError::Where::Byte, 0};
}

TraceResult<Trace> read_trace_file(const std::string& path) {
  Result<std::string, FileError> bytes = read_whole_file(path, kFileBytesMax, "trace");
  if (!bytes.ok()) return TraceError{bytes.error().message, TraceError::Where::File, 0};
  const std::string& text = bytes.value();
  return decode_trace(std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));  // NOLINT
}

TraceResult<void> write_bytes_file(const std::string& path, std::span<const std::byte> bytes) {
  Result<void, FileError> written = write_file_atomically(
      path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), "trace");  // NOLINT
  if (!written.ok()) return TraceError{written.error().message, TraceError::Where::File, 0};
  return {};
}

TraceResult<void> write_trace_file(const std::string& path, const Trace& trace, Encoding encoding) {
  if (encoding == Encoding::Binary) return write_bytes_file(path, encode_binary(trace));
  const std::string text = encode_jsonl(trace);
  return write_bytes_file(path, std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));  // NOLINT
}

}  // namespace quiesce::traces
