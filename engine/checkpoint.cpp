// Checkpoints of a running plan and --resume (docs/architecture.md,
// "Checkpoints and resume"). A checkpoint is taken between two blocks: every
// ring holds the last `window` records its readers may reach, each store and
// index is synced to the counts the checkpoint names, each source knows the
// byte of its next record. Restored, the rest of the run writes the bytes an
// uninterrupted run writes.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <time.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "engine/engine_impl.hpp"
#include "engine/operators/operators.hpp"
#include "ir/dump.hpp"
#include "storage/checkpoint.hpp"

namespace engine {

namespace {

using storage::ByteReader;
using storage::ByteWriter;

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The plan's identity, section by section: each stream's and directive's
// lines of the -c listing, named by the stream.
std::vector<std::pair<std::string, uint64_t>> sectionsOf(const ir::Plan& p) {
  std::vector<std::pair<std::string, uint64_t>> out;
  const std::string text = ir::dumpPlan(p);
  std::string name, body;
  auto close = [&] {
    if (!name.empty()) out.push_back({name, fnv1a(body)});
  };
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    if (!line.empty() && line[0] != '\t') {
      close();
      name = line.substr(0, line.find_first_of("(\t"));
      body.clear();
    }
    body += line + "\n";
    at = end + 1;
  }
  close();
  return out;
}

// The options that change what a run writes, or which rings hold records.
std::string optionsOf(const Options& o) {
  const bool chained = o.chains && (o.interpret || o.jitTier != 1);
  return std::string(o.noClock ? "--no-clock" : "clocked") + (o.untilEof ? " --until-eof" : "") +
         (o.fuse ? "" : " --no-fuse") + (chained ? "" : " --no-chains");
}

void putBlob(ByteWriter& w, const ByteWriter& part) { w.blob(part.bytes().data(), part.bytes().size()); }

std::vector<uint8_t> takeBlob(ByteReader& r) {
  std::vector<uint8_t> b(size_t(r.length()));
  r.raw(b.data(), b.size());
  return b;
}

// Temporary files of writers that were killed (their process is gone).
void removeStaleTemporaries(const storage::CheckpointPaths& p) {
  namespace fs = std::filesystem;
  const fs::path cur(p.current);
  const std::string prefix = cur.filename().string() + ".tmp.";
  std::error_code ec;
  for (auto& e : fs::directory_iterator(cur.has_parent_path() ? cur.parent_path() : fs::path("."), ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) != 0) continue;
    const long pid = strtol(n.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && kill(pid_t(pid), 0) != 0 && errno == ESRCH) fs::remove(e.path(), ec);
  }
}

}  // namespace

// ---------------------------------------------------------------- writing

void Engine::Impl::saveCheckpoint(int64_t slots) {
  const auto start = std::chrono::steady_clock::now();
  // Views read by clients and imports hold their records again (as a member's own step would rebuild them).
  for (auto& c : chains) ops::rebuildViews(*c);
  // Data first, then the index: the files hold at least what the checkpoint counts.
  for (auto* s : computed) {
    try {
      if (s->files.store) s->files.store->flush();
      if (s->files.meta) s->files.meta->flush(durable(*s));
    } catch (const storage::StorageError& e) {
      throw EngineError("stream " + s->q->id + ": " + e.what());
    }
  }
  if (identity.empty()) {  // the plan cannot change while checkpoints are taken (planChanged)
    ByteWriter id;
    const auto sections = sectionsOf(plan);
    id.u64(sections.size());
    for (auto& [name, hash] : sections) id.text(name), id.u64(hash);
    id.text(optionsOf(opt));
    identity = id.bytes();
  }
  ByteWriter w;
  w.raw(identity.data(), identity.size());
  for (int64_t v : {slots, wallAnchorNs, ticksPerSecond, now, int64_t(rotation), int64_t(inputEnded)}) w.i64(v);
  w.u64(counters.size());
  for (int64_t c : counters) w.i64(c);
  uint64_t live = 0;
  for (auto& s : streams) live += !s->removed;
  w.u64(live);
  for (auto& sp : streams) {
    const Stream& s = *sp;
    if (s.removed) continue;
    const History& h = s.hist;
    w.text(s.q->id);
    for (int64_t v : {s.due, h.count, h.base}) w.i64(v);
    // By logical index: a ring's size follows the block length, which another machine may choose otherwise.
    const int64_t kept = std::min(h.count, h.window);
    w.i64(kept);
    for (int64_t i = h.count - kept; i < h.count; ++i) w.raw(h.data.data() + h.pos(i) * h.rec, size_t(h.rec));
    for (int64_t i = h.count - kept; i < h.count; ++i) w.raw(h.nulls.data() + h.pos(i) * h.elems, size_t(h.elems));
    w.i64(s.heldFrom);
    w.flag(s.held);
    for (uint64_t v : {s.rounded, s.nullRecords, s.downRecords}) w.u64(v);
    const bool files = s.files.meta != nullptr;
    w.flag(files);
    if (files) {
      w.u64(s.files.store ? s.files.store->count() : 0);
      w.u64(s.files.meta->onDisk());
    }
    ByteWriter src, store, rules;
    if (s.source) s.source->save(src);
    if (s.files.store) s.files.store->save(store);
    if (s.rules) s.rules->save(rules);
    putBlob(w, src);
    putBlob(w, store);
    putBlob(w, rules);
  }
  checkpointSlot = slots;
  dropMarks.clear();
  for (auto* s : computed)
    if (const size_t held = s->files.store ? s->files.store->dropsHeld() : 0) dropMarks.push_back({s, held});
  const int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  checkpointStats.written++;
  checkpointStats.totalNs += ns;
  checkpointStats.longestNs = std::max(checkpointStats.longestNs, ns);
  checkpointStats.bytes = w.bytes().size();
  // Made durable off the slot thread: the file system synced (every record
  // the checkpoint counts is written already; later writes only add), then
  // the file written and renamed in. The run goes on meanwhile.
  pendingCheckpoint = std::async(std::launch::async, [this, payload = std::move(w.bytes())]() -> std::string {
    const auto t0 = std::chrono::steady_clock::now();
    timespec c0{}, c1{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    try {
      if (checkpointSync && checkpointSync->usable()) {
        if (int e = checkpointSync->sync())
          throw storage::CheckpointError(std::string("syncfs of the storage directory failed: ") + strerror(e));
      } else {
        ::sync();
      }
      storage::writeCheckpoint(storage::CheckpointPaths::in(storageDir), payload);
    } catch (const std::exception& e) {  // whatever it is, the run goes on and the close still runs
      return e.what();
    }
    durableNs += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    durableCpuNs += (c1.tv_sec - c0.tv_sec) * 1000000000LL + (c1.tv_nsec - c0.tv_nsec);
    return "";
  });
}

void Engine::Impl::collectCheckpoint() {
  if (!pendingCheckpoint.valid()) return;
  const std::string err = pendingCheckpoint.get();
  auto marks = std::move(dropMarks);
  dropMarks.clear();
  if (err.empty()) {
    for (auto& [s, n] : marks) s->files.store->releaseDrops(n);
    checkpointFailed = false;
    checkpointStats.durable++;
    checkpointStats.durableNs = durableNs;
    checkpointStats.durableCpuNs = durableCpuNs;
    return;
  }
  if (!checkpointFailed)  // said once until one succeeds again
    fprintf(stderr, "warning: %s; the run goes on, the previous checkpoint stays\n", err.c_str());
  checkpointFailed = true;
}

void Engine::Impl::stopCheckpoints() {
  collectCheckpoint();
  planChanged = true;
  for (auto& s : streams)
    if (s->files.store) s->files.store->holdDrops(false);
}

void Engine::Impl::checkpointIfDue(int64_t slots, bool stopping) {
  if (opt.checkpointS <= 0 || planChanged || slots == checkpointSlot) return;
  if (stopping && rotation >= 0) return;             // the close archives the session: nothing to go on from
  const auto at = std::chrono::steady_clock::now();  // not `now`: that is the engine's tick
  if (!stopping && at < nextCheckpoint) return;
  // One in flight at a time: a run that outpaces the disk takes the next at a later block.
  if (!stopping && pendingCheckpoint.valid() &&
      pendingCheckpoint.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    return;
  collectCheckpoint();
  nextCheckpoint = at + std::chrono::nanoseconds(int64_t(opt.checkpointS * 1e9));
  saveCheckpoint(slots);
  if (stopping) collectCheckpoint();
}

// ---------------------------------------------------------------- reading

void Engine::Impl::readResume() {
  const auto paths = storage::CheckpointPaths::in(storageDir);
  if (!opt.resume) {
    // A fresh start: an earlier checkpoint no longer matches the files.
    storage::removeCheckpoint(paths);
    return;
  }
  removeStaleTemporaries(paths);
  storage::CheckpointRead got;
  try {
    got = storage::readCheckpoint(paths);
  } catch (const storage::CheckpointError& e) {
    throw EngineError(std::string(e.what()) +
                      "; nothing was changed (run without --resume to start afresh, which removes the earlier "
                      "run's records)");
  }
  if (!got.found) return;
  auto r = std::make_unique<Resume>();
  r->file = got.path;
  r->fellBack = got.fellBack;
  ByteReader in(got.payload.data(), got.payload.size(), "checkpoint " + got.path);
  try {
    // Which plan: the first section that differs names the stream.
    const auto mine = sectionsOf(plan);
    std::vector<std::pair<std::string, uint64_t>> theirs(size_t(in.count(16)));  // a name and a hash each
    for (auto& [name, hash] : theirs) name = in.text(), hash = in.u64();
    auto refuse = [&](const std::string& what) {
      throw EngineError("checkpoint " + got.path + " was taken by another plan: " + what +
                        "; nothing was changed (run without --resume to start afresh, which removes the earlier "
                        "run's records, or give this plan its own STORAGE directory)");
    };
    for (size_t i = 0; i < std::max(mine.size(), theirs.size()); ++i) {
      if (i >= theirs.size()) refuse("stream " + mine[i].first + " is new");
      if (i >= mine.size()) refuse("stream " + theirs[i].first + " is gone");
      if (mine[i].first != theirs[i].first)
        refuse("stream " + mine[i].first + " stands where " + theirs[i].first + " stood");
      if (mine[i].second != theirs[i].second) refuse("stream " + mine[i].first + " is defined otherwise");
    }
    const std::string options = in.text();
    if (options != optionsOf(opt))
      throw EngineError("checkpoint " + got.path + " was taken with the options " + options + ", this run has " +
                        optionsOf(opt) + "; nothing was changed (resume with the same options, or start afresh)");
    for (int64_t* v : {&r->slots, &r->wallAnchorNs, &r->ticksPerSecond, &r->now, &r->rotation, &r->ended})
      *v = in.i64();
    r->counters.resize(size_t(in.count(8)));
    for (auto& c : r->counters) c = in.i64();
    for (uint64_t n = in.count(1); n > 0; --n) {
      const std::string id = in.text();
      Resume::StreamState& st = r->streams[id];
      for (int64_t* v : {&st.due, &st.count, &st.base, &st.kept}) *v = in.i64();
      const Stream* s = nullptr;
      for (auto& sp : streams)
        if (sp->q->id == id) s = sp.get();
      if (!s || st.count < 0 || st.base < 0 || st.kept < 0 || st.kept > st.count) in.fail();
      st.data.resize(size_t(in.fits(st.kept, s->out.recordSize)));
      in.raw(st.data.data(), st.data.size());
      st.nulls.resize(size_t(in.fits(st.kept, int64_t(s->out.elems.size()))));
      in.raw(st.nulls.data(), st.nulls.size());
      st.heldFrom = in.i64();
      st.held = in.flag();
      for (uint64_t* v : {&st.rounded, &st.nullRecords, &st.downRecords}) *v = in.u64();
      st.files = in.flag();
      if (st.files) st.storeRecords = in.u64(), st.indexRecords = in.u64();
      st.source = takeBlob(in);
      st.store = takeBlob(in);
      st.rules = takeBlob(in);
    }
    if (!in.atEnd() || r->counters.size() != ticks.size() || r->ticksPerSecond != ticksPerSecond) in.fail();
    for (size_t i = 0; i < ticks.size(); ++i)  // grid points stay within the ticks' range (no overflow)
      if (r->counters[i] < 1 || r->counters[i] > (int64_t(1) << 62) / ticks[i]) in.fail();
    // A session number exactly when the plan rotates (else the close would archive, or not, against the plan).
    if (r->slots < 0 || r->now < 0 || (r->ended != 0 && r->ended != 1) || r->rotation < -1 || r->rotation > INT32_MAX ||
        (r->rotation >= 0) != !rotationFile.empty())
      in.fail();
  } catch (const storage::CheckpointError& e) {
    throw EngineError(e.what());
  }
  resume = std::move(r);
}

// ---------------------------------------------------------------- restoring

void Engine::Impl::restoreStream(Stream& s) {
  auto it = resume->streams.find(s.q->id);
  if (it == resume->streams.end()) throw EngineError("checkpoint " + resume->file + ": stream " + s.q->id + " missing");
  const Resume::StreamState& st = it->second;
  History& h = s.hist;
  if (st.base != h.base || st.kept > h.cap || st.due < 0 || st.due > resume->counters[s.tickIndex])
    throw EngineError("checkpoint " + resume->file + ": stream " + s.q->id + "'s history does not fit its ring");
  h.count = st.count;
  for (int64_t k = 0; k < st.kept; ++k) {
    const int64_t i = st.count - st.kept + k;
    memcpy(h.data.data() + h.pos(i) * h.rec, st.data.data() + k * h.rec, size_t(h.rec));
    memcpy(h.nulls.data() + h.pos(i) * h.elems, st.nulls.data() + k * h.elems, size_t(h.elems));
  }
  s.due = st.due;
  s.heldFrom = st.heldFrom;
  s.held = st.held;
  s.rounded = st.rounded;
  s.nullRecords = st.nullRecords;
  s.downRecords = st.downRecords;
  try {
    if (s.source) {
      ByteReader r(st.source.data(), st.source.size(), "checkpoint " + resume->file + ": source " + s.q->id);
      s.source->restore(r);
    }
    if (s.files.store) {
      ByteReader r(st.store.data(), st.store.size(), "checkpoint " + resume->file + ": store " + s.q->id);
      s.files.store->restore(r);
    }
    if (s.rules) {
      ByteReader r(st.rules.data(), st.rules.size(), "checkpoint " + resume->file + ": rules of " + s.q->id);
      s.rules->restore(r);
    }
  } catch (const std::exception& e) {
    throw EngineError(std::string("stream ") + s.q->id + ": " + e.what());
  }
}

void Engine::Impl::restoreEngine() {
  counters = resume->counters;
  now = resume->now;
  slotsBefore = resume->slots;
  wallAnchorNs = resume->wallAnchorNs;
  checkpointSlot = resume->slots;
  inputEnded = resume->ended != 0;
  Engine::ResumeInfo info;
  info.slot = resume->slots;
  info.time = ir::slotTimeText(ir::Rational(1, ticksPerSecond), now);  // the slot's time, exact
  info.file = resume->file;
  info.fellBack = resume->fellBack;
  resumeInfo = info;
  resume.reset();
}

void Engine::Impl::anchorClock(std::chrono::steady_clock::time_point& anchor) {
  const int64_t wall =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (!resumeInfo || wallAnchorNs == 0) {
    wallAnchorNs =
        wall - std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - anchor).count();
    return;
  }
  const int64_t ago = std::max<int64_t>(0, wall - wallAnchorNs);
  anchor = std::chrono::steady_clock::now() - std::chrono::nanoseconds(ago);
  // Slots whose deadline passed before now: t < ago x ticksPerSecond / 1e9.
  const __int128 scaled = __int128(ago) * ticksPerSecond;
  downUntil = int64_t((scaled + 999999999) / 1000000000);
}

bool Engine::Impl::resumeCounts(const std::string& id, uint64_t& store, uint64_t& index) const {
  if (!resume) return false;
  auto it = resume->streams.find(id);
  if (it == resume->streams.end() || !it->second.files)
    throw EngineError("checkpoint " + resume->file + ": stream " + id + " has no files in it");
  store = it->second.storeRecords;
  index = it->second.indexRecords;
  return true;
}

std::optional<Engine::ResumeInfo> Engine::resumed() const { return impl_->resumeInfo; }
int64_t Engine::missedSlots() const { return impl_->missedSlots; }
Engine::CheckpointStats Engine::checkpointStats() const { return impl_->checkpointStats; }

}  // namespace engine
