// What the rapidcheck models share: the recorded simulator stack they run on, and writing a failing case as
// a trace that `quiesce replay` re-executes.
//
// Every model runs on properties::RecordedSimStack (Recorder<Validator<Injector<sim::Device>>>). A passing
// case records into a sink that keeps nothing; when a case fails, the property runs the same command list
// once more, from the same seed, into a traces::BinaryWriter, and writes the trace to
//   $QUIESCE_MODEL_TRACE_DIR/<name>.qtrace   (the test's working directory when the variable is unset)
// overwriting the file of the previous failing candidate. rapidcheck's last failing run is its shrunk
// counterexample, so the file left is the shrunk case; its path and replay command go into the counterexample's
// log. Because the first run and the recorded one build the same stack type from the same RunConfig, the
// recorded run takes the same path and fails the same way.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "quiesce/core/validator.h"
#include "quiesce/faults/plan.h"
#include "quiesce/properties/recorded_stack.h"
#include "quiesce/properties/replay.h"
#include "quiesce/traces/codec.h"

namespace quiesce::model_support {

// Keeps nothing: a passing case is not worth its trace.
class NullSink final : public traces::TraceSink {
 public:
  void append(const traces::Record&) override {}
};

// The configuration a model case runs under: device, injector and validator, all from `seed`. It is also
// the header of the case's trace, from which a replay rebuilds the same stack.
inline properties::RunConfig model_config(std::uint64_t seed, faults::Plan plan) {
  properties::RunConfig config;
  config.seed = seed;
  config.device.seed = seed;
  plan.seed = seed;
  config.plan = std::move(plan);
  config.validator.mode = ViolationMode::CollectAll;
  config.workload.seed = seed;
  return config;
}

inline std::filesystem::path trace_directory() {
  const char* directory = std::getenv("QUIESCE_MODEL_TRACE_DIR");
  return directory != nullptr && *directory != '\0' ? std::filesystem::path(directory)
                                                    : std::filesystem::current_path();
}

// Runs `run(sink)` once more into a BinaryWriter (a failure it throws is expected and swallowed) and writes
// the trace to trace_directory()/<name>.qtrace. Returns the path, or an empty string when it could not write.
template <class Run>
std::string write_case_trace(const properties::RunConfig& config, const std::string& name, Run&& run) {
  traces::BinaryWriter writer(properties::header_of(config));
  try {
    std::forward<Run>(run)(writer);
  } catch (...) {  // the failure being recorded (an RC_ASSERT or RC_FAIL)
  }
  const std::vector<std::byte> bytes = writer.finish();
  std::error_code error;
  std::filesystem::create_directories(trace_directory(), error);
  const std::filesystem::path path = trace_directory() / (name + ".qtrace");
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  file.close();
  return file ? path.string() : std::string();
}

}  // namespace quiesce::model_support
