#include "common/json_parse.h"

#include <algorithm>

#include <fmt/format.h>

namespace tessera {

namespace {

// Accepts every event and records the first error (the parser stops there).
class FirstError : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& e) override {
    m_syntax = dynamic_cast<const nlohmann::json::parse_error*>(&e) != nullptr;
    // A syntax error points at the last character read; a bad value at its first one.
    m_offset = m_syntax || token.size() > position ? (position == 0 ? 0 : position - 1)
                                                   : position - token.size();
    const std::string what = e.what();
    const size_t syntax = what.find("syntax error");
    const size_t prefix_end = what.find("] ");
    m_reason = syntax != std::string::npos       ? what.substr(syntax)
               : prefix_end != std::string::npos ? what.substr(prefix_end + 2)
                                                 : what;
    return false;
  }

  size_t m_offset = 0;  // 0-based offset of the place to report
  bool m_syntax = true;
  std::string m_reason = "unknown JSON error";
};

}  // namespace

nlohmann::json parse_json(std::string_view text, const std::string& origin, bool comments) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false, comments);
  if (!j.is_discarded()) return j;
  FirstError first;
  (void)nlohmann::json::sax_parse(text, &first, nlohmann::json::input_format_t::json,
                                  /*strict=*/true, comments);
  const size_t offset = std::min(first.m_offset, text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  throw JsonParseError(fmt::format("{}:{}:{}", origin, line, column), first.m_reason,
                       first.m_offset + 1, first.m_syntax);
}

}  // namespace tessera
