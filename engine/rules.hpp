// RULE actions: conditions evaluated on every record a stream writes;
// DUMP writes the records around the trigger to dump files, SYSTEM runs a
// shell command in a bounded pool of child processes that never blocks a slot.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/compiled_program.hpp"
#include "ir/ir.hpp"
#include "ir/layout.hpp"
#include "storage/checkpoint.hpp"

namespace engine {

// Children of DO SYSTEM. Reaped between slots; killed at shutdown, so no
// zombie or orphan outlives the engine.
class CommandPool {
 public:
  explicit CommandPool(int maxRunning = 4) : max_(maxRunning) {}
  ~CommandPool();
  // Starts `/bin/sh -c cmd` unless the pool is full; false when it was skipped.
  bool submit(const std::string& rule, const std::string& cmd);
  void reap();                 // collect finished children, log failures
  void shutdown(int graceMs);  // wait a little, then kill what still runs
  int running() const { return int(children_.size()); }

 private:
  struct Child {
    pid_t pid;
    std::string rule;
  };
  int max_;
  std::vector<Child> children_;
};

// A rule's dump file, kept open from one dump to the next: a new dump
// truncates it and writes from its start, so a reader sees what an open with
// O_TRUNC showed. Opening it with O_TRUNC and closing it for every dump made
// ext4 start writeback at each close and the next truncate wait for it.
struct DumpFile {
  std::string path;
  int fd = -1;
  dev_t dev = 0;  // the file opened, to notice one moved away or replaced
  ino_t ino = 0;
};

// One dump being written: whole records only, one write each, so a failed
// write (a full disk) is cut back to the records before it.
struct DumpTask {
  std::string path;  // its file, one of its rule's files while open
  int fd = -1;
  bool reused = true;         // its file is written again by a later dump
  int64_t bytes = 0;          // whole records written so far
  int64_t next = 0, end = 0;  // logical indices still to write: [next, end)
};

// One RULE of one stream.
struct RuleRuntime {
  const ir::Rule* rule = nullptr;
  std::deque<DumpTask> tasks;   // this rule's open dumps, at most max(RETENTION, 1)
  std::vector<DumpFile> files;  // its dump files held open
  CompiledProgram condition;    // one INTEGER element: the condition's truth (NULL does not fire)
  int triggers = 0;             // how many times it fired (names the next dump file)
  bool adhoc = false;           // added while running: runs on the VM, may be removed again
};

// Record access for dumps: the stream's history by logical index.
using RecordLookup = std::function<bool(int64_t n, const uint8_t*& data)>;

// All rules of one stream, with their pending dump tasks.
class StreamRules {
 public:
  StreamRules(const ir::Query& q, const ir::Layout& out, std::string storageDir, CommandPool* pool);
  ~StreamRules();
  std::vector<RuleRuntime>& rules() { return rules_; }
  // Called after the stream wrote record n (its output record and flags).
  void onRecord(int64_t n, const uint8_t* rec, const uint8_t* nulls, const RecordLookup& history);
  int historyNeeded() const;  // records of the stream a negative DUMP start reads back
  // A rule imported while running (its condition compiled against this
  // stream); it follows the plan's rules. remove() takes one of those back.
  void add(const ir::Rule& rule);
  bool remove(const std::string& name);
  bool has(const std::string& name) const;
  // A checkpoint's part (engine/checkpoint.cpp): each rule's firings and open
  // dumps; restored, an open dump's file is reopened and cut to its bytes.
  void save(storage::ByteWriter& w) const;
  void restore(storage::ByteReader& r);

 private:
  std::string dumpPath(RuleRuntime& r);
  int openDump(RuleRuntime& r, const std::string& path);
  void finish(RuleRuntime& r, DumpTask& t);  // a dump done or dropped: its file kept open or closed
  void write(RuleRuntime& r, DumpTask& t, const uint8_t* rec);

  const ir::Query& q_;
  const ir::Layout& out_;
  std::string dir_;
  CommandPool* pool_;
  std::vector<RuleRuntime> rules_;
  std::deque<ir::Rule> adhoc_;  // the imported rules (a deque: RuleRuntime points into it)
  std::vector<uint8_t> condOut_, condNull_;
  std::vector<uint8_t> zero_;  // the record a dump writes for a missing one
  ir::Layout condLayout_;
};

}  // namespace engine
