// Tokens of one line of tessera assembly (syntax: docs/assembly.md).
//
// Token kinds: identifiers [A-Za-z_][A-Za-z0-9_.]* (mnemonics, registers, labels, constants),
// directives (`.` + identifier), special registers (`%` + identifier), integers (decimal or 0x
// hex), float literals (digits[.digits][e[+-]digits][f]), and the punctuation , [ ] + - : ;;
// A `//` comment runs to the end of the line. Columns are 1-based byte offsets.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace tessera::isa {

enum class TokenKind {
  Ident,
  Directive,
  Special,
  Int,
  Float,
  Comma,
  LBracket,
  RBracket,
  Plus,
  Minus,
  Colon,
  SlotSep,
  End
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string_view text;  // view into the source line
  int column = 0;
};

// Lexes one line (without its newline). The result always ends with an End token whose column is
// just past the last token. On a lexical error it throws tessera::Error("file:line:column", why),
// or, when `error` is given, stores the error there and returns the tokens before it (the End
// token then sits at the error's column).
std::vector<Token> lex_line(std::string_view line, const std::string& file, int line_no,
                            std::optional<Error>* error = nullptr);

// How a token is named in error messages: 'text' (as excerpt gives it), or "end of line".
std::string describe(const Token& t);

// Source text as error messages quote it: whole up to 40 characters, else its first 32 followed by
// "..." (an error never echoes a megabyte-long token).
std::string excerpt(std::string_view text);

std::string source_location(const std::string& file, int line, int column);

}  // namespace tessera::isa
