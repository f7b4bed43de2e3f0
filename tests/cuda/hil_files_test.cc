// The files `quiesce calibrate` and `quiesce hil` write and read, checked before any GPU work: a bad
// output path or an unreadable cost profile is bad input (exit 2) whether or not a driver is there, and a
// calibration that cannot be written is reported, never announced as written. Needs no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "quiesce/cuda/hil.h"

namespace quiesce::cuda {
namespace {

namespace fs = std::filesystem;

class HilFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("quiesce_hil_files_" + std::to_string(::getpid()));
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  std::string path(const std::string& name) const { return (folder_ / name).string(); }

  fs::path folder_;
};

// Before the check came first, calibrate_command opened the driver first: exit 3 here, 1 on a GPU.
TEST_F(HilFiles, CalibrateRefusesABadOutputPathBeforeTheDriver) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(calibrate_command(folder_.string(), out, err), kExitBadInput);
  EXPECT_NE(err.str().find("is a directory"), std::string::npos) << err.str();
  EXPECT_EQ(calibrate_command(path("nosuch/profile.txt"), out, err), kExitBadInput);
  EXPECT_EQ(out.str(), "");
}

// The write itself: a full device fails and says so, and a failed write keeps the old file.
TEST_F(HilFiles, AFailedWriteIsReportedNotAnnounced) {
  std::ostringstream out;
  std::ostringstream err;
  if (fs::exists("/dev/full")) {
    EXPECT_EQ(write_cost_profile("/dev/full", "launch_latency_ns = 1\n", out, err), kExitBadInput);
    EXPECT_NE(err.str().find("/dev/full"), std::string::npos) << err.str();
    EXPECT_EQ(out.str().find("wrote"), std::string::npos) << out.str();
  }
  EXPECT_EQ(write_cost_profile(path("profile.txt"), "launch_latency_ns = 1\n", out, err), kExitOk);
  std::ifstream written(path("profile.txt"));
  std::string line;
  std::getline(written, line);
  EXPECT_EQ(line, "launch_latency_ns = 1");
}

// hil_command checks its files before its first fork and before the driver: without the check a directory
// as --calibrate or --cost-profile ran the GPU parts (exit 3 here) and the profile's read error was lost.
TEST_F(HilFiles, HilRefusesBadFilesBeforeTheDriver) {
  HilOptions options;
  options.real_faults = false;
  std::ostringstream out;
  std::ostringstream err;
  options.calibrate_out = folder_.string();
  EXPECT_EQ(hil_command(options, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("is a directory"), std::string::npos) << err.str();
  options.calibrate_out.clear();
  options.cost_profile_in = folder_.string();
  EXPECT_EQ(hil_command(options, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("cost profile"), std::string::npos) << err.str();
  options.cost_profile_in = path("nosuch.txt");
  EXPECT_EQ(hil_command(options, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("nosuch.txt"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace quiesce::cuda
