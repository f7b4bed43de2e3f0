#include "plan_option.h"

#include <fstream>
#include <sstream>

namespace quiesce::cli {

Result<faults::Plan, std::string> load_plan(const std::string& name_or_path) {
  if (std::optional<faults::Plan> builtin = faults::builtin_plan(name_or_path)) return *builtin;
  std::ifstream file(name_or_path);
  if (!file) {
    return "fault plan '" + name_or_path +
           "' is neither a built-in plan (none, default, all) nor a readable plan file";
  }
  std::ostringstream text;
  text << file.rdbuf();
  Result<faults::Plan, faults::PlanError> plan = faults::parse_plan(text.str());
  if (!plan.ok()) {
    return "fault plan file " + name_or_path + ", line " + std::to_string(plan.error().line) + ": " +
           plan.error().message;
  }
  return plan.value();
}

}  // namespace quiesce::cli
