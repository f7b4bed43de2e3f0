// Campaign reports: JSON (the summary, and the input of `quiesce merge`), JUnit XML, and shard merging.
#include <algorithm>
#include <set>
#include <sstream>

#include "quiesce/properties/campaign.h"

namespace quiesce::properties {
namespace {

std::string xml_escape(std::string_view text) {
  std::string escaped;
  for (const char c : text) {
    switch (c) {
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '&': escaped += "&amp;"; break;
      case '"': escaped += "&quot;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

// A case as JSON; `Json` is nlohmann::json (keys sorted) or nlohmann::ordered_json (keys in the order
// below: the seed and the verdict first, where a reader of a case a line looks).
template <class Json>
Json case_to_json(const CaseResult& result) {
  Json failures = Json::array();
  for (const Failure& failure : result.failures) {
    failures.push_back({{"invariant", invariant_id(failure.invariant)}, {"message", failure.message}});
  }
  Json json = {{"seed", result.seed},
               {"passed", result.passed()},
               {"failures", failures},
               {"digest", result.digest},
               {"operations", result.operations},
               {"violations", result.violations},
               {"findings", result.findings},
               {"probes", result.probes_hit}};
  if (!result.replay_command.empty()) json["replay"] = result.replay_command;
  return json;
}

// Every field of the report but its cases, which to_json and write_json add each in its own way.
nlohmann::json report_head_json(const CampaignReport& report) {
  nlohmann::json shards = nlohmann::json::array();
  for (const Shard& shard : report.shards) shards.push_back({{"index", shard.index}, {"total", shard.total}});
  return {{"format", "quiesce-campaign-1"},
          {"name", report.name},
          {"seeds", {{"first", report.seeds.first}, {"last", report.seeds.last}}},
          {"shards", shards},
          {"cases_total", report.cases.size()},
          {"failures", report.failures()},
          {"probe_hits", report.probe_hits},
          {"probes_expected", report.probes_expected},
          {"probes_never_reached", report.probes_never_reached()}};
}

Result<Invariant, std::string> parse_invariant(const std::string& id) {
  for (std::uint32_t i = 1; i <= kInvariantCount; ++i) {
    if (id == "R" + std::to_string(i)) return static_cast<Invariant>(i);
  }
  return "'" + id + "' is not an invariant id (R1 to R20)";
}

// A JSON value in a message: short, so that a megabyte string does not become the message.
std::string shown(const nlohmann::json& value) {
  std::string text = value.dump();
  return text.size() <= 40 ? text : text.substr(0, 37) + "...";
}

// A parsed "5" is an unsigned number, but a document built in code may hold 5 as a signed one.
bool is_unsigned(const nlohmann::json& value) {
  return value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
}

// Reads the fields of one JSON object of a report. The first problem found is kept, as a sentence that names
// `where` (empty for the report's head) and the field; once there is one, every read returns a default, so
// that a reader checks `problem` once after a group of reads instead of after each.
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string where, std::string& problem)
      : object_(object), where_(std::move(where)), problem_(problem) {
    if (problem_.empty() && !object_.is_object()) {
      problem_ = (where_.empty() ? "the report" : where_) + " is " + shown(object_) + ", not a JSON object";
    }
  }

  std::uint64_t number(const char* key) {
    const nlohmann::json* value = find(key);
    if (value == nullptr) return 0;
    // nlohmann converts -1 or 2.5 to a std::uint64_t without a word: only an integer of at least 0 is one.
    if (!is_unsigned(*value)) {
      fail(key, "is " + shown(*value) + ", not an unsigned integer");
      return 0;
    }
    return value->get<std::uint64_t>();
  }
  std::string text(const char* key) {
    const nlohmann::json* value = find(key);
    if (value == nullptr) return {};
    if (!value->is_string()) {
      fail(key, "is " + shown(*value) + ", not a string");
      return {};
    }
    return value->get<std::string>();
  }
  bool flag(const char* key) {
    const nlohmann::json* value = find(key);
    if (value == nullptr) return false;
    if (!value->is_boolean()) {
      fail(key, "is " + shown(*value) + ", not true or false");
      return false;
    }
    return value->get<bool>();
  }
  std::vector<std::string> texts(const char* key) {
    std::vector<std::string> values;
    for (const nlohmann::json& item : array(key)) {
      if (!item.is_string()) {
        fail(key, "holds " + shown(item) + ", not a string");
        return {};
      }
      values.push_back(item.get<std::string>());
    }
    return values;
  }
  const nlohmann::json& array(const char* key) {
    const nlohmann::json* value = find(key);
    if (value != nullptr && !value->is_array()) fail(key, "is " + shown(*value) + ", not an array");
    return value != nullptr && value->is_array() ? *value : empty();
  }
  const nlohmann::json& object(const char* key) {
    const nlohmann::json* value = find(key);
    if (value != nullptr && !value->is_object()) fail(key, "is " + shown(*value) + ", not an object");
    return value != nullptr && value->is_object() ? *value : empty();
  }
  bool has(const char* key) const { return object_.is_object() && object_.contains(key); }
  void fail(const std::string& key, const std::string& what) {
    if (problem_.empty()) problem_ = prefix() + "field '" + key + "' " + what;
  }

 private:
  const nlohmann::json* find(const char* key) {
    if (!problem_.empty()) return nullptr;
    const auto found = object_.find(key);
    if (found == object_.end()) {
      fail(key, "is missing");
      return nullptr;
    }
    return &*found;
  }
  // What a failed array() or object() read gives: iterating it, as an array or as items(), yields nothing.
  static const nlohmann::json& empty() {
    static const nlohmann::json kEmpty = nlohmann::json::array();
    return kEmpty;
  }
  std::string prefix() const { return where_.empty() ? "" : where_ + ": "; }

  const nlohmann::json& object_;
  std::string where_;
  std::string& problem_;
};

std::string range_text(const SeedRange& range) {
  return std::to_string(range.first) + ".." + std::to_string(range.last);
}

std::string shard_text(const Shard& shard) {
  return "shard " + std::to_string(shard.index) + " of " + std::to_string(shard.total);
}

// The shards of one report: at least one, each with index < total <= kShardsMax, all of one sharding,
// none twice.
Result<std::set<std::uint32_t>, std::string> check_shards(const std::vector<Shard>& shards) {
  if (shards.empty()) return std::string("the report names no shard: field 'shards' is empty");
  std::set<std::uint32_t> indices;
  for (const Shard& shard : shards) {
    if (shard.total == 0 || shard.total > kShardsMax) {
      return shard_text(shard) + ": the total must be 1 to " + std::to_string(kShardsMax);
    }
    if (shard.index >= shard.total) return shard_text(shard) + ": the index is not below the total";
    if (shard.total != shards.front().total) {
      return shard_text(shard) + " and " + shard_text(shards.front()) + " are of different shardings";
    }
    if (!indices.insert(shard.index).second) return shard_text(shard) + " appears twice";
  }
  return indices;
}

// The seeds a report's shards hold, saturating like seeds_in_shard.
std::uint64_t seeds_in_shards(const SeedRange& range, const std::vector<Shard>& shards) {
  std::uint64_t sum = 0;
  for (const Shard& shard : shards) {
    const std::uint64_t count = seeds_in_shard(range, shard);
    sum = count > UINT64_MAX - sum ? UINT64_MAX : sum + count;
  }
  return sum;
}

std::string count_text(std::uint64_t count) { return count == UINT64_MAX ? "2^64" : std::to_string(count); }

// One case of a report; `position` names it while its seed is unknown.
Result<CaseResult, std::string> case_from_json(const nlohmann::json& item, std::size_t position) {
  std::string problem;
  CaseResult result;
  result.seed = Fields(item, "case " + std::to_string(position) + " of field 'cases'", problem).number("seed");
  if (!problem.empty()) return problem;
  const std::string where = "case for seed " + std::to_string(result.seed);
  Fields fields(item, where, problem);
  const bool passed = fields.flag("passed");
  result.digest = fields.number("digest");
  result.operations = fields.number("operations");
  result.violations = fields.number("violations");
  result.findings = fields.number("findings");
  result.probes_hit = fields.texts("probes");
  if (fields.has("replay")) result.replay_command = fields.text("replay");
  std::size_t index = 0;
  for (const nlohmann::json& failure : fields.array("failures")) {
    Fields failure_fields(failure, where + ": failure " + std::to_string(index++), problem);
    const std::string id = failure_fields.text("invariant");
    const std::string message = failure_fields.text("message");
    if (!problem.empty()) return problem;
    auto invariant = parse_invariant(id);
    if (!invariant.ok()) return where + ": " + invariant.error();
    result.failures.push_back({invariant.value(), message});
  }
  if (!problem.empty()) return problem;
  if (passed != result.passed()) {
    return where + ": field 'passed' is " + (passed ? "true" : "false") + " but the case lists " +
           std::to_string(result.failures.size()) + " failures";
  }
  return result;
}

// The head's summary fields against what the cases say.
Result<bool, std::string> check_summary(const CampaignReport& report, Fields& head, std::string& problem) {
  const std::uint64_t cases_total = head.number("cases_total");
  const std::uint64_t failures = head.number("failures");
  std::map<std::string, std::uint64_t> probe_hits;
  for (const auto& [probe, hits] : head.object("probe_hits").items()) {
    if (!is_unsigned(hits)) {
      head.fail("probe_hits", "gives probe '" + probe + "' " + shown(hits) + " hits, not an unsigned integer");
      break;
    }
    probe_hits[probe] = hits.get<std::uint64_t>();
  }
  const std::vector<std::string> never_reached = head.texts("probes_never_reached");
  if (!problem.empty()) return problem;
  if (cases_total != report.cases.size()) {
    return "field 'cases_total' is " + std::to_string(cases_total) + " but the report holds " +
           std::to_string(report.cases.size()) + " cases";
  }
  if (failures != report.failures()) {
    return "field 'failures' is " + std::to_string(failures) + " but " + std::to_string(report.failures()) +
           " of the report's cases failed";
  }
  if (probe_hits != report.probe_hits) {
    return std::string("field 'probe_hits' does not count the probes the cases list");
  }
  if (never_reached != report.probes_never_reached()) {
    return std::string("field 'probes_never_reached' does not match 'probes_expected' and the probes the cases list");
  }
  return true;
}

}  // namespace

nlohmann::json to_json(const CampaignReport& report) {
  nlohmann::json json = report_head_json(report);
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseResult& result : report.cases) cases.push_back(case_to_json<nlohmann::json>(result));
  json["cases"] = std::move(cases);
  return json;
}

void write_json(const CampaignReport& report, std::ostream& out) {
  // The head's fields as dump(2) would print them one level in; a JSON text holds no raw newline inside a
  // string, so indenting after each newline indents lines, never content.
  const auto indented = [](const nlohmann::json& value) {
    std::string text = value.dump(2);
    std::string shifted;
    shifted.reserve(text.size());
    for (const char c : text) {
      shifted += c;
      if (c == '\n') shifted += "  ";
    }
    return shifted;
  };
  const nlohmann::json head = report_head_json(report);
  out << "{\n";
  for (auto field = head.begin(); field != head.end(); ++field) {
    out << "  " << nlohmann::json(field.key()).dump() << ": " << indented(field.value()) << ",\n";
  }
  out << "  \"cases\": [";
  const char* separator = "\n    ";
  for (const CaseResult& result : report.cases) {
    out << separator << case_to_json<nlohmann::ordered_json>(result).dump();
    separator = ",\n    ";
  }
  out << (report.cases.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

Result<CampaignReport, std::string> report_from_json(const nlohmann::json& json) {
  std::string problem;
  Fields head(json, "", problem);
  const std::string format = head.text("format");
  if (!problem.empty()) return problem;
  if (format != "quiesce-campaign-1") return "the report's format is '" + format + "', expected 'quiesce-campaign-1'";
  CampaignReport report;
  report.name = head.text("name");
  Fields seeds(head.object("seeds"), "field 'seeds'", problem);
  report.seeds = {seeds.number("first"), seeds.number("last")};
  std::size_t position = 0;
  for (const nlohmann::json& item : head.array("shards")) {
    Fields shard(item, "shard " + std::to_string(position++) + " of field 'shards'", problem);
    const std::uint64_t index = shard.number("index");
    const std::uint64_t total = shard.number("total");
    if (!problem.empty()) break;
    if (total == 0 || total > kShardsMax || index >= total) {
      return "field 'shards' names shard " + std::to_string(index) + " of " + std::to_string(total) +
             ": the total must be 1 to " + std::to_string(kShardsMax) + " and the index below it";
    }
    report.shards.push_back({static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(total)});
  }
  report.probes_expected = head.texts("probes_expected");
  const nlohmann::json& cases = head.array("cases");
  if (!problem.empty()) return problem;
  if (report.seeds.last < report.seeds.first) {
    return "the seed range " + range_text(report.seeds) + " ends before it starts";
  }
  auto indices = check_shards(report.shards);
  if (!indices.ok()) return indices.error();
  for (const nlohmann::json& item : cases) {
    auto read = case_from_json(item, report.cases.size());
    if (!read.ok()) return read.error();
    CaseResult& result = read.value();
    const std::string where = "case for seed " + std::to_string(result.seed);
    if (result.seed < report.seeds.first || result.seed > report.seeds.last) {
      return where + ": the seed is outside the report's range " + range_text(report.seeds);
    }
    const Shard own{static_cast<std::uint32_t>((result.seed - report.seeds.first) % report.shards.front().total),
                    report.shards.front().total};
    if (indices.value().count(own.index) == 0) {
      return where + ": the seed belongs to " + shard_text(own) + ", which the report does not cover";
    }
    if (!report.cases.empty() && result.seed <= report.cases.back().seed) {
      return where + ": it follows the case for seed " + std::to_string(report.cases.back().seed) +
             "; cases are listed once each, in ascending order of seed";
    }
    for (const std::string& probe : result.probes_hit) report.probe_hits[probe]++;
    report.cases.push_back(std::move(result));
  }
  // Every case is a distinct seed of the report's shards, so the counts are equal only when none is missing.
  if (const std::uint64_t held = seeds_in_shards(report.seeds, report.shards); held != report.cases.size()) {
    return "the report holds " + std::to_string(report.cases.size()) + " cases, but its shards hold " +
           count_text(held) + " seeds of the range " + range_text(report.seeds);
  }
  auto summary = check_summary(report, head, problem);
  if (!summary.ok()) return summary.error();
  return report;
}

std::string to_junit(const CampaignReport& report) {
  std::ostringstream xml;
  write_junit(report, xml);
  return xml.str();
}

void write_junit(const CampaignReport& report, std::ostream& xml) {
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml << "<testsuites name=\"quiesce\" tests=\"" << report.cases.size() << "\" failures=\"" << report.failures()
      << "\">\n";
  xml << "  <testsuite name=\"" << xml_escape(report.name) << "\" tests=\"" << report.cases.size()
      << "\" failures=\"" << report.failures() << "\">\n";
  for (const CaseResult& result : report.cases) {
    xml << "    <testcase classname=\"" << xml_escape(report.name) << "\" name=\"seed_" << result.seed << "\"";
    if (result.passed()) {
      xml << "/>\n";
      continue;
    }
    xml << ">\n";
    for (const Failure& failure : result.failures) {
      xml << "      <failure type=\"" << invariant_id(failure.invariant) << "\" message=\""
          << xml_escape(failure.message) << "\">" << xml_escape(invariant_summary(failure.invariant));
      if (!result.replay_command.empty()) xml << "\nreplay: " << xml_escape(result.replay_command);
      xml << "</failure>\n";
    }
    xml << "    </testcase>\n";
  }
  xml << "  </testsuite>\n</testsuites>\n";
}

Result<CampaignReport, std::string> merge_reports(std::vector<CampaignReport> reports) {
  if (reports.empty()) return std::string("there are no reports to merge");
  CampaignReport merged;
  merged.name = reports.front().name;
  merged.seeds = reports.front().seeds;
  merged.probes_expected = reports.front().probes_expected;
  if (merged.seeds.last < merged.seeds.first) {
    return "the seed range " + range_text(merged.seeds) + " ends before it starts";
  }
  std::set<std::uint64_t> seen;
  for (CampaignReport& report : reports) {
    if (report.name != merged.name || !(report.seeds == merged.seeds)) {
      return "report '" + report.name + "' is of another campaign than '" + merged.name + "'";
    }
    auto indices = check_shards(report.shards);
    if (!indices.ok()) return "report '" + report.name + "': " + indices.error();
    if (report.shards.front().total != reports.front().shards.front().total) {
      return "the reports are of different shardings: " + shard_text(report.shards.front()) + " and " +
             shard_text(reports.front().shards.front());
    }
    for (const Shard& shard : report.shards) merged.shards.push_back(shard);
    for (const auto& [probe, hits] : report.probe_hits) {
      std::uint64_t& sum = merged.probe_hits[probe];
      if (hits > UINT64_MAX - sum) return "the hits of probe '" + probe + "' add up past 2^64-1";
      sum += hits;
    }
    for (CaseResult& result : report.cases) {
      const std::uint64_t seed = result.seed;
      const auto shard_index = [&] {
        return static_cast<std::uint32_t>((seed - merged.seeds.first) % report.shards.front().total);
      };
      if (seed < merged.seeds.first || seed > merged.seeds.last || indices.value().count(shard_index()) == 0) {
        return "seed " + std::to_string(seed) + " is not a seed of the shards of its report";
      }
      if (!seen.insert(seed).second) {
        return "seed " + std::to_string(seed) + " appears in more than one shard report";
      }
      merged.cases.push_back(std::move(result));
    }
  }
  if (const std::uint64_t count = seeds_in_shard(merged.seeds, Shard{}); seen.size() != count) {
    return "the shard reports cover " + std::to_string(seen.size()) + " of the campaign's " + count_text(count) +
           " seeds";
  }
  std::sort(merged.cases.begin(), merged.cases.end(),
            [](const CaseResult& a, const CaseResult& b) { return a.seed < b.seed; });
  auto all = check_shards(merged.shards);  // across reports: each shard once
  if (!all.ok()) return all.error();
  std::sort(merged.shards.begin(), merged.shards.end(),
            [](const Shard& a, const Shard& b) { return a.index < b.index; });
  // A shard may hold no seed (more shards than seeds): every seed present does not mean every report is.
  const std::uint32_t total = merged.shards.front().total;
  if (merged.shards.size() != total) {
    std::uint32_t missing = 0;
    while (missing < merged.shards.size() && merged.shards[missing].index == missing) missing++;
    return "the shard reports leave out " + shard_text(Shard{missing, total}) + " of the campaign";
  }
  merged.shards = {Shard{}};
  return merged;
}

}  // namespace quiesce::properties
