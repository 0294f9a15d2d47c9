#include "rules.hpp"

#include "storage/artifacts.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace engine {

// ================================================================ commands
CommandPool::~CommandPool() { shutdown(0); }

bool CommandPool::submit(const std::string& rule, const std::string& cmd) {
  reap();
  if (int(children_.size()) >= max_) {
    fprintf(stderr, "rule %s: %d commands still running; this one is skipped\n", rule.c_str(), max_);
    return false;
  }
  pid_t pid;
  const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group, so shutdown reaches its children too
  posix_spawnattr_setpgroup(&attr, 0);
  int rc = posix_spawn(&pid, "/bin/sh", nullptr, &attr, const_cast<char**>(argv), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    fprintf(stderr, "rule %s: cannot start command: %s\n", rule.c_str(), strerror(rc));
    return false;
  }
  children_.push_back({pid, rule});
  return true;
}

void CommandPool::reap() {
  for (size_t i = 0; i < children_.size();) {
    int st = 0;
    pid_t r = waitpid(children_[i].pid, &st, WNOHANG);
    if (r == 0) {
      ++i;
      continue;
    }
    if (r > 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
      fprintf(stderr, "rule %s: command %s %d\n", children_[i].rule.c_str(),
              WIFEXITED(st) ? "exited with status" : "was stopped by signal",
              WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    children_.erase(children_.begin() + long(i));
  }
}

void CommandPool::shutdown(int graceMs) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(graceMs);
  while (!children_.empty() && std::chrono::steady_clock::now() < until) {
    reap();
    if (!children_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto& c : children_) {
    kill(-c.pid, SIGKILL);
    kill(c.pid, SIGKILL);
    int st;
    waitpid(c.pid, &st, 0);
  }
  children_.clear();
}

// ================================================================ rules
namespace {
// Dump files open in the process, those being written included. A finished
// dump keeps its file open for the next dump only while at most
// kKeptDumpFiles are open, so kept files never crowd out the engine's other
// descriptors; past that, the file is closed and its next dump opens it again.
constexpr int kKeptDumpFiles = 64;
std::atomic<int> openDumpFiles{0};

void closeDump(DumpFile& f) {
  if (f.fd < 0) return;
  ::close(f.fd);
  f.fd = -1;
  --openDumpFiles;
}
}  // namespace

StreamRules::StreamRules(const ir::Query& q, const ir::Layout& out, std::string storageDir, CommandPool* pool)
    : q_(q), out_(out), dir_(std::move(storageDir)), pool_(pool) {
  ir::Field f;
  f.name = "cond";
  f.type = ir::Type::INTEGER;
  condLayout_ = ir::Layout::of({f});
  condOut_.assign(4, 0);
  condNull_.assign(1, 0);
  zero_.assign(size_t(out.recordSize), 0);
  for (auto& r : q.rules) {
    RuleRuntime rt;
    rt.rule = &r;
    rt.condition.bytecode = vm::lowerCondition(q, r.condition, out);
    rules_.push_back(std::move(rt));
  }
}

StreamRules::~StreamRules() {
  for (auto& r : rules_)
    for (auto& f : r.files) closeDump(f);
}

int StreamRules::historyNeeded() const {
  int need = 0;
  for (auto& r : rules_)
    if (r.rule->action == ir::RuleAction::DUMP && r.rule->dumpFrom < 0) need = std::max(need, -r.rule->dumpFrom);
  return need;
}

void StreamRules::add(const ir::Rule& rule) {
  adhoc_.push_back(rule);
  RuleRuntime rt;
  rt.rule = &adhoc_.back();
  rt.adhoc = true;
  rt.condition.bytecode = vm::lowerCondition(q_, rule.condition, out_);
  rules_.push_back(std::move(rt));
}

bool StreamRules::has(const std::string& name) const {
  for (auto& r : rules_)
    if (r.rule->name == name) return true;
  return false;
}

bool StreamRules::remove(const std::string& name) {
  for (auto it = rules_.begin(); it != rules_.end(); ++it) {
    if (!it->adhoc || it->rule->name != name) continue;
    for (auto& f : it->files) closeDump(f);  // an open dump keeps the records written so far
    const ir::Rule* gone = it->rule;
    rules_.erase(it);
    for (auto r = adhoc_.begin(); r != adhoc_.end(); ++r)
      if (&*r == gone) {
        adhoc_.erase(r);  // erasing from a deque's middle moves the others: repoint them
        break;
      }
    auto a = adhoc_.begin();
    for (auto& rt : rules_)
      if (rt.adhoc) rt.rule = &*a++;
    return true;
  }
  return false;
}

void StreamRules::save(storage::ByteWriter& w) const {
  w.u64(rules_.size());
  for (auto& r : rules_) {
    w.i64(r.triggers);
    w.u64(r.tasks.size());
    for (auto& t : r.tasks) {
      w.text(t.path);
      w.flag(t.reused);
      for (int64_t v : {t.bytes, t.next, t.end}) w.i64(v);
    }
  }
}

void StreamRules::restore(storage::ByteReader& in) {
  if (in.u64() != rules_.size()) in.fail();
  for (auto& r : rules_) {
    const ir::Rule& rule = *r.rule;
    const int64_t triggers = in.i64();
    if (triggers < 0 || triggers > INT32_MAX) in.fail();
    r.triggers = int(triggers);
    const uint64_t tasks = in.count(1);
    if (tasks > uint64_t(std::max(rule.dumpRetention, 1)) || (tasks > 0 && triggers == 0)) in.fail();
    for (uint64_t n = tasks; n > 0; --n) {
      DumpTask t;
      t.path = in.text();
      t.reused = in.flag();
      for (int64_t* v : {&t.bytes, &t.next, &t.end}) *v = in.i64();
      // Only this rule's own dump files, cut to the records its window has written so far: a
      // checkpoint never makes the engine truncate or extend any other file.
      bool ours = false;
      for (int k = 0; k <= std::max(rule.dumpRetention, 1) && !ours; ++k)
        ours = t.path == storage::ruleDumpPath(dir_, q_.id, rule.name, k, rule.dumpRetention);
      // Fired at record n = end - TO, it writes [n + FROM, end): next lies in there, bytes are the records before it.
      if (!ours || t.end < rule.dumpTo || t.end > (int64_t(1) << 62)) in.fail();
      const int64_t start = t.end - rule.dumpTo + rule.dumpFrom;
      if (t.next < start || t.next >= t.end || t.bytes != (t.next - start) * int64_t(out_.recordSize)) in.fail();
      // Its records so far are kept (no O_TRUNC); what a killed run wrote after them goes.
      const int fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
      if (fd < 0 || ftruncate(fd, t.bytes) != 0) {
        const std::string why = strerror(errno);
        if (fd >= 0) ::close(fd);
        throw std::runtime_error("rule " + r.rule->name + ": cannot reopen " + t.path + ": " + why);
      }
      ++openDumpFiles;
      DumpFile f;
      f.path = t.path;
      f.fd = t.fd = fd;
      struct stat st;
      if (fstat(fd, &st) == 0) f.dev = st.st_dev, f.ino = st.st_ino;
      r.files.push_back(std::move(f));
      r.tasks.push_back(std::move(t));
    }
  }
}

std::string StreamRules::dumpPath(RuleRuntime& r) {
  return storage::ruleDumpPath(dir_, q_.id, r.rule->name, r.triggers++, r.rule->dumpRetention);
}

// The file of a new dump, empty: the one kept open when it is still the file
// at `path` (not moved away, removed or replaced), else opened as a new dump
// always was, with O_TRUNC.
int StreamRules::openDump(RuleRuntime& r, const std::string& path) {
  for (auto it = r.files.begin(); it != r.files.end(); ++it) {
    if (it->path != path) continue;
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && st.st_dev == it->dev && st.st_ino == it->ino && ftruncate(it->fd, 0) == 0)
      return it->fd;
    closeDump(*it);
    r.files.erase(it);
    break;
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw std::runtime_error("rule " + r.rule->name + ": cannot write " + path + ": " + strerror(errno));
  ++openDumpFiles;
  DumpFile f;
  f.path = path;
  f.fd = fd;
  struct stat st;
  if (fstat(fd, &st) == 0) {
    f.dev = st.st_dev;
    f.ino = st.st_ino;
  }
  r.files.push_back(std::move(f));
  return fd;
}

// Closes the file of task t unless a later dump writes it again (and few files are open).
void StreamRules::finish(RuleRuntime& r, DumpTask& t) {
  if (t.fd < 0 || (t.reused && openDumpFiles <= kKeptDumpFiles)) return;
  for (auto it = r.files.begin(); it != r.files.end(); ++it)
    if (it->fd == t.fd) {
      closeDump(*it);
      r.files.erase(it);
      break;
    }
  t.fd = -1;
}

void StreamRules::write(RuleRuntime& r, DumpTask& t, const uint8_t* rec) {
  const size_t size = size_t(out_.recordSize);
  size_t done = 0;
  while (done < size) {
    ssize_t w = ::pwrite(t.fd, rec + done, size - done, off_t(t.bytes + int64_t(done)));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const std::string why = w < 0 ? strerror(errno) : "no space written";
      if (t.fd >= 0 && ftruncate(t.fd, t.bytes) != 0) {
        // the size check at the next open cuts a partial record too
      }
      t.reused = false;
      finish(r, t);
      throw std::runtime_error("dump file " + t.path + ": write failed at byte " +
                               std::to_string(t.bytes + int64_t(done)) + ": " + why);
    }
    done += size_t(w);
  }
  t.bytes += int64_t(size);
  ++t.next;
}

void StreamRules::onRecord(int64_t n, const uint8_t* rec, const uint8_t* nulls, const RecordLookup& history) {
  const uint8_t* const recs[1] = {rec};
  const uint8_t* const nls[1] = {nulls};
  // 1. conditions, in declaration order; each true one registers its action
  for (auto& r : rules_) {
    if (!r.condition.run(out_, condLayout_, recs, nls, condOut_.data(), condNull_.data(), 1)) continue;
    int32_t v;
    memcpy(&v, condOut_.data(), 4);
    if (condNull_[0] || v == 0) continue;  // NULL does not fire
    const ir::Rule& rule = *r.rule;
    if (rule.action == ir::RuleAction::SYSTEM) {
      if (pool_) pool_->submit(rule.name, rule.command);
      continue;
    }
    // Each rule keeps at most max(RETENTION, 1) dumps open; a new trigger on a
    // full ring drops the oldest, left incomplete (without RETENTION a dump restarts).
    if (r.tasks.size() >= size_t(std::max(rule.dumpRetention, 1))) {
      finish(r, r.tasks.front());
      r.tasks.pop_front();
    }
    const bool first = r.triggers == 0;
    DumpTask t;
    t.path = dumpPath(r);
    for (auto it = r.tasks.begin(); it != r.tasks.end();)  // one dump a file at a time
      if (it->path == t.path) {
        finish(r, *it);
        it = r.tasks.erase(it);
      } else {
        ++it;
      }
    t.fd = openDump(r, t.path);
    t.reused = !(first && rule.dumpRetention > 0);  // with RETENTION, _dump.tmp is written once
    t.next = n + rule.dumpFrom;
    t.end = n + rule.dumpTo;
    // Records before the trigger come from the history; missing ones are zero records.
    while (t.next < n && t.next < t.end) {
      const uint8_t* d = nullptr;
      write(r, t, history(t.next, d) ? d : zero_.data());
    }
    r.tasks.push_back(t);
  }
  // 2. this record goes to every dump whose window reaches it
  for (auto& r : rules_)
    for (auto it = r.tasks.begin(); it != r.tasks.end();) {
      if (it->next == n && n < it->end) write(r, *it, rec);
      if (it->next >= it->end) {
        finish(r, *it);
        it = r.tasks.erase(it);
      } else {
        ++it;
      }
    }
}

}  // namespace engine
