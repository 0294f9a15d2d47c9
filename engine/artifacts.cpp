// Each stream's stored files: opened (or created) at set-up, flushed and
// closed at shutdown; the file names and formats are storage's.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "engine/engine_impl.hpp"
#include "engine/operators/operators.hpp"
#include "storage/artifacts.hpp"
#include "storage/file_io.hpp"

namespace engine {

namespace {
// A start without ROTATION begins every computed stream afresh: says which
// records of an earlier run go (a killed run's too), before they go.
void warnRemoved(const ir::Query& q, const storage::ArtifactPaths& paths, int recordSize,
                 const storage::DirectoryListing* listing) {
  struct stat st {};
  uint64_t bytes = 0;
  std::string files;
  auto note = [&](const std::string& f) {
    if (::stat(f.c_str(), &st) != 0 || st.st_size == 0) return;
    bytes += uint64_t(st.st_size);
    files += (files.empty() ? "" : ", ") + f;
  };
  note(paths.data());
  if (q.retentionSegments > 0 || q.retentionCapacity > 0)
    for (auto& seg : paths.segments(listing)) note(seg.path);
  if (files.empty()) return;
  try {  // the earlier run's record may be another (a reset to a stream of another type)
    if (::stat(paths.desc().c_str(), &st) == 0) recordSize = storage::Descriptor::load(paths.desc()).recordSize();
  } catch (const std::exception&) {
  }
  const std::string records = recordSize > 0 && bytes % uint64_t(recordSize) == 0
                                  ? std::to_string(bytes / uint64_t(recordSize)) + " records"
                                  : std::to_string(bytes) + " bytes";
  fprintf(stderr,
          "warning: stream %s starts afresh: removing %s (%s) of an earlier run, with its index; "
          "a plan with ROTATION 'file' keeps earlier runs\n",
          q.id.c_str(), files.c_str(), records.c_str());
}
}  // namespace

void Engine::Impl::openArtifacts(Stream& s) {
  const ir::Query& q = *s.q;
  const auto paths = storage::ArtifactPaths::forQuery(storageDir, q);
  const storage::Descriptor d = storage::descriptorFor(q);
  try {
    if (s.declared) {
      s.outRec.assign(size_t(std::max(s.out.recordSize, 1)), 0);
      s.outNull.assign(std::max<size_t>(s.out.elems.size(), 1), 0);
      storage::adoptDeclaredDescriptor(paths, d);
      return;
    }
    uint64_t storeRecords = 0, indexRecords = 0;
    if (resumeCounts(q.id, storeRecords, indexRecords)) {  // its files as the checkpoint counts them
      s.files = storage::resumeFamily(paths, d, s.out.recordSize, storeRecords, indexRecords);
    } else {
      // A run starts every computed stream empty (the whole family goes) unless it rotates.
      if (rotation < 0) warnRemoved(q, paths, s.out.recordSize, startListing.get());
      else archiveChanged(q, paths, d);
      s.files = storage::startFamily(paths, d, s.out.recordSize, rotation < 0, startListing.get());
    }
    // A segment dropped after a checkpoint stays until a later one is durable (resume needs it).
    if (opt.checkpointS > 0 && !planChanged) s.files.store->holdDrops(true);
    if (!q.publish.empty()) s.sink = std::make_unique<connectors::MqttSink>(q, s.out, opt.mqtt);
    s.metaBits = int(d.entries.size());
    s.bitmap.assign(size_t((s.metaBits + 7) / 8), 0);
    s.zeroBitmap = s.bitmap;
  } catch (const storage::StorageError& e) {
    throw EngineError(e.what());
  } catch (const storage::DescError& e) {
    throw EngineError(e.what());
  } catch (const storage::SourceError& e) {
    throw EngineError("stream " + q.id + ": " + e.what());
  }
}

namespace {
// Calls f(n, data, nulls) for each record the stream wrote in the block just run.
template <class F>
void forEachWritten(const Stream& s, F&& f) {
  const int64_t newest = s.hist.newest();
  for (int64_t n = newest - s.wrote + 1; n <= newest; ++n) {
    const uint8_t *d, *nl;
    if (s.hist.held(n, d, nl)) f(n, d, nl);
  }
}
}  // namespace

void Engine::Impl::countNullRecords() {
  for (auto* s : computed)
    if (s->wrote && !s->fusedInto && !ops::isView(*s))  // a view counts its own (chain.cpp)
      forEachWritten(*s, [&](int64_t, const uint8_t*, const uint8_t* nl) {
        if (memchr(nl, 1, s->out.elems.size())) ++s->nullRecords;
      });
}

// Record n of a computed stream is written in slot (n + 1 + tail) x interval.
void Engine::Impl::publishRecords() {
  for (auto* s : computed)
    if (s->sink && s->wrote)
      forEachWritten(*s, [&](int64_t n, const uint8_t* d, const uint8_t* nl) {
        s->sink->publish(n, ir::slotTimeText(s->q->interval, n + 1 + s->q->tail), d, nl);
      });
}

// Data first, then the index entries that cover it, then close. Returns the
// first failure ("stream ID: ..."), empty when all went well; never throws.
std::string Engine::Impl::closeArtifacts(Stream& s, int rotation) {
  std::string err = writeData(s);
  std::string closed = closeFiles(s, rotation, false);
  drainSink(s);
  return err.empty() ? closed : err;
}

// What the stream's store still buffers goes to its file (no sync).
std::string Engine::Impl::writeData(Stream& s) {
  try {
    if (s.files.store) s.files.store->flush();
  } catch (const std::exception& e) {
    return "stream " + s.q->id + ": " + e.what();
  }
  return "";
}

std::string Engine::Impl::closeFiles(Stream& s, int rotation, bool synced) {
  std::string err;
  auto note = [&](const std::exception& e) {
    if (err.empty()) err = "stream " + s.q->id + ": " + e.what();
  };
  try {
    if (s.files.meta) s.files.meta->flush(durable(s));
  } catch (const std::exception& e) {
    note(e);
  }
  if (s.files.store) {
    // Under ROTATION a file store's index and descriptor go with its data:
    // X.meta.old<N> and X.desc.old<N> beside X.old<N>.
    if (rotation >= 0 && !s.files.store->files().empty()) {
      storage::archiveDescriptor(storage::ArtifactPaths::forQuery(storageDir, *s.q), storage::descriptorFor(*s.q),
                                 rotation);
      if (s.files.meta) s.files.meta->rotate(rotation, synced);
    }
    try {
      s.files.store->close(rotation, synced);
    } catch (const std::exception& e) {
      note(e);
    }
  }
  s.files.meta.reset();
  return err;
}

void Engine::Impl::drainSink(Stream& s) {
  if (!s.sink) return;
  s.sink->drain(opt.mqtt.drainMs);  // what is still queued gets a moment to reach the broker
  s.sinkEnd = s.sink->counters();
  s.sink.reset();
}

// A plan's shutdown. An fsync a file, one after another, made the close of
// 5,000 streams take 40 s on a slow disk; here the files are synced together:
// every stream's data is written, one syncfs of the storage directory's file
// system makes it durable, then every index is written (never ahead of the
// durable data), archived under ROTATION with the data, and a second syncfs
// makes indexes and renames durable. Streams with a file on another file
// system, and every stream when syncfs does not report writeback errors, are
// closed one by one by closeArtifacts. Returns the failures, first one first.
std::vector<std::string> Engine::Impl::closeAll() {
  const uint64_t syncsBefore = storage::io::syncCalls();
  std::vector<std::string> failed;
  auto note = [&](std::string err) {
    if (!err.empty()) failed.push_back(std::move(err));
  };
  std::vector<Stream*> together, apart;
  closeReport = {};
  for (auto& s : streams) {
    const bool files = s->files.store || s->files.meta;
    closeReport.streams += files;
    const bool joint = files && storageSync && storageSync->usable() &&
                       (!s->files.store || s->files.store->onFileSystem(*storageSync)) &&
                       (!s->files.meta || s->files.meta->onFileSystem(*storageSync));
    (joint ? together : apart).push_back(s.get());
  }
  closeReport.together = int(together.size());
  auto syncAll = [&](const char* what) {
    if (together.empty()) return;
    if (int e = storageSync->sync())
      note("storage: syncfs failed on the storage directory '" + (storageDir.empty() ? "." : storageDir) + "' (" +
           what + " of " + std::to_string(together.size()) + " streams): " + strerror(e));
  };
  for (auto* s : together) note(writeData(*s));
  syncAll("the data");
  for (auto* s : together) note(closeFiles(*s, rotation, true));
  syncAll("the indexes");
  for (auto* s : together) drainSink(*s);
  for (auto* s : apart) note(closeArtifacts(*s, rotation));
  storageSync.reset();
  closeReport.syncs = storage::io::syncCalls() - syncsBefore;
  return failed;
}

// Under ROTATION a stream's files are continued only with the descriptor they
// were written with (records of another size would be read as garbage):
// files of another layout are archived whole, with their descriptor, as a
// session of their own, and the stream starts afresh.
void Engine::Impl::archiveChanged(const ir::Query& q, const storage::ArtifactPaths& paths,
                                  const storage::Descriptor& d) {
  const std::optional<std::string> was = storage::changedLayout(paths, d, startListing.get());
  if (!was) return;
  const int k = archiveNumber(paths);
  const std::vector<std::string> files = storage::archiveSession(paths, k, startListing.get());
  std::string names;
  for (auto& f : files) names += (names.empty() ? "" : ", ") + f;
  fprintf(stderr,
          "warning: stream %s: its files on disk were written with another layout (%s, now %s); archived whole as "
          "session %d (%s) instead of continued; the stream starts afresh\n",
          q.id.c_str(), was->c_str(), d.textLine().c_str(), k, names.c_str());
}

// The number of such an archive: the session in progress gives its number up
// (the files hold earlier records than any it archives later) and goes on
// under the next one free for all its streams. At start prepare() then
// reserves it; a running session reserves it here.
int Engine::Impl::archiveNumber(const storage::ArtifactPaths& paths) {
  const storage::DirectoryListing* listing = startListing.get();
  if (givenUp >= 0 && paths.nextRotation(givenUp, listing) == givenUp) return givenUp;
  const int k = paths.nextRotation(rotation, listing);
  int next = k + 1;
  for (auto& s : streams)
    if (!s->declared && !s->removed)
      next = storage::ArtifactPaths::forQuery(storageDir, *s->q).nextRotation(next, listing);
  if (!listing) storage::writeRotationCounter(rotationFile, next + 1);
  rotation = next;
  givenUp = k;
  return k;
}

// Never overwrite an earlier run's archive, even if the counter file was lost.
void Engine::Impl::nextRotation() {
  for (auto* s : computed)
    rotation = storage::ArtifactPaths::forQuery(storageDir, *s->q).nextRotation(rotation, startListing.get());
}

// A DISPOSABLE source is consumed: its file and descriptor go at shutdown.
void Engine::Impl::removeDisposable(Stream& s) {
  s.source.reset();
  storage::ArtifactPaths::forQuery(storageDir, *s.q).remove(storage::kData | storage::kDesc);
}

}  // namespace engine
