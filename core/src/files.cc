#include "quiesce/core/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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
  const std::string named = std::string(what) + " " + quoted(path);
  struct stat existing {};
  const bool exists = ::stat(path.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode)) return FileError{"cannot write " + named + ": it is a directory"};
  // Something other than a file (a terminal, /dev/null, a pipe) is written in place: renaming over it
  // would replace the device or the pipe with a file.
  if (exists && !S_ISREG(existing.st_mode)) {
    Descriptor file(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (file.get() < 0) return FileError{"cannot write " + named + ": " + reason(errno)};
    if (const int number = write_all(file.get(), bytes); number != 0) {
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
  if (const int number = write_all(file.get(), bytes); number != 0) return fail(number);
  if (const int number = file.close(); number != 0) return fail(number);
  if (::rename(temporary.c_str(), target.c_str()) != 0) return fail(errno);
  return {};
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
