// quiesce replay, shrink and trace print|convert|timeline: thin wrappers over traces/ and properties/.
#include <iostream>
#include <memory>

#include "commands.h"
#include "exit_status.h"
#include "quiesce/properties/replay.h"
#include "quiesce/traces/commands.h"

namespace quiesce::cli {

void add_trace_commands(CLI::App& app, CommandResult& result) {
  auto path = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto encoding = std::make_shared<std::string>();  // empty: from the output's name

  CLI::App* replay = app.add_subcommand("replay", "Replay a trace on the simulated device; stop at the first divergence");
  replay->add_option("trace", *path, "The trace file (binary or JSON Lines)")->required();
  replay->callback([path, &result] { result.status = properties::replay_command(*path, std::cout, std::cerr); });

  CLI::App* shrink = app.add_subcommand("shrink", "Minimize a failing trace while the same failure reproduces");
  shrink->add_option("trace", *path, "The failing trace")->required();
  shrink->add_option("-o,--output", *output, "Where the minimal trace goes")->required();
  shrink->callback([path, output, &result] {
    result.status = properties::shrink_command(*path, *output, std::cout, std::cerr);
  });

  CLI::App* trace = app.add_subcommand("trace", "Print, convert or draw a trace");
  trace->require_subcommand(1);
  CLI::App* print = trace->add_subcommand("print", "The header, then one readable line per record");
  print->add_option("trace", *path, "The trace file")->required();
  print->callback([path, &result] { result.status = traces::print_command(*path, std::cout, std::cerr); });

  CLI::App* convert = trace->add_subcommand("convert", "Convert between the binary and JSON Lines encodings");
  convert->add_option("trace", *path, "The input trace")->required();
  convert->add_option("output", *output, "The output trace")->required();
  convert->add_option("--to", *encoding, "binary or jsonl (default: jsonl for a .jsonl or .json output name)")
      ->check(CLI::IsMember({"binary", "jsonl", "json"}));
  convert->callback([path, output, encoding, &result] {
    const traces::Encoding to =
        encoding->empty() ? traces::encoding_for_path(*output) : *traces::encoding_from_string(*encoding);
    result.status = traces::convert_command(*path, *output, to, std::cout, std::cerr);
  });

  CLI::App* timeline = trace->add_subcommand("timeline", "Chrome trace-event JSON that Perfetto opens");
  timeline->add_option("trace", *path, "The input trace")->required();
  timeline->add_option("-o,--output", *output, "The timeline JSON")->required();
  timeline->callback([path, output, &result] {
    result.status = traces::timeline_command(*path, *output, std::cout, std::cerr);
  });
}

}  // namespace quiesce::cli
