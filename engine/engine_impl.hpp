// The engine's private state (Engine::Impl), shared by the files that make
// up the engine, each with one job:
//   engine.cpp     set-up of the plan's streams, shutdown
//   sources.cpp    declared streams: their sources and the reads of a block
//   artifacts.cpp  each stream's stored files (through storage/)
//   native.cpp     JIT compiles and switching streams to native code
//   scheduler.cpp  the slot clock, blocks of slots, the run loop
//   parallel.cpp   pipelines timed, packed into one bin per thread, run on a oneTBB flow graph
//   live_plan.cpp  status, newest records, admitting and removing ad hoc streams
#pragma once

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>

#include "build_config.h"
#include "engine/engine.hpp"
#include "engine/rules.hpp"
#include "engine/stream.hpp"
#include "storage/file_io.hpp"
#if RDB_WITH_JIT
#include "engine/jit_worker.hpp"
#endif

namespace engine {

// Serial blocks that time every stream before the pipelines are placed
// (parallel.cpp), after a warm-up block; and what handing a block to the
// worker threads costs, in ns (their wake-up and the wait for the last).
constexpr int kCostBlocks = 4;
constexpr int kCostWarmUp = 1;
constexpr int64_t kHandOffNs = 20000;
// Slots per block (offline and behind schedule), unless Options say otherwise.
constexpr int kBlockSlots = 512;
constexpr auto kTierUpAfter = std::chrono::milliseconds(300);
constexpr uint64_t kOfflineIndexRecords = 1 << 16;  // records between index writes of a VOLATILE stream, offline
constexpr int kParallelBlockSlots = 4096;           // when the flow graph may run streams side by side
// Bytes of one stream's ring a block may add to its history, and of all rings.
constexpr int64_t kBlockBytes = int64_t(4) << 20;
constexpr int64_t kBlockBytesAll = int64_t(256) << 20;

struct Engine::Impl {
  ir::Plan plan;
  Options opt;
  std::vector<std::unique_ptr<Stream>> streams;  // plan order (topological)
  std::vector<Stream*> computed, declared;
  std::string storageDir;
  // The storage directory as set-up found it, listed once for all streams; gone after set-up.
  std::unique_ptr<storage::DirectoryListing> startListing;
  int rotation = -1;
  std::string rotationFile;
  // The number the session gave up to the archives of files of another layout
  // (archiveNumber); shared by the streams of one start or one admission.
  int givenUp = -1;
  int64_t ticksPerSecond = 1;  // scheduler ticks per second
  std::vector<int64_t> ticks;  // distinct intervals in ticks
  std::vector<int64_t> counters;
  std::vector<char> tickDue;  // whether distinct interval i is due in the current slot
  int64_t now = 0;            // the current slot, in ticks
  int adhocUnits = 0;
  double jitMs = 0;  // compile time of every unit adopted
  uint64_t nextSerial = 1;
  std::set<std::string> unitsGone;  // ad hoc JIT units whose code was released
  bool abandonedCompile = false;    // shutdown left a background compile running
  // Parallel runs: serial blocks timed so far (-1: placed, or nothing to
  // place), and each stream's time in each of them (by stream index).
  int costBlocks = -1;
  std::vector<std::vector<int64_t>> streamNs;
  int blockSlots = kBlockSlots;    // the most slots one block runs
  std::vector<int64_t> gridProbe;  // counters moved ahead to count the slots already due
  bool liveSource = false;         // a DEVICE source: one slot at a time
  // Clocked runs: when the current slot started, and the run's stop request
  // (a DEVICE deadline wait ends early on it, so does a sink's wait for a broker).
  std::chrono::steady_clock::time_point slotStart{};
  const std::atomic<bool>* stopFlag = nullptr;  // the caller's, during run() only
  bool stopSeen = false;                        // a run ended on its stop request (the sinks' drain is later)
  int64_t blockRecordBytes = 0;                 // one record of every stream (data and flags)
  Block block;
  std::vector<std::shared_ptr<Chain>> chains;  // the plan's, found at set-up
  CommandPool commands;
  std::unique_ptr<tbb::global_control> threadLimit;
  std::unique_ptr<tbb::flow::graph> graph;
  std::unique_ptr<tbb::flow::broadcast_node<tbb::flow::continue_msg>> start;
  std::vector<std::unique_ptr<tbb::flow::continue_node<tbb::flow::continue_msg>>> nodes;
  // By stream: a file source read by one bin's streams alone, which that bin
  // may read in its own task; binReadsNow: it does this block (readSources
  // leaves it out; under --until-eof only while it surely will not run out).
  std::vector<char> readInBin, binReadsNow;
  std::vector<std::vector<Stream*>> sourcesOfBins(const std::vector<std::vector<Stream*>>& bins);
  bool finished = false;
  bool prepared = false;  // prepare() ran to its end

  // ------------------------------------------------------------ checkpoints (checkpoint.cpp)
  struct Resume {  // a checkpoint read at set-up, until its state is restored
    std::string file, fellBack;
    int64_t slots = 0, wallAnchorNs = 0, ticksPerSecond = 0, now = 0, rotation = -1, ended = 0;
    std::vector<int64_t> counters;
    struct StreamState {
      int64_t due = 0, count = 0, base = 0, kept = 0, heldFrom = INT64_MIN;
      std::vector<uint8_t> data, nulls;
      bool held = false, files = false;
      uint64_t rounded = 0, nullRecords = 0, downRecords = 0, storeRecords = 0, indexRecords = 0;
      std::vector<uint8_t> source, store, rules;
    };
    std::map<std::string, StreamState> streams;
  };
  std::unique_ptr<Resume> resume;  // null: a fresh start
  std::optional<Engine::ResumeInfo> resumeInfo;
  int64_t slotsBefore = 0;        // a resumed run: slots the plan ran before (Run::slots starts there)
  int64_t wallAnchorNs = 0;       // clocked: the wall-clock time of tick 0 (system clock, ns)
  int64_t downUntil = INT64_MIN;  // clocked resume: slots before this (ticks) were due while it was down
  int64_t missedSlots = 0;        // ... and how many of them there were (run late, to catch up)
  bool planChanged = false;       // an import or a new plan: no more checkpoints (docs/reliability.md)
  std::chrono::steady_clock::time_point nextCheckpoint{};
  int64_t checkpointSlot = -1;  // the slot count of the last one written
  bool checkpointFailed = false;
  Engine::CheckpointStats checkpointStats;
  std::vector<uint8_t> identity;  // the plan's part of every checkpoint, made once
  std::atomic<int64_t> durableNs{0}, durableCpuNs{0};
  // Waits for the pending checkpoint (before the close, the next one, a plan
  // change); once it is durable, the RETENTION segments dropped before it go.
  void collectCheckpoint();
  std::vector<std::pair<Stream*, size_t>> dropMarks;  // the pending one's: segments held before it
  // A plan change: no more checkpoints, dropped segments are not held.
  void stopCheckpoints();
  // Reads the checkpoint (Options::resume) before any file is touched; throws
  // EngineError when it belongs to another plan or none of its files can be used.
  void readResume();
  void restoreStream(Stream& s);  // its ring, counters, source or rule state
  // A resumed stream's records in its store and index; false: not resuming.
  bool resumeCounts(const std::string& id, uint64_t& store, uint64_t& index) const;
  bool inputEnded = false;  // --until-eof: a source ran out (a resumed run has nothing left to do)
  void restoreEngine();     // the grid's counters, after every stream
  // Writes one at this block boundary: stores and indexes synced to its counts first.
  void saveCheckpoint(int64_t slots);
  void checkpointIfDue(int64_t slots, bool stopping);
  // Clocked: tick 0's wall-clock time; a resumed run keeps the checkpoint's
  // (its deadlines go on where they were) and reads NULL for slots whose
  // deadline passed while it was down (downUntil).
  void anchorClock(std::chrono::steady_clock::time_point& anchor);
#if RDB_WITH_JIT
  std::shared_ptr<JitWorker> jitw;  // owns the JIT; compiles ad hoc units off the slot thread
  // The plan's optimised tier, submitted once the run has lasted kTierUpAfter
  // or is sure to last that much longer (a short run keeps its quick code)
  // and the pipelines are placed (the compile would take a core while their
  // cost is measured).
  std::unique_ptr<JitWorker::Job> tierUp;
  void adopt(std::vector<JitWorker::Job>& jobs);
  // compileNative()'s parts: the JIT and its code cache (false: none here),
  // the job of the streams' programs and rule conditions, the chains' items.
  bool startJit();
  JitWorker::Job programsJob(const std::vector<Stream*>& which, const std::string& unit);
  std::vector<JitWorker::Item> chainItems();
  void adoptCompiled();
  void releaseUnusedUnits();
#endif

  Stream& S(const std::string& id) {
    for (auto& s : streams)
      if (s->q->id == id) return *s;
    throw EngineError("internal: stream " + id + " missing");
  }

  // ------------------------------------------------------------ set-up
  void prepare();
  // prepare()'s steps, in order.
  void openStorage();
  void makeStreams();
  void chooseBlockSlots();
  void fuseAndChain();
  void openArtifacts(Stream& s);
  void publishRecords();    // PUBLISH streams: the records of the block just run
  void countNullRecords();  // Options::countNulls: the block's records with a NULL element
  void buildGraph();        // (again after a plan change) times the next blocks, then places the pipelines
  int threadCount() const;
  bool independentStreams() const;                      // more than one pipeline
  std::vector<std::vector<Stream*>> pipelines() const;  // of the computed streams
  std::vector<std::vector<Stream*>> pipelinesOf(const std::vector<Stream*>& computed) const;
  void placePipelines();
  // Field programs and rule conditions to native code; `background`: on the
  // JIT worker, the streams run on the VM until adoptCompiled() switches them.
  void compileNative(const std::vector<Stream*>& which, const std::string& unit, bool background = false);
  void setupStream(Stream& s, const ir::Plan& p);
  void setupSource(Stream& s, int64_t cap);

  std::string closeArtifacts(Stream& s, int rotation);
  // closeArtifacts in its steps: the buffered data written; the index, the
  // archives, the files closed (`synced`: no fsync, closeAll syncs the file
  // system before and after); a PUBLISH sink's queue drained.
  std::string writeData(Stream& s);
  std::string closeFiles(Stream& s, int rotation, bool synced);
  void drainSink(Stream& s);
  std::vector<std::string> closeAll();  // every stream, at finish()
  // The storage directory's file system, synced as a whole at the close.
  std::unique_ptr<storage::io::FileSystemSync> storageSync;
  // The checkpoints' own: syncfs reports a writeback error once a descriptor,
  // and the close's (storageSync) must see it too.
  std::unique_ptr<storage::io::FileSystemSync> checkpointSync;
  // The checkpoint being made durable: "" or why it failed. Declared after what
  // its task uses, so it is waited for before they go.
  std::future<std::string> pendingCheckpoint;
  Engine::CloseReport closeReport;
  void nextRotation();  // the rotation counter: past every archive on disk
  void archiveChanged(const ir::Query& q, const storage::ArtifactPaths& paths, const storage::Descriptor& d);
  int archiveNumber(const storage::ArtifactPaths& paths);
  void removeDisposable(Stream& s);
  void dropGraph();

  // ------------------------------------------------------------ live plan
  std::string changedStream(const ir::Plan& cand, std::vector<const ir::Query*>& fresh) const;
  void refineTicks(const std::vector<const ir::Query*>& fresh);
  Stream& instantiate(const ir::Query& q, const ir::Plan& cand, int64_t delay = 0);
  int64_t growRings(const ir::Plan& cand);
  int64_t materialiseRead(const std::vector<const ir::Query*>& fresh, const ir::Plan& cand);
  void withdraw(size_t count, size_t ticksBefore);
  void dropNewest();
  void updateLiveSource();
  void retire(Stream& s);  // removed from the running plan
  void compact();          // drops removed streams, renumbers the rest

  // ------------------------------------------------------------ running
  int64_t gridPoint(const std::vector<int64_t>& counters) const;
  void passGridPoint(std::vector<int64_t>& counters, int64_t t) const;
  // The next `n` grid points (n >= 1) as the block to run.
  void planBlock(int n);
  // The grid repeats every lcm of the intervals: its points in one period
  // (offsets 1..period) and which intervals are due at each, made once for
  // the intervals of the plan (empty when the period holds too many points).
  struct GridPattern {
    std::vector<int64_t> ticks;  // the intervals it was made for
    int64_t period = 0;
    std::vector<int64_t> offsets;
    std::vector<std::vector<char>> due;  // due[interval][point]
  };
  GridPattern grid;
  const GridPattern& gridPattern();
  // Pass 1 of the block (computed streams) and pass 2 (sources read); false
  // when a source ran out (--until-eof), the block then ends at that slot.
  bool readSources();
  // One source's records of the block; `last` and `exhausted` as readSources' (--until-eof).
  void readSource(Stream& s, int& last, bool& exhausted);
  // Clocked: waits for the due DEVICE sources of the block's first slot, all at
  // once, until each has a complete record or its deadline has passed.
  void waitDevices();
  // HOLD: a held source's next record (zeros, not NULL) or its physical read.
  void readRecord(Stream& s);
  // Releases the held sources that any of `consumers` reads through the record
  // accessor. Only on the engine thread between slots, so it never races a read.
  void releaseHolds(const std::vector<Stream*>& consumers);
  void runStreams();
  void runStream(Stream& s);
};

// The least common multiple of two tick units; throws when it is too fine.
int64_t lcm64(int64_t a, int64_t b);
// Records the data file holds (a VOLATILE stream: every record, it has no file).
inline uint64_t durable(const Stream& s) { return s.files.store ? s.files.store->durable() : uint64_t(s.hist.count); }

}  // namespace engine
