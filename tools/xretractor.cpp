// xretractor: compile an RQL query set (-c prints the plan) and run it.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/stat.h>

#include "build_config.h"
#include "grammar/front.hpp"
#include "ir/compile.hpp"
#include "ir/dump.hpp"

namespace {

std::string baseName(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

void printBuildInfo() {
  fmt::print("RDB_OPT_DEDUP_SUBSTRATES={}\n", RDB_OPT_DEDUP_SUBSTRATES ? "ON" : "OFF");
  fmt::print("RDB_OPT_SHARE_EQUIVALENT_SELECTS={}\n", RDB_OPT_SHARE_EQUIVALENT_SELECTS ? "ON" : "OFF");
  fmt::print("RDB_OPT_COMMUTATIVE_ADD={}\n", RDB_OPT_COMMUTATIVE_ADD ? "ON" : "OFF");
  fmt::print("RDB_OPT_FACTOR_MATCHED_HASH_TIMEMOVES={}\n", RDB_OPT_FACTOR_MATCHED_HASH_TIMEMOVES ? "ON" : "OFF");
  fmt::print("RDB_BENCH_PROBE=OFF\n");
  fmt::print("RDB_OPT_SIMPLIFY_EXPRESSIONS={}\n", RDB_OPT_SIMPLIFY_EXPRESSIONS ? "ON" : "OFF");
}

// Error channels and their exit codes (docs/compatibility.md).
constexpr int kExitSyntax = 1, kExitFatal = 1, kExitCheck = 71, kExitRef = 4, kExitArgs = 22;

void report(const std::string& file, const ir::SrcLoc& loc, const std::string& msg) {
  if (loc.line > 0)
    fmt::print(stderr, "{}:{}:{}: error: {}\n", file, loc.line, loc.col, msg);
  else
    fmt::print(stderr, "{}: error: {}\n", file, msg);
}

// Parses and compiles; prints the error and returns its exit code on failure.
int compileFile(const std::string& argv0, const std::string& file, const ir::Options& opt, ir::Plan& out) {
  struct stat st {};
  if (stat(file.c_str(), &st) != 0) {
    fmt::print("{}: fatal error: file {} does not exist.\n", argv0, file);
    return 1;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "{}: error: unable to open file\n", file);
    return kExitCheck;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    auto statements = rql::parseText(ss.str());
    if (statements.empty()) {
      fmt::print(stderr, "{}: error: empty file: no statement found\n", file);
      return kExitCheck;
    }
    out = ir::compile(std::move(statements), opt);
    out.sourceFile = file;
    return 0;
  } catch (const rql::SyntaxError& e) {
    report(file, e.loc, e.what());
    return kExitSyntax;
  } catch (const ir::CompileError& e) {
    report(file, e.loc, e.what());
    return kExitCheck;
  } catch (const ir::RefError& e) {
    report(file, e.loc, e.what());
    return kExitRef;
  } catch (const ir::FatalError& e) {
    fmt::print(stderr, "\nFATAL: {}\n", e.what());
    return kExitFatal;
  }
}

int compileMode(int argc, char** argv) {
  CLI::App app{"xretractor -c: compile an RQL query file and print its plan"};
  std::string queryFile;
  bool onlyCompile = false, quiet = false, dot = false, csv = false, fields = false, tags = false, progs = false,
       rules = false, hideRule = false, transparent = false, buildInfo = false;
  std::string diagram;
  std::vector<std::string> disabled;
  app.add_flag("-c,--onlycompile", onlyCompile, "compile only, print the plan");
  app.add_option("-q,--queryfile,queryfile", queryFile, "query file");
  app.add_flag("-r,--quiet", quiet, "compile, print nothing");
  app.add_flag("-d,--dot", dot, "print Graphviz DOT instead of the plan");
  app.add_flag("-m,--csv", csv, "print the plan as tables");
  app.add_flag("-f,--fields", fields, "DOT: show fields");
  app.add_flag("-t,--tags", tags, "DOT: show field programs (needs -f)");
  app.add_flag("-s,--streamprogs", progs, "DOT: show stream programs");
  app.add_flag("-u,--rules", rules, "DOT: show rules");
  app.add_flag("-i,--hideruleprog", hideRule, "DOT: hide rule conditions");
  app.add_flag("-p,--transparent", transparent, "DOT: transparent background");
  app.add_option("-w,--diagram", diagram, "marble diagram G:N (not supported)");
  app.add_flag("-b,--build-info", buildInfo, "print optimizer switches and exit");
  app.add_option("--disable-pass", disabled,
                 "turn an optimizer pass off: dedup, share-selects, commutative-add, factor, simplify");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (buildInfo) {
    printBuildInfo();
    return 0;
  }
  if (tags && !fields) {
    fmt::print(stderr, "Conflicting parameters.\nTags are referencing fields - when you set tags, leave field in dots\n");
    return kExitArgs;
  }
  if (!diagram.empty()) {
    fmt::print(stderr, "Diagram output (-w) is not supported.\n");
    return kExitArgs;
  }
  ir::Options opt = ir::defaultOptions();
  for (auto& d : disabled) {
    if (d == "dedup") opt.dedupSubstrates = false;
    else if (d == "share-selects") opt.shareEquivalentSelects = opt.commutativeAdd = false;
    else if (d == "commutative-add") opt.commutativeAdd = false;
    else if (d == "factor") opt.factorHashTimemoves = false;
    else if (d == "simplify") opt.simplifyExpressions = false;
    else {
      fmt::print(stderr, "unknown pass '{}' for --disable-pass\n", d);
      return kExitArgs;
    }
  }
  const std::string argv0 = argv[0];
  if (queryFile.empty()) {
    fmt::print("{}: fatal error: no input file\n", argv0);
    return 1;
  }
  ir::Plan plan;
  if (int rc = compileFile(argv0, queryFile, opt, plan)) return rc;
  if (quiet) return 0;
  if (dot) {
    ir::DotOptions o{fields, tags, progs, rules, hideRule, transparent};
    fmt::print("{}", ir::dumpDot(plan, o));
  } else if (csv) {
    fmt::print("{}", ir::dumpTables(plan));
  } else {
    fmt::print("{}", ir::dumpPlan(plan));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Strip a trailing CR from each argument (scripts written on other systems).
  for (int i = 1; i < argc; ++i) {
    size_t n = strlen(argv[i]);
    if (n && argv[i][n - 1] == '\r') argv[i][n - 1] = 0;
  }
  bool compile = false, buildInfo = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-c" || a == "--onlycompile") compile = true;
    if (a == "-b" || a == "--build-info") buildInfo = true;
  }
  if (buildInfo) {
    printBuildInfo();
    return 0;
  }
  if (compile) return compileMode(argc, argv);
  fmt::print(stderr, "{}: running plans is not available in this build yet; use -c to compile\n", baseName(argv[0]));
  return 1;
}
