// Trace files: either encoding, told apart by the binary magic; bounded reads; whole-file writes.
#include <algorithm>
#include <fstream>
#include <string>

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
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return TraceError{"cannot open '" + path + "' for reading", TraceError::Where::File, 0};
  const std::streamoff size = file.tellg();
  if (size < 0) return TraceError{"cannot tell the size of '" + path + "'", TraceError::Where::File, 0};
  if (static_cast<std::uint64_t>(size) > kFileBytesMax) {
    return TraceError{"'" + path + "' is " + std::to_string(size) + " bytes, above the bound " + std::to_string(kFileBytesMax),
                      TraceError::Where::File, 0};
  }
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  file.seekg(0);
  file.read(reinterpret_cast<char*>(bytes.data()), size);  // NOLINT: a byte buffer
  if (!file) return TraceError{"cannot read '" + path + "'", TraceError::Where::File, 0};
  return decode_trace(bytes);
}

TraceResult<void> write_bytes_file(const std::string& path, std::span<const std::byte> bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return TraceError{"cannot open '" + path + "' for writing", TraceError::Where::File, 0};
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));  // NOLINT
  file.close();
  if (!file) return TraceError{"cannot write '" + path + "'", TraceError::Where::File, 0};
  return {};
}

TraceResult<void> write_trace_file(const std::string& path, const Trace& trace, Encoding encoding) {
  if (encoding == Encoding::Binary) return write_bytes_file(path, encode_binary(trace));
  const std::string text = encode_jsonl(trace);
  return write_bytes_file(path, std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));  // NOLINT
}

}  // namespace quiesce::traces
