// The engine: runs a compiled plan slot by slot over exact rational time.
// Each slot runs the due computed streams (producers before consumers; in
// parallel on a oneTBB flow graph when threads > 1), then the due sources
// read their next record. Every stream is stored as it is produced.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connectors/mqtt.hpp"
#include "ir/ir.hpp"
#include "ir/layout.hpp"

namespace engine {

struct Options {
  int64_t limit = 0;      // -m N: the zero step plus N-1 slots; 0 = unlimited
  bool noClock = false;   // do not sleep to slot deadlines
  bool untilEof = false;  // stop before the first slot that would read past a source's end
  // A DEVICE without TIMEOUT waits this long (seconds) for its record ([sources] timeout_s).
  double deviceTimeout = 0;
  int threads = 0;  // 0 = all cores, 1 = serial
  // Independent pipelines side by side from the first block, whatever they
  // cost (--parallel); else only when their measured cost says it pays.
  bool forceParallel = false;
  bool verbose = false;
  bool interpret = false;  // run field programs on the VM even when the JIT is built
  bool stopOnKey = false;  // a byte on a terminal stdin stops the run (xretractor without -k)
  int blockSlots = 0;      // most slots run as one block (0: the engine's default; 1: slot by slot)
  bool chains = true;      // compile chains of streams as one function each (JIT only)
  bool fuse = true;        // fold VOLATILE windows into their reducer without materialising them
  // JIT tiers: 0 quick code first, optimised code once the run has lasted a
  // moment (default); 1 quick code only; 2 optimised code from the start.
  int jitTier = 0;
  // Compiled units are kept in this directory and taken from it when the same
  // unit comes again (jit/code_cache.hpp); "": none.
  std::string jitCache;
  bool jitCacheAsked = false;     // named by the user: a cache that cannot be used is a warning
  connectors::MqttSettings mqtt;  // MQTT sources and PUBLISH sinks ([mqtt] in the TOML file)
  bool countNulls = false;        // count each stream's records with a NULL element (for /metrics)
  // Checkpoints (engine/checkpoint.cpp): every this many seconds at a block
  // boundary and at a clean stop; 0: none. `resume`: go on from the storage
  // directory's checkpoint (none there: a fresh start, said on stdout).
  double checkpointS = 10;
  bool resume = false;
};

struct EngineError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a client can see of one stream (xqry --dir / --detail).
struct StreamStatus {
  std::string id;
  ir::Rational interval;
  bool declared = false, generated = false;
  int64_t records = 0;                                      // stored (computed) or read (declared)
  int64_t bytes = -1;                                       // data bytes stored; -1 for declared sources
  int64_t capacity = 0;                                     // history the compiler asked for
  std::string location;                                     // FILE literal
  std::vector<std::pair<std::string, std::string>> fields;  // name, TYPE
  int programTokens = 0;
  std::string statement;     // the query text of a user stream; empty for declared and generated ones
  uint64_t rounded = 0;      // RATIONAL results that had to round (not exactly representable)
  uint64_t nullRecords = 0;  // records with a NULL element (with Options::countNulls)
  int tail = 0;              // a computed stream writes record n in slot (n + 1 + tail) x interval
  // DEVICE sources: records read, and records that were NULL (none complete by the deadline, or no device).
  bool device = false;
  uint64_t reads = 0, misses = 0;
  uint64_t outOfRange = 0;   // declared sources: values outside their field's type, stored NULL
  uint64_t downRecords = 0;  // DEVICE and MQTT sources: NULL records of slots due while the engine was down (--resume)
  // MQTT sources: messages received, payloads that were no record, records never taken.
  bool mqtt = false;
  uint64_t received = 0, malformed = 0, dropped = 0;
  uint64_t connected = 0;  // 1 while subscribed
  // PUBLISH: records the broker acknowledged, let go during an outage, waiting.
  bool publishes = false;
  uint64_t published = 0, publishDropped = 0, publishQueued = 0;
};

// What became of a compiled candidate plan handed to Engine::admit.
struct Admission {
  enum class Result {
    ADMITTED,         // its new streams run from the next grid point
    CHANGES_RUNNING,  // it would change running stream `detail`; nothing changed
    SET_UP_FAILED,    // a new stream could not be set up (`detail` says why)
  } result;
  std::string detail;
};

// Called on the engine's thread; the engine's live-plan methods may be used from them.
struct SlotHooks {
  // Waits for the next slot's deadline (clocked runs); without it the engine sleeps.
  std::function<void(std::chrono::steady_clock::time_point)> waitUntil;
  // Offline runs: called every few thousand slots (with the slots run so far)
  // so clients are still served and progress can be shown.
  std::function<void(int64_t)> idle;
  // After each slot (and after the zero step) with the streams that wrote a
  // record; asked only while `listening` says someone wants records.
  std::function<void(const std::vector<const std::string*>&)> afterSlot;
  std::function<bool()> listening;
  // Clocked runs: each slot's lateness (deadline to its last record), in ns.
  std::function<void(int64_t)> lateness;
};

class Engine {
 public:
  Engine(const ir::Plan& plan, Options opt);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Opens sources and artifacts. Throws EngineError with a clear message.
  void prepare();
  // Runs until the limit, the end of input (--until-eof) or `stop`.
  // Returns the number of slots processed.
  int64_t run(const std::atomic<bool>& stop, const SlotHooks& hooks = {});

  // ---- the live plan (call on the engine's thread, e.g. from a SlotHooks callback)
  std::vector<StreamStatus> status() const;
  std::optional<StreamStatus> status(const std::string& id) const;
  // The newest record of a stream with its element layout; false when none yet.
  bool newest(const std::string& id, const uint8_t*& data, const uint8_t*& nulls, const ir::Layout*& layout,
              int64_t* index = nullptr) const;
  // Record n of a stream (logical index) from its ring or its data file, into
  // `data` and one NULL flag per element; false when it is not held. `held`
  // gives the oldest and newest index that can be read (oldest > newest: none).
  bool record(const std::string& id, int64_t n, std::vector<uint8_t>& data, std::vector<uint8_t>& nulls,
              const ir::Layout*& layout) const;
  std::pair<int64_t, int64_t> held(const std::string& id) const;
  // The running plan (directives and streams, every stream frozen): the base
  // an ad hoc statement is compiled with (see tools/adhoc.cpp).
  ir::Plan livePlan() const;
  // Takes the streams of a compiled candidate (livePlan() plus new statements)
  // that are not running yet into the plan.
  Admission admit(const ir::Plan& candidate);
  // Adds rule `name` of stream `id` in a compiled candidate (livePlan() with
  // the rule appended to that stream) to the running stream: it sees the
  // stream's next record on. "OK" or the reason it was refused.
  std::string addRule(const ir::Plan& candidate, const std::string& id, const std::string& name);
  // Removes a stream imported ad hoc that nothing else reads (with the ad hoc
  // substrates only it used), or a rule imported ad hoc (by its name). Its
  // artifacts stay on disk. "OK" or the reason.
  std::string removeStream(const std::string& id);
  // Replaces the running plan with a compiled one between two slots: streams
  // whose definition (and inputs) did not change run on with their
  // artifacts; the others stop (`ended` names them) and the new plan's other
  // streams join at the next grid point of their interval. "OK" or the reason
  // (a plan that changes a directive is refused, nothing changed).
  std::string replacePlan(const ir::Plan& next, std::vector<std::string>& ended);
  // Closes artifacts (under ROTATION: renames to the archives of this session, whose
  // number prepare() reserved in the counter file), durable when it returns.
  void finish();
  // What finish() did: the streams whose files it closed, those synced
  // together (syncfs of the storage directory's file system), and the sync
  // calls (fsync, syncfs) it made.
  struct CloseReport {
    int streams = 0, together = 0;
    uint64_t syncs = 0;
  };
  CloseReport closeReport() const;
  // After finish(): an ad hoc JIT compile was still running and was left to
  // itself. Every artifact is closed; the process should end with _exit so
  // that no static destructor runs under that thread.
  bool backgroundAbandoned() const;
  // Time the JIT spent compiling so far (plan and ad hoc units, both tiers), in seconds.
  double jitSeconds() const;
  // After prepare() with Options::resume and a checkpoint: where the run goes
  // on (the slot counted from the plan's first, its time in seconds as "p/q"),
  // and the file it came from. A clocked run's slots missed while it was down
  // are known once run() starts (missedSlots).
  struct ResumeInfo {
    int64_t slot = 0;
    std::string time, file, fellBack;
  };
  std::optional<ResumeInfo> resumed() const;
  int64_t missedSlots() const;
  // Checkpoints written by this run: how many, the slot thread's time in them
  // (all and the longest, ns) and the last one's size in bytes (-v, bench).
  struct CheckpointStats {
    uint64_t written = 0;
    int64_t totalNs = 0, longestNs = 0;
    uint64_t bytes = 0;
    uint64_t durable = 0;      // made durable (synced, written, renamed in) off the slot thread
    int64_t durableNs = 0;     // ... and the time that took, all of them
    int64_t durableCpuNs = 0;  // ... of which the background thread's CPU
  };
  CheckpointStats checkpointStats() const;

  struct Impl;  // the engine's state (engine/engine_impl.hpp)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace engine
