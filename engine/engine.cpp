// Set-up of a plan's streams (histories, sources, programs, rules) and shutdown.
#include <sys/stat.h>

#include <algorithm>
#include <numeric>

#include "engine/engine_impl.hpp"
#include "engine/operators/chain.hpp"
#include "engine/operators/operators.hpp"
#include "ir/passes/passes.hpp"
#include "storage/artifacts.hpp"
#include "storage/checkpoint.hpp"
#include "storage/file_io.hpp"
#include "storage/source.hpp"
#if RDB_WITH_JIT
#include "jit/jit.hpp"
#endif

namespace engine {

int64_t lcm64(int64_t a, int64_t b) {
  int64_t g = std::gcd(a, b);
  __int128 r = __int128(a / g) * b;
  if (r > (__int128(1) << 62)) throw EngineError("the plan's intervals are too fine to schedule together");
  return int64_t(r);
}

Engine::Engine(const ir::Plan& plan, Options opt) : impl_(std::make_unique<Impl>()) {
  impl_->plan = plan;
  impl_->opt = opt;
  // MQTT sources of this engine place indexed records by one shared offset.
  impl_->opt.mqtt.waitWhenFull = opt.noClock;
  // SIGTERM (or xqry -k) ends any sink's wait for a broker.
  impl_->opt.mqtt.stopping = [m = impl_.get()] {
    return m->stopSeen || (m->stopFlag && m->stopFlag->load(std::memory_order_relaxed));
  };
  if (!impl_->opt.mqtt.alignment) impl_->opt.mqtt.alignment = std::make_shared<connectors::IndexAlignment>();
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

void Engine::Impl::prepare() {
  openStorage();
  makeStreams();
  readResume();  // a checkpoint of another plan is refused here, before any file is touched
  if (resume && resume->rotation >= 0) rotation = int(resume->rotation);  // the session goes on under its number
  chooseBlockSlots();
  startListing = std::make_unique<storage::DirectoryListing>(storageDir);
  for (auto& sp : streams) setupStream(*sp, plan);
  fuseAndChain();
  if (resume) {
    for (auto& sp : streams) restoreStream(*sp);
    restoreEngine();
  } else {
    // Zero step: every source reads its record 0 straight into its history.
    for (auto* s : declared) readRecord(*s);
    // HOLD: a consumer there from the start sees the zero step's zeros, then the
    // file from its first record.
    releaseHolds(computed);
  }
  nextCheckpoint = std::chrono::steady_clock::now() + std::chrono::nanoseconds(int64_t(opt.checkpointS * 1e9));
  if (!opt.interpret) compileNative(computed, "plan");
  if (rotation >= 0 && !resumeInfo) {
    // This session's number is reserved before it runs: a crash costs a number, never an archive.
    nextRotation();  // archives are made at shutdown: the start's listing still holds
    try {
      storage::writeRotationCounter(rotationFile, rotation + 1);
    } catch (const storage::StorageError& e) {
      throw EngineError(e.what());
    }
    givenUp = -1;
  }
  startListing.reset();
  buildGraph();
  // The start is a checkpoint too: a kill before the first one resumes from
  // slot 0, never from files a fresh start would continue (ROTATION).
  if (!resumeInfo && opt.checkpointS > 0) saveCheckpoint(0);
  // A resumed run that takes none: the one it came from would be stale once it writes on.
  if (resumeInfo && opt.checkpointS <= 0) storage::removeCheckpoint(storage::CheckpointPaths::in(storageDir));
  prepared = true;
}

// The plan's directives: the storage directory (checked, its file system
// opened for the close's sync) and the rotation counter.
void Engine::Impl::openStorage() {
  for (auto& q : plan.queries) {
    if (q.id == ":STORAGE") storageDir = q.filename;
    if (q.id == ":ROTATION") rotationFile = q.filename;
  }
  if (!storageDir.empty()) {
    struct stat st {};
    if (stat(storageDir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw EngineError("storage: path '" + storageDir + "' is not a directory");
  }
  // Opened before any artifact is written: the close's syncfs reports a
  // writeback error of any of them.
  storageSync = std::make_unique<storage::io::FileSystemSync>(storageDir);
  checkpointSync = std::make_unique<storage::io::FileSystemSync>(storageDir);
  // A counter file that is there but holds no session number stops the start
  // before any artifact is touched (book rotation.md).
  if (!rotationFile.empty()) {
    try {
      rotation = storage::readRotationCounter(rotationFile);
    } catch (const storage::StorageError& e) {
      throw EngineError(e.what());
    }
  }
}

// Streams in plan order (the final topological order puts producers first),
// their intervals in scheduler ticks, and their operands.
void Engine::Impl::makeStreams() {
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
}

// Worker threads pay off only on blocks long enough to outweigh waking them.
// The block's records come on top of the budgeted history: all rings together
// get at most kBlockBytesAll for them.
void Engine::Impl::chooseBlockSlots() {
  if (opt.blockSlots > 0) blockSlots = opt.blockSlots;
  else if (threadCount() > 1 && independentStreams()) blockSlots = kParallelBlockSlots;
  for (auto& sp : streams) blockRecordBytes += sp->out.recordSize + int64_t(sp->out.elems.size());
  blockSlots =
      int(std::max<int64_t>(1, std::min<int64_t>(blockSlots, kBlockBytesAll / std::max<int64_t>(blockRecordBytes, 1))));
}

// Windows fused into their readers, then chains (optimised native code,
// none on quick code alone; under --interpret the VM runs them); -v lists both.
void Engine::Impl::fuseAndChain() {
  if (opt.fuse) ops::fuseWindows(computed, streams);
  if (opt.verbose)
    for (auto* s : computed)
      if (s->fusedInto)
        fprintf(stdout, "fusion: window %s is not materialised; %s reads its producer in place\n", s->q->id.c_str(),
                s->fusedInto->q->id.c_str());
  if (opt.chains && (opt.interpret || opt.jitTier != 1)) chains = ops::findChains(computed, streams, blockSlots);
  if (opt.interpret)
    for (auto& c : chains) c->vmSteps = ops::chainSteps(*c, streams), c->native = &ops::runChainOnVm;
  if (!opt.verbose) return;
  for (auto& c : chains) {
    std::string names, inRegisters;
    for (size_t m = 0; m < c->members.size(); ++m) {
      names += (names.empty() ? "" : " -> ") + c->members[m]->q->id;
      if (!c->materialised[m])
        inRegisters += (inRegisters.empty() ? "" : ", ") + c->members[m]->q->id + (c->view[m] ? " (a view)" : "");
    }
    fprintf(stdout, "chain: %s %s%s\n", names.c_str(),
            opt.interpret ? "runs as one loop on the VM" : "compiled as one loop",
            inRegisters.empty() ? "" : (" (" + inRegisters + " not materialised)").c_str());
  }
  fflush(stdout);  // a live engine's log is read while it runs
}

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
    setupSource(s, cap);
  } else {
    if (s.srcs.empty())  // prepare() fills them for the plan's streams; ad hoc ones get them here
      for (auto& d : q.dependencies()) s.srcs.push_back(S(d).index);
    s.in = ir::Layout::of(ir::passes::inputRecord(p, q));
    if (!q.rules.empty()) {
      try {
        s.rules = std::make_unique<StreamRules>(q, s.out, storageDir, &commands);
      } catch (const ir::CompileError& e) {  // the compiler refuses what lowering cannot take; never abort
        throw EngineError("stream " + q.id + ": " + e.what());
      }
      cap = std::max<int64_t>(cap, ir::historyRing(s.rules->historyNeeded() + 2));
    }
    s.hist.init(s.out.recordSize, int(s.out.elems.size()), cap, blockSlots, q.origin);
    try {
      s.program.bytecode = vm::lowerFields(q, s.in, s.out);
      s.step = ops::setUp(s, streams);
    } catch (const ir::CompileError& e) {
      throw EngineError(e.what());
    } catch (const std::runtime_error& e) {
      throw EngineError("stream " + q.id + ": " + e.what());
    }
    computed.push_back(&s);
  }
  openArtifacts(s);
  if (!s.declared && s.q->isVolatile) s.files.store.reset();  // a VOLATILE stream's records live in its ring only
}

bool Engine::backgroundAbandoned() const { return impl_->abandonedCompile; }

void Engine::finish() {
  Impl& m = *impl_;
  if (m.finished) return;
  m.finished = true;
#if RDB_WITH_JIT
  // A compile still running after half a second is left to itself (see backgroundAbandoned).
  if (!JitWorker::shutdown(m.jitw, std::chrono::milliseconds(500))) m.abandonedCompile = true;
#endif
  m.dropGraph();
  m.collectCheckpoint();  // its sync must not meet the close's
  m.commands.shutdown(200);
  for (auto& s : m.streams) s->rules.reset();
  // A --resume that failed in set-up leaves things as they were: no archive,
  // the checkpoint kept, DISPOSABLE sources kept (a second --resume can work).
  const bool leaveAsFound = m.opt.resume && !m.prepared;
  if (leaveAsFound) m.rotation = -1;
  const std::vector<std::string> failed = m.closeAll();
  const auto checkpoint = storage::CheckpointPaths::in(m.storageDir);
  // Under ROTATION the close archived the session: there is nothing to go on from.
  if (!leaveAsFound && m.rotation >= 0) storage::removeCheckpoint(checkpoint);
  for (auto& s : m.streams)
    if (s->declared && s->q->isDisposable && !leaveAsFound) {
      m.removeDisposable(*s);
      storage::removeCheckpoint(checkpoint);  // it was consumed: a resume could not read it again
    }
  for (size_t i = 1; i < failed.size(); ++i) fprintf(stderr, "FATAL: %s\n", failed[i].c_str());
  if (!failed.empty()) throw EngineError(failed.front());  // the first one is thrown
}

Engine::CloseReport Engine::closeReport() const { return impl_->closeReport; }

}  // namespace engine
