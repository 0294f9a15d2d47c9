// RQL lexer (re2c). Turns one logical line into tokens that carry the
// physical line and column of the query file they came from.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace rql {

// One logical line: physical lines joined by trailing backslashes.
struct LogicalLine {
  std::string text;
  std::vector<ir::SrcLoc> pos;  // pos[i] = physical position of text[i]; one extra for end
};

// Splits a query file into logical lines (see docs/rql.md, "Lines and comments").
std::vector<LogicalLine> splitLogicalLines(const std::string& file);

enum class Tok {
  END,
  ERROR,
  // statement words
  SELECT,
  STREAM,
  FROM,
  DECLARE,
  RETENTION,
  FILE_KW,
  STORAGE,
  ROTATION,
  SUBSTRAT,
  RULE,
  DISPOSABLE,
  ONESHOT,
  HOLD,
  TIMEOUT,
  MQTT,
  PUBLISH,
  VOLATILE,
  ON,
  WHEN,
  DUMP,
  SYSTEM,
  DO,
  TO,
  TEXTFILE,
  BINFILE,
  DEVICE,
  AND,
  OR,
  NOT,
  MIN,
  MAX,
  AVG,
  SUMC,
  TYPE,       // field type word; value in `type`
  PROFILE,    // storage profile word (not DEVICE); upper-case text in `text`
  FN_WORD,    // reserved function word; spelling in `text`
  TO_STRING,  // to_string
  ID,
  DECIMAL,
  FLOAT,
  STRING,
  STRING_PROFILE,
  LPAREN,
  RPAREN,
  LBRACK,
  RBRACK,
  COMMA,
  DOT,
  STAR,
  SLASH,
  PLUS,
  MINUS,
  UNDERSCORE,
  AT,
  HASH,
  AMP,
  PERCENT,
  GT,
  LT,
  EQ,
  NE,
  GE,
  LE,
  COLON,
  CARET,
  DOLLAR,
  PERSISTENT,
};
const char* tokName(Tok t);

struct Lexeme {
  Tok tok = Tok::END;
  std::string text;  // identifier / number text / string without quotes
  ir::Type type = ir::Type::INTEGER;
  ir::SrcLoc loc;
};

// Lexes a whole logical line. On a lexical error the last lexeme is ERROR
// with the message in `text`.
std::vector<Lexeme> lexLine(const LogicalLine& line);

}  // namespace rql
