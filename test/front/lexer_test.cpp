// Lexer: logical lines (language.md §1.1) and tokens (§1.2, §1.3).
#include "../unit_helpers.hpp"
#include "ir/profiles.hpp"

using rql::Tok;

namespace {

std::vector<std::string> lines(const std::string& file) {
  std::vector<std::string> out;
  for (auto& l : rql::splitLogicalLines(file)) out.push_back(l.text);
  return out;
}

// Lexes one logical line; returns "TOK:text TOK:text ..." without the END token.
std::string lex(const std::string& text) {
  rql::LogicalLine line;
  line.text = text;
  for (size_t i = 0; i <= text.size(); ++i) line.pos.push_back({1, int(i) + 1});
  std::string out;
  for (auto& l : rql::lexLine(line)) {
    if (l.tok == Tok::END) break;
    if (!out.empty()) out += ' ';
    out += rql::tokName(l.tok);
    if (!l.text.empty() && l.tok != Tok::ERROR) out += ":" + l.text;
    if (l.tok == Tok::ERROR) out += "<" + l.text + ">";
  }
  return out;
}

std::vector<rql::Lexeme> lexemes(const std::string& text) {
  rql::LogicalLine line;
  line.text = text;
  for (size_t i = 0; i <= text.size(); ++i) line.pos.push_back({1, int(i) + 1});
  return rql::lexLine(line);
}

bool lexFails(const std::string& text) {
  auto l = lexemes(text);
  return !l.empty() && l.back().tok == Tok::ERROR;
}

}  // namespace

TEST_CASE("logical lines: empty lines vanish, one statement line per physical line", "[lexer][lines]") {
  CHECK(lines("") == std::vector<std::string>{});
  CHECK(lines("\n\n") == std::vector<std::string>{});
  CHECK(lines("a\n\nb\n") == std::vector<std::string>{"a", "b"});
  CHECK(lines("no newline at end") == std::vector<std::string>{"no newline at end"});
}

TEST_CASE("logical lines: a column-0 # line is discarded entirely", "[lexer][lines][comment]") {
  CHECK(lines("# a comment\nSELECT\n") == std::vector<std::string>{"SELECT"});
  CHECK(lines("#no space needed\nx\n") == std::vector<std::string>{"x"});
  CHECK(lines("#SELECT * STREAM s FROM a\n") == std::vector<std::string>{});
  // A comment-only file leaves no logical line at all.
  CHECK(lines("# one\n# two\n").empty());
}

TEST_CASE("logical lines: an indented # line is a comment too (adopted: first non-blank character)",
          "[lexer][lines][comment]") {
  // language.md §1.2, recommended ADOPT: '#' introduces a comment only as the first
  // non-blank character of a physical line; such a line yields no tokens.
  std::string all;
  for (auto& l : rql::splitLogicalLines("   # note\n\t# other\nx\n")) all += "[" + lex(l.text) + "]";
  CHECK((all == "[identifier:x]" || all == "[][][identifier:x]"));
}

TEST_CASE("logical lines: backslash continuation joins physical lines with one space", "[lexer][lines]") {
  CHECK(lines("SELECT a \\\nSTREAM x\n") == std::vector<std::string>{"SELECT a  STREAM x"});
  CHECK(lines("a\\\nb\\\nc\n") == std::vector<std::string>{"a b c"});
  // Empty and column-0 # lines inside a continuation are skipped without ending it.
  CHECK(lines("a \\\n# comment\nb\n") == std::vector<std::string>{"a  b"});
  CHECK(lines("a \\\n\nb\n") == std::vector<std::string>{"a  b"});
  // An unterminated continuation at the end of the file is dropped silently.
  CHECK(lines("x\ny \\\n") == std::vector<std::string>{"x"});
  CHECK(lines("y \\") == std::vector<std::string>{});
}

TEST_CASE("logical lines: positions map back to physical lines and columns", "[lexer][lines]") {
  auto ls = rql::splitLogicalLines("\nSELECT a \\\n  STREAM x\n");
  REQUIRE(ls.size() == 1);
  const auto& l = ls[0];
  REQUIRE(l.pos.size() == l.text.size() + 1);
  CHECK(l.pos[0].line == 2);
  CHECK(l.pos[0].col == 1);
  size_t s = l.text.find("STREAM");
  REQUIRE(s != std::string::npos);
  CHECK(l.pos[s].line == 3);
  CHECK(l.pos[s].col == 3);
}

TEST_CASE("logical lines: a CR of a CRLF file is kept and lexed as whitespace", "[lexer][lines]") {
  CHECK(lines("a\r\nb\r\n") == std::vector<std::string>{"a\r", "b\r"});
  CHECK(lex("SELECT\r") == "SELECT");
}

TEST_CASE("lexer: inline # is the interleave operator, never a comment", "[lexer][hash]") {
  CHECK(lex("core0#core1") == "identifier:core0 '#' identifier:core1");
  CHECK(lex("core0 #core1") == "identifier:core0 '#' identifier:core1");
  CHECK(lex("core0 # core1") == "identifier:core0 '#' identifier:core1");
  CHECK(lex("(core0 # core1) + core2") == "'(' identifier:core0 '#' identifier:core1 ')' '+' identifier:core2");
}

TEST_CASE("lexer: // line comments and nested /* */ block comments", "[lexer][comment]") {
  CHECK(lex("a // rest of line") == "identifier:a");
  CHECK(lex("a//b") == "identifier:a");
  CHECK(lex("a /* x */ b") == "identifier:a identifier:b");
  CHECK(lex("a /* x /* y */ z */ b") == "identifier:a identifier:b");
  CHECK(lex("a /* /* /* */ */ */ b") == "identifier:a identifier:b");
  CHECK(lex("a/**/b") == "identifier:a identifier:b");
  CHECK(lexFails("a /* never closed"));
  CHECK(lexFails("a /* x /* y */ still open"));
}

TEST_CASE("lexer: a block comment may span physical lines joined by a backslash", "[lexer][comment]") {
  auto ls = rql::splitLogicalLines("a /* x \\\n y */ b\n");
  REQUIRE(ls.size() == 1);
  auto l = rql::lexLine(ls[0]);
  REQUIRE(l.size() == 3);
  CHECK(l[0].tok == Tok::ID);
  CHECK(l[1].tok == Tok::ID);
  CHECK(l[1].text == "b");
  CHECK(l[1].loc.line == 2);
  CHECK(l[2].tok == Tok::END);
}

TEST_CASE("lexer: keywords exist in exactly two spellings", "[lexer][keywords]") {
  CHECK(lex("SELECT select Select") == "SELECT SELECT identifier:Select");
  CHECK(lex("STREAM stream FROM from") == "STREAM STREAM FROM FROM");
  CHECK(lex("DECLARE declare FILE file") == "DECLARE DECLARE FILE FILE");
  CHECK(lex("RULE ON WHEN DO DUMP TO SYSTEM") == "RULE ON WHEN DO DUMP TO SYSTEM");
  CHECK(lex("AND and OR or NOT not") == "AND AND OR OR NOT NOT");
  CHECK(lex("And") == "identifier:And");
}

TEST_CASE("lexer: TEXTFILE, BINFILE and DEVICE source keywords", "[lexer][keywords]") {
  CHECK(lex("TEXTFILE textfile") == "TEXTFILE TEXTFILE");
  CHECK(lex("BINFILE binfile") == "BINFILE BINFILE");
  CHECK(lex("DEVICE device") == "DEVICE DEVICE");
  CHECK(lex("TextFile") == "identifier:TextFile");
}

TEST_CASE("lexer: field type words", "[lexer][keywords]") {
  auto l = lexemes("BYTE CHAR Char INTEGER Integer UINT FLOAT DOUBLE STRING String");
  std::vector<ir::Type> want{ir::Type::BYTE, ir::Type::BYTE,  ir::Type::BYTE,   ir::Type::INTEGER, ir::Type::INTEGER,
                             ir::Type::UINT, ir::Type::FLOAT, ir::Type::DOUBLE, ir::Type::STRING,  ir::Type::STRING};
  REQUIRE(l.size() == want.size() + 1);
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(l[i].tok == Tok::TYPE);
    CHECK(l[i].type == want[i]);
  }
  CHECK(lex("byte") == "identifier:byte");
}

TEST_CASE("lexer: reducers and function words are reserved in their exact spelling", "[lexer][keywords]") {
  CHECK(lex("MIN min MAX AVG avg SUMC sumc") == "MIN:MIN MIN:MIN MAX:MAX AVG:AVG AVG:AVG SUMC:SUMC SUMC:SUMC");
  CHECK(lex("Sqrt isnull to_integer") == "function name:Sqrt function name:isnull function name:to_integer");
  CHECK(lex("to_string") == "to_string:to_string");
  CHECK(lex("sqrt") == "identifier:sqrt");
}

TEST_CASE("lexer: identifiers", "[lexer][ident]") {
  CHECK(lex("core0 a_b x$1 STREAM_ADD_a_b") ==
        "identifier:core0 identifier:a_b identifier:x$1 identifier:STREAM_ADD_a_b");
  CHECK(lex("_") == "'_'");
  CHECK(lex("s[_]") == "identifier:s '[' '_' ']'");
}

TEST_CASE("lexer: numbers", "[lexer][numbers]") {
  CHECK(lex("42") == "integer:42");
  CHECK(lex("0.25 .5 5.") == "decimal number:0.25 decimal number:.5 decimal number:5.");
  CHECK(lex("1/10") == "integer:1 '/' integer:10");
  // A '-' directly before a number is part of it unless an operand ends before it.
  CHECK(lex("-5") == "integer:-5");
  CHECK(lex("(-2.5") == "'(' decimal number:-2.5");
  CHECK(lex("x-5") == "identifier:x '-' integer:5");
  CHECK(lex("x[0]-5 )-5 2-5") ==
        "identifier:x '[' integer:0 ']' '-' integer:5 ')' '-' integer:5 integer:2 '-' integer:5");
  CHECK(lex("x*-5") == "identifier:x '*' integer:-5");
  CHECK(lex("- 5") == "'-' integer:5");
  // Exponent notation is lexed but accepted by no rule.
  CHECK(lexFails("1E5"));
  CHECK(lexFails("2.5E-3"));
}

TEST_CASE("lexer: strings and profile strings", "[lexer][strings]") {
  CHECK(lex("'abc'") == "string:abc");
  CHECK(lex("'it''s'") == "string:it''s");
  CHECK(lex("'memory' 'DEFAULT' 'Memory'") == "profile string:memory profile string:DEFAULT string:Memory");
  CHECK(lex("''") == "string");
  CHECK(lexFails("'open"));
}

TEST_CASE("lexer: operators and punctuation, longest match first", "[lexer][ops]") {
  CHECK(lex("( ) [ ] , . * / + - @ # & % :") == "'(' ')' '[' ']' ',' '.' '*' '/' '+' '-' '@' '#' '&' '%' ':'");
  CHECK(lex("> < = != >= <=") == "'>' '<' '=' '!=' '>=' '<='");
  CHECK(lex("a>=b") == "identifier:a '>=' identifier:b");
  CHECK(lexFails("a ~ b"));
}

TEST_CASE("lexer: tokens carry their physical column", "[lexer][loc]") {
  auto l = lexemes("SELECT  x");
  REQUIRE(l.size() == 3);
  CHECK(l[0].loc.col == 1);
  CHECK(l[1].loc.col == 9);
}

TEST_CASE("storage profile words come from the profile table", "[lexer][profiles]") {
  CHECK(lex("posixshd MEMORY Default textsource") ==
        "storage profile:POSIXSHD storage profile:MEMORY identifier:Default "
        "storage profile:TEXTSOURCE");
  CHECK(lex("posixshdx memory_1") == "identifier:posixshdx identifier:memory_1");
  CHECK(lex("'direct' 'Direct' 'device'") == "profile string:direct string:Direct profile string:device");
  CHECK(ir::profileNames() == "DEFAULT, MEMORY, DIRECT, POSIX, POSIXSHD or GENERIC");
  REQUIRE(ir::findProfile("POSIXSHD"));
  CHECK(ir::findProfile("POSIXSHD")->shadow);
  CHECK(ir::findProfile("posix") == nullptr);
}
