// RQL lexer. re2c generates the scanner from the rules below.
#include "lexer.hpp"

#include "ir/profiles.hpp"

#include <cstring>

namespace rql {

std::vector<LogicalLine> splitLogicalLines(const std::string& file) {
  std::vector<LogicalLine> out;
  LogicalLine acc;
  bool continuing = false;
  int lineNo = 0;
  size_t i = 0;
  while (i <= file.size()) {
    if (i == file.size() && (file.empty() || file.back() == '\n')) break;
    size_t e = file.find('\n', i);
    if (e == std::string::npos) e = file.size();
    std::string line = file.substr(i, e - i);
    ++lineNo;
    i = e + 1;
    // A line whose first non-blank character is '#' is a comment line; empty lines vanish.
    size_t nb = line.find_first_not_of(" \t\r");
    if (line.empty() || (nb != std::string::npos && line[nb] == '#')) continue;
    bool cont = !line.empty() && line.back() == '\\';
    if (cont) line.pop_back();
    for (size_t c = 0; c < line.size(); ++c) {
      acc.text.push_back(line[c]);
      acc.pos.push_back({lineNo, int(c) + 1});
    }
    if (cont) {
      acc.text.push_back(' ');
      acc.pos.push_back({lineNo, int(line.size()) + 1});
      continuing = true;
      continue;
    }
    acc.pos.push_back({lineNo, int(line.size()) + 1});
    out.push_back(std::move(acc));
    acc = LogicalLine{};
    continuing = false;
  }
  // An unterminated continuation at the end of the file is dropped (compatible behaviour).
  (void)continuing;
  return out;
}

const char* tokName(Tok t) {
  switch (t) {
    case Tok::END: return "end of line";
    case Tok::ERROR: return "error";
    case Tok::SELECT: return "SELECT";
    case Tok::STREAM: return "STREAM";
    case Tok::FROM: return "FROM";
    case Tok::DECLARE: return "DECLARE";
    case Tok::RETENTION: return "RETENTION";
    case Tok::FILE_KW: return "FILE";
    case Tok::STORAGE: return "STORAGE";
    case Tok::ROTATION: return "ROTATION";
    case Tok::SUBSTRAT: return "SUBSTRAT";
    case Tok::RULE: return "RULE";
    case Tok::DISPOSABLE: return "DISPOSABLE";
    case Tok::ONESHOT: return "ONESHOT";
    case Tok::HOLD: return "HOLD";
    case Tok::TIMEOUT: return "TIMEOUT";
    case Tok::MQTT: return "MQTT";
    case Tok::PUBLISH: return "PUBLISH";
    case Tok::VOLATILE: return "VOLATILE";
    case Tok::ON: return "ON";
    case Tok::WHEN: return "WHEN";
    case Tok::DUMP: return "DUMP";
    case Tok::SYSTEM: return "SYSTEM";
    case Tok::DO: return "DO";
    case Tok::TO: return "TO";
    case Tok::TEXTFILE: return "TEXTFILE";
    case Tok::BINFILE: return "BINFILE";
    case Tok::DEVICE: return "DEVICE";
    case Tok::AND: return "AND";
    case Tok::OR: return "OR";
    case Tok::NOT: return "NOT";
    case Tok::MIN: return "MIN";
    case Tok::MAX: return "MAX";
    case Tok::AVG: return "AVG";
    case Tok::SUMC: return "SUMC";
    case Tok::TYPE: return "type name";
    case Tok::PROFILE: return "storage profile";
    case Tok::FN_WORD: return "function name";
    case Tok::TO_STRING: return "to_string";
    case Tok::ID: return "identifier";
    case Tok::DECIMAL: return "integer";
    case Tok::FLOAT: return "decimal number";
    case Tok::STRING: return "string";
    case Tok::STRING_PROFILE: return "profile string";
    case Tok::LPAREN: return "'('";
    case Tok::RPAREN: return "')'";
    case Tok::LBRACK: return "'['";
    case Tok::RBRACK: return "']'";
    case Tok::COMMA: return "','";
    case Tok::DOT: return "'.'";
    case Tok::STAR: return "'*'";
    case Tok::SLASH: return "'/'";
    case Tok::PLUS: return "'+'";
    case Tok::MINUS: return "'-'";
    case Tok::UNDERSCORE: return "'_'";
    case Tok::AT: return "'@'";
    case Tok::HASH: return "'#'";
    case Tok::AMP: return "'&'";
    case Tok::PERCENT: return "'%'";
    case Tok::GT: return "'>'";
    case Tok::LT: return "'<'";
    case Tok::EQ: return "'='";
    case Tok::NE: return "'!='";
    case Tok::GE: return "'>='";
    case Tok::LE: return "'<='";
    case Tok::COLON: return "':'";
    case Tok::CARET: return "'^'";
    case Tok::DOLLAR: return "'$'";
    case Tok::PERSISTENT: return "PERSISTENT";
  }
  return "?";
}

// A quoted profile word ('memory'), or a source kind a clause may name instead.
static bool isProfileWord(const std::string& s) {
  return ir::isProfileKeyword(s) || s == "device" || s == "DEVICE" || s == "textsource" || s == "TEXTSOURCE";
}

static std::string upper(std::string s) {
  for (auto& c : s) c = char(toupper((unsigned char)c));
  return s;
}

std::vector<Lexeme> lexLine(const LogicalLine& line) {
  std::vector<Lexeme> out;
  const char* base = line.text.c_str();
  const char* YYCURSOR = base;
  const char* YYMARKER = nullptr;
  const char* tokStart = base;
  auto at = [&](const char* p) { return line.pos[size_t(p - base)]; };
  auto emit = [&](Tok t, std::string text = {}) {
    Lexeme l;
    l.tok = t;
    l.text = std::move(text);
    l.loc = at(tokStart);
    out.push_back(std::move(l));
  };
  auto fail = [&](const std::string& msg, const char* where) {
    Lexeme l;
    l.tok = Tok::ERROR;
    l.text = msg;
    l.loc = at(where);
    out.push_back(std::move(l));
  };
  // A minus written directly before a number is part of it where no operand
  // ends before the minus (`-2^2` is (-2)^2, `x-2` stays a subtraction).
  auto emitNumber = [&](Tok t) {
    std::string text(tokStart, YYCURSOR);
    const size_t n = out.size();
    auto endsOperand = [](Tok k) {
      return k == Tok::ID || k == Tok::DECIMAL || k == Tok::FLOAT || k == Tok::STRING || k == Tok::RPAREN ||
             k == Tok::RBRACK || k == Tok::DOLLAR || k == Tok::STRING_PROFILE || k == Tok::UNDERSCORE;
    };
    if (n && out[n - 1].tok == Tok::MINUS && tokStart > base && tokStart[-1] == '-' &&
        (n == 1 || !endsOperand(out[n - 2].tok))) {
      out[n - 1].tok = t;
      out[n - 1].text = "-" + text;
      return;
    }
    emit(t, std::move(text));
  };
  auto emitType = [&](ir::Type ty) {
    emit(Tok::TYPE, std::string(tokStart, YYCURSOR));
    out.back().type = ty;
  };

  for (;;) {
    tokStart = YYCURSOR;
    /*!re2c
      re2c:define:YYCTYPE = char;
      re2c:yyfill:enable = 0;

      end = "\x00";
      digit = [0-9];
      id = [A-Za-z][A-Za-z0-9_$]*;

      end { if (size_t(tokStart - base) < line.text.size()) { fail("unexpected NUL character", tokStart); return out; }
            tokStart = YYCURSOR - 1; emit(Tok::END); return out; }
      [ \t\r\n]+ { continue; }
      "//" [^\x00]* {
        // A line comment ends with its physical line.
        int ln = at(tokStart).line;
        const char* p = tokStart;
        while (size_t(p - base) < line.text.size() && line.pos[size_t(p - base)].line == ln) ++p;
        YYCURSOR = p;
        continue;
      }
      "/*" {
        int depth = 1;
        const char* p = YYCURSOR;
        while (depth > 0) {
          if (*p == 0 && size_t(p - base) >= line.text.size()) { fail("unterminated /* comment", tokStart); return out; }
          if (p[0] == '/' && p[1] == '*') { ++depth; p += 2; }
          else if (p[0] == '*' && p[1] == '/') { --depth; p += 2; }
          else ++p;
        }
        YYCURSOR = p;
        continue;
      }
      "'" ([^'\x00] | "''")* "'" {
        std::string s(tokStart + 1, YYCURSOR - 1);
        emit(isProfileWord(s) ? Tok::STRING_PROFILE : Tok::STRING, s);
        continue;
      }
      "'" { fail("unterminated string literal", tokStart); return out; }

      "SELECT" | "select" { emit(Tok::SELECT); continue; }
      "STREAM" | "stream" { emit(Tok::STREAM); continue; }
      "FROM" | "from" { emit(Tok::FROM); continue; }
      "DECLARE" | "declare" { emit(Tok::DECLARE); continue; }
      "RETENTION" | "retention" { emit(Tok::RETENTION); continue; }
      "FILE" | "file" { emit(Tok::FILE_KW); continue; }
      "STORAGE" | "storage" { emit(Tok::STORAGE); continue; }
      "ROTATION" | "rotation" { emit(Tok::ROTATION); continue; }
      "SUBSTRAT" | "substrat" { emit(Tok::SUBSTRAT); continue; }
      "RULE" | "rule" { emit(Tok::RULE); continue; }
      "DISPOSABLE" | "disposable" { emit(Tok::DISPOSABLE); continue; }
      "ONESHOT" | "oneshot" { emit(Tok::ONESHOT); continue; }
      "HOLD" | "hold" { emit(Tok::HOLD); continue; }
      "TIMEOUT" | "timeout" { emit(Tok::TIMEOUT); continue; }
      "MQTT" | "mqtt" { emit(Tok::MQTT); continue; }
      "PUBLISH" | "publish" { emit(Tok::PUBLISH); continue; }
      "VOLATILE" | "volatile" { emit(Tok::VOLATILE); continue; }
      "PERSISTENT" | "persistent" { emit(Tok::PERSISTENT); continue; }
      "ON" | "on" { emit(Tok::ON); continue; }
      "WHEN" | "when" { emit(Tok::WHEN); continue; }
      "DUMP" | "dump" { emit(Tok::DUMP); continue; }
      "SYSTEM" | "system" { emit(Tok::SYSTEM); continue; }
      "DO" | "do" { emit(Tok::DO); continue; }
      "TO" | "to" { emit(Tok::TO); continue; }
      "TEXTFILE" | "textfile" { emit(Tok::TEXTFILE); continue; }
      "BINFILE" | "binfile" { emit(Tok::BINFILE); continue; }
      "DEVICE" | "device" { emit(Tok::DEVICE); continue; }
      "AND" | "and" { emit(Tok::AND); continue; }
      "OR" | "or" { emit(Tok::OR); continue; }
      "NOT" | "not" { emit(Tok::NOT); continue; }
      "MIN" | "min" { emit(Tok::MIN, "MIN"); continue; }
      "MAX" | "max" { emit(Tok::MAX, "MAX"); continue; }
      "AVG" | "avg" { emit(Tok::AVG, "AVG"); continue; }
      "SUMC" | "sumc" { emit(Tok::SUMC, "SUMC"); continue; }

      "BYTE" | "Byte" | "CHAR" | "Char" { emitType(ir::Type::BYTE); continue; }
      "INTEGER" | "Integer" { emitType(ir::Type::INTEGER); continue; }
      "UINT" | "Uint" { emitType(ir::Type::UINT); continue; }
      "FLOAT" | "Float" { emitType(ir::Type::FLOAT); continue; }
      "DOUBLE" | "Double" { emitType(ir::Type::DOUBLE); continue; }
      "STRING" | "String" { emitType(ir::Type::STRING); continue; }

      "TEXTSOURCE" | "textsource" { emit(Tok::PROFILE, "TEXTSOURCE"); continue; }

      "to_string" { emit(Tok::TO_STRING, "to_string"); continue; }
      "to_integer" | "to_float" | "to_double"
      | "Sqrt" | "Ceil" | "Abs" | "Floor" | "Sign" | "Chr" | "Length" | "ToNumber" | "ToTimeStamp"
      | "FloatCast" | "IntCast" | "Count" | "Crc" | "Sum" | "IsZero" | "IsNonZero" | "isnull" {
        emit(Tok::FN_WORD, std::string(tokStart, YYCURSOR)); continue; }

      id {
        std::string w(tokStart, YYCURSOR);
        if (ir::isProfileKeyword(w)) emit(Tok::PROFILE, upper(w));  // profiles.def's words
        else emit(Tok::ID, w);
        continue; }
      (digit+ | digit+ "." digit* | "." digit+) "E" [+-]? digit+ {
        fail("exponent notation is not supported in numbers: '" + std::string(tokStart, YYCURSOR) + "'", tokStart);
        return out; }
      digit+ { emitNumber(Tok::DECIMAL); continue; }
      digit+ "." digit* | "." digit+ { emitNumber(Tok::FLOAT); continue; }

      "(" { emit(Tok::LPAREN); continue; }
      ")" { emit(Tok::RPAREN); continue; }
      "[" { emit(Tok::LBRACK); continue; }
      "]" { emit(Tok::RBRACK); continue; }
      "," { emit(Tok::COMMA); continue; }
      "." { emit(Tok::DOT); continue; }
      "*" { emit(Tok::STAR); continue; }
      "/" { emit(Tok::SLASH); continue; }
      "+" { emit(Tok::PLUS); continue; }
      "-" { emit(Tok::MINUS); continue; }
      "_" { emit(Tok::UNDERSCORE); continue; }
      "@" { emit(Tok::AT); continue; }
      "#" { emit(Tok::HASH); continue; }
      "&" { emit(Tok::AMP); continue; }
      "%" { emit(Tok::PERCENT); continue; }
      ">=" { emit(Tok::GE); continue; }
      "<=" { emit(Tok::LE); continue; }
      "!=" { emit(Tok::NE); continue; }
      ">" { emit(Tok::GT); continue; }
      "<" { emit(Tok::LT); continue; }
      "=" { emit(Tok::EQ); continue; }
      ":" { emit(Tok::COLON); continue; }
      "^" { emit(Tok::CARET); continue; }
      "$" { emit(Tok::DOLLAR); continue; }
      * { fail(std::string("unexpected character '") + std::string(tokStart, YYCURSOR) + "'", tokStart); return out; }
    */
  }
}

}  // namespace rql
