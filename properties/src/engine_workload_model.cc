// The engine workload's host model of every buffer's bytes, and the printing of a workload result.
#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>

#include "quiesce/properties/engine_workload.h"

namespace quiesce::properties {
namespace {

// `known` holds one 0 or 1 per byte, so eight of them read as one word are 0x01 per known byte: the known
// bytes of a word are the sum of its bytes, and times 0xFF it is the mask of its known bytes.
constexpr std::uint32_t kWordKnown = 0x01010101U;

std::uint32_t load_word(const std::uint8_t* bytes) {
  std::uint32_t word = 0;
  std::memcpy(&word, bytes, sizeof word);
  return word;
}

void store_word(std::uint8_t* bytes, std::uint32_t word) { std::memcpy(bytes, &word, sizeof word); }

bool all_known(const std::vector<std::uint8_t>& known, std::uint64_t begin, std::uint64_t end) {
  return std::memchr(known.data() + begin, 0, end - begin) == nullptr;
}

}  // namespace

EngineHostModel::Content* EngineHostModel::find(std::uint64_t buffer) {
  for (auto& [id, content] : buffers_) {
    if (id == buffer) return &content;
  }
  return nullptr;
}

bool EngineHostModel::contains(std::uint64_t buffer) const {
  return std::any_of(buffers_.begin(), buffers_.end(), [&](const auto& entry) { return entry.first == buffer; });
}

void EngineHostModel::add(std::uint64_t buffer, std::uint64_t bytes, std::span<const std::byte> content) {
  assert(!contains(buffer));
  assert(content.size() <= bytes);
  // A removed buffer's storage is reused, so that a steady churn of imports and releases allocates nothing.
  Content added;
  if (!spare_.empty()) {
    added = std::move(spare_.back());
    spare_.pop_back();
  }
  // The content, then zeros to the buffer's size: each byte is stored once (an import's content is usually
  // the whole buffer, so zeroing everything first and copying over it stored most bytes twice).
  const auto* const content_bytes = reinterpret_cast<const std::uint8_t*>(content.data());
  added.bytes.assign(content_bytes, content_bytes + content.size());
  added.bytes.resize(bytes, 0);
  added.known.assign(content.size(), 1);
  added.known.resize(bytes, 0);
  added.depends.clear();
  buffers_.emplace_back(buffer, std::move(added));
}

void EngineHostModel::remove(std::uint64_t buffer) {
  const auto found =
      std::find_if(buffers_.begin(), buffers_.end(), [&](const auto& entry) { return entry.first == buffer; });
  if (found == buffers_.end()) return;
  if (spare_.size() < kSpareContentsMax) spare_.push_back(std::move(found->second));
  buffers_.erase(found);
}

void EngineHostModel::clear() {
  for (auto& entry : buffers_) {
    if (spare_.size() < kSpareContentsMax) spare_.push_back(std::move(entry.second));
  }
  buffers_.clear();
}

void EngineHostModel::resolve(Content& content, bool final_check) {
  bool unknown = false;
  std::erase_if(content.depends, [&](SubmissionId submission) {
    const SubmissionFate fate = fate_of_(submission);
    if (fate == SubmissionFate::Complete) return true;
    if (!final_check && (fate == SubmissionFate::Pending || fate == SubmissionFate::Indeterminate)) return false;
    unknown = true;  // failed, cancelled, partial, lost, forgotten, or still unfinished at a final check
    return true;
  });
  if (unknown) {
    std::fill(content.known.begin(), content.known.end(), 0);
    content.depends.clear();
  }
}

void EngineHostModel::depend(Content& target, const Content* source, SubmissionId submission) {
  if (source != nullptr && source != &target) {
    for (const SubmissionId dependency : source->depends) {
      if (std::find(target.depends.begin(), target.depends.end(), dependency) == target.depends.end()) {
        target.depends.push_back(dependency);
      }
    }
  }
  if (std::find(target.depends.begin(), target.depends.end(), submission) == target.depends.end()) {
    target.depends.push_back(submission);
  }
  if (target.depends.size() > kDependenciesMax) resolve(target, false);
  // Still over the bound: the content cannot be vouched for any more.
  if (target.depends.size() > kDependenciesMax) {
    std::fill(target.known.begin(), target.known.end(), 0);
    target.depends.clear();
  }
}

void EngineHostModel::apply(const ModelOp& op, SubmissionId submission) {
  if (op.kind == OpKind::Launch) {
    apply_kernel_op(op);

    if (op.mode != LaunchMode::Normal) return;
    // Only a kernel's output depends on the launch (and on its input's own dependencies).
    const bool two_bindings = op.kernel == BuiltinKernel::Copy || op.kernel == BuiltinKernel::Saxpy ||
                              op.kernel == BuiltinKernel::Checksum;
    if (op.kernel != BuiltinKernel::Fill && !two_bindings) return;
    Content* output = find(op.buffers[two_bindings ? 1 : 0]);
    if (output != nullptr) depend(*output, two_bindings ? find(op.buffers[0]) : nullptr, submission);
    return;
  }
  assert(!op.buffers.empty());
  Content* target = find(op.buffers.back());
  if (target == nullptr) return;
  assert(op.target_offset + op.bytes <= target->bytes.size());
  if (op.kind == OpKind::Copy) {
    Content* source = find(op.buffers.front());
    if (source == nullptr) {
      std::memset(target->bytes.data() + op.target_offset, 0, op.bytes);
      std::memset(target->known.data() + op.target_offset, 0, op.bytes);
    } else if (source != target || op.target_offset <= op.source_offset ||
               op.source_offset + op.bytes <= op.target_offset) {
      // What a forward byte-by-byte copy leaves is what memmove leaves, unless the target range starts
      // inside the source range of the same buffer.
      std::memmove(target->bytes.data() + op.target_offset, source->bytes.data() + op.source_offset, op.bytes);
      std::memmove(target->known.data() + op.target_offset, source->known.data() + op.source_offset, op.bytes);
    } else {
      for (std::uint64_t index = 0; index < op.bytes; ++index) {
        target->bytes[op.target_offset + index] = source->bytes[op.source_offset + index];
        target->known[op.target_offset + index] = source->known[op.source_offset + index];
      }
    }
    depend(*target, source, submission);
    return;
  }
  if (op.kind == OpKind::Upload) {
    assert(op.data.size() >= op.bytes);
    std::memcpy(target->bytes.data() + op.target_offset, op.data.data(), op.bytes);
  } else {
    std::memset(target->bytes.data() + op.target_offset, 0, op.bytes);
  }
  std::memset(target->known.data() + op.target_offset, 1, op.bytes);
  depend(*target, nullptr, submission);
}

void EngineHostModel::apply_kernel_op(const ModelOp& op) {
  if (op.mode == LaunchMode::DryRun) return;  // R18: a dry run changes no bytes
  // Every builtin kernel binds at most two buffers; more do not fit any ABI.
  constexpr std::size_t kBindingsMax = 2;
  assert(op.buffers.size() <= kBindingsMax);
  if (op.buffers.size() > kBindingsMax) return;
  std::array<Content*, kBindingsMax> binding_storage{};
  std::array<std::vector<std::uint8_t>*, kBindingsMax> host_storage{};
  const std::span<Content*> bindings(binding_storage.data(), op.buffers.size());
  bool all_present = true;
  for (std::size_t index = 0; index < bindings.size(); ++index) {
    bindings[index] = find(op.buffers[index]);
    all_present = all_present && bindings[index] != nullptr;
    if (bindings[index] != nullptr) host_storage[index] = &bindings[index]->bytes;
  }
  if (!all_present) {
    // An input the model no longer holds (released, still pinned by a graph): the output is unknowable.
    const std::size_t output = op.kernel == BuiltinKernel::Fill ? 0 : 1;
    if (op.kernel != BuiltinKernel::Delay && op.kernel != BuiltinKernel::Fault && output < bindings.size() &&
        bindings[output] != nullptr) {
      std::fill(bindings[output]->known.begin(), bindings[output]->known.end(), 0);
    }
    return;
  }
  const bool fits =
      apply_kernel(op.kernel, std::span<std::vector<std::uint8_t>* const>(host_storage.data(), bindings.size()), op.data);
  assert(fits);
  (void)fits;
  // What is known of each output after the kernel: its inputs' knowledge, word by word.
  switch (op.kernel) {
    case BuiltinKernel::Fill:
      if (bindings[0] != nullptr) {
        const std::uint64_t words_bytes = bindings[0]->bytes.size() / 4 * 4;
        std::fill(bindings[0]->known.begin(), bindings[0]->known.begin() + static_cast<std::ptrdiff_t>(words_bytes), 1);
      }
      return;
    case BuiltinKernel::Copy:
    case BuiltinKernel::Saxpy:
    case BuiltinKernel::Checksum: {
      Content* output = bindings[1];
      if (output == nullptr) return;
      const Content* input = bindings[0];
      const std::uint64_t in_bytes = input != nullptr ? input->bytes.size() : 0;
      if (op.kernel == BuiltinKernel::Copy) {
        const std::uint64_t bytes = std::min(in_bytes, output->bytes.size());
        if (input == nullptr) {
          std::memset(output->known.data(), 0, bytes);
        } else {
          std::memmove(output->known.data(), input->known.data(), bytes);
        }
      } else if (op.kernel == BuiltinKernel::Saxpy) {
        const std::uint64_t bytes = std::min(in_bytes, output->bytes.size()) / 4 * 4;  // 0 without an input
        // Read once: the byte stores below may alias the vectors, whose data would be read again each word.
        const std::uint8_t* input_known = input != nullptr ? input->known.data() : nullptr;
        std::uint8_t* output_known = output->known.data();
        // A word is known when it was known in both inputs. Both tests are made for every word (`&` of two
        // 0-or-1 values, not `&&`), so the loop has no branch and vectorizes (CMakeLists.txt).
        for (std::uint64_t word = 0; word < bytes; word += 4) {
          const unsigned known = static_cast<unsigned>(load_word(input_known + word) == kWordKnown) &
                                 static_cast<unsigned>(load_word(output_known + word) == kWordKnown);
          store_word(output_known + word, known != 0 ? kWordKnown : 0);
        }
      } else {
        const bool known = input != nullptr && all_known(input->known, 0, in_bytes / 4 * 4);
        std::memset(output->known.data(), known ? 1 : 0, 8);
      }
      return;
    }
    case BuiltinKernel::Delay:
    case BuiltinKernel::Fault:
      return;
  }
}

void EngineHostModel::host_write(std::uint64_t buffer, std::uint64_t offset, std::span<const std::byte> data,
                                 bool succeeded) {
  Content* content = find(buffer);
  if (content == nullptr) return;
  assert(offset + data.size() <= content->bytes.size());
  if (data.empty()) return;
  std::memcpy(content->bytes.data() + offset, data.data(), data.size());
  std::memset(content->known.data() + offset, succeeded ? 1 : 0, data.size());
}

std::optional<std::string> EngineHostModel::check_read(std::uint64_t buffer, std::uint64_t offset,
                                                       std::span<const std::byte> read, std::uint64_t& known_bytes) {
  Content* content = find(buffer);
  if (content == nullptr) return std::nullopt;
  resolve(*content, true);
  assert(offset + read.size() <= content->bytes.size());
  // The usual case first: a read that agrees with every known byte. One pass with no branch per byte (the
  // differences of known bytes are or-ed together, each known byte's 1 is added up), which vectorizes
  // (CMakeLists.txt); only a read that disagrees somewhere is walked again below, byte by byte, to name its
  // first mismatch and count the known bytes up to it.
  const auto* const actual_bytes = reinterpret_cast<const std::uint8_t*>(read.data());
  const std::uint8_t* const expected_bytes = content->bytes.data() + offset;
  const std::uint8_t* const known_flags = content->known.data() + offset;
  // The known bytes are counted in blocks of at most 65,535, so that each block's count fits 16 bits: a
  // narrow sum costs the vector loop far fewer widening steps than a 64-bit one.
  constexpr std::size_t kCountBlockBytes = UINT16_MAX;
  std::uint8_t known_differences = 0;
  std::uint64_t known_in_read = 0;
  for (std::size_t block = 0; block < read.size(); block += kCountBlockBytes) {
    const std::size_t block_end = std::min(read.size(), block + kCountBlockBytes);
    std::uint16_t known_in_block = 0;
    for (std::size_t index = block; index < block_end; ++index) {
      const auto known_mask = static_cast<std::uint8_t>(0 - known_flags[index]);  // 0xFF where known, else 0
      known_differences |= static_cast<std::uint8_t>((actual_bytes[index] ^ expected_bytes[index]) & known_mask);
      known_in_block = static_cast<std::uint16_t>(known_in_block + known_flags[index]);
    }
    known_in_read += known_in_block;
  }
  if (known_differences == 0) {
    known_bytes += known_in_read;
    return std::nullopt;
  }
  for (std::size_t index = 0; index < read.size(); ++index) {
    if (content->known[offset + index] == 0) continue;
    known_bytes++;
    const auto actual = static_cast<std::uint8_t>(read[index]);
    if (actual != content->bytes[offset + index]) {
      return "buffer #" + std::to_string(buffer) + " byte " + std::to_string(offset + index) + ": expected " +
             std::to_string(content->bytes[offset + index]) + ", read " + std::to_string(actual);
    }
  }
  return std::nullopt;
}

void print_result(const EngineWorkloadResult& result, std::ostream& out) {
  out << "operations: " << result.operations << ", epochs: " << result.epochs_seen << "\n"
      << "imports: " << result.imports << " (" << result.imports_failed << " failed), writes: " << result.writes
      << ", reads checked: " << result.reads_checked << " (" << result.bytes_checked << " known bytes)\n"
      << "launches: " << result.launches << " (" << result.dry_runs << " dry runs, " << result.faults_planted
      << " faulting), batches: " << result.batches << " (" << result.receipts_timed << " timed receipts)\n"
      << "graphs: " << result.graphs_captured << " captured, " << result.replays << " replays; profiles: "
      << result.profiles << " (" << result.profiles_unavailable << " without timing)\n"
      << "releases: " << result.releases << ", flushes: " << result.flushes << ", failures surfaced: "
      << result.failures_surfaced << ", access violations refused: " << result.access_violations_refused << "\n"
      << "engine: " << result.engine.submissions << " submissions, " << result.engine.submit_retries
      << " exact retries, " << result.engine.submits_indeterminate << " indeterminate ("
      << result.engine.submits_partial << " partial), " << result.engine.release_rejections
      << " rejected releases, " << result.engine.cross_queue_waits << " cross-queue waits, "
      << result.engine.device_losses << " device losses\n"
      << "errors absorbed: " << result.errors_absorbed << "\n";
  out << "liveness: " << (result.liveness.ok() ? std::string("quiescent") : describe_error(result.liveness.error()))
      << "\n";
  out << result.shutdown.describe() << "\n";
  for (const std::string& failure : result.data_failures) out << "data check failed: " << failure << "\n";
  for (const std::string& problem : result.problems) out << "problem: " << problem << "\n";
}

}  // namespace quiesce::properties
