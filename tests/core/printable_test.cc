// printable(): what a terminal would act on is shown as \xHH; all other text, UTF-8 included, is kept.
#include <gtest/gtest.h>

#include "quiesce/core/printable.h"

namespace quiesce {
namespace {

TEST(Printable, KeepsPlainTextAndUtf8) {
  EXPECT_EQ(printable("rate submit_rejected 1/100"), "rate submit_rejected 1/100");
  EXPECT_EQ(printable("gr\xC3\xBC\xC3\x9F \xE2\x86\x92 \\n"), "gr\xC3\xBC\xC3\x9F \xE2\x86\x92 \\n");
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, ShowsControlCharactersAsHex) {
  EXPECT_EQ(printable("a\x1B]0;owned\x07" "b"), "a\\x1B]0;owned\\x07b");  // an OSC that would retitle the window
  EXPECT_EQ(printable(std::string_view("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(printable("tab\there\nnext\r\x7F"), "tab\\x09here\\x0Anext\\x0D\\x7F");
  EXPECT_EQ(printable("\xC2\x9B" "31m"), "\\xC2\\x9B31m");  // C1 CSI in UTF-8
  EXPECT_EQ(printable("\xC2\xA0"), "\xC2\xA0");                // a no-break space is text
  EXPECT_EQ(printable("\xC2"), "\xC2");                        // a lone lead byte at the end is kept
}

}  // namespace
}  // namespace quiesce
