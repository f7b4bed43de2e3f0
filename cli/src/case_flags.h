// The flags that quiesce run and quiesce campaign share for a case: what options they name, and the
// quiesce run flags that rerun such a case.
#pragma once

#include <cstdint>
#include <string>

#include "quiesce/core/result.h"
#include "quiesce/properties/cases.h"

namespace quiesce::cli {

struct CaseFlags {
  std::string faults;    // none, default, all, or a plan file
  std::string workload;  // engine or raw
  std::uint32_t operations = 1000;
  bool no_swarm = false;
  std::string mutant;  // a raw-workload or engine mutant's name, or empty
};

// The plan loaded and the mutant's bug planted; a sentence (naming the flag for --mutant) otherwise.
Result<properties::CaseOptions, std::string> case_options_from(const CaseFlags& flags);

// The flags after `quiesce run --seed S` that rerun a case of these flags.
std::string rerun_flags(const CaseFlags& flags);

}  // namespace quiesce::cli
