#include "engine.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <set>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "build_config.h"
#include "ir/layout.hpp"
#if RDB_WITH_JIT
#include "engine/jit_worker.hpp"
#include "jit/jit.hpp"
#endif
#include "engine/latency.hpp"
#include "engine/memory.hpp"
#include "engine/operators/operators.hpp"
#include "engine/rules.hpp"
#include "engine/stream.hpp"
#include "grammar/front.hpp"
#include "ir/compile.hpp"
#include "ir/passes/passes.hpp"
#include "storage/descriptor.hpp"
#include "storage/source.hpp"
#include "storage/store.hpp"
#include "vm/values.hpp"
#include "vm/vm.hpp"

namespace engine {

using ir::Rational;
using ir::Type;


namespace {

int64_t lcm64(int64_t a, int64_t b) {
  int64_t g = std::gcd(a, b);
  __int128 r = __int128(a / g) * b;
  if (r > (__int128(1) << 62)) throw EngineError("the plan's intervals are too fine to schedule together");
  return int64_t(r);
}

}  // namespace

// Blocks whose time is spent deciding whether the flow graph pays off (6 each way).
constexpr int kTrialBlocks = 15;
constexpr int kTrialWarmUp = 3;  // blocks not counted: the worker threads are still starting
constexpr int kRetrials = 3;     // after 64, 128 and 256 more blocks
// Slots per block (offline and behind schedule), unless Options say otherwise.
constexpr int kBlockSlots = 512;
constexpr auto kTierUpAfter = std::chrono::milliseconds(300);
constexpr int kParallelBlockSlots = 4096;  // when the flow graph may run streams side by side
// Bytes of one stream's ring a block may add to its history, and of all rings.
constexpr int64_t kBlockBytes = int64_t(4) << 20;
constexpr int64_t kBlockBytesAll = int64_t(256) << 20;

struct Engine::Impl {
  ir::Plan plan;
  Options opt;
  std::vector<std::unique_ptr<Stream>> streams;  // plan order (topological)
  std::vector<Stream*> computed, declared;
  std::string storageDir;
  int rotation = -1;
  std::string rotationFile;
  int64_t ticksPerSecond = 1;  // scheduler ticks per second
  std::vector<int64_t> ticks;  // distinct intervals in ticks
  std::vector<int64_t> counters;
  std::vector<char> tickDue;  // whether distinct interval i is due in the current slot
  int64_t now = 0;            // the current slot, in ticks
  int adhocUnits = 0;
  uint64_t nextSerial = 1;
  std::set<std::string> unitsGone;  // ad hoc JIT units whose code was released
  bool abandonedCompile = false;    // shutdown left a background compile running
  // The flow graph is kept only if it beats the plain loop: the first slots of
  // a run are timed both ways (warm-up, serial, graph thirds).
  int schedTrial = 0;
  std::vector<std::chrono::steady_clock::duration> serialTimes, graphTimes;
  // A trial that chose the plain loop is run again a few times later: the
  // worker thread may not have been free in the first blocks.
  int retrials = 0;
  int64_t retrialAt = -1;  // slot count at which the next trial starts
  int64_t slotsRun = 0;
  void timeTrialBlock(std::chrono::steady_clock::duration d, bool serial);
  int blockSlots = kBlockSlots;  // the most slots one block runs
  std::vector<int64_t> gridProbe;  // counters moved ahead to count the slots already due
  bool liveSource = false;       // a DEVICE source: one slot at a time
  int64_t blockRecordBytes = 0;  // one record of every stream (data and flags)
  Block block;
  CommandPool commands;
  std::unique_ptr<tbb::global_control> threadLimit;
  std::unique_ptr<tbb::flow::graph> graph;
  std::unique_ptr<tbb::flow::broadcast_node<tbb::flow::continue_msg>> start;
  std::vector<std::unique_ptr<tbb::flow::continue_node<tbb::flow::continue_msg>>> nodes;
  bool finished = false;
#if RDB_WITH_JIT
  std::shared_ptr<JitWorker> jitw;  // owns the JIT; compiles ad hoc units off the slot thread
  // The plan's optimised tier, submitted once the run has lasted kTierUpAfter
  // (a short run keeps its quick code) and the scheduler trial is over (the
  // compile would take the core the trial measures).
  std::unique_ptr<JitWorker::Job> tierUp;
  void adopt(std::vector<JitWorker::Job>& jobs);
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
  void openArtifacts(Stream& s);
  void buildGraph();
  int threadCount() const;
  bool independentStreams() const;
  // Field programs and rule conditions to native code; `background`: on the
  // JIT worker, the streams run on the VM until adoptCompiled() switches them.
  void compileNative(const std::vector<Stream*>& which, const std::string& unit, bool background = false);
  void setupStream(Stream& s, const ir::Plan& p);

  // ------------------------------------------------------------ running
  int64_t gridPoint(const std::vector<int64_t>& counters) const;
  void passGridPoint(std::vector<int64_t>& counters, int64_t t) const;
  // The next `n` grid points (n >= 1) as the block to run.
  void planBlock(int n);
  // Pass 1 of the block (computed streams) and pass 2 (sources read); false
  // when a source ran out (--until-eof), the block then ends at that slot.
  bool readSources();
  void runStreams(bool serial);
  void runStream(Stream& s);
};

static std::string upper(std::string s) {
  for (auto& c : s) c = char(toupper((unsigned char)c));
  return s;
}

void Engine::Impl::prepare() {
  for (auto& q : plan.queries) {
    if (q.id == ":STORAGE") storageDir = q.filename;
    if (q.id == ":ROTATION") rotationFile = q.filename;
  }
  if (!storageDir.empty()) {
    struct stat st {};
    if (stat(storageDir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw EngineError("storage: path '" + storageDir + "' is not a directory");
  }
  if (!rotationFile.empty()) {
    std::ifstream in(rotationFile);
    long long n = 0;
    if (in >> n) rotation = int(n);
    else rotation = 0;
  }

  // Streams in plan order; the final topological order puts producers first.
  int idx = 0;
  int64_t den = 1;
  for (auto& q : plan.queries) {
    if (q.isDirective()) continue;
    auto s = std::make_unique<Stream>();
    s->q = &q;
    s->index = idx++;
    s->serial = nextSerial++;
    s->declared = q.isDeclaration();
    s->out = ir::Layout::of(q.schema);
    den = lcm64(den, q.interval.den);
    streams.push_back(std::move(s));
  }
  ticksPerSecond = den;
  for (auto& s : streams) {
    const ir::Query& q = *s->q;
    __int128 t = __int128(q.interval.num) * (den / q.interval.den);
    if (t <= 0 || t > (__int128(1) << 62)) throw EngineError("stream " + q.id + " has an unschedulable interval");
    s->tick = int64_t(t);
    if (std::find(ticks.begin(), ticks.end(), s->tick) == ticks.end()) ticks.push_back(s->tick);
  }
  std::sort(ticks.begin(), ticks.end());
  counters.assign(ticks.size(), 1);
  tickDue.assign(ticks.size(), 0);
  for (auto& s : streams) s->tickIndex = size_t(std::find(ticks.begin(), ticks.end(), s->tick) - ticks.begin());

  for (auto& sp : streams)
    if (!sp->declared)
      for (auto& d : sp->q->dependencies()) sp->srcs.push_back(S(d).index);
  // Worker threads pay off only on blocks long enough to outweigh waking them.
  if (opt.blockSlots > 0) blockSlots = opt.blockSlots;
  else if (threadCount() > 1 && independentStreams()) blockSlots = kParallelBlockSlots;
  // The block's records come on top of the budgeted history: all rings together
  // get at most kBlockBytesAll for them.
  for (auto& sp : streams) blockRecordBytes += sp->out.recordSize + int64_t(sp->out.elems.size());
  blockSlots = int(std::max<int64_t>(1, std::min<int64_t>(blockSlots, kBlockBytesAll / std::max<int64_t>(blockRecordBytes, 1))));
  for (auto& sp : streams) setupStream(*sp, plan);
  if (opt.fuse) ops::fuseWindows(computed, streams);
  // Zero step: every source reads its record 0 straight into its history.
  for (auto* s : declared) {
    s->source->next(s->hist.nextData(), s->hist.nextNulls());
    s->hist.commit();
  }
  if (!opt.interpret) compileNative(computed, "plan");
  if (rotation >= 0) {
    // Never overwrite an earlier run's archive, even if the counter file was lost.
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path dir = storageDir.empty() ? fs::path(".") : fs::path(storageDir);
    for (auto* s : computed) {
      const std::string data = s->q->filename.empty() ? s->q->id : s->q->filename;
      for (auto& e : fs::directory_iterator(dir, ec)) {
        std::string n = e.path().filename().string();
        auto at = n.rfind(".old");
        if (at == std::string::npos || n.compare(0, data.size(), data) != 0) continue;
        if (n.size() <= data.size() || (n[data.size()] != '.' && n[data.size()] != '_')) continue;
        std::string k = n.substr(at + 4);
        if (k.empty() || k.find_first_not_of("0123456789") != std::string::npos || k.size() > 9) continue;
        rotation = std::max(rotation, std::stoi(k) + 1);
      }
    }
  }
  buildGraph();
}

// Compiles every stream's field program with the JIT, once, before the run
// (and each ad hoc unit in the background). A program the JIT cannot take
// stays on the VM (said with -v).
void Engine::Impl::compileNative(const std::vector<Stream*>& which, const std::string& unit, bool background) {
#if RDB_WITH_JIT
  std::string err;
  if (!jitw) {
    auto j = jit::Jit::create(err);
    if (!j) {
      fprintf(stderr, "warning: JIT unavailable (%s); running on the VM\n", err.c_str());
      return;
    }
    jitw = std::make_shared<JitWorker>(std::move(j));
  }
  static const ir::Layout condLayout = [] {
    ir::Field f;
    f.type = Type::INTEGER;
    return ir::Layout::of({f});
  }();
  JitWorker::Job job;
  job.unit = unit;
  for (auto* s : which) {
    // A window that copies (or is folded by its reducer) runs no program.
    if (s->identity || s->fusedInto) continue;
    // The step reads its operands in place, or the scratch input records it gathers.
    JitWorker::Item it;
    it.serial = s->serial;
    it.prog = s->prog;
    it.in = s->in;
    it.out = s->out;
    it.block = true;
    if (s->operandPointers) it.operands = s->slotBase;
    job.items.push_back(std::move(it));
  }
  for (auto* s : which)
    if (s->rules) {
      int k = 0;
      for (auto& r : s->rules->rules()) {
        JitWorker::Item it;
        it.serial = s->serial;
        it.rule = k++;
        it.prog = r.cond;
        it.in = s->out;
        it.out = condLayout;
        job.items.push_back(std::move(it));
      }
    }
  if (background) {
    jitw->submit(std::move(job));
    return;
  }
  // The plan starts on quick code; the optimised code of the same programs
  // comes from the worker and switches in at a block boundary (same bytes).
  if (opt.jitTier == 0) tierUp = std::make_unique<JitWorker::Job>(job);
  job.tier = opt.jitTier == 2 ? jit::Tier::Optimised : jit::Tier::Quick;
  JitWorker::compileJob(jitw->jit(), job);
  std::vector<JitWorker::Job> jobs;
  jobs.push_back(std::move(job));
  adopt(jobs);
#else
  (void)which;
  (void)unit;
  (void)background;
#endif
}

#if RDB_WITH_JIT
// Switches streams to the code of finished units, between slots (no stream
// is running then). Code whose streams are all gone is released.
void Engine::Impl::adopt(std::vector<JitWorker::Job>& jobs) {
  std::map<uint64_t, Stream*> bySerial;
  for (auto& s : streams)
    if (!s->removed) bySerial[s->serial] = s.get();
  for (auto& job : jobs) {
    int native = 0, programs = 0;
    bool used = false;
    for (auto& it : job.items) {
      auto f = bySerial.find(it.serial);
      if (f == bySerial.end()) continue;
      Stream& s = *f->second;
      used = true;
      if (it.rule < 0) {
        ++programs;
        s.native = it.blockFn;
        if (it.blockFn) ++native;
        else if (opt.verbose && !(job.unit == "plan" && job.tier == jit::Tier::Optimised))  // said once
          fprintf(stdout, "stream %s runs on the VM: %s\n", s.q->id.c_str(), it.why.c_str());
      } else if (s.rules && size_t(it.rule) < s.rules->rules().size()) {
        s.rules->rules()[size_t(it.rule)].native = it.fn;
      }
    }
    if (opt.verbose && programs) {
      if (job.unit == "plan" && job.tier == jit::Tier::Optimised)
        fprintf(stdout, "JIT: %d of %d streams recompiled optimised in %.1f ms, off the slot thread\n", native,
                programs, job.ms);
      else
        fprintf(stdout, "JIT: %d of %d streams compiled in %.1f ms\n", native, programs, job.ms);
      fflush(stdout);  // a live engine's log is read while it runs
    }
    if (!used && job.unit != "plan" && unitsGone.insert(job.unit).second) {
      JitWorker::Job rm;
      rm.unit = job.unit;
      rm.remove = true;
      jitw->submit(std::move(rm));
    }
  }
}

void Engine::Impl::adoptCompiled() {
  if (!jitw || !jitw->pending()) return;
  auto jobs = jitw->takeDone();
  if (!jobs.empty()) adopt(jobs);
}

// A JIT unit whose streams are all gone releases its code (on the worker, after
// any compile of it still queued there).
void Engine::Impl::releaseUnusedUnits() {
  if (!jitw) return;
  std::map<std::string, bool> used;
  for (auto& s : streams)
    if (s->adhoc && !s->unit.empty()) used[s->unit] = used[s->unit] || !s->removed;
  for (auto& [unit, u] : used)
    if (!u && unitsGone.insert(unit).second) {
      JitWorker::Job rm;
      rm.unit = unit;
      rm.remove = true;
      jitw->submit(std::move(rm));
    }
}
#endif

// Runtime state of one stream: history, source or program, rules, artifacts.
void Engine::Impl::setupStream(Stream& s, const ir::Plan& p) {
  const ir::Query& q = *s.q;
  int64_t cap = 1;
  if (auto it = p.maxCapacity.find(q.id); it != p.maxCapacity.end()) cap = it->second;
  // The compiler's demand (rule dumps included) with the margin of
  // ir::historyRing, for consumers that read slightly ahead of the minimum
  // (ad hoc streams among them).
  cap = ir::historyRing(cap);
  // A block's records are held on top of the history; wide records make the
  // blocks shorter (never longer: rings already sized stay large enough).
  blockSlots = std::max(1, std::min<int>(blockSlots, int(kBlockBytes / std::max(1, s.out.recordSize))));
  s.vis.assign(size_t(blockSlots), 0);
  if (s.declared) {
    s.hist.init(s.out.recordSize, int(s.out.elems.size()), cap, blockSlots, 0);
    const auto format = q.sourceKind == ir::SourceKind::TEXTSOURCE ? storage::SourceFormat::TEXT
                        : q.sourceKind == ir::SourceKind::DEVICE   ? storage::SourceFormat::DEVICE
                                                                   : storage::SourceFormat::BINARY;
    storage::SourceOptions so;
    so.oneShot = q.isOneShot || opt.untilEof;
    so.untilEof = opt.untilEof;
    so.noClock = opt.noClock;
    try {
      s.source = storage::openSource(format, q.filename, s.out, so);
    } catch (const storage::SourceError& e) {
      throw EngineError("stream " + q.id + ": " + e.what());
    }
    declared.push_back(&s);
    liveSource = liveSource || format == storage::SourceFormat::DEVICE;
  } else {
    if (s.srcs.empty())  // prepare() fills them for the plan's streams; ad hoc ones get them here
      for (auto& d : q.dependencies()) s.srcs.push_back(S(d).index);
    s.in = ir::Layout::of(ir::passes::inputRecord(p, q));
    if (!q.rules.empty()) {
      s.rules = std::make_unique<StreamRules>(q, s.out, storageDir, &commands);
      cap = std::max<int64_t>(cap, ir::historyRing(s.rules->historyNeeded() + 2));
    }
    s.hist.init(s.out.recordSize, int(s.out.elems.size()), cap, blockSlots, q.origin);
    try {
      s.prog = vm::lowerFields(q, s.in, s.out);
      s.step = ops::setUp(s, streams);
    } catch (const ir::CompileError& e) {
      throw EngineError(e.what());
    } catch (const std::runtime_error& e) {
      throw EngineError("stream " + q.id + ": " + e.what());
    }
    computed.push_back(&s);
  }
  openArtifacts(s);
  if (!s.declared && s.q->isVolatile) s.store.reset();  // a VOLATILE stream's records live in its ring only
}


void Engine::Impl::openArtifacts(Stream& s) {
  const ir::Query& q = *s.q;
  namespace fs = std::filesystem;
  storage::Descriptor d;
  for (auto& f : q.schema) {
    storage::DescEntry e;
    e.type = f.type;
    e.name = f.name;
    e.count = f.type == Type::STRING ? f.rlen * f.rarray : f.rarray;
    d.entries.push_back(e);
  }
  const std::string descPath = storageDir + q.id + ".desc";
  if (s.declared) {
    storage::DescEntry ref;
    ref.kind = storage::DescEntry::Kind::REF;
    ref.name = q.filename;
    d.entries.push_back(ref);
    storage::DescEntry type;
    type.kind = storage::DescEntry::Kind::TYPE;
    type.name = q.sourceKind == ir::SourceKind::TEXTSOURCE ? "TEXTSOURCE" : "DEVICE";
    d.entries.push_back(type);
    s.outRec.assign(size_t(std::max(s.out.recordSize, 1)), 0);
    s.outNull.assign(std::max<size_t>(s.out.elems.size(), 1), 0);
    std::error_code ec;
    if (fs::exists(descPath, ec)) {
      try {
        auto stored = storage::Descriptor::load(descPath);
        if (!d.compatibleWith(stored))
          throw EngineError("storage: descriptor schema mismatch in " + descPath + " — remove data files and restart");
        // The source may have moved: the descriptor names the file this run reads.
        if (stored.ref() != d.ref() || stored.profile() != d.profile()) d.save(descPath);
      } catch (const storage::DescError& e) {
        throw EngineError(e.what());
      }
    } else {
      try {
        d.save(descPath);
      } catch (const storage::DescError& e) {
        throw EngineError(e.what());
      }
    }
    return;
  }
  if (q.retentionCapacity || q.retentionSegments) {
    storage::DescEntry r;
    r.kind = storage::DescEntry::Kind::RETENTION;
    r.capacity = q.retentionCapacity;
    r.segments = q.retentionSegments;
    d.entries.push_back(r);
  }
  std::string profile = upper(q.storageProfile);
  if (q.policyCapacity != 0) {
    storage::DescEntry rm;
    rm.kind = storage::DescEntry::Kind::RETMEMORY;
    rm.capacity = q.policyCapacity;
    d.entries.push_back(rm);
    storage::DescEntry t;
    t.kind = storage::DescEntry::Kind::TYPE;
    t.name = upper(q.policyProfile);
    if (q.storageProfile != "DEFAULT" && !q.isVolatile) t.name = profile;  // an explicit STORAGE clause wins
    d.entries.push_back(t);
    profile = t.name;
  } else if (profile != "DEFAULT") {
    storage::DescEntry t;
    t.kind = storage::DescEntry::Kind::TYPE;
    t.name = profile;
    d.entries.push_back(t);
  }
  const std::string dataName = q.filename.empty() ? q.id : q.filename;
  const std::string dataPath = storageDir + dataName;
  if (rotation < 0) {
    // A run starts every computed stream empty: remove the whole file family.
    for (const std::string& f : {dataPath, descPath, dataPath + ".meta", dataPath + ".shadow", dataPath + ".meta.shadow"})
      std::remove(f.c_str());
    std::error_code ec;
    fs::path dp(dataPath);
    fs::path dir = dp.has_parent_path() ? dp.parent_path() : fs::path(".");
    std::string prefix = dp.filename().string() + "_segment_";
    for (auto& e : fs::directory_iterator(dir, ec))
      if (e.path().filename().string().rfind(prefix, 0) == 0) fs::remove(e.path(), ec);
  }
  try {
    d.save(descPath);
    s.store = storage::openStore(profile, dataPath, s.out.recordSize, d.retention(), d.retMemory());
    s.metaBits = int(d.entries.size());
    s.meta = std::make_unique<storage::MetaIndex>(dataPath + ".meta", s.metaBits, s.store->shadowed());
    // Data first, index never ahead: an index a crash left ahead of (or behind)
    // the data is cut back (padded) to the data's whole records.
    s.meta->align(s.store->count());
    s.bitmap.assign(size_t((s.metaBits + 7) / 8), 0);
    s.zeroBitmap = s.bitmap;
  } catch (const storage::StorageError& e) {
    throw EngineError(e.what());
  } catch (const storage::DescError& e) {
    throw EngineError(e.what());
  }
}

// Data first, then the index entries that cover it, then close. Returns the
// first failure ("stream ID: ..."), empty when all went well; never throws.
// Records the data file holds (a VOLATILE stream: every record, it has no file).
static uint64_t durable(const Stream& s) { return s.store ? s.store->durable() : uint64_t(s.hist.count); }

static std::string closeArtifacts(Stream& s, int rotation) {
  std::string err;
  auto note = [&](const std::exception& e) {
    if (err.empty()) err = "stream " + s.q->id + ": " + e.what();
  };
  if (!s.store && s.meta) {
    try {
      s.meta->flush(durable(s));
    } catch (const std::exception& e) {
      note(e);
    }
  }
  if (s.store) {
    try {
      s.store->flush();
    } catch (const std::exception& e) {
      note(e);
    }
    try {
      if (s.meta) s.meta->flush(s.store->durable());
    } catch (const std::exception& e) {
      note(e);
    }
    try {
      s.store->close(rotation);
    } catch (const std::exception& e) {
      note(e);
    }
  }
  s.meta.reset();
  return err;
}

int Engine::Impl::threadCount() const {
  return opt.threads > 0 ? opt.threads : int(std::thread::hardware_concurrency());
}

// Whether two computed streams could run at the same time (neither reads the other).
bool Engine::Impl::independentStreams() const {
  std::vector<std::vector<bool>> reach(streams.size(), std::vector<bool>(streams.size(), false));
  for (auto& sp : streams)  // plan order is topological: sources come first
    for (int src : sp->srcs) {
      reach[size_t(sp->index)][size_t(src)] = true;
      for (size_t k = 0; k < streams.size(); ++k)
        if (reach[size_t(src)][k]) reach[size_t(sp->index)][k] = true;
    }
  std::vector<size_t> work;
  for (auto& sp : streams)
    if (!sp->declared && !sp->removed) work.push_back(size_t(sp->index));
  for (size_t i = 0; i < work.size(); ++i)
    for (size_t j = i + 1; j < work.size(); ++j)
      if (!reach[work[i]][work[j]] && !reach[work[j]][work[i]]) return true;
  return false;
}

void Engine::Impl::buildGraph() {
  const int threads = threadCount();
  if (threads <= 1) return;  // serial: plain loop in topological order
  // A graph pays off only when two computed streams can run at the same time.
  if (opt.threads == 0 && !independentStreams()) return;
  threadLimit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, size_t(threads));
  using namespace tbb::flow;
  graph = std::make_unique<tbb::flow::graph>();
  start = std::make_unique<broadcast_node<continue_msg>>(*graph);
  std::vector<continue_node<continue_msg>*> byIndex(streams.size(), nullptr);
  for (auto* s : computed) {
    nodes.push_back(std::make_unique<continue_node<continue_msg>>(*graph, [this, s](const continue_msg&) {
      runStream(*s);
      return continue_msg();
    }));
    byIndex[size_t(s->index)] = nodes.back().get();
  }
  for (auto* s : computed) {
    bool root = true;
    std::vector<int> seen;
    for (int src : s->srcs) {
      if (!byIndex[size_t(src)] || std::find(seen.begin(), seen.end(), src) != seen.end()) continue;
      seen.push_back(src);
      make_edge(*byIndex[size_t(src)], *byIndex[size_t(s->index)]);
      root = false;
    }
    if (root) make_edge(*start, *byIndex[size_t(s->index)]);
  }
}


// ================================================================ Engine
Engine::Engine(const ir::Plan& plan, Options opt) : impl_(std::make_unique<Impl>()) {
  impl_->plan = plan;
  impl_->opt = opt;
}

Engine::~Engine() {
  if (impl_ && !impl_->finished) {
    try {
      finish();
    } catch (const std::exception& e) {
      fprintf(stderr, "FATAL: %s\n", e.what());
    }
  }
}

void Engine::prepare() { impl_->prepare(); }

// The grid point the counters stand at: the smallest next multiple among the
// distinct intervals; passGridPoint() moves the counters past it.
int64_t Engine::Impl::gridPoint(const std::vector<int64_t>& c) const {
  int64_t t = INT64_MAX;
  for (size_t i = 0; i < ticks.size(); ++i) t = std::min(t, ticks[i] * c[i]);
  return t;
}
void Engine::Impl::passGridPoint(std::vector<int64_t>& c, int64_t t) const {
  for (size_t i = 0; i < ticks.size(); ++i) c[i] += ticks[i] * c[i] == t;
}

// The next n grid points.
void Engine::Impl::planBlock(int n) {
  block.slots = n;
  block.t.resize(size_t(n));
  block.due.resize(ticks.size());
  for (auto& d : block.due) d.resize(size_t(n));
  block.allDue = ticks.size() == 1;
  if (block.allDue) {  // one interval: every slot is due
    std::fill(block.due[0].begin(), block.due[0].end(), 1);
    for (int j = 0; j < n; ++j) block.t[size_t(j)] = ticks[0] * counters[0]++;
    now = block.t[size_t(n - 1)];
    return;
  }
  for (int j = 0; j < n; ++j) {
    const int64_t t = gridPoint(counters);
    for (size_t i = 0; i < ticks.size(); ++i) block.due[i][size_t(j)] = ticks[i] * counters[i] == t;
    passGridPoint(counters, t);
    block.t[size_t(j)] = t;
  }
  now = block.t[size_t(n - 1)];
}

// Pass 2 of every slot of the block, done first: each due source reads its
// next record; what a stream computing in slot j sees is the count before
// that slot's read. A source that runs out ends the block after that slot.
bool Engine::Impl::readSources() {
  int last = block.slots - 1;  // the slot whose read exhausted a source (--until-eof)
  bool exhausted = false;
  for (auto* s : declared) {
    const std::vector<char>& due = block.due[s->tickIndex];
    History& h = s->hist;
    int j = 0;
    while (j < block.slots) {
      // The due slots from j on whose records lie contiguously in the ring.
      int run = 0, end = j;
      const int64_t room = h.contiguous();
      for (; end < block.slots && run < room; ++end) {
        s->vis[size_t(end)] = h.count + run;
        run += due[size_t(end)];
      }
      const int got = run ? s->source->nextMany(h.nextData(), h.nextNulls(), run) : 0;
      h.commit(got);
      if (got < run || (run && s->source->exhausted())) {
        // The read of record `got` (of this run) exhausted it: find its slot.
        int seen = 0;
        for (int x = j; x < end; ++x)
          if (due[size_t(x)] && ++seen == got) {
            if (opt.untilEof) last = std::min(last, x);
            break;
          }
        exhausted = true;
        if (got < run) {  // the rest of this run reads as the source now does
          for (int x = got; x < run; ++x) {
            s->source->next(h.nextData(), h.nextNulls());
            h.commit();
          }
        }
      }
      j = end;
    }
  }
  if (last + 1 < block.slots) {  // the rest of the block never happens
    for (size_t i = 0; i < ticks.size(); ++i)
      for (int j = last + 1; j < block.slots; ++j) counters[i] -= block.due[i][size_t(j)];
    block.slots = last + 1;
    now = block.t[size_t(last)];
  }
  return !(exhausted && opt.untilEof);
}

void Engine::Impl::runStream(Stream& s) {
  if (s.removed) return;
  BlockCtx ctx{block, streams};
  s.step(ctx, s);
}

void Engine::Impl::runStreams(bool serial) {
  if (graph && !serial) {
    start->try_put(tbb::flow::continue_msg());
    graph->wait_for_all();
  } else {
    for (auto* s : computed) runStream(*s);
  }
}

int64_t Engine::run(const std::atomic<bool>& stop, const SlotHooks& hooks) {
  Impl& m = *impl_;
  const auto anchor = std::chrono::steady_clock::now();
  int64_t slots = 0, nextIdle = 0;
  std::vector<const std::string*> wrote;
  LatencyHistogram lateness;  // clocked runs: deadline to the slot's last record
  auto listening = [&] { return hooks.afterSlot && (!hooks.listening || hooks.listening()); };
  auto deadlineOf = [&](int64_t t) {
    return anchor + std::chrono::nanoseconds(int64_t(__int128(t) * 1000000000 / m.ticksPerSecond));
  };
  // Clocked: wake at the deadline, not up to the default 50 us timer slack later.
  if (!m.opt.noClock) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (listening()) {  // the zero step: every source has its record 0
    for (auto* s : m.declared) wrote.push_back(&s->q->id);
    hooks.afterSlot(wrote);
  }
  while (!stop.load(std::memory_order_relaxed)) {
    if (m.opt.limit > 0 && slots >= m.opt.limit - 1) break;
#if RDB_WITH_JIT
    if (m.tierUp && (!m.graph || m.schedTrial >= kTrialBlocks) &&
        std::chrono::steady_clock::now() - anchor >= kTierUpAfter) {
      m.jitw->submit(std::move(*m.tierUp));
      m.tierUp.reset();
    }
    m.adoptCompiled();  // code that became ready switches in at this boundary
#endif
    // Slots per block: one while a client wants every slot's records;
    // clocked, one slot, or every slot already due when behind schedule.
    int n = m.blockSlots;
    if (m.opt.limit > 0) n = int(std::min<int64_t>(n, m.opt.limit - 1 - slots));
    if (listening() || m.liveSource) n = 1;  // a DEVICE is read as its records come
    std::chrono::steady_clock::time_point deadline{};
    if (!m.opt.noClock) {
      // The next grid point; the block grows with the slots whose deadline has passed.
      m.now = m.gridPoint(m.counters);  // an import while waiting joins after this slot
      deadline = deadlineOf(m.now);
      if (hooks.waitUntil) hooks.waitUntil(deadline);
      else std::this_thread::sleep_until(deadline);
      if (stop.load(std::memory_order_relaxed)) break;
      if (n > 1) {
        const auto late = std::chrono::steady_clock::now();
        int due = 0;
        m.gridProbe.assign(m.counters.begin(), m.counters.end());
        for (; due < n; ++due) {  // how many grid points are due by now
          const int64_t t = m.gridPoint(m.gridProbe);
          if (deadlineOf(t) > late) break;
          m.passGridPoint(m.gridProbe, t);
        }
        n = std::max(due, 1);
      }
    } else if (hooks.idle && slots >= nextIdle) {
      hooks.idle();  // an import here joins at the next grid point, the block's first
      nextIdle = slots + 4096;
    }
    m.planBlock(n);
    // Sources first (pass 2 of each slot), then every computed stream over the
    // whole block, producers before consumers.
    const bool more = m.readSources();
    if (m.retrialAt >= 0 && slots >= m.retrialAt) {
      m.retrialAt = -1;
      m.buildGraph();
      m.schedTrial = 0;
      m.serialTimes.clear();
      m.graphTimes.clear();
    }
    const bool trial = m.graph && m.schedTrial < kTrialBlocks;
    const auto p0 = trial ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    const bool serialTurn = trial && (m.schedTrial % 2 == 1);
    m.runStreams(serialTurn);
    m.slotsRun = slots;
    if (trial) m.timeTrialBlock(std::chrono::steady_clock::now() - p0, serialTurn);
    for (auto* s : m.computed)
      if (!s->error.empty()) throw EngineError("stream " + s->q->id + ": " + s->error);
    // Data first, then the index entries it covers; clocked runs push both out
    // every block, offline runs when the store's buffer fills.
    for (auto* s : m.computed) {
      if (!s->wrote) continue;
      try {
        if (s->store && !m.opt.noClock) s->store->flush();
        s->meta->flush(durable(*s));
      } catch (const storage::StorageError& e) {
        throw EngineError("stream " + s->q->id + ": " + e.what());
      }
    }
    if (m.commands.running()) m.commands.reap();
    slots += m.block.slots;
    if (listening()) {
      wrote.clear();
      for (auto* s : m.computed)
        if (s->wrote) wrote.push_back(&s->q->id);
      for (auto* s : m.declared)
        if (m.block.due[s->tickIndex][0]) wrote.push_back(&s->q->id);
      hooks.afterSlot(wrote);
    }
    if (!m.opt.noClock) {
      const auto done = std::chrono::steady_clock::now();
      for (int j = 0; j < m.block.slots; ++j)
        lateness.add(std::chrono::duration_cast<std::chrono::nanoseconds>(done - deadlineOf(m.block.t[size_t(j)])).count());
    }
    if (!more) break;
    if (m.opt.stopOnKey) {
      pollfd p{0, POLLIN, 0};
      if (poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) break;
    }
  }
  if (m.opt.verbose) lateness.print(stdout);
  return slots;
}

bool Engine::backgroundAbandoned() const { return impl_->abandonedCompile; }

// Small blocks cost more to hand to worker threads than to run, and the
// workers would keep a second core spinning for nothing: drop the graph when
// the plain loop was at least as fast (blocks alternate between the two
// after one warm-up block). Serial and graph write the same artifacts.
void Engine::Impl::timeTrialBlock(std::chrono::steady_clock::duration d, bool serial) {
  if (schedTrial >= kTrialWarmUp) (serial ? serialTimes : graphTimes).push_back(d);
  if (++schedTrial < kTrialBlocks) return;
  // Medians: one block preempted by another process does not decide.
  auto median = [](std::vector<std::chrono::steady_clock::duration> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? std::chrono::steady_clock::duration{} : v[v.size() / 2];
  };
  const auto graphTime = median(graphTimes), serialTime = median(serialTimes);
  const bool keep = graphTime * 5 < serialTime * 4;  // the graph must win by 20%
  if (opt.verbose)
    fprintf(stdout, "scheduler: flow graph %.3f ms, serial %.3f ms a block (medians of %zu blocks each): %s\n",
            std::chrono::duration<double, std::milli>(graphTime).count(),
            std::chrono::duration<double, std::milli>(serialTime).count(), graphTimes.size(),
            keep ? "parallel" : "serial");
  if (!keep) {
    nodes.clear();
    start.reset();
    graph.reset();
    threadLimit.reset();
    if (retrials < kRetrials) retrialAt = slotsRun + (int64_t(64) << retrials++) * blockSlots;
  }
}

void Engine::finish() {
  Impl& m = *impl_;
  if (m.finished) return;
  m.finished = true;
#if RDB_WITH_JIT
  // A compile still running after half a second is left to itself (see backgroundAbandoned).
  if (!JitWorker::shutdown(m.jitw, std::chrono::milliseconds(500))) m.abandonedCompile = true;
#endif
  m.nodes.clear();
  m.start.reset();
  m.graph.reset();
  m.commands.shutdown(200);
  for (auto& s : m.streams) s->rules.reset();
  std::string failed;
  for (auto& s : m.streams) {
    std::string err = closeArtifacts(*s, m.rotation);
    if (failed.empty()) failed = err;
    else if (!err.empty()) fprintf(stderr, "FATAL: %s\n", err.c_str());  // the first one is thrown
    // DISPOSABLE: the source is consumed; its file and descriptor go at shutdown.
    if (s->declared && s->q->isDisposable) {
      s->source.reset();
      std::remove(s->q->filename.c_str());
      std::remove((m.storageDir + s->q->id + ".desc").c_str());
    }
  }
  if (m.rotation >= 0) {
    std::ofstream out(m.rotationFile, std::ios::trunc);
    out << (m.rotation + 1);
  }
  if (!failed.empty()) throw EngineError(failed);
}


// ================================================================ live plan
static StreamStatus statusOf(const Stream& s, const std::map<std::string, int>& caps) {
  StreamStatus st;
  const ir::Query& q = *s.q;
  st.id = q.id;
  st.interval = q.interval;
  st.declared = s.declared;
  st.generated = q.isGenerated();
  st.records = s.declared || !s.store ? s.hist.count : int64_t(s.store->count());
  st.bytes = s.declared ? -1 : st.records * s.out.recordSize;
  auto it = caps.find(q.id);
  st.capacity = it == caps.end() ? 1 : it->second;
  st.location = q.filename;
  for (auto& f : q.schema) st.fields.push_back({f.name, ir::typeName(f.type)});
  st.programTokens = int(q.program.size());
  if (!s.declared && !q.isSubstrat) st.statement = q.text;
  st.rounded = s.rounded;
  return st;
}

std::vector<StreamStatus> Engine::status() const {
  std::vector<StreamStatus> out;
  for (auto& s : impl_->streams)
    if (!s->removed) out.push_back(statusOf(*s, impl_->plan.maxCapacity));
  return out;
}

std::optional<StreamStatus> Engine::status(const std::string& id) const {
  for (auto& s : impl_->streams)
    if (s->q->id == id && !s->removed) return statusOf(*s, impl_->plan.maxCapacity);
  return std::nullopt;
}

bool Engine::newest(const std::string& id, const uint8_t*& data, const uint8_t*& nulls, const ir::Layout*& layout) const {
  for (auto& s : impl_->streams) {
    if (s->q->id != id || s->removed) continue;
    if (s->hist.count == 0) return false;
    layout = &s->out;
    if (s->fusedInto) {  // not materialised: made now from its producer
      if (!ops::fusedNewest(*s, impl_->streams)) return false;
      data = s->outRec.data();
      nulls = s->outNull.data();
      return true;
    }
    return s->hist.get(s->hist.newest(), data, nulls);
  }
  return false;
}

std::string Engine::importStatement(const std::string& text) {
  Impl& m = *impl_;
  // Only SELECT is accepted here (the reference's replies for the others).
  std::string head;
  for (char c : text) {
    if (isspace((unsigned char)c)) {
      if (head.empty()) continue;
      break;
    }
    head += char(toupper((unsigned char)c));
  }
  if (head == "RULE") return "Fail parse: AdHoc RULE not yet supported";
  if (head == "STORAGE" || head == "SUBSTRAT" || head == "ROTATION") return "Fail parse: AdHoc STORAGE, SUBSTRAT or PERCOUTNER not supported";
  if (head == "DECLARE") return "Fail parse: AdHoc DECLARE not supported";
  if (head != "SELECT") return "Unrecognized command. AdHoc query must start with SELECT";
  std::vector<ir::Query> parsed;
  try {
    parsed = rql::parseStatement(text);
  } catch (const rql::SyntaxError& e) {
    return std::string("Fail parse:") + e.what();
  } catch (const ir::CompileError& e) {
    return std::string("Fail parse:") + e.what();
  }
  if (parsed.size() != 1 || parsed[0].isDeclaration()) return "Unrecognized command. AdHoc query must start with SELECT";
  // Compile the live plan plus the statement; running streams must come out unchanged.
  ir::Plan cand;
  cand.options = m.plan.options;
  cand.restrictedSharing = true;
  cand.newIds.insert(parsed[0].id);
  std::map<std::string, const ir::Query*> live;
  for (auto& q : m.plan.queries)
    if (q.isDirective()) cand.queries.push_back(q);
  for (auto& s : m.streams) {
    if (s->removed) continue;
    cand.queries.push_back(*s->q);
    live[s->q->id] = s->q;
    cand.frozenIds.insert(s->q->id);
  }
  if (live.count(parsed[0].id)) return "dataModel::addQueryToModel FAILED:" + parsed[0].id;
  cand.queries.push_back(parsed[0]);
  try {
    ir::compilePlan(cand);
  } catch (const std::exception& e) {
    return std::string("Fail local chain compiler:") + e.what();
  }
  std::vector<const ir::Query*> fresh;
  for (auto& q : cand.queries) {
    if (q.isDirective()) continue;
    auto it = live.find(q.id);
    if (it == live.end()) {
      fresh.push_back(&q);
      continue;
    }
    const ir::Query& old = *it->second;
    bool same = old.program == q.program && old.interval == q.interval && old.schema.size() == q.schema.size();
    for (size_t i = 0; same && i < q.schema.size(); ++i)
      same = old.schema[i].program == q.schema[i].program && old.schema[i].type == q.schema[i].type;
    if (!same) return "Compile chain failed:the ad hoc query would change the running stream '" + q.id + "'";
  }
  // Instantiate the new streams (producers first: cand is in topological order).
  int64_t den = m.ticksPerSecond;
  for (auto* q : fresh) den = lcm64(den, q->interval.den);
  if (den != m.ticksPerSecond) {  // a finer tick unit: scale every tick and the clock
    const int64_t f = den / m.ticksPerSecond;
    for (auto& t : m.ticks) t *= f;
    for (auto& s : m.streams) {
      s->tick *= f;
      s->joinAt *= f;
    }
    m.now *= f;
    m.ticksPerSecond = den;
  }
  std::vector<Stream*> added;
  for (auto* qp : fresh) {
    auto s = std::make_unique<Stream>();
    s->ownQuery = std::make_unique<ir::Query>(*qp);
    const ir::Query& q = *s->ownQuery;
    s->q = &q;
    s->serial = m.nextSerial++;
    s->index = int(m.streams.size());
    s->out = ir::Layout::of(q.schema);
    s->tick = q.interval.num * (den / q.interval.den);
    auto ti = std::find(m.ticks.begin(), m.ticks.end(), s->tick);
    if (ti == m.ticks.end()) {
      m.ticks.push_back(s->tick);
      m.counters.push_back(m.now / s->tick + 1);  // joins at the next grid point after this slot
      m.tickDue.push_back(0);
      ti = m.ticks.end() - 1;
    }
    s->tickIndex = size_t(ti - m.ticks.begin());
    m.plan.maxCapacity[q.id] = cand.maxCapacity.count(q.id) ? cand.maxCapacity.at(q.id) : 1;
    Stream& ref = *s;
    m.streams.push_back(std::move(s));
    m.blockRecordBytes += ref.out.recordSize + int64_t(ref.out.elems.size());
    m.blockSlots = int(std::max<int64_t>(1, std::min<int64_t>(m.blockSlots, kBlockBytesAll / m.blockRecordBytes)));
    for (auto& d : q.dependencies())  // a new reader of a fused window: it is materialised again
      for (auto& o : m.streams)
        if (o->q->id == d && o->fusedInto) ops::unfuse(*o, m.streams);
    try {
      m.setupStream(ref, cand);
    } catch (const std::exception& e) {
      m.streams.pop_back();
      if (!m.computed.empty() && m.computed.back() == &ref) m.computed.pop_back();
      return std::string("Compile chain failed:") + e.what();
    }
    // It joins at the next grid point after this slot; its first record is the
    // one whose nominal time is that point.
    ref.joinAt = m.now + 1;
    ref.adhoc = true;
    ref.unit = "adhoc" + std::to_string(m.adhocUnits + 1);
    ref.due = m.now / ref.tick;
    ref.firstIndex = std::max<int64_t>(q.origin, ref.due - q.tail);
    ref.hist.base = ref.firstIndex;
    added.push_back(&ref);
  }
  // Native code comes later, from the JIT worker; until then the VM runs them.
  if (!m.opt.interpret && !added.empty()) m.compileNative(added, "adhoc" + std::to_string(++m.adhocUnits), true);
  if (m.graph) {  // the flow graph gets the new nodes
    m.nodes.clear();
    m.start.reset();
    m.graph.reset();
    m.buildGraph();
  }
  return "OK";
}


std::string Engine::removeStream(const std::string& id) {
  Impl& m = *impl_;
  Stream* target = nullptr;
  for (auto& s : m.streams)
    if (s->q->id == id && !s->removed) target = s.get();
  if (!target) return "unknown stream: " + id;
  if (!target->adhoc) return "stream " + id + " is part of the plan the engine started with; only ad hoc streams can be removed";
  auto readers = [&](const Stream& s) {
    int n = 0;
    for (auto& o : m.streams)
      if (!o->removed && o.get() != &s)
        for (int src : o->srcs)
          if (src == s.index) ++n;
    return n;
  };
  if (readers(*target)) return "stream " + id + " is read by other streams";
  auto drop = [&](Stream& s) {
    s.removed = true;
    m.plan.maxCapacity.erase(s.q->id);
    m.computed.erase(std::remove(m.computed.begin(), m.computed.end(), &s), m.computed.end());
    closeArtifacts(s, -1);
  };
  drop(*target);
  // Ad hoc substrates nobody reads any more go too.
  for (bool again = true; again;) {
    again = false;
    for (auto& s : m.streams)
      if (!s->removed && s->adhoc && s->q->isSubstrat && readers(*s) == 0) {
        drop(*s);
        again = true;
      }
  }
#if RDB_WITH_JIT
  m.releaseUnusedUnits();
#endif
  // Removed streams go for good (nothing reads them): renumber the rest.
  std::vector<int> renumber(m.streams.size(), -1);
  std::vector<std::unique_ptr<Stream>> kept;
  for (auto& s : m.streams)
    if (!s->removed) {
      renumber[size_t(s->index)] = int(kept.size());
      kept.push_back(std::move(s));
    }
  for (auto& s : kept) {
    s->index = renumber[size_t(s->index)];
    for (int& src : s->srcs) src = renumber[size_t(src)];
  }
  m.streams = std::move(kept);
  returnFreeMemory();  // the removed streams' histories and buffers go back to the system
  if (m.graph) {
    m.nodes.clear();
    m.start.reset();
    m.graph.reset();
    m.buildGraph();
  }
  return "OK";
}

}  // namespace engine
