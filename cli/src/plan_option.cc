#include "plan_option.h"

#include <filesystem>

#include "quiesce/core/files.h"
#include "quiesce/core/printable.h"

namespace quiesce::cli {
namespace {

// A plan is a few lines per fault kind; a file far larger than any plan is refused before it is read.
constexpr std::uint64_t kPlanBytesMax = std::uint64_t{16} << 20U;

}  // namespace

Result<faults::Plan, std::string> load_plan(const std::string& name_or_path) {
  if (std::optional<faults::Plan> builtin = faults::builtin_plan(name_or_path)) return *builtin;
  std::error_code error;
  if (!std::filesystem::exists(name_or_path, error)) {
    return "fault plan '" + name_or_path + "' is neither a built-in plan (none, default, all) nor a plan file";
  }
  Result<std::string, FileError> text = read_whole_file(name_or_path, kPlanBytesMax, "fault plan");
  if (!text.ok()) return text.error().message;
  Result<faults::Plan, faults::PlanError> plan = faults::parse_plan(text.value());
  if (!plan.ok()) {
    // The message begins "line N: " and may quote the file's words, shown through printable().
    return "fault plan '" + name_or_path + "', " + printable(plan.error().message);
  }
  return plan.value();
}

}  // namespace quiesce::cli
