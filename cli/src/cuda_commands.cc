// quiesce info and quiesce calibrate: the CUDA driver, the GPUs, and a cost profile measured on one.
#include <dlfcn.h>

#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "exit_status.h"
#include "quiesce/cuda/hil.h"
#include "quiesce/cuda/info.h"

namespace quiesce::cli {
namespace {

// The allocator this process really runs on (cmake/QuiesceAllocator.cmake): gperftools' tcmalloc names
// itself through tc_version when it is loaded; otherwise malloc is the C library's.
std::string allocator_in_use() {
  using Version = const char* (*)(int*, int*, const char**);
  void* symbol = dlsym(RTLD_DEFAULT, "tc_version");
  if (symbol == nullptr) return "system malloc";
  int major = 0;
  int minor = 0;
  const char* patch = nullptr;
  const char* name = reinterpret_cast<Version>(symbol)(&major, &minor, &patch);
  return std::string("tcmalloc (") + (name != nullptr ? name : "gperftools") + ")";
}

}  // namespace

void add_cuda_commands(CLI::App& app, CommandResult& result) {
  auto backend = std::make_shared<std::string>("sim");
  CLI::App* info = app.add_subcommand("info", "The build, the simulated device, and the CUDA driver and GPUs if any");
  info->add_option("--backend", *backend, "sim, or cuda to require a CUDA driver (exit 3 without one)")
      ->check(CLI::IsMember({"sim", "cuda"}));
  info->callback([backend, &result] {
    std::cout << "quiesce 0.1.0\nallocator: " << allocator_in_use() << " (configured: " << QUIESCE_ALLOCATOR_NAME
              << ")\nsimulated device: available\n";
    const int status = cuda::info_command(std::cout);
    result.status = *backend == "cuda" ? status : kExitHeld;
  });

  auto out_path = std::make_shared<std::string>("cost-profile.txt");
  CLI::App* calibrate = app.add_subcommand("calibrate", "Measure the GPU and write a cost profile for the simulator");
  calibrate->add_option("-o,--output", *out_path, "Where the cost profile goes");
  calibrate->callback([out_path, &result] { result.status = cuda::calibrate_command(*out_path, std::cout, std::cerr); });
}

}  // namespace quiesce::cli
