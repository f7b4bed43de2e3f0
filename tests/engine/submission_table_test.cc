// engine_detail::SubmissionTable, the engine's live submission records, against std::map<serial, record>:
// the ordered map it replaced. Random sequences of emplace, erase (of any live record, or of each record
// while iterating), lookup and clear must leave both with the same records in the same order, and a
// reference to a record must stay valid until that record is erased or the table is next emplaced into.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "quiesce/core/engine/state.h"

namespace quiesce {
namespace {

using engine_detail::Submission;
using engine_detail::SubmissionTable;

// The table's contents, in iteration order, as (serial, invocation) pairs; invocation tags each record.
std::vector<std::pair<std::uint64_t, std::uint64_t>> contents(const SubmissionTable& table) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& [serial, submission] : table) out.emplace_back(serial, submission.invocation);
  return out;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> contents(const std::map<std::uint64_t, std::uint64_t>& model) {
  return {model.begin(), model.end()};
}

RC_GTEST_PROP(SubmissionTable, BehavesAsAnOrderedMapOfRecords, ()) {
  SubmissionTable table;
  std::map<std::uint64_t, std::uint64_t> model;  // serial -> invocation
  std::uint64_t serial = 0;
  const auto steps = *rc::gen::inRange<int>(1, 400);
  for (int step = 0; step < steps; ++step) {
    const int action = *rc::gen::inRange<int>(0, 10);
    if (action < 5) {  // emplace, with a gap in serials now and then (resources take serials too)
      serial += *rc::gen::inRange<std::uint64_t>(1, 4);
      Submission& record = table.emplace_back(serial);
      RC_ASSERT(record.waits_on.empty());  // a reused entry comes back as a fresh record
      record.invocation = serial * 10;
      record.waits_on.push_back(serial);
      model[serial] = serial * 10;
    } else if (action < 8 && !model.empty()) {  // erase any live record; the others stay where they were
      auto victim = model.begin();
      std::advance(victim, *rc::gen::inRange<std::size_t>(0, model.size()));
      std::vector<std::pair<std::uint64_t, const Submission*>> others;
      for (const auto& [other, submission] : table) {
        if (other != victim->first) others.emplace_back(other, &submission);
      }
      auto it = table.find(victim->first);
      RC_ASSERT(it != table.end());
      auto next = table.erase(it);
      auto model_next = model.erase(victim);
      RC_ASSERT((next == table.end()) == (model_next == model.end()));
      if (next != table.end()) RC_ASSERT(next->first == model_next->first);
      for (const auto& [other, address] : others) {
        RC_ASSERT(&table.at(other) == address);
        RC_ASSERT(address->invocation == other * 10);
      }
    } else if (action == 8) {  // erase while iterating, every other record, as progress does
      bool drop = *rc::gen::arbitrary<bool>();
      for (auto it = table.begin(); it != table.end();) {
        if (drop) {
          model.erase(it->first);
          it = table.erase(it);
        } else {
          ++it;
        }
        drop = !drop;
      }
    } else if (*rc::gen::inRange<int>(0, 8) == 0) {
      table.clear();
      model.clear();
    }
    RC_ASSERT(table.size() == model.size());
    RC_ASSERT(table.empty() == model.empty());
    RC_ASSERT(contents(table) == contents(model));
    const std::uint64_t probe = *rc::gen::inRange<std::uint64_t>(0, serial + 2);
    RC_ASSERT((table.find(probe) != table.end()) == (model.count(probe) == 1));
  }
}

TEST(SubmissionTable, AnIteratorReachesTheEndWhenTheRecordsAfterItAreErased) {
  SubmissionTable table;
  for (std::uint64_t serial = 1; serial <= 5; ++serial) table.emplace_back(serial);
  auto first = table.begin();
  ASSERT_EQ(first->first, 1U);
  // Erasing the records after it (each one at the back as it goes) leaves nothing after the first.
  for (std::uint64_t serial = 5; serial >= 2; --serial) table.erase(table.find(serial));
  ++first;
  EXPECT_TRUE(first == table.end());
  EXPECT_EQ(table.size(), 1U);
}

TEST(SubmissionTable, AnOldRecordDoesNotHoldTheRingOpen) {
  // One record that never retires while thousands come and go: the ring stays small, the old record
  // keeps its contents, and the table still finds it.
  SubmissionTable table;
  table.emplace_back(1).invocation = 7;
  for (std::uint64_t serial = 2; serial < 10000; ++serial) {
    table.emplace_back(serial);
    table.erase(table.find(serial));
  }
  ASSERT_EQ(table.size(), 1U);
  EXPECT_LE(table.capacity(), 16U);
  EXPECT_EQ(table.at(1).invocation, 7U);
  EXPECT_THROW((void)table.at(2), std::out_of_range);
}

}  // namespace
}  // namespace quiesce
