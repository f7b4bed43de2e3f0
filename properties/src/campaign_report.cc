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
  try {
    if (json.at("format") != "quiesce-campaign-1") {
      return "the report's format is '" + json.at("format").dump() + "', expected \"quiesce-campaign-1\"";
    }
    CampaignReport report;
    report.name = json.at("name").get<std::string>();
    report.seeds = {json.at("seeds").at("first").get<std::uint64_t>(), json.at("seeds").at("last").get<std::uint64_t>()};
    for (const auto& shard : json.at("shards")) {
      report.shards.push_back({shard.at("index").get<std::uint32_t>(), shard.at("total").get<std::uint32_t>()});
    }
    report.probe_hits = json.at("probe_hits").get<std::map<std::string, std::uint64_t>>();
    report.probes_expected = json.at("probes_expected").get<std::vector<std::string>>();
    for (const auto& item : json.at("cases")) {
      CaseResult result;
      result.seed = item.at("seed").get<std::uint64_t>();
      result.digest = item.at("digest").get<std::uint64_t>();
      result.operations = item.at("operations").get<std::uint64_t>();
      result.violations = item.at("violations").get<std::uint64_t>();
      result.findings = item.at("findings").get<std::uint64_t>();
      result.probes_hit = item.at("probes").get<std::vector<std::string>>();
      if (item.contains("replay")) result.replay_command = item.at("replay").get<std::string>();
      for (const auto& failure : item.at("failures")) {
        auto invariant = parse_invariant(failure.at("invariant").get<std::string>());
        if (!invariant.ok()) return "case " + std::to_string(result.seed) + ": " + invariant.error();
        result.failures.push_back({invariant.value(), failure.at("message").get<std::string>()});
      }
      report.cases.push_back(std::move(result));
    }
    return report;
  } catch (const nlohmann::json::exception& error) {
    return std::string("the report is not a quiesce campaign report: ") + error.what();
  }
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
  std::set<std::uint64_t> seen;
  for (CampaignReport& report : reports) {
    if (report.name != merged.name || !(report.seeds == merged.seeds)) {
      return "report '" + report.name + "' is of another campaign than '" + merged.name + "'";
    }
    for (const Shard& shard : report.shards) merged.shards.push_back(shard);
    for (const auto& [probe, hits] : report.probe_hits) merged.probe_hits[probe] += hits;
    for (CaseResult& result : report.cases) {
      if (!seen.insert(result.seed).second) {
        return "seed " + std::to_string(result.seed) + " appears in more than one shard report";
      }
      merged.cases.push_back(std::move(result));
    }
  }
  if (seen.size() != merged.seeds.count()) {
    return "the shard reports cover " + std::to_string(seen.size()) + " of the campaign's " +
           std::to_string(merged.seeds.count()) + " seeds";
  }
  std::sort(merged.cases.begin(), merged.cases.end(),
            [](const CaseResult& a, const CaseResult& b) { return a.seed < b.seed; });
  std::sort(merged.shards.begin(), merged.shards.end(),
            [](const Shard& a, const Shard& b) { return a.index < b.index; });
  if (merged.shards.size() == merged.shards.front().total) merged.shards = {Shard{}};
  return merged;
}

}  // namespace quiesce::properties
