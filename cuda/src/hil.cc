// `quiesce hil`: genuine faults on the GPU, differential runs against a reference, and the summary.
#include "quiesce/cuda/hil.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <sstream>
#include <optional>

#include "quiesce/core/files.h"
#include "quiesce/core/transaction.h"
#include "quiesce/cuda/errors.h"

namespace quiesce::cuda {
namespace {

constexpr std::uint64_t kWaitNs = 30'000'000'000ULL;
constexpr std::uint64_t kBytes = 4096;

// One context with a queue and a fill program; the genuine-fault checks each use their own.
struct Stage {
  Device* device = nullptr;
  Context context;
  Queue queue;
  Program fill;
  MemoryBudget budget{std::uint64_t{1} << 62};
  std::string failure;  // why the stage could not be built

  explicit Stage(Device& gpu) : device(&gpu) {
    auto created = gpu.create_context(ContextDesc{});
    if (!created.ok()) {
      failure = "create_context failed: " + gpu.describe_error(created.error());
      return;
    }
    context = std::move(created).value();
    auto queue_created = gpu.create_queue(context, QueueDesc{});
    auto program = gpu.load_program(context, ArtifactRef{"fill", ArtifactFormat::Builtin, {}, 1U << 20});
    if (!queue_created.ok() || !program.ok()) {
      failure = "create_queue or load_program failed";
      return;
    }
    queue = std::move(queue_created).value();
    fill = std::move(program).value();
  }
  Buffer allocate(std::uint64_t bytes) {
    ResourceTransaction<Device> transaction(*device, context, budget, 1);
    if (!transaction.allocate(BufferDesc{bytes, kAllBufferUsage}).ok()) return Buffer{};
    return std::move(transaction.commit().front());
  }
  bool write_byte(Buffer& buffer, std::byte value) {
    const std::vector<std::byte> content(kBytes, value);
    const std::array<std::span<const std::byte>, 1> segments = {std::span<const std::byte>(content)};
    return device->write_buffer(buffer, 0, ByteSource{segments}).ok();
  }
  // True when every byte of the buffer equals `value`.
  bool holds(const Buffer& buffer, std::byte value) {
    std::vector<std::byte> sink(kBytes);
    const std::array<std::span<std::byte>, 1> segments = {std::span<std::byte>(sink)};
    if (!device->read_buffer(buffer, 0, ByteSink{segments}).ok()) return false;
    return std::all_of(sink.begin(), sink.end(), [&](std::byte b) { return b == value; });
  }
  // Releases everything; a lost context is discarded whole instead.
  void close(std::vector<Buffer>& buffers) {
    if (!context.valid()) return;
    if (device->context_lost(context)) {
      buffers.clear();
      (void)device->discard_context(std::move(context));
      return;
    }
    for (Buffer& buffer : buffers) (void)device->free_buffer(std::move(buffer));
    buffers.clear();
    (void)device->unload_program(std::move(fill));
    (void)device->destroy_queue(std::move(queue));
    (void)device->destroy_context(std::move(context));
  }
};

LaunchDims fill_dims(std::uint32_t block) {
  LaunchDims dims;
  dims.grid_x = 4;
  dims.block_x = block;
  return dims;
}

CheckResult genuine_out_of_memory(Device& device) {
  CheckResult check{"genuine out-of-memory allocation", false, {}};
  Stage stage(device);
  if (!stage.failure.empty()) return CheckResult{check.name, false, stage.failure};
  const std::uint64_t request = device.device_info()->limits.memory_bytes * 2;
  MemoryBudget budget(UINT64_MAX);
  std::vector<Buffer> none;
  {
    ResourceTransaction<Device> transaction(device, stage.context, budget, 1);
    const Result<BufferRef> staged = transaction.allocate(BufferDesc{request, kAllBufferUsage});
    const bool oom = !staged.ok() && staged.error().kind == ErrorKind::OutOfMemory &&
                     staged.error().native_code == CUDA_ERROR_OUT_OF_MEMORY;
    const bool nothing_kept = device.memory_usage(stage.context).ok() && device.memory_usage(stage.context)->allocations == 0;
    Buffer after = stage.allocate(kBytes);
    check.passed = oom && nothing_kept && after.valid() && !device.context_lost(stage.context);
    check.detail = "cuMemAlloc of " + std::to_string(request) + " bytes answered " +
                   (staged.ok() ? std::string("success") : device.describe_error(staged.error())) +
                   (nothing_kept ? "; nothing was retained" : "; the ledger changed") +
                   (after.valid() ? "; a 4 KiB allocation afterwards worked" : "; a 4 KiB allocation afterwards failed");
    none.push_back(std::move(after));
  }
  stage.close(none);
  return check;
}

// [fill A, invalid launch, fill B] must be Indeterminate with an event for the prefix; [invalid, fill] Rejected.
std::vector<CheckResult> genuine_partial_submit(Device& device) {
  std::vector<CheckResult> checks;
  Stage stage(device);
  if (!stage.failure.empty()) return {CheckResult{"genuine partial submit", false, stage.failure}};
  std::vector<Buffer> buffers;
  buffers.push_back(stage.allocate(kBytes));
  buffers.push_back(stage.allocate(kBytes));
  const bool ready = buffers[0].valid() && buffers[1].valid() && stage.write_byte(buffers[0], std::byte{0}) &&
                     stage.write_byte(buffers[1], std::byte{0});
  const std::array<Binding, 1> first = {Binding{buffers[0].ref(), Access::Write}};
  const std::array<Binding, 1> second = {Binding{buffers[1].ref(), Access::Write}};
  const std::array<std::byte, 4> value = {std::byte{7}, std::byte{7}, std::byte{7}, std::byte{7}};
  const std::uint32_t too_many_threads = device.device_info()->limits.launch_threads_max * 4;
  const std::array<Command, 3> batch = {Command::launch(stage.fill.ref(), fill_dims(256), first, value),
                                        Command::launch(stage.fill.ref(), fill_dims(too_many_threads), second, value),
                                        Command::launch(stage.fill.ref(), fill_dims(256), second, value)};
  SubmitResult submitted = device.submit(stage.queue, batch, {});
  CheckResult partial{"genuine partial submit (invalid launch as command 2 of 3)", false, {}};
  partial.detail = "submit was " + std::string(to_string(submitted.status)) + " with " +
                   std::to_string(submitted.commands_enqueued) + " command(s) enqueued (" +
                   device.describe_error(submitted.error) + ")";
  if (ready && submitted.status == SubmitStatus::Indeterminate && submitted.commands_enqueued == 1 &&
      submitted.event.valid()) {
    const WaitResult waited = device.wait_event(submitted.event, kWaitNs);
    const bool quiescent = waited.ok() && waited->state == EventState::FailedButQuiescent;
    const bool prefix_ran = stage.holds(buffers[0], std::byte{7});
    const bool rest_did_not = stage.holds(buffers[1], std::byte{0});
    partial.passed = quiescent && prefix_ran && rest_did_not && !device.context_lost(stage.context);
    partial.detail += std::string("; the event ended ") + std::string(waited.ok() ? to_string(waited->state) : "indeterminate") +
                      (prefix_ran ? "; the prefix ran" : "; the prefix did NOT run") +
                      (rest_did_not ? "; nothing after the failure ran" : "; work after the failure ran");
    (void)device.destroy_event(std::move(submitted.event));
  }
  checks.push_back(partial);

  const std::array<Command, 2> first_invalid = {
      Command::launch(stage.fill.ref(), fill_dims(too_many_threads), second, value),
      Command::launch(stage.fill.ref(), fill_dims(256), second, value)};
  SubmitResult refused = device.submit(stage.queue, first_invalid, {});
  const bool rejected = refused.status == SubmitStatus::Rejected && !refused.event.valid();
  const bool synced = device.synchronize(stage.queue, kWaitNs).ok();
  const bool untouched = stage.holds(buffers[1], std::byte{0});
  checks.push_back(CheckResult{"genuine rejected submit (invalid launch first)", rejected && synced && untouched,
                               "submit was " + std::string(to_string(refused.status)) + " (" +
                                   device.describe_error(refused.error) + ")" +
                                   (untouched ? "; nothing ran" : "; the batch's later command ran")});
  if (refused.event.valid()) (void)device.wait_event(refused.event, kWaitNs);
  stage.close(buffers);
  return checks;
}

}  // namespace

// The illegal-address kernel: a sticky fault. The context must fail closed and its releases be
// indeterminate. Then a new context is tried in the same process: on the H200 with driver 580.159.04 the
// fault turned out to be process-wide (cuCtxCreate answers CUDA_ERROR_ILLEGAL_ADDRESS), so that outcome is
// reported, not required; recovery is checked in a fresh process by sticky_fault_check().
CheckResult sticky_fault_scenario(Device& device) {
  CheckResult check{"genuine sticky fault (illegal address): the context fails closed", false, {}};
  std::vector<Buffer> buffers;
  Stage stage(device);
  if (!stage.failure.empty()) return CheckResult{check.name, false, stage.failure};
  auto fault = device.load_program(stage.context, ArtifactRef{"fault", ArtifactFormat::Builtin, {}, 1U << 20});
  buffers.push_back(stage.allocate(kBytes));
  if (!fault.ok() || !buffers[0].valid()) return CheckResult{check.name, false, "could not load the fault kernel"};
  const std::array<Binding, 1> binding = {Binding{buffers[0].ref(), Access::Read}};
  const std::array<Command, 1> batch = {Command::launch(fault->ref(), fill_dims(1), binding, {})};
  SubmitResult submitted = device.submit(stage.queue, batch, {});
  const WaitResult waited = device.wait_event(submitted.event, kWaitNs);
  const bool lost = !waited.ok() && waited.error().error.kind == ErrorKind::DeviceLost && device.context_lost(stage.context);
  const bool poll_indeterminate = device.poll_event(submitted.event).state == EventState::Indeterminate;
  const SubmitResult again = device.submit(stage.queue, batch, {});
  const bool fails_closed = again.status == SubmitStatus::Rejected && again.error.kind == ErrorKind::DeviceLost;
  const ReleaseResult<Buffer> freed = device.free_buffer(std::move(buffers[0]));
  const bool release_indeterminate = freed.status == ReleaseStatus::Indeterminate;
  check.detail = "the faulting batch's wait answered " +
                 (waited.ok() ? std::string(to_string(waited->state)) : device.describe_error(waited.error().error)) +
                 (poll_indeterminate ? "; a poll was indeterminate" : "; a poll was NOT indeterminate") +
                 (fails_closed ? "; a later submit was refused with DeviceLost" : "; a later submit was NOT refused") +
                 (release_indeterminate ? "; a release was indeterminate" : "; a release was not indeterminate");
  check.passed = lost && poll_indeterminate && fails_closed && release_indeterminate;
  buffers.clear();
  stage.close(buffers);  // discards the lost context

  auto in_process = device.create_context(ContextDesc{});
  if (in_process.ok()) {
    check.detail += "; a new context in the same process was created";
    (void)device.destroy_context(std::move(in_process).value());
  } else {
    check.detail += "; a new context in the same process was refused (" + device.describe_error(in_process.error()) +
                    "): the fault is process-wide";
  }
  return check;
}

namespace {

// Runs `scenario` on a device of its own in a forked child and returns the child's verdict. The child
// never returns: it writes one line (pass flag, detail) and _exits, its CUDA state poisoned on purpose.
CheckResult run_in_child(const std::string& name, int ordinal, CheckResult (*scenario)(Device&)) {
  int channel[2];
  if (pipe(channel) != 0) return CheckResult{name, false, "pipe() failed"};
  const pid_t child = fork();
  if (child < 0) return CheckResult{name, false, "fork() failed"};
  if (child == 0) {
    close(channel[0]);
    DeviceOptions options;
    options.ordinal = ordinal;
    auto device = Device::open(options);
    const CheckResult verdict = device.ok() ? scenario(*device) : CheckResult{name, false, device.error().message()};
    const std::string line = std::string(verdict.passed ? "1" : "0") + verdict.detail;
    (void)!write(channel[1], line.data(), line.size());
    close(channel[1]);
    _exit(0);  // no destructors, no atexit
  }
  close(channel[1]);
  std::string report;
  char chunk[512];
  // Bounded: the child writes once and exits; read() returns 0 at its exit (or when it dies).
  for (int reads = 0; reads < 1024; ++reads) {
    const ssize_t got = read(channel[0], chunk, sizeof(chunk));
    if (got <= 0) break;
    report.append(chunk, static_cast<std::size_t>(got));
  }
  close(channel[0]);
  int status = 0;
  (void)waitpid(child, &status, 0);
  if (report.empty()) return CheckResult{name, false, "the child process reported nothing (status " + std::to_string(status) + ")"};
  return CheckResult{name, report[0] == '1', "child: " + report.substr(1)};
}

// Recovery of the raw backend in this (fresh) process: a new context must run a fill correctly.
bool raw_recovery(Device& device) {
  Stage fresh(device);
  std::vector<Buffer> buffers;
  buffers.push_back(fresh.allocate(kBytes));
  bool recovered = fresh.failure.empty() && buffers[0].valid();
  if (recovered) {
    const std::array<Binding, 1> binding = {Binding{buffers[0].ref(), Access::Write}};
    const std::array<std::byte, 4> value = {std::byte{3}, std::byte{3}, std::byte{3}, std::byte{3}};
    const std::array<Command, 1> batch = {Command::launch(fresh.fill.ref(), fill_dims(256), binding, value)};
    SubmitResult submitted = device.submit(fresh.queue, batch, {});
    const WaitResult waited = device.wait_event(submitted.event, kWaitNs);
    recovered = waited.ok() && waited->state == EventState::Complete && fresh.holds(buffers[0], std::byte{3});
    if (submitted.event.valid()) (void)device.destroy_event(std::move(submitted.event));
  }
  fresh.close(buffers);
  return recovered;
}

const char* const kStickyName = "genuine sticky fault in a child process, recovery in a fresh process";
const char* const kEngineStickyName =
    "engine over cuda::Device: genuine sticky fault in a child process (quarantined, reported), a fresh "
    "engine in a fresh process completes the work";

}  // namespace

std::vector<CheckResult> sticky_fault_checks(int ordinal, bool engine) {
  if (Driver::initialised_in_this_process()) {
    const std::string why = "not run: this process had already initialised CUDA before the check, and a forked "
                            "child cannot use CUDA then (run it first, in a fresh process)";
    std::vector<CheckResult> refused = {CheckResult{kStickyName, false, why}};
    if (engine) refused.push_back(CheckResult{kEngineStickyName, false, why});
    return refused;
  }
  // Every child first: once this process initialises CUDA (for the recoveries), it can fork no more.
  std::vector<CheckResult> checks;
  checks.push_back(run_in_child(kStickyName, ordinal, &sticky_fault_scenario));
  if (engine) checks.push_back(run_in_child(kEngineStickyName, ordinal, &engine_sticky_fault_scenario));

  // Recovery: this process never faulted, so it is the fresh process.
  DeviceOptions options;
  options.ordinal = ordinal;
  auto device = Device::open(options);
  const bool raw = device.ok() && raw_recovery(*device);
  checks[0].detail += raw ? "; parent (a fresh process): a new context ran a fill correctly"
                          : "; parent (a fresh process): a new context did NOT work";
  checks[0].passed = checks[0].passed && raw;
  if (engine) {
    const CheckResult fresh = device.ok() ? engine_recovery_check(*device)
                                          : CheckResult{kEngineStickyName, false, device.error().message()};
    checks[1].detail += "; parent (a fresh process), a fresh engine: " + fresh.detail;
    checks[1].passed = checks[1].passed && fresh.passed;
  }
  return checks;
}

CheckResult sticky_fault_check(int ordinal) { return sticky_fault_checks(ordinal, false).front(); }

namespace {

void print(std::ostream& out, std::ostream& err, const CheckResult& check, bool& all_passed) {
  out << (check.passed ? "PASS  " : "FAIL  ") << check.name << ": " << check.detail << '\n';
  if (!check.passed) err << "hil check failed: " << check.name << ": " << check.detail << '\n';
  all_passed = all_passed && check.passed;
}

}  // namespace

std::vector<CheckResult> real_fault_checks(Device& device) {
  std::vector<CheckResult> checks;
  checks.push_back(genuine_out_of_memory(device));
  for (CheckResult& check : genuine_partial_submit(device)) checks.push_back(std::move(check));
  return checks;
}

CheckResult differential_check(Device& device, const Script& script,
                               const std::function<ScriptLog(const Script&)>& reference) {
  const std::string name = "differential seed " + std::to_string(script.options.seed);
  const ScriptLog gpu = run_script(device, script);
  const ScriptLog simulated = reference(script);
  const std::vector<std::string> divergences = compare_logs(simulated, gpu);
  std::size_t reads = 0;
  for (const ScriptRecord& record : gpu.records) reads += record.bytes.empty() ? 0 : 1;
  if (divergences.empty()) {
    return CheckResult{name, gpu.setup_failure.empty(),
                       std::to_string(gpu.records.size()) + " observations (" + std::to_string(reads) +
                           " reads) identical on the GPU and the reference" +
                           (gpu.setup_failure.empty() ? "" : "; but the run failed to start: " + gpu.setup_failure)};
  }
  std::string detail = std::to_string(divergences.size()) + " divergence(s) (reference vs GPU):";
  for (const std::string& divergence : divergences) detail += "\n      " + divergence;
  return CheckResult{name, false, detail};
}

namespace {

// The prediction part: a profile (loaded or calibrated now), the simulator's times with it, the GPU's. A
// calibration that could not be written sets write_failed.
void prediction_part(const HilOptions& options, Device& device, std::ostream& out, std::ostream& err, bool& all_passed,
                     bool& write_failed) {
  std::string profile;
  if (!options.cost_profile_in.empty()) {
    profile = options.cost_profile_text;  // read up front by hil_command
    out << "   cost profile: " << options.cost_profile_in << '\n';
  } else {
    Result<std::string, CalibrationError> calibrated = calibrate(device);
    if (!calibrated.ok()) {
      print(out, err, CheckResult{"prediction report", false, calibrated.error().reason}, all_passed);
      return;
    }
    profile = std::move(calibrated).value();
    if (!options.calibrate_out.empty()) {
      const Result<void, FileError> written = write_file_atomically(options.calibrate_out, profile, "cost profile");
      if (written.ok()) {
        out << "   cost profile: calibrated now, written to " << options.calibrate_out << '\n';
      } else {
        out << "   cost profile: calibrated now, NOT written: " << written.error().message << '\n';
        err << "hil: " << written.error().message << '\n';
        write_failed = true;
      }
    } else {
      out << "   cost profile: calibrated now\n";
    }
    out << profile;
  }
  Result<std::vector<ClassTiming>, std::string> predicted = options.predict(profile);
  if (!predicted.ok()) {
    print(out, err, CheckResult{"prediction report", false, "the simulator refused the profile: " + predicted.error()},
          all_passed);
    return;
  }
  const std::vector<ClassTiming> measured = time_command_classes(device, [] { return host_now_ns(); });
  const std::uint64_t worst = prediction_report(*predicted, measured, out);
  bool complete = true;
  for (const ClassTiming& timing : measured) complete = complete && timing.failure.empty();
  for (const ClassTiming& timing : *predicted) complete = complete && timing.failure.empty();
  // A report, not a pass/fail on accuracy: it fails only when a probe could not run on either side.
  print(out, err,
        CheckResult{"prediction report", complete,
                    std::to_string(measured.size()) + " command classes timed on both sides; largest error " +
                        std::to_string(worst) + "%"},
        all_passed);
}

// The files hil_command reads and writes, checked before anything touches the GPU: the cost profile is
// read into options.cost_profile_text, and the calibration's path must be able to take a file. An empty
// string, or the sentence that says why not.
std::string check_files(HilOptions& options) {
  if (!options.calibrate_out.empty()) {
    const Result<void, FileError> writable = check_writable(options.calibrate_out, "cost profile");
    if (!writable.ok()) return writable.error().message;
  }
  if (!options.cost_profile_in.empty() && options.cost_profile_text.empty()) {
    Result<std::string, FileError> text =
        read_whole_file(options.cost_profile_in, kCostProfileBytesMax, "cost profile");
    if (!text.ok()) return text.error().message;
    options.cost_profile_text = std::move(text).value();
  }
  return {};
}

}  // namespace

int hil_command(const HilOptions& given, std::ostream& out, std::ostream& err) {
  HilOptions options = given;
  if (const std::string problem = check_files(options); !problem.empty()) {
    err << "hil: " << problem << '\n';
    return kExitBadInput;
  }
  bool write_failed = false;
  // First, before this process touches the GPU: a forked child may use CUDA only if its parent has not.
  // Without a driver the child says so, and so does the open below.
  std::vector<CheckResult> sticky;
  if (options.real_faults) sticky = sticky_fault_checks(options.ordinal, options.engine_sticky);
  DeviceOptions device_options;
  device_options.ordinal = options.ordinal;
  auto opened = Device::open(device_options);
  if (!opened.ok()) {
    err << opened.error().message() << '\n';
    return kExitNoDriver;
  }
  Device& device = opened.value();
  const DeviceInfo info = device.device_info().value();
  const int version = device.driver().driver_version();
  out << "quiesce hil on " << info.name << " (compute " << info.compute_major << '.' << info.compute_minor
      << ", CUDA driver " << version / 1000 << '.' << version % 1000 / 10 << ")\n";
  bool all_passed = true;

  out << "-- conformance suite on cuda::Device and Validator<Injector<cuda::Device>>\n";
  if (!options.conformance) {
    out << "NOT RUN  conformance suite: none was supplied\n";
  } else {
    for (const CheckResult& check : options.conformance(options.ordinal, out)) print(out, err, check, all_passed);
  }
  out << "-- differential runs\n";
  if (!options.reference) {
    out << "NOT RUN  differential: no reference backend was supplied\n";
  } else {
    std::uint32_t identical = 0;
    for (std::uint32_t run = 0; run < options.differential_runs; ++run) {
      ScriptOptions script_options = options.script;
      script_options.seed = options.seed + run;
      const CheckResult check = differential_check(device, generate_script(script_options), options.reference);
      identical += check.passed ? 1 : 0;
      print(out, err, check, all_passed);
    }
    if (options.differential_runs != 0) {
      out << "   differential: " << identical << " of " << options.differential_runs << " seeds (" << options.seed
          << " to " << options.seed + options.differential_runs - 1 << ") identical on the GPU and the reference\n";
    }
  }
  out << "-- fault campaign through Validator<Injector<cuda::Device>>\n";
  if (!options.fault_campaign) {
    out << "NOT RUN  fault campaign: none was supplied\n";
  } else {
    for (const CheckResult& check : options.fault_campaign(options.ordinal, out)) print(out, err, check, all_passed);
  }
  out << "-- fault campaign on the engine: Engine over Validator<Injector<cuda::Device>>\n";
  if (!options.engine_campaign) {
    out << "NOT RUN  engine fault campaign: none was supplied\n";
  } else {
    for (const CheckResult& check : options.engine_campaign(options.ordinal, out)) print(out, err, check, all_passed);
  }
  if (options.real_faults) {
    out << "-- genuine faults\n";
    for (const CheckResult& check : real_fault_checks(device)) print(out, err, check, all_passed);
    for (const CheckResult& check : sticky) print(out, err, check, all_passed);
  }
  out << "-- prediction: the simulator with the calibrated cost profile against the GPU, per command class\n";
  if (!options.prediction) {
    out << "NOT RUN  prediction report: switched off\n";
  } else if (!options.predict) {
    out << "NOT RUN  prediction report: no simulator was supplied\n";
  } else {
    prediction_part(options, device, out, err, all_passed, write_failed);
  }
  if (options.calibrate_out.empty() || !options.cost_profile_in.empty() || !options.prediction || !options.predict) {
    if (!options.calibrate_out.empty()) {
      out << "-- calibration\n";
      const int calibrated = calibrate_command(options.calibrate_out, out, err);
      write_failed = write_failed || calibrated == kExitBadInput;
      all_passed = all_passed && (calibrated == kExitOk || calibrated == kExitBadInput);
    }
  }
  out << (all_passed ? "hil: every check passed\n" : "hil: a check FAILED\n");
  // A failed check outranks an unwritten calibration: the verdict on the GPU is the news.
  if (!all_passed) return kExitCheckFailed;
  if (write_failed) {
    out << "hil: but the cost profile could not be written to " << options.calibrate_out << '\n';
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace quiesce::cuda
