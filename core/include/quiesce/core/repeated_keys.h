// Finding a key that one object of a JSON document names twice. JSON parsers keep one of the two values
// silently (nlohmann keeps the last), so quiesce's readers refuse such a document instead: the reader's
// parser reports each object's start and end and each key, in document order, and asks for the repeat.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace quiesce {

class RepeatedKeys {
 public:
  void open_object() { marks_.push_back(keys_.size()); }
  void close_object() {
    if (marks_.empty()) return;
    keys_.resize(marks_.back());
    marks_.pop_back();
  }
  // A key of the innermost open object; a key of an enclosing or an earlier sibling object is no repeat.
  void key(std::string_view name) {
    if (marks_.empty() || !repeated_.empty()) return;
    const auto own = keys_.begin() + static_cast<std::ptrdiff_t>(marks_.back());
    if (std::find(own, keys_.end(), name) != keys_.end()) {
      repeated_ = name;
    } else {
      keys_.emplace_back(name);
    }
  }
  // A parser callback for nlohmann's basic_json (json or ordered_json) that feeds this object: pass it to
  // Json::parse. A template, so that core itself does not depend on nlohmann.
  template <class Json>
  typename Json::parser_callback_t parser_callback() {
    return [this](int, typename Json::parse_event_t event, Json& parsed) {
      if (event == Json::parse_event_t::object_start) open_object();
      if (event == Json::parse_event_t::object_end) close_object();
      if (event == Json::parse_event_t::key) key(parsed.template get_ref<const std::string&>());
      return true;
    };
  }
  // The first key found twice in one object; empty when there is none.
  const std::string& repeated() const { return repeated_; }

 private:
  std::vector<std::string> keys_;   // the keys of the open objects, innermost last
  std::vector<std::size_t> marks_;  // where each open object's keys start in keys_
  std::string repeated_;
};

}  // namespace quiesce
