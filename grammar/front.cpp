// The front end's entry points: a whole query file, one ad hoc statement,
// and the kind of a statement.
#include "grammar/front.hpp"

#include "grammar/line_parser.hpp"

namespace rql {

std::vector<ir::Query> parseText(const std::string& text, std::vector<ir::Warning>* warnings) {
  std::vector<ir::Query> out;
  std::unordered_map<std::string, size_t> firstIndex;  // rules find their stream without a scan
  for (auto& line : splitLogicalLines(text)) parseLine(line, out, &firstIndex, warnings);
  return out;
}

// An ad hoc statement is exactly one SELECT, DECLARE or RULE on one logical
// line: a directive or a second statement after it is refused. A RULE needs
// the running streams (`live`) to find the stream it is ON; it comes back as
// that stream's copy with the rule appended. Every error names its line:col
// in the message as well (it travels as text).
std::vector<ir::Query> parseStatement(const std::string& text, const std::vector<ir::Query>* live) {
  auto located = [](const ir::SrcLoc& l, const std::string& m) {
    return std::to_string(l.line) + ":" + std::to_string(l.col) + ": " + m;
  };
  const std::string one = "an ad hoc statement is exactly one SELECT, DECLARE or RULE";
  std::vector<ir::Query> out;
  const bool rule = statementKind(text) == StatementKind::RULE;
  if (rule && live) out = *live;
  const size_t seeded = out.size();
  std::vector<size_t> rulesBefore;
  for (auto& q : out) rulesBefore.push_back(q.rules.size());
  try {
    const LogicalLine* first = nullptr;
    const auto lines = splitLogicalLines(text);
    for (auto& line : lines) {
      auto lex = lexLine(line);
      if (lex.size() == 1 && lex[0].tok == Tok::END) continue;  // only blanks and comments
      if (first) throw SyntaxError(one + "; nothing may follow it", lex[0].loc);
      first = &line;
    }
    if (first) parseLine(*first, out);
  } catch (const SyntaxError& e) {
    throw SyntaxError(located(e.loc, e.what()), e.loc);
  } catch (const ir::CompileError& e) {
    throw ir::CompileError(located(e.loc, e.what()), e.loc);
  }
  if (rule) {
    if (out.size() > seeded)
      throw SyntaxError(located(out[seeded].loc, one + "; a statement may not follow the RULE"), out[seeded].loc);
    std::vector<ir::Query> target;
    for (size_t i = 0; i < seeded; ++i) {
      if (out[i].rules.size() == rulesBefore[i]) continue;
      if (!target.empty() || out[i].rules.size() > rulesBefore[i] + 1)
        throw SyntaxError(located(out[i].rules.back().loc, one + "; a second RULE may not follow it"),
                          out[i].rules.back().loc);
      target.push_back(out[i]);
    }
    if (target.empty()) throw SyntaxError(located({1, 1}, one + "; none found"), {1, 1});
    return target;
  }
  if (out.empty()) throw SyntaxError(located({1, 1}, one + "; none found"), {1, 1});
  const ir::Query& q = out[0];
  if (!q.family.empty())
    throw SyntaxError(located(q.loc, "a stream generator (STREAM " + q.family + "[N]) cannot be imported ad hoc"),
                      q.loc);
  if (q.isDirective()) throw SyntaxError(located(q.loc, one + "; a directive is not one"), q.loc);
  if (out.size() > 1 && out[1].isSubstrat)
    throw SyntaxError(located(q.loc, "a SELECT with MIN/MAX/AVG/SUMC(x : W) cannot be imported ad hoc"), q.loc);
  if (out.size() > 1) {
    const ir::Query& next = out[1];
    const char* what = next.isDirective() ? "a directive" : next.isDeclaration() ? "a DECLARE" : "a second statement";
    throw SyntaxError(located(next.loc, one + "; " + what + " may not follow it"), next.loc);
  }
  if (!q.rules.empty()) throw SyntaxError(located(q.rules[0].loc, one + "; a RULE may not follow it"), q.rules[0].loc);
  return out;
}

// The first word of the first line that has one, as the lexer reads it.
StatementKind statementKind(const std::string& text) {
  for (auto& line : splitLogicalLines(text)) {
    auto lex = lexLine(line);
    switch (lex[0].tok) {
      case Tok::END: continue;  // only blanks and comments
      case Tok::SELECT: return StatementKind::SELECT;
      case Tok::DECLARE: return StatementKind::DECLARE;
      case Tok::RULE: return StatementKind::RULE;
      case Tok::STORAGE:
      case Tok::SUBSTRAT:
      case Tok::ROTATION: return StatementKind::DIRECTIVE;
      default: return StatementKind::OTHER;
    }
  }
  return StatementKind::OTHER;
}

}  // namespace rql
