// Text from a file (a trace's header and notes, a plan's words, a profile's keys) as it may be shown on a
// terminal: control characters, which could move the cursor, retitle the window or hide what follows, are
// shown as \xHH instead of being sent.
#pragma once

#include <string>
#include <string_view>

namespace quiesce {

// `text` with every C0 control character, DEL and every C1 control (U+0080..U+009F, UTF-8 C2 80..C2 9F)
// written as \xHH, byte by byte; a backslash stays one backslash. Everything else, other UTF-8 included,
// is kept.
std::string printable(std::string_view text);

}  // namespace quiesce
