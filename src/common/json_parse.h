// Parsing JSON text with errors that name the file and the place.
//
// parse_json never lets a nlohmann exception out: a syntax error, a number outside the range of a
// double ("1e400") or any other rejection is a JsonParseError whose where is
// "<origin>:<line>:<column>" (1-based) and whose why is "invalid JSON: <what the parser found>",
// e.g. "c.json:3:12: invalid JSON: number overflow parsing '1e400'". The place is the character
// where the parser stopped; for an out-of-range number, the number's first character.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace tessera {

class JsonParseError : public Error {
 public:
  JsonParseError(std::string where, std::string reason, size_t byte, bool syntax)
      : Error(std::move(where), "invalid JSON: " + reason),
        m_reason(std::move(reason)),
        m_byte(byte),
        m_syntax(syntax) {}

  // The parser's message without its exception prefix ("syntax error while parsing ...").
  const std::string& reason() const { return m_reason; }
  // The 1-based byte offset of the place (for a syntax error, the count of bytes the parser had
  // read; it may be one past the end of the text).
  size_t byte() const { return m_byte; }
  // True for a syntax error; false for a value the parser cannot represent (number overflow).
  bool syntax() const { return m_syntax; }

 private:
  std::string m_reason;
  size_t m_byte;
  bool m_syntax;
};

// `comments` accepts // and /* */ comments.
nlohmann::json parse_json(std::string_view text, const std::string& origin, bool comments = false);

}  // namespace tessera
