// Whole-file reads and atomic writes (core/files.h): what a read refuses and how, and that a failed write
// leaves the target as it was with no temporary file beside it.
#include "quiesce/core/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace quiesce {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "quiesce-files-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    folder_ = pattern;
  }
  void TearDown() override { fs::remove_all(folder_); }

  void put(const fs::path& path, const std::string& text) {
    std::ofstream file(path, std::ios::binary);
    file << text;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(folder_)) found.push_back(entry.path().filename().string());
    std::sort(found.begin(), found.end());
    return found;
  }

  fs::path folder_;
};

TEST_F(FilesTest, ReadsARegularFileWhole) {
  put(folder_ / "plan", std::string("seed 1\n\0rate x 1/2\n", 19));
  Result<std::string, FileError> read = read_whole_file(folder_ / "plan", 100, "fault plan");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read.value(), std::string("seed 1\n\0rate x 1/2\n", 19));
}

TEST_F(FilesTest, RefusesADirectoryAMissingFileADeviceAndAFileAboveTheBound) {
  fs::create_directory(folder_ / "folder");
  Result<std::string, FileError> directory = read_whole_file(folder_ / "folder", 100, "fault plan");
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().message.find("fault plan '"), std::string::npos) << directory.error().message;
  EXPECT_NE(directory.error().message.find("is a directory"), std::string::npos) << directory.error().message;

  Result<std::string, FileError> missing = read_whole_file(folder_ / "absent", 100, "cost profile");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open cost profile '"), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("No such file or directory"), std::string::npos) << missing.error().message;

  Result<std::string, FileError> device = read_whole_file("/dev/zero", 100, "fault plan");
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.error().message.find("is a device, not a file"), std::string::npos) << device.error().message;

  put(folder_ / "big", std::string(101, 'x'));
  Result<std::string, FileError> big = read_whole_file(folder_ / "big", 100, "fault plan");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("is 101 bytes, above the bound of 100"), std::string::npos) << big.error().message;
  EXPECT_TRUE(read_whole_file(folder_ / "big", 101, "fault plan").ok());
}

TEST_F(FilesTest, ReadsAPipeToItsEndUnderTheBound) {
  const fs::path fifo = folder_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto feed = [&](std::size_t count) {
    return std::thread([fifo, count] {
      std::ofstream writer(fifo, std::ios::binary);
      writer << std::string(count, 'p');
    });
  };
  std::thread small = feed(10000);
  Result<std::string, FileError> read = read_whole_file(fifo, 10000, "trace");
  small.join();
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read.value(), std::string(10000, 'p'));

  std::thread large = feed(10001);
  Result<std::string, FileError> over = read_whole_file(fifo, 10000, "trace");
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().message.find("is over 10000 bytes, above the bound of 10000"), std::string::npos)
      << over.error().message;
  large.join();  // its 10,001 bytes fit the pipe's buffer, so it has finished whether read or not
}

TEST_F(FilesTest, AWriteReplacesTheFileAndLeavesNothingElse) {
  put(folder_ / "report.json", "old");
  ASSERT_TRUE(write_file_atomically(folder_ / "report.json", "new contents", "report").ok());
  EXPECT_EQ(read_whole_file(folder_ / "report.json", 100, "report").value(), "new contents");
  EXPECT_EQ(names(), std::vector<std::string>{"report.json"});
  ASSERT_TRUE(write_file_atomically(folder_ / "fresh", "", "report").ok());
  EXPECT_EQ(read_whole_file(folder_ / "fresh", 100, "report").value(), "");
  // A plain create's mode: the umask applies, as it would to an ofstream.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat status {};
  ASSERT_EQ(::stat((folder_ / "fresh").c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777U, 0666U & ~mask);
}

TEST_F(FilesTest, AFailedWriteKeepsTheOldFileAndLeavesNoTemporary) {
  fs::create_directory(folder_ / "taken");
  Result<void, FileError> onto_directory = write_file_atomically(folder_ / "taken", "x", "trace");
  ASSERT_FALSE(onto_directory.ok());
  EXPECT_NE(onto_directory.error().message.find("cannot write trace '"), std::string::npos)
      << onto_directory.error().message;
  EXPECT_NE(onto_directory.error().message.find("it is a directory"), std::string::npos)
      << onto_directory.error().message;

  Result<void, FileError> missing_folder = write_file_atomically(folder_ / "absent" / "x", "x", "trace");
  ASSERT_FALSE(missing_folder.ok());
  EXPECT_NE(missing_folder.error().message.find("No such file or directory"), std::string::npos)
      << missing_folder.error().message;

  EXPECT_EQ(names(), std::vector<std::string>{"taken"});
}

TEST_F(FilesTest, ADeviceIsWrittenInPlaceAndALinkStaysALink) {
  // /dev/full refuses every write; written in place, it stays the device (never a file renamed over it).
  struct stat before {};
  if (::stat("/dev/full", &before) == 0 && S_ISCHR(before.st_mode)) {
    Result<void, FileError> full = write_file_atomically("/dev/full", "x", "trace");
    ASSERT_FALSE(full.ok());
    EXPECT_NE(full.error().message.find("No space left on device"), std::string::npos) << full.error().message;
    struct stat after {};
    ASSERT_EQ(::stat("/dev/full", &after), 0);
    EXPECT_TRUE(S_ISCHR(after.st_mode));
  }
  EXPECT_TRUE(write_file_atomically("/dev/null", "discarded", "trace").ok());

  put(folder_ / "target", "old");
  fs::create_symlink(folder_ / "target", folder_ / "link");
  ASSERT_TRUE(write_file_atomically(folder_ / "link", "new", "trace").ok());
  EXPECT_TRUE(fs::is_symlink(folder_ / "link"));
  EXPECT_EQ(read_whole_file(folder_ / "target", 100, "trace").value(), "new");
  EXPECT_EQ(names(), (std::vector<std::string>{"link", "target"}));
}

TEST_F(FilesTest, AStreamedWriteIsWholeOrNothing) {
  // More than the writer's 64 KiB buffer, so the file is written in several pieces.
  std::string expected;
  for (int line = 0; line < 20000; ++line) expected += "line " + std::to_string(line) + "\n";
  put(folder_ / "summary.json", "old");
  const auto write_lines = [](std::ostream& out) {
    for (int line = 0; line < 20000; ++line) out << "line " << line << '\n';
  };
  ASSERT_TRUE(write_file_atomically(folder_ / "summary.json", write_lines, "report").ok());
  EXPECT_EQ(read_whole_file(folder_ / "summary.json", 1U << 20U, "report").value(), expected);
  EXPECT_EQ(names(), std::vector<std::string>{"summary.json"});

  // A writer that throws leaves the old file and no temporary.
  const auto throws = [](std::ostream& out) {
    out << std::string(100000, 'x');
    throw std::runtime_error("out of memory");
  };
  EXPECT_THROW((void)write_file_atomically(folder_ / "summary.json", throws, "report"), std::runtime_error);
  EXPECT_EQ(read_whole_file(folder_ / "summary.json", 1U << 20U, "report").value(), expected);
  EXPECT_EQ(names(), std::vector<std::string>{"summary.json"});

  // A device that refuses the bytes is reported once the writer is done.
  struct stat device {};
  if (::stat("/dev/full", &device) == 0 && S_ISCHR(device.st_mode)) {
    Result<void, FileError> full = write_file_atomically("/dev/full", write_lines, "report");
    ASSERT_FALSE(full.ok());
    EXPECT_NE(full.error().message.find("cannot write report '/dev/full': No space left on device"),
              std::string::npos)
        << full.error().message;
  }
}

TEST_F(FilesTest, TellsBeforeTheWorkWhetherAnOutputCanBeWritten) {
  EXPECT_TRUE(check_writable(folder_ / "new.qtrace", "trace").ok());
  put(folder_ / "old", "x");
  EXPECT_TRUE(check_writable(folder_ / "old", "trace").ok());
  EXPECT_TRUE(check_writable("/dev/null", "trace").ok());
  fs::create_directory(folder_ / "folder");
  Result<void, FileError> directory = check_writable(folder_ / "folder", "trace");
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().message.find("it is a directory"), std::string::npos) << directory.error().message;
  Result<void, FileError> missing = check_writable(folder_ / "absent" / "x", "trace");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("No such file or directory"), std::string::npos) << missing.error().message;
  Result<void, FileError> under_file = check_writable(folder_ / "old" / "x", "trace");
  ASSERT_FALSE(under_file.ok());
  EXPECT_NE(under_file.error().message.find("is not a directory"), std::string::npos) << under_file.error().message;
  EXPECT_EQ(names(), (std::vector<std::string>{"folder", "old"}));  // nothing was created
}

TEST_F(FilesTest, NamesAnOutputThatIsOneOfTheInputs) {
  put(folder_ / "a", "a");
  put(folder_ / "b", "b");
  fs::create_symlink(folder_ / "a", folder_ / "link");
  EXPECT_TRUE(is_one_of(folder_ / "a", {folder_ / "b", folder_ / "a"}));
  EXPECT_TRUE(is_one_of(folder_ / "link", {folder_ / "a"}));
  EXPECT_TRUE(is_one_of(folder_ / "." / "a", {folder_ / "a"}));
  EXPECT_FALSE(is_one_of(folder_ / "b", {folder_ / "a"}));
  EXPECT_FALSE(is_one_of(folder_ / "new", {folder_ / "a"}));
}

}  // namespace
}  // namespace quiesce
