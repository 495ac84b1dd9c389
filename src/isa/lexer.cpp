#include "isa/lexer.h"

#include <cctype>

#include "common/error.h"

namespace tessera::isa {
namespace {

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}

bool all_of(std::string_view s, bool (*pred)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

bool hex_digit(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// digits [. digits] [e [+-] digits] [f]
bool is_float(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && digit(s[i])) ++i;
    return i > start;
  };
  if (!digits()) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && s[i] == 'f') ++i;
  return i == s.size();
}

std::string printable(char c) {
  if (std::isprint(static_cast<unsigned char>(c))) return std::string(1, c);
  return fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
}

// The extent of a number starting at `i`: alphanumerics and dots, plus a sign after an exponent
// `e` of a decimal number.
size_t number_end(std::string_view line, size_t i) {
  bool hex = line.substr(i, 2) == "0x" || line.substr(i, 2) == "0X";
  size_t j = i;
  while (j < line.size()) {
    char c = line[j];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_') {
      ++j;
    } else if ((c == '+' || c == '-') && !hex && (line[j - 1] == 'e' || line[j - 1] == 'E')) {
      ++j;
    } else {
      break;
    }
  }
  return j;
}

TokenKind classify_number(std::string_view s, const std::string& file, int line_no, int col) {
  if (s.size() > 2 && (s.substr(0, 2) == "0x" || s.substr(0, 2) == "0X") &&
      all_of(s.substr(2), hex_digit)) {
    return TokenKind::Int;
  }
  if (all_of(s, digit)) return TokenKind::Int;
  if (is_float(s)) return TokenKind::Float;
  throw Error(source_location(file, line_no, col),
              fmt::format("malformed number '{}'", excerpt(s)));
}

TokenKind punctuation(char c, const std::string& file, int line_no, int col) {
  switch (c) {
    case ',':
      return TokenKind::Comma;
    case '[':
      return TokenKind::LBracket;
    case ']':
      return TokenKind::RBracket;
    case '+':
      return TokenKind::Plus;
    case '-':
      return TokenKind::Minus;
    case ':':
      return TokenKind::Colon;
    case ';':
      throw Error(source_location(file, line_no, col),
                  "expected ';;' between ops, got a single ';'");
    default:
      break;
  }
  throw Error(source_location(file, line_no, col),
              fmt::format("unexpected character '{}'", printable(c)));
}

}  // namespace

std::string source_location(const std::string& file, int line, int column) {
  return fmt::format("{}:{}:{}", file, line, column);
}

std::string describe(const Token& t) {
  if (t.kind == TokenKind::End) return "end of line";
  return fmt::format("'{}'", excerpt(t.text));
}

std::string excerpt(std::string_view text) {
  constexpr size_t kWhole = 40, kHead = 32;
  if (text.size() <= kWhole) return std::string(text);
  return std::string(text.substr(0, kHead)) + "...";
}

namespace {

// Appends the tokens of `line` to `out`; `i` tracks the position (the error column on a throw).
void lex_into(std::string_view line, const std::string& file, int line_no, std::vector<Token>& out,
              size_t& i) {
  while (i < line.size()) {
    char c = line[i];
    int col = static_cast<int>(i) + 1;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (line.substr(i, 2) == "//") {
      i = line.size();
      break;
    }
    size_t j = i + 1;
    TokenKind kind;
    if (ident_start(c)) {
      while (j < line.size() && ident_char(line[j])) ++j;
      kind = TokenKind::Ident;
    } else if ((c == '.' || c == '%') && j < line.size() && ident_start(line[j])) {
      while (j < line.size() && ident_char(line[j])) ++j;
      kind = c == '.' ? TokenKind::Directive : TokenKind::Special;
    } else if (digit(c)) {
      j = number_end(line, i);
      kind = classify_number(line.substr(i, j - i), file, line_no, col);
    } else if (c == ';' && j < line.size() && line[j] == ';') {
      ++j;
      kind = TokenKind::SlotSep;
    } else {
      kind = punctuation(c, file, line_no, col);
    }
    out.push_back({kind, line.substr(i, j - i), col});
    i = j;
  }
}

}  // namespace

std::vector<Token> lex_line(std::string_view line, const std::string& file, int line_no,
                            std::optional<Error>* error) {
  std::vector<Token> out;
  size_t i = 0;
  try {
    lex_into(line, file, line_no, out, i);
  } catch (const Error& e) {
    if (error == nullptr) throw;
    *error = e;
    out.push_back({TokenKind::End, {}, static_cast<int>(i) + 1});
    return out;
  }
  int end_col = out.empty() ? 1 : out.back().column + static_cast<int>(out.back().text.size());
  out.push_back({TokenKind::End, {}, end_col});
  return out;
}

}  // namespace tessera::isa
