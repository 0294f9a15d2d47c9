// RQL front end: query text -> list of IR queries in file order (statements
// lowered to reverse Polish token programs). Compilation passes live in ir/.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace rql {

// A syntax or lexical error: location and message (exit code 1).
struct SyntaxError : std::runtime_error {
  ir::SrcLoc loc;
  SyntaxError(const std::string& m, ir::SrcLoc l) : std::runtime_error(m), loc(l) {}
};

// Parses a whole query file. Throws SyntaxError, ir::CompileError.
// Returns the statements in file order; rules are attached to their streams.
// Warnings (where the book groups differently, deprecated forms) go to `warnings`.
std::vector<ir::Query> parseText(const std::string& text, std::vector<ir::Warning>* warnings = nullptr);

// What a statement is, from its first word (case as the lexer accepts it).
enum class StatementKind { SELECT, DECLARE, RULE, DIRECTIVE, OTHER };
StatementKind statementKind(const std::string& text);

// Parses one ad hoc statement (a single logical line): a SELECT or DECLARE
// comes back as itself, a RULE as the stream of `live` it is ON with the rule
// appended (without `live` a RULE finds no stream).
std::vector<ir::Query> parseStatement(const std::string& text, const std::vector<ir::Query>* live = nullptr);

}  // namespace rql
