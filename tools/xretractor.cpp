// xretractor: compile an RQL query set (-c prints the plan) and run it.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <atomic>
#include <charconv>
#include <csignal>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "build_config.h"
#include "engine/engine.hpp"
#include "grammar/front.hpp"
#include "ipc/ipc.hpp"
#include "ir/compile.hpp"
#include "ir/dump.hpp"
#include "storage/lock.hpp"
#include "tools/config.hpp"
#include "tools/instance.hpp"
#include "tools/live_page.hpp"
#include "tools/log.hpp"
#include "tools/metrics.hpp"
#include "tools/serve.hpp"
#include "tools/version.hpp"
#include "vm/vm.hpp"

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
constexpr int kExitSyntax = 1, kExitFatal = 1, kExitCheck = 71, kExitRef = 4, kExitConfig = 4, kExitArgs = 22,
              kExitIpc = 10, kExitInstance = 37;

// Diagnostics go to stderr, or to `sink` when one is given (a plan sent by a client).
void say(std::string* sink, const std::string& line) {
  if (sink) *sink += line;
  else fmt::print(stderr, "{}", line);
}

void report(const std::string& file, const ir::SrcLoc& loc, const std::string& msg, std::string* sink = nullptr) {
  if (loc.line > 0) say(sink, fmt::format("{}:{}:{}: error: {}\n", file, loc.line, loc.col, msg));
  else say(sink, fmt::format("{}: error: {}\n", file, msg));
}

int compileText(const std::string& text, const std::string& file, const ir::Options& opt, ir::Plan& out, bool strict,
                std::string* sink);

// Parses and compiles; prints the error and returns its exit code on failure.
// Warnings are printed located; with `strict` they are errors.
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

// Parses and compiles a query set's text; `file` names it in diagnostics. 0
// or the exit code of the failure, whose messages went to stderr or `sink`.
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

std::atomic<bool> gStop{false};
tools::Config gConfig;

// --disable-pass NAME: turns one optimizer pass off (compile and run modes).
const char* kPassNames = "turn an optimizer pass off: dedup, share-selects, commutative-add, factor, simplify";
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

// The compiler's options with what the configuration sets for compilation.
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

void onSignal(int) { gStop.store(true); }

std::unique_ptr<tools::Metrics> gMetrics;  // --metrics: lives across the plans an instance runs

// Everything `xretractor [options] queryfile` was asked to do.
struct RunArgs {
  std::string queryFile, name, limitText, jitTier = "auto", metrics, http, webDir;
  int64_t limit = 0;
  bool noAnyKey = false, wait = false, quiet = false, verbose = false, status = false, noClock = false,
       untilEof = false, interpret = false, cleanup = false, noFuse = false, parallel = false, strict = false,
       allowAdhocSystem = false, listenAny = false;
  int threads = 0, blockSlots = 0, spinUs = 0;
  std::vector<std::string> disabled;
};

void addRunOptions(CLI::App& app, RunArgs& a, CLI::Option*& limitOpt) {
  static std::string config;                           // read by main() before the options are parsed
  static bool compileOnly = false, buildInfo = false;  // handled by main() before this parser runs
  app.add_option("-q,--queryfile,queryfile", a.queryFile, "query file");
  const char* compileGroup = "Compile (xretractor -c -h lists the compile options)";
  app.add_flag("-c,--onlycompile", compileOnly, "compile and print the plan, run nothing")->group(compileGroup);
  app.add_flag("-b,--build-info", buildInfo, "print the optimizer switches of this build")->group(compileGroup);
  app.add_flag("--strict", a.strict, "treat warnings (grouping, deprecated forms) as errors")->group(compileGroup);
  app.add_option("--disable-pass", a.disabled, kPassNames)->group(compileGroup);

  const char* run = "Run";
  limitOpt =
      app.add_option("-m,--llimitqry", a.limitText, "process the zero step and N-1 slots (0 = unlimited)")->group(run);
  app.add_flag("-f,--no-clock", a.noClock, "do not wait for slot deadlines (offline run)")->group(run);
  app.add_flag("-u,--until-eof", a.untilEof, "stop when a source runs out of data")->group(run);
  app.add_flag("--interpret", a.interpret, "run field programs on the bytecode VM")->group(run);
  app.add_option("-g,--config", config, "configuration file (TOML)")->group(run);
  app.add_option("--threads", a.threads, "worker threads (default: all cores; 1 = serial)")->group(run);
  app.add_flag("--parallel", a.parallel,
               "run independent pipelines side by side from the first block (default: when their measured cost "
               "says it pays)")
      ->group(run);
  app.add_option("--block", a.blockSlots, "most slots run as one block (default 512; 1 = slot by slot)")
      ->check(CLI::Range(1, 1 << 16))
      ->group(run);
  app.add_flag("--no-fuse", a.noFuse, "materialise every VOLATILE window (no folding into its reducer)")->group(run);
  app.add_option("--jit-tier", a.jitTier,
                 "auto (quick code, then optimised code off the slot thread), quick or optimised")
      ->check(CLI::IsMember({"auto", "quick", "optimised"}))
      ->group(run);
  app.add_option("--spin-us", a.spinUs,
                 "clocked: spend the last N microseconds before each slot's deadline spinning "
                 "instead of sleeping (lower lateness at the price of a busy core)")
      ->check(CLI::Range(0, 100000))
      ->group(run);

  const char* instance = "Instance";
  app.add_option("-n,--name", a.name, "instance name: its own lock and socket (xqry -x NAME reaches it)")
      ->group(instance);
  app.add_flag("-k,--noanykey", a.noAnyKey, "never stop on a key press")->group(instance);
  app.add_flag("-x,--xqrywait", a.wait, "wait for the first client command before running")->group(instance);
  app.add_flag("-s,--status", a.status, "report whether an instance is running")->group(instance);
  app.add_flag("-o,--cleanup", a.cleanup, "remove locks and sockets left by instances that are no longer running")
      ->group(instance);
  app.add_flag("--allow-adhoc-system", a.allowAdhocSystem,
               "accept RULE ... DO SYSTEM from clients (xqry -a); they run shell commands as this user")
      ->group(instance);

  const char* output = "Output";
  app.add_flag("-r,--quiet", a.quiet, "no progress line, no on-screen presenter")->group(output);
  app.add_flag("-v,--verbose", a.verbose, "print the plan, JIT and source counters, and slot lateness")->group(output);
  app.add_option("--metrics", a.metrics, "serve Prometheus metrics on HOST:PORT (/metrics; TOML metrics.listen)")
      ->group(output);
  app.add_option("--http", a.http, "serve the live page on HOST:PORT: the streams, plotted live (TOML http.listen)")
      ->group(output);
  app.add_option("--web-dir", a.webDir, "where the live page's files are (default: the build's web/)")->group(output);
  app.add_flag("--listen-any", a.listenAny, "let --metrics and --http listen on an address other than loopback")
      ->group(output);
  app.set_version_flag("--version", tools::versionText("xretractor"));
}

// Checks what CLI11 cannot: -m's range and the instance name's letters. 0 when fine.
int checkRunArgs(RunArgs& a, bool limitGiven, const std::string& prog) {
  if (limitGiven) {
    // Digits only, 0 .. 2^62: a negative or overflowing count is an error, not "unlimited".
    const char* b = a.limitText.c_str();
    auto [p, ec] = std::from_chars(b, b + a.limitText.size(), a.limit);
    if (ec != std::errc() || p != b + a.limitText.size() || a.limit < 0 || a.limit > (int64_t(1) << 62)) {
      fmt::print(stderr, "{}: -m needs a whole number of slots from 0 to 2^62, got '{}'\n", prog, a.limitText);
      return kExitArgs;
    }
  }
  for (char c : a.name)
    if (!isalnum((unsigned char)c) && c != '_' && c != '-') {
      fmt::print(stderr, "{}: instance names use letters, digits, '_' and '-'\n", prog);
      return kExitArgs;
    }
  return 0;
}

engine::Options engineOptions(const RunArgs& a) {
  engine::Options opt;
  opt.limit = a.limit;
  opt.noClock = a.noClock;
  opt.untilEof = a.untilEof;
  opt.deviceTimeout = gConfig.sourcesTimeoutS;
  opt.mqtt.user = gConfig.mqttUser;
  opt.mqtt.password = gConfig.mqttPassword;
  opt.mqtt.caFile = gConfig.mqttCaFile;
  opt.mqtt.bufferRecords = gConfig.mqttBufferRecords;
  opt.mqtt.keepAliveS = gConfig.mqttKeepAliveS;
  opt.mqtt.maxPayloadBytes = gConfig.mqttMaxPayloadBytes;
  opt.mqtt.maxJsonDepth = gConfig.mqttMaxJsonDepth;
  opt.mqtt.drainMs = int(std::min(gConfig.mqttDrainS, 3600)) * 1000;
  // Broker sessions are named after the instance, so two engines on one broker never share one.
  opt.mqtt.clientId = "retractor-" + (a.name.empty() ? std::string("default") : a.name);
  opt.threads = a.threads;
  opt.blockSlots = a.blockSlots;
  opt.fuse = !a.noFuse;
  opt.forceParallel = a.parallel;
  opt.jitTier = a.jitTier == "quick" ? 1 : a.jitTier == "optimised" ? 2 : 0;
  opt.verbose = a.verbose;
  opt.countNulls = gMetrics != nullptr;
  opt.stopOnKey = !a.noAnyKey && isatty(0);
  // RDB_INTERPRET=1 selects the VM without touching command lines (CI runs the suite both ways).
  const char* envInterpret = getenv("RDB_INTERPRET");
  opt.interpret = a.interpret || (envInterpret && std::string(envInterpret) == "1");
  return opt;
}

// A serving instance: the lock first (a second instance stops here), then one
// engine per storage directory (before the engine touches any artifact), then
// the socket, then "PID:" in the lock: "lock present" means clients can connect.
struct Instance {
  std::string prog, socket;
  tools::InstanceLock lock;
  std::unique_ptr<storage::StorageLock> storageLock;
  std::unique_ptr<ipc::Server> server;

  int open(const std::optional<std::string>& storageDir, const std::string& announcedFile) {
    if (!lock.acquire(gConfig.lockDir, prog)) return kExitInstance;
    if (storageDir && !lockStorage(*storageDir)) return kExitInstance;
    ipc::ServerOptions sopt;
    sopt.queueBufferSeconds = gConfig.queueBufferSeconds;
    sopt.minQueueElements = gConfig.minQueueElements;
    sopt.maxClients = gConfig.maxClients;
    sopt.idleTimeoutMs = gConfig.clientIdleTimeoutMs;
    sopt.log = tools::LogSink{.stderrPrefix = "xretractor: "};
    std::string ipcError;
    server = ipc::Server::open(socket, ipcError, sopt);
    if (!server) {
      fmt::print(stderr, "{}: cannot open {}: {}\n", prog, socket, ipcError);
      return kExitIpc;
    }
    if (lock.announce(announcedFile)) return 0;
    fmt::print(stderr, "{}: cannot write the lock file {}: {}\n", prog, lock.path, strerror(errno));
    return kExitInstance;
  }
  // The storage directory of the plan being run: one engine per directory.
  bool lockStorage(const std::string& dir, std::string* why = nullptr) {
    std::string err;
    storageLock = storage::StorageLock::acquire(dir, err);
    if (storageLock) return true;
    if (why) *why = err;
    else fmt::print(stderr, "\nFATAL: {}\n", err);
    return false;
  }
};

std::optional<std::string> existingStorageDir(ir::Plan& plan);

// What a client asked of the instance's plan (xqry --reset).
struct PlanSwitch {
  bool toIdle = false;           // an empty plan: the engine stops, the instance stays up
  std::optional<ir::Plan> load;  // a plan for an idle instance
  bool fromClient = false;       // the plan running came from xqry --reset
};

// Whether a plan text holds no statement (only blanks and comments).
bool emptyPlanText(const std::string& text) {
  try {
    return rql::parseText(text).empty();
  } catch (const std::exception&) {
    return false;  // the compile reports what is wrong with it
  }
}

// Compiles a plan a client sent: "" or what is wrong with it, located.
std::string compileSent(const std::string& text, const RunArgs& a, ir::Plan& out) {
  ir::Options copt = compileOptions();
  disablePasses(a.disabled, copt);  // checked at start
  std::string errors;
  if (compileText(text, "reset", copt, out, a.strict, &errors)) {
    while (!errors.empty() && errors.back() == '\n') errors.pop_back();
    return errors.empty() ? "the plan does not compile" : errors;
  }
  if (!existingStorageDir(out)) return "reset: error: the plan's storage directory does not exist";
  // A plan from a client is not the operator's: DO SYSTEM would run its commands as this user.
  for (auto& q : out.queries)
    for (auto& r : q.rules)
      if (r.action == ir::RuleAction::SYSTEM && !a.allowAdhocSystem)
        return "Rejected: rule '" + r.name + "' on stream '" + q.id +
               "' uses DO SYSTEM; a plan sent by a client may not run shell commands unless the engine was " +
               "started with --allow-adhoc-system";
  return "";
}

// Idle: no plan, but hello and kill work, data commands answer empty, and
// xqry --reset loads a plan (sw.load). False when -m's count ran out or killed.
bool runIdle(Instance& inst, const RunArgs& a, PlanSwitch& sw) {
  ipc::ServerHooks idleHooks;
  idleHooks.kill = [] { gStop.store(true); };
  idleHooks.list = [] { return std::vector<ipc::StreamInfo>{}; };  // no streams
  idleHooks.exists = [](const std::string&) { return false; };
  idleHooks.adhoc = [](const std::string&) -> std::string {
    return "Rejected: the instance is idle (no plan runs); load one with xqry --reset FILE";
  };
  idleHooks.reset = [&](const std::string& text, std::vector<std::string>&) -> std::string {
    if (emptyPlanText(text)) return "OK";  // idle already
    ir::Plan plan;
    if (std::string err = compileSent(text, a, plan); !err.empty()) return err;
    const std::optional<std::string> dir = existingStorageDir(plan);
    std::string why;
    if (!inst.lockStorage(*dir, &why)) return "Rejected: " + why;
    sw.load = std::move(plan);
    return "OK";
  };
  for (int64_t n = 1; !gStop.load() && (a.limit == 0 || n < a.limit); ++n) {
    inst.server->poll(idleHooks, 100);
    if (sw.load) return true;
  }
  return false;
}

// The plan's storage directory when it exists (a missing one is the engine's error to report).
std::optional<std::string> existingStorageDir(ir::Plan& plan) {
  if (!plan.find(":STORAGE") && !gConfig.storageDir.empty()) {
    ir::Query st;
    st.id = ":STORAGE";
    st.filename = gConfig.storageDir;
    plan.queries.insert(plan.queries.begin(), st);
  }
  const ir::Query* st = plan.find(":STORAGE");
  std::string dir = st ? st->filename : "";
  struct stat sb {};
  if (dir.empty() || (stat(dir.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode))) return dir;
  return std::nullopt;
}

// The progress line of an offline run: slots, records stored, their rate, and
// an ETA when -m says how many slots there are. Four times a second at most.
struct Progress {
  using Clock = std::chrono::steady_clock;
  explicit Progress(int64_t limit) : limit_(limit) {}
  void show(int64_t slots, const engine::Engine& eng) {
    const auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    int64_t records = 0;
    for (auto& st : eng.status())
      if (!st.declared) records += st.records;
    const double secs = std::chrono::duration<double>(now - start_).count();
    std::string line = fmt::format("slots {}", slots);
    if (limit_ > 0) line += fmt::format(" of {} ({:.0f}%)", limit_, 100.0 * double(slots) / double(limit_));
    line += fmt::format(", records {}, {:.0f} records/s", records, secs > 0 ? double(records) / secs : 0.0);
    if (limit_ > 0 && slots > 0) line += fmt::format(", ETA {:.0f} s", secs * double(limit_ - slots) / double(slots));
    fmt::print(stderr, "\r{}\033[K", line);
    shown_ = true;
  }
  void clear() {
    if (shown_) fmt::print(stderr, "\r\033[K");
    shown_ = false;
  }
  int64_t limit_;
  Clock::time_point start_ = Clock::now(), last_{};
  bool shown_ = false;
};

// Runs the plan with its clients served between slots; the exit code.
// xqry --reset replaces the plan in place, or (an empty plan) makes the
// instance idle: sw.toIdle, the server stays up.
int runEngine(Instance& inst, const ir::Plan& plan, const RunArgs& a, PlanSwitch& sw) {
  try {
    engine::Engine eng(plan, engineOptions(a));
    eng.prepare();
    tools::ClientWiring wiring(eng, *inst.server, gStop, a.spinUs, tools::AdHocPolicy{a.allowAdhocSystem});
    wiring.serverHooks().reset = [&](const std::string& text, std::vector<std::string>& ended) -> std::string {
      if (emptyPlanText(text)) {
        sw.toIdle = true;
        gStop.store(true);  // the run ends after this slot
        return "OK";
      }
      ir::Plan next;
      if (std::string err = compileSent(text, a, next); !err.empty()) return err;
      wiring.planChanged();
      return eng.replacePlan(next, ended);
    };
    // -x: hold the processing loop until a client's first command arrives.
    while (a.wait && !inst.server->anyCommandSeen() && !gStop.load()) inst.server->poll(wiring.serverHooks(), 100);
    engine::SlotHooks hooks = wiring.slotHooks();
    if (gMetrics) {  // the numbers go to /metrics from the engine's thread
      auto sample = [&] { gMetrics->update(eng, inst.server->stats()); };
      hooks.waitUntil = [sample, wait = hooks.waitUntil](std::chrono::steady_clock::time_point t) {
        sample();
        wait(t);
      };
      hooks.idle = [sample, serve = hooks.idle](int64_t slots) {
        serve(slots);
        sample();
      };
      hooks.lateness = [](int64_t ns) { gMetrics->lateness(ns); };
    }
    Progress progress(a.limit);
    if (a.noClock && !a.quiet && isatty(2)) {  // offline on a terminal: one line that updates
      hooks.idle = [&, serve = hooks.idle](int64_t slots) {
        serve(slots);
        progress.show(slots, eng);
      };
    }
    int64_t slots = eng.run(gStop, hooks);
    progress.clear();
    if (sw.toIdle) inst.server->endSubscriptions();
    else inst.server->shutdown();
    eng.finish();
    if (a.verbose) {
      fmt::print("processed {} slots\n", slots);
      // RATIONAL results that were not exactly representable, per stream.
      for (auto& st : eng.status())
        if (st.rounded) fmt::print("rounded: {} {} values to the nearest RATIONAL\n", st.id, st.rounded);
      for (auto& st : eng.status())
        if (st.device) fmt::print("device: {} {} reads, {} misses\n", st.id, st.reads, st.misses);
      for (auto& st : eng.status())
        if (st.outOfRange) fmt::print("source: {} {} values out of range, stored NULL\n", st.id, st.outOfRange);
      for (auto& st : eng.status()) {
        if (st.mqtt)
          fmt::print("mqtt: {} {} received, {} malformed, {} dropped\n", st.id, st.received, st.malformed, st.dropped);
        if (st.publishes)
          fmt::print("publish: {} {} acknowledged, {} dropped, {} still queued\n", st.id, st.published,
                     st.publishDropped, st.publishQueued);
      }
    }
    if (eng.backgroundAbandoned() && !sw.toIdle) {  // an ad hoc JIT compile still runs: do not wait for it
      fflush(stdout);
      fflush(stderr);
      std::_Exit(0);
    }
  } catch (const engine::EngineError& e) {
    if (sw.fromClient) inst.server->endSubscriptions();
    else inst.server->shutdown();
    fmt::print(stderr, "\nFATAL: {}\n", e.what());
    return kExitFatal;
  }
  return 0;
}

// Plans one after another: the one the instance started with, then what
// clients load; idle in between.
int serve(Instance& inst, std::optional<ir::Plan> plan, const RunArgs& a) {
  for (bool fromClient = false;; fromClient = true) {
    PlanSwitch sw;
    if (!plan) {
      if (!runIdle(inst, a, sw)) break;
      plan = std::move(sw.load);
      sw = {};
    }
    sw.fromClient = fromClient;
    if (int rc = runEngine(inst, *plan, a, sw)) {
      if (!fromClient) return rc;
      sw.toIdle = true;  // a loaded plan that cannot start leaves the instance idle, not gone
    }
    if (!sw.toIdle) return 0;
    gStop.store(false);
    inst.storageLock.reset();
    plan.reset();
  }
  inst.server->shutdown();
  return 0;
}

int runMode(int argc, char** argv) {
  CLI::App app{"xretractor: run an RQL query set (the plan's streams, slot by slot, stored as they are produced)"};
  app.footer(
      "Examples:\n"
      "  xretractor -c query.rql              print the compiled plan\n"
      "  xretractor query.rql -m 100          run the zero step and 99 slots, clocked\n"
      "  xretractor query.rql -f -u           offline, as fast as it goes, until a source ends\n"
      "  xretractor query.rql -k --name edge1 a named instance (xqry -x edge1 -d lists its streams)");
  RunArgs a;
  CLI::Option* limitOpt = nullptr;
  addRunOptions(app, a, limitOpt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (int rc = checkRunArgs(a, limitOpt->count() > 0, baseName(argv[0]))) return rc;
  if (a.metrics.empty()) a.metrics = gConfig.metricsListen;
  if (a.http.empty()) a.http = gConfig.httpListen;
  if (!a.http.empty()) {
    std::string why;
    if (!a.listenAny && !tools::loopbackAddress(a.http, why)) {
      fmt::print(stderr, "{}: --http {}: {}\n", baseName(argv[0]), a.http, why);
      return kExitArgs;
    }
  }
  if (!a.metrics.empty()) {
    std::string why;
    if (!a.listenAny && !tools::loopbackAddress(a.metrics, why)) {
      fmt::print(stderr, "{}: --metrics {}: {}\n", baseName(argv[0]), a.metrics, why);
      return kExitArgs;
    }
    try {
      gMetrics = std::make_unique<tools::Metrics>(a.metrics);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}: {}\n", baseName(argv[0]), e.what());
      return kExitArgs;
    }
  }
  // A named instance has its own lock and socket: <prog>_<name>_service.lock / .sock.
  Instance inst;
  inst.prog = a.name.empty() ? baseName(argv[0]) : baseName(argv[0]) + "_" + a.name;
  inst.socket = ipc::socketPath(gConfig.lockDir, a.name);
  if (a.cleanup) {
    tools::cleanupInstances(gConfig.lockDir);
    return 0;
  }
  if (a.status) {
    fmt::print("Checking service status.\n");
    const bool running = tools::instanceRunning(gConfig.lockDir, inst.prog);
    fmt::print("{}_service: {}\n", inst.prog, running ? "Running" : "Stopped");
    return running ? kExitInstance : 0;
  }
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::signal(SIGHUP, onSignal);
  // The live page is a client of the instance's socket: it starts once the socket is there.
  std::unique_ptr<tools::LivePage> page;
  auto startPage = [&]() -> int {
    if (a.http.empty()) return 0;
    try {
      page = std::make_unique<tools::LivePage>(a.http, inst.socket, a.webDir.empty() ? RDB_WEB_DIR : a.webDir);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}: {}\n", baseName(argv[0]), e.what());
      return kExitArgs;
    }
    return 0;
  };
  if (a.queryFile.empty()) {
    if (int rc = inst.open(std::nullopt, "")) return rc;
    if (int rc = startPage()) return rc;
    return serve(inst, std::nullopt, a);
  }
  ir::Options copt = compileOptions();
  if (!disablePasses(a.disabled, copt)) return kExitArgs;
  ir::Plan plan;
  if (int rc = compileFile(argv[0], a.queryFile, copt, plan, a.strict)) return rc;
  const std::optional<std::string> storageDir = existingStorageDir(plan);
  if (a.verbose) fmt::print("{}", ir::dumpPlan(plan));
  if (int rc = inst.open(storageDir, a.queryFile)) return rc;
  if (int rc = startPage()) return rc;
  return serve(inst, std::move(plan), a);
}

}  // namespace

int main(int argc, char** argv) {
  // Strip a trailing CR from each argument (scripts written on other systems).
  for (int i = 1; i < argc; ++i) {
    size_t n = strlen(argv[i]);
    if (n && argv[i][n - 1] == '\r') argv[i][n - 1] = 0;
  }
  bool compile = false, buildInfo = false;
  std::optional<std::string> configFile;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-c" || a == "--onlycompile") compile = true;
    if (a == "-b" || a == "--build-info") buildInfo = true;
    if ((a == "-g" || a == "--config") && i + 1 < argc) configFile = argv[i + 1];
    if (a.rfind("--config=", 0) == 0) configFile = a.substr(9);
  }
  if (buildInfo) {
    printBuildInfo();
    return 0;
  }
  // The configuration is checked before anything else, --help included.
  try {
    gConfig = tools::loadConfig(configFile);
    tools::validateSourcesTimeout(gConfig);
    if (!compile) tools::validateStorageDir(gConfig);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kExitConfig;
  }
  for (auto& w : gConfig.warnings) fmt::print(stderr, "warning: configuration {}\n", w);
  if (compile) return compileMode(argc, argv);
  return runMode(argc, argv);
}
