// compile(): runs every pass in order over a parsed plan.
#pragma once

#include <vector>

#include "ir.hpp"

namespace ir {

// Options::defaults() reflects the build's optimizer switches (meson_options.txt).
Options defaultOptions();

// Compiles the statements (file order) into a plan. Throws CompileError,
// RefError or FatalError; a thrown error leaves nothing half-built behind.
Plan compile(std::vector<Query> statements, const Options& opt);

// Recompiles an already compiled plan (idempotent); used for ad hoc imports.
void compilePlan(Plan& p);

}  // namespace ir
