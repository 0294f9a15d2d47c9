// The parser of one logical line (rql.y), for the entry points in front.cpp.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ir.hpp"
#include "lexer/lexer.hpp"

namespace rql {

// Parses one logical line's statements onto `out`. With `firstIndex`, records
// where each id first appears (rules find their stream by it) and looks them up.
// Warnings go to `warnings` when given.
void parseLine(const LogicalLine& line, std::vector<ir::Query>& out,
               std::unordered_map<std::string, size_t>* firstIndex = nullptr,
               std::vector<ir::Warning>* warnings = nullptr);

}  // namespace rql
