// The plan file format of docs/faults.md: one directive per line, '#' starts a comment. A bad line refuses
// the whole file with its line number and a sentence naming the value; to_text writes every field so
// parse_plan(to_text(plan)) == plan.
#include <array>
#include <charconv>
#include <map>
#include <string>
#include <vector>

#include "quiesce/faults/plan.h"

namespace quiesce::faults {
namespace {

constexpr std::size_t kTokensMax = 8;        // the longest directive has 6 words
constexpr std::size_t kPlanLinesMax = 1U << 20U;

struct Alias {
  std::string_view word;
  FaultKind kind;
};

// Short fault names in scripts, resolved by the site: "script free_buffer 7 rejected".
constexpr std::array<Alias, 17> kAliases = {{
    {"rejected", FaultKind::SubmitRejected},      {"rejected", FaultKind::ReleaseRejected},
    {"timeout", FaultKind::AdmissionTimeout},     {"indeterminate", FaultKind::SubmitIndeterminate},
    {"indeterminate", FaultKind::PollIndeterminate}, {"indeterminate", FaultKind::WaitIndeterminate},
    {"indeterminate", FaultKind::ReleaseIndeterminate}, {"partial", FaultKind::PartialSubmit},
    {"partial", FaultKind::PartialWrite},         {"partial", FaultKind::PartialRead},
    {"delayed", FaultKind::DelayedCompletion},    {"failed", FaultKind::AsyncLaunchFailure},
    {"failed", FaultKind::AllocationFailure},     {"failed", FaultKind::ProgramLoadFailure},
    {"lost", FaultKind::CancelLost},              {"lost", FaultKind::DeviceLost},
    {"oom", FaultKind::AllocationFailure},
}};

class LineParser {
 public:
  LineParser(std::uint32_t line, std::vector<std::string_view> words) : line_(line), words_(std::move(words)) {}

  PlanError fail(const std::string& sentence) const {
    return PlanError{line_, "line " + std::to_string(line_) + ": " + sentence};
  }
  std::size_t size() const { return words_.size(); }
  std::string_view word(std::size_t index) const { return words_[index]; }

  Result<std::uint64_t, PlanError> number(std::size_t index, std::string_view what) const {
    const std::string_view text = words_[index];
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size()) {
      return fail(std::string(what) + " '" + std::string(text) + "' is not an unsigned integer.");
    }
    return value;
  }

  Result<bool, PlanError> switch_word(std::size_t index) const {
    if (words_[index] == "on") return true;
    if (words_[index] == "off") return false;
    return fail("'" + std::string(words_[index]) + "' is neither 'on' nor 'off'.");
  }

  Result<Ratio, PlanError> ratio(std::size_t index, std::string_view kind_name) const {
    const std::string_view text = words_[index];
    const std::size_t slash = text.find('/');
    if (slash == std::string_view::npos) {
      return fail("the rate '" + std::string(text) + "' of " + std::string(kind_name) +
                  " is not an integer ratio like 1/50.");
    }
    Ratio rate;
    const char* const begin = text.data();
    const auto [numerator_end, numerator_error] = std::from_chars(begin, begin + slash, rate.numerator);
    const auto [denominator_end, denominator_error] =
        std::from_chars(begin + slash + 1, begin + text.size(), rate.denominator);
    if (numerator_error != std::errc{} || numerator_end != begin + slash || denominator_error != std::errc{} ||
        denominator_end != begin + text.size()) {
      return fail("the rate '" + std::string(text) + "' of " + std::string(kind_name) +
                  " is not an integer ratio like 1/50.");
    }
    if (rate.denominator == 0) return fail("the rate '" + std::string(text) + "' has a zero denominator.");
    if (rate.numerator > rate.denominator) {
      return fail("the rate '" + std::string(text) + "' of " + std::string(kind_name) +
                  " is above 1: the numerator must not exceed the denominator.");
    }
    return rate;
  }

  Result<Site, PlanError> site(std::size_t index) const {
    if (const auto found = site_from_string(words_[index])) return *found;
    return fail("'" + std::string(words_[index]) + "' is not a backend method (a site such as free_buffer).");
  }

  Result<FaultKind, PlanError> kind(std::size_t index) const {
    if (const auto found = fault_kind_from_string(words_[index])) return *found;
    return fail("'" + std::string(words_[index]) + "' is not a fault kind of the catalog in docs/faults.md.");
  }

  // A fault kind or a short alias ("rejected") for `site`; it must be a fault the site can tell.
  Result<FaultKind, PlanError> kind_at(std::size_t index, Site at) const {
    const std::string_view text = words_[index];
    if (const auto found = fault_kind_from_string(text)) {
      if (fault_possible_at(*found, at)) return *found;
      return fail("the fault " + std::string(text) + " never happens at " + std::string(to_string(at)) + ".");
    }
    for (const Alias& alias : kAliases) {
      if (alias.word == text && fault_possible_at(alias.kind, at)) return alias.kind;
    }
    return fail("'" + std::string(text) + "' names no fault that can happen at " + std::string(to_string(at)) +
                ".");
  }

 private:
  std::uint32_t line_;
  std::vector<std::string_view> words_;
};

std::optional<CommandKind> command_kind_from_string(std::string_view name) {
  for (std::uint32_t kind = 0; kind < kCommandKindCount; ++kind) {
    if (to_string(static_cast<CommandKind>(kind)) == name) return static_cast<CommandKind>(kind);
  }
  return std::nullopt;
}

void set_bit(std::uint32_t& mask, std::uint32_t bit, bool on) {
  if (on) {
    mask |= 1U << bit;
  } else {
    mask &= ~(1U << bit);
  }
}

// The words of one line, comment stripped; more than kTokensMax words is itself an error.
Result<std::vector<std::string_view>, PlanError> split_words(std::string_view text, std::uint32_t line) {
  const std::size_t comment = text.find('#');
  if (comment != std::string_view::npos) text = text.substr(0, comment);
  std::vector<std::string_view> words;
  std::size_t position = 0;
  while (position < text.size()) {
    while (position < text.size() && (text[position] == ' ' || text[position] == '\t' || text[position] == '\r')) {
      ++position;
    }
    const std::size_t start = position;
    while (position < text.size() && text[position] != ' ' && text[position] != '\t' && text[position] != '\r') {
      ++position;
    }
    if (position == start) break;
    if (words.size() == kTokensMax) {
      return PlanError{line, "line " + std::to_string(line) + ": a directive has at most " +
                                 std::to_string(kTokensMax) + " words."};
    }
    words.push_back(text.substr(start, position - start));
  }
  return words;
}

#define QUIESCE_PLAN_TRY(name, expression)          \
  auto name##_result = (expression);                \
  if (!name##_result.ok()) return name##_result.error(); \
  const auto name = name##_result.value()

std::optional<PlanError> expect_words(const LineParser& parser, std::size_t low, std::size_t high,
                                      std::string_view usage) {
  if (parser.size() >= low && parser.size() <= high) return std::nullopt;
  return parser.fail("'" + std::string(parser.word(0)) + "' expects: " + std::string(usage) + ".");
}

Result<bool, PlanError> apply_script(const LineParser& parser, Plan& plan) {
  if (auto error = expect_words(parser, 4, 5, "script <site> <ordinal from 1> <fault> [parameter]")) return *error;
  QUIESCE_PLAN_TRY(site, parser.site(1));
  QUIESCE_PLAN_TRY(ordinal, parser.number(2, "the ordinal"));
  if (ordinal == 0) return parser.fail("the ordinal of a scripted fault counts from 1; 0 names no call.");
  QUIESCE_PLAN_TRY(kind, parser.kind_at(3, site));
  ScriptedFault scripted{site, ordinal, kind, std::nullopt};
  if (parser.size() == 5) {
    QUIESCE_PLAN_TRY(parameter, parser.number(4, "the parameter"));
    scripted.parameter = parameter;
  }
  plan.script.push_back(scripted);
  return true;
}

Result<bool, PlanError> apply_fault(const LineParser& parser, Plan& plan) {
  if (auto error = expect_words(parser, 6, 6, "fault <call index> <site> <site ordinal> <fault> <parameter>")) {
    return *error;
  }
  QUIESCE_PLAN_TRY(call_index, parser.number(1, "the call index"));
  QUIESCE_PLAN_TRY(site, parser.site(2));
  QUIESCE_PLAN_TRY(ordinal, parser.number(3, "the site ordinal"));
  QUIESCE_PLAN_TRY(kind, parser.kind(4));
  if (!fault_possible_at(kind, site)) {
    return parser.fail("the fault " + std::string(to_string(kind)) + " never happens at " +
                       std::string(to_string(site)) + ".");
  }
  QUIESCE_PLAN_TRY(parameter, parser.number(5, "the parameter"));
  plan.replay_faults.push_back(InjectedFault{call_index, site, ordinal, kind, parameter});
  return true;
}

Result<bool, PlanError> apply_setting(const LineParser& parser, Plan& plan) {
  const std::string_view directive = parser.word(0);
  if (directive == "seed") {
    if (auto error = expect_words(parser, 2, 2, "seed <unsigned integer>")) return *error;
    QUIESCE_PLAN_TRY(seed, parser.number(1, "the seed"));
    plan.seed = seed;
  } else if (directive == "swarm" || directive == "replay") {
    if (auto error = expect_words(parser, 2, 2, std::string(directive) + " on|off")) return *error;
    QUIESCE_PLAN_TRY(on, parser.switch_word(1));
    (directive == "swarm" ? plan.swarm_from_seed : plan.replaying) = on;
  } else if (directive == "delay_polls_max") {
    if (auto error = expect_words(parser, 2, 2, "delay_polls_max <1 to 1000>")) return *error;
    QUIESCE_PLAN_TRY(polls, parser.number(1, "delay_polls_max"));
    if (polls < 1 || polls > kDelayPollsLimit) {
      return parser.fail("delay_polls_max " + std::to_string(polls) + " is outside 1 to " +
                         std::to_string(kDelayPollsLimit) + ".");
    }
    plan.delay_polls_max = static_cast<std::uint32_t>(polls);
  } else if (directive == "fail_site") {
    if (auto error = expect_words(parser, 2, 2, "fail_site <site index from 0>")) return *error;
    QUIESCE_PLAN_TRY(site_index, parser.number(1, "the site index"));
    plan.failing_site = site_index;
  } else {
    return parser.fail("'" + std::string(directive) + "' is not a directive of a fault plan (docs/faults.md).");
  }
  return true;
}

Result<bool, PlanError> apply_switch(const LineParser& parser, Plan& plan) {
  const std::string_view directive = parser.word(0);
  if (directive == "rate") {
    if (auto error = expect_words(parser, 3, 3, "rate <fault> <numerator>/<denominator>")) return *error;
    QUIESCE_PLAN_TRY(kind, parser.kind(1));
    QUIESCE_PLAN_TRY(rate, parser.ratio(2, parser.word(1)));
    plan.set_rate(kind, rate);
    return true;
  }
  if (auto error = expect_words(parser, 3, 3, std::string(directive) + " <name> on|off")) return *error;
  QUIESCE_PLAN_TRY(on, parser.switch_word(2));
  if (directive == "family") {
    const auto family = fault_family_from_string(parser.word(1));
    if (!family) return parser.fail("'" + std::string(parser.word(1)) + "' is not a fault family.");
    set_bit(plan.families_enabled, static_cast<std::uint32_t>(*family), on);
  } else {
    const auto kind = command_kind_from_string(parser.word(1));
    if (!kind) return parser.fail("'" + std::string(parser.word(1)) + "' is not a command kind.");
    set_bit(plan.command_kinds_enabled, static_cast<std::uint32_t>(*kind), on);
  }
  return true;
}

Result<bool, PlanError> apply_line(const LineParser& parser, Plan& plan, bool first_directive) {
  const std::string_view directive = parser.word(0);
  if (directive == "plan") {
    if (!first_directive) return parser.fail("'plan' chooses the starting plan and must be the first directive.");
    if (auto error = expect_words(parser, 2, 2, "plan none|default|all")) return *error;
    const auto builtin = builtin_plan(parser.word(1));
    if (!builtin) return parser.fail("'" + std::string(parser.word(1)) + "' is not a built-in plan (none, default, all).");
    plan = *builtin;
    return true;
  }
  if (directive == "script") return apply_script(parser, plan);
  if (directive == "fault") return apply_fault(parser, plan);
  if (directive == "rate" || directive == "family" || directive == "commands") return apply_switch(parser, plan);
  return apply_setting(parser, plan);
}

// What a line sets, for refusing a second line that sets it again ("seed", "rate device_lost", "script
// submit 3 partial_submit": a script is matched by site, ordinal and kind); empty for a line that may
// repeat (`plan` is first or refused, `fault` lines are a recording). Called after the line applied, so
// its words are known good and a script is the plan's last one.
std::string setting_of(const LineParser& parser, const Plan& plan) {
  const std::string_view directive = parser.word(0);
  if (directive == "plan" || directive == "fault") return {};
  if (directive == "rate" || directive == "family" || directive == "commands") {
    return std::string(directive) + " " + std::string(parser.word(1));
  }
  if (directive == "script") {
    const ScriptedFault& scripted = plan.script.back();
    return "script " + std::string(to_string(scripted.site)) + " " + std::to_string(scripted.ordinal) + " " +
           std::string(to_string(scripted.kind));
  }
  return std::string(directive);
}

}  // namespace

Result<Plan, PlanError> parse_plan(std::string_view text) {
  Plan plan;
  std::map<std::string, std::uint32_t> set_on_line;
  bool first_directive = true;
  std::uint32_t line = 0;
  std::size_t position = 0;
  while (position <= text.size()) {
    if (line == kPlanLinesMax) return PlanError{line, "the plan has more than " + std::to_string(kPlanLinesMax) + " lines."};
    ++line;
    std::size_t end = text.find('\n', position);
    if (end == std::string_view::npos) end = text.size();
    auto words = split_words(text.substr(position, end - position), line);
    position = end + 1;
    if (!words.ok()) return words.error();
    if (words.value().empty()) continue;
    const LineParser parser(line, std::move(words).value());
    const auto applied = apply_line(parser, plan, first_directive);
    if (!applied.ok()) return applied.error();
    first_directive = false;
    std::string setting = setting_of(parser, plan);
    if (setting.empty()) continue;
    const auto [earlier, first] = set_on_line.emplace(std::move(setting), line);
    if (!first) {
      return parser.fail("'" + earlier->first + "' is set again; line " + std::to_string(earlier->second) +
                         " set it already (a plan sets each setting once).");
    }
  }
  return plan;
}

std::string to_text(const Plan& plan) {
  std::string text = "# quiesce fault plan (format: docs/faults.md)\n";
  text += "seed " + std::to_string(plan.seed) + "\n";
  text += std::string("swarm ") + (plan.swarm_from_seed ? "on" : "off") + "\n";
  text += "delay_polls_max " + std::to_string(plan.delay_polls_max) + "\n";
  for (std::uint32_t kind = 0; kind < kFaultKindCount; ++kind) {
    const Ratio rate = plan.rates[kind];
    text += "rate " + std::string(to_string(static_cast<FaultKind>(kind))) + " " + std::to_string(rate.numerator) +
            "/" + std::to_string(rate.denominator) + "\n";
  }
  for (std::uint32_t family = 0; family < kFaultFamilyCount; ++family) {
    if (!plan.family_enabled(static_cast<FaultFamily>(family))) {
      text += "family " + std::string(to_string(static_cast<FaultFamily>(family))) + " off\n";
    }
  }
  for (std::uint32_t kind = 0; kind < kCommandKindCount; ++kind) {
    if (!plan.command_kind_enabled(static_cast<CommandKind>(kind))) {
      text += "commands " + std::string(to_string(static_cast<CommandKind>(kind))) + " off\n";
    }
  }
  for (const ScriptedFault& scripted : plan.script) {
    text += "script " + std::string(to_string(scripted.site)) + " " + std::to_string(scripted.ordinal) + " " +
            std::string(to_string(scripted.kind));
    if (scripted.parameter) text += " " + std::to_string(*scripted.parameter);
    text += "\n";
  }
  if (plan.failing_site) text += "fail_site " + std::to_string(*plan.failing_site) + "\n";
  text += std::string("replay ") + (plan.replaying ? "on" : "off") + "\n";
  for (const InjectedFault& fault : plan.replay_faults) {
    text += "fault " + std::to_string(fault.call_index) + " " + std::string(to_string(fault.site)) + " " +
            std::to_string(fault.site_ordinal) + " " + std::string(to_string(fault.kind)) + " " +
            std::to_string(fault.parameter) + "\n";
  }
  return text;
}

}  // namespace quiesce::faults
