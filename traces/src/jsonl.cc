// The JSON Lines encoding: one object per line, walked by the same field list as the binary encoding.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fields.h"
#include "quiesce/core/digest.h"
#include "quiesce/core/printable.h"
#include "quiesce/core/repeated_keys.h"
#include "quiesce/traces/codec.h"
#include "text_util.h"

namespace quiesce::traces {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kFormatName = "quiesce-trace";
constexpr std::size_t kLineBytesMax = 2 * kDataBytesMax + (std::size_t{1} << 20);
constexpr int kJsonDepthMax = 8;

class JsonOut {
 public:
  explicit JsonOut(Json& root) : current_(&root) {}

  void u8(const char* key, std::uint8_t& value, std::uint8_t) { (*current_)[key] = value; }
  void u32(const char* key, std::uint32_t& value) { (*current_)[key] = value; }
  void u64(const char* key, std::uint64_t& value) { (*current_)[key] = value; }
  void i32(const char* key, std::int32_t& value) { (*current_)[key] = value; }
  void fixed64(const char* key, std::uint64_t& value) { (*current_)[key] = to_hex(value); }
  void flag(const char* key, bool& value) { (*current_)[key] = value; }
  template <class E>
  void enumeration(const char* key, E& value, std::uint8_t) {
    (*current_)[key] = std::string(detail::name_of(value));
  }
  void id(const char* key, HandleKind, std::uint64_t& value) { (*current_)[key] = value; }
  void call_index(const char* key, std::uint64_t& value) { (*current_)[key] = value; }
  void clock(const char* key, std::uint64_t& value) { (*current_)[key] = value; }
  void text(const char* key, std::string& value) { (*current_)[key] = value; }
  void bytes(const char* key, Payload& value) { (*current_)[key] = detail::hex_of(value.view(scratch_)); }
  void values(const char* key, std::vector<std::uint64_t>& value) { (*current_)[key] = value; }
  template <class T, class F>
  void list(const char* key, std::vector<T>& items, std::uint64_t, F&& each) {
    Json array = Json::array();
    Json* outer = current_;
    for (T& item : items) {
      Json element = Json::object();
      current_ = &element;
      each(item);
      array.push_back(std::move(element));
    }
    current_ = outer;
    (*current_)[key] = std::move(array);
  }
  template <class F>
  void object(const char* key, F&& body) {
    Json inner = Json::object();
    Json* outer = current_;
    current_ = &inner;
    body();
    current_ = outer;
    (*current_)[key] = std::move(inner);
  }
  void status(Op op, std::uint8_t& status, bool&, bool&, bool&) {
    (*current_)["status"] = std::string(status_name(op, status));
  }

 private:
  Json* current_;
  std::vector<std::byte> scratch_;  // a seeded payload's bytes, made to be written as hexadecimal
};

class JsonIn {
 public:
  JsonIn(const Json& root, std::uint64_t line, std::string context) : current_(&root), line_(line), context_(std::move(context)) {}

  bool failed() const { return failed_; }
  const TraceError& error() const { return error_; }

  void u8(const char* key, std::uint8_t& value, std::uint8_t count) {
    std::uint64_t read = 0;
    if (unsigned_field(key, read, count - 1U)) value = static_cast<std::uint8_t>(read);
  }
  void u32(const char* key, std::uint32_t& value) {
    std::uint64_t read = 0;
    if (unsigned_field(key, read, UINT32_MAX)) value = static_cast<std::uint32_t>(read);
  }
  void u64(const char* key, std::uint64_t& value) { (void)unsigned_field(key, value, UINT64_MAX); }
  void i32(const char* key, std::int32_t& value) {
    const Json* field = find(key);
    if (field == nullptr) return;
    if (!field->is_number_integer()) return fail(key, "is not an integer");
    const auto read = field->get<std::int64_t>();
    if (field->is_number_unsigned() && field->get<std::uint64_t>() > INT32_MAX) return fail(key, "does not fit 32 bits");
    if (read < INT32_MIN || read > INT32_MAX) return fail(key, "does not fit 32 bits");
    value = static_cast<std::int32_t>(read);
  }
  void fixed64(const char* key, std::uint64_t& value) {
    const Json* field = find(key);
    if (field == nullptr) return;
    if (!field->is_string() || !detail::parse_hex64(field->get_ref<const std::string&>(), value)) {
      return fail(key, "is not 16 hexadecimal digits");
    }
  }
  void flag(const char* key, bool& value) {
    const Json* field = find(key);
    if (field == nullptr) return;
    if (!field->is_boolean()) return fail(key, "is not true or false");
    value = field->get<bool>();
  }
  template <class E>
  void enumeration(const char* key, E& value, std::uint8_t count) {
    const Json* field = find(key);
    if (field == nullptr) return;
    if (!field->is_string()) return fail(key, "is not a name");
    const auto& name = field->get_ref<const std::string&>();
    for (std::uint8_t index = 0; index < count; ++index) {
      if (detail::name_of(static_cast<E>(index)) == name) {
        value = static_cast<E>(index);
        return;
      }
    }
    fail(key, "names '" + name + "', which is not one of its values");
  }
  void id(const char* key, HandleKind, std::uint64_t& value) { u64(key, value); }
  void call_index(const char* key, std::uint64_t& value) { u64(key, value); }
  void clock(const char* key, std::uint64_t& value) { u64(key, value); }
  void text(const char* key, std::string& value) {
    const Json* field = find(key);
    if (field == nullptr) return;
    if (!field->is_string()) return fail(key, "is not a string");
    if (field->get_ref<const std::string&>().size() > kTextBytesMax) return fail(key, "is longer than the bound " + std::to_string(kTextBytesMax));
    value = field->get<std::string>();
  }
  void bytes(const char* key, Payload& value) {
    const Json* field = find(key);
    if (field == nullptr) return;
    if (!field->is_string()) return fail(key, "is not a hexadecimal string");
    const auto& hex = field->get_ref<const std::string&>();
    if (hex.size() > 2 * kDataBytesMax) return fail(key, "holds more than " + std::to_string(kDataBytesMax) + " bytes");
    value.clear();
    if (!detail::parse_hex_bytes(hex, value.expand())) return fail(key, "is not an even number of hexadecimal digits");
  }
  void values(const char* key, std::vector<std::uint64_t>& value) {
    const Json* field = array(key, kValuesMax);
    if (field == nullptr) return;
    value.resize(field->size());
    for (std::size_t index = 0; index < field->size(); ++index) {
      if (!(*field)[index].is_number_unsigned()) return fail(key, "holds an item that is not an unsigned integer");
      value[index] = (*field)[index].get<std::uint64_t>();
    }
  }
  template <class T, class F>
  void list(const char* key, std::vector<T>& items, std::uint64_t bound, F&& each) {
    const Json* field = array(key, bound);
    if (field == nullptr) return;
    items.resize(field->size());
    const Json* outer = current_;
    for (std::size_t index = 0; index < items.size() && !failed_; ++index) {
      current_ = &(*field)[index];
      if (!current_->is_object()) {
        current_ = outer;
        return fail(key, "holds an item that is not an object");
      }
      each(items[index]);
    }
    current_ = outer;
  }
  template <class F>
  void object(const char* key, F&& body) {
    const Json* field = find(key);
    if (field == nullptr) return;
    if (!field->is_object()) return fail(key, "is not an object");
    const Json* outer = current_;
    current_ = field;
    body();
    current_ = outer;
  }
  void status(Op op, std::uint8_t& status, bool& has_error, bool& has_timing, bool& has_result) {
    const Json* field = find("status");
    if (field == nullptr) return;
    if (!field->is_string()) return fail("status", "is not a name");
    const auto& name = field->get_ref<const std::string&>();
    bool known = false;
    for (std::uint8_t index = 0; index < status_count(op) && !known; ++index) {
      if (status_name(op, index) == name) {
        status = index;
        known = true;
      }
    }
    if (!known) return fail("status", "is '" + name + "', not a status of " + std::string(to_string(op)));
    has_error = current_->contains("error");
    has_timing = current_->contains("submitted_ns");
    has_result = current_->contains("result");
    if (has_result && result_kind(op) == HandleKind::None) return fail("result", "is present, but " + std::string(to_string(op)) + " returns no handle");
  }

  void fail(std::string_view key, const std::string& what) {
    if (failed_) return;
    failed_ = true;
    error_ = TraceError{context_ + ", field '" + std::string(key) + "' " + what, TraceError::Where::Line, line_};
  }

 private:
  const Json* find(const char* key) {
    if (failed_) return nullptr;
    const auto found = current_->find(key);
    if (found == current_->end()) {
      fail(key, "is missing");
      return nullptr;
    }
    return &*found;
  }
  const Json* array(const char* key, std::uint64_t bound) {
    const Json* field = find(key);
    if (field == nullptr) return nullptr;
    if (!field->is_array()) {
      fail(key, "is not an array");
      return nullptr;
    }
    if (field->size() > bound) {
      fail(key, "has " + std::to_string(field->size()) + " items, above the bound " + std::to_string(bound));
      return nullptr;
    }
    return field;
  }
  bool unsigned_field(const char* key, std::uint64_t& value, std::uint64_t maximum) {
    const Json* field = find(key);
    if (field == nullptr) return false;
    if (!field->is_number_unsigned()) {
      fail(key, "is not an unsigned integer");
      return false;
    }
    const auto read = field->get<std::uint64_t>();
    if (read > maximum) {
      fail(key, "is " + std::to_string(read) + ", above its largest value " + std::to_string(maximum));
      return false;
    }
    value = read;
    return true;
  }

  const Json* current_;
  std::uint64_t line_;
  std::string context_;
  bool failed_ = false;
  TraceError error_;
};

Json header_json(const TraceHeader& header) {
  Json line = Json::object();
  line["type"] = "header";
  line["format"] = kFormatName;
  line["format_version"] = header.format_version;
  line["quiesce_version"] = header.quiesce_version;
  line["git_commit"] = header.git_commit;
  line["seed"] = header.seed;
  line["device"] = header.device;
  line["fault_plan"] = header.fault_plan;
  line["cost_profile"] = header.cost_profile;
  line["schedule"] = header.schedule;
  line["workload"] = header.workload;
  return line;
}

Json record_json(const Record& record) {
  auto& mutable_record = const_cast<Record&>(record);  // NOLINT: the writing visitor never modifies
  Json line = Json::object();
  line["type"] = std::string(to_string(record.kind));
  JsonOut visitor(line);
  if (record.kind == RecordKind::Call) {
    line["op"] = std::string(to_string(record.call.op));
    detail::visit_call(visitor, mutable_record.call);
  } else {
    detail::visit_note(visitor, record.kind, mutable_record.note);
  }
  return line;
}

TraceResult<TraceHeader> parse_header(const Json& line) {
  const auto error = [](const std::string& what) { return TraceError{what, TraceError::Where::Line, 1}; };
  const auto is_text = [&line](const char* key, std::string_view expected) {
    const auto found = line.find(key);
    return found != line.end() && found->is_string() && found->get_ref<const std::string&>() == expected;
  };
  if (!line.is_object() || !is_text("type", "header") || !is_text("format", kFormatName)) {
    return error("this is not a quiesce JSON Lines trace: the first line is not a header object with \"format\": \"quiesce-trace\"");
  }
  const auto version = line.find("format_version");
  if (version == line.end() || !version->is_number_unsigned() || version->get<std::uint64_t>() == 0) {
    return error("the header has no valid format_version");
  }
  if (version->get<std::uint64_t>() > kFormatVersion) {
    return error("the trace has format version " + std::to_string(version->get<std::uint64_t>()) +
                 ", newer than the newest this reader knows (" + std::to_string(kFormatVersion) + "); use a newer quiesce");
  }
  TraceHeader header;
  header.format_version = static_cast<std::uint32_t>(version->get<std::uint64_t>());
  JsonIn in(line, 1, "the header");
  in.text("quiesce_version", header.quiesce_version);
  in.text("git_commit", header.git_commit);
  in.u64("seed", header.seed);
  in.text("device", header.device);
  in.text("fault_plan", header.fault_plan);
  in.text("cost_profile", header.cost_profile);
  in.text("schedule", header.schedule);
  in.text("workload", header.workload);
  if (in.failed()) return in.error();
  return header;
}

TraceResult<bool> parse_record(const Json& line, std::uint64_t line_number, std::uint64_t index, Record& record) {
  const auto error = [line_number](const std::string& what) { return TraceError{what, TraceError::Where::Line, line_number}; };
  const auto type = line.find("type");
  if (type == line.end() || !type->is_string()) return error("the line has no \"type\" naming its record kind");
  const auto& name = type->get_ref<const std::string&>();
  if (name == "footer") return false;
  detail::reset(record);
  for (std::uint8_t kind = 0; kind < kRecordKindCount; ++kind) {
    if (to_string(static_cast<RecordKind>(kind)) == name) record.kind = static_cast<RecordKind>(kind);
  }
  if (to_string(record.kind) != name) return error("the record type '" + name + "' is unknown");
  std::string context = "record " + std::to_string(index) + " (" + name;
  if (record.kind == RecordKind::Call) {
    const auto op = line.find("op");
    if (op == line.end() || !op->is_string()) return error("record " + std::to_string(index) + " is a call without an \"op\"");
    bool known = false;
    for (std::uint8_t value = 0; value < kOpCount && !known; ++value) {
      known = to_string(static_cast<Op>(value)) == op->get_ref<const std::string&>();
      if (known) record.call.op = static_cast<Op>(value);
    }
    if (!known) return error("record " + std::to_string(index) + " calls the unknown op '" + op->get<std::string>() + "'");
    context += " " + op->get<std::string>();
  }
  JsonIn in(line, line_number, context + ")");
  if (record.kind == RecordKind::Call) {
    detail::visit_call(in, record.call);
  } else {
    detail::visit_note(in, record.kind, record.note);
  }
  if (in.failed()) return in.error();
  return true;
}

TraceResult<void> check_footer(const Json& line, std::uint64_t line_number, const Trace& trace) {
  const auto error = [line_number](const std::string& what) { return TraceError{what, TraceError::Where::Line, line_number}; };
  const auto count = line.find("records");
  const auto digest = line.find("digest");
  std::uint64_t stored_digest = 0;
  if (count == line.end() || !count->is_number_unsigned() || digest == line.end() || !digest->is_string() ||
      !detail::parse_hex64(digest->get_ref<const std::string&>(), stored_digest)) {
    return error("the footer needs \"records\" (a count) and \"digest\" (16 hexadecimal digits)");
  }
  if (count->get<std::uint64_t>() != trace.records.size()) {
    return error("the footer counts " + std::to_string(count->get<std::uint64_t>()) + " records but the trace holds " +
                 std::to_string(trace.records.size()));
  }
  const TraceFooter actual = compute_footer(trace.header, trace.records);
  if (actual.digest != stored_digest) {
    return error("the trace's digest is " + to_hex(actual.digest) + " but the footer says " + to_hex(stored_digest) +
                 ": the header or a record was changed");
  }
  return {};
}

}  // namespace

std::string record_jsonl(const Record& record) {
  return record_json(record).dump(-1, ' ', true, Json::error_handler_t::replace);
}

std::string encode_jsonl(const Trace& trace) {
  std::string text = header_json(trace.header).dump() + "\n";
  for (const Record& record : trace.records) text += record_json(record).dump() + "\n";
  const TraceFooter footer = compute_footer(trace.header, trace.records);
  Json line = Json::object();
  line["type"] = "footer";
  line["records"] = footer.record_count;
  line["digest"] = to_hex(footer.digest);
  text += line.dump() + "\n";
  return text;
}

namespace {

// One line parsed as a JSON object. Refused with the parser's own reason and column (a lone surrogate, a
// missing value), or when an object names a key twice: nlohmann keeps the last value silently, so such a
// line would mean what its writer may not have meant.
TraceResult<Json> parse_line(std::string_view raw, std::uint64_t line_number) {
  RepeatedKeys repeats;
  Json line;
  try {
    line = Json::parse(raw, repeats.parser_callback<Json>());
  } catch (const Json::parse_error& error) {
    // "[json.exception.parse_error.101] parse error at line 1, column 24: syntax error ..." -> "column 24: ..."
    std::string reason = error.what();
    const std::size_t column = reason.find("column ");
    if (column != std::string::npos) reason = reason.substr(column);
    return TraceError{"the line is not valid JSON, at " + printable(reason), TraceError::Where::Line, line_number};
  }
  if (!line.is_object()) return TraceError{"the line is not a JSON object", TraceError::Where::Line, line_number};
  if (!repeats.repeated().empty()) {
    return TraceError{"the key '" + printable(repeats.repeated()) + "' appears twice in one object of the line",
                      TraceError::Where::Line, line_number};
  }
  return line;
}

}  // namespace

TraceResult<Trace> decode_jsonl(std::string_view text) {
  Trace trace;
  std::uint64_t line_number = 0;
  std::size_t position = 0;
  bool have_header = false;
  while (position < text.size()) {
    const std::size_t newline = text.find('\n', position);
    if (newline == std::string_view::npos) {
      return TraceError{"the last line has no newline: the trace is truncated", TraceError::Where::Line, line_number + 1};
    }
    const std::string_view raw = text.substr(position, newline - position);
    position = newline + 1;
    ++line_number;
    if (raw.size() > kLineBytesMax) return TraceError{"the line is longer than " + std::to_string(kLineBytesMax) + " bytes", TraceError::Where::Line, line_number};
    if (detail::json_depth(raw) > kJsonDepthMax) return TraceError{"the line nests deeper than " + std::to_string(kJsonDepthMax) + " levels", TraceError::Where::Line, line_number};
    TraceResult<Json> parsed_line = parse_line(raw, line_number);
    if (!parsed_line.ok()) return parsed_line.error();
    const Json& line = parsed_line.value();
    if (!have_header) {
      TraceResult<TraceHeader> header = parse_header(line);
      if (!header.ok()) return header.error();
      trace.header = std::move(header).value();
      have_header = true;
      continue;
    }
    if (trace.records.size() >= kRecordsMax) return TraceError{"the trace has more than " + std::to_string(kRecordsMax) + " records", TraceError::Where::Line, line_number};
    Record record;
    TraceResult<bool> parsed = parse_record(line, line_number, trace.records.size(), record);
    if (!parsed.ok()) return parsed.error();
    if (parsed.value()) {
      trace.records.push_back(std::move(record));
      continue;
    }
    TraceResult<void> footer = check_footer(line, line_number, trace);
    if (!footer.ok()) return footer.error();
    if (position != text.size()) return TraceError{"lines follow the footer", TraceError::Where::Line, line_number + 1};
    trace.footer = compute_footer(trace.header, trace.records);
    return trace;
  }
  if (!have_header) return TraceError{"the trace is empty", TraceError::Where::Line, 1};
  return TraceError{"the trace is truncated after record " + std::to_string(trace.records.size()) + ": the footer is missing",
                    TraceError::Where::Line, line_number + 1};
}

}  // namespace quiesce::traces
