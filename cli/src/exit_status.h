// The exit statuses of the quiesce command (DESIGN §8), documented in the README.
#pragma once

namespace quiesce::cli {

enum ExitStatus : int {
  kExitHeld = 0,         // every invariant held
  kExitFailed = 1,       // an invariant failed (the minimal trace is written)
  kExitBadInput = 2,     // bad usage or input
  kExitEnvironment = 3,  // the environment lacks what was asked for (no CUDA driver)
};

}  // namespace quiesce::cli
