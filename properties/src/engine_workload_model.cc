// The engine workload's host model of every buffer's bytes, and the printing of a workload result.
#include <algorithm>
#include <cassert>
#include <cstring>

#include "quiesce/properties/engine_workload.h"

namespace quiesce::properties {

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
  Content added;
  added.bytes.assign(bytes, 0);
  added.known.assign(bytes, 0);
  for (std::size_t index = 0; index < content.size(); ++index) {
    added.bytes[index] = static_cast<std::uint8_t>(content[index]);
    added.known[index] = 1;
  }
  buffers_.emplace_back(buffer, std::move(added));
}

void EngineHostModel::remove(std::uint64_t buffer) {
  std::erase_if(buffers_, [&](const auto& entry) { return entry.first == buffer; });
}

void EngineHostModel::clear() { buffers_.clear(); }

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
  if (op.kind == OpKind::Copy) {
    Content* source = find(op.buffers.front());
    for (std::uint64_t index = 0; index < op.bytes; ++index) {
      target->bytes[op.target_offset + index] = source != nullptr ? source->bytes[op.source_offset + index] : 0;
      target->known[op.target_offset + index] = source != nullptr ? source->known[op.source_offset + index] : 0;
    }
    depend(*target, source, submission);
    return;
  }
  for (std::uint64_t index = 0; index < op.bytes; ++index) {
    target->bytes[op.target_offset + index] =
        op.kind == OpKind::Upload ? static_cast<std::uint8_t>(op.data[index]) : std::uint8_t{0};
    target->known[op.target_offset + index] = 1;
  }
  depend(*target, nullptr, submission);
}

void EngineHostModel::apply_kernel_op(const ModelOp& op) {
  if (op.mode == LaunchMode::DryRun) return;  // R18: a dry run changes no bytes
  std::vector<Content*> bindings;
  for (const std::uint64_t buffer : op.buffers) bindings.push_back(find(buffer));
  const bool all_present = std::none_of(bindings.begin(), bindings.end(), [](Content* c) { return c == nullptr; });
  std::vector<std::vector<std::uint8_t>*> host;
  for (Content* content : bindings) {
    if (content != nullptr) host.push_back(&content->bytes);
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
  const bool fits = apply_kernel(op.kernel, host, op.data);
  assert(fits);
  (void)fits;
  // What is known of each output after the kernel: its inputs' knowledge, word by word.
  auto all_known = [](const Content& content, std::uint64_t begin, std::uint64_t end) {
    return std::all_of(content.known.begin() + static_cast<std::ptrdiff_t>(begin),
                       content.known.begin() + static_cast<std::ptrdiff_t>(end), [](std::uint8_t k) { return k != 0; });
  };
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
        for (std::uint64_t index = 0; index < bytes; ++index) output->known[index] = input != nullptr ? input->known[index] : 0;
      } else if (op.kernel == BuiltinKernel::Saxpy) {
        const std::uint64_t bytes = std::min(in_bytes, output->bytes.size()) / 4 * 4;
        for (std::uint64_t word = 0; word < bytes; word += 4) {
          const bool known = input != nullptr && all_known(*input, word, word + 4) && all_known(*output, word, word + 4);
          std::fill(output->known.begin() + static_cast<std::ptrdiff_t>(word),
                    output->known.begin() + static_cast<std::ptrdiff_t>(word + 4), known ? 1 : 0);
        }
      } else {
        const bool known = input != nullptr && all_known(*input, 0, in_bytes / 4 * 4);
        std::fill(output->known.begin(), output->known.begin() + 8, known ? 1 : 0);
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
  for (std::size_t index = 0; index < data.size(); ++index) {
    content->bytes[offset + index] = static_cast<std::uint8_t>(data[index]);
    content->known[offset + index] = succeeded ? 1 : 0;
  }
}

std::optional<std::string> EngineHostModel::check_read(std::uint64_t buffer, std::uint64_t offset,
                                                       std::span<const std::byte> read, std::uint64_t& known_bytes) {
  Content* content = find(buffer);
  if (content == nullptr) return std::nullopt;
  resolve(*content, true);
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
