// xretractor: compile an RQL query set (-c prints the plan) and run it.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <thread>
#include <csignal>
#include <filesystem>
#include <memory>
#include <optional>

#include "build_config.h"
#include "engine/engine.hpp"
#include "ipc/ipc.hpp"
#include "storage/lock.hpp"
#include "tools/config.hpp"
#include "grammar/front.hpp"
#include "ir/compile.hpp"
#include "ir/dump.hpp"
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
  bool disasm = false;
  app.add_flag("--disasm", disasm, "print each stream's VM bytecode instead of the plan");
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
  opt.historyBudgetBytes = gConfig.historyMemoryMib << 20;
  if (!disablePasses(disabled, opt)) return kExitArgs;
  const std::string argv0 = argv[0];
  if (queryFile.empty()) {
    fmt::print("{}: fatal error: no input file\n", argv0);
    return 1;
  }
  ir::Plan plan;
  if (int rc = compileFile(argv0, queryFile, opt, plan)) return rc;
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

// The instance lock: ${TMPDIR:-/tmp}/<program>_service.lock holding "PID: <pid>".
struct InstanceLock {
  std::string path;
  int fd = -1;
  // Takes the lock (a second instance stops here); the contents come later,
  // once clients can connect, so "PID: <pid>" in the file means "serving".
  bool acquire(const std::string& dir, const std::string& prog) {
    path = ((dir.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(dir)) /
            (prog + "_service.lock")).string();
    // Never through a symbolic link (nor a FIFO, a device or a file of another user):
    // the lock is truncated and written, and it lives in a shared directory.
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
    if (fd < 0 && errno == ELOOP) {
      fmt::print(stderr, "{}: lock file {} is a symbolic link; refusing to use it\n", prog, path);
      return false;
    }
    struct stat sb {};
    if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_nlink != 1 || sb.st_uid != geteuid())) {
      fmt::print(stderr, "{}: lock file {} is not a regular file of this user with one link; refusing to use it\n",
                 prog, path);
      ::close(fd);
      fd = -1;
      return false;
    }
    if (fd >= 0 && (sb.st_mode & 0777) != 0600) ::fchmod(fd, 0600);  // left by an older version
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
      fmt::print(stderr, "Another instance is running, errno: {}\n", strerror(errno));
      if (fd >= 0) ::close(fd);
      fd = -1;
      return false;
    }
    return true;
  }
  bool announce(const std::string& queryFile) {
    std::string text = fmt::format("PID: {}\nPPID: {}\nMODE: process\n", getpid(), getppid());
    if (!queryFile.empty()) {
      std::error_code ec;
      text += "QUERYFILE: " + std::filesystem::absolute(queryFile, ec).string() + "\n";
    }
    if (ftruncate(fd, 0) != 0 || ::write(fd, text.data(), text.size()) != ssize_t(text.size())) return false;
    fsync(fd);
    return true;
  }
  ~InstanceLock() {
    if (fd >= 0) {
      ::unlink(path.c_str());
      ::close(fd);
    }
  }
};

// Removes the lock files and sockets of instances that are not running: a lock
// nobody holds is stale, and so is the socket beside it.
int cleanupInstances(const std::string& lockDir) {
  namespace fs = std::filesystem;
  fs::path dir = lockDir.empty() ? fs::temp_directory_path() : fs::path(lockDir);
  std::error_code ec;
  int removed = 0;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    const std::string suffix = "_service.lock";
    if (n.rfind("xretractor", 0) != 0 || n.size() < suffix.size() || n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    int fd = ::open(e.path().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    bool held = flock(fd, LOCK_EX | LOCK_NB) != 0;
    if (!held) {
      std::string sock = e.path().string();
      sock.replace(sock.size() - 5, 5, ".sock");
      fs::remove(sock, ec);
      fs::remove(e.path(), ec);
      fmt::print("removed {}\n", e.path().string());
      ++removed;
    }
    ::close(fd);
  }
  fmt::print("{} stale instance(s) cleaned up\n", removed);
  return 0;
}

int runMode(int argc, char** argv) {
  CLI::App app{"xretractor: run an RQL query set"};
  std::string queryFile, config;
  int64_t limit = 0;
  bool noAnyKey = false, wait = false, quiet = false, verbose = false, status = false, noClock = false, untilEof = false,
       interpret = false;
  int threads = 0;
  std::string name;
  bool cleanup = false;
  app.add_option("-q,--queryfile,queryfile", queryFile, "query file");
  app.add_option("-n,--name", name, "instance name: its own lock and socket (xqry -x NAME reaches it)");
  app.add_flag("-o,--cleanup", cleanup, "remove locks and sockets left by instances that are no longer running");
  std::string limitText;
  auto* limitOpt = app.add_option("-m,--llimitqry", limitText, "process the zero step and N-1 slots (0 = unlimited)");
  app.add_flag("-k,--noanykey", noAnyKey, "never stop on a key press");
  app.add_flag("-x,--xqrywait", wait, "wait for the first client command before running");
  app.add_flag("-r,--quiet", quiet, "no on-screen presenter");
  app.add_flag("-v,--verbose", verbose, "print the plan and progress");
  app.add_flag("-s,--status", status, "report whether an instance is running");
  app.add_option("-g,--config", config, "configuration file (TOML)");
  app.add_flag("-f,--no-clock", noClock, "do not wait for slot deadlines (offline run)");
  app.add_flag("-u,--until-eof", untilEof, "stop when a source runs out of data");
  app.add_flag("--interpret", interpret, "run field programs on the bytecode VM");
  app.add_option("--threads", threads, "worker threads (default: all cores; 1 = serial)");
  int blockSlots = 0, spinUs = 0;
  bool noFuse = false;
  app.add_option("--spin-us", spinUs, "clocked: spend the last N microseconds before each slot's deadline spinning "
                                      "instead of sleeping (lower lateness at the price of a busy core)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--block", blockSlots, "most slots run as one block (default 512; 1 = slot by slot)")
      ->check(CLI::Range(1, 1 << 16));
  app.add_flag("--no-fuse", noFuse, "materialise every VOLATILE window (no folding into its reducer)");
  std::string jitTier = "auto";
  app.add_option("--jit-tier", jitTier, "auto (quick code, then optimised code off the slot thread), quick or optimised")
      ->check(CLI::IsMember({"auto", "quick", "optimised"}));
  std::vector<std::string> disabled;
  app.add_option("--disable-pass", disabled, kPassNames);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (limitOpt->count()) {
    // Digits only, 0 .. 2^62: a negative or overflowing count is an error, not "unlimited".
    const char* b = limitText.c_str();
    auto [p, ec] = std::from_chars(b, b + limitText.size(), limit);
    if (ec != std::errc() || p != b + limitText.size() || limit < 0 || limit > (int64_t(1) << 62)) {
      fmt::print(stderr, "{}: -m needs a whole number of slots from 0 to 2^62, got '{}'\n", baseName(argv[0]), limitText);
      return 22;
    }
  }
  for (char c : name)
    if (!isalnum((unsigned char)c) && c != '_' && c != '-') {
      fmt::print(stderr, "{}: instance names use letters, digits, '_' and '-'\n", baseName(argv[0]));
      return 22;
    }
  // A named instance has its own lock and socket: <prog>_<name>_service.lock / .sock.
  const std::string prog = name.empty() ? baseName(argv[0]) : baseName(argv[0]) + "_" + name;
  if (cleanup) return cleanupInstances(gConfig.lockDir);
  if (status) {
    fmt::print("Checking service status.\n");
    std::string path = ((gConfig.lockDir.empty() ? std::filesystem::temp_directory_path()
                                                 : std::filesystem::path(gConfig.lockDir)) /
                        (prog + "_service.lock")).string();
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    bool running = fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) != 0;
    if (fd >= 0) ::close(fd);
    fmt::print("{}_service: {}\n", prog, running ? "Running" : "Stopped");
    return running ? 37 : 0;
  }
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::signal(SIGHUP, onSignal);
  // IPC first, then the lock: "lock present" means clients can connect.
  ipc::ServerOptions sopt;
  sopt.queueBufferSeconds = gConfig.queueBufferSeconds;
  sopt.minQueueElements = gConfig.minQueueElements;
  sopt.maxClients = gConfig.maxClients;
  sopt.idleTimeoutMs = gConfig.clientIdleTimeoutMs;
  sopt.log = [](const std::string& m) { fmt::print(stderr, "xretractor: {}\n", m); };
  const std::string socket = ipc::socketPath(gConfig.lockDir, name);
  // The lock first (a second instance stops here), then the socket, then "PID:".
  InstanceLock lock;
  std::unique_ptr<ipc::Server> server;
  // One engine per storage directory: taken after the instance lock, before
  // the socket and before the engine touches any artifact.
  std::optional<std::string> storageDir;
  std::unique_ptr<storage::StorageLock> storageLock;
  auto serve = [&](const std::string& announcedFile) -> int {
    if (!lock.acquire(gConfig.lockDir, prog)) return 37;
    if (storageDir) {
      std::string why;
      storageLock = storage::StorageLock::acquire(*storageDir, why);
      if (!storageLock) {
        fmt::print(stderr, "\nFATAL: {}\n", why);
        return 37;
      }
    }
    std::string ipcError;
    server = ipc::Server::open(socket, ipcError, sopt);
    if (!server) {
      fmt::print(stderr, "{}: cannot open {}: {}\n", prog, socket, ipcError);
      return 10;
    }
    if (lock.announce(announcedFile)) return 0;
    fmt::print(stderr, "{}: cannot write the lock file {}: {}\n", prog, lock.path, strerror(errno));
    return 37;
  };
  if (queryFile.empty()) {
    // Idle: no plan, but hello and kill work; data commands answer empty.
    if (int rc = serve("")) return rc;
    ipc::ServerHooks idleHooks;
    idleHooks.kill = [] { gStop.store(true); };
    for (int64_t n = 1; !gStop.load() && (limit == 0 || n < limit); ++n) server->poll(idleHooks, 100);
    server->shutdown();
    return 0;
  }
  ir::Options copt = ir::defaultOptions();
  copt.historyBudgetBytes = gConfig.historyMemoryMib << 20;
  if (!disablePasses(disabled, copt)) return kExitArgs;
  ir::Plan plan;
  if (int rc = compileFile(argv[0], queryFile, copt, plan)) return rc;
  if (!plan.find(":STORAGE") && !gConfig.storageDir.empty()) {
    ir::Query st;
    st.id = ":STORAGE";
    st.filename = gConfig.storageDir;
    plan.queries.insert(plan.queries.begin(), st);
  }
  if (verbose) fmt::print("{}", ir::dumpPlan(plan));
  {
    const ir::Query* st = plan.find(":STORAGE");
    std::string dir = st ? st->filename : "";
    struct stat sb {};
    // A missing directory is the engine's error to report.
    if (dir.empty() || (stat(dir.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode))) storageDir = dir;
  }
  if (int rc = serve(queryFile)) return rc;
  engine::Options opt;
  opt.limit = limit;
  opt.noClock = noClock;
  opt.untilEof = untilEof;
  opt.threads = threads;
  opt.blockSlots = blockSlots;
  opt.fuse = !noFuse;
  opt.jitTier = jitTier == "quick" ? 1 : jitTier == "optimised" ? 2 : 0;
  opt.verbose = verbose;
  opt.stopOnKey = !noAnyKey && isatty(0);
  // RDB_INTERPRET=1 selects the VM without touching command lines (CI runs the suite both ways).
  const char* envInterpret = getenv("RDB_INTERPRET");
  opt.interpret = interpret || (envInterpret && std::string(envInterpret) == "1");
  (void)quiet;
  try {
    engine::Engine eng(plan, opt);
    eng.prepare();
    // What clients see and do (xqry), served between slots on this thread.
    ipc::ServerHooks hooks;
    auto info = [](const engine::StreamStatus& s) {
      ipc::StreamInfo i;
      i.id = s.id;
      i.duration = s.interval.str();
      i.size = s.bytes;
      i.count = s.records;
      i.location = s.location;
      i.cap = s.capacity;
      return i;
    };
    hooks.list = [&] {
      std::vector<ipc::StreamInfo> out;
      for (auto& s : eng.status()) out.push_back(info(s));
      return out;
    };
    hooks.detail = [&](const std::string& id) -> std::optional<ipc::StreamDetail> {
      auto s = eng.status(id);
      if (!s) return std::nullopt;
      ipc::StreamDetail d;
      d.info = info(*s);
      d.fields = s->fields;
      d.isDeclaration = s->declared;
      d.isGenerated = s->generated;
      d.queryTokens = s->programTokens;
      d.processedLine = s->statement.empty() ? "{not found}" : s->statement;
      d.countRecords = s->records;
      d.rounded = s->rounded;
      return d;
    };
    hooks.exists = [&](const std::string& id) { return eng.status(id).has_value(); };
    hooks.adhoc = [&](const std::string& text) { return eng.importStatement(text); };
    hooks.kill = [] { gStop.store(true); };
    hooks.remove = [&](const std::string& id) { return eng.removeStream(id); };
    engine::SlotHooks slotHooks;
    auto lastPoll = std::chrono::steady_clock::now();
    slotHooks.waitUntil = [&](std::chrono::steady_clock::time_point deadline) {
      for (;;) {
        const auto now = std::chrono::steady_clock::now();
        if (gStop.load()) return;
        if (now >= deadline) {
          // Behind schedule, slots run back to back: clients are still served every 20 ms.
          if (now - lastPoll >= std::chrono::milliseconds(20)) {
            server->poll(hooks, 0);
            lastPoll = now;
          }
          return;
        }
        const auto spin = std::chrono::microseconds(spinUs);
        if (deadline - now <= spin) {  // the last stretch on the core: wake-up latency is not paid
          while (std::chrono::steady_clock::now() < deadline) {
          }
          continue;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
        if (left.count() <= 0) {  // under a millisecond to go: never start a slot early
          std::this_thread::sleep_until(deadline - spin);
          continue;
        }
        server->poll(hooks, int(std::min<int64_t>(left.count(), 50)));
        lastPoll = std::chrono::steady_clock::now();
      }
    };
    slotHooks.idle = [&] { server->poll(hooks, 0); };
    std::vector<std::string> values;
    std::vector<bool> nulls;
    slotHooks.listening = [&] { return server->anySubscriber(); };
    slotHooks.afterSlot = [&](const std::vector<const std::string*>& wrote) {
      for (const std::string* idp : wrote) {
        const std::string& id = *idp;
        if (!server->subscribed(id)) continue;
        const uint8_t *data, *nl;
        const ir::Layout* layout;
        if (!eng.newest(id, data, nl, layout)) continue;
        values.clear();
        nulls.clear();
        for (size_t e = 0; e < layout->elems.size(); ++e) {
          const ir::Element& el = layout->elems[e];
          values.push_back(ipc::valueText(el.type, data + el.offset, el.size));
          nulls.push_back(nl[e] != 0);
        }
        server->publish(id, values, nulls);
      }
    };
    // -x: hold the processing loop until a client's first command arrives.
    while (wait && !server->anyCommandSeen() && !gStop.load()) server->poll(hooks, 100);
    int64_t slots = eng.run(gStop, slotHooks);
    server->shutdown();
    eng.finish();
    if (verbose) {
      fmt::print("processed {} slots\n", slots);
      // RATIONAL results that were not exactly representable, per stream.
      for (auto& st : eng.status())
        if (st.rounded) fmt::print("rounded: {} {} values to the nearest RATIONAL\n", st.id, st.rounded);
    }
    if (eng.backgroundAbandoned()) {  // a JIT compile of an ad hoc unit is still running: do not wait for it
      fflush(stdout);
      fflush(stderr);
      std::_Exit(0);
    }
  } catch (const engine::EngineError& e) {
    server->shutdown();
    fmt::print(stderr, "\nFATAL: {}\n", e.what());
    return 1;
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
    if (!compile) tools::validateStorageDir(gConfig);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 4;
  }
  if (compile) return compileMode(argc, argv);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      fmt::print("Usage: {} [-c] queryfile [options]\n"
                 "  -c, --onlycompile   compile and print the plan (see {} -c -h for its options)\n"
                 "  -b, --build-info    print the optimizer switches of this build\n"
                 "  -h, --help          this text\n",
                 baseName(argv[0]), baseName(argv[0]));
      return 0;
    }
  }
  return runMode(argc, argv);
}
