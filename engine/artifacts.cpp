// Each stream's stored files: opened (or created) at set-up, flushed and
// closed at shutdown; the file names and formats are storage's.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "engine/engine_impl.hpp"
#include "storage/artifacts.hpp"

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
    // A run starts every computed stream empty (the whole family goes) unless it rotates.
    if (rotation < 0) warnRemoved(q, paths, s.out.recordSize, startListing.get());
    s.files = storage::startFamily(paths, d, s.out.recordSize, rotation < 0, startListing.get());
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
    if (s->wrote && !s->fusedInto)
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
  std::string err;
  auto note = [&](const std::exception& e) {
    if (err.empty()) err = "stream " + s.q->id + ": " + e.what();
  };
  if (!s.files.store && s.files.meta) {
    try {
      s.files.meta->flush(durable(s));
    } catch (const std::exception& e) {
      note(e);
    }
  }
  if (s.files.store) {
    try {
      s.files.store->flush();
    } catch (const std::exception& e) {
      note(e);
    }
    try {
      if (s.files.meta) s.files.meta->flush(s.files.store->durable());
    } catch (const std::exception& e) {
      note(e);
    }
    // Under ROTATION a file store's index goes with its data: X.meta.old<N> beside X.old<N>.
    if (rotation >= 0 && s.files.meta && !s.files.store->files().empty()) s.files.meta->rotate(rotation);
    try {
      s.files.store->close(rotation);
    } catch (const std::exception& e) {
      note(e);
    }
  }
  s.files.meta.reset();
  if (s.sink) {  // what is still queued gets a moment to reach the broker
    s.sink->drain(opt.mqtt.drainMs);
    s.sinkEnd = s.sink->counters();
    s.sink.reset();
  }
  return err;
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
