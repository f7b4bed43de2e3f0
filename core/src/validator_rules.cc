// The validator's vocabulary: the rule table, names, the readable violation report, the read poison and the
// batch digest. docs/validator.md mirrors the rule table one line per rule.
#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstring>
#include <string>

#include "quiesce/core/digest.h"
#include "quiesce/core/prng.h"
#include "quiesce/core/validator/checker.h"
#include "quiesce/core/validator/violation.h"

namespace quiesce {
namespace {

constexpr std::array<RuleInfo, kRuleCount> kRules = {{
    {Rule::CallerReleaseWhilePinned, Party::Caller, "caller.release-while-pinned",
     "a handle is released only after every event that references it is terminal and destroyed"},
    {Rule::CallerReleaseWhileCaptured, Party::Caller, "caller.release-while-captured",
     "a handle captured by an executable is released only after that executable is destroyed"},
    {Rule::CallerDestroyParentWithChildren, Party::Caller, "caller.destroy-parent-with-children",
     "a context is destroyed only when it has no live buffer, program, queue or executable, and a queue only "
     "when it has no live event"},
    {Rule::CallerUseAfterRelease, Party::Caller, "caller.use-after-release",
     "a handle consumed by a release (successful or indeterminate) or a discard is never used again"},
    {Rule::CallerStaleEpoch, Party::Caller, "caller.stale-epoch",
     "no handle of a context epoch that was discarded or destroyed is used again"},
    {Rule::CallerUnknownHandle, Party::Caller, "caller.unknown-handle",
     "every handle passed to the backend was created by it (an empty or foreign handle is never passed)"},
    {Rule::CallerDestroyUnobservedEvent, Party::Caller, "caller.destroy-unobserved-event",
     "an event is destroyed only after a terminal state was observed through poll, wait or a successful "
     "synchronize of its queue"},
    {Rule::CallerResubmitIndeterminate, Party::Caller, "caller.resubmit-indeterminate",
     "work whose submission was indeterminate is never submitted again as if it had been rejected"},
    {Rule::CallerAccessMode, Party::Caller, "caller.access-mode",
     "every binding's access mode and every transfer is allowed by the buffer's usage (Wire ABI 4.4), checked "
     "before the backend is called"},
    {Rule::CallerSyncInsideCapture, Party::Caller, "caller.sync-inside-capture",
     "a capturing queue is not synchronized and its events are not polled or waited on inside the capture "
     "window"},
    {Rule::CallerAllocateInsideCapture, Party::Caller, "caller.allocate-inside-capture",
     "no buffer is allocated on a context while one of its queues has a capture window open"},
    {Rule::CallerCaptureNotEnded, Party::Caller, "caller.capture-not-ended",
     "every begin_capture is ended by end_capture before the queue begins again, is destroyed, or the run ends"},
    {Rule::CallerCaptureNotBegun, Party::Caller, "caller.capture-not-begun",
     "capture and end_capture are called only inside a capture window opened by begin_capture"},
    {Rule::CallerUseAfterDeviceLost, Party::Caller, "caller.use-after-device-lost",
     "after a DeviceLost on a context only releases, queue_state and discard_context are called on it"},
    {Rule::CallerCrossContext, Party::Caller, "caller.cross-context",
     "every handle a call or batch references belongs to the same context as the queue or context it runs on"},
    {Rule::CallerOutOfRange, Party::Caller, "caller.out-of-range",
     "every transfer and command range lies inside its buffer"},
    {Rule::CallerEmptyBatch, Party::Caller, "caller.empty-batch", "every submitted or captured batch is non-empty"},
    {Rule::CallerLeak, Party::Caller, "caller.leak",
     "at the end of the run every handle was released, invalidated by an indeterminate release, or discarded "
     "with its context"},
    {Rule::ProviderTerminalUnstable, Party::Provider, "provider.terminal-unstable",
     "once a terminal state was observed, every later poll and wait reports that same terminal"},
    {Rule::ProviderReleaseHandle, Party::Provider, "provider.release-handle",
     "a rejected release returns the same live handle (same id and epoch); other outcomes return no handle"},
    {Rule::ProviderReadUninitialised, Party::Provider, "provider.read-uninitialised",
     "a successful read initialises every byte of the sink"},
    {Rule::ProviderIllegalTransition, Party::Provider, "provider.illegal-transition",
     "a wait reaches only terminal states, and Cancelled follows only a cancel that won"},
    {Rule::ProviderCancelInconsistent, Party::Provider, "provider.cancel-inconsistent",
     "cancellation is decided once: a won cancel ends Cancelled, a lost one (Busy) never does, and a cancel "
     "cannot win after another terminal was observed"},
    {Rule::ProviderRejectedSubmitRetained, Party::Provider, "provider.rejected-submit-retained",
     "a rejected submit returns no event and zero enqueued commands"},
    {Rule::ProviderIndeterminateWithoutEvent, Party::Provider, "provider.indeterminate-without-event",
     "an indeterminate submit carries a valid event and at most the batch size of enqueued commands"},
    {Rule::ProviderSubmittedCountMismatch, Party::Provider, "provider.submitted-count-mismatch",
     "a submitted batch carries a valid event and commands_enqueued equal to the batch size"},
    {Rule::ProviderTimingWithoutTerminal, Party::Provider, "provider.timing-without-terminal",
     "a timing receipt comes only with a terminal state"},
    {Rule::ProviderTimingNotRequested, Party::Provider, "provider.timing-not-requested",
     "a timing receipt comes only for a submission that asked for timing"},
    {Rule::ProviderInvalidCreatedHandle, Party::Provider, "provider.invalid-created-handle",
     "a created handle has a nonzero id not live already, and the epoch of its context"},
    {Rule::ValidatorBoundExceeded, Party::Validator, "validator.bound-exceeded",
     "the validator's own tables stay within their bounds (a run past them is checked less)"},
}};

constexpr bool rules_in_order() {
  for (std::uint32_t index = 0; index < kRuleCount; ++index) {
    if (static_cast<std::uint32_t>(kRules[index].rule) != index) return false;
  }
  return true;
}
static_assert(rules_in_order(), "kRules must list every Rule in enum order");

}  // namespace

const RuleInfo& rule_info(Rule rule) {
  const auto index = static_cast<std::uint32_t>(rule);
  assert(index < kRuleCount);
  return kRules[index];
}

std::string_view to_string(Rule rule) { return rule_info(rule).name; }

std::string_view to_string(Call call) {
  switch (call) {
    case Call::None: return "finish";
    case Call::DeviceInfo: return "device_info";
    case Call::CreateContext: return "create_context";
    case Call::DestroyContext: return "destroy_context";
    case Call::DiscardContext: return "discard_context";
    case Call::AllocateBuffer: return "allocate_buffer";
    case Call::GetBufferInfo: return "buffer_info";
    case Call::WriteBuffer: return "write_buffer";
    case Call::ReadBuffer: return "read_buffer";
    case Call::FreeBuffer: return "free_buffer";
    case Call::LoadProgram: return "load_program";
    case Call::UnloadProgram: return "unload_program";
    case Call::CreateQueue: return "create_queue";
    case Call::DestroyQueue: return "destroy_queue";
    case Call::GetQueueState: return "queue_state";
    case Call::Submit: return "submit";
    case Call::Synchronize: return "synchronize";
    case Call::PollEvent: return "poll_event";
    case Call::WaitEvent: return "wait_event";
    case Call::CancelEvent: return "cancel_event";
    case Call::DestroyEvent: return "destroy_event";
    case Call::BeginCapture: return "begin_capture";
    case Call::Capture: return "capture";
    case Call::EndCapture: return "end_capture";
    case Call::DestroyExecutable: return "destroy_executable";
    case Call::GetMemoryUsage: return "memory_usage";
    case Call::GetMemoryReport: return "memory_report";
    case Call::InstallPools: return "install_pools";
    case Call::MemoryCleanup: return "memory_cleanup";
  }
  return "unknown call";
}

std::string_view to_string(HandleKind kind) {
  switch (kind) {
    case HandleKind::None: return "none";
    case HandleKind::ContextHandle: return "context";
    case HandleKind::BufferHandle: return "buffer";
    case HandleKind::ProgramHandle: return "program";
    case HandleKind::QueueHandle: return "queue";
    case HandleKind::EventHandle: return "event";
    case HandleKind::ExecutableHandle: return "executable";
  }
  return "unknown handle kind";
}

std::string_view to_string(Party party) {
  switch (party) {
    case Party::Caller: return "caller";
    case Party::Provider: return "provider";
    case Party::Validator: return "validator";
  }
  return "unknown party";
}

namespace {

void append_handle(std::string& text, const HandleName& handle) {
  text += to_string(handle.kind);
  text += ' ';
  text += std::to_string(handle.id);
  text += " (epoch ";
  text += std::to_string(handle.epoch);
  text += ')';
}

}  // namespace

std::string describe_violation(const Violation& violation) {
  const RuleInfo& info = rule_info(violation.rule);
  std::string text = "call ";
  text += std::to_string(violation.call_index);
  text += " (";
  text += to_string(violation.call);
  text += ") broke ";
  text += info.name;
  if (violation.handles[0].kind != HandleKind::None) {
    text += " on ";
    append_handle(text, violation.handles[0]);
  }
  if (violation.handles[1].kind != HandleKind::None) {
    text += ", related to ";
    append_handle(text, violation.handles[1]);
  }
  if (!violation.observed.empty()) {
    text += ": ";
    text += violation.observed;
    if (violation.value != 0) {
      text += " (";
      text += std::to_string(violation.value);
      text += ')';
    }
  }
  text += "; the ";
  text += to_string(info.party);
  text += " must ensure that ";
  text += violation.expected.empty() ? info.summary : violation.expected;
  text += '.';
  return text;
}

namespace {

// The poison word of sink word `word_index`: a hash of the salt (new every call) and the position. Real data
// (a fill value, zeros, a copy of an earlier read) equals eight consecutive poison bytes with probability
// 2^-64, so a reported run is an unwritten run, not a coincidence.
std::uint64_t poison_word(std::uint64_t salt, std::uint64_t word_index) {
  std::uint64_t state = salt ^ (word_index * 0x9E3779B97F4A7C15ULL);
  return splitmix64(state);
}

// True when some byte of `word` is zero (the classic bit trick: exact, no false positives).
constexpr bool has_zero_byte(std::uint64_t word) {
  return ((word - 0x0101010101010101ULL) & ~word & 0x8080808080808080ULL) != 0;
}

// The bytes of `word` as they lie in memory on a little-endian host, which quiesce requires (core's digests
// and the trace format assume it too).
static_assert(std::endian::native == std::endian::little, "quiesce assumes a little-endian host");

// The poison word of sink word `index`: the one kept in `kept` when there is one, else hashed again.
struct PoisonWords {
  std::uint64_t salt;
  std::span<const std::uint64_t> kept;

  std::uint64_t operator()(std::uint64_t index) const {
    return index < kept.size() ? kept[index] : poison_word(salt, index);
  }
  // The poison byte at sink position `position`: byte (position % 8) of its word, little-endian.
  std::byte byte_at(std::uint64_t position) const {
    return static_cast<std::byte>(((*this)(position / 8) >> (8U * (position % 8U))) & 0xFFU);
  }
};

// Both scans work a word (8 sink positions, one hash) at a time where a segment covers a whole word, and
// a byte at a time at segment edges, so the poison is the same whatever the segmentation.
void fill_poison(ByteSink sink, const PoisonWords& poison) {
  std::uint64_t position = 0;
  for (const std::span<std::byte> segment : sink.segments) {
    std::byte* bytes = segment.data();
    std::size_t left = segment.size();
    while (left > 0 && position % 8 != 0) {
      *bytes++ = poison.byte_at(position++);
      --left;
    }
    // The kept words lie in memory as the sink's bytes will: one copy for as many as the segment holds.
    const std::uint64_t first_word = position / 8;
    if (first_word < poison.kept.size()) {
      const std::size_t words = std::min<std::size_t>(left / 8, poison.kept.size() - first_word);
      std::memcpy(bytes, poison.kept.data() + first_word, words * 8);
      bytes += words * 8;
      left -= words * 8;
      position += words * 8;
    }
    for (; left >= 8; left -= 8, bytes += 8, position += 8) {
      const std::uint64_t word = poison(position / 8);
      std::memcpy(bytes, &word, sizeof(word));
    }
    for (; left > 0; --left) *bytes++ = poison.byte_at(position++);
  }
}

// A run of kPoisonRunMin (8) poisoned bytes is either one whole word, or it crosses exactly one boundary
// between words and so holds the last byte of the word before it. With no run going into a word, a word
// whose last byte differs from its poison therefore completes no run and lets none go on: it can be passed
// over without looking at its other bytes. Real data meets that test but for one word in 256.
constexpr bool last_byte_differs(std::uint64_t difference) { return (difference >> 56U) != 0; }

std::uint64_t load_word(const std::byte* bytes) {
  std::uint64_t word = 0;
  std::memcpy(&word, bytes, sizeof(word));
  return word;
}

// True when each of the four sink words at `bytes` (sink words `index`..`index + 3`) has a last byte that
// differs from its poison's, so that, with no run going into them, none completes or goes on through them.
// Each word goes to a register of its own (words copied through an array on the stack were read back wider
// than they were stored, which stalled every call), and kept poison words are read with no test per word.
bool last_bytes_differ(const std::byte* bytes, const PoisonWords& poison, std::uint64_t index) {
  std::uint64_t least = UINT64_MAX;  // the least last byte of the four differences
  if (index + 4 <= poison.kept.size()) {
    const std::uint64_t* kept = poison.kept.data() + index;
    for (std::uint64_t at = 0; at < 4; ++at) least = std::min(least, (load_word(bytes + 8 * at) ^ kept[at]) >> 56U);
  } else {
    for (std::uint64_t at = 0; at < 4; ++at) {
      least = std::min(least, (load_word(bytes + 8 * at) ^ poison(index + at)) >> 56U);
    }
  }
  return least != 0;
}

std::uint64_t find_run(ByteSink sink, const PoisonWords& poison) {
  static_assert(kPoisonRunMin == 8, "the word-at-a-time scan below counts runs of at most 8 per word step");
  std::uint64_t position = 0;
  std::uint64_t run_start = 0;
  std::uint64_t run_length = 0;
  // One byte: extends or breaks the current run of still-poisoned bytes.
  auto visit = [&](std::byte byte) {
    if (byte == poison.byte_at(position)) {
      if (run_length == 0) run_start = position;
      ++run_length;
    } else {
      run_length = 0;
    }
    ++position;
    return run_length >= kPoisonRunMin;
  };
  for (const std::span<const std::byte> segment : sink.segments) {
    const std::byte* bytes = segment.data();
    std::size_t left = segment.size();
    while (left > 0 && position % 8 != 0) {
      if (visit(*bytes++)) return run_start;
      --left;
    }
    for (; left >= 8; left -= 8, bytes += 8) {
      if (run_length == 0 && left >= 32 && last_bytes_differ(bytes, poison, position / 8)) {  // the usual case
        position += 32;
        bytes += 24;
        left -= 24;
        continue;
      }
      const std::uint64_t difference = load_word(bytes) ^ poison(position / 8);
      if (run_length == 0 && last_byte_differs(difference)) {
        position += 8;
        continue;
      }
      if (difference == 0) {  // eight poisoned bytes: a run of at least kPoisonRunMin
        if (run_length == 0) run_start = position;
        return run_start;
      }
      if (!has_zero_byte(difference)) {  // no byte still poisoned: any run is broken
        run_length = 0;
        position += 8;
        continue;
      }
      for (std::size_t index = 0; index < 8; ++index) {
        if (visit(bytes[index])) return run_start;
      }
    }
    for (; left > 0; --left) {
      if (visit(*bytes++)) return run_start;
    }
  }
  return UINT64_MAX;
}

}  // namespace

void poison_sink(ByteSink sink, std::uint64_t salt) { fill_poison(sink, PoisonWords{salt, {}}); }

std::uint64_t find_poison_run(ByteSink sink, std::uint64_t salt) { return find_run(sink, PoisonWords{salt, {}}); }

void poison_sink(ByteSink sink, std::uint64_t salt, std::vector<std::uint64_t>& words) {
  const std::uint64_t needed = (sink.size() + 7) / 8;
  words.resize(static_cast<std::size_t>(std::min<std::uint64_t>(needed, kPoisonWordsKeptMax)));
  // One independent hash per word, in a loop of its own, before any byte is stored.
  for (std::size_t index = 0; index < words.size(); ++index) words[index] = poison_word(salt, index);
  fill_poison(sink, PoisonWords{salt, words});
}

std::uint64_t find_poison_run(ByteSink sink, std::uint64_t salt, std::span<const std::uint64_t> words) {
  return find_run(sink, PoisonWords{salt, words});
}

std::uint64_t batch_digest(Batch batch) {
  Digest digest;
  for (const Command& command : batch) {
    digest.add(command.kind);
    digest.add(command.mode);
    digest.add(command.program.id);
    digest.add(command.executable.id);
    digest.add(command.event.id);
    digest.add(command.source.id);
    digest.add(command.target.id);
    digest.add(command.source_offset);
    digest.add(command.target_offset);
    digest.add(command.bytes);
    const LaunchDims& dims = command.dims;
    for (const std::uint32_t extent : {dims.grid_x, dims.grid_y, dims.grid_z, dims.block_x, dims.block_y, dims.block_z}) {
      digest.add(extent);
    }
    for (const Binding& binding : command.bindings) {
      digest.add(binding.buffer.id);
      digest.add(binding.access);
    }
    digest.add(static_cast<std::uint64_t>(command.data.size()));
    digest.add_bytes(command.data.data(), command.data.size());
  }
  return digest.value();
}

}  // namespace quiesce
