#include "rules.hpp"

#include "storage/artifacts.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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
StreamRules::StreamRules(const ir::Query& q, const ir::Layout& out, std::string storageDir, CommandPool* pool)
    : q_(q), out_(out), dir_(std::move(storageDir)), pool_(pool) {
  ir::Field f;
  f.name = "cond";
  f.type = ir::Type::INTEGER;
  condLayout_ = ir::Layout::of({f});
  condOut_.assign(4, 0);
  condNull_.assign(1, 0);
  for (auto& r : q.rules) {
    RuleRuntime rt;
    rt.rule = &r;
    rt.condition.bytecode = vm::lowerCondition(q, r.condition, out);
    rules_.push_back(std::move(rt));
  }
}

StreamRules::~StreamRules() {
  for (auto& r : rules_)
    for (auto& t : r.tasks)
      if (t.fd >= 0) ::close(t.fd);
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
    for (auto& t : it->tasks)  // an open dump keeps the records written so far
      if (t.fd >= 0) ::close(t.fd);
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

std::string StreamRules::dumpPath(RuleRuntime& r) {
  return storage::ruleDumpPath(dir_, q_.id, r.rule->name, r.triggers++, r.rule->dumpRetention);
}

void StreamRules::write(DumpTask& t, const uint8_t* rec) {
  const size_t size = size_t(out_.recordSize);
  size_t done = 0;
  while (done < size) {
    ssize_t w = ::write(t.fd, rec + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const std::string why = w < 0 ? strerror(errno) : "no space written";
      if (ftruncate(t.fd, t.bytes) != 0) {
        // the size check at the next open cuts a partial record too
      }
      ::close(t.fd);
      t.fd = -1;
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
      if (r.tasks.front().fd >= 0) ::close(r.tasks.front().fd);
      r.tasks.pop_front();
    }
    DumpTask t;
    std::string path = dumpPath(r);
    t.path = path;
    t.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (t.fd < 0) throw std::runtime_error("rule " + rule.name + ": cannot write " + path + ": " + strerror(errno));
    t.next = n + rule.dumpFrom;
    t.end = n + rule.dumpTo;
    // Records before the trigger come from the history; missing ones are zero records.
    std::vector<uint8_t> zero(size_t(out_.recordSize), 0);
    while (t.next < n && t.next < t.end) {
      const uint8_t* d = nullptr;
      write(t, history(t.next, d) ? d : zero.data());
    }
    r.tasks.push_back(t);
  }
  // 2. this record goes to every dump whose window reaches it
  for (auto& r : rules_)
    for (auto it = r.tasks.begin(); it != r.tasks.end();) {
      if (it->next == n && n < it->end) write(*it, rec);
      if (it->next >= it->end) {
        if (it->fd >= 0) ::close(it->fd);
        it = r.tasks.erase(it);
      } else {
        ++it;
      }
    }
}

}  // namespace engine
