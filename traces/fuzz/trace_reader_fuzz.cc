// libFuzzer target for the trace readers: any bytes must be refused cleanly or decode to a trace that
// re-encodes to itself in both encodings. A crash, a hang or an allocation beyond the bounds is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "quiesce/traces/codec.h"
#include "quiesce/traces/print.h"
#include "quiesce/traces/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quiesce::traces;  // NOLINT(google-build-using-namespace): one short function
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);  // NOLINT
  TraceResult<Trace> trace = decode_trace(bytes);
  if (!trace.ok()) {
    if (trace.error().message().empty()) std::abort();  // every refusal says why
    return 0;
  }
  (void)validate_trace(trace.value());
  for (const Record& record : trace->records) (void)describe_record(record);
  const std::vector<std::byte> binary = encode_binary(trace.value());
  const TraceResult<Trace> again = decode_binary(binary);
  if (!again.ok() || encode_binary(again.value()) != binary) std::abort();  // binary round trip is exact
  const TraceResult<Trace> from_json = decode_jsonl(encode_jsonl(trace.value()));
  if (!from_json.ok() || encode_binary(from_json.value()) != binary) std::abort();  // convert is lossless
  return 0;
}
