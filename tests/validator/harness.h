// Helpers shared by the validator tests: allocation under a transaction, small batches, and assertions
// about which rules a validator reported.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "quiesce/core/transaction.h"
#include "quiesce/core/validator.h"

namespace quiesce {

// Readable rule names in GoogleTest's failure messages.
inline void PrintTo(Rule rule, std::ostream* out) { *out << to_string(rule); }

}  // namespace quiesce

namespace quiesce::testing {

inline constexpr BufferUsage kTransferUsage = BufferUsage::TransferSource | BufferUsage::TransferTarget;

// One buffer through a committed transaction (the only way to get an AllocationPermit).
template <class B>
Buffer allocate(B& backend, const Context& context, std::uint64_t bytes, BufferUsage usage = kAllBufferUsage,
                QueueRef ordering_queue = {}) {
  MemoryBudget budget(std::uint64_t{1} << 40);
  ResourceTransaction<B> transaction(backend, context, budget, 1);
  const AllocationMode mode = ordering_queue.valid() ? AllocationMode::StreamOrdered : AllocationMode::Direct;
  const Result<BufferRef> staged = transaction.allocate(BufferDesc{bytes, usage, mode, ordering_queue});
  EXPECT_TRUE(staged.ok()) << (staged.ok() ? "" : describe_error(staged.error()));
  std::vector<Buffer> buffers = transaction.commit();
  EXPECT_EQ(buffers.size(), 1U);
  return buffers.empty() ? Buffer{} : std::move(buffers.front());
}

template <class V>
std::vector<Rule> rules_of(const V& validator) {
  std::vector<Rule> rules;
  for (const Violation& violation : validator.violations()) rules.push_back(violation.rule);
  return rules;
}

template <class V>
bool reported(const V& validator, Rule rule) {
  const std::vector<Rule> rules = rules_of(validator);
  return std::find(rules.begin(), rules.end(), rule) != rules.end();
}

// Every violation, one sentence per line: the failure message of an assertion about violations.
template <class V>
std::string violation_report(const V& validator) {
  std::string text;
  for (const Violation& violation : validator.violations()) text += describe_violation(violation) + "\n";
  return text;
}

// An upload of `bytes` bytes of `value` into `target` at offset 0; the data outlives the batch.
struct UploadBatch {
  std::vector<std::byte> data;
  Command command;

  UploadBatch(BufferRef target, std::size_t bytes, std::uint8_t value)
      : data(bytes, static_cast<std::byte>(value)), command(Command::upload(data, target, 0)) {}
  UploadBatch(const UploadBatch&) = delete;  // the command borrows `data`
  UploadBatch& operator=(const UploadBatch&) = delete;
  Batch batch() const { return Batch(&command, 1); }
};

}  // namespace quiesce::testing
