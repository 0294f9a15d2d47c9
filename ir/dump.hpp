// Text renderings of a compiled plan: the `xretractor -c` listing, DOT and
// the tabular (CSV-like) listing.
#pragma once

#include <string>

#include "ir.hpp"

namespace ir {

std::string dumpPlan(const Plan& p);

struct DotOptions {
  bool fields = false, tags = false, streamProgs = false, rules = false, hideRuleProg = false, transparent = false;
};
std::string dumpDot(const Plan& p, const DotOptions& o);

std::string dumpTables(const Plan& p);

}  // namespace ir
