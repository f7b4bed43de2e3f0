// Differential scripts: generation from a seed, buffer contents, and the comparison of two logs.
#include <algorithm>
#include <cassert>
#include <cstdio>

#include "quiesce/cuda/differential.h"

namespace quiesce::cuda {
namespace {

constexpr std::uint64_t kUploadBytesMax = 4096;
constexpr std::uint32_t kBlockSizes[] = {32, 64, 128, 256};

std::vector<std::byte> u32_bytes(std::uint32_t value) {
  std::vector<std::byte> bytes(4);
  for (std::size_t index = 0; index < 4; ++index) bytes[index] = static_cast<std::byte>((value >> (8U * index)) & 0xFFU);
  return bytes;
}

class Generator {
 public:
  explicit Generator(const ScriptOptions& options) : options_(options), prng_(options.seed) {}

  Script generate() {
    assert(options_.buffers >= 4);
    assert(options_.buffer_bytes_min >= 64 && options_.buffer_bytes_min <= options_.buffer_bytes_max);
    Script script;
    script.options = options_;
    for (std::uint32_t index = 0; index < options_.buffers; ++index) {
      const std::uint64_t words = prng_.range(options_.buffer_bytes_min / 4, options_.buffer_bytes_max / 4);
      const std::uint64_t tail = prng_.below(4) == 0 ? prng_.below(4) : 0;  // some sizes are not whole words
      script.buffer_bytes.push_back(words * 4 + tail);
    }
    sizes_ = script.buffer_bytes;
    for (std::uint32_t index = 0; index < options_.buffers; ++index) {
      script.steps.push_back(ScriptStep{StepKind::Write, index, prng_.next(), {}, {}, 0});  // no unwritten bytes
    }
    for (std::uint32_t step = 0; step < options_.steps; ++step) script.steps.push_back(next_step());
    return script;
  }

 private:
  ScriptStep next_step() {
    ScriptStep step;
    const std::uint64_t roll = prng_.below(100);
    std::vector<std::uint32_t> all(options_.buffers);
    for (std::uint32_t index = 0; index < options_.buffers; ++index) all[index] = index;
    if (roll < 15) {
      step.kind = StepKind::Write;
      step.buffer = static_cast<std::uint32_t>(prng_.below(options_.buffers));
      step.write_seed = prng_.next();
    } else if (roll < 35) {
      step.kind = StepKind::Read;
      step.buffer = static_cast<std::uint32_t>(prng_.below(options_.buffers));
    } else if (roll < 75) {
      step.kind = StepKind::Submit;
      step.batch = batch(all, true);
    } else if (roll < 90) {
      // Two queues at once, on disjoint buffers (even and odd slots), so their order cannot matter.
      step.kind = StepKind::SubmitPair;
      std::vector<std::uint32_t> even;
      std::vector<std::uint32_t> odd;
      for (const std::uint32_t index : all) (index % 2 == 0 ? even : odd).push_back(index);
      step.batch = batch(even, true);
      step.second = batch(odd, true);
    } else {
      step.kind = StepKind::CaptureReplay;
      step.batch = batch(all, false);  // no uploads: their host bytes would be read at every replay
      step.replays = static_cast<std::uint32_t>(prng_.range(1, 3));
    }
    return step;
  }

  std::vector<ScriptCommand> batch(const std::vector<std::uint32_t>& buffers, bool uploads) {
    std::vector<ScriptCommand> commands;
    const std::uint64_t count = prng_.range(1, options_.batch_commands_max);
    for (std::uint64_t index = 0; index < count; ++index) commands.push_back(command(buffers, uploads));
    return commands;
  }

  // Two distinct buffers of `buffers` (which holds at least two).
  std::pair<std::uint32_t, std::uint32_t> two(const std::vector<std::uint32_t>& buffers) {
    const std::uint64_t first = prng_.below(buffers.size());
    std::uint64_t second = prng_.below(buffers.size() - 1);
    if (second >= first) second++;
    return {buffers[first], buffers[second]};
  }

  ScriptCommand command(const std::vector<std::uint32_t>& buffers, bool uploads) {
    ScriptCommand command;
    const std::uint64_t roll = prng_.below(uploads ? 7 : 6);
    const auto [a, b] = two(buffers);
    command.dims.grid_x = static_cast<std::uint32_t>(prng_.range(1, 8));
    command.dims.block_x = kBlockSizes[prng_.below(4)];
    switch (roll) {
      case 0:  // fill [0 Write] {u32 value}
        command.kernel = 0;
        command.buffers = {b};
        command.data = u32_bytes(static_cast<std::uint32_t>(prng_.next()));
        break;
      case 1:  // copy [0 Read, 1 Write]
        command.kernel = 1;
        command.buffers = {a, b};
        break;
      case 2:  // saxpy [0 Read x, 1 ReadWrite y] {u32 a}
        command.kernel = 2;
        command.buffers = {a, b};
        command.data = u32_bytes(static_cast<std::uint32_t>(prng_.next()));
        break;
      case 3:  // checksum [0 Read, 1 Write >= 8 bytes]
        command.kernel = 3;
        command.buffers = {a, b};
        break;
      case 4: {  // a copy command between two ranges of distinct buffers
        command.kind = CommandKind::Copy;
        command.source = a;
        command.target = b;
        command.bytes = prng_.range(1, std::min(sizes_[a], sizes_[b]));
        command.source_offset = prng_.below(sizes_[a] - command.bytes + 1);
        command.target_offset = prng_.below(sizes_[b] - command.bytes + 1);
        break;
      }
      case 5:  // zero a range
        command.kind = CommandKind::Zero;
        command.target = b;
        command.bytes = prng_.range(1, sizes_[b]);
        command.target_offset = prng_.below(sizes_[b] - command.bytes + 1);
        break;
      default: {  // upload host bytes into a range
        command.kind = CommandKind::Upload;
        command.target = b;
        const std::uint64_t bytes = prng_.range(1, std::min(sizes_[b], kUploadBytesMax));
        command.target_offset = prng_.below(sizes_[b] - bytes + 1);
        command.data = script_content(prng_.next(), bytes);
        command.bytes = bytes;
        break;
      }
    }
    return command;
  }

  ScriptOptions options_;
  Prng prng_;
  std::vector<std::uint64_t> sizes_;
};

std::string hex_window(const std::vector<std::byte>& bytes, std::size_t offset) {
  std::string text;
  const std::size_t end = std::min(bytes.size(), offset + 8);
  for (std::size_t index = offset; index < end; ++index) {
    char pair[4];
    std::snprintf(pair, sizeof(pair), "%02x", std::to_integer<unsigned>(bytes[index]));
    text += pair;
  }
  return text.empty() ? "(nothing)" : text;
}

}  // namespace

Script generate_script(const ScriptOptions& options) { return Generator(options).generate(); }

std::vector<std::byte> script_content(std::uint64_t seed, std::uint64_t bytes) {
  Prng prng(seed);
  std::vector<std::byte> content(bytes);
  for (std::uint64_t index = 0; index < bytes; index += 8) {
    const std::uint64_t word = prng.next();
    for (std::uint64_t lane = 0; lane < 8 && index + lane < bytes; ++lane) {
      content[index + lane] = static_cast<std::byte>((word >> (8U * lane)) & 0xFFU);
    }
  }
  return content;
}

std::vector<std::string> compare_logs(const ScriptLog& reference, const ScriptLog& candidate, std::size_t report_max) {
  std::vector<std::string> divergences;
  const auto report = [&](std::string sentence) {
    if (divergences.size() < report_max) divergences.push_back(std::move(sentence));
  };
  if (reference.setup_failure != candidate.setup_failure) {
    report("the runs started differently: reference \"" + reference.setup_failure + "\", candidate \"" +
           candidate.setup_failure + "\"");
  }
  const std::size_t common = std::min(reference.records.size(), candidate.records.size());
  for (std::size_t index = 0; index < common; ++index) {
    const ScriptRecord& expected = reference.records[index];
    const ScriptRecord& actual = candidate.records[index];
    const std::string where = "step " + std::to_string(expected.step) + ", record " + std::to_string(index) + " (" +
                              expected.what + ")";
    if (expected.step != actual.step || expected.what != actual.what) {
      report(where + ": the candidate recorded \"" + actual.what + "\" at step " + std::to_string(actual.step) +
             " instead");
      break;  // the logs are out of step; later comparisons would only repeat this
    }
    if (expected.outcome != actual.outcome) {
      report(where + ": reference " + expected.outcome + ", candidate " + actual.outcome);
    }
    if (expected.bytes != actual.bytes) {
      std::size_t offset = 0;
      while (offset < expected.bytes.size() && offset < actual.bytes.size() && expected.bytes[offset] == actual.bytes[offset]) {
        offset++;
      }
      report(where + ": the bytes differ first at offset " + std::to_string(offset) + " of " +
             std::to_string(expected.bytes.size()) + ": reference " + hex_window(expected.bytes, offset) +
             ", candidate " + hex_window(actual.bytes, offset));
    }
  }
  if (reference.records.size() != candidate.records.size()) {
    report("the reference recorded " + std::to_string(reference.records.size()) + " observations, the candidate " +
           std::to_string(candidate.records.size()));
  }
  return divergences;
}

}  // namespace quiesce::cuda
