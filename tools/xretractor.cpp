// xretractor: compile an RQL query set (-c prints the plan) and run it.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <charconv>
#include <csignal>
#include <cstring>
#include <memory>
#include <optional>

#include "ipc/ipc.hpp"
#include "ir/dump.hpp"
#include "tools/config.hpp"
#include "tools/instance.hpp"
#include "tools/live_page.hpp"
#include "tools/metrics.hpp"
#include "tools/version.hpp"
#include "tools/xretractor.hpp"

namespace xretractor {

std::atomic<bool> gStop{false};
tools::Config gConfig;
std::unique_ptr<tools::Metrics> gMetrics;

namespace {

std::string baseName(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

void onSignal(int) { gStop.store(true); }

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
  app.add_flag("--resume", a.resume,
               "go on from the storage directory's checkpoint of this plan (none: start afresh); TOML run.resume")
      ->group(run);
  app.add_option("--checkpoint", a.checkpointS,
                 "seconds between checkpoints, fractions allowed; 0: none (default 10; TOML run.checkpoint_s)")
      ->check(CLI::Range(0.0, 86400.0))
      ->group(run);
  app.add_option("--threads", a.threads, "worker threads (default: all cores; 1 = serial)")->group(run);
  app.add_flag("--parallel", a.parallel,
               "run independent pipelines side by side from the first block (default: when their measured cost "
               "says it pays)")
      ->group(run);
  app.add_option("--block", a.blockSlots, "most slots run as one block (default 512; 1 = slot by slot)")
      ->check(CLI::Range(1, 1 << 16))
      ->group(run);
  app.add_flag("--no-fuse", a.noFuse, "materialise every VOLATILE window (no folding into its reducer)")->group(run);
  app.add_flag("--no-chains", a.noChains, "run every stream by its own step (no chains compiled as one loop)")
      ->group(run);
  app.add_option("--jit-tier", a.jitTier,
                 "auto (quick code, then optimised code off the slot thread), quick or optimised")
      ->check(CLI::IsMember({"auto", "quick", "optimised"}))
      ->group(run);
  app.add_option("--jit-cache", a.jitCache,
                 "directory of compiled code kept between runs, or off (default: RDB_JIT_CACHE, else "
                 "~/.cache/retractor/jit)")
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
  if (!a.checkpointS) a.checkpointS = gConfig.runCheckpointS;
  a.resume = a.resume || gConfig.runResume;
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
  tools::Instance inst;
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
    if (int rc = inst.open(gConfig, std::nullopt, "")) return rc;
    if (int rc = startPage()) return rc;
    return serve(inst, std::nullopt, a);
  }
  ir::Options copt = compileOptions();
  if (!disablePasses(a.disabled, copt)) return kExitArgs;
  ir::Plan plan;
  if (int rc = compileFile(argv[0], a.queryFile, copt, plan, a.strict)) return rc;
  const std::optional<std::string> storageDir = existingStorageDir(plan);
  if (a.verbose) fmt::print("{}", ir::dumpPlan(plan));
  if (int rc = inst.open(gConfig, storageDir, a.queryFile)) return rc;
  if (int rc = startPage()) return rc;
  return serve(inst, std::move(plan), a);
}

}  // namespace

}  // namespace xretractor

using namespace xretractor;

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
