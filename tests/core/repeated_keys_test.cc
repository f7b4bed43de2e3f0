// RepeatedKeys: a key is a repeat only within one object, not across siblings or with an enclosing object.
#include "quiesce/core/repeated_keys.h"

#include <gtest/gtest.h>

namespace quiesce {
namespace {

TEST(RepeatedKeys, AKeyTwiceInOneObjectIsTheRepeat) {
  RepeatedKeys keys;  // {"a":1,"b":{"a":2},"b":3}
  keys.open_object();
  keys.key("a");
  keys.key("b");
  keys.open_object();
  keys.key("a");  // the inner object's own "a"
  keys.close_object();
  EXPECT_EQ(keys.repeated(), "");
  keys.key("b");
  keys.close_object();
  EXPECT_EQ(keys.repeated(), "b");
}

TEST(RepeatedKeys, SiblingObjectsMayShareKeys) {
  RepeatedKeys keys;  // {"list":[{"kind":1},{"kind":2,"x":{"kind":3}}],"kind":4}
  keys.open_object();
  keys.key("list");
  keys.open_object();
  keys.key("kind");
  keys.close_object();
  keys.open_object();
  keys.key("kind");
  keys.key("x");
  keys.open_object();
  keys.key("kind");
  keys.close_object();
  keys.close_object();
  keys.key("kind");
  keys.close_object();
  EXPECT_EQ(keys.repeated(), "");
}

TEST(RepeatedKeys, TheFirstRepeatIsKept) {
  RepeatedKeys keys;  // {"a":1,"a":2,"b":3,"b":4}
  keys.open_object();
  for (const char* name : {"a", "a", "b", "b"}) keys.key(name);
  EXPECT_EQ(keys.repeated(), "a");
}

}  // namespace
}  // namespace quiesce
