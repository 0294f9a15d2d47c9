// The IPC library and the real xqry binary against a fake engine: a Server
// polled on a thread with canned hooks, records published from the test.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "../eventually.hpp"
#include "ipc/ipc.hpp"

using Json = nlohmann::json;

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using testing::eventually;

struct TempDir {
  fs::path dir;
  TempDir() {
    char tmpl[] = "/tmp/rdb_ipc_XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  // Runs the real xqry with this directory as TMPDIR (so its socket is ours).
  // `limitS` > 0: killed after that many seconds (exit 137), so a test never hangs on it.
  Result xqry(const std::string& args, int limitS = 0) const {
    static std::atomic<int> seq{0};
    const int n = seq++;
    const std::string o = (dir / ("xqry" + std::to_string(n) + ".out")).string();
    const std::string e = (dir / ("xqry" + std::to_string(n) + ".err")).string();
    const std::string limit = limitS > 0 ? "timeout -s KILL " + std::to_string(limitS) + " " : "";
    std::string cmd = "cd '" + dir.string() + "' && TMPDIR='" + dir.string() + "' XDG_CONFIG_HOME='" + dir.string() +
                      "' " + limit + "'" RDB_XQRY "' " + args + " </dev/null >'" + o + "' 2>'" + e + "'";
    int rc = std::system(cmd.c_str());
    Result r;
    r.rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = slurp(o);
    r.err = slurp(e);
    return r;
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
};

// The newest record of core0 that FakeEngine's replay holds.
constexpr int64_t kFakeNewest = 9;

// An engine stand-in: two streams, a detail for core0, ad hoc rules of tools.md §2.7.
struct FakeEngine : TempDir {
  std::unique_ptr<ipc::Server> server;
  std::thread thread;
  std::atomic<bool> stop{false}, killed{false}, polling{true}, resting{false};
  std::mutex mu;
  std::vector<std::string> adhocs;
  ipc::ServerHooks hooks;

  explicit FakeEngine(ipc::ServerOptions opt = {}, bool idle = false) {
    std::string err;
    server = ipc::Server::open(ipc::socketPath(dir.string()), err, opt);
    REQUIRE(server);
    hooks.list = [] {
      return std::vector<ipc::StreamInfo>{{"core0", "1/1", 100, 200, "/dev/loc0", 300},
                                          {"core1", "0.5", 400, 500, "/dev/loc1", 600},
                                          {"src", "1/10", -1, 7, "", 2}};
    };
    hooks.detail = [](const std::string& s) -> std::optional<ipc::StreamDetail> {
      if (s != "core0") return std::nullopt;
      ipc::StreamDetail d;
      d.info = {"core0", "1/1", 100, 200, "/dev/loc0", 300};
      d.fields = {{"core0_0", "INTEGER"}, {"core0_1", "FLOAT"}};
      d.queryTokens = 3;
      d.processedLine = "SELECT src[0], src[1] STREAM core0 FROM src";
      d.countRecords = 200;
      return d;
    };
    hooks.exists = [](const std::string& s) { return s == "core0" || s == "core1" || s == "src"; };
    hooks.adhoc = [this](const std::string& q) -> std::string {
      std::lock_guard lk(mu);
      adhocs.push_back(q);
      std::string u = q.substr(0, 7);
      for (auto& c : u) c = char(toupper(c));
      if (u.rfind("DECLARE", 0) == 0) return "Fail parse: AdHoc DECLARE not supported";
      if (u.rfind("SELECT", 0) != 0) return "Unrecognized command. AdHoc query must start with SELECT";
      return "OK";
    };
    hooks.kill = [this] { killed = true; };
    // `show` with `from`: core0 holds records 0..9 (values 10·n, 0.5); the test publishes the later ones.
    hooks.replay = [](const std::string& s, int64_t from) {
      ipc::Replay r;
      if (s != "core0") return r;
      r.newest = kFakeNewest;
      for (int64_t n = from; n <= kFakeNewest; ++n) r.records.push_back({{std::to_string(10 * n), "0.5"}, {}, n, "1"});
      return r;
    };
    if (idle) hooks.list = nullptr;  // no plan
    thread = std::thread([this] {
      while (!stop) {
        resting = !polling;
        if (!resting) server->poll(hooks, 10);
        else std::this_thread::sleep_for(5ms);
      }
    });
  }
  ~FakeEngine() {
    stop = true;
    thread.join();
    server.reset();
  }
  bool waitSubscribed(const std::string& s, std::chrono::milliseconds limit = 60s, bool want = true) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (server->subscribed(s) == want) return true;
      std::this_thread::sleep_for(2ms);
    }
    return false;
  }
  // Stops answering; returns once the poll thread is out of its last poll.
  void stopPolling() {
    polling = false;
    REQUIRE(eventually([this] { return resting.load(); }));
  }
};

int countOf(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("tree text round trip", "[ipc]") {
  ipc::Tree t;
  auto& db = t.add("db");
  db.add("plain", "value");
  db.add("spaces", "SELECT * STREAM x FROM y # z");
  db.add("quotes", "a \"b\" \\ {c}; d");
  db.add("controls", std::string("x\ny\r\t\x01", 7) + std::string(1, '\0'));
  db.add("empty", "");
  db.add("", "empty key");
  auto& n = db.add("nested", "v");
  n.add("0", "10").add("deep", "1");
  const std::string text = t.text();
  auto back = ipc::Tree::parse(text);
  REQUIRE(back);
  CHECK(back->text() == text);
  CHECK(back->get("db.spaces") == "SELECT * STREAM x FROM y # z");
  CHECK(back->get("db.quotes") == "a \"b\" \\ {c}; d");
  CHECK(back->get("db.controls") == std::string("x\ny\r\t\x01", 7) + std::string(1, '\0'));
  CHECK(back->get("db.nested") == "v");
  CHECK(back->get("db.nested.0.deep") == "1");
  CHECK(back->path("db.empty") != nullptr);
  CHECK(back->get("db.empty", "x").empty());

  auto semi = ipc::Tree::parse("db { message hello; id 12 }\n");
  REQUIRE(semi);
  CHECK(semi->get("db.message") == "hello");
  CHECK(semi->get("db.id") == "12");

  std::string err;
  CHECK_FALSE(ipc::Tree::parse("db {\n a 1\n", &err));
  CHECK_FALSE(err.empty());
  CHECK_FALSE(ipc::Tree::parse("}\n"));
  CHECK_FALSE(ipc::Tree::parse("a \"unterminated\n"));
  CHECK_FALSE(ipc::Tree::parse("a b c\n"));
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "a {\n";
  CHECK_FALSE(ipc::Tree::parse(deep));
}

TEST_CASE("frames: split delivery, bad magic, version, oversize", "[ipc]") {
  const std::string f = ipc::encodeFrame(ipc::Kind::Request, "db hello\n");
  REQUIRE(f.size() == ipc::kHeaderSize + 9);
  ipc::FrameReader r;
  ipc::Frame out;
  std::string err;
  for (size_t i = 0; i + 1 < f.size(); ++i) {
    r.feed(&f[i], 1);
    REQUIRE(r.next(out, err) == ipc::FrameReader::Result::NeedMore);
  }
  r.feed(&f.back(), 1);
  REQUIRE(r.next(out, err) == ipc::FrameReader::Result::Frame);
  CHECK(out.kind == ipc::Kind::Request);
  CHECK(out.payload == "db hello\n");
  CHECK(r.buffered() == 0);

  ipc::FrameReader bad;
  bad.feed("GET / HTTP/1.1\r\n", 16);
  CHECK(bad.next(out, err) == ipc::FrameReader::Result::Bad);

  std::string v2 = f;
  v2[4] = 2;
  ipc::FrameReader ver;
  ver.feed(v2.data(), v2.size());
  CHECK(ver.next(out, err) == ipc::FrameReader::Result::Bad);
  CHECK(err.find("version") != std::string::npos);

  std::string big = f.substr(0, ipc::kHeaderSize);
  big[8] = 0x7f;  // about 2 GiB announced
  ipc::FrameReader over;
  over.feed(big.data(), big.size());
  CHECK(over.next(out, err) == ipc::FrameReader::Result::Bad);
  CHECK(err.find("exceeds") != std::string::npos);

  CHECK_THROWS_AS(ipc::encodeFrame(ipc::Kind::Data, std::string(ipc::kMaxPayload + 1, 'x')), std::length_error);
}

TEST_CASE("value text per type", "[ipc]") {
  auto bytes = [](auto v) {
    std::vector<uint8_t> b(sizeof v);
    memcpy(b.data(), &v, sizeof v);
    return b;
  };
  auto text = [](ir::Type t, const std::vector<uint8_t>& b) {
    return storage::elementText(t, b.data(), int(b.size()));
  };
  CHECK(text(ir::Type::BYTE, {200}) == "200");
  CHECK(text(ir::Type::INTEGER, bytes(int32_t(-42))) == "-42");
  CHECK(text(ir::Type::UINT, bytes(uint32_t(4000000000u))) == "4000000000");
  CHECK(text(ir::Type::FLOAT, bytes(3.14f)) == "3.14");
  CHECK(text(ir::Type::DOUBLE, bytes(7.0 / 3)) == "2.33333");
  CHECK(text(ir::Type::DOUBLE, bytes(1e6)) == "1e+06");
  CHECK(text(ir::Type::DOUBLE, bytes(2.333)) == "2.333");
  CHECK(text(ir::Type::DOUBLE, bytes(100000.0)) == "100000");
  int32_t rat[2] = {3, 4};
  CHECK(storage::elementText(ir::Type::RATIONAL, reinterpret_cast<uint8_t*>(rat), 8) == "3/4");
  const char s[8] = {'a', 'b', 'c', 0, 'x', 0, 0, 0};
  CHECK(storage::elementText(ir::Type::STRING, reinterpret_cast<const uint8_t*>(s), 8) == "abc");
  CHECK(storage::elementText(ir::Type::STRING, reinterpret_cast<const uint8_t*>("full"), 4) == "full");
}

TEST_CASE("socket path, mode 0600, stale socket replaced, live one refused", "[ipc]") {
  TempDir d;
  CHECK(ipc::socketPath(d.dir.string()) == (d.dir / "xretractor_service.sock").string());
  CHECK(ipc::socketPath(d.dir.string(), "n1") == (d.dir / "xretractor_n1_service.sock").string());
  const std::string path = ipc::socketPath(d.dir.string());
  {  // a stale socket: bound once, nobody listens
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    strcpy(a.sun_path, path.c_str());
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    close(fd);
  }
  std::string err;
  auto s = ipc::Server::open(path, err);
  REQUIRE(s);
  struct stat sb {};
  REQUIRE(stat(path.c_str(), &sb) == 0);
  CHECK(S_ISSOCK(sb.st_mode));
  CHECK((sb.st_mode & 0777) == 0600);
  auto second = ipc::Server::open(path, err);
  CHECK_FALSE(second);
  CHECK(err.find("another server") != std::string::npos);
  s->shutdown();
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("xqry without a server: exit 10, reason on stderr", "[ipc][xqry]") {
  TempDir d;
  for (const char* args : {"-s nosuchstream", "-d", "-l", "-k"}) {
    Result r = d.xqry(args);
    CHECK(r.rc == 10);
    CHECK(r.err == "IPC: No such file or directory\n");
    CHECK(r.out.empty());
  }
  {  // a socket left behind by a dead server
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    strcpy(a.sun_path, ipc::socketPath(d.dir.string()).c_str());
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    close(fd);
  }
  Result r = d.xqry("-s x");
  CHECK(r.rc == 10);
  CHECK(r.err == "IPC: Connection refused\n");
  CHECK(fs::exists(d.dir / "xqry.log"));

  d.write("wait.toml", "[timing]\nserver_startup_wait_s = 1\nserver_startup_poll_ms = 50\n");
  r = d.xqry("-e wait.toml -w -l");
  CHECK(r.rc == 10);
  CHECK(r.err == "server not available after 1 seconds\n");
}

TEST_CASE("xqry option validation", "[ipc][xqry]") {
  TempDir d;
  Result r = d.xqry("-r -g -s x");
  CHECK(r.rc == 22);
  CHECK(r.out == "Only one output format could be selected.\n");
  r = d.xqry("--csv -j -s x");
  CHECK(r.rc == 22);
  r = d.xqry("-p 10,x -s x");
  CHECK(r.rc == 22);
  CHECK(r.err == "gnuplot mode need {x,y} or {x,ymin,ymax} parameters.");
  r = d.xqry("-p 10,1,2,3 -s x");
  CHECK(r.rc == 22);
  r = d.xqry("-p 0,5 -s x");
  CHECK(r.rc == 22);
  CHECK(r.out == "gnuplot mode need x > 0.\n");
  r = d.xqry("-p 10:5:5 -s x");
  CHECK(r.rc == 22);
  CHECK(r.out == "gnuplot mode need ymin < ymax.");
  r = d.xqry("-z -s x");
  CHECK(r.rc == 22);
  CHECK(r.err == "--gnuplot-rtl requires --gnuplot/-p mode.\n");
  r = d.xqry("");
  CHECK(r.rc == 1);
  CHECK(r.err == "no argument.\n");
  r = d.xqry("-e missing.toml -d");
  CHECK(r.rc == 4);
  CHECK(r.err.rfind("Std: ", 0) == 0);
}

TEST_CASE("xqry hello, dir, diryaml, detail, adhoc, kill", "[ipc][xqry]") {
  FakeEngine e;
  CHECK_FALSE(e.server->anyCommandSeen());
  Result r = e.xqry("-l");
  CHECK(r.rc == 0);
  CHECK(r.out.empty());
  CHECK(e.server->anyCommandSeen());

  r = e.xqry("-d");
  CHECK(r.rc == 0);
  CHECK(r.out ==
        "|core0|   1|100|200|/dev/loc0|300|\n"
        "|core1| 0.5|400|500|/dev/loc1|600|\n"
        "|  src|1/10| -1|  7|         |  2|\n");

  r = e.xqry("-y");
  CHECK(r.rc == 0);
  CHECK(r.out ==
        "---\napiVersion: xqry/v1\nstreams:\n"
        "  - name: core0\n    delta: 1\n    size: 100\n    count: 200\n    location: /dev/loc0\n"
        "  - name: core1\n    delta: 0.5\n    size: 400\n    count: 500\n    location: /dev/loc1\n"
        "  - name: src\n    delta: 1/10\n    count: 7\n");

  r = e.xqry("-t core0");
  CHECK(r.rc == 0);
  CHECK(r.out ==
        "---\napiVersion: xqry/v1\nstream:\n  name: core0\n  delta: 1\n"
        "query: SELECT src[0], src[1] STREAM core0 FROM src\n"
        "fields:\n  core0.core0_0:\n    type: INTEGER\n  core0.core0_1:\n    type: FLOAT\n");
  r = e.xqry("-t nosuch");
  CHECK(r.rc == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "not found\n");
  r = e.xqry("-t core1");  // listed, but the engine has no detail for it
  CHECK(r.rc == 2);

  r = e.xqry("-a 'select * stream stradhoc from core0'");
  CHECK(r.rc == 0);
  CHECK(r.out.empty());
  r = e.xqry("-a \"DECLARE a INTEGER STREAM adhoc_src, 0.1 FILE 'datafile1.txt'\"");
  CHECK(r.rc == 2);
  CHECK(r.err == "bad rcv: Fail parse: AdHoc DECLARE not supported\n");
  {
    std::lock_guard lk(e.mu);
    REQUIRE(e.adhocs.size() == 2);
    CHECK(e.adhocs[0] == "select * stream stradhoc from core0");
  }

  r = e.xqry("-j -l");
  CHECK(r.out == "{\"version\":1,\"event\":\"pong\"}\n");
  r = e.xqry("-j -d");
  CHECK(r.out ==
        "{\"version\":1,\"event\":\"streams\",\"streams\":[{\"name\":\"core0\",\"delta\":\"1\"},"
        "{\"name\":\"core1\",\"delta\":\"0.5\"},{\"name\":\"src\",\"delta\":\"1/10\"}]}\n");
  r = e.xqry("--stats");
  CHECK(r.rc == 0);
  CHECK(r.out.find("disconnected: 0") != std::string::npos);

  CHECK_FALSE(e.killed);
  r = e.xqry("-k");
  CHECK(r.rc == 0);
  CHECK(r.out.empty());
  CHECK(e.killed);
}

TEST_CASE("xqry against an idle server and a server that never answers", "[ipc][xqry]") {
  FakeEngine e({}, true);
  Result r = e.xqry("-d");
  CHECK(r.rc == 4);
  CHECK(r.err == "Std: No such node (db.stream)\n");
  r = e.xqry("-s core0");
  CHECK(r.rc == 2);
  r = e.xqry("-l");
  CHECK(r.rc == 0);

  e.stopPolling();  // the socket accepts, nobody answers
  e.write("fast.toml", "[ipc]\nclient_response_max_fails = 20\n");
  r = e.xqry("-e fast.toml -d");
  CHECK(r.rc == 4);
  CHECK(r.out.empty());
  CHECK(r.err == "server not found\nStd: No such node (db.stream)\n");
  r = e.xqry("-e fast.toml -s core0");
  CHECK(r.rc == 110);
  CHECK_FALSE(r.err.empty());
  r = e.xqry("-e fast.toml -l");
  CHECK(r.rc == 71);
  CHECK(r.err == "server not found\nbad rcv: \n");
}

namespace {

// A listening socket at `path` that is no ipc::Server: it reads and never answers.
int listenAt(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  strcpy(a.sun_path, path.c_str());
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 4) != 0) return -1;
  return fd;
}

// Accepts one client and reads its whole request (header and payload); the connection, or -1.
int acceptRequest(int listenFd) {
  int c = accept(listenFd, nullptr, nullptr);
  if (c < 0) return -1;
  char head[ipc::kHeaderSize];
  size_t got = 0;
  while (got < sizeof head) {
    ssize_t n = read(c, head + got, sizeof head - got);
    if (n <= 0) return c;
    got += size_t(n);
  }
  size_t left = (size_t(uint8_t(head[8])) << 24) | (size_t(uint8_t(head[9])) << 16) | (size_t(uint8_t(head[10])) << 8) |
                size_t(uint8_t(head[11]));
  char buf[4096];
  while (left > 0) {
    ssize_t n = read(c, buf, std::min(left, sizeof buf));
    if (n <= 0) break;
    left -= size_t(n);
  }
  return c;
}

}  // namespace

// The request went out whole and the connection ended before the answer: the
// import may or may not have been made, and xqry says that, not a refusal.
TEST_CASE("xqry -a: a connection lost before the answer leaves the outcome unknown: exit 104", "[ipc][xqry][adhoc]") {
  TempDir d;
  const int fd = listenAt(ipc::socketPath(d.dir.string()));
  REQUIRE(fd >= 0);
  std::thread server([fd] {
    for (int i = 0; i < 3; ++i) close(acceptRequest(fd));  // read the request, close without a word
  });
  Result r = d.xqry("-a \"SELECT * STREAM k1 FROM c\"", 60);
  CHECK(r.rc == 104);
  CHECK(r.err ==
        "xqry: the engine did not answer (connection lost); whether k1 was added is unknown: "
        "check with xqry -d\n");
  r = d.xqry("-j --remove k1", 60);
  CHECK(r.rc == 104);
  CHECK(r.out.find("\"code\":\"outcome_unknown\"") != std::string::npos);
  CHECK(r.err.find("whether k1 was removed is unknown") != std::string::npos);
  r = d.xqry("-a \"RULE hot ON c WHEN c[0] > 1 DO DUMP -1 TO 0\"", 60);
  CHECK(r.rc == 104);
  CHECK(r.err.find("whether rule hot was added is unknown") != std::string::npos);
  server.join();
  close(fd);
}

// The process that listened is gone while its socket lives on in another (a
// child that inherited it): the client stops waiting for an answer nobody will give.
TEST_CASE("xqry -a: a server whose process ended is not waited for, though its socket is open", "[ipc][xqry][adhoc]") {
  TempDir d;
  const std::string path = ipc::socketPath(d.dir.string());
  int pipeFd[2];
  REQUIRE(pipe(pipeFd) == 0);
  const pid_t listener = fork();
  if (listener == 0) {
    const int fd = listenAt(path);
    if (fd < 0) _exit(1);
    const pid_t holder = fork();  // keeps the socket and reads, never answers
    if (holder == 0) {
      [[maybe_unused]] const int conn = acceptRequest(fd);  // held open
      pause();
      _exit(0);
    }
    [[maybe_unused]] ssize_t w = write(pipeFd[1], &holder, sizeof holder);
    _exit(0);
  }
  close(pipeFd[1]);
  pid_t holder = -1;
  REQUIRE(read(pipeFd[0], &holder, sizeof holder) == sizeof holder);
  close(pipeFd[0]);
  int st = -1;
  REQUIRE(waitpid(listener, &st, 0) == listener);
  REQUIRE((WIFEXITED(st) && WEXITSTATUS(st) == 0));
  const auto t0 = std::chrono::steady_clock::now();
  Result r = d.xqry("-a \"SELECT * STREAM k1 FROM c\"", 60);
  kill(holder, SIGKILL);
  CHECK(r.rc == 104);
  CHECK(r.err ==
        "xqry: the engine did not answer (the server's process ended); whether k1 was added is unknown: "
        "check with xqry -d\n");
  CHECK(std::chrono::steady_clock::now() - t0 < 30s);
}

TEST_CASE("xqry -s: exactly N raw records with nulls, then kill", "[ipc][xqry]") {
  FakeEngine e;
  Result r;
  std::thread client([&] { r = e.xqry("-s core0 -k -m 3"); });
  REQUIRE(e.waitSubscribed("core0"));
  // Records of other streams are not seen; ten records are offered, three printed.
  e.server->publish("core1", {"1", "2"}, {false, false});
  e.server->publish("core0", {"10", "0"}, {false, true});
  e.server->publish("core0", {"20", "30"}, {false, false});
  e.server->publish("core0", {"0", "0"}, {true, true});
  for (int i = 0; i < 7; ++i) e.server->publish("core0", {"99", "99"}, {false, false});
  client.join();
  CHECK(r.rc == 0);
  CHECK(r.out == "10 null \r\n20 30 \r\nnull null \r\n");
  CHECK(e.killed);
  CHECK(r.err.empty());
}

TEST_CASE("xqry -s -n skips all-NULL records but counts them", "[ipc][xqry]") {
  FakeEngine e;
  Result r;
  std::thread client([&] { r = e.xqry("-s core0 -n -m 3"); });
  REQUIRE(e.waitSubscribed("core0"));
  e.server->publish("core0", {"10", "0"}, {false, true});
  e.server->publish("core0", {"0", "0"}, {true, true});
  e.server->publish("core0", {"20", "30"}, {false, false});
  e.server->publish("core0", {"40", "50"}, {false, false});
  client.join();
  CHECK(r.rc == 0);
  CHECK(r.out == "10 null \r\n20 30 \r\n");
  CHECK_FALSE(e.killed);
}

TEST_CASE("xqry -s stops at the end marker; unknown stream; no data", "[ipc][xqry]") {
  FakeEngine e;
  Result r;
  std::thread client([&] { r = e.xqry("-s core0"); });
  REQUIRE(e.waitSubscribed("core0"));
  e.server->publish("core0", {"1", "2"}, {false, false});
  e.server->publish("core0", {"3", "4"}, {false, false});
  e.stop = true;  // the engine ends: poll thread first, then shutdown
  e.thread.join();
  e.server->shutdown();
  client.join();
  CHECK(r.rc == 0);
  CHECK(r.out == "1 2 \r\n3 4 \r\n");
  e.thread = std::thread([] {});
  CHECK_FALSE(fs::exists(ipc::socketPath(e.dir.string())));

  FakeEngine f;
  r = f.xqry("-s nosuch");
  CHECK(r.rc == 2);
  CHECK_FALSE(r.err.empty());
  f.write("nodata.toml", "[timing]\nquery_no_data_timeout_ms = 300\n");
  r = f.xqry("-e nodata.toml -s core0");
  CHECK(r.rc == 61);
  CHECK(r.err == "No data received for 300 ms, assuming server is dead.\nxqry: core0: no data in stream\n");
}

TEST_CASE("xqry -s output formats", "[ipc][xqry]") {
  FakeEngine e;
  auto run = [&](const std::string& args) {
    Result r;
    std::thread client([&] { r = e.xqry("-s core0 -m 2 " + args); });
    REQUIRE(e.waitSubscribed("core0"));
    e.server->publish("core0", {"1", "2.5"}, {false, false});
    e.server->publish("core0", {"3", "0"}, {false, true});
    client.join();
    REQUIRE(r.rc == 0);
    // The client is gone before the next run subscribes.
    REQUIRE(e.waitSubscribed("core0", 60s, false));
    return r.out;
  };
  std::string g = run("-g");
  CHECK(countOf(g, "core0.core0_0 1 ") == 1);
  CHECK(countOf(g, "core0.core0_1 2.5 ") == 1);
  CHECK(countOf(g, "core0.core0_0 3 ") == 1);
  CHECK(countOf(g, "core0.core0_1") == 1);  // NULL fields are left out
  CHECK(countOf(g, "\n") == 3);

  std::string f = run("-f");
  CHECK(f.rfind("core0 core0_0=1,core0_1=2.5 ", 0) == 0);
  CHECK(countOf(f, "\ncore0 core0_0=3 ") == 1);

  std::string p = run("-p 3,0,10");
  CHECK(p ==
        "set term qt noraise\nset style fill transparent solid 0.5\nset xrange [0:3]\nset yrange [0:10]\n"
        "set ticslevel 0\nset hidden3d\nset view 60,30\n"
        "plot '-' u 1:2 t '[core0-0]' w lines lc rgb 'red', '-' u 1:2 t '[core0-1]' w lines lc rgb 'blue'\r\n"
        "0 1\r\ne\r\n0 2.5\r\ne\r\n"
        "plot '-' u 1:2 t '[core0-0]' w lines lc rgb 'red', '-' u 1:2 t '[core0-1]' w lines lc rgb 'blue'\r\n"
        "0 3\r\n1 1\r\ne\r\n0 NaN\r\n1 2.5\r\ne\r\n");
  CHECK(run("-p 3:10 -z").find("set xrange [3:0]\nset yrange [0:10]\n") != std::string::npos);

  // Index and slot time come first; a server that sends neither leaves them empty.
  CHECK(run("--csv") == "n,t,core0_0,core0_1\n,,1,2.5\n,,3,\n");
  CHECK(run("-j") ==
        "{\"version\":1,\"event\":\"schema\",\"stream\":\"core0\",\"delta\":\"1\","
        "\"query\":\"SELECT src[0], src[1] STREAM core0 FROM src\","
        "\"fields\":[{\"name\":\"core0_0\",\"type\":\"INTEGER\",\"count\":1},"
        "{\"name\":\"core0_1\",\"type\":\"FLOAT\",\"count\":1}]}\n"
        "{\"version\":1,\"event\":\"record\",\"stream\":\"core0\",\"values\":[\"1\",\"2.5\"]}\n"
        "{\"version\":1,\"event\":\"record\",\"stream\":\"core0\",\"values\":[\"3\",null]}\n"
        "{\"version\":1,\"event\":\"end\",\"reason\":\"limit\"}\n");
}

TEST_CASE("xqry -j: a STRING that is not UTF-8 is valid JSON, U+FFFD for each bad sequence (issue 42)", "[ipc][xqry]") {
  FakeEngine e;
  Result r;
  std::thread client([&] { r = e.xqry("-s core0 -m 2 -j"); });
  REQUIRE(e.waitSubscribed("core0"));
  e.server->publish("core0", {"\xff\xfe", "nan"}, {false, false});
  const std::string cut = std::string("a\xe2\x82") + "b\xc3\xa9\"\x01";  // "\x82b" would be one escape
  e.server->publish("core0", {cut, "0"}, {false, true});
  client.join();
  REQUIRE(r.rc == 0);
  std::vector<Json> records;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    Json ev;
    REQUIRE_NOTHROW(ev = Json::parse(line));  // strict UTF-8: the bytes as they were failed here
    if (ev["event"] == "record") records.push_back(ev);
  }
  REQUIRE(records.size() == 2);
  CHECK(records[0]["values"][0] == "\xef\xbf\xbd\xef\xbf\xbd");                        // two bytes that start nothing
  CHECK(records[0]["values"][1] == "nan");                                             // NaN is text, NULL is null
  CHECK(records[1]["values"][0] == std::string("a\xef\xbf\xbd") + "b\xc3\xa9\"\x01");  // cut short: one U+FFFD
  CHECK(records[1]["values"][1].is_null());
}

TEST_CASE("malformed and oversized frames: error reply, connection dropped, server unharmed", "[ipc]") {
  FakeEngine e;
  const std::string path = ipc::socketPath(e.dir.string());
  std::string err;
  for (const std::string& junk : {std::string("GET / HTTP/1.1\r\n\r\n"),
                                  std::string("RDBQ\x01\x01\x00\x00\x00\x01\x00\x01", 12),  // 65537 bytes announced
                                  ipc::encodeFrame(ipc::Kind::Request, "db {\n message hello\n"),  // unbalanced tree
                                  ipc::encodeFrame(ipc::Kind::Data, "stream x\n")}) {  // clients only send requests
    auto c = ipc::Client::connect(path, err);
    REQUIRE(c);
    REQUIRE(c->sendRaw(junk));
    ipc::Frame f;
    REQUIRE(c->receiveFrame(f, 30000, &err) == ipc::Client::Status::Ok);
    CHECK(f.kind == ipc::Kind::Error);
    CHECK(f.payload.find("error: ") != std::string::npos);
    CHECK(c->receiveFrame(f, 30000, &err) == ipc::Client::Status::Closed);
  }
  // An unknown command is answered, and the connection stays.
  auto c = ipc::Client::connect(path, err);
  REQUIRE(c);
  ipc::Tree reply;
  REQUIRE(c->request("frobnicate", "", reply, 30000, &err) == ipc::Client::Status::Ok);
  CHECK(reply.get("db") == "error: unknown command: frobnicate");
  REQUIRE(c->request("hello", "", reply, 30000, &err) == ipc::Client::Status::Ok);
  CHECK(reply.get("db") == "world");
  REQUIRE(c->request("show", "", reply, 30000, &err) == ipc::Client::Status::Ok);
  CHECK(reply.get("db") == "error: missing stream name");
  REQUIRE(c->request("show", "nosuch", reply, 30000, &err) == ipc::Client::Status::Ok);
  CHECK(reply.get("db") == "error: unknown stream: nosuch");
  CHECK(e.xqry("-l").rc == 0);
}

TEST_CASE("a client that never reads is cut off; publish never blocks", "[ipc]") {
  ipc::ServerOptions opt;
  opt.minQueueElements = 256;
  opt.queueBufferSeconds = 1;
  FakeEngine e(opt);
  std::string err;
  auto slow = ipc::Client::connect(ipc::socketPath(e.dir.string()), err);
  REQUIRE(slow);
  ipc::Tree reply;
  REQUIRE(slow->request("show", "core0", reply, 30000, &err) == ipc::Client::Status::Ok);
  REQUIRE(e.server->subscribed("core0"));
  // A second, reading subscriber keeps getting everything while the slow one is dropped.
  Result fast;
  std::thread reader([&] { fast = e.xqry("-s core0 -m 3000"); });
  REQUIRE(e.waitSubscribed("core0"));
  eventually([&] { return e.server->stats().subscribers >= 2; });
  REQUIRE(e.server->stats().subscribers == 2);

  const std::vector<std::string> values = {std::string(1000, 'x'), "1"};
  const std::vector<bool> nulls = {false, false};
  auto worst = std::chrono::nanoseconds(0);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 3000; ++i) {
    const auto a = std::chrono::steady_clock::now();
    e.server->publish("core0", values, nulls);
    worst = std::max(worst, std::chrono::steady_clock::now() - a);
    if (i % 20 == 19) std::this_thread::sleep_for(1ms);  // a little pacing for the reading client
  }
  const auto total = std::chrono::steady_clock::now() - t0;
  reader.join();
  // A publish that blocked on the slow client would never return: a bound far
  // above any machine's load catches it (no latency is asserted; see bench/).
  CHECK(total < 60s);
  INFO("slowest publish: " << std::chrono::duration_cast<std::chrono::milliseconds>(worst).count() << " ms");
  const auto st = e.server->stats();
  CHECK(st.disconnected == 1);
  CHECK(st.dropped >= 1);
  CHECK(fast.rc == 0);
  CHECK(countOf(fast.out, "\r\n") == 3000);
  // The slow client finds its connection closed after the queued data.
  ipc::Tree m;
  ipc::Client::Status s = ipc::Client::Status::Ok;
  int got = 0;
  while ((s = slow->receive(m, 30000, &err)) == ipc::Client::Status::Ok) ++got;
  CHECK(s == ipc::Client::Status::Closed);
  CHECK(got < 3000);
}

TEST_CASE("requests still waiting at shutdown are told the server is stopping", "[ipc]") {
  FakeEngine e;
  e.stopPolling();  // an engine that never got to serve
  std::string err;
  auto c = ipc::Client::connect(ipc::socketPath(e.dir.string()), err);
  REQUIRE(c);
  // The request as Client::request sends it, in the server's socket before the shutdown starts.
  ipc::Tree req;
  ipc::Tree& db = req.add("db");
  db.add("message", "get");
  db.add("id", std::to_string(getpid()));
  REQUIRE(c->sendRaw(ipc::encodeFrame(ipc::Kind::Request, req.text())));
  e.server->shutdown();
  ipc::Frame f;
  REQUIRE(c->receiveFrame(f, 30000, &err) == ipc::Client::Status::Ok);
  auto reply = ipc::Tree::parse(f.payload);
  REQUIRE(reply);
  CHECK(reply->get("db") == "server stopping");
}

// ---------------------------------------------------------------- the real engine
namespace {

// Waits for a child, at most `limit`; its exit status, or -1 on a timeout (the
// child keeps running) or a signal.
int waitExit(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int st = 0;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (r < 0 || std::chrono::steady_clock::now() >= end) return -1;
    std::this_thread::sleep_for(10ms);
  }
}

// `sh -c "exec CMD"` in `dir` with TMPDIR and XDG_CONFIG_HOME = dir: the pid is CMD's.
pid_t spawn(const fs::path& dir, const std::string& cmd) {
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(127);
    setenv("TMPDIR", dir.c_str(), 1);
    setenv("XDG_CONFIG_HOME", dir.c_str(), 1);
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// A running xretractor on `query` (a text source `c` of 1..10^6 at 20 records a second
// and a pass-through stream `s`), serving in its own TMPDIR.
struct LiveEngine : TempDir {
  pid_t pid = -1;
  int exitCode = -1;
  static constexpr const char* kQuery =
      "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
      "SELECT c[0] STREAM s FROM c\n";

  // `config`: TOML text for -g (empty = none).
  explicit LiveEngine(const std::string& config = "", bool start = true) {
    std::string nums;
    for (int i = 1; i <= 100000; ++i) nums += std::to_string(i) + "\n";
    write("c.txt", nums);
    write("q.rql", kQuery);
    if (!config.empty()) write("engine.toml", config);
    if (start) REQUIRE(this->start(config.empty() ? "" : "-g engine.toml"));
  }
  fs::path lock() const { return dir / "xretractor_service.lock"; }
  // Starts the engine and waits until its lock says it serves.
  bool start(const std::string& args) {
    pid = spawn(dir, std::string("'") + RDB_XRETRACTOR + "' q.rql -k " + args + " >engine.out 2>engine.err");
    const std::string want = "PID: " + std::to_string(pid) + "\n";
    const auto end = std::chrono::steady_clock::now() + 60s;  // a slow start on a busy machine
    while (std::chrono::steady_clock::now() < end) {
      if (slurp(lock()).rfind(want, 0) == 0) return true;
      exitCode = waitExit(pid, 10ms);
      if (exitCode != -1) {
        pid = -1;
        return false;
      }
    }
    return false;
  }
  // Runs the engine to its end and returns its exit status (-1: still running after `limit`).
  int runToEnd(const std::string& args, std::chrono::milliseconds limit = 60s) {
    pid = spawn(dir, std::string("'") + RDB_XRETRACTOR + "' q.rql -k " + args + " >engine.out 2>engine.err");
    exitCode = waitExit(pid, limit);
    if (exitCode != -1) pid = -1;
    return exitCode;
  }
  std::vector<std::string> streamNames() const {
    Result r = xqry("-y");
    std::vector<std::string> names;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("  - name: ", 0) == 0) names.push_back(line.substr(10));
    return names;
  }
  ~LiveEngine() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      if (waitExit(pid, 5s) == -1) {
        kill(pid, SIGKILL);
        waitExit(pid, 5s);
      }
    }
  }
};

}  // namespace

TEST_CASE("live engine: an ad hoc import is exactly one SELECT; RULE, DECLARE or a second statement are refused",
          "[ipc][live]") {
  LiveEngine e;
  const std::vector<std::string> before = e.streamNames();
  REQUIRE(before == std::vector<std::string>{"c", "s"});
  const std::string pwn = (e.dir / "pwned").string();
  struct Case {
    std::string text;
    std::string where;  // line:col the refusal names
  };
  const std::vector<Case> cases = {
      {"SELECT c[0] STREAM x1 FROM c RULE r ON x1 WHEN x1[0] > 0 DO SYSTEM 'id > " + pwn + "'", "1:30"},
      {"select c[0] stream x2 from c rule r on x2 when x2[0] > 0 do system 'id > " + pwn + "'", "1:30"},
      {"SELECT c[0] STREAM x3 FROM c\nRULE r ON x3 WHEN x3[0] > 0 DO SYSTEM 'id > " + pwn + "'", "2:1"},
      {"SELECT c[0] STREAM x4 FROM c RULE r ON x4 WHEN x4[0] > 0 DO DUMP -1 TO 0", "1:30"},
      {"SELECT c[0] STREAM x5 FROM c; SELECT c[0] STREAM x6 FROM c", "1:29"},
      {"SELECT c[0] STREAM x7 FROM c\nSELECT c[0] STREAM x8 FROM c", "2:1"},
      {"SELECT c[0] STREAM x9 FROM c SELECT c[0] STREAM x10 FROM c", "1:30"},
      {"SELECT c[0] STREAM x11 FROM c\nDECLARE w INTEGER STREAM d, 1 TEXTFILE 'c.txt'", "2:1"},
      {"SELECT c[0] STREAM x12 FROM c\n  STORAGE 'elsewhere'", "2:3"},
  };
  for (auto& k : cases) {
    INFO(k.text);
    Result r = e.xqry("-a \"" + k.text + "\"");
    CHECK(r.rc == 2);
    CHECK(r.err.rfind("bad rcv: ", 0) == 0);
    CHECK(r.err.find(k.where + ":") != std::string::npos);
  }
  const size_t stored = slurp(e.dir / "s").size();  // ten slots more: a rule would have fired by now
  CHECK(eventually([&] { return slurp(e.dir / "s").size() >= stored + 10 * 4; }));
  CHECK_FALSE(fs::exists(pwn));
  CHECK(e.streamNames() == before);
  CHECK_FALSE(fs::exists(e.dir / "x1"));
  // The engine still imports a plain SELECT.
  Result ok = e.xqry("-a \"SELECT c[0] * 2 STREAM fine FROM c\"");
  CHECK(ok.rc == 0);
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s", "fine"});
}

// Setting up a 65536-record window takes the engine far longer than the
// shortest reply time a client can be given (ipc.client_response_max_fails = 1:
// 10 ms), as an import of a wide window under load took longer than the default.
// The import is waited for, not reported as failed while it is being made; a
// second import of the name says the name is taken.
TEST_CASE("live engine: a slow import is waited for and added; importing the name again says it exists",
          "[ipc][live][adhoc]") {
  LiveEngine e;
  e.write("short.toml", "[ipc]\nclient_response_max_fails = 1\n");
  const std::string import = "-e short.toml -a \"SELECT * STREAM k1 FROM c@(1,65536)\"";
  const auto t0 = std::chrono::steady_clock::now();
  Result r = e.xqry(import, 120);
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO("the import took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
  CHECK(took > 10ms);  // the premise: longer than the client's reply time
  CHECK(r.rc == 0);
  CHECK(r.err.empty());
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s", "k1"});
  r = e.xqry(import, 120);
  CHECK(r.rc == 2);
  CHECK(r.err == "bad rcv: stream k1 exists\n");
  r = e.xqry("-a \"DECLARE w INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\"", 120);
  CHECK(r.rc == 2);
  CHECK(r.err == "bad rcv: stream c exists\n");
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s", "k1"});
  // The engine with its wide import runs on and stops cleanly.
  REQUIRE(e.xqry("-k").rc == 0);
  CHECK(waitExit(e.pid, 60s) == 0);
  e.pid = -1;
}

TEST_CASE("live engine: idle connections are closed; the client limit is configurable; xqry says too many clients",
          "[ipc][live]") {
  // The checks of a full engine must fit in the idle timeout: four seconds leave room for a busy machine.
  LiveEngine e("[ipc]\nmax_clients = 8\nclient_idle_timeout_ms = 4000\n");
  const std::string path = ipc::socketPath(e.dir.string());
  std::string err;
  // A subscriber that has sent its request is not idle.
  auto sub = ipc::Client::connect(path, err);
  REQUIRE(sub);
  ipc::Tree reply;
  REQUIRE(sub->request("show", "s", reply, 30000, &err) == ipc::Client::Status::Ok);
  // The rest of the limit: connections that never send anything.
  std::vector<std::unique_ptr<ipc::Client>> idle;
  for (int i = 0; i < 7; ++i) {
    idle.push_back(ipc::Client::connect(path, err));
    REQUIRE(idle.back());
  }
  CHECK(eventually([&] { return e.xqry("-l").rc == 16; }));  // all eight accepted
  Result full = e.xqry("-s s -m 1");
  CHECK(full.rc == 16);
  CHECK(full.err.find("too many clients") != std::string::npos);
  CHECK(full.err.find("did not answer") == std::string::npos);
  Result hello = e.xqry("-l");
  CHECK(hello.rc == 16);
  CHECK(hello.err.find("too many clients") != std::string::npos);
  // After the idle timeout the idle ones are gone and clients get in again.
  CHECK(eventually([&] { return e.xqry("-l").rc == 0; }));
  Result after = e.xqry("-s s -m 2");
  CHECK(after.rc == 0);
  CHECK(countOf(after.out, "\r\n") == 2);
  CHECK(e.xqry("-l").rc == 0);
  for (auto& c : idle) {  // at most a word on why, then the end of the connection
    ipc::Frame f;
    ipc::Client::Status st = c->receiveFrame(f, 30000, &err);
    if (st == ipc::Client::Status::Ok) {
      CHECK(f.kind == ipc::Kind::Error);
      CHECK(f.payload.find("idle") != std::string::npos);
      st = c->receiveFrame(f, 30000, &err);
    }
    CHECK(st == ipc::Client::Status::Closed);
  }
  Result stats = e.xqry("--stats");
  CHECK(stats.out.find("idle_closed: 7") != std::string::npos);
  // The subscriber kept its connection and its records.
  ipc::Tree m;
  int got = 0;
  while (got < 100 && sub->receive(m, 0, &err) == ipc::Client::Status::Ok) ++got;
  CHECK(got >= 20);
  CHECK(sub->receive(m, 30000, &err) == ipc::Client::Status::Ok);
  CHECK(m.get("stream") == "s");
}

TEST_CASE("live engine: subscribers of a removed stream are told so", "[ipc][live]") {
  LiveEngine e;
  REQUIRE(e.xqry("-a \"SELECT c[0] + 1 STREAM gone FROM c\"").rc == 0);
  pid_t sub = spawn(e.dir, std::string("'") + RDB_XQRY + "' -s gone </dev/null >sub.out 2>sub.err");
  eventually([&] { return countOf(slurp(e.dir / "sub.out"), "\r\n") >= 2; });
  REQUIRE(countOf(slurp(e.dir / "sub.out"), "\r\n") >= 2);
  // Told at once, not after the 10 s a client waits without data (exit 61).
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(e.xqry("--remove gone").rc == 0);
  const int rc = waitExit(sub, 30s);
  if (rc == -1) kill(sub, SIGKILL), waitExit(sub, 5s);
  CHECK(rc == 43);
  CHECK(std::chrono::steady_clock::now() - t0 < 8s);
  CHECK(slurp(e.dir / "sub.err").find("removed") != std::string::npos);
  // At shutdown a subscriber gets the end marker and stops at once.
  pid_t sub2 = spawn(e.dir, std::string("'") + RDB_XQRY + "' -s s </dev/null >sub2.out 2>sub2.err");
  CHECK(eventually([&] { return countOf(slurp(e.dir / "sub2.out"), "\r\n") >= 1; }));
  const auto t1 = std::chrono::steady_clock::now();
  CHECK(e.xqry("-k").rc == 0);
  CHECK(waitExit(sub2, 30s) == 0);
  CHECK(std::chrono::steady_clock::now() - t1 < 8s);
}

TEST_CASE("live engine: a symlink at the lock path is refused, its target untouched; the lock is 0600", "[ipc][live]") {
  {
    LiveEngine e("", false);
    e.write("victim", "precious\n");
    chmod((e.dir / "victim").c_str(), 0644);
    fs::create_symlink(e.dir / "victim", e.lock());
    const int rc = e.runToEnd("-m 3");
    CHECK(rc != 0);
    CHECK(rc != -1);
    CHECK(slurp(e.dir / "victim") == "precious\n");
    struct stat sb {};
    REQUIRE(stat((e.dir / "victim").c_str(), &sb) == 0);
    CHECK((sb.st_mode & 0777) == 0644);
    CHECK(fs::is_symlink(e.lock()));
    CHECK(slurp(e.dir / "engine.err").find("symbolic link") != std::string::npos);
    CHECK_FALSE(fs::exists(e.dir / "s"));
  }
  {
    LiveEngine e;
    struct stat sb {};
    REQUIRE(lstat(e.lock().c_str(), &sb) == 0);
    CHECK(S_ISREG(sb.st_mode));
    CHECK((sb.st_mode & 0777) == 0600);
  }
}

namespace {
long rssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// Waits (up to a minute) until the engine has stored `records` INTEGER records of `stream`.
void waitForRecords(const LiveEngine& e, const std::string& stream, size_t records) {
  eventually([&] { return slurp(e.dir / stream).size() >= records * 4; });
}

// A stored stream of one INTEGER: at least `atLeast` records, every one `want`.
void checkEveryRecord(const std::string& stream, const std::string& bytes, int32_t want, size_t atLeast) {
  INFO("stream " << stream);
  REQUIRE(bytes.size() >= atLeast * 4);
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    int32_t v;
    memcpy(&v, bytes.data() + i, 4);
    INFO("record " << i / 4);
    CHECK(v == want);
  }
}
}  // namespace

TEST_CASE("live engine: a wide ad hoc import answers at once and runs on the VM until its native code is ready",
          "[ipc][live][adhoc-jit]") {
  LiveEngine e("", false);
  REQUIRE(e.start("-v"));
  // Compiling this unit takes about a second of LLVM time: the slot thread must not wait for it.
  Result r = e.xqry("-a \"SELECT * STREAM wide FROM c@(1,2000)\"");
  CHECK(r.rc == 0);
  CHECK(r.err.find("did not answer") == std::string::npos);
  // A narrow one too; its records are exact across the switch from the VM to native code.
  REQUIRE(e.xqry("-a \"SELECT c[0]*3 STREAM t FROM c\"").rc == 0);
  eventually([&] { return slurp(e.dir / "engine.out").find("JIT: 1 of 1 streams") != std::string::npos; });
  waitForRecords(e, "t", 12);
  CHECK(slurp(e.dir / "engine.out").find("JIT: 1 of 1 streams") != std::string::npos);
  REQUIRE(e.xqry("-k").rc == 0);
  REQUIRE(waitExit(e.pid, 30s) == 0);
  e.pid = -1;
  std::string t = slurp(e.dir / "t");
  REQUIRE(t.size() >= 8 * 4);
  std::vector<int32_t> v(t.size() / 4);
  memcpy(v.data(), t.data(), v.size() * 4);
  for (size_t i = 1; i < v.size(); ++i) {
    INFO("record " << i);
    CHECK(v[i] == v[i - 1] + 3);
  }
}

// A window of 65536 INTEGERs (256 KiB records) makes blocks at most 16 slots
// long, and its import keeps the slot thread far longer than 16 slots of
// 1/10000 s. The block run after it, with every slot due by then, must be no
// longer than the new stream holds (it wrote past the new stream's Stream::vis: a
// crash at exit, or ASan's heap-buffer-overflow in the window's step).
TEST_CASE("live engine: the block after a wide import made while the engine is behind fits the new stream",
          "[ipc][live][adhoc]") {
  LiveEngine e("", false);
  e.write("q.rql", "DECLARE v INTEGER STREAM c, 1/10000 TEXTFILE 'c.txt'\nSELECT c[0] * 2 STREAM d FROM c\n");
  REQUIRE(e.start(""));
  waitForRecords(e, "d", 100);
  // k1 joins only once d has written the 65536 records it reads (6.5 s of slots): the test ends before.
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(e.xqry("-a \"SELECT * STREAM k1 FROM d@(1,65536) VOLATILE\"", 120).rc == 0);
  // The premise: the import took 100 slots or more, far more than 16.
  CHECK(std::chrono::steady_clock::now() - t0 > 10ms);
  const size_t want = slurp(e.dir / "d").size() + 2000 * 4;  // blocks after the import have run
  const auto end = std::chrono::steady_clock::now() + 30s;
  while (slurp(e.dir / "d").size() < want && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(25ms);
  CHECK(slurp(e.dir / "d").size() >= want);
  REQUIRE(e.xqry("-k").rc == 0);
  CHECK(waitExit(e.pid, 30s) == 0);
  e.pid = -1;
  CHECK(slurp(e.dir / "engine.err").empty());
}

TEST_CASE("live engine: a VOLATILE window folded into its reducer is served and read like any stream",
          "[ipc][live][fusion]") {
  LiveEngine e("", false);
  e.write("q.rql",
          "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
          "SELECT * STREAM w FROM c@(1,4) VOLATILE\n"
          "SELECT to_integer(m[0]) STREAM m FROM w.sumc\n");
  REQUIRE(e.start(""));
  // A subscriber sees the window's records though the engine never stores them.
  Result sub = e.xqry("-s w -m 2");
  REQUIRE(sub.rc == 0);
  std::istringstream lines(sub.out);
  for (std::string line; std::getline(lines, line);) {
    int a = 0, b = 0, c = 0, d = 0;
    REQUIRE(sscanf(line.c_str(), "%d %d %d %d", &a, &b, &c, &d) == 4);
    CHECK((b == a - 1 && c == a - 2 && d == a - 3));
  }
  // A new reader: the window is materialised again, its recent records included.
  REQUIRE(e.xqry("-a \"SELECT w[0] - w[3] STREAM d FROM w\"").rc == 0);
  waitForRecords(e, "d", 10);
  REQUIRE(e.xqry("-k").rc == 0);
  REQUIRE(waitExit(e.pid, 30s) == 0);
  e.pid = -1;
  checkEveryRecord("d", slurp(e.dir / "d"), 3, 10);
  const std::string m = slurp(e.dir / "m");
  REQUIRE(m.size() >= 10 * 4);
  for (size_t i = 0; i + 4 <= m.size(); i += 4) {  // sums of 1..4, 2..5, ...
    int32_t v;
    memcpy(&v, m.data() + i, 4);
    INFO("m record " << i / 4);
    CHECK(v == int32_t(4 * (i / 4 + 4) - 6));
  }
}

// The SELECT reader of a fused window gathers the elements it loads; when an
// import makes the window a second reader, the SELECT goes back to reading
// the materialised window with the native code it was compiled with.
TEST_CASE("live engine: a SELECT over a fused window keeps its values when the window is materialised again",
          "[ipc][live][fusion]") {
  LiveEngine e("", false);
  e.write("q.rql",
          "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
          "SELECT * STREAM w FROM c@(1,8) VOLATILE\n"
          "SELECT w[0] - w[7] STREAM r FROM w\n");
  REQUIRE(e.start("-v"));
  waitForRecords(e, "r", 5);
  REQUIRE(e.xqry("-a \"SELECT w[0] - w[3] STREAM d FROM w\"").rc == 0);
  waitForRecords(e, "d", 10);
  REQUIRE(e.xqry("-k").rc == 0);
  REQUIRE(waitExit(e.pid, 30s) == 0);
  e.pid = -1;
  CHECK(slurp(e.dir / "engine.out").find("fusion: window w is not materialised; r reads") != std::string::npos);
  checkEveryRecord("d", slurp(e.dir / "d"), 3, 10);
  checkEveryRecord("r", slurp(e.dir / "r"), 7, 15);  // before and after the import
}

// An import that reads a fused window further back than its ring holds: the
// ring grows (and the import waits for the records) as for any stream, so no
// record of the import reads a window record the ring had let go.
TEST_CASE("live engine: an import reading a fused window far back waits for its records instead of reading NULL",
          "[ipc][live][fusion]") {
  LiveEngine e("", false);
  e.write("q.rql",
          "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
          "SELECT * STREAM w FROM c@(1,4) VOLATILE\n"
          "SELECT to_integer(m[0]) STREAM m FROM w.sumc\n");
  REQUIRE(e.start(""));
  waitForRecords(e, "m", 5);
  REQUIRE(e.xqry("-a \"SELECT w[0] - w[3] STREAM d FROM w>30\"").rc == 0);
  waitForRecords(e, "d", 10);
  REQUIRE(e.xqry("-k").rc == 0);
  REQUIRE(waitExit(e.pid, 30s) == 0);
  e.pid = -1;
  checkEveryRecord("d", slurp(e.dir / "d"), 3, 10);
}

namespace {
// Starts an offline engine on `plan` and waits until its chains run as one
// loop (the optimised tier came); -v's log (engine.out) is returned.
std::string startChained(LiveEngine& e, const std::string& plan, int chains = 1) {
  e.write("q.rql", plan);
  REQUIRE(e.start("-v -f"));
  eventually([&] { return slurp(e.dir / "engine.out").find("chains run as one loop") != std::string::npos; });
  const std::string out = slurp(e.dir / "engine.out");
  REQUIRE(out.find("JIT: " + std::to_string(chains) + " chains run as one loop each") != std::string::npos);
  return out;
}

// How many of the records (4 bytes each) from `skip` on are not `step`
// (their differences, when `differences`) or step - 300000: c counts
// 1..100000 and starts again, the streams read it times 3.
size_t offStepIn(const std::string& bytes, int32_t step, bool differences, size_t skip = 0) {
  size_t off = 0;
  int32_t before = 0;
  for (size_t i = 4 * skip; i + 4 <= bytes.size(); i += 4) {
    int32_t v;
    memcpy(&v, bytes.data() + i, 4);
    const int32_t x = differences ? v - before : v;
    off += (!differences || i > 4 * skip) && x != step && x != step - 300000;
    before = v;
  }
  return off;
}

// Waits for 1000 records of `stream`, stops the engine, and returns how many
// of them are off their step (offStepIn).
size_t offStep(LiveEngine& e, const std::string& stream, int32_t step, bool differences) {
  waitForRecords(e, stream, 1000);
  REQUIRE(e.xqry("-k").rc == 0);
  REQUIRE(waitExit(e.pid, 30s) == 0);
  e.pid = -1;
  const std::string bytes = slurp(e.dir / stream);
  REQUIRE(bytes.size() >= 1000 * 4);
  return offStepIn(bytes, step, differences);
}
}  // namespace

// A chain a -> b where a is read by b alone. VOLATILE, a keeps only its
// newest record in its ring (blocks of many slots: an offline run): an import
// that reads it further back dissolves the chain and waits for the records it
// reads, instead of reading what the ring held before. Stored (materialised),
// a's visible counts are not written while only its chain reads them: the
// import makes the chain write them again before the import's first block.
TEST_CASE("live engine: an import reading a chain member reads its records, materialised or not",
          "[ipc][live][chain]") {
  for (const bool stored : {false, true}) {
    INFO("a " << (stored ? "stored" : "VOLATILE"));
    LiveEngine e("", false);
    const std::string out = startChained(e, std::string("DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n") +
                                                "SELECT c[0] * 3 STREAM a FROM c" + (stored ? "\n" : " VOLATILE\n") +
                                                "SELECT a[0] + 1 STREAM b FROM a VOLATILE\n");
    CHECK(out.find(stored ? "chain: a -> b compiled as one loop\n"
                          : "chain: a -> b compiled as one loop (a not materialised)") != std::string::npos);
    REQUIRE(e.xqry("-a \"SELECT d[0] - d[3] STREAM d FROM a@(1,4)\"").rc == 0);
    CHECK(offStep(e, "d", 9, false) == 0);  // a(n) - a(n-3)
  }
}

// w is read by its chain's next member alone, 299 records back (a join with
// a source 300 times slower): a view, never written, whose reader reads a's
// ring. An import that reads w dissolves the chain; w's ring is rebuilt from
// a's, so r, now on its own step, reads w's records as before (not the ring's
// older ones).
TEST_CASE("live engine: a chain's view window read by an import is rebuilt for its reader", "[ipc][live][chain]") {
  LiveEngine e("", false);
  e.write("k.txt", "0\n");
  const std::string out = startChained(e,
                                       "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
                                       "DECLARE v INTEGER STREAM k, 15 TEXTFILE 'k.txt'\n"
                                       "SELECT c[0] * 3 STREAM a FROM c VOLATILE\n"
                                       "SELECT * STREAM w FROM a@(1,4) VOLATILE\n"
                                       "SELECT w[2] + k[0] STREAM r FROM w + k\n");
  CHECK(out.find("chain: a -> w -> r compiled as one loop (w (a view) not materialised)") != std::string::npos);
  REQUIRE(e.xqry("-a \"SELECT w[1] - w[2] STREAM d FROM w\"").rc == 0);
  CHECK(offStep(e, "d", 3, false) == 0);                    // a(n-1) - a(n-2)
  CHECK(offStepIn(slurp(e.dir / "r"), 3, true, 400) == 0);  // a(n-2), before and after the import
}

// The same on the VM (--interpret), where the chain runs from the first
// block: the import dissolves it, and its reader reads the view's records
// rebuilt from a's ring.
TEST_CASE("live engine on the VM: a chain's view window read by an import is rebuilt for its reader",
          "[ipc][live][chain]") {
  LiveEngine e("", false);
  e.write("k.txt", "0\n");
  e.write("q.rql",
          "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
          "DECLARE v INTEGER STREAM k, 15 TEXTFILE 'k.txt'\n"
          "SELECT c[0] * 3 STREAM a FROM c VOLATILE\n"
          "SELECT * STREAM w FROM a@(1,4) VOLATILE\n"
          "SELECT w[2] + k[0] STREAM r FROM w + k\n");
  REQUIRE(e.start("-v -f --interpret"));
  waitForRecords(e, "r", 400);  // the chain has run
  CHECK(eventually([&] {
    return slurp(e.dir / "engine.out")
               .find("chain: a -> w -> r runs as one loop on the VM (w (a view) not materialised)") !=
           std::string::npos;
  }));
  REQUIRE(e.xqry("-a \"SELECT w[1] - w[2] STREAM d FROM w\"").rc == 0);
  CHECK(offStep(e, "d", 3, false) == 0);                    // a(n-1) - a(n-2)
  CHECK(offStepIn(slurp(e.dir / "r"), 3, true, 400) == 0);  // a(n-2), before and after the import
}

// The same import sent at once, before the chain's code comes (the plan
// starts on quick code, stream by stream): the chain must not start keeping
// a in registers after it (a's ring holding only each run's last record).
TEST_CASE("live engine: an import reading a would-be register member before its chain runs keeps its records",
          "[ipc][live][chain]") {
  LiveEngine e("", false);
  e.write("q.rql",
          "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
          "SELECT c[0] * 3 STREAM a FROM c VOLATILE\n"
          "SELECT a[0] + 1 STREAM b FROM a VOLATILE\n");
  REQUIRE(e.start("-v -f"));
  REQUIRE(e.xqry("-a \"SELECT d[0] - d[3] STREAM d FROM a@(1,4)\"").rc == 0);
  // The optimised code (the chain's) comes later: run on past it.
  eventually([&] { return slurp(e.dir / "engine.out").find("chains run as one loop") != std::string::npos; });
  CHECK(slurp(e.dir / "engine.out").find("JIT: 0 chains run as one loop each") != std::string::npos);
  std::this_thread::sleep_for(300ms);
  CHECK(offStep(e, "d", 9, false) == 0);  // a(n) - a(n-3)
}

// Two members not materialised read by one import (a, and b through a
// window of 4): the import waits for what it reads of each.
TEST_CASE("live engine: an import reading two chain members that are not materialised waits for both",
          "[ipc][live][chain]") {
  LiveEngine e("", false);
  const std::string out = startChained(e,
                                       "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
                                       "SELECT c[0] * 3 STREAM a FROM c VOLATILE\n"
                                       "SELECT a[0] + 1 STREAM b FROM a VOLATILE\n"
                                       "SELECT b[0] * 2 STREAM z FROM b VOLATILE\n");
  CHECK(out.find("chain: a -> b -> z compiled as one loop (a, b not materialised)") != std::string::npos);
  REQUIRE(e.xqry("-a \"SELECT q[1] - q[4] STREAM q FROM a+b@(1,4)\"").rc == 0);
  CHECK(offStep(e, "q", 9, false) == 0);  // b(n) - b(n-3)
}

// p is read by h's chain and by q, which comes earlier in plan order but
// runs after h's chain in its own (q -> q2).
const std::string kLaterReaderPlan =
    "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
    "SELECT c[0] * 3 STREAM p FROM c\n"
    "SELECT p[0] + 1 STREAM q FROM p VOLATILE\n"
    "SELECT p[0] - 1 STREAM h FROM p\n"
    "SELECT h[0] + 2 STREAM h2 FROM h\n"
    "SELECT q[0] + 5 STREAM q2 FROM q\n";

// p heads the chain p -> h -> h2 though its other reader q comes earlier in
// plan order, because q's chain (q -> q2) runs after it. An import that
// reads q (not materialised) dissolves q's chain: q then takes its own step
// before p's chain, so p's chain must stop running as one (its members take
// their own steps in plan order) or q reads p's records before they exist.
TEST_CASE("live engine: a chain whose first member's reader leaves its later chain runs stream by stream",
          "[ipc][live][chain]") {
  LiveEngine e("", false);
  const std::string out = startChained(e, kLaterReaderPlan, 2);
  CHECK(out.find("chain: p -> h -> h2 compiled as one loop") != std::string::npos);
  CHECK(out.find("chain: q -> q2 compiled as one loop (q not materialised)") != std::string::npos);
  REQUIRE(e.xqry("-a \"SELECT d[0] - d[3] STREAM d FROM q@(1,4)\"").rc == 0);
  CHECK(offStep(e, "q2", 3, true) == 0);  // q2 = 3c + 6, record by record
}

// The same plan, then a new one that keeps p's chain and drops the later
// reader and its chain: p's chain must go on (stream by stream) without
// touching what the new plan dropped.
TEST_CASE("live engine: --reset dropping a head's later reader keeps the head's chain's streams right",
          "[ipc][live][chain]") {
  LiveEngine e("", false);
  e.write("p2.rql",
          "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
          "SELECT c[0] * 3 STREAM p FROM c\n"
          "SELECT p[0] - 1 STREAM h FROM p\n"
          "SELECT h[0] + 2 STREAM h2 FROM h\n");
  startChained(e, kLaterReaderPlan, 2);
  REQUIRE(e.xqry("--reset p2.rql").rc == 0);
  std::this_thread::sleep_for(200ms);
  CHECK(offStep(e, "h2", 3, true) == 0);  // h2 = 3c + 1, record by record
}

// A new plan that keeps a chain's first member and drops its last: the kept
// member goes on with its own step (the chain is dissolved), so the new
// plan's reader of it gets every record.
TEST_CASE("live engine: --reset that drops a chain's last member keeps the rest running", "[ipc][live][chain]") {
  LiveEngine e("", false);
  e.write("p2.rql",
          "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
          "SELECT c[0] * 3 STREAM a FROM c\n"
          "SELECT a[0] + 2 STREAM b2 FROM a\n");
  startChained(e,
               "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
               "SELECT c[0] * 3 STREAM a FROM c\n"
               "SELECT a[0] + 1 STREAM b FROM a\n");
  REQUIRE(e.xqry("--reset p2.rql").rc == 0);
  CHECK(offStep(e, "b2", 3, true) == 0);  // b2 = 3c + 2, record by record
}

TEST_CASE("live engine: removing ad hoc streams gives their memory back; cycles do not grow it",
          "[ipc][live][adhoc-memory]") {
  LiveEngine e;
  auto cycle = [&](int k) {
    const std::string id = "w" + std::to_string(k);
    REQUIRE(e.xqry("-a \"SELECT * STREAM " + id + " FROM c@(1,16000)\"").rc == 0);
    REQUIRE(e.xqry("--remove " + id).rc == 0);
  };
  cycle(0);  // warm-up: the JIT and the heap reach their working size
  std::this_thread::sleep_for(200ms);
  const long before = rssKb(e.pid);
  for (int k = 1; k <= 6; ++k) cycle(k);
  // The JIT worker compiles and then releases each unit in the background, at
  // low priority: on a loaded machine the last compile may still be running
  // (its LLVM working memory counted in RSS). Memory must come back, so wait
  // for it, up to a minute.
  long after = rssKb(e.pid);
  for (int i = 0; i < 600 && after - before >= 12 * 1024; ++i) {
    std::this_thread::sleep_for(100ms);
    after = rssKb(e.pid);
  }
  INFO("RSS before " << before << " kB, after six cycles " << after << " kB");
#if defined(__SANITIZE_ADDRESS__)
  WARN("AddressSanitizer keeps freed memory in quarantine: RSS is not checked in this build");
  (void)before, (void)after;
#else
  CHECK(after - before < 12 * 1024);
#endif
  // The stream list is back to the plan's.
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s"});
}

TEST_CASE("live engine: xqry -t shows how many RATIONAL results a stream had to round", "[ipc][live][rational]") {
  LiveEngine e("", false);
  std::string nums;
  uint32_t x = 12345;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1103515245u + 12345u;
    nums += std::to_string((x >> 8) % 100000) + "\n";
  }
  e.write("c.txt", nums);
  // Averages of averages: the denominators multiply until they no longer fit.
  std::string q = "DECLARE v INTEGER STREAM c, 1/2000 TEXTFILE 'c.txt'\nSELECT c[0] STREAM s FROM c\n";
  std::string prev = "c";
  const int widths[] = {50, 49, 47, 43, 41, 37};
  for (int k = 0; k < 6; ++k) {
    const std::string w = "w" + std::to_string(k), a = "a" + std::to_string(k);
    q += "SELECT * STREAM " + w + " FROM " + prev + "@(1," + std::to_string(widths[k]) + ")\n";
    q += "SELECT " + w + "[0] STREAM " + a + " FROM " + w + ".avg\n";
    prev = a;
  }
  e.write("q.rql", q);
  REQUIRE(e.start(""));
  std::string shown;
  for (int i = 0; i < 600 && shown.find("rounded:") == std::string::npos; ++i) {
    std::this_thread::sleep_for(100ms);
    shown = e.xqry("-t a5").out;
  }
  CHECK_THAT(shown, Catch::Contains("  rounded: "));
  // A stream whose results are all exact shows no such line.
  CHECK_THAT(e.xqry("-t a0").out, !Catch::Contains("rounded:"));
}

TEST_CASE("live engine: an ad hoc FROM that reaches one source by two paths keeps each operand's fields",
          "[ipc][live][two-paths]") {
  LiveEngine e;
  REQUIRE(e.xqry("-a \"SELECT * STREAM both FROM (c > 1) + c\"").rc == 0);
  eventually([&] { return slurp(e.dir / "both").size() >= 5 * 8; });
  REQUIRE(e.xqry("-k").rc == 0);
  REQUIRE(waitExit(e.pid, 30s) == 0);
  e.pid = -1;
  const std::string b = slurp(e.dir / "both");
  REQUIRE(b.size() >= 5 * 8);
  std::vector<int32_t> v(b.size() / 4);
  memcpy(v.data(), b.data(), v.size() * 4);
  for (size_t r = 0; r + 1 < v.size(); r += 2) {
    INFO("record " << r / 2);
    CHECK(v[r + 1] == v[r] + 1);  // c one record later than c > 1
  }
}

TEST_CASE("live engine: an engine that cannot keep up with its clock still serves clients", "[ipc][live][behind]") {
  LiveEngine e("", false);
  // A million slots a second: every slot is late, they run back to back.
  e.write("q.rql", "DECLARE v INTEGER STREAM c, 1/1000000 TEXTFILE 'c.txt'\nSELECT c[0] * 2 STREAM s FROM c\n");
  REQUIRE(e.start(""));
  std::this_thread::sleep_for(300ms);
  for (int i = 0; i < 3; ++i) {
    Result r = e.xqry("-d");
    CHECK(r.rc == 0);
    CHECK_THAT(r.out, Catch::Contains("s"));
  }
  CHECK(e.xqry("-k").rc == 0);
  const int rc = waitExit(e.pid, 30s);
  CHECK(rc == 0);
  if (rc != -1) e.pid = -1;  // still running: the destructor stops it
}

TEST_CASE("live engine: an import whose last stream cannot be set up leaves no stream of it behind", "[ipc][live]") {
  LiveEngine e;
  // The statement's substrates (the two shifts) set up first; its own stream
  // then fails: a directory stands where its descriptor is written.
  fs::create_directories(e.dir / "hh.desc.tmp" / "x");
  Result bad = e.xqry("-a \"SELECT hh[0] + hh[1] STREAM hh FROM (c > 3) + (s > 2)\"");
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("Compile chain failed:") != std::string::npos);
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s"});
  // The same substrates come back with the next import that needs them.
  Result ok = e.xqry("-a \"SELECT ii[0] + ii[1] STREAM ii FROM (c > 3) + (s > 2)\"");
  CHECK(ok.rc == 0);
  const auto names = e.streamNames();
  CHECK(std::find(names.begin(), names.end(), "ii") != names.end());
  CHECK(std::find(names.begin(), names.end(), "hh") == names.end());
}

// ------------------------------------------------------------ ad hoc DECLARE and RULE, xqry --reset

namespace {

// The values `xqry -s stream -m n` printed (raw format: one record per line).
std::vector<long> subscribed(const LiveEngine& e, const std::string& stream, int n) {
  Result r = e.xqry("-s " + stream + " -m " + std::to_string(n));
  std::vector<long> v;
  std::istringstream in(r.out);
  for (long x; in >> x;) v.push_back(x);
  return v;
}

// Records of a stream as its detail counts them.
long countOfStream(const LiveEngine& e, const std::string& stream) {
  Result r = e.xqry("-y");
  const std::string key = "  - name: " + stream + "\n";
  const size_t at = r.out.find(key);
  if (at == std::string::npos) return -1;
  const size_t c = r.out.find("    count: ", at);
  return c == std::string::npos ? -1 : std::stol(r.out.substr(c + 11));
}

bool consecutive(const std::vector<long>& v) {
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] != v[i - 1] + 1) return false;
  return !v.empty();
}

}  // namespace

TEST_CASE("live engine: an ad hoc DECLARE adds a source a later SELECT reads; --remove takes both back",
          "[ipc][live][adhoc]") {
  LiveEngine e;
  std::string nums;
  for (int i = 5000; i < 105000; ++i) nums += std::to_string(i) + "\n";
  e.write("d.txt", nums);
  REQUIRE(e.xqry("-a \"DECLARE w INTEGER STREAM d, 1/10 TEXTFILE 'd.txt'\"").rc == 0);
  // The same name again is refused, as is a source that cannot be opened as declared.
  CHECK(e.xqry("-a \"DECLARE w INTEGER STREAM d, 1/10 TEXTFILE 'd.txt'\"").rc == 2);
  Result missing = e.xqry("-a \"DECLARE w INTEGER STREAM d2, 1/10 TEXTFILE 'nosuch.txt'\"");
  CHECK(missing.rc == 2);
  CHECK(missing.err.find("nosuch.txt") != std::string::npos);
  REQUIRE(e.xqry("-a \"SELECT d[0] * 2 STREAM dd FROM d\"").rc == 0);
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s", "d", "dd"});
  // The source reads its file from the start; its reader sees each record once, in order.
  const std::vector<long> raw = subscribed(e, "d", 5);
  REQUIRE(raw.size() == 5);
  CHECK(consecutive(raw));
  CHECK(raw[0] >= 5000);
  const std::vector<long> doubled = subscribed(e, "dd", 5);
  REQUIRE(doubled.size() == 5);
  for (size_t i = 1; i < doubled.size(); ++i) CHECK(doubled[i] == doubled[i - 1] + 2);
  CHECK(doubled[0] >= 10000);
  CHECK(doubled[0] % 2 == 0);
  // A source something reads stays; once its reader is gone it can go.
  Result busy = e.xqry("--remove d");
  CHECK(busy.rc == 2);
  CHECK(busy.err.find("read by other streams") != std::string::npos);
  CHECK(e.xqry("--remove dd").rc == 0);
  CHECK(e.xqry("--remove d").rc == 0);
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s"});
  // The plan's own source is not removable.
  CHECK(e.xqry("--remove c").rc == 2);
}

TEST_CASE("live engine: an ad hoc RULE ... DO DUMP writes its dumps; DO SYSTEM is refused; --remove stops it",
          "[ipc][live][adhoc]") {
  LiveEngine e;
  const std::string pwn = (e.dir / "pwned").string();
  Result sys = e.xqry("-a \"RULE bad ON s WHEN s[0] > 0 DO SYSTEM 'touch " + pwn + "'\"");
  CHECK(sys.rc == 2);
  CHECK(sys.err.find("--allow-adhoc-system") != std::string::npos);
  Result onSource = e.xqry("-a \"RULE r ON c WHEN c[0] > 0 DO DUMP 0 TO 1\"");
  CHECK(onSource.rc == 2);
  Result unknown = e.xqry("-a \"RULE r ON nosuch WHEN nosuch[0] > 0 DO DUMP 0 TO 1\"");
  CHECK(unknown.rc == 2);
  CHECK(unknown.err.find("1:11") != std::string::npos);
  // Fires on every record: the newest dump holds the trigger and the two records before it
  // (records before the first one would be zeros: wait for a few).
  CHECK(eventually([&] { return countOfStream(e, "s") >= 10; }));
  REQUIRE(e.xqry("-a \"RULE tens ON s WHEN s[0] > 0 DO DUMP -2 TO 1\"").rc == 0);
  CHECK(e.xqry("-a \"RULE tens ON s WHEN s[0] > 0 DO DUMP 0 TO 1\"").rc == 2);  // the name runs already
  const fs::path dump = e.dir / "s_tens_dump.tmp";
  std::string bytes;
  eventually([&] {  // a read between a trigger's truncate and its writes is tried again
    bytes = slurp(dump);
    return bytes.size() == 12;
  });
  REQUIRE(bytes.size() >= 12);
  REQUIRE(bytes.size() % 4 == 0);
  std::vector<int32_t> v(bytes.size() / 4);
  memcpy(v.data(), bytes.data(), bytes.size());
  REQUIRE(v.size() == 3);
  CHECK(v[0] > 0);
  CHECK(v[1] == v[2] - 1);
  CHECK(v[0] == v[2] - 2);
  CHECK(e.xqry("--remove tens").rc == 0);
  CHECK(e.xqry("--remove tens").rc == 2);
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(fs::exists(pwn));
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s"});
}

TEST_CASE("live engine: --allow-adhoc-system lets a client's RULE run a command", "[ipc][live][adhoc]") {
  LiveEngine e("", false);
  REQUIRE(e.start("--allow-adhoc-system"));
  const std::string mark = (e.dir / "ran").string();
  REQUIRE(e.xqry("-a \"RULE once ON s WHEN s[0] > 0 DO SYSTEM 'touch " + mark + "'\"").rc == 0);
  eventually([&] { return fs::exists(mark); });
  CHECK(fs::exists(mark));
}

TEST_CASE("live engine: xqry --reset swaps the plan between slots; kept streams continue; idle and back",
          "[ipc][live][reset]") {
  LiveEngine e;
  e.write("bad.rql", "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\nSELECT c[0] STREAM s FROM nosuch\n");
  e.write("sys.rql",
          "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\nSELECT c[0] STREAM s FROM c\n"
          "RULE r ON s WHEN s[0] > 0 DO SYSTEM 'touch pwned'\n");
  e.write("p2.rql",
          "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\nSELECT c[0] STREAM s FROM c\n"
          "SELECT s[0] * 3 STREAM u FROM s\n");
  e.write("empty.rql", "# nothing\n");
  REQUIRE(e.xqry("-a \"SELECT c[0] + 1 STREAM extra FROM c\"").rc == 0);
  // A subscriber of a stream the new plan drops is ended; one of a kept stream goes on.
  pid_t gone = spawn(e.dir, std::string("'") + RDB_XQRY + "' -s extra </dev/null >gone.out 2>gone.err");
  pid_t kept = spawn(e.dir, std::string("'") + RDB_XQRY + "' -s s -m 60 </dev/null >kept.out 2>kept.err");
  CHECK(eventually([&] { return countOf(slurp(e.dir / "gone.out"), "\r\n") >= 2; }));
  Result bad = e.xqry("--reset bad.rql");
  CHECK(bad.rc == 2);
  CHECK(bad.err.find("reset:2:") != std::string::npos);
  Result sys = e.xqry("--reset sys.rql");
  CHECK(sys.rc == 2);
  CHECK(sys.err.find("DO SYSTEM") != std::string::npos);
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s", "extra"});
  const long before = countOfStream(e, "s");
  REQUIRE(e.xqry("--reset p2.rql").rc == 0);
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s", "u"});
  CHECK(waitExit(gone, 30s) == 43);
  CHECK(waitExit(kept, 60s) == 0);
  // The kept stream's records go on with no gap: its subscriber saw consecutive values.
  std::vector<long> seen;
  {
    std::istringstream in(slurp(e.dir / "kept.out"));
    for (long x; in >> x;) seen.push_back(x);
  }
  CHECK(seen.size() == 60);
  CHECK(consecutive(seen));
  CHECK(countOfStream(e, "s") > before);
  const std::vector<long> u = subscribed(e, "u", 3);
  REQUIRE(u.size() == 3);
  CHECK(u[0] % 3 == 0);
  CHECK(u[1] == u[0] + 3);
  // An empty plan makes the instance idle; a plan loads into it again.
  REQUIRE(e.xqry("--reset empty.rql").rc == 0);
  CHECK(eventually([&] { return e.streamNames().empty(); }));
  CHECK(e.xqry("--hello").rc == 0);
  REQUIRE(e.xqry("--reset p2.rql").rc == 0);
  eventually([&] { return e.streamNames().size() >= 3; });
  CHECK(e.streamNames() == std::vector<std::string>{"c", "s", "u"});
  CHECK(subscribed(e, "u", 2).size() == 2);
  CHECK_FALSE(fs::exists(e.dir / "pwned"));
}

// A reset that gives a stream's name to a stream of another type starts its
// files afresh: the engine's log names the stopped stream's file and its
// records (counted with that stream's own record size) before they go.
TEST_CASE("live engine: a reset to a same-named stream of another type says which records it removes",
          "[ipc][live][reset]") {
  LiveEngine e;
  e.write("p2.rql", "DECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\nSELECT to_double(c[0]) STREAM s FROM c\n");
  CHECK(eventually([&] { return countOfStream(e, "s") >= 5; }));
  REQUIRE(e.xqry("--reset p2.rql").rc == 0);
  std::string err;
  eventually([&] { return (err = slurp(e.dir / "engine.err")).find("starts afresh") != std::string::npos; });
  INFO(err);
  CHECK(err.find("warning: stream s starts afresh: removing ") != std::string::npos);
  CHECK(err.find(" records) of an earlier run") != std::string::npos);  // INTEGER records, not the DOUBLE's bytes
}

// Under ROTATION the files of a stream the reset gives another layout are
// never continued: they are archived whole, with their descriptor, as a
// session of their own; the session goes on under the next number, which a
// clean stop then archives with the new layout's descriptor.
TEST_CASE("live engine: under ROTATION a reset to a stream of another layout archives its files whole",
          "[ipc][live][reset]") {
  LiveEngine e("", false);
  e.write("q.rql", std::string("ROTATION 'rot.txt'\n") + LiveEngine::kQuery);
  e.write("p2.rql",
          "ROTATION 'rot.txt'\nDECLARE v INTEGER STREAM c, 1/20 TEXTFILE 'c.txt'\n"
          "SELECT c[0], to_double(c[0]) / 3, 'abc' STREAM s FROM c\n");
  REQUIRE(e.start(""));
  for (int i = 0; i < 3000 && countOfStream(e, "s") < 5; ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(e.xqry("--reset p2.rql").rc == 0);
  std::string err;
  for (int i = 0; i < 3000 && (err = slurp(e.dir / "engine.err")).find("another layout") == std::string::npos; ++i)
    std::this_thread::sleep_for(10ms);
  INFO(err);
  CHECK(err.find("warning: stream s: its files on disk were written with another layout ({ INTEGER s_0 }") !=
        std::string::npos);
  CHECK(err.find("archived whole as session 0 (") != std::string::npos);
  CHECK(slurp(e.dir / "s.desc.old0") == "{\tINTEGER s_0\n}");
  const auto old0 = fs::file_size(e.dir / "s.old0");
  CHECK(old0 >= 5 * 4);
  CHECK(old0 % 4 == 0);
  CHECK(slurp(e.dir / "rot.txt") == "2");  // the session goes on as number 1
  // The new stream writes its own file from its first record: whole 15-byte records.
  std::error_code ec;
  for (int i = 0; i < 3000 && countOfStream(e, "s") < 3; ++i) std::this_thread::sleep_for(10ms);
  kill(e.pid, SIGTERM);
  CHECK(waitExit(e.pid, 30s) == 0);
  e.pid = -1;
  CHECK(fs::file_size(e.dir / "s.old0") == old0);  // nothing was appended to the archive
  CHECK(slurp(e.dir / "s.desc.old1") == "{\tINTEGER s_0\n\tDOUBLE s_1\n\tSTRING s_2[3]\n}");
  const auto old1 = fs::file_size(e.dir / "s.old1", ec);
  CHECK(old1 >= 3 * 15);
  CHECK(old1 % 15 == 0);
}

TEST_CASE("live engine: an ad hoc window longer than a running stream's ring waits for the records it needs",
          "[ipc][live][adhoc]") {
  LiveEngine e;
  // s keeps a short ring (nothing in the plan reads it back); let it write more than that.
  eventually([&] { return countOfStream(e, "s") >= 60; });
  REQUIRE(e.xqry("-a \"SELECT * STREAM w FROM s@(1,50)\"").rc == 0);
  const fs::path w = e.dir / "w";
  std::error_code ec;
  eventually([&] { return fs::file_size(w, ec) >= 400 && !ec; });
  const std::string bytes = slurp(w);
  REQUIRE(bytes.size() >= 400);
  // The first stored record is a whole window: s[n], s[n-1], ... s[n-49], none missing.
  std::vector<int32_t> v(50);
  memcpy(v.data(), bytes.data(), 200);
  CHECK(v[49] > 0);
  bool stepOne = true;
  for (size_t i = 1; i < v.size(); ++i) stepOne = stepOne && v[i] == v[i - 1] - 1;
  CHECK(stepOne);
  Result first = e.xqry("-s w -m 1");
  CHECK(first.out.find("null") == std::string::npos);
}

// ------------------------------------------------------------ subscriptions: index, slot time, replay, losses

namespace {

// CSV rows of `xqry --csv -s ...` after its header: n, t, values.
struct CsvRow {
  long n;
  std::string t;
  long v;
};
std::vector<CsvRow> csvRows(const std::string& out, std::string* header = nullptr) {
  std::vector<CsvRow> rows;
  std::istringstream in(out);
  std::string line;
  if (std::getline(in, line) && header) *header = line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string n, t, v;
    if (std::getline(f, n, ',') && std::getline(f, t, ',') && std::getline(f, v, ','))
      rows.push_back({std::stol(n), t, std::stol(v)});
  }
  return rows;
}

// (n + 1) / 20 in lowest terms: when s (interval 1/20, tail 0) writes record n.
std::string slotOfS(long n) {
  long p = n + 1, q = 20, a = p, b = q;
  while (b) std::tie(a, b) = std::make_pair(b, a % b);
  p /= a, q /= a;
  return q == 1 ? std::to_string(p) : std::to_string(p) + "/" + std::to_string(q);
}

}  // namespace

TEST_CASE("subscriptions: CSV and JSON lines carry each record's logical index and slot time",
          "[ipc][live][subscribe]") {
  LiveEngine e;
  std::string header;
  const std::vector<CsvRow> rows = csvRows(e.xqry("--csv -s s -m 5").out, &header);
  CHECK(header == "n,t,s_0");
  REQUIRE(rows.size() == 5);
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    if (i) CHECK(rows[i].n == rows[i - 1].n + 1);
    CHECK(rows[i].v == rows[i].n + 1);  // s[n] = c[n] = line n+1 of c.txt
    CHECK(rows[i].t == slotOfS(rows[i].n));
  }
  Result j = e.xqry("-j -s s -m 2");
  std::istringstream in(j.out);
  int records = 0;
  for (std::string line; std::getline(in, line);) {
    const Json ev = Json::parse(line);
    if (ev["event"] != "record") continue;
    ++records;
    const long n = ev["n"].get<long>();
    CHECK(ev["t_exact"] == slotOfS(n));
    CHECK(std::abs(ev["t"].get<double>() - double(n + 1) / 20) < 1e-9);
    CHECK(ev["values"][0] == std::to_string(n + 1));
  }
  CHECK(records == 2);
  // The raw format is unchanged: values only.
  CHECK(e.xqry("-s s -m 1").out.find(',') == std::string::npos);
}

TEST_CASE("subscriptions: --from replays the stored records, then live, with no gap and no duplicate",
          "[ipc][live][subscribe]") {
  LiveEngine e;
  eventually([&] { return countOfStream(e, "s") >= 30; });
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    const long before = countOfStream(e, "s");
    const std::vector<CsvRow> rows = csvRows(e.xqry("--csv -s s --from 0 -m " + std::to_string(before + 20)).out);
    REQUIRE(rows.size() == size_t(before + 20));  // past the seam: replayed, then live
    bool ok = true;
    for (size_t i = 0; i < rows.size(); ++i) ok = ok && rows[i].n == long(i) && rows[i].v == long(i) + 1;
    CHECK(ok);
  }
  // From the middle.
  const std::vector<CsvRow> mid = csvRows(e.xqry("--csv -s s --from 7 -m 3").out);
  REQUIRE(mid.size() == 3);
  CHECK(mid[0].n == 7);
  CHECK(mid[2].n == 9);
  // A VOLATILE stream keeps only its ring: the rest is reported as lost, then records follow without a gap.
  REQUIRE(e.xqry("-a \"SELECT c[0] STREAM vol FROM c VOLATILE\"").rc == 0);
  eventually([&] { return countOfStream(e, "vol") >= 60; });
  Result r = e.xqry("--csv -s vol --from 0 -m 40");
  CHECK(r.err.find("lost") != std::string::npos);
  const std::vector<CsvRow> vol = csvRows(r.out);
  REQUIRE(vol.size() == 40);
  CHECK(vol[0].n > 0);
  bool consecutiveN = true;
  for (size_t i = 1; i < vol.size(); ++i) consecutiveN = consecutiveN && vol[i].n == vol[i - 1].n + 1;
  CHECK(consecutiveN);
  CHECK(e.xqry("-s s --from x -m 1").rc != 0);
}

TEST_CASE("subscriptions: a subscriber that fell behind is told how many records it lost", "[ipc][subscribe]") {
  ipc::ServerOptions opt;
  opt.minQueueElements = 64;
  opt.queueBufferSeconds = 1;
  FakeEngine e(opt);
  std::string err;
  auto slow = ipc::Client::connect(ipc::socketPath(e.dir.string()), err);
  REQUIRE(slow);
  ipc::Tree reply;
  REQUIRE(slow->request("show", "core0", reply, 30000, &err) == ipc::Client::Status::Ok);
  REQUIRE(e.waitSubscribed("core0"));
  const std::vector<std::string> values = {std::string(1000, 'x'), "1"};
  const std::vector<bool> nulls = {false, false};
  // Publish until the socket and the queue are full and a few records were not queued.
  int64_t n = 0;
  for (; n < 20000 && e.server->stats().dropped < 10; ++n) e.server->publish("core0", values, nulls, n, "1");
  const uint64_t lost = e.server->stats().dropped;
  REQUIRE(lost >= 10);
  REQUIRE(lost < 64);  // behind, not gone: still connected
  // The client catches up (each record once, however late the server's thread
  // sends them); the next record is preceded by the notice, not by one more.
  ipc::Tree m;
  int64_t got = 0;
  while (got < n - int64_t(lost) && slow->receive(m, 30000, &err) == ipc::Client::Status::Ok) ++got;
  CHECK(got == n - int64_t(lost));
  e.server->publish("core0", values, nulls, n, "1");
  REQUIRE(slow->receive(m, 30000, &err) == ipc::Client::Status::Ok);
  CHECK(m.get("lost") == std::to_string(lost));
  REQUIRE(slow->receive(m, 30000, &err) == ipc::Client::Status::Ok);
  CHECK(m.get("n") == std::to_string(n));
  CHECK(e.server->stats().disconnected == 0);
}

namespace {

// `xqry ARGS` (killed after 20 s) against core0 of a FakeEngine: once it has
// subscribed, records first..last are published (values 10·n, 0.5), then,
// after a moment to print what it was sent, the subscription is ended.
Result subscribedWhilePublishing(FakeEngine& e, const std::string& args, int64_t first, int64_t last) {
  Result r;
  std::thread client([&] { r = e.xqry(args, 20); });
  if (e.waitSubscribed("core0")) {
    for (int64_t n = first; n <= last; ++n) e.server->publish("core0", {std::to_string(10 * n), "0.5"}, {}, n, "1");
    std::this_thread::sleep_for(300ms);
  }
  e.server->endSubscriptions();
  client.join();
  e.waitSubscribed("core0", 60s, false);
  return r;
}

std::vector<long> indicesOf(const std::vector<CsvRow>& rows) {
  std::vector<long> n;
  for (auto& r : rows) n.push_back(r.n);
  return n;
}

const std::string kInt64Max = "9223372036854775807";

}  // namespace

TEST_CASE("subscriptions: --from takes a record index, 0 to 2^63-1, digits only; else exit 22 with one line",
          "[ipc][subscribe]") {
  FakeEngine e;
  for (const std::string bad : {"-1", "9223372036854775808", "18446744073709551615", "99999999999999999999", "abc",
                                "1e3", "+5", "' 5'", "0x10", "''", "--from="}) {
    INFO("--from " << bad);
    const Result r = e.xqry("--csv -s core0 -m 1 " + (bad == "--from=" ? bad : "--from " + bad), 20);
    CHECK(r.rc == 22);
    CHECK(r.out.empty());
    CHECK(countOf(r.err, "\n") == 1);  // one line
    CHECK(r.err.find("xqry: --from: ") == 0);
    if (bad != "--from=") CHECK(r.err.find("from 0 to " + kInt64Max) != std::string::npos);  // else: value missing
  }
  const Result none = e.xqry("-s core0 --from", 20);  // a missing value: the same usage error
  CHECK(none.rc == 22);
  CHECK(none.err.find("xqry: --from: ") == 0);
  CHECK(countOf(none.err, "\n") == 1);
  CHECK_FALSE(e.server->subscribed("core0"));
  // The server takes the same indices only: others get an error reply, no subscription.
  std::string err;
  auto c = ipc::Client::connect(ipc::socketPath(e.dir.string()), err);
  REQUIRE(c);
  for (const char* bad : {"-1", "9223372036854775808", "1e3", "", " 5", "+5"}) {
    INFO("from '" << bad << "'");
    ipc::Tree reply;
    REQUIRE(c->request("show", "core0", reply, 30000, &err, {{"from", bad}}) == ipc::Client::Status::Ok);
    CHECK(reply.get("db").rfind("error: from must be a record index from 0 to " + kInt64Max, 0) == 0);
  }
  CHECK_FALSE(e.server->subscribed("core0"));
}

TEST_CASE("subscriptions: --from at the newest record or before replays it; past it, waits for record N",
          "[ipc][subscribe]") {
  FakeEngine e;
  // 0 and the newest (9): replayed, then live from 10 on, no gap.
  Result r = subscribedWhilePublishing(e, "--csv -s core0 --from 0 -m 12", 10, 15);
  CHECK(indicesOf(csvRows(r.out)) == std::vector<long>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(r.err.find("waiting") == std::string::npos);
  r = subscribedWhilePublishing(e, "--csv -s core0 --from 9 -m 3", 10, 15);
  CHECK(indicesOf(csvRows(r.out)) == std::vector<long>{9, 10, 11});
  // newest + 1: the next live record, nothing replayed.
  r = subscribedWhilePublishing(e, "--csv -s core0 --from 10 -m 2", 10, 15);
  CHECK(indicesOf(csvRows(r.out)) == std::vector<long>{10, 11});
  // Two ahead: 10 and 11 are not sent; 12 is the first, 13 and 14 follow.
  r = subscribedWhilePublishing(e, "--csv -s core0 --from 12 -m 3", 10, 20);
  CHECK(r.rc == 0);
  CHECK(indicesOf(csvRows(r.out)) == std::vector<long>{12, 13, 14});
  CHECK(csvRows(r.out).at(0).v == 120);
  CHECK(r.err.find("xqry: core0: waiting for record 12 (the newest is 9)") != std::string::npos);
  // Far ahead, and the largest index: nothing is sent; the wait ends with the subscription (removed: 43).
  for (const std::string& far : {std::string("99999999"), kInt64Max}) {
    INFO("--from " << far);
    r = subscribedWhilePublishing(e, "--csv -s core0 --from " + far, 10, 60);
    CHECK(r.rc == 43);
    CHECK(csvRows(r.out).empty());
    CHECK(r.err.find("waiting for record " + far + " (the newest is 9)") != std::string::npos);
  }
  // A wait outlasts the no-data timeout (200 ms here): xqry goes on waiting, then prints record N.
  e.write("short.toml", "[timing]\nquery_no_data_timeout_ms = 200\n");
  Result waited;
  std::thread client([&] { waited = e.xqry("-e short.toml --csv -s core0 --from 11 -m 1", 20); });
  if (e.waitSubscribed("core0")) {
    std::this_thread::sleep_for(600ms);
    e.server->publish("core0", {"100", "0.5"}, {}, 10, "1");
    e.server->publish("core0", {"110", "0.5"}, {}, 11, "1");
  }
  client.join();
  CHECK(waited.rc == 0);
  CHECK(indicesOf(csvRows(waited.out)) == std::vector<long>{11});
}

TEST_CASE("subscriptions: --from a record still to come waits for it on the running engine", "[ipc][live][subscribe]") {
  LiveEngine e;
  const std::vector<CsvRow> now = csvRows(e.xqry("--csv -s s -m 1", 20).out);
  REQUIRE(now.size() == 1);
  const long want = now[0].n + 60;  // written in about 3 s (20 records a second)
  const Result r = e.xqry("--csv -s s --from " + std::to_string(want) + " -m 3", 20);
  CHECK(r.rc == 0);
  const std::vector<CsvRow> rows = csvRows(r.out);
  CHECK(indicesOf(rows) == std::vector<long>{want, want + 1, want + 2});
  if (!rows.empty()) CHECK(rows[0].v == want + 1);  // s[n] = line n+1 of c.txt
  CHECK(r.err.find("xqry: s: waiting for record " + std::to_string(want) + " (the newest is ") != std::string::npos);
}
