// Whole-file reads and writes for the quiesce command's inputs and outputs (fault plans, cost profiles,
// traces, campaign reports), so that every one refuses the same bad paths the same way.
//
// A read takes only a regular file (a directory, a device or a FIFO is refused by name) of at most a
// stated size, and says why it could not. A write goes to a temporary file beside the target that is
// renamed over it once every byte is written and the file closed: a failed write leaves the target as it
// was and no partial file, so a report, a trace or a cost profile that exists is whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "quiesce/core/result.h"

namespace quiesce {

// Why a file could not be read or written: one sentence naming the file.
struct FileError {
  std::string message;
};

// The contents of the regular file at `path`, of at most `bytes_max` bytes. The error names `what` (for
// example "fault plan") and the path: a missing file, a directory, something other than a regular file, a
// file above the bound, a read that failed (with the system's reason).
Result<std::string, FileError> read_whole_file(const std::filesystem::path& path, std::uint64_t bytes_max,
                                               std::string_view what);

// Replaces the file at `path` with `bytes`, atomically: a temporary file in the same folder, written,
// closed and renamed over `path` (over the file a link names, when `path` is a link). Something that is not
// a file (/dev/null, a terminal, a pipe) is written in place instead. The error names `what` and the path
// with the system's reason; the temporary file is removed and `path` keeps what it held.
Result<void, FileError> write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                                              std::string_view what);

// The same, for text that `write` formats straight into the file (a campaign report of hundreds of MB is
// never held in memory whole). A failed write is reported once `write` returns; an exception from `write`
// removes the temporary file and passes on.
Result<void, FileError> write_file_atomically(const std::filesystem::path& path,
                                              const std::function<void(std::ostream&)>& write, std::string_view what);

// Whether write_file_atomically(path, ...) can work, asked before the work that produces the bytes: `path`
// is not a directory and its folder exists and may be written. The error names `what` and the path.
Result<void, FileError> check_writable(const std::filesystem::path& path, std::string_view what);

// True when `output` names a file that exists and is the same file as one of `inputs` (after links):
// writing it would destroy an input.
bool is_one_of(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs);

}  // namespace quiesce
