// xretractor's compile mode (-c, -b, the plan dumps) and the compile of query files and of plans clients send.
#include <fmt/core.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

#include "build_config.h"
#include "grammar/front.hpp"
#include "ir/dump.hpp"
#include "tools/xretractor.hpp"
#include "vm/vm.hpp"

namespace xretractor {

void printBuildInfo() {
  fmt::print("RDB_OPT_DEDUP_SUBSTRATES={}\n", RDB_OPT_DEDUP_SUBSTRATES ? "ON" : "OFF");
  fmt::print("RDB_OPT_SHARE_EQUIVALENT_SELECTS={}\n", RDB_OPT_SHARE_EQUIVALENT_SELECTS ? "ON" : "OFF");
  fmt::print("RDB_OPT_COMMUTATIVE_ADD={}\n", RDB_OPT_COMMUTATIVE_ADD ? "ON" : "OFF");
  fmt::print("RDB_OPT_FACTOR_MATCHED_HASH_TIMEMOVES={}\n", RDB_OPT_FACTOR_MATCHED_HASH_TIMEMOVES ? "ON" : "OFF");
  fmt::print("RDB_BENCH_PROBE=OFF\n");
  fmt::print("RDB_OPT_SIMPLIFY_EXPRESSIONS={}\n", RDB_OPT_SIMPLIFY_EXPRESSIONS ? "ON" : "OFF");
}

namespace {

// Diagnostics go to stderr, or to `sink` when one is given (a plan sent by a client).
void say(std::string* sink, const std::string& line) {
  if (sink) *sink += line;
  else fmt::print(stderr, "{}", line);
}

void report(const std::string& file, const ir::SrcLoc& loc, const std::string& msg, std::string* sink = nullptr) {
  if (loc.line > 0) say(sink, fmt::format("{}:{}:{}: error: {}\n", file, loc.line, loc.col, msg));
  else say(sink, fmt::format("{}: error: {}\n", file, msg));
}
}  // namespace

int compileFile(const std::string& argv0, const std::string& file, const ir::Options& opt, ir::Plan& out, bool strict) {
  struct stat st {};
  if (stat(file.c_str(), &st) != 0) {
    fmt::print("{}: fatal error: file {} does not exist.\n", argv0, file);
    return kExitFatal;
  }
  // Only a regular file of sane size: /dev/zero or a FIFO would be read without end.
  constexpr off_t kMaxQueryFile = 16 << 20;
  if (S_ISDIR(st.st_mode)) {
    fmt::print(stderr, "{}: error: is a directory, not a query file\n", file);
    return kExitCheck;
  }
  if (!S_ISREG(st.st_mode)) {
    fmt::print(stderr, "{}: error: not a regular file (a query file must be a regular file)\n", file);
    return kExitCheck;
  }
  if (st.st_size > kMaxQueryFile) {
    fmt::print(stderr, "{}: error: query file of {} bytes; the limit is {} bytes\n", file, int64_t(st.st_size),
               int64_t(kMaxQueryFile));
    return kExitCheck;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "{}: error: unable to open file\n", file);
    return kExitCheck;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return compileText(ss.str(), file, opt, out, strict, nullptr);
}

int compileText(const std::string& text, const std::string& file, const ir::Options& opt, ir::Plan& out, bool strict,
                std::string* sink) {
  try {
    // Warnings of the parser and of the passes, located; true when they fail the compile.
    auto warn = [&](const std::vector<ir::Warning>& ws) {
      for (auto& w : ws)
        say(sink,
            fmt::format("{}:{}:{}: {}: {}\n", file, w.loc.line, w.loc.col, strict ? "error" : "warning", w.message));
      return strict && !ws.empty();
    };
    std::vector<ir::Warning> warnings;
    auto statements = rql::parseText(text, &warnings);
    if (warn(warnings)) return kExitCheck;
    if (statements.empty()) {
      say(sink, fmt::format("{}: error: empty file: no statement found\n", file));
      return kExitCheck;
    }
    out = ir::compile(std::move(statements), opt);
    out.sourceFile = file;
    if (warn(out.warnings)) return kExitCheck;
    return 0;
  } catch (const rql::SyntaxError& e) {
    report(file, e.loc, e.what(), sink);
    return kExitSyntax;
  } catch (const ir::CompileError& e) {
    report(file, e.loc, e.what(), sink);
    return kExitCheck;
  } catch (const ir::RefError& e) {
    report(file, e.loc, e.what(), sink);
    return kExitRef;
  } catch (const ir::FatalError& e) {
    say(sink, (sink ? "FATAL: " : "\nFATAL: ") + std::string(e.what()) + "\n");
    return kExitFatal;
  }
}

bool disablePasses(const std::vector<std::string>& names, ir::Options& opt) {
  for (auto& d : names) {
    if (d == "dedup") opt.dedupSubstrates = false;
    else if (d == "share-selects") opt.shareEquivalentSelects = opt.commutativeAdd = false;
    else if (d == "commutative-add") opt.commutativeAdd = false;
    else if (d == "factor") opt.factorHashTimemoves = false;
    else if (d == "simplify") opt.simplifyExpressions = false;
    else {
      fmt::print(stderr, "unknown pass '{}' for --disable-pass\n", d);
      return false;
    }
  }
  return true;
}

ir::Options compileOptions() {
  ir::Options opt = ir::defaultOptions();
  opt.historyBudgetBytes = gConfig.historyMemoryMib << 20;
  opt.defaultRetention = gConfig.defaultRetention;
  return opt;
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
  app.add_option("--disable-pass", disabled, kPassNames);
  std::string config;  // read by main() before the options are parsed
  app.add_option("-g,--config", config, "configuration file (TOML): its retention and history budget apply");
  bool disasm = false;
  app.add_flag("--disasm", disasm, "print each stream's VM bytecode instead of the plan");
  bool strict = false;
  app.add_flag("--strict", strict, "treat warnings (grouping, deprecated forms) as errors");
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
    fmt::print(stderr,
               "Conflicting parameters.\nTags are referencing fields - when you set tags, leave field in dots\n");
    return kExitArgs;
  }
  if (!diagram.empty()) {
    fmt::print(stderr, "Diagram output (-w) is not supported.\n");
    return kExitArgs;
  }
  ir::Options opt = compileOptions();
  if (!disablePasses(disabled, opt)) return kExitArgs;
  const std::string argv0 = argv[0];
  if (queryFile.empty()) {
    fmt::print("{}: fatal error: no input file\n", argv0);
    return kExitFatal;
  }
  ir::Plan plan;
  if (int rc = compileFile(argv0, queryFile, opt, plan, strict)) return rc;
  if (quiet) return 0;
  if (disasm) {
    fmt::print("{}", vm::disassemble(plan));
  } else if (dot) {
    ir::DotOptions o{fields, tags, progs, rules, hideRule, transparent};
    fmt::print("{}", ir::dumpDot(plan, o));
  } else if (csv) {
    fmt::print("{}", ir::dumpTables(plan));
  } else {
    fmt::print("{}", ir::dumpPlan(plan));
  }
  return 0;
}

}  // namespace xretractor
