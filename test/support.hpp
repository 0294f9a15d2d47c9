// Helpers shared by the unit tests: compile query text the way xretractor does.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "grammar/front.hpp"
#include "ir/compile.hpp"
#include "ir/dump.hpp"

namespace testing {

inline ir::Plan compileText(const std::string& text, ir::Options opt = ir::defaultOptions()) {
  return ir::compile(rql::parseText(text), opt);
}

inline std::string planOf(const std::string& text, ir::Options opt = ir::defaultOptions()) {
  return ir::dumpPlan(compileText(text, opt));
}

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline const ir::Query& query(const ir::Plan& p, const std::string& id) { return p.get(id); }

inline bool has(const ir::Plan& p, const std::string& id) { return p.find(id) != nullptr; }

}  // namespace testing
