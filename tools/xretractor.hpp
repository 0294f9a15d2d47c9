// What xretractor's main (xretractor.cpp) and its jobs share: the exit codes, the run's options and state, the jobs.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/compile.hpp"
#include "tools/config.hpp"
#include "tools/instance.hpp"
#include "tools/metrics.hpp"

namespace xretractor {

// Error channels and their exit codes (docs/compatibility.md).
constexpr int kExitSyntax = 1, kExitFatal = 1, kExitCheck = 71, kExitRef = 4, kExitConfig = 4, kExitArgs = 22;
using tools::kExitInstance;
using tools::kExitIpc;

extern std::atomic<bool> gStop;
extern tools::Config gConfig;
extern std::unique_ptr<tools::Metrics> gMetrics;  // --metrics: lives across the plans an instance runs

// Everything `xretractor [options] queryfile` was asked to do.
struct RunArgs {
  std::string queryFile, name, limitText, jitTier = "auto", jitCache, metrics, http, webDir;
  int64_t limit = 0;
  bool noAnyKey = false, wait = false, quiet = false, verbose = false, status = false, noClock = false,
       untilEof = false, interpret = false, cleanup = false, noFuse = false, noChains = false, parallel = false,
       strict = false, allowAdhocSystem = false, listenAny = false, resume = false;
  std::optional<double> checkpointS;  // --checkpoint S, else [run] checkpoint_s, else the engine's default
  int threads = 0, blockSlots = 0, spinUs = 0;
  std::vector<std::string> disabled;
};

// What a client asked of the instance's plan (xqry --reset).
struct PlanSwitch {
  bool toIdle = false;           // an empty plan: the engine stops, the instance stays up
  std::optional<ir::Plan> load;  // a plan for an idle instance
  bool fromClient = false;       // the plan running came from xqry --reset
};

// ---------------------------------------------------------------- compiling (xretractor_compile.cpp)
void printBuildInfo();
// --disable-pass NAME: turns one optimizer pass off (compile and run modes).
inline constexpr const char* kPassNames =
    "turn an optimizer pass off: dedup, share-selects, commutative-add, factor, simplify";
bool disablePasses(const std::vector<std::string>& names, ir::Options& opt);
// The compiler's options with what the configuration sets for compilation.
ir::Options compileOptions();
// Parses and compiles; prints the error and returns its exit code on failure.
// Warnings are printed located; with `strict` they are errors.
int compileFile(const std::string& argv0, const std::string& file, const ir::Options& opt, ir::Plan& out, bool strict);
// Parses and compiles a query set's text; `file` names it in diagnostics. 0
// or the exit code of the failure, whose messages went to stderr or `sink`.
int compileText(const std::string& text, const std::string& file, const ir::Options& opt, ir::Plan& out, bool strict,
                std::string* sink);
// xretractor -c: its own options, the plan printed.
int compileMode(int argc, char** argv);

// ---------------------------------------------------------------- the run (xretractor_run.cpp)
// Runs the plan with its clients served between slots; the exit code.
// xqry --reset replaces the plan in place, or (an empty plan) makes the
// instance idle: sw.toIdle, the server stays up.
int runEngine(tools::Instance& inst, const ir::Plan& plan, const RunArgs& a, PlanSwitch& sw);

// ---------------------------------------------------------------- plans and their switches (xretractor_reset.cpp)
// Whether a plan text holds no statement (only blanks and comments).
bool emptyPlanText(const std::string& text);
// Compiles a plan a client sent: "" or what is wrong with it, located.
std::string compileSent(const std::string& text, const RunArgs& a, ir::Plan& out);
// The plan's storage directory when it exists (a missing one is the engine's error to report).
std::optional<std::string> existingStorageDir(ir::Plan& plan);
// Plans one after another: the one the instance started with, then what
// clients load; idle in between.
int serve(tools::Instance& inst, std::optional<ir::Plan> plan, const RunArgs& a);

}  // namespace xretractor
