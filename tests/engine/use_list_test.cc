// engine_detail::UseList, a buffer's unfinished uses, against std::deque<BufferUse>: the container it
// replaced. Random sequences of appends, front retirements, erasures anywhere and clears must leave both
// with the same uses in the same order, and the list must not grow without bound while uses retire from
// the front as fast as new ones arrive.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "quiesce/core/engine/state.h"

namespace quiesce {
namespace {

using engine_detail::BufferUse;
using engine_detail::UseList;

std::vector<std::uint64_t> serials(const UseList& list) {
  std::vector<std::uint64_t> out;
  for (const BufferUse& use : list) out.push_back(use.submission);
  return out;
}

std::vector<std::uint64_t> serials(const std::deque<BufferUse>& model) {
  std::vector<std::uint64_t> out;
  for (const BufferUse& use : model) out.push_back(use.submission);
  return out;
}

RC_GTEST_PROP(UseList, BehavesAsADequeOfUses, ()) {
  UseList list;
  std::deque<BufferUse> model;
  std::uint64_t serial = 0;
  const auto steps = *rc::gen::inRange<int>(1, 400);
  for (int step = 0; step < steps; ++step) {
    const int action = *rc::gen::inRange<int>(0, 10);
    if (action < 5) {
      BufferUse& added = list.emplace_back();
      added.submission = ++serial;
      added.writes = serial % 2 == 0;
      model.push_back(BufferUse{serial, 0, false, serial % 2 == 0});
    } else if (action < 8) {
      if (model.empty()) continue;
      list.pop_front();
      model.pop_front();
    } else if (action < 9) {
      if (model.empty()) continue;
      const auto at = *rc::gen::inRange<std::size_t>(0, model.size());
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(at));
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(at));
    } else {
      list.clear();
      model.clear();
    }
    RC_ASSERT(list.size() == model.size());
    RC_ASSERT(list.empty() == model.empty());
    RC_ASSERT(serials(list) == serials(model));
    if (!model.empty()) {
      RC_ASSERT(list.back().submission == model.back().submission);
      RC_ASSERT(list.back().writes == model.back().writes);
    }
  }
}

// A buffer that is always in use on a busy queue: one use retires for each one added, and no more than
// three are ever live. The list keeps reusing its storage instead of growing with every submission.
TEST(UseList, ASteadyStreamOfUsesDoesNotGrowTheList) {
  UseList list;
  std::uint64_t serial = 0;
  for (int warm = 0; warm < 3; ++warm) list.emplace_back().submission = ++serial;
  for (int step = 0; step < 100000; ++step) {
    list.emplace_back().submission = ++serial;
    list.pop_front();
    ASSERT_EQ(list.size(), 3U);
    ASSERT_EQ(list.begin()->submission, serial - 2);
  }
  EXPECT_LE(list.capacity(), 16U);
}

}  // namespace
}  // namespace quiesce
