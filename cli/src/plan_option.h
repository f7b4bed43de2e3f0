// Reading a fault plan named on the command line: a built-in name (none, default, all) or a plan file.
#pragma once

#include <string>

#include "quiesce/core/result.h"
#include "quiesce/faults/plan.h"

namespace quiesce::cli {

// A bad file is refused with its path, the line and the reason.
Result<faults::Plan, std::string> load_plan(const std::string& name_or_path);

}  // namespace quiesce::cli
