// Hardware-in-loop validation (`quiesce hil`) and calibration (`quiesce calibrate`) on a real GPU.
//
// hil_command runs, in order: the sticky faults (raw, and under the engine), each in a forked child before
// this process touches CUDA; the conformance suite (cuda::Device and Validator<faults::Injector<cuda::Device>>);
// differential runs (seeded scripts on the GPU and on a reference backend, every read and terminal
// compared); the fault campaigns of the raw workload and of the engine; the genuine faults that leave the
// process usable (an out-of-memory allocation, a partial submit from an invalid launch in the middle of a
// batch, a rejected submit from an invalid first launch) with the sticky faults' verdicts; the prediction
// report; and an optional calibration. cuda/ depends on core only, so the parts that need other modules
// come in as functions from the caller (the quiesce command, tests/hil): `conformance` runs the suite of
// tests/conformance (its runner, conformance_runner.h), `reference` runs a script on sim::Device,
// `fault_campaign` and `engine_campaign` run Validator<faults::Injector<cuda::Device>>, `predict` the
// simulator. A part whose function is absent is reported as not run, never as passed.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "quiesce/cuda/device.h"
#include "quiesce/cuda/differential.h"
#include "quiesce/cuda/info.h"
#include "quiesce/cuda/prediction.h"

namespace quiesce::cuda {

// One named check and its verdict; `detail` says what was seen (a sentence), pass or fail.
struct CheckResult {
  std::string name;
  bool passed = false;
  std::string detail;
};

struct HilOptions {
  int ordinal = 0;
  std::uint64_t seed = 20261202;
  // The conformance suite on cuda::Device and Validator<faults::Injector<cuda::Device>>, one check with the
  // counts; it prints the cases that failed or were skipped to `log`. Absent: not run.
  std::function<std::vector<CheckResult>(int ordinal, std::ostream& log)> conformance;
  std::uint32_t differential_runs = 8;     // scripts with seeds seed, seed + 1, ...
  ScriptOptions script = {};               // its seed is replaced per run
  // The reference side of each differential run (the simulator). Absent: the differential is not run.
  std::function<ScriptLog(const Script&)> reference;
  // The fault campaign through Validator<Injector<cuda::Device>>, given the ordinal. Absent: not run.
  std::function<std::vector<CheckResult>(int ordinal, std::ostream& log)> fault_campaign;
  // The fault campaign on the engine: Engine over Validator<Injector<cuda::Device>>. Absent: not run.
  std::function<std::vector<CheckResult>(int ordinal, std::ostream& log)> engine_campaign;
  bool real_faults = true;
  bool engine_sticky = true;               // also the sticky fault under the engine (child + fresh process)
  std::string calibrate_out;               // when not empty, calibrate and write the cost profile there
  // The prediction report: the simulator loaded with a cost profile's text times the command-class probes
  // (cuda/prediction.h). Absent: not run. The profile is `cost_profile_in`'s content when given, else a
  // calibration made now (written to calibrate_out when that is given).
  std::function<Result<std::vector<ClassTiming>, std::string>(const std::string& profile_text)> predict;
  std::string cost_profile_in;
  // cost_profile_in's content when the caller has read it already (the quiesce command reads and parses it
  // before anything touches the GPU); empty: hil_command reads cost_profile_in itself, up front.
  std::string cost_profile_text;
  bool prediction = true;
};

// A cost profile is about a dozen short lines; a file far larger is not one.
inline constexpr std::uint64_t kCostProfileBytesMax = 1U << 20U;

// Writes a calibrated cost profile to `path` (atomically: a failed write keeps what was there) and says so
// on `out`; a failure goes to `err`. Returns kExitOk or kExitBadInput.
int write_cost_profile(const std::string& path, const std::string& profile, std::ostream& out, std::ostream& err);

// Exit status: kExitOk (0) every check passed, kExitCheckFailed (1) one failed, kExitBadInput (2) an
// unusable --calibrate path or an unreadable cost_profile_in (checked first, before any GPU work), or
// every check passed but the calibration could not be written, kExitNoDriver (3) no driver.
// A summary goes to `out`, one line per check; failures are repeated on `err`.
int hil_command(const HilOptions& options, std::ostream& out, std::ostream& err);

// The genuine faults that leave the process usable, each in a context of its own: out of memory, a partial
// submit, a rejected submit. (The sticky fault is sticky_fault_check, in a process of its own.)
std::vector<CheckResult> real_fault_checks(Device& device);

// The sticky fault on `device`: the illegal-address kernel, then the checks that the context fails closed
// (polls and waits indeterminate, submits refused with DeviceLost, releases indeterminate). It poisons the
// CUDA state of the calling process (the H200 showed it process-wide): call it in a process of its own.
CheckResult sticky_fault_scenario(Device& device);

// sticky_fault_scenario in a forked child, then recovery in this (fresh) process: a new context must run
// work. Must run before this process loads libcuda (a forked child cannot use CUDA after its parent has);
// otherwise it reports that it did not run, as a failure.
CheckResult sticky_fault_check(int ordinal);

// The sticky fault under quiesce::Engine<cuda::Device, RealEnv>: work completes, then the illegal-address
// kernel; the engine must see the loss, surface the failure exactly once (as a device loss), discard what
// the lost context held and account for every resource at shutdown. It also tries the engine's in-process
// recovery and reports the answer. Poisons the calling process, like sticky_fault_scenario.
CheckResult engine_sticky_fault_scenario(Device& device);
// A fresh engine on `device` runs the same work (fill, cross-queue copy, reads) and shuts down clean.
CheckResult engine_recovery_check(Device& device);

// Every sticky scenario in a forked child of its own (the raw one, and with `engine` the engine's), then
// the recoveries in this fresh process. Same precondition as sticky_fault_check.
std::vector<CheckResult> sticky_fault_checks(int ordinal, bool engine);

// One differential run: the script on the GPU and on `reference`, compared.
CheckResult differential_check(Device& device, const Script& script,
                               const std::function<ScriptLog(const Script&)>& reference);

// Measures launch latency, graph node cost, event record and query costs, copy, upload, kernel and memset
// bandwidths, allocation and free costs on the GPU, and returns a cost profile in the simulator's text
// format (`key = value`, `#` comments; sim::load_cost_profile reads it).
struct CalibrationError {
  std::string reason;
};
Result<std::string, CalibrationError> calibrate(Device& device);

// Calibrates GPU 0 and writes the profile to `out_path`. Exit status as hil_command: kExitBadInput for an
// unusable out_path (checked before the driver is opened) or a write that failed.
int calibrate_command(const std::string& out_path, std::ostream& out, std::ostream& err);

}  // namespace quiesce::cuda
