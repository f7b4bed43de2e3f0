#include "quiesce/core/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <ostream>
#include <streambuf>
#include <system_error>

namespace quiesce {
namespace {

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

std::string reason(int error) { return std::generic_category().message(error); }

// Closes a descriptor on every path out of a function.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now; the system's error number, or 0.
  int close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

// Writes every byte of `bytes` to `fd`; the system's error number, or 0.
int write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t put = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return errno;
    done += static_cast<std::size_t>(put);
  }
  return 0;
}

// An output stream's buffer that writes through to a descriptor a piece at a time and keeps the first
// error, so that a report can be formatted straight into its file instead of into memory first.
class DescriptorBuffer final : public std::streambuf {
 public:
  explicit DescriptorBuffer(int fd) : fd_(fd) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  // Writes what is buffered; the system's error number of the first failed write, or 0.
  int finish() {
    drain();
    return error_;
  }

 protected:
  int_type overflow(int_type c) override {
    if (drain() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() == 0 ? 0 : -1; }

 private:
  int drain() {
    if (error_ == 0 && pptr() > pbase()) {
      error_ = write_all(fd_, std::string_view(pbase(), static_cast<std::size_t>(pptr() - pbase())));
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return error_;
  }

  int fd_;
  int error_ = 0;
  std::array<char, std::size_t{1} << 16U> buffer_{};
};

// Fills the descriptor it is given; the system's error number, or 0.
using Filler = std::function<int(int fd)>;

Result<void, FileError> replace_file(const std::filesystem::path& path, const Filler& fill, std::string_view what) {
  const std::string named = std::string(what) + " " + quoted(path);
  struct stat existing {};
  const bool exists = ::stat(path.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode)) return FileError{"cannot write " + named + ": it is a directory"};
  // Something other than a file (a terminal, /dev/null, a pipe) is written in place: renaming over it
  // would replace the device or the pipe with a file.
  if (exists && !S_ISREG(existing.st_mode)) {
    Descriptor file(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (file.get() < 0) return FileError{"cannot write " + named + ": " + reason(errno)};
    if (const int number = fill(file.get()); number != 0) {
      return FileError{"cannot write " + named + ": " + reason(number)};
    }
    if (const int number = file.close(); number != 0) return FileError{"cannot write " + named + ": " + reason(number)};
    return {};
  }
  // A link is followed: the file it names is replaced, and the link stays.
  std::error_code error;
  const std::filesystem::path target = exists ? std::filesystem::canonical(path, error) : path;
  if (error) return FileError{"cannot write " + named + ": " + error.message()};
  const std::filesystem::path folder = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::string temporary = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
  Descriptor file(::mkstemp(temporary.data()));
  if (file.get() < 0) return FileError{"cannot write " + named + ": " + reason(errno)};
  auto fail = [&](int number) -> Result<void, FileError> {
    ::unlink(temporary.c_str());
    return FileError{"cannot write " + named + ": " + reason(number)};
  };
  // mkstemp creates the file for its owner alone; the result gets the mode a plain create would give.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(file.get(), static_cast<mode_t>(0666) & ~mask) != 0) return fail(errno);
  int filled = 0;
  try {
    filled = fill(file.get());
  } catch (...) {  // a writer that throws (out of memory) leaves no temporary file behind
    ::unlink(temporary.c_str());
    throw;
  }
  if (filled != 0) return fail(filled);
  if (const int number = file.close(); number != 0) return fail(number);
  if (::rename(temporary.c_str(), target.c_str()) != 0) return fail(errno);
  return {};
}

}  // namespace

Result<std::string, FileError> read_whole_file(const std::filesystem::path& path, std::uint64_t bytes_max,
                                               std::string_view what) {
  const std::string named = std::string(what) + " " + quoted(path);
  Descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) return FileError{"cannot open " + named + ": " + reason(errno)};
  struct stat status {};
  if (::fstat(file.get(), &status) != 0) return FileError{"cannot read " + named + ": " + reason(errno)};
  if (S_ISDIR(status.st_mode)) return FileError{named + " is a directory, not a file"};
  // A pipe (a shell's <(...), a FIFO) is read to its end; a device is refused: /dev/zero never ends.
  const bool stream = S_ISFIFO(status.st_mode) || S_ISSOCK(status.st_mode);
  if (!S_ISREG(status.st_mode) && !stream) return FileError{named + " is a device, not a file"};
  const auto size = static_cast<std::uint64_t>(status.st_size);
  auto above_bound = [&](std::uint64_t bytes) {
    return FileError{named + " is " + (stream ? "over " : "") + std::to_string(bytes) + " bytes, above the bound of " +
                     std::to_string(bytes_max)};
  };
  if (!stream && size > bytes_max) return above_bound(size);
  std::string bytes(static_cast<std::size_t>(stream ? 0 : size), '\0');
  std::size_t done = 0;
  for (;;) {
    if (done == bytes.size()) {
      if (!stream) break;
      if (bytes.size() > bytes_max) return above_bound(bytes_max);
      bytes.resize(std::max<std::size_t>(4096, bytes.size() * 2));
    }
    const ssize_t got = ::read(file.get(), bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return FileError{"cannot read " + named + ": " + reason(errno)};
    if (got == 0) {
      if (!stream) return FileError{"cannot read " + named + ": it shrank while it was read"};
      break;
    }
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  if (done > bytes_max) return above_bound(bytes_max);
  return bytes;
}

Result<void, FileError> write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                                              std::string_view what) {
  return replace_file(path, [bytes](int fd) { return write_all(fd, bytes); }, what);
}

Result<void, FileError> write_file_atomically(const std::filesystem::path& path,
                                              const std::function<void(std::ostream&)>& write, std::string_view what) {
  return replace_file(
      path,
      [&write](int fd) {
        DescriptorBuffer buffer(fd);
        std::ostream out(&buffer);
        write(out);
        out.flush();
        return buffer.finish();
      },
      what);
}

Result<void, FileError> check_writable(const std::filesystem::path& path, std::string_view what) {
  const std::string named = std::string(what) + " " + quoted(path);
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) return FileError{"cannot write " + named + ": it is a directory"};
    if (!S_ISREG(status.st_mode)) {  // a device or a pipe, written in place
      if (::access(path.c_str(), W_OK) != 0) return FileError{"cannot write " + named + ": " + reason(errno)};
      return {};
    }
  }
  const std::filesystem::path folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  if (::stat(folder.c_str(), &status) != 0) return FileError{"cannot write " + named + ": " + reason(errno)};
  if (!S_ISDIR(status.st_mode)) {
    return FileError{"cannot write " + named + ": " + quoted(folder) + " is not a directory"};
  }
  // A file is made and removed again: access() would let root through where no file can be made (/proc).
  std::string probe = (folder / ".quiesce-write-check-XXXXXX").string();
  Descriptor file(::mkstemp(probe.data()));
  if (file.get() < 0) return FileError{"cannot write " + named + ": " + reason(errno)};
  ::unlink(probe.c_str());
  return {};
}

bool is_one_of(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs) {
  for (const std::filesystem::path& input : inputs) {
    std::error_code error;
    if (std::filesystem::equivalent(output, input, error) && !error) return true;
  }
  return false;
}

}  // namespace quiesce
