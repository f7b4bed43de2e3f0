// IdMap: the injector's flat id map agrees with std::map under random inserts and erases (collisions,
// wrap-around probe runs, growth and backward-shift deletion included).
#include <gtest/gtest.h>

#include <map>

#include "quiesce/core/prng.h"
#include "quiesce/faults/id_map.h"

namespace quiesce::faults {
namespace {

TEST(IdMap, AgreesWithAnOrderedMapUnderRandomChurn) {
  IdMap<std::uint64_t> map;
  std::map<std::uint64_t, std::uint64_t> model;
  Prng prng(99);
  for (std::uint32_t step = 0; step < 200'000; ++step) {
    const std::uint64_t id = 1 + prng.below(3000) * 4294967296ULL;  // sparse ids, like real handle ids
    if (prng.below(3) == 0) {
      map.erase(id);
      model.erase(id);
    } else {
      map[id] = step;
      model[id] = step;
    }
    if (step % 1000 == 0) {
      ASSERT_EQ(map.size(), model.size()) << "step " << step;
    }
  }
  for (std::uint64_t slot = 0; slot < 3000; ++slot) {
    const std::uint64_t id = 1 + slot * 4294967296ULL;
    const auto found = model.find(id);
    const std::uint64_t* value = map.find(id);
    ASSERT_EQ(value != nullptr, found != model.end()) << "id " << id;
    if (value != nullptr) {
      EXPECT_EQ(*value, found->second);
    }
  }
  EXPECT_EQ(map.find(0), nullptr);
  map.erase_if([](std::uint64_t, std::uint64_t value) { return value % 2 == 0; });
  std::size_t odd = 0;
  for (const auto& [id, value] : model) odd += value % 2;
  EXPECT_EQ(map.size(), odd);
}

}  // namespace
}  // namespace quiesce::faults
